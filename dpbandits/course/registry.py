"""The exercises of the course: numbers, titles, tasks, points, hints, and where their files are.

The catalogue is ``dpbandits/course/exercises/course.toml``, one ``[[exercise]]`` table per
exercise in order (slug, title, minutes, what it teaches) with one ``[[exercise.task]]`` table
per task (name, title, points, hints). Task ``name`` of exercise ``N`` is graded by
``check_<name>(student, rng)`` in the module ``dpbandits.course.checks_ex<N>``.

The package holds the exercise files and the checker, never the reference solutions: those live
in the repository's ``examples/course-solutions/`` (see :func:`solutions_dir` and the
"Solutions" section of ``docs/course.md``).
"""

from __future__ import annotations

import functools
import importlib
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from dpbandits.course.solution import solution_text

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = [
    "EXERCISE_MODULES",
    "SOLUTIONS_ENV",
    "Exercise",
    "Task",
    "catalogue",
    "exercise",
    "exercises",
    "solutions_dir",
]

#: Environment variable naming the folder of the reference solutions (for a teacher whose
#: ``dpbandits`` is installed from a wheel, with the repository cloned elsewhere).
SOLUTIONS_ENV = "DPBANDITS_COURSE_SOLUTIONS"

#: The folder of the reference solutions, relative to the root of the repository.
SOLUTIONS_IN_REPOSITORY = Path("examples") / "course-solutions"


@functools.cache
def catalogue() -> tuple[dict[str, Any], ...]:
    """The ``[[exercise]]`` tables of ``course.toml``, in order (exercise 1 first)."""
    text = (resources.files("dpbandits.course") / "exercises" / "course.toml").read_text("utf-8")
    return tuple(tomllib.loads(text)["exercise"])


#: The module of each exercise's checks, in order: ``checks_ex<N>``.
EXERCISE_MODULES: tuple[str, ...] = tuple(
    f"dpbandits.course.checks_ex{n}" for n in range(1, len(catalogue()) + 1)
)


@dataclass(frozen=True)
class Task:
    """A function (or class) the student writes, the check that grades it, its points and its
    hints (from a nudge to the steps spelled out, shown one at a time by ``--hint``)."""

    name: str
    title: str
    points: int
    hints: tuple[str, ...]
    check: Callable[..., Any]


def solutions_dir(directory: str | os.PathLike[str] | None = None) -> Path:
    """The folder of the reference solutions (solved parts, one file per exercise).

    ``directory`` if given, else the environment variable :data:`SOLUTIONS_ENV`, else
    ``examples/course-solutions/`` of the repository this package is imported from (an
    editable install or a checkout). A wheel installed by a student has none of these:
    ``ValueError`` then says where a teacher gets them.
    """
    chosen = directory if directory is not None else os.environ.get(SOLUTIONS_ENV) or None
    if chosen is not None:
        path = Path(chosen)
        if not path.is_dir():
            raise ValueError(f"the solutions folder {str(path)!r} does not exist")
        return path
    # registry.py is dpbandits/course/registry.py: the repository root is two folders up.
    in_repository = Path(__file__).resolve().parents[2] / SOLUTIONS_IN_REPOSITORY
    if in_repository.is_dir():
        return in_repository
    raise ValueError(
        "the reference solutions are not installed with the package (so that students do not "
        f"get them); they are in the repository's {SOLUTIONS_IN_REPOSITORY.as_posix()}/: pass "
        f"that folder with --solutions DIR (or set {SOLUTIONS_ENV})"
    )


@dataclass(frozen=True)
class Exercise:
    """One exercise: the file ``ex<number>_<slug>.py`` and its tasks."""

    number: int
    slug: str
    title: str
    minutes: int
    teaches: str
    tasks: tuple[Task, ...]

    @property
    def filename(self) -> str:
        return f"ex{self.number}_{self.slug}.py"

    @property
    def max_points(self) -> int:
        return sum(t.points for t in self.tasks)

    def task(self, name: str) -> Task:
        """The task ``name``; ``ValueError`` listing the exercise's tasks otherwise."""
        for t in self.tasks:
            if t.name == name:
                return t
        names = ", ".join(t.name for t in self.tasks)
        raise ValueError(f"exercise {self.number} has no task {name!r}; its tasks: {names}")

    def starter_path(self) -> Path:
        """The exercise file shipped inside the package (the one jupytext source)."""
        return Path(str(resources.files("dpbandits.course") / "exercises" / self.filename))

    def solution_path(self, directory: str | os.PathLike[str] | None = None) -> Path:
        """The solved parts of the exercise file, in :func:`solutions_dir` ``(directory)``."""
        path = solutions_dir(directory) / self.filename
        if not path.is_file():
            raise ValueError(f"the solutions folder has no {self.filename}: {str(path)!r}")
        return path

    def solution_text(self, directory: str | os.PathLike[str] | None = None) -> str:
        """The complete reference notebook: the exercise file with the solved parts filled in."""
        parts = self.solution_path(directory)
        return solution_text(
            self.starter_path().read_text(encoding="utf-8"),
            parts.read_text(encoding="utf-8"),
            parts.name,
        )


def exercises() -> list[Exercise]:
    """All exercises, in order."""
    return [exercise(n) for n in range(1, len(EXERCISE_MODULES) + 1)]


def exercise(number: Any) -> Exercise:
    """Exercise ``number`` (1-based); ``ValueError`` naming the valid numbers otherwise."""
    n_ex = len(EXERCISE_MODULES)
    if isinstance(number, bool) or not isinstance(number, int):
        try:
            number = int(str(number))
        except ValueError:
            raise ValueError(
                f"exercise must be a number from 1 to {n_ex}, got {number!r}"
            ) from None
    if not 1 <= number <= n_ex:
        raise ValueError(f"exercise must be a number from 1 to {n_ex}, got {number}")
    return _exercise(number)


@functools.cache
def _exercise(number: int) -> Exercise:
    entry = catalogue()[number - 1]
    module = importlib.import_module(EXERCISE_MODULES[number - 1])
    tasks = []
    for spec in entry["task"]:
        name = spec["name"]
        check = getattr(module, f"check_{name}", None)
        if check is None:  # a catalogue bug, not a user error
            raise RuntimeError(f"{module.__name__} has no check_{name} for task {name!r}")
        tasks.append(Task(name, spec["title"], int(spec["points"]), tuple(spec["hints"]), check))
    return Exercise(
        number, entry["slug"], entry["title"], entry["minutes"], entry["teaches"], tuple(tasks)
    )
