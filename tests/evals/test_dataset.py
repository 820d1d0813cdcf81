"""JSONL datasets: good files and every kind of bad line."""

from __future__ import annotations

from pathlib import Path

import pytest

from helikon.evals import DatasetError, EvalCase, EvalDataset

GOOD = (
    '{"input": "What is 2+2?", "expected": "4"}\n'
    "\n"
    '{"id": "json", "input": "Give me JSON", "expected": {"a": [1, 2]}, "metadata": {"k": 1}}\r\n'
    "   \n"
    '{"input": "Use tools", "expected_tools": ["a", "b"], "expected": null}\n'
    '{"input": "No tools", "expected_tools": []}'
)


def test_good_dataset_parses_every_field() -> None:
    ds = EvalDataset.from_jsonl_str(GOOD)
    assert len(ds) == 4
    assert [c.model_dump() for c in ds] == [
        {
            "id": "case-1",
            "input": "What is 2+2?",
            "expected": "4",
            "expected_tools": None,
            "metadata": {},
            "decisions": None,
            "line": 1,
        },
        {
            "id": "json",
            "input": "Give me JSON",
            "expected": {"a": [1, 2]},
            "expected_tools": None,
            "metadata": {"k": 1},
            "decisions": None,
            "line": 3,
        },
        {
            "id": "case-5",
            "input": "Use tools",
            "expected": None,
            "expected_tools": ["a", "b"],
            "metadata": {},
            "decisions": None,
            "line": 5,
        },
        {
            "id": "case-6",
            "input": "No tools",
            "expected": None,
            "expected_tools": [],
            "metadata": {},
            "decisions": None,
            "line": 6,
        },
    ]


def test_from_path_reads_utf8_with_bom(tmp_path: Path) -> None:
    path = tmp_path / "ds.jsonl"
    path.write_bytes('\ufeff{"input": "héllo"}\n'.encode())
    (case,) = EvalDataset.from_jsonl_path(path)
    assert (case.id, case.input) == ("case-1", "héllo")


@pytest.mark.parametrize("text", ["", "\n\n", "  \r\n\t\n", "\ufeff\n"])
def test_a_dataset_without_cases_is_refused(text: str) -> None:
    with pytest.raises(DatasetError) as info:
        EvalDataset.from_jsonl_str(text, source="ci.jsonl")
    assert str(info.value) == (
        "ci.jsonl: no cases. Fix: add one JSON object per line, e.g. "
        '{"input": "What is 2+2?", "expected": "4"}'
    )
    assert (info.value.source, info.value.line, info.value.field) == ("ci.jsonl", None, None)


def test_an_empty_file_is_refused_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "support.jsonl"
    path.write_text("")  # e.g. a truncated download in CI
    with pytest.raises(DatasetError, match=f"^{path}: no cases. Fix: add one JSON object"):
        EvalDataset.from_jsonl_path(path)


def test_cases_built_in_code_may_be_empty() -> None:
    assert len(EvalDataset([])) == 0  # EvalRun then reports a run that does not pass


@pytest.mark.parametrize(
    ("line", "field", "message"),
    [
        ('{"input": "x"', None, "invalid JSON at column"),
        ('["input", "x"]', None, "a case is a JSON object, got list"),
        ('{"expected": "x"}', "input", "missing"),
        ('{"input": 3}', "input", "must be a non-empty string, got int 3"),
        ('{"input": "  "}', "input", "must be a non-empty string"),
        ('{"input": "x", "id": ""}', "id", "must be a non-empty string"),
        ('{"input": "x", "id": 7}', "id", "must be a non-empty string, got int 7"),
        ('{"input": "x", "expected_tools": "a"}', "expected_tools", "must be a list"),
        ('{"input": "x", "expected_tools": ["a", 2]}', "expected_tools[1]", "tool name"),
        ('{"input": "x", "metadata": [1]}', "metadata", "must be a JSON object, got array"),
        (
            '{"input": "x", "expected_tool": ["a"]}',
            "expected_tool",
            "did you mean 'expected_tools'",
        ),
    ],
)
def test_bad_line_names_line_and_field(line: str, field: str | None, message: str) -> None:
    text = '{"input": "fine"}\n\n' + line + "\n"
    with pytest.raises(DatasetError) as info:
        EvalDataset.from_jsonl_str(text, source="ds.jsonl")
    err = info.value
    assert (err.source, err.line, err.field) == ("ds.jsonl", 3, field)
    assert str(err).startswith("ds.jsonl:3: " + ("" if field is None else f"field {field!r}: "))
    assert message in str(err)
    assert isinstance(err, ValueError)


def test_duplicate_id_names_both_lines() -> None:
    with pytest.raises(
        DatasetError,
        match=r"<string>:3: field 'id': case id 'case-1' is already "
        r"used by line 1",
    ):
        EvalDataset.from_jsonl_str('{"input": "a"}\n{"input": "b"}\n{"id": "case-1", "input": "c"}')


def test_duplicate_ids_in_code_are_rejected() -> None:
    with pytest.raises(DatasetError, match="case id 'x' is used twice"):
        EvalDataset([EvalCase(id="x", input="a"), EvalCase(id="x", input="b")])


def test_unreadable_file_is_a_dataset_error(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="cannot read dataset") as info:
        EvalDataset.from_jsonl_path(tmp_path / "missing.jsonl")
    assert info.value.line is None
    bad = tmp_path / "latin1.jsonl"
    bad.write_bytes(b'{"input": "caf\xe9"}')
    with pytest.raises(DatasetError, match="not UTF-8"):
        EvalDataset.from_jsonl_path(bad)
