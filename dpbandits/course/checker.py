"""Run an exercise's checks on a student's code and word the results for the student.

:func:`run_checks` imports the student's file (never as ``__main__``, so cells guarded by
``if __name__ == "__main__":`` do not run); :func:`run_checks_on_namespace` grades the functions
of a running notebook (its ``globals()``). Both run every task's check and return one
:class:`TaskResult` per task. A task is

- ``ok`` when its check passes (the task's points are earned);
- ``not done`` when the student's code raises ``NotImplementedError`` (the starters do);
- ``failed`` with a sentence saying what is wrong (measured value, expected value, p-value),
  and when the check can tell, the likely cause (:attr:`TaskResult.cause`); when the student's
  code raised an exception, its type, message and the student's own file (or notebook cell)
  and line -- never a traceback.

Checks raise :class:`CheckFailed` with that sentence; they call the student's code through
:class:`Student`, which finds the functions by name and checks what they return.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import linecache
import re
import sys
import time
import traceback
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from dpbandits.course.registry import Task

__all__ = [
    "CheckFailed",
    "Source",
    "Student",
    "TaskResult",
    "load_student",
    "run_checks",
    "run_checks_on_namespace",
    "student_location",
]

OK = "ok"
NOT_DONE = "not done"
FAILED = "failed"
ERROR = "error"


class CheckFailed(Exception):
    """A check's verdict: the message is shown to the student as it is.

    ``cause`` names the most likely mistake when the check can tell (e.g. "off-by-one in the
    pull counts"), else ``None``.
    """

    def __init__(self, message: str, cause: str | None = None) -> None:
        super().__init__(message)
        self.cause = cause


@dataclass(frozen=True)
class TaskResult:
    """The outcome of one task: ``status`` is ``ok``, ``not done``, ``failed`` or ``error``.

    ``error`` means the checker itself broke (a bug to report), not the student's code.
    ``points`` is ``max_points`` when the task is ok, else 0 (a task is all or nothing).
    """

    exercise: int
    task: str
    status: str
    message: str
    seconds: float
    cause: str | None = None
    max_points: int = 0

    @property
    def ok(self) -> bool:
        return self.status == OK

    @property
    def points(self) -> int:
        return self.max_points if self.ok else 0

    def line(self) -> str:
        """One line for the terminal: ``  task_name ..... message``."""
        return f"  {self.task:<26} {self.message}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "exercise": self.exercise,
            "task": self.task,
            "status": self.status,
            "message": self.message,
            "cause": self.cause,
            "points": self.points,
            "max_points": self.max_points,
            "seconds": round(self.seconds, 3),
        }


class StudentImportError(Exception):
    """The student's file could not be run; the message says where and why, ``lineno`` the line
    of the file where it failed (``None`` when not in the student's code)."""

    def __init__(self, message: str, lineno: int | None = None) -> None:
        super().__init__(message)
        self.lineno = lineno


def _failing_line(exc: BaseException, path: Path) -> int | None:
    """The line of the student's file ``path`` where importing it failed: a syntax error's, or
    the outermost frame in the file (the top-level statement that was running)."""
    if isinstance(exc, SyntaxError) and exc.filename and exc.lineno:
        return exc.lineno if _resolved(exc.filename) == _resolved(path) else None
    for frame in traceback.extract_tb(exc.__traceback__):
        if _resolved(frame.filename) == _resolved(path):
            return frame.lineno
    return None


_TOP_DEF = re.compile(r"(?:async\s+def|def|class)\s+(\w+)")


def _task_of_line(path: Path, lineno: int | None, names: Sequence[str]) -> int:
    """The index in ``names`` of the task whose code holds line ``lineno`` of ``path``: the last
    top-level ``def``/``class`` of a task name at or before it (its cell, in a notebook); 0 when
    there is none (read as text: the file may not parse)."""
    if lineno is None:
        return 0
    index = {name: i for i, name in enumerate(names)}
    found = 0
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()[:lineno]
    except OSError:
        return 0
    for line in lines:
        match = _TOP_DEF.match(line)
        if match and match.group(1) in index:
            found = index[match.group(1)]
    return found


@dataclass(frozen=True)
class Source:
    """Where the student's code is, to point at it in messages.

    ``files`` are the (resolved) file names of the student's code objects: a frame of a
    traceback in one of them is the student's. ``where(filename, lineno)`` names a line for the
    student, e.g. ``"ex1.py, line 12"`` or ``"ex1.ipynb, cell 7, line 3"``.
    """

    files: frozenset[str]
    where: Callable[[str, int], str]

    @classmethod
    def file(cls, path: str | Path) -> Source:
        """A ``.py`` file: lines are named ``"<file name>, line N"``."""
        p = Path(path)
        return cls(frozenset({_resolved(p)}), lambda _f, n: f"{p.name}, line {n}")

    def owns(self, filename: str) -> bool:
        return _resolved(filename) in self.files


def _resolved(path: str | Path) -> str:
    try:
        return str(Path(path).resolve())
    except (OSError, ValueError):
        return str(path)


def student_location(exc: BaseException, source: Source | Path) -> str | None:
    """``"file.py, line 12, in f: `code`"`` of the innermost frame of ``exc`` in the student's
    code (``source``, or a ``.py`` path)."""
    src = source if isinstance(source, Source) else Source.file(source)
    found: traceback.FrameSummary | None = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if src.owns(frame.filename):
            found = frame
    if found is None:
        if isinstance(exc, SyntaxError) and exc.filename and exc.lineno and src.owns(exc.filename):
            code = (exc.text or linecache.getline(exc.filename, exc.lineno)).strip()
            return f"{src.where(exc.filename, exc.lineno)}: `{code}`"
        return None
    code = (found.line or "").strip()
    where = f"{src.where(found.filename, found.lineno or 0)}, in {found.name}"
    return f"{where}: `{code}`" if code else where


def _describe_exception(exc: BaseException, source: Source) -> str | None:
    """The student's exception in one line, or ``None`` if it did not come from their code."""
    where = student_location(exc, source)
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


def load_student(
    path: str | Path,
    module_name: str,
    source: Source | None = None,
    folder: str | Path | None = None,
) -> ModuleType:
    """Import the student's file as a module named ``module_name`` (not ``__main__``).

    ``folder`` (default: the file's own) is put on ``sys.path`` for the student's helper
    modules; ``source`` names the lines of messages (default: the file's). Raises
    :class:`StudentImportError` with a one-line reason when the file does not run.
    """
    p = Path(path)
    src = source or Source.file(p)
    spec = importlib.util.spec_from_file_location(module_name, p)
    if spec is None or spec.loader is None:
        raise StudentImportError(f"{p} is not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses and pickling look the module up here
    where = str(Path(folder).resolve() if folder is not None else p.resolve().parent)
    sys.path.insert(0, where)  # the student's own helper modules next to the file
    # No __pycache__ left in the student's folder.
    dont_write, sys.dont_write_bytecode = sys.dont_write_bytecode, True
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
        described = _describe_exception(exc, src) or f"{type(exc).__name__}: {exc}"
        if isinstance(exc, SystemExit):
            described = f"your file called exit() ({type(exc).__name__})"
        raise StudentImportError(f"your file could not be imported: {described}",
                                 _failing_line(exc, p)) from None  # fmt: skip
    finally:
        sys.dont_write_bytecode = dont_write
        with contextlib.suppress(ValueError):
            sys.path.remove(where)
    return module


class Student:
    """The student's functions (a module's or a notebook's namespace), with typed access for
    the checks."""

    def __init__(self, namespace: Mapping[str, Any], source: Source) -> None:
        self.namespace = namespace
        self.source = source

    def get(self, name: str) -> Any:
        """The object ``name`` of the student's code (a function or a class)."""
        obj = self.namespace.get(name)
        if obj is None:
            raise CheckFailed(
                f"your code has no `{name}`: keep the names of the starter file "
                "(`dpbandits course start` gives a fresh copy)"
            )
        return obj

    def call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """Call the student's function ``name``; its exceptions propagate to the runner."""
        fn = self.get(name)
        if not callable(fn):
            raise CheckFailed(f"`{name}` in your code is not a function")
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
                f"`{name}` must return one arm per row, shape {shape}, got shape {a.shape}",
                cause="an argmax/argmin over the wrong axis (use axis=1: one answer per row)"
                if a.ndim == 1 and len(shape) == 1 and a.shape[0] != shape[0]
                else None,
            )
        a = a.astype(np.int64)
        if a.size and (a.min() < 0 or a.max() >= k):
            raise CheckFailed(
                f"`{name}` returned arm {int(a.min() if a.min() < 0 else a.max())}; "
                f"arms are numbered 0 .. {k - 1}",
                cause="an off-by-one in the arm numbers (rng.integers(0, K) already excludes K)"
                if a.max() == k
                else None,
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
            raise CheckFailed(
                f"`{name}` returned NaN",
                cause="a division 0/0 (e.g. by a count that is still 0) or a log of 0",
            )
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
            raise CheckFailed(
                f"`{name}` returned NaN",
                cause="a division 0/0 or a log of 0 (an arm tied with the best one?)",
            )
        return x


CheckFn = Callable[[Student, np.random.Generator], Any]


def run_checks(
    exercise: int,
    path: str | Path,
    tasks: Sequence[Task],
    seed: int = 0,
    seed_keys: Sequence[int] | None = None,
    *,
    source: Source | None = None,
    folder: str | Path | None = None,
) -> list[TaskResult]:
    """Import the ``.py`` file ``path`` and run the checks of ``tasks``; one result per task.

    Task ``i`` gets the generator ``default_rng(SeedSequence(seed, spawn_key=(key_i,)))``
    with ``key_i = seed_keys[i]`` (default ``i``), so a task's draws do not depend on the
    other tasks. ``source`` and ``folder`` are those of :func:`load_student` (a notebook is
    graded as the script made of its code cells, named by cell in the messages).
    """
    p = Path(path)
    src = source or Source.file(p)
    module_name = f"_dpbandits_course_student_ex{exercise}"
    try:
        module = load_student(p, module_name, src, folder)
    except StudentImportError as exc:
        # the reason goes on the row of the task whose code failed (a syntax error in one
        # cell is that cell's task's), the other rows point to it
        at = _task_of_line(p, exc.lineno, [t.name for t in tasks])
        there = f"not checked: your file could not be imported (see {tasks[at].name})"
        return [
            TaskResult(exercise, t.name, FAILED, str(exc) if i == at else there, 0.0,
                       max_points=t.points)  # fmt: skip
            for i, t in enumerate(tasks)
        ]
    try:
        return _run_all(exercise, Student(vars(module), src), tasks, seed, seed_keys)
    finally:
        sys.modules.pop(module_name, None)


def run_checks_on_namespace(
    exercise: int,
    namespace: Mapping[str, Any],
    tasks: Sequence[Task],
    seed: int = 0,
    seed_keys: Sequence[int] | None = None,
) -> list[TaskResult]:
    """Run the checks of ``tasks`` on the functions of ``namespace`` (a running notebook's or
    script's ``globals()``, or the environment an autograder passes); one result per task.

    The student's code is whatever was defined in that namespace (functions, and the methods
    of its classes); messages name a notebook cell as IPython does (``Cell In[5], line 3``).
    """
    return _run_all(exercise, Student(namespace, namespace_source(namespace)), tasks, seed,
                    seed_keys)  # fmt: skip


def namespace_source(namespace: Mapping[str, Any]) -> Source:
    """The :class:`Source` of the code defined in ``namespace`` (see
    :func:`run_checks_on_namespace`)."""
    module = namespace.get("__name__")
    files: set[str] = set()
    for obj in list(namespace.values()):
        if getattr(obj, "__module__", None) != module:
            continue
        members = [obj, *vars(obj).values()] if isinstance(obj, type) else [obj]
        for member in members:
            code = getattr(getattr(member, "__func__", member), "__code__", None)
            if code is not None:
                files.add(_resolved(code.co_filename))
    return Source(frozenset(files), _cell_name)


def _cell_name(filename: str, lineno: int) -> str:
    """``Cell In[5], line 3`` in IPython (as its tracebacks say), else ``file.py, line 3``."""
    shell = sys.modules.get("IPython")
    get_ipython = getattr(shell, "get_ipython", None)
    ip = get_ipython() if callable(get_ipython) else None
    compiler = getattr(ip, "compile", None)
    named = None
    if compiler is not None and hasattr(compiler, "format_code_name"):
        with contextlib.suppress(Exception):  # an IPython without the map: fall back below
            named = compiler.format_code_name(filename)
    if named:
        return f"{named[0]} {named[1]}, line {lineno}"
    return f"{Path(filename).name}, line {lineno}"


def _run_all(
    exercise: int,
    student: Student,
    tasks: Sequence[Task],
    seed: int,
    seed_keys: Sequence[int] | None,
) -> list[TaskResult]:
    keys = list(range(len(tasks))) if seed_keys is None else list(seed_keys)
    results: list[TaskResult] = []
    for i, task in enumerate(tasks):
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(keys[i],)))
        start = time.perf_counter()
        status, message, cause = _run_one(task.check, student, rng)
        results.append(
            TaskResult(
                exercise,
                task.name,
                status,
                message,
                time.perf_counter() - start,
                cause,
                task.points,
            )  # fmt: skip
        )
    return results


def _run_one(
    fn: CheckFn, student: Student, rng: np.random.Generator
) -> tuple[str, str, str | None]:
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            fn(student, rng)
    except NotImplementedError:
        return NOT_DONE, "not done yet", None
    except CheckFailed as exc:
        return FAILED, str(exc), exc.cause
    except KeyboardInterrupt:
        raise
    except RecursionError as exc:
        described = _describe_exception(exc, student.source)
        return FAILED, described or "your code recursed without end (RecursionError)", None
    except Exception as exc:  # noqa: BLE001 - turned into one readable line
        described = _describe_exception(exc, student.source)
        if described is not None:
            return FAILED, described, None
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return (
            ERROR,
            (
                f"the check could not run ({type(exc).__name__}: {text}); "
                "if your code looks right, tell your teacher"
            ),
            None,
        )
    return OK, "ok", None
