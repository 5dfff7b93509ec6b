"""Small helpers shared by the exercises' checks: formatting, comparisons for students, and
naming the likely cause of a failure.

A failed check names a likely cause when the student's output matches a known mistake: the
exact value of a wrong formula (:func:`first_match`), or, for a random function, a wrong law
that the draws fit (:func:`likely_law`: the alternative with the largest chi-square p-value,
when that p-value is at least :data:`CAUSE_LEVEL`). A cause is a diagnosis added to a verdict
that the check's own test already reached; it never decides the verdict.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from dpbandits.course.checker import CheckFailed
from dpbandits.course.stats import ALPHA, chisquare_pvalue, fmt_p

__all__ = [
    "CAUSE_LEVEL",
    "first_match",
    "fmt",
    "fmt_vec",
    "likely_law",
    "named_cause",
    "require_close",
    "require_pmf",
    "require_same_draws",
    "seed_from",
]

#: A wrong law is named as the likely cause when the draws fit it with at least this p-value.
CAUSE_LEVEL = 1e-3

Causes = Iterable[tuple[str, Any]]


@contextlib.contextmanager
def named_cause(cause: str) -> Iterator[None]:
    """A failure of the checks inside the ``with`` block fails with its own message and
    ``cause`` as the likely mistake (the block checks one symptom of that mistake)."""
    try:
        yield
    except CheckFailed as exc:
        raise CheckFailed(str(exc), cause=cause) from None


def fmt(x: Any, digits: int = 4) -> str:
    """A number for a student: ``0.7311``, ``1.2e-05``, ``inf``."""
    x = float(x)
    if x == 0:
        return "0"
    if np.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:.{digits}g}"


def fmt_vec(v: ArrayLike, digits: int = 3) -> str:
    """``[0.1, 0.45, 0.8]``."""
    return "[" + ", ".join(fmt(x, digits) for x in np.asarray(v, dtype=float).ravel()) + "]"


def seed_from(rng: np.random.Generator) -> int:
    """An int seed drawn from the check's generator (for APIs that want an int)."""
    return int(rng.integers(0, 2**31 - 1))


def first_match(
    got: Any, candidates: Causes, rtol: float = 1e-7, atol: float = 1e-10
) -> str | None:
    """The cause of the first ``(cause, value)`` of ``candidates`` whose value ``got`` equals
    (entrywise, same shape; ``inf`` only equals ``inf``), else ``None``."""
    g = np.asarray(got, dtype=float)
    for cause, value in candidates:
        v = np.asarray(value, dtype=float)
        if v.shape == g.shape and bool(np.all(
            np.where(np.isfinite(v), np.abs(g - v) <= atol + rtol * np.abs(v), g == v)
        )):  # fmt: skip
            return cause
    return None


def require_close(
    got: float,
    expected: float,
    what: str,
    *,
    rtol: float = 1e-7,
    atol: float = 1e-10,
    causes: Causes = (),
) -> None:
    """Fail with ``"<what> is <got>, expected <expected>"`` unless the two agree; the cause is
    that of the first of ``causes`` (``(cause, value)`` pairs) that ``got`` equals."""
    if np.isinf(expected) or np.isinf(got):
        agree = got == expected
    else:
        agree = bool(np.isfinite(got) and abs(got - expected) <= atol + rtol * abs(expected))
    if not agree:
        raise CheckFailed(
            f"{what} is {fmt(got, 6)}, expected {fmt(expected, 6)}",
            cause=first_match(got, causes, rtol, atol),
        )


def likely_law(counts: ArrayLike, candidates: Causes) -> str | None:
    """The cause of the ``(cause, pmf)`` of ``candidates`` that ``counts`` fit best, if its
    chi-square p-value is at least :data:`CAUSE_LEVEL`, else ``None``."""
    best, cause = CAUSE_LEVEL, None
    for name, probs in candidates:
        p = chisquare_pvalue(counts, probs)
        if p > best or (cause is None and p == best):  # ties: the first listed
            best, cause = p, name
    return cause


def require_same_draws(call: Callable[[np.random.Generator], Any], name: str, seed: int) -> None:
    """Fail unless every random draw of ``call`` comes from its ``rng`` argument: two
    generators in the same state give the same output (reproducible), and two successive calls
    with one generator give different outputs (fresh draws; ``call``'s input must make equal
    outputs of correct code impossible in practice, e.g. many rows or continuous noise)."""
    first = np.asarray(call(np.random.default_rng(seed)))
    again = np.asarray(call(np.random.default_rng(seed)))
    if first.shape != again.shape or not np.array_equal(first, again):
        raise CheckFailed(
            f"two calls of `{name}` with generators in the same state gave different results",
            cause="random draws that do not come from the `rng` argument (np.random.*, "
            "random.*, or a new default_rng() inside your function): use rng for every draw",
        )
    rng = np.random.default_rng(seed)
    if np.array_equal(np.asarray(call(rng)), np.asarray(call(rng))):
        raise CheckFailed(
            f"two successive calls of `{name}` with one generator gave the same results",
            cause="every call repeats the same draws: use the generator `rng` you are given, "
            "not a new one made from a fixed seed",
        )


def require_pmf(
    counts: ArrayLike,
    probs: ArrayLike,
    what: str,
    labels: Sequence[str] | None = None,
    causes: Causes = (),
) -> float:
    """Chi-square test of ``counts`` against ``probs``; fail below :data:`ALPHA`.

    The message names the cell whose frequency is furthest from its probability, e.g.
    ``"<what>: arm 0 is chosen with frequency 0.62, expected 0.73 (chi-square p = 1e-09)"``;
    the likely cause is the law of ``causes`` (``(cause, pmf)`` pairs) that the counts fit
    (:func:`likely_law`).
    """
    c = np.asarray(counts, dtype=float).ravel()
    p = np.asarray(probs, dtype=float).ravel()
    pval = chisquare_pvalue(c, p)
    if pval < ALPHA:
        n = c.sum()
        freq = c / n
        # The cell furthest from its probability (ties: the first, e.g. the true answer).
        gap = np.where(p == 0, np.where(c > 0, np.inf, 0.0), np.round(np.abs(freq - p), 9))
        j = int(np.argmax(gap))
        name = labels[j] if labels is not None else f"arm {j}"
        raise CheckFailed(
            f"{what}: {name} is chosen with frequency {fmt(freq[j], 3)}, expected "
            f"{fmt(p[j], 3)} (chi-square {fmt_p(pval)}, {int(n)} draws)",
            cause=likely_law(c, causes),
        )
    return pval
