"""Run an exercise's checks on a student's file and word the results for the student.

:func:`check` imports the student's file (never as ``__main__``, so cells guarded by
``if __name__ == "__main__":`` do not run), then runs every task's check and returns one
:class:`TaskResult` per task. A task is

- ``ok`` when its check passes;
- ``not done yet`` when the student's code raises ``NotImplementedError`` (the starters do);
- ``failed`` with a sentence saying what is wrong (measured value, expected value, p-value),
  or, when the student's code raised an exception, its type, message and the student's own
  file and line -- never a traceback.

Checks raise :class:`CheckFailed` with that sentence; they call the student's code through
:class:`Student`, which finds the functions by name and checks what they return.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import linecache
import sys
import time
import traceback
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

__all__ = [
    "CheckFailed",
    "Student",
    "TaskResult",
    "load_student",
    "run_checks",
    "student_location",
]

OK = "ok"
NOT_DONE = "not done"
FAILED = "failed"
ERROR = "error"


class CheckFailed(Exception):
    """A check's verdict: the message is shown to the student as it is."""


@dataclass(frozen=True)
class TaskResult:
    """The outcome of one task: ``status`` is ``ok``, ``not done``, ``failed`` or ``error``.

    ``error`` means the checker itself broke (a bug to report), not the student's code.
    """

    exercise: int
    task: str
    status: str
    message: str
    seconds: float

    @property
    def ok(self) -> bool:
        return self.status == OK

    def line(self) -> str:
        """One line for the terminal: ``  task_name ..... message``."""
        return f"  {self.task:<26} {self.message}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "exercise": self.exercise,
            "task": self.task,
            "status": self.status,
            "message": self.message,
            "seconds": round(self.seconds, 3),
        }


class StudentImportError(Exception):
    """The student's file could not be run; the message says where and why."""


def student_location(exc: BaseException, path: Path) -> str | None:
    """``"file.py, line 12, in f: `code`"`` of the innermost frame of ``exc`` in ``path``."""
    target = str(path.resolve())
    found: traceback.FrameSummary | None = None
    for frame in traceback.extract_tb(exc.__traceback__):
        try:
            same = str(Path(frame.filename).resolve()) == target
        except (OSError, ValueError):
            same = False
        if same:
            found = frame
    if found is None:
        if isinstance(exc, SyntaxError) and exc.filename and exc.lineno:
            code = (exc.text or linecache.getline(exc.filename, exc.lineno)).strip()
            return f"{path.name}, line {exc.lineno}: `{code}`"
        return None
    code = (found.line or "").strip()
    where = f"{path.name}, line {found.lineno}, in {found.name}"
    return f"{where}: `{code}`" if code else where


def _describe_exception(exc: BaseException, path: Path) -> str | None:
    """The student's exception in one line, or ``None`` if it did not come from their file."""
    where = student_location(exc, path)
    if where is None:
        return None
    raw = exc.msg if isinstance(exc, SyntaxError) and exc.msg else str(exc)
    text = raw.strip().splitlines()[0] if raw.strip() else ""
    name = type(exc).__name__
    return f"your code raised {name}{': ' + text if text else ''} ({where})"


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Silence the student's prints and numpy warnings: the checker prints one line per task."""
    with (
        contextlib.redirect_stdout(io.StringIO()),
        contextlib.redirect_stderr(io.StringIO()),
        warnings.catch_warnings(),
        np.errstate(all="ignore"),
    ):
        warnings.simplefilter("ignore")
        yield


