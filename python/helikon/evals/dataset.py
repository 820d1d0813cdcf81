"""JSONL evaluation datasets: :class:`EvalCase` and :class:`EvalDataset`.

One case per line; blank lines are skipped. A line is a JSON object with these keys::

    {"id": "refund-1",                      optional; default "case-<line number>"
     "input": "Can I get a refund?",        required: the user-turn text
     "expected": "Yes, within 30 days.",    optional: a string or any JSON value
     "expected_tools": ["lookup_order"],    optional: tool-call names, in order
     "metadata": {"tier": "gold"},          optional: a free-form object
     "decisions": {"c1": {"decision": "approve"}}}   optional: scripted approval answers

``decisions`` maps the call ids a case's (scripted) model gives to the answer a person would
give when that call asks for approval: ``{"decision": "approve"}``, ``{"decision": "deny",
"reason": "..."}`` or ``{"decision": "edit", "args": {...}}`` (``"remember": true`` on approve
or deny), as the server's ``POST /approvals`` takes them. A case with ``decisions`` runs with
``approval="defer"``: each pause is answered from them and the run resumed; a call that asks
without an answer in ``decisions`` fails the case (never a silent approval). Without
``decisions`` an ask is answered as the agent's configuration says (an inline handler, or a
denial).

``"expected": null`` is the same as leaving it out. Any other key is an error (a typo such
as ``expected_tool`` would otherwise silently skip an evaluator), and so is an id used twice.
A file with no case at all is an error too, so an empty or truncated dataset cannot pass.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from helikon.core.decisions import decision_from_json
from helikon.errors import DatasetError, ResumeRefused

__all__ = ["EvalCase", "EvalDataset"]

_KEYS = ("id", "input", "expected", "expected_tools", "metadata", "decisions")
_EXAMPLE = '{"input": "What is 2+2?", "expected": "4"}'


class EvalCase(BaseModel):
    """One dataset case.

    Attributes:
        id: the case id (``case-<line>`` when the line gave none).
        input: the user-turn text the agent runs on.
        expected: the expected final response (a string, or a JSON value compared
            structurally), or ``None`` when absent.
        expected_tools: the expected tool-call names in order, or ``None`` when absent
            (``[]`` expects no tool call at all).
        metadata: free-form data for custom evaluators and reports.
        decisions: call id -> approval answer in its JSON form (see the module doc), or
            ``None``: the case runs without pausing.
        line: the 1-based line the case came from (0 for cases built in code).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    input: str
    expected: Any = None
    expected_tools: list[str] | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    decisions: dict[str, dict[str, Any]] | None = None
    line: int = 0


class EvalDataset:
    """An ordered list of :class:`EvalCase`, usually loaded from JSONL.

    Example:
        >>> ds = EvalDataset.from_jsonl_str('{"input": "hi", "expected": "hello"}\\n\\n'
        ...                                 '{"id": "t", "input": "go", "expected_tools": []}')
        >>> [(c.id, c.expected, c.expected_tools) for c in ds]
        [('case-1', 'hello', None), ('t', None, [])]
    """

    def __init__(self, cases: Sequence[EvalCase]) -> None:
        self.cases: list[EvalCase] = list(cases)
        seen: set[str] = set()
        for case in self.cases:
            if case.id in seen:
                raise DatasetError(f"case id {case.id!r} is used twice", source="<cases>")
            seen.add(case.id)

    def __len__(self) -> int:
        return len(self.cases)

    def __iter__(self) -> Iterator[EvalCase]:
        return iter(self.cases)

    def __getitem__(self, index: int) -> EvalCase:
        return self.cases[index]

    @classmethod
    def from_jsonl_str(cls, text: str, *, source: str = "<string>") -> EvalDataset:
        """Parse JSONL text (``source`` names it in errors).

        Raises:
            DatasetError: the text holds no case (only blank lines), or a line is not a JSON
                object, lacks ``input``, has a field of the wrong type or an unknown key, or
                reuses an id; the message names the source, the line and the field, and
                ``.line`` / ``.field`` hold them.
        """
        cases: list[EvalCase] = []
        first_line: dict[str, int] = {}
        for number, raw in enumerate(text.split("\n"), start=1):
            line = raw.rstrip("\r")
            if number == 1:
                line = line.removeprefix("\ufeff")
            if not line.strip():
                continue
            case = _parse_line(line, number, source)
            if case.id in first_line:
                raise DatasetError(
                    f"case id {case.id!r} is already used by line {first_line[case.id]}",
                    source=source,
                    line=number,
                    field="id",
                )
            first_line[case.id] = number
            cases.append(case)
        if not cases:
            # fail closed: an empty or truncated file must not turn a CI gate green
            raise DatasetError(
                f"no cases. Fix: add one JSON object per line, e.g. {_EXAMPLE}", source=source
            )
        return cls(cases)

    @classmethod
    def from_jsonl_path(cls, path: str | Path) -> EvalDataset:
        """Read and parse a JSONL file.

        Raises:
            DatasetError: the file cannot be read, is not UTF-8, holds no case, or a line is
                invalid (see :meth:`from_jsonl_str`); the message starts with the path.
        """
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except OSError as exc:
            raise DatasetError(f"cannot read dataset: {exc.strerror}", source=str(p)) from None
        except UnicodeDecodeError as exc:
            raise DatasetError(
                f"not UTF-8 text (byte {exc.start}): {exc.reason}", source=str(p)
            ) from None
        return cls.from_jsonl_str(text, source=str(p))


