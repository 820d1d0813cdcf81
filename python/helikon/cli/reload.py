"""Hot reload for ``helikon repl``: rebuild the agent from the sidecar and its tool modules.

:func:`load_agent` builds the agent from a fresh parse of the sidecar, re-importing the tool
modules that live in the sidecar's folder (so an edited ``tools.py`` takes effect). A failed
reload puts the previous modules back, so the last good agent keeps working.
:func:`watched` tells which changed paths matter: the sidecar, the files it references
(instructions, mock scripts, the eval schema and rubric) and Python files in its folder.
"""

from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from helikon.cli.sidecar import Sidecar, load_sidecar
from helikon.cli.sidecar_tools import script_paths
from helikon.core.agent import Agent

__all__ = ["Loaded", "load_agent", "watched"]


@dataclass(frozen=True)
class Loaded:
    """A sidecar and the agent built from it."""

    sidecar: Sidecar
    agent: Agent

    @property
    def name(self) -> str:
        return self.agent.name


def _local_modules(folder: Path) -> dict[str, ModuleType]:
    """Imported modules whose top-level package is a file or package in ``folder``."""
    out: dict[str, ModuleType] = {}
    for name, module in list(sys.modules.items()):
        top = name.partition(".")[0]
        if not ((folder / f"{top}.py").is_file() or (folder / top / "__init__.py").is_file()):
            continue
        file = getattr(module, "__file__", None)
        if file is not None and Path(file).resolve().is_relative_to(folder):
            out[name] = module
    return out


def load_agent(path: Path, name: str | None, *, fresh_modules: bool = False) -> Loaded:
    """Parse the sidecar and build agent ``name`` (default: the alphabetically first).

    ``fresh_modules`` re-imports the tool modules of the sidecar's folder; when loading
    fails they are restored, so the agent built before keeps its tools.

    Raises:
        SidecarError: the sidecar (or a tool module) is invalid.
    """
    folder = path.parent.resolve()
    saved = _local_modules(folder) if fresh_modules else {}
    for module_name in saved:
        del sys.modules[module_name]
    importlib.invalidate_caches()
    try:
        sidecar = load_sidecar(path)
        return Loaded(sidecar, sidecar.build(name))
    except BaseException:
        for module_name in _local_modules(folder):
            sys.modules.pop(module_name, None)
        sys.modules.update(saved)
        raise


def _referenced(sidecar: Sidecar) -> set[Path]:
    folder = sidecar.path.parent
    out = {sidecar.path}
    for spec in sidecar.agents.values():
        instructions = spec.get("instructions")
        if isinstance(instructions, dict) and isinstance(instructions.get("file"), str):
            out.add(folder / instructions["file"])
        model = spec.get("model")
        if isinstance(model, dict) and isinstance(model.get("script"), str):
            out.add(folder / model["script"])
    if sidecar.eval.schema is not None:
        out.add(sidecar.eval.schema)
    judge = sidecar.eval.judge_model
    if judge is not None and isinstance(judge.get("script"), str):
        out.add(folder / judge["script"])
    rubric = sidecar.eval.judge_rubric
    if isinstance(rubric, dict) and isinstance(rubric.get("file"), str):
        out.add(folder / rubric["file"])
    out |= script_paths(sidecar.tools, folder)
    return {p.resolve() for p in out}


def watched(sidecar: Sidecar, changed: set[str]) -> list[str]:
    """The changed paths that should trigger a reload, as names relative to the sidecar's
    folder, sorted."""
    folder = sidecar.path.parent.resolve()
    referenced = _referenced(sidecar)
    hits = []
    for raw in changed:
        p = Path(raw).resolve()
        if p in referenced or (
            p.suffix == ".py" and p.is_relative_to(folder) and "__pycache__" not in p.parts
        ):
            hits.append(str(p.relative_to(folder)) if p.is_relative_to(folder) else str(p))
    return sorted(hits)
