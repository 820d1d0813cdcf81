"""The sidecar's ``[eval]`` table: checked when the file loads, built by ``helikon eval run``.

Format (paths are relative to the sidecar's directory)::

    [eval]
    evaluators = ["exact_match", "tool_trajectory", "json_schema", "llm_judge"]

    [eval.json_schema]                       # needed when "json_schema" is named
    schema = "schemas/answer.json"

    [eval.llm_judge]                         # needed when "llm_judge" is named
    model     = { provider = "openai", id = "gpt-5-mini" }
    rubric    = "Is the answer correct and polite?"     # or { file = "rubric.md" }
    threshold = 0.7                                     # optional, in [0, 1]

Without ``[eval]`` (or without ``evaluators``) the evaluators are ``exact_match`` and
``tool_trajectory``. :func:`check_eval` checks the table's shape (unknown keys, types,
blocks named but not configured or configured but not named, the judge's model table);
:func:`build_evaluators` reads the schema file and makes the judge's live model.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from helikon.cli.sidecar_file import SidecarFile
from helikon.cli.sidecar_models import build_model, check_model
from helikon.errors import ConfigError

if TYPE_CHECKING:
    from helikon.evals.evaluator import Evaluator

__all__ = ["DEFAULT_EVALUATORS", "EVALUATORS", "EvalConfig", "build_evaluators", "check_eval"]

EVALUATORS = ("exact_match", "tool_trajectory", "json_schema", "llm_judge")
DEFAULT_EVALUATORS = ("exact_match", "tool_trajectory")
_EVAL_KEYS = ("evaluators", "json_schema", "llm_judge")
_BLOCK_KEYS = {"json_schema": ("schema",), "llm_judge": ("model", "rubric", "threshold")}
_BLOCK_FIX = {
    "json_schema": '[eval.json_schema] schema = "schemas/answer.json"',
    "llm_judge": '[eval.llm_judge] model = { provider = "openai", id = "gpt-5-mini" }, '
    'rubric = "..."',
}


@dataclass(frozen=True)
class EvalConfig:
    """A checked ``[eval]`` table."""

    evaluators: tuple[str, ...] = DEFAULT_EVALUATORS
    schema: Path | None = None
    """``[eval.json_schema] schema``, resolved against the sidecar's directory."""
    judge_model: dict[str, Any] | None = None
    judge_rubric: str | dict[str, Any] | None = None
    judge_threshold: float = 0.7


def _unknown(sc: SidecarFile, key: str, table: dict[str, Any], allowed: tuple[str, ...]) -> None:
    for name in table:
        if name not in allowed:
            close = difflib.get_close_matches(name, allowed, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise sc.err(key, f"unknown key {name!r}", f"{hint}use only {list(allowed)}")


def check_eval(sc: SidecarFile, raw: Any) -> EvalConfig:
    """Check the ``[eval]`` table (``None`` when the file has none).

    Raises:
        SidecarError: naming the key, the problem and the fix.
    """
    if raw is None:
        return EvalConfig()
    if not isinstance(raw, dict):
        raise sc.err("eval", "must be a table", '[eval] evaluators = ["exact_match"]')
    _unknown(sc, "eval", raw, _EVAL_KEYS)
    names = raw.get("evaluators", list(DEFAULT_EVALUATORS))
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names) or not names:
        raise sc.err(
            "eval.evaluators",
            "must be a non-empty list of evaluator names",
            f"evaluators = [...] with names from {list(EVALUATORS)}",
        )
    for name in names:
        if name not in EVALUATORS:
            close = difflib.get_close_matches(name, EVALUATORS, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise sc.err(
                "eval.evaluators", f"unknown evaluator {name!r}", f"{hint}use {list(EVALUATORS)}"
            )
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise sc.err("eval.evaluators", f"{dup!r} is named twice", "name each evaluator once")
    for block, keys in _BLOCK_KEYS.items():
        if block in names and block not in raw:
            raise sc.err(
                "eval.evaluators", f"{block!r} needs its [eval.{block}] table", _BLOCK_FIX[block]
            )
        if block in raw and block not in names:
            raise sc.err(
                f"eval.{block}",
                f"configured but {block!r} is not in evaluators",
                f'add "{block}" to evaluators or remove [eval.{block}]',
            )
        if block in raw:
            if not isinstance(raw[block], dict):
                raise sc.err(f"eval.{block}", "must be a table", _BLOCK_FIX[block])
            _unknown(sc, f"eval.{block}", raw[block], keys)
    schema = None
    if "json_schema" in raw:
        value = raw["json_schema"].get("schema")
        if not isinstance(value, str) or not value:
            raise sc.err(
                "eval.json_schema.schema",
                "missing or not a path",
                'schema = "schemas/answer.json" (relative to the sidecar)',
            )
        schema = (sc.folder / value).resolve()
    judge = raw.get("llm_judge")
    if judge is None:
        return EvalConfig(evaluators=tuple(names), schema=schema)
    check_model(sc, "eval.llm_judge.model", judge.get("model"))
    rubric = judge.get("rubric")
    if rubric is None or (isinstance(rubric, str) and not rubric.strip()):
        raise sc.err(
            "eval.llm_judge.rubric",
            "missing or empty",
            'rubric = "what a good answer does" or rubric = { file = "rubric.md" }',
        )
    sc.text_or_file("eval.llm_judge.rubric", rubric)
    threshold = judge.get("threshold", 0.7)
    if (
        isinstance(threshold, bool)
        or not isinstance(threshold, int | float)
        or not 0.0 <= threshold <= 1.0
    ):
        raise sc.err(
            "eval.llm_judge.threshold", f"must be a number in [0, 1], got {threshold!r}", "0.7"
        )
    return EvalConfig(
        evaluators=tuple(names),
        schema=schema,
        judge_model=judge["model"],
        judge_rubric=rubric,
        judge_threshold=float(threshold),
    )


def build_evaluators(sc: SidecarFile, cfg: EvalConfig) -> list[Evaluator]:
    """The evaluators ``[eval]`` names, in its order.

    Raises:
        SidecarError: the schema file is unreadable or not a JSON Schema, ``jsonschema`` is
            not installed, or the judge's model cannot be made (missing API key, ...).
    """
    from helikon.evals import ExactMatch, JsonSchema, LlmJudge, ToolUseTrajectory

    out: list[Evaluator] = []
    for name in cfg.evaluators:
        if name == "exact_match":
            out.append(ExactMatch())
        elif name == "tool_trajectory":
            out.append(ToolUseTrajectory.exact())
        elif name == "json_schema":
            assert cfg.schema is not None
            try:
                out.append(JsonSchema(cfg.schema))
            except ImportError:
                raise sc.err(
                    "eval.json_schema",
                    "the json_schema evaluator needs the jsonschema package",
                    "pip install 'helikon[evals]'",
                ) from None
            except ConfigError as exc:
                raise sc.err(
                    "eval.json_schema.schema",
                    str(exc),
                    "point schema at a JSON Schema file (paths are relative to the sidecar)",
                ) from None
        else:
            rubric = sc.text_or_file("eval.llm_judge.rubric", cfg.judge_rubric)
            assert rubric is not None
            model = build_model(sc, "eval.llm_judge.model", cfg.judge_model)
            out.append(LlmJudge(model, rubric=rubric, threshold=cfg.judge_threshold))
    return out
