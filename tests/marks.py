"""Marks shared by the test modules: which cases of a long parametrised family run in the
README's test command and which only in CI's ``slow`` step (README, "Tests").

A family such as "every built-in selector passes the conformance kit" keeps a few
representative cases in the everyday run -- enough to catch a broken kit or a broken base
class -- and runs the rest behind ``@pytest.mark.slow``, which ``.ci/run`` runs as a step of its
own. Nothing is skipped: every case still runs in CI.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import pytest


def slow_except(
    cases: Iterable[Any],
    fast: Iterable[Any],
    *,
    key: Callable[[Any], Any] = lambda case: case,
    ids: Callable[[Any], str] | None = None,
) -> list[Any]:
    """``cases`` as ``pytest.param`` objects, each marked ``slow`` unless ``key(case)`` is in
    ``fast``. A tuple case is unpacked into the parameters it names."""
    fast = list(fast)
    cases = list(cases)
    unknown = [f for f in fast if f not in [key(c) for c in cases]]
    if unknown:  # a renamed case must not silently move the whole family to the slow step
        raise ValueError(f"slow_except: {unknown!r} name no case of {[key(c) for c in cases]!r}")
    out = []
    for case in cases:
        values = case if isinstance(case, tuple) else (case,)
        marks = () if key(case) in fast else (pytest.mark.slow,)
        out.append(pytest.param(*values, marks=marks, id=None if ids is None else ids(case)))
    return out
