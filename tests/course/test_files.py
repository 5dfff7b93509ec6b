"""The exercise files: one source of truth, shipped in the package, jupytext percent format."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dpbandits import course
from dpbandits.course.build import expected_files, starter_from_solution

ROOT = Path(__file__).resolve().parents[2]
EXERCISES = course.exercises()


def test_generated_files_are_in_sync() -> None:
    """The starters are exactly what the solutions generate."""
    files = expected_files(ROOT)
    assert len(files) == len(EXERCISES)
    stale = [str(p.relative_to(ROOT)) for p, text in files.items()
             if not p.is_file() or p.read_text(encoding="utf-8") != text]  # fmt: skip
    assert not stale, f"run `python -m dpbandits.course.build` from the repository root: {stale}"


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
    assert "BEGIN SOLUTION" not in text and "END SOLUTION" not in text
    # every task's function is a TODO in the starter, and defined in both files
    solution = ex.solution_path().read_text(encoding="utf-8")
    assert text.count('raise NotImplementedError("TODO")') == solution.count("# BEGIN SOLUTION")
    for task in ex.tasks:
        if task.name == "audit":  # exercise 4 audits the selectors of tasks 1 and 2
            continue
        assert f"def {task.name}(" in text and f"def {task.name}(" in solution
    # experiments never run on import
    assert 'if __name__ == "__main__":' in text
    assert f"dpbandits course check {ex.number} {ex.filename}" in text


def test_registry() -> None:
    assert [e.number for e in EXERCISES] == [1, 2, 3, 4, 5, 6]
    assert course.exercise("3").number == 3
    for bad in (0, 7, "x", 2.5):
        with pytest.raises(ValueError, match="exercise must be a number from 1 to 6"):
            course.exercise(bad)


def test_starter_from_solution() -> None:
    text = (
        "def f(x):\n    '''doc'''\n    # BEGIN SOLUTION\n    return x\n    # END SOLUTION\n"
        "# BEGIN ANSWER\n# 42\n# END ANSWER\n"
    )
    assert starter_from_solution(text) == (
        "def f(x):\n    '''doc'''\n"
        "    # TODO: write this (see the docstring), then run the checker.\n"
        '    raise NotImplementedError("TODO")\n# Your answer:\n'
    )
    for bad, msg in (
        ("# BEGIN SOLUTION\n", "never closed"),
        ("# END SOLUTION\n", "without BEGIN"),
        ("# BEGIN SOLUTION\n# BEGIN ANSWER\n", "nested"),
        ("# BEGIN SOLUTION\n# END ANSWER\n", "closes BEGIN SOLUTION"),
    ):
        with pytest.raises(ValueError, match=msg):
            starter_from_solution(bad)


@pytest.mark.parametrize("ex", EXERCISES, ids=lambda e: e.filename)
def test_opens_as_a_notebook(ex: course.Exercise) -> None:
    """jupytext reads every file as a notebook of markdown and code cells, and back."""
    jupytext = pytest.importorskip("jupytext")
    for path in (ex.starter_path(), ex.solution_path()):
        text = path.read_text(encoding="utf-8")
        nb = jupytext.reads(text, fmt="py:percent")
        kinds = [cell.cell_type for cell in nb.cells]
        assert kinds.count("markdown") >= 4 and kinds.count("code") >= 4
        assert nb.cells[0].cell_type == "markdown"
        assert nb.cells[0].source.startswith(f"# Exercise {ex.number} ")
        back = jupytext.writes(nb, fmt="py:percent")
        # the round trip is exact but for the version stamp jupytext adds to the header
        assert re.sub(r"#       jupytext_version: .*\n", "", back) == text
