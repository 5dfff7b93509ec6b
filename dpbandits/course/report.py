"""The checker's results in words: the terminal report (points, causes, hints, the total) and
the Gradescope ``results.json``.

The Gradescope format is the one of its autograder specification
(https://gradescope-autograders.readthedocs.io/en/latest/specs/, "Output format"): a top-level
``score``, ``execution_time`` (seconds), ``output``, ``visibility`` and ``stdout_visibility``,
and one entry of ``tests`` per task with ``name``, ``number``, ``score``, ``max_score``,
``status`` (``passed``/``failed``) and ``output`` (the checker's message, the likely cause and
the first hint). How to use it: ``docs/course.md``, "Grading a class".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from dpbandits.course.checker import TaskResult
from dpbandits.course.registry import Exercise

__all__ = ["gradescope_results", "hint_text", "report_lines", "summary_line", "task_feedback"]

#: Width of the task-name column of the terminal report.
_NAME = 26


#: How to ask for hint ``K`` of a task: ``more(task, K)``, e.g. ``"--hint 2"``.
More = Callable[[str, int], str]


def hint_text(ex: Exercise, task: str, level: int, more: More | None) -> str:
    """``"hint K/N: ..."`` of ``task`` at ``level`` (capped at the last hint); ``more(task,
    K + 1)`` says how to get the next one (``None``: not said)."""
    hints = ex.task(task).hints
    k = min(max(level, 1), len(hints))
    tail = f" (next hint: {more(task, k + 1)})" if more is not None and k < len(hints) else ""
    return f"hint {k}/{len(hints)}: {hints[k - 1]}{tail}"


def task_feedback(
    ex: Exercise, r: TaskResult, hint: int = 0, more: More | None = None
) -> list[str]:
    """The message of ``r``, its likely cause, and (``hint >= 1``, task not ok) the hint;
    ``more(task, K)`` says how to ask for hint K (``None``: not said)."""
    lines = [r.message]
    if r.cause:
        lines.append(f"likely cause: {r.cause}")
    if hint >= 1 and not r.ok:
        lines.append(hint_text(ex, r.task, hint, more))
    return lines


def report_lines(
    ex: Exercise,
    results: Sequence[TaskResult],
    hint: int = 0,
    more: More | None = None,
) -> list[str]:
    """One block per task: ``  name   points/max  message`` then, indented, the likely cause
    and the hint; then :func:`summary_line`."""
    out = []
    for r in results:
        first, *rest = task_feedback(ex, r, hint, more or (lambda _task, k: f"--hint {k}"))
        mark = f"{r.points}/{r.max_points}"
        out.append(f"  {r.task:<{_NAME}} {mark:>5}  {first}")
        out.extend(" " * (_NAME + 10) + line for line in rest)
    out.append(summary_line(results))
    return out


def summary_line(results: Sequence[TaskResult]) -> str:
    """``Score: 5 of 8 points (2 of 4 tasks ok).`` (and ``Well done!`` when all are ok)."""
    n_ok = sum(r.ok for r in results)
    got = sum(r.points for r in results)
    total = sum(r.max_points for r in results)
    done = " Well done!" if n_ok == len(results) else ""
    return f"Score: {got} of {total} points ({n_ok} of {len(results)} tasks ok).{done}"


def gradescope_results(
    ex: Exercise, results: Sequence[TaskResult], file: str, seconds: float
) -> dict[str, Any]:
    """The Gradescope ``results.json`` of one graded file (see the module docstring)."""
    number = {t.name: i for i, t in enumerate(ex.tasks, start=1)}
    tests = []
    for r in results:
        task = ex.task(r.task)
        tests.append({
            "name": f"{r.task}: {task.title}",
            "number": f"{ex.number}.{number[r.task]}",
            "score": float(r.points),
            "max_score": float(r.max_points),
            "status": "passed" if r.ok else "failed",
            "output": "\n".join(task_feedback(ex, r, hint=1)),
            "output_format": "text",
            "visibility": "visible",
        })  # fmt: skip
    return {
        "score": float(sum(r.points for r in results)),
        "execution_time": math.ceil(seconds),
        "output": f"Exercise {ex.number}: {ex.title} ({file})\n{summary_line(results)}",
        "output_format": "text",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
    }
