"""The exercises of the course: numbers, titles, tasks, and where their files are.

The catalogue is ``dpbandits/course/exercises/course.toml``, one ``[[exercise]]`` table per
exercise in order (slug, title, minutes, what it teaches, and its tasks as ``[name, title]``).
Task ``name`` of exercise ``N`` is graded by ``check_<name>(student, rng)`` in the module
``dpbandits.course.checks_ex<N>``.
"""

from __future__ import annotations

import functools
import importlib
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

__all__ = ["EXERCISE_MODULES", "Exercise", "Task", "catalogue", "exercise", "exercises"]


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
    """A function (or class) the student writes, and the check that grades it."""

    name: str
    title: str
    check: Callable[..., Any]


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

    def starter_path(self) -> Path:
        """The starter file shipped inside the package."""
        return Path(str(resources.files("dpbandits.course") / "exercises" / self.filename))

    def solution_path(self) -> Path:
        """The solved parts of the exercise file, shipped inside the package (for teachers)."""
        root = resources.files("dpbandits.course") / "exercises" / "solutions"
        return Path(str(root / self.filename))

    def solution_text(self) -> str:
        """The complete reference notebook: the exercise file with the solved parts filled in."""
        return solution_text(
            self.starter_path().read_text(encoding="utf-8"),
            self.solution_path().read_text(encoding="utf-8"),
            self.solution_path().name,
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
    for name, title in entry["tasks"]:
        check = getattr(module, f"check_{name}", None)
        if check is None:  # a catalogue bug, not a user error
            raise RuntimeError(f"{module.__name__} has no check_{name} for task {name!r}")
        tasks.append(Task(name, title, check))
    return Exercise(
        number, entry["slug"], entry["title"], entry["minutes"], entry["teaches"], tuple(tasks)
    )
