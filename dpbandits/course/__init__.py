"""RL-course exercises: six graded exercises and their checker.

From the shell: ``dpbandits course list``, ``dpbandits course start N DIR`` (a notebook; ``--format
py`` for the jupytext script) and ``dpbandits course check N FILE`` (``.ipynb`` or ``.py``; see
``docs/course.md``). From Python::

    from dpbandits import course
    results = course.check(1, "ex1_bandit_basics.ipynb")   # one TaskResult per task
    sum(r.points for r in results)

In a notebook, :class:`dpbandits.course.helpers.Checker` grades the functions defined so far
(:func:`check_namespace`). The exercise files are shipped inside this package
(``dpbandits/course/exercises``, one jupytext source per exercise; ``examples/course/`` in the
repository is a link to them). The reference solutions are not: they are in the repository's
``examples/course-solutions/`` (:func:`dpbandits.course.registry.solutions_dir`), one file of
solved parts per exercise (:mod:`dpbandits.course.solution`). The checker needs none of them:
it grades with statistical tests of its own.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from dpbandits.core import checks
from dpbandits.core.files import atomic_write
from dpbandits.course.checker import (
    CheckFailed,
    Source,
    TaskResult,
    run_checks,
    run_checks_on_namespace,
)
from dpbandits.course.notebooks import notebook_script, to_ipynb
from dpbandits.course.registry import Exercise, Task, exercise, exercises, solutions_dir
from dpbandits.course.solution import is_solution_parts, solution_text

__all__ = [
    "FORMATS",
    "CheckFailed",
    "Exercise",
    "Task",
    "TaskResult",
    "check",
    "check_namespace",
    "exercise",
    "exercises",
    "solutions_dir",
    "start",
]

#: The formats ``start`` writes: a Jupyter notebook, or the jupytext percent script.
FORMATS = ("ipynb", "py")


def _chosen_tasks(ex: Exercise, tasks: Sequence[str] | None) -> list[Task]:
    if tasks is None:
        return list(ex.tasks)
    names = {ex.task(t).name for t in tasks}  # ValueError names an unknown task
    return [t for t in ex.tasks if t.name in names]


def _check_seed(seed: Any) -> None:
    checks.integer(seed, "seed", minimum=0)  # a bool is a TypeError


def check(
    number: int, path: str | Path, seed: int = 0, tasks: Sequence[str] | None = None
) -> list[TaskResult]:
    """Grade the student's file ``path`` (``.py`` or ``.ipynb``) for exercise ``number``: one
    result per task, in the exercise's order.

    ``seed`` fixes the checker's random draws (same seed and same file -> same verdicts);
    ``tasks`` restricts the check to the named tasks (default: all). A notebook is graded as
    the script of its code cells (IPython-only lines left out), with messages naming the cell.
    ``ValueError`` if the exercise or a task does not exist, or ``path`` is not such a file.
    """
    ex = exercise(number)
    p = Path(path)
    _check_seed(seed)
    chosen = _chosen_tasks(ex, tasks)
    if not p.is_file():
        raise ValueError(f"no such file: {str(p)!r}")
    if p.suffix not in (".py", ".ipynb"):
        raise ValueError(f"the file to check must be a .py or .ipynb file, got {str(p)!r}")
    # Seeds follow the task's position in the exercise, so a subset gives the same verdicts.
    index = {t.name: i for i, t in enumerate(ex.tasks)}
    keys = [index[t.name] for t in chosen]
    if p.suffix == ".ipynb":
        script = notebook_script(p)
        with tempfile.TemporaryDirectory() as tmp:
            code = atomic_write(Path(tmp) / f"{p.stem}.py", script.text)
            source = Source(frozenset({str(code.resolve())}), lambda _f, n: script.where(p.name, n))
            return run_checks(ex.number, code, chosen, seed, keys, source=source, folder=p.parent)
    with p.open("rb") as f:
        parts_of = is_solution_parts(f.readline().decode("utf-8", errors="replace"))
    if parts_of is None:
        return run_checks(ex.number, p, chosen, seed=seed, seed_keys=keys)
    # A file of solved parts (examples/course-solutions/): grade the notebook it completes.
    if parts_of != ex.number:
        raise ValueError(
            f"{str(p)!r} holds the solved parts of exercise {parts_of}, not of exercise {ex.number}"
        )
    text = solution_text(
        ex.starter_path().read_text(encoding="utf-8"), p.read_text(encoding="utf-8"), p.name
    )
    with tempfile.TemporaryDirectory() as tmp:
        full = atomic_write(Path(tmp) / ex.filename, text)
        return run_checks(ex.number, full, chosen, seed=seed, seed_keys=keys)


def check_namespace(
    number: int, namespace: Mapping[str, Any], seed: int = 0, tasks: Sequence[str] | None = None
) -> list[TaskResult]:
    """Grade the functions defined in ``namespace`` (a notebook's ``globals()``, or the global
    environment an autograder such as otter-grader passes) for exercise ``number``; as
    :func:`check` otherwise (the same seeds give the same verdicts on the same code)."""
    ex = exercise(number)
    _check_seed(seed)
    if not isinstance(namespace, Mapping):
        raise TypeError(f"namespace must be a mapping such as globals(), got {type(namespace)}")
    chosen = _chosen_tasks(ex, tasks)
    index = {t.name: i for i, t in enumerate(ex.tasks)}
    return run_checks_on_namespace(
        ex.number, namespace, chosen, seed, [index[t.name] for t in chosen]
    )


def start(
    number: int,
    directory: str | Path,
    *,
    solution: bool = False,
    force: bool = False,
    fmt: str = "ipynb",
    solutions: str | os.PathLike[str] | None = None,
) -> Path:
    """Write exercise ``number`` into ``directory`` as ``fmt`` (``"ipynb"``: a notebook, needs
    jupytext, ``pip install ".[course]"`` in a clone; ``"py"``: the jupytext percent script); return
    the path.

    ``solution=True`` writes the complete reference notebook instead (for teachers: it needs
    the reference solutions, from ``solutions`` or :func:`solutions_dir`). The directory is
    created if needed. An existing file is never overwritten unless ``force=True`` (a student's
    work must not be lost).
    """
    ex = exercise(number)
    checks.one_of(fmt, FORMATS, "fmt")
    d = Path(directory)
    if d.exists() and not d.is_dir():
        raise ValueError(f"{str(d)!r} exists and is not a directory")
    target = d / Path(ex.filename).with_suffix(f".{fmt}").name
    if target.exists() and not force:
        raise ValueError(
            f"{str(target)!r} already exists; not overwriting your work (use --force to replace)"
        )
    text = (
        ex.solution_text(solutions) if solution else ex.starter_path().read_text(encoding="utf-8")
    )
    if fmt == "ipynb":
        text = to_ipynb(text, ex.number)  # before any writing: ImportError without jupytext
    d.mkdir(parents=True, exist_ok=True)
    return atomic_write(target, text)
