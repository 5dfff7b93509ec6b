"""The checker on the reference solutions and the starters, from Python and from the CLI:
points, totals, likely causes, hints."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dpbandits import course
from dpbandits.cli import main
from dpbandits.course.helpers import Checker

ROOT = Path(__file__).resolve().parents[2]
EXERCISES = course.exercises()


@pytest.mark.parametrize("ex", EXERCISES, ids=lambda e: e.filename)
def test_every_starter_is_not_done_yet(ex: course.Exercise, capsys) -> None:
    code = main(["course", "check", str(ex.number), str(ex.starter_path())])
    out, err = capsys.readouterr()
    assert code == 1 and err == ""
    lines = out.strip().splitlines()
    assert len(lines) == len(ex.tasks) + 2  # header, one line per task, total
    for task, line in zip(ex.tasks, lines[1:-1], strict=True):
        assert line.split() == [task.name, f"0/{task.points}", "not", "done", "yet"]
    assert lines[-1] == f"Score: 0 of {ex.max_points} points (0 of {len(ex.tasks)} tasks ok)."


def test_points() -> None:
    """Every task has points and at least two hints; the total is what list shows."""
    for ex in EXERCISES:
        assert ex.max_points == sum(t.points for t in ex.tasks) >= 6
        for t in ex.tasks:
            assert isinstance(t.points, int) and t.points >= 1
            assert len(t.hints) >= 2 and all(len(h) > 20 for h in t.hints)


def test_check_from_python_returns_results() -> None:
    ex = course.exercise(1)
    res = course.check(1, ex.solution_path(), tasks=["greedy_regret_rate", "update_estimates"])
    assert [r.task for r in res] == ["update_estimates", "greedy_regret_rate"]
    assert all(r.ok and r.status == "ok" and r.message == "ok" and r.cause is None for r in res)
    assert [(r.points, r.max_points) for r in res] == [(2, 2), (1, 1)]
    assert res[0].to_dict()["exercise"] == 1 and res[0].to_dict()["points"] == 2
    with pytest.raises(ValueError, match="no task 'nope'"):
        course.check(1, ex.solution_path(), tasks=["nope"])
    with pytest.raises(ValueError, match="no such file"):
        course.check(1, "does/not/exist.py")
    with pytest.raises(ValueError, match="seed"):
        course.check(1, ex.solution_path(), seed=-1)


def test_check_rejects_other_files(tmp_path: Path) -> None:
    txt = tmp_path / "ex1.txt"
    txt.write_text("x = 1\n")
    with pytest.raises(ValueError, match=r"must be a \.py or \.ipynb file"):
        course.check(1, txt)
    bad = tmp_path / "ex1.ipynb"
    bad.write_text("not json")
    with pytest.raises(ValueError, match="is not a Jupyter notebook"):
        course.check(1, bad)


def test_cli_list(capsys) -> None:
    assert main(["course", "list"]) == 0
    out = capsys.readouterr().out
    for ex in EXERCISES:
        assert f"{ex.number}. {ex.title}" in out and f"{ex.max_points} points" in out
        for task in ex.tasks:
            assert f"- {task.name} ({task.points} points): " in out


def test_failed_task_shows_cause_and_progressive_hints(tmp_path: Path, capsys) -> None:
    """A failing task: its message, the likely cause, and hint K of ``--hint K`` (capped)."""
    ex = course.exercise(1)
    text = ex.solution_text().replace("for _ in range(n_steps):", "for _ in range(n_steps - 1):")
    path = tmp_path / ex.filename
    path.write_text(text, encoding="utf-8")
    hints = ex.task("pull_arm_repeatedly").hints
    argv = ["course", "check", "1", str(path), "--task", "pull_arm_repeatedly"]
    assert main(argv) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split()[:2] == ["pull_arm_repeatedly", "0/2"]
    assert "total regret after 3000 pulls" in lines[1]
    assert (
        lines[2].strip() == "likely cause: an off-by-one in the pull count: your loop pulls "
        "2999 times, not 3000"
    )
    assert lines[3] == "Score: 0 of 2 points (0 of 1 tasks ok)."
    for k in (1, 2, len(hints), len(hints) + 3):
        assert main([*argv, "--hint", str(k)] if k != 1 else [*argv, "--hint"]) == 1
        out = capsys.readouterr().out
        shown = min(k, len(hints))
        assert f"hint {shown}/{len(hints)}: {hints[shown - 1]}" in out
        assert ("(next hint: --hint" in out) == (shown < len(hints))
    # an ok task gets no hint
    assert main(["course", "check", "1", str(path), "--task", "update_estimates", "--hint"]) == 0
    out = capsys.readouterr().out
    assert "hint" not in out and "Score: 2 of 2 points (1 of 1 tasks ok). Well done!" in out


def test_check_namespace_and_notebook_checker(capsys) -> None:
    """A notebook's functions (its globals()) are graded where they run, with cell-relative
    locations; ``Checker`` prints a task's verdict and ``score`` returns its points."""
    ex = course.exercise(3)
    text = ex.solution_text().replace("np.log(min(t, window))", "np.log(t)")
    namespace: dict = {"__name__": "student_notebook"}
    exec(compile(text, "<cell-7>", "exec"), namespace)  # noqa: S102 - the student's code
    results = course.check_namespace(3, namespace)
    assert [r.status for r in results] == ["ok", "failed", "ok"]
    assert "min(t, window), not of t" in (results[1].cause or "")
    check = Checker(3, namespace)
    check("sw_ucb_index", hint=1)
    out = capsys.readouterr().out
    assert out.startswith("  sw_ucb_index") and "0/2" in out and "likely cause:" in out
    assert "hint 1/3:" in out and '(next hint: check("sw_ucb_index", hint=2))' in out
    assert check.score("window_counts_sums") == 2.0 and check.score("sw_ucb_index") == 0.0
    # an exception in the student's code points at the line of the cell
    broken = text.replace("safe = np.maximum(counts, 1.0)", "safe = np.maximum(counts, 1.0)[9]")
    namespace = {"__name__": "student_notebook"}
    exec(compile(broken, "<cell-7>", "exec"), namespace)  # noqa: S102
    (r,) = course.check_namespace(3, namespace, tasks=["sw_ucb_index"])
    assert r.status == "failed" and "your code raised IndexError" in r.message
    assert "<cell-7>, line" in r.message and "in sw_ucb_index" in r.message
    with pytest.raises(TypeError, match="namespace must be a mapping"):
        course.check_namespace(3, [1, 2])


