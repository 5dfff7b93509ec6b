"""The exercise files: written once, shipped in the package, jupytext percent format."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from dpbandits import course
from dpbandits.course.registry import EXERCISE_MODULES
from dpbandits.course.solution import ANSWER_LINE, TODO_LINES, solution_text, solved_parts

ROOT = Path(__file__).resolve().parents[2]
EXERCISES = course.exercises()


@pytest.mark.parametrize("ex", EXERCISES, ids=lambda e: e.filename)
def test_solution_file_holds_only_the_solved_parts(ex: course.Exercise) -> None:
    """One copy of the notebook: the solution file has one function per TODO and the answers."""
    starter = ex.starter_path().read_text(encoding="utf-8")
    parts = ex.solution_path().read_text(encoding="utf-8")
    assert parts.startswith(f"# Reference solution of exercise {ex.number}: the solved parts")
    functions, answers = solved_parts(parts)
    assert starter.count(TODO_LINES[1]) == len(functions) >= 3
    assert starter.count(ANSWER_LINE) == len(answers) == 1
    assert "# %%" not in parts and "class " not in parts  # no notebook cells, no agent classes
    full = ex.solution_text()
    assert TODO_LINES[1] not in full and ANSWER_LINE not in full
    assert "BEGIN ANSWER" not in full and "END ANSWER" not in full
    # every line of the exercise file but the placeholders is in the notebook, in order
    placeholders = (*TODO_LINES, ANSWER_LINE)
    kept = [line for line in starter.splitlines() if line.strip() not in placeholders]
    rest = iter(full.splitlines())
    assert all(line in rest for line in kept)


@pytest.mark.parametrize("ex", EXERCISES, ids=lambda e: e.filename)
def test_examples_course_is_the_packaged_exercises(ex: course.Exercise) -> None:
    """examples/course/ is a link to the one copy, the one the package ships."""
    assert (ROOT / "examples/course" / ex.filename).resolve() == ex.starter_path().resolve()
    assert (ROOT / "examples/course/solutions" / ex.filename).resolve() == (
        ex.solution_path().resolve()
    )


@pytest.mark.parametrize("ex", EXERCISES, ids=lambda e: e.filename)
def test_jupytext_percent_format_and_todos(ex: course.Exercise) -> None:
    text = ex.starter_path().read_text(encoding="utf-8")
    assert text.startswith("# ---\n# jupyter:\n#   jupytext:\n")
    assert "format_name: percent" in text
    assert text.count("# %% [markdown]") >= 4 and re.search(r"^# %%$", text, re.M)
    assert "BEGIN ANSWER" not in text and "END ANSWER" not in text
    # every task's function is a TODO in the starter, and solved in the solution file
    solution = ex.solution_path().read_text(encoding="utf-8")
    for task in ex.tasks:
        if task.name == "audit":  # exercise 4 audits the selectors of tasks 1 and 2
            continue
        assert f"def {task.name}(" in text and f"def {task.name}(" in solution
    # experiments never run on import
    assert 'if __name__ == "__main__":' in text
    assert f"dpbandits course check {ex.number} {ex.filename}" in text


def test_registry() -> None:
    assert [e.number for e in EXERCISES] == [1, 2, 3, 4, 5, 6]
    for ex in EXERCISES:
        # every check of the module grades a task of the catalogue, in the catalogue's order
        module = importlib.import_module(EXERCISE_MODULES[ex.number - 1])
        checks = [n for n, f in vars(module).items() if n.startswith("check_") and callable(f)]
        assert checks == [f"check_{t.name}" for t in ex.tasks]
        assert [t.check for t in ex.tasks] == [getattr(module, c) for c in checks]
        assert ex.starter_path().is_file() and ex.solution_path().is_file()
    assert course.exercise("3").number == 3
    for bad in (0, 7, "x", 2.5):
        with pytest.raises(ValueError, match="exercise must be a number from 1 to 6"):
            course.exercise(bad)


TODO = (
    "    # TODO: write this (see the docstring), then run the checker.\n"
    '    raise NotImplementedError("TODO")\n'
)
STARTER = (
    "def f(x: int,\n      y: int = 0) -> int:  # a task\n    '''doc'''\n" + TODO + "\n\n"
    "class A:\n    def g(self):\n        '''doc'''\n"
    + TODO.replace("    ", "        ")
    + "\n\n# Your answer:\n"
)
PARTS = (
    "# Reference solution of exercise 9: the solved parts only.\n"
    "def f(x, y):\n    # why\n    z = x + y\n\n    return z\n\n\n"
    "def g(self):\n    if self:\n        return 1\n    return 2\n"
    "# BEGIN ANSWER\n# 42\n# END ANSWER\n"
)


def test_solution_text() -> None:
    """Bodies go where the TODOs were (re-indented, comments and blank lines kept)."""
    assert solution_text(STARTER, PARTS) == (
        "def f(x: int,\n      y: int = 0) -> int:  # a task\n    '''doc'''\n"
        "    # why\n    z = x + y\n\n    return z\n\n\n"
        "class A:\n    def g(self):\n        '''doc'''\n"
        "        if self:\n            return 1\n        return 2\n\n\n"
        "# 42\n"
    )


@pytest.mark.parametrize(
    ("parts", "msg"),
    [
        (PARTS.replace("def g(self)", "def h(self)"), "no solved function for the TODO of 'g'"),
        (PARTS + "def h():\n    pass\n", r"without a TODO in the exercise file: \['h'\]"),
        (PARTS.replace("def f(x, y)", "def f(y, x)"), r"the exercise file's f\(x, y\)"),
        (PARTS.replace("def g(self)", "def g(self, *a)"), r"g\(\) must take the parameters"),
        (PARTS.replace("# END ANSWER\n", ""), "BEGIN ANSWER is never closed"),
        (PARTS.replace("# BEGIN ANSWER\n", ""), "END ANSWER without BEGIN"),
        (PARTS + "# BEGIN ANSWER\n# END ANSWER\n", "2 answer blocks for 1"),
        (PARTS.replace("# BEGIN ANSWER\n# 42\n# END ANSWER\n", ""), "no answer block"),
        (
            PARTS.replace("def g(self):", "def g(self)"),
            "ex9.py:9: the solved parts do not parse: expected",
        ),
    ],
)
def test_solution_text_rejects_parts_that_do_not_fit(parts: str, msg: str) -> None:
    with pytest.raises(ValueError, match=msg):
        solution_text(STARTER, parts, "ex9.py")


@pytest.mark.parametrize("ex", EXERCISES, ids=lambda e: e.filename)
def test_opens_as_a_notebook(ex: course.Exercise) -> None:
    """jupytext reads every notebook as markdown and code cells, and back."""
    jupytext = pytest.importorskip("jupytext")
    for text in (ex.starter_path().read_text(encoding="utf-8"), ex.solution_text()):
        nb = jupytext.reads(text, fmt="py:percent")
        kinds = [cell.cell_type for cell in nb.cells]
        assert kinds.count("markdown") >= 4 and kinds.count("code") >= 4
        assert nb.cells[0].cell_type == "markdown"
        assert nb.cells[0].source.startswith(f"# Exercise {ex.number} ")
        back = jupytext.writes(nb, fmt="py:percent")
        # the round trip is exact but for the version stamp jupytext adds to the header
        assert re.sub(r"#       jupytext_version: .*\n", "", back) == text