def _parse_line(line: str, number: int, source: str) -> EvalCase:
    def fail(message: str, field: str | None = None) -> DatasetError:
        return DatasetError(message, source=source, line=number, field=field)

    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise fail(
            f"invalid JSON at column {exc.colno}: {exc.msg}; each line is one JSON object, "
            f"e.g. {_EXAMPLE}"
        ) from None
    if not isinstance(obj, dict):
        raise fail(f"a case is a JSON object, got {type(obj).__name__}; e.g. {_EXAMPLE}")
    for key in obj:
        if key not in _KEYS:
            close = difflib.get_close_matches(key, _KEYS, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise fail(f"unknown key; {hint}a case has {', '.join(_KEYS)}", key)
    if "input" not in obj:
        raise fail(f"missing: every case needs the user-turn text, e.g. {_EXAMPLE}", "input")
    text = obj["input"]
    if not isinstance(text, str) or not text.strip():
        raise fail(f"must be a non-empty string, got {_describe(text)}", "input")
    case_id = obj.get("id", f"case-{number}")
    if not isinstance(case_id, str) or not case_id.strip():
        raise fail(f"must be a non-empty string, got {_describe(case_id)}", "id")
    tools = obj.get("expected_tools")
    if tools is not None:
        if not isinstance(tools, list):
            raise fail(f"must be a list of tool names, got {_describe(tools)}", "expected_tools")
        for i, name in enumerate(tools):
            if not isinstance(name, str) or not name:
                raise fail(
                    f"must be a tool name (non-empty string), got {_describe(name)}",
                    f"expected_tools[{i}]",
                )
    metadata = obj.get("metadata", {})
    if not isinstance(metadata, dict):
        raise fail(f"must be a JSON object, got {_describe(metadata)}", "metadata")
    decisions = obj.get("decisions")
    if decisions is not None:
        if not isinstance(decisions, dict):
            raise fail(
                'must map call ids to answers, e.g. {"c1": {"decision": "approve"}}, got '
                f"{_describe(decisions)}",
                "decisions",
            )
        for call_id, answer in decisions.items():
            try:
                decision_from_json(answer)
            except ResumeRefused as exc:
                raise fail(str(exc), f"decisions.{call_id}") from None
    return EvalCase(
        id=case_id,
        input=text,
        expected=obj.get("expected"),
        expected_tools=tools,
        metadata=metadata,
        decisions=decisions,
        line=number,
    )


def _describe(value: Any) -> str:
    kind = {dict: "object", list: "array", str: "string", bool: "boolean"}.get(type(value))
    if value is None:
        return "null"
    return f"{kind or type(value).__name__} {json.dumps(value)[:40]}"
