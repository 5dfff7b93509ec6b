"""The checker on the reference solutions and the starters, from Python and from the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dpbandits import course
from dpbandits.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXERCISES = course.exercises()
# Exercises whose full check takes more than a few seconds on a loaded machine.
SLOW = {2, 4, 5, 6}


def _marks(ex: course.Exercise) -> list[pytest.MarkDecorator]:
    return [pytest.mark.slow] if ex.number in SLOW else []


@pytest.mark.parametrize("ex", [pytest.param(e, marks=_marks(e), id=e.filename) for e in EXERCISES])
def test_every_solution_passes(ex: course.Exercise) -> None:
    results = course.check(ex.number, ex.solution_path())
    assert [r.task for r in results] == [t.name for t in ex.tasks]
    assert all(r.ok for r in results), [r.line() for r in results if not r.ok]


@pytest.mark.parametrize("ex", EXERCISES, ids=lambda e: e.filename)
def test_every_starter_is_not_done_yet(ex: course.Exercise, capsys) -> None:
    code = main(["course", "check", str(ex.number), str(ex.starter_path())])
    out, err = capsys.readouterr()
    assert code == 1 and err == ""
    lines = out.strip().splitlines()
    assert len(lines) == len(ex.tasks) + 2  # header, one line per task, summary
    for task, line in zip(ex.tasks, lines[1:-1], strict=True):
        assert line.split() == [task.name, "not", "done", "yet"]
    assert lines[-1] == f"0 of {len(ex.tasks)} tasks ok."


def test_check_from_python_returns_results() -> None:
    ex = course.exercise(1)
    res = course.check(1, ex.solution_path(), tasks=["greedy_regret_rate", "update_estimates"])
    assert [r.task for r in res] == ["update_estimates", "greedy_regret_rate"]
    assert all(r.ok and r.status == "ok" and r.message == "ok" for r in res)
    assert res[0].to_dict()["exercise"] == 1
    with pytest.raises(ValueError, match="no task 'nope'"):
        course.check(1, ex.solution_path(), tasks=["nope"])
    with pytest.raises(ValueError, match="no such file"):
        course.check(1, "does/not/exist.py")
    with pytest.raises(ValueError, match="seed"):
        course.check(1, ex.solution_path(), seed=-1)


def test_cli_list(capsys) -> None:
    assert main(["course", "list"]) == 0
    out = capsys.readouterr().out
    for ex in EXERCISES:
        assert f"{ex.number}. {ex.title}" in out
        for task in ex.tasks:
            assert f"- {task.name}: " in out


def test_cli_start_then_check(tmp_path: Path, capsys) -> None:
    d = tmp_path / "work"
    assert main(["course", "start", "1", str(d)]) == 0
    target = d / "ex1_bandit_basics.py"
    assert target.read_bytes() == course.exercise(1).starter_path().read_bytes()
    capsys.readouterr()
    # a student's work is never overwritten
    assert main(["course", "start", "1", str(d)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert main(["course", "start", "1", str(d), "--solution", "--force"]) == 0
    assert target.read_text(encoding="utf-8") == course.exercise(1).solution_text()
    capsys.readouterr()
    out_json = tmp_path / "r.json"
    assert main(["course", "check", "1", str(target), "--json", str(out_json)]) == 0
    out = capsys.readouterr().out
    assert "4 of 4 tasks ok." in out
    data = json.loads(out_json.read_text())
    assert [t["status"] for t in data["tasks"]] == ["ok"] * 4


@pytest.mark.parametrize(
    ("argv", "text"),
    [
        (["course", "check", "9", "x.py"], "exercise must be a number from 1 to 6, got 9"),
        (["course", "check", "1", "missing.py"], "no such file"),
        (["course", "check", "1", "x.py", "--task", "nope"], "no task 'nope'"),
        (["course", "start", "zero", "d"], "exercise must be a number"),
    ],
)
def test_cli_bad_input_is_one_line(argv: list[str], text: str, capsys) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("dpbandits: error: ") and text in err and err.count("\n") == 1


@pytest.mark.slow
def test_cli_subprocess_exit_codes(tmp_path: Path) -> None:
    """As a student runs it: no traceback, exit 1 for a starter, 0 for a solution."""
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    ex = course.exercise(3)
    for path, code in ((ex.starter_path(), 1), (ex.solution_path(), 0)):
        proc = subprocess.run(
            [sys.executable, "-m", "dpbandits", "course", "check", "3", str(path)],
            capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300,
        )  # fmt: skip
        assert proc.returncode == code, proc.stdout + proc.stderr
        assert "Traceback" not in proc.stdout + proc.stderr


def test_solution_parts_of_another_exercise(tmp_path: Path) -> None:
    """A file of solved parts is graded as the notebook of its own exercise only."""
    with pytest.raises(ValueError, match="holds the solved parts of exercise 2, not of exercise 1"):
        course.check(1, course.exercise(2).solution_path())
    # the same parts, completed by hand, get the same verdicts as the parts file
    full = tmp_path / course.exercise(1).filename
    full.write_text(course.exercise(1).solution_text(), encoding="utf-8")
    by_parts = course.check(1, course.exercise(1).solution_path())
    assert [(r.task, r.status) for r in course.check(1, full)] == [
        (r.task, r.status) for r in by_parts
    ]
