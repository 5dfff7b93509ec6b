"""The exercises of the course: numbers, titles, tasks, and where their files are."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from dpbandits.course.solution import solution_text

__all__ = ["EXERCISE_MODULES", "Exercise", "Task", "exercise", "exercises"]

#: One module per exercise, each defining ``EXERCISE``; add a module here to add an exercise.
EXERCISE_MODULES: tuple[str, ...] = (
    "dpbandits.course.checks_ex1",
    "dpbandits.course.checks_ex2",
    "dpbandits.course.checks_ex3",
    "dpbandits.course.checks_ex4",
    "dpbandits.course.checks_ex5",
    "dpbandits.course.checks_ex6",
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
    out = [importlib.import_module(m).EXERCISE for m in EXERCISE_MODULES]
    for i, ex in enumerate(out, start=1):
        if ex.number != i:  # a registry bug, not a user error
            raise RuntimeError(f"exercise module {EXERCISE_MODULES[i - 1]} has number {ex.number}")
    return out


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
    module = importlib.import_module(EXERCISE_MODULES[number - 1])
    ex: Exercise = module.EXERCISE
    return ex
