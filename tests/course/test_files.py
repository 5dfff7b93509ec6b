"""The exercise files: written once (jupytext percent format), shipped in the package without
their solutions; the solutions in the repository's examples/course-solutions/."""

from __future__ import annotations

import ast
import importlib
import re
import sys
from pathlib import Path

import jupytext
import pytest

from dpbandits import course
from dpbandits.course import registry
from dpbandits.course.registry import EXERCISE_MODULES
from dpbandits.course.solution import ANSWER_LINE, TODO_LINES, solution_text, solved_parts

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = ROOT / "examples" / "course-solutions"
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


def test_no_solution_in_the_package() -> None:
    """The package ships the starters and the checker only: no file of solved parts, no
    package-data pattern that would pick one up, and the solutions live in the repository."""
    package = Path(course.__file__).parent
    for path in package.rglob("*"):
        if path.is_file() and path.suffix in (".py", ".toml", ".ipynb", ".md", ".txt", ".json"):
            text = path.read_text(encoding="utf-8", errors="replace")
            assert not text.startswith("# Reference solution of exercise"), path
            assert "BEGIN ANSWER" not in text or path.name == "solution.py", path
    assert not (package / "exercises" / "solutions").exists()
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    data = config["tool"]["setuptools"]["package-data"]["dpbandits"]
    assert not [p for p in data if "solution" in p]
    assert sorted(p.name for p in SOLUTIONS.glob("*.py")) == [e.filename for e in EXERCISES]
    assert course.solutions_dir().resolve() == SOLUTIONS.resolve()  # from a checkout


def test_solutions_dir_outside_a_checkout(tmp_path: Path, monkeypatch) -> None:
    """Installed from a wheel there are no solutions: a clear error says where to get them;
    --solutions DIR or the environment variable points at a copy."""
    monkeypatch.delenv(registry.SOLUTIONS_ENV, raising=False)
    monkeypatch.setattr(registry, "SOLUTIONS_IN_REPOSITORY", Path("no") / "such-folder")
    with pytest.raises(ValueError, match="not installed with the package .* --solutions DIR"):
        course.solutions_dir()
    with pytest.raises(ValueError, match="not installed with the package"):
        course.start(1, tmp_path, solution=True, fmt="py")
    assert not list(tmp_path.iterdir())  # nothing written
    copy = tmp_path / "sol"
    copy.mkdir()
    (copy / "ex1_bandit_basics.py").write_text(
        (SOLUTIONS / "ex1_bandit_basics.py").read_text(encoding="utf-8"), encoding="utf-8"
    )
    path = course.start(1, tmp_path / "a", solution=True, fmt="py", solutions=copy)
    assert path.read_text(encoding="utf-8") == course.exercise(1).solution_text(copy)
    monkeypatch.setenv(registry.SOLUTIONS_ENV, str(copy))
    assert course.solutions_dir() == copy
    with pytest.raises(ValueError, match="has no ex2_ucb_thompson.py"):
        course.exercise(2).solution_path()


@pytest.mark.parametrize("ex", EXERCISES, ids=lambda e: e.filename)
def test_examples_course_is_the_packaged_exercises(ex: course.Exercise) -> None:
    """examples/course/ is a link to the one copy of the exercises, the one the package ships
    (in an sdist, which copies links, a copy of it)."""
    linked, shipped = ROOT / "examples/course" / ex.filename, ex.starter_path()
    if (ROOT / "examples/course").is_symlink():
        assert linked.resolve() == shipped.resolve()
    else:
        assert linked.read_bytes() == shipped.read_bytes()
    assert ex.solution_path().resolve() == (SOLUTIONS / ex.filename).resolve()


def _code_cells(text: str) -> list[str]:
    """The code cells of a percent script (the header and markdown cells left out)."""
    cells = re.split(r"^# %%.*\n", text, flags=re.M)[1:]
    heads = re.findall(r"^# %%.*$", text, flags=re.M)
    return [c for h, c in zip(heads, cells, strict=True) if "[markdown]" not in h]


@pytest.mark.parametrize("ex", EXERCISES, ids=lambda e: e.filename)
def test_jupytext_percent_format_and_cells(ex: course.Exercise) -> None:
    """Percent format; a check cell after every task; experiments that wait for unfinished
    tasks and show their figures with the course's ``show``; a parameters cell; a score."""
    text = ex.starter_path().read_text(encoding="utf-8")
    assert text.startswith("# ---\n# jupyter:\n#   jupytext:\n")
    assert "format_name: percent" in text
    assert text.count("# %% [markdown]") >= 4 and re.search(r"^# %%$", text, re.M)
    assert "BEGIN ANSWER" not in text and "END ANSWER" not in text
    assert f"check = Checker({ex.number}, globals())" in text
    assert re.search(r'^# %% tags=\["parameters"\]$', text, re.M)
    solution = ex.solution_path().read_text(encoding="utf-8")
    for task in ex.tasks:
        assert f'    check("{task.name}")' in text
        if task.name != "audit":  # exercise 4 audits the selectors of tasks 1 and 2
            assert f"def {task.name}(" in text and f"def {task.name}(" in solution
    assert text.rstrip().endswith('if __name__ == "__main__":\n    check()')
    assert "plt.show()" not in text
    for cell in _code_cells(text):
        tree = ast.parse(cell)
        calls = {n.func.id for n in ast.walk(tree)
                 if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}  # fmt: skip
        if "subplots" in cell:  # an experiment with a figure
            assert "show" in calls and "skip_if_not_done" in calls, cell[:200]
        top = [n for n in tree.body if not isinstance(n, (ast.FunctionDef, ast.ClassDef))]
        for node in top:
            # nothing but imports, constants and `check = Checker(...)` runs on import
            guarded = isinstance(node, ast.If) and "__main__" in ast.unparse(node.test)
            assert guarded or isinstance(node, (ast.Import, ast.ImportFrom, ast.Assign)), (
                ast.unparse(node)[:200]
            )
    assert f"dpbandits course check {ex.number} {Path(ex.filename).stem}.ipynb" in text


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
    with pytest.raises(ValueError, match="exercise 1 has no task 'x'; its tasks: pull_arm"):
        course.exercise(1).task("x")


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
    for text in (ex.starter_path().read_text(encoding="utf-8"), ex.solution_text()):
        nb = jupytext.reads(text, fmt="py:percent")
        kinds = [cell.cell_type for cell in nb.cells]
        assert kinds.count("markdown") >= 4 and kinds.count("code") >= 4
        assert nb.cells[0].cell_type == "markdown"
        assert nb.cells[0].source.startswith(f"# Exercise {ex.number} ")
        back = jupytext.writes(nb, fmt="py:percent")
        # the round trip is exact but for the version stamp jupytext adds to the header
        assert re.sub(r"#       jupytext_version: .*\n", "", back) == text
