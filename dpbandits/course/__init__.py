"""RL-course exercises: six graded exercises, their checker and reference solutions.

From the shell: ``dpbandits course list``, ``dpbandits course start N DIR`` and
``dpbandits course check N FILE.py`` (see ``docs/course.md``). From Python::

    from dpbandits import course
    results = course.check(1, "ex1_bandit_basics.py")      # one TaskResult per task
    all(r.ok for r in results)

The exercise files are shipped inside this package (``dpbandits/course/exercises``), so they
are available from an installed wheel; ``examples/course/`` in the repository holds the same
files. Each reference solution is written once, as the solved parts of its exercise file
(:mod:`dpbandits.course.solution`); :func:`start` with ``solution=True`` writes the complete
notebook, and :func:`check` grades a parts file as that notebook.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

from dpbandits.course.checker import CheckFailed, TaskResult, run_checks
from dpbandits.course.registry import Exercise, Task, exercise, exercises
from dpbandits.course.solution import is_solution_parts, solution_text
from dpbandits.core.files import atomic_write

__all__ = [
    "CheckFailed",
    "Exercise",
    "Task",
    "TaskResult",
    "check",
    "exercise",
    "exercises",
    "start",
]


def check(
    number: int, path: str | Path, seed: int = 0, tasks: Sequence[str] | None = None
) -> list[TaskResult]:
    """Grade the student's file ``path`` for exercise ``number``: one result per task.

    ``seed`` fixes the checker's random draws (same seed and same file -> same verdicts);
    ``tasks`` restricts the check to the named tasks (default: all, in order). ``ValueError``
    if the exercise or a task does not exist, or ``path`` is not a ``.py`` file.
    """
    ex = exercise(number)
    p = Path(path)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    chosen = list(ex.tasks)
    if tasks is not None:
        names = [t.name for t in ex.tasks]
        unknown = [t for t in tasks if t not in names]
        if unknown:
            raise ValueError(
                f"exercise {ex.number} has no task {unknown[0]!r}; its tasks: {', '.join(names)}"
            )
        chosen = [t for t in ex.tasks if t.name in set(tasks)]
    if not p.is_file():
        raise ValueError(f"no such file: {str(p)!r}")
    if p.suffix != ".py":
        raise ValueError(f"the file to check must be a .py file, got {str(p)!r}")
    # Seeds follow the task's position in the exercise, so a subset gives the same verdicts.
    index = {t.name: i for i, t in enumerate(ex.tasks)}
    checks = [(t.name, t.check) for t in chosen]
    keys = [index[t.name] for t in chosen]
    with p.open("rb") as f:
        parts_of = is_solution_parts(f.readline().decode("utf-8", errors="replace"))
    if parts_of is None:
        return run_checks(ex.number, p, checks, seed=seed, seed_keys=keys)
    # A file of solved parts (exercises/solutions/): grade the notebook it completes.
    if parts_of != ex.number:
        raise ValueError(
            f"{str(p)!r} holds the solved parts of exercise {parts_of}, not of exercise {ex.number}"
        )
    text = solution_text(
        ex.starter_path().read_text(encoding="utf-8"), p.read_text(encoding="utf-8"), p.name
    )
    with tempfile.TemporaryDirectory() as tmp:
        full = atomic_write(Path(tmp) / ex.filename, text)
        return run_checks(ex.number, full, checks, seed=seed, seed_keys=keys)


def start(
    number: int, directory: str | Path, *, solution: bool = False, force: bool = False
) -> Path:
    """Write exercise ``number``'s starter (or its complete reference solution) into
    ``directory``; return the path.

    The directory is created if needed. An existing file is never overwritten unless
    ``force=True`` (a student's work must not be lost).
    """
    ex = exercise(number)
    d = Path(directory)
    if d.exists() and not d.is_dir():
        raise ValueError(f"{str(d)!r} exists and is not a directory")
    target = d / ex.filename
    if target.exists() and not force:
        raise ValueError(
            f"{str(target)!r} already exists; not overwriting your work (use --force to replace)"
        )
    d.mkdir(parents=True, exist_ok=True)
    text = ex.solution_text() if solution else ex.starter_path().read_text(encoding="utf-8")
    return atomic_write(target, text)