def test_cli_start_then_check(tmp_path: Path, capsys) -> None:
    d = tmp_path / "work"
    assert main(["course", "start", "1", str(d), "--format", "py"]) == 0
    target = d / "ex1_bandit_basics.py"
    assert target.read_bytes() == course.exercise(1).starter_path().read_bytes()
    capsys.readouterr()
    # a student's work is never overwritten
    assert main(["course", "start", "1", str(d), "--format", "py"]) == 2
    assert "already exists" in capsys.readouterr().err
    assert main(["course", "start", "1", str(d), "--format", "py", "--solution", "--force"]) == 0
    assert target.read_text(encoding="utf-8") == course.exercise(1).solution_text()
    capsys.readouterr()
    assert main(["course", "check", "1", str(target)]) == 0
    assert "Score: 8 of 8 points (4 of 4 tasks ok). Well done!" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "text"),
    [
        (["course", "check", "9", "x.py"], "exercise must be a number from 1 to 6, got 9"),
        (["course", "check", "1", "missing.py"], "no such file"),
        (["course", "check", "1", "x.py", "--task", "nope"], "no task 'nope'"),
        (["course", "check", "1", "x.py", "--hint", "-1"], "--hint must be >= 1"),
        (["course", "start", "zero", "d"], "exercise must be a number"),
        (["course", "start", "1", "d", "--solution", "--solutions", "nowhere"],
         "the solutions folder 'nowhere' does not exist"),
    ],
)  # fmt: skip
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