def load_student(path: str | Path, module_name: str) -> ModuleType:
    """Import the student's file as a module named ``module_name`` (not ``__main__``).

    Raises :class:`StudentImportError` with a one-line reason when the file does not run.
    """
    p = Path(path)
    spec = importlib.util.spec_from_file_location(module_name, p)
    if spec is None or spec.loader is None:
        raise StudentImportError(f"{p} is not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses and pickling look the module up here
    folder = str(p.resolve().parent)
    sys.path.insert(0, folder)  # the student's own helper modules next to the file
    try:
        with _quiet():
            spec.loader.exec_module(module)
    except NotImplementedError:
        raise StudentImportError(
            "your file raises NotImplementedError when it is imported: call your functions "
            'only inside `if __name__ == "__main__":` blocks'
        ) from None
    except BaseException as exc:  # noqa: BLE001 - any failure of the student's file is reported
        if isinstance(exc, KeyboardInterrupt):
            raise
        sys.modules.pop(module_name, None)
        described = _describe_exception(exc, p) or f"{type(exc).__name__}: {exc}"
        if isinstance(exc, SystemExit):
            described = f"your file called exit() ({type(exc).__name__})"
        raise StudentImportError(f"your file could not be imported: {described}") from None
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(folder)
    return module


class Student:
    """The student's module, with typed access for the checks."""

    def __init__(self, module: ModuleType, path: Path) -> None:
        self.module = module
        self.path = path

    def get(self, name: str) -> Any:
        """The object ``name`` of the student's file (a function or a class)."""
        obj = getattr(self.module, name, None)
        if obj is None:
            raise CheckFailed(
                f"your file has no `{name}`: keep the names of the starter file "
                "(`dpbandits course start` gives a fresh copy)"
            )
        return obj

    def call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """Call the student's function ``name``; its exceptions propagate to the runner."""
        fn = self.get(name)
        if not callable(fn):
            raise CheckFailed(f"`{name}` in your file is not a function")
        with _quiet():
            return fn(*args, **kwargs)

    # -- checking what the student's code returns --------------------------------------
    @staticmethod
    def indices(value: Any, shape: tuple[int, ...], k: int, name: str) -> np.ndarray:
        """``value`` as an int64 array of ``shape`` with entries in ``[0, k)``."""
        try:
            a = np.asarray(value)
        except Exception:  # noqa: BLE001 - whatever the student returned
            raise CheckFailed(f"`{name}` must return an array of arm indices") from None
        if a.dtype == np.bool_ or not (
            np.issubdtype(a.dtype, np.integer)
            or (
                np.issubdtype(a.dtype, np.floating)
                and np.all(np.isfinite(a))
                and np.all(a == np.round(a))
            )
        ):
            raise CheckFailed(
                f"`{name}` must return integer arm indices, got an array of dtype {a.dtype}"
            )
        if a.shape != shape:
            raise CheckFailed(
                f"`{name}` must return one arm per row, shape {shape}, got shape {a.shape}"
            )
        a = a.astype(np.int64)
        if a.size and (a.min() < 0 or a.max() >= k):
            raise CheckFailed(
                f"`{name}` returned arm {int(a.min() if a.min() < 0 else a.max())}; "
                f"arms are numbered 0 .. {k - 1}"
            )
        return a

    @staticmethod
    def floats(value: Any, shape: tuple[int, ...] | None, name: str) -> np.ndarray:
        """``value`` as a float64 array (of ``shape`` if given) with no NaN."""
        try:
            a = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            raise CheckFailed(f"`{name}` must return numbers, got {type(value).__name__}") from None
        if shape is not None and a.shape != shape:
            raise CheckFailed(f"`{name}` must return shape {shape}, got shape {a.shape}")
        if np.any(np.isnan(a)):
            raise CheckFailed(f"`{name}` returned NaN (a division 0/0 or a log of 0?)")
        return a

    @staticmethod
    def number(value: Any, name: str) -> float:
        """``value`` as one float (a Python or NumPy number, or a 0-d/1-element array)."""
        try:
            a = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            raise CheckFailed(
                f"`{name}` must return a number, got {type(value).__name__}"
            ) from None
        if a.size != 1:
            raise CheckFailed(f"`{name}` must return one number, got shape {a.shape}")
        x = float(a.reshape(()))
        if np.isnan(x):
            raise CheckFailed(f"`{name}` returned NaN")
        return x


CheckFn = Callable[[Student, np.random.Generator], Any]


def run_checks(
    exercise: int,
    path: str | Path,
    tasks: list[tuple[str, CheckFn]],
    seed: int = 0,
    seed_keys: Sequence[int] | None = None,
) -> list[TaskResult]:
    """Import ``path`` and run ``tasks`` (``(name, check)`` pairs); one result per task.

    Task ``i`` gets the generator ``default_rng(SeedSequence(seed, spawn_key=(key_i,)))``
    with ``key_i = seed_keys[i]`` (default ``i``), so a task's draws do not depend on the
    other tasks.
    """
    keys = list(range(len(tasks))) if seed_keys is None else list(seed_keys)
    p = Path(path)
    module_name = f"_dpbandits_course_student_ex{exercise}"
    results: list[TaskResult] = []
    try:
        module = load_student(p, module_name)
    except StudentImportError as exc:
        for i, (name, _) in enumerate(tasks):
            msg = str(exc) if i == 0 else "not checked: your file could not be imported (above)"
            results.append(TaskResult(exercise, name, FAILED, msg, 0.0))
        return results
    student = Student(module, p)
    try:
        for i, (name, fn) in enumerate(tasks):
            rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(keys[i],)))
            start = time.perf_counter()
            status, message = _run_one(fn, student, rng, p)
            results.append(TaskResult(exercise, name, status, message, time.perf_counter() - start))
    finally:
        sys.modules.pop(module_name, None)
    return results


def _run_one(
    fn: CheckFn, student: Student, rng: np.random.Generator, path: Path
) -> tuple[str, str]:
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            fn(student, rng)
    except NotImplementedError:
        return NOT_DONE, "not done yet"
    except CheckFailed as exc:
        return FAILED, str(exc)
    except KeyboardInterrupt:
        raise
    except RecursionError as exc:
        described = _describe_exception(exc, path)
        return FAILED, described or "your code recursed without end (RecursionError)"
    except Exception as exc:  # noqa: BLE001 - turned into one readable line
        described = _describe_exception(exc, path)
        if described is not None:
            return FAILED, described
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return ERROR, (
            f"the check could not run ({type(exc).__name__}: {text}); "
            "if your code looks right, tell your teacher"
        )
    return OK, "ok"
