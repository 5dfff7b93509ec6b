"""``dpbandits course check N FILE --json PATH`` writes Gradescope's results.json.

The JSON Schema below is written from Gradescope's autograder specification
(https://gradescope-autograders.readthedocs.io/en/latest/specs/, "Output format", "Controlling
Test Case Visibility", "Test case status", "Output String Formatting"): every key the
specification lists, with its type and allowed values, and no other key.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from dpbandits import course
from dpbandits.cli import main

VISIBILITY = {"enum": ["hidden", "after_due_date", "after_published", "visible"]}
FORMAT = {"enum": ["text", "html", "simple_format", "md", "ansi"]}

TEST_CASE = {
    "type": "object",
    "properties": {
        "score": {"type": "number"},
        "max_score": {"type": "number"},
        "status": {"enum": ["passed", "failed"]},
        "name": {"type": "string"},
        "name_format": FORMAT,
        "number": {"type": "string"},
        "output": {"type": "string"},
        "output_format": FORMAT,
        "tags": {"type": "array", "items": {"type": "string"}},
        "visibility": VISIBILITY,
        "extra_data": {"type": "object"},
    },
    "additionalProperties": False,
}

RESULTS_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {
        "score": {"type": "number"},
        "execution_time": {"type": "number"},
        "output": {"type": "string"},
        "output_format": FORMAT,
        "test_output_format": FORMAT,
        "test_name_format": FORMAT,
        "visibility": VISIBILITY,
        "stdout_visibility": VISIBILITY,
        "extra_data": {"type": "object"},
        "tests": {"type": "array", "items": TEST_CASE},
        "leaderboard": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "value": {"type": ["number", "string"]},
                    "order": {"enum": ["asc", "desc"]},
                },
                "required": ["name", "value"],
            },
        },
    },
    # "score: optional, but required if not on each test case"; "tests: optional, but
    # required if no top-level score"
    "anyOf": [
        {"required": ["score"]},
        {"required": ["tests"], "properties": {"tests": {"items": {"required": ["score"]}}}},
    ],
    "additionalProperties": False,
}


def _validate(data: object) -> None:
    jsonschema.Draft202012Validator.check_schema(RESULTS_SCHEMA)
    jsonschema.validate(data, RESULTS_SCHEMA, cls=jsonschema.Draft202012Validator)


def test_schema_rejects_what_gradescope_would_not_read() -> None:
    """The schema can fail: a status Gradescope does not know, a misspelt key, no score."""
    good = {"score": 1.0, "tests": [{"name": "t", "score": 1.0, "max_score": 1.0}]}
    _validate(good)
    for bad in (
        {"score": 1.0, "tests": [{"name": "t", "status": "ok"}]},
        {"score": 1.0, "test": []},
        {"tests": [{"name": "t"}]},
        {"score": "1"},
        {"score": 1, "visibility": "public"},
    ):
        with pytest.raises(jsonschema.ValidationError):
            _validate(bad)


def _results(tmp_path: Path, argv: list[str]) -> tuple[int, dict]:
    out = tmp_path / "results" / "results.json"
    out.parent.mkdir(exist_ok=True)
    code = main([*argv, "--json", str(out)])
    return code, json.loads(out.read_text(encoding="utf-8"))


def test_starter_and_solution(tmp_path: Path, capsys) -> None:
    ex = course.exercise(1)
    code, data = _results(tmp_path, ["course", "check", "1", str(ex.starter_path())])
    assert code == 1
    _validate(data)
    assert data["score"] == 0 and data["visibility"] == "visible"
    assert [t["name"] for t in data["tests"]] == [f"{t.name}: {t.title}" for t in ex.tasks]
    assert [t["max_score"] for t in data["tests"]] == [float(t.points) for t in ex.tasks]
    assert [t["number"] for t in data["tests"]] == ["1.1", "1.2", "1.3", "1.4"]
    assert all(t["status"] == "failed" and t["score"] == 0 for t in data["tests"])
    first = ex.tasks[0]
    assert (
        data["tests"][0]["output"] == f"not done yet\nhint 1/{len(first.hints)}: {first.hints[0]}"
    )
    code, data = _results(tmp_path, ["course", "check", "1", str(ex.solution_path())])
    assert code == 0
    _validate(data)
    assert data["score"] == float(ex.max_points) == sum(t["score"] for t in data["tests"])
    assert all(t["status"] == "passed" and t["output"] == "ok" for t in data["tests"])
    assert "Score: 8 of 8 points (4 of 4 tasks ok). Well done!" in data["output"]
    capsys.readouterr()


def test_a_mistake_and_a_subset(tmp_path: Path, capsys) -> None:
    """A failed task's output has the message, the likely cause and the first hint."""
    ex = course.exercise(2)
    path = tmp_path / ex.filename
    path.write_text(ex.solution_text().replace("np.log(t)", "np.log10(t)"), encoding="utf-8")
    code, data = _results(tmp_path, ["course", "check", "2", str(path), "--task", "ucb_index",
                                     "--task", "lai_robbins_constant"])  # fmt: skip
    assert code == 1
    _validate(data)
    (ucb, lai) = data["tests"]
    assert ucb["number"] == "2.1" and lai["number"] == "2.3"
    lines = ucb["output"].split("\n")
    assert lines[0].startswith("for an arm with N = ") and "your index is" in lines[0]
    assert lines[1] == "likely cause: ln is the natural logarithm (np.log), not log10 or log2"
    assert lines[2].startswith("hint 1/3: ") and "--hint" not in ucb["output"]
    assert (ucb["score"], lai["score"], data["score"]) == (0.0, 2.0, 2.0)
    capsys.readouterr()


def test_missing_submission_still_writes_results(tmp_path: Path, capsys) -> None:
    """An autograder always gets a results.json: a missing file scores 0 and says why."""
    out = tmp_path / "results.json"
    assert main(["course", "check", "4", str(tmp_path / "nope.ipynb"), "--json", str(out)]) == 2
    assert "no such file" in capsys.readouterr().err
    data = json.loads(out.read_text(encoding="utf-8"))
    _validate(data)
    assert data["score"] == 0 and len(data["tests"]) == 5
    assert all("no such file" in t["output"] for t in data["tests"])
