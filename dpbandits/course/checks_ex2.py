"""Checks of exercise 2: the UCB index, Beta-Bernoulli Thompson sampling, Lai-Robbins."""

from __future__ import annotations

import numpy as np
from scipy import integrate, stats

from dpbandits.course.checker import CheckFailed, Student
from dpbandits.course.common import fmt, fmt_vec, require_close, require_pmf


def check_ucb_index(student: Student, rng: np.random.Generator) -> None:
    """Exact comparison with ``S/N + alpha sqrt(ln t / N)``."""
    for alpha, t in ((np.sqrt(2.0), 200), (0.7, 5000)):
        counts = rng.integers(1, 60, size=(5, 3)).astype(float)
        sums = np.round(counts * rng.random((5, 3)), 2)
        got = Student.floats(
            student.call("ucb_index", counts.copy(), sums.copy(), t, alpha), (5, 3), "ucb_index"
        )
        expected = sums / counts + alpha * np.sqrt(np.log(t) / counts)
        bad = ~np.isclose(got, expected, rtol=1e-9, atol=1e-12)
        if bad.any():
            i, a = (int(v) for v in np.argwhere(bad)[0])
            raise CheckFailed(
                f"for an arm with N = {int(counts[i, a])} pulls and reward sum S = "
                f"{fmt(sums[i, a])}, at t = {t} with alpha = {fmt(alpha)}, your index is "
                f"{fmt(got[i, a], 6)}, expected {fmt(expected[i, a], 6)} "
                "(= S/N + alpha * sqrt(ln t / N))"
            )


def thompson_pmf(successes: np.ndarray, failures: np.ndarray) -> np.ndarray:
    """``P(arm j has the largest Beta(1 + s, 1 + f) sample)``, by numerical integration."""
    a = 1.0 + np.asarray(successes, dtype=float)
    b = 1.0 + np.asarray(failures, dtype=float)
    k = a.size
    out = np.empty(k)
    for j in range(k):

        def integrand(x: float, j: int = j) -> float:
            others = np.prod([stats.beta.cdf(x, a[i], b[i]) for i in range(k) if i != j])
            return float(stats.beta.pdf(x, a[j], b[j]) * others)

        out[j] = integrate.quad(integrand, 0.0, 1.0, epsabs=1e-12, epsrel=1e-10, limit=200)[0]
    return out / out.sum()


CASES = (
    ((1, 3, 0), (2, 1, 1)),
    ((10, 12, 3), (10, 8, 1)),
    ((2, 0), (0, 2)),
    ((0, 0, 0, 0), (0, 1, 2, 3)),
)


def check_thompson_choose(student: Student, rng: np.random.Generator) -> None:
    """Chi-square of the chosen arms against the exact law of Thompson sampling."""
    n = 40_000
    for s, f in CASES:
        k = len(s)
        succ = np.tile(np.array(s, dtype=float), (n, 1))
        fail = np.tile(np.array(f, dtype=float), (n, 1))
        out = Student.indices(
            student.call("thompson_choose", succ.copy(), fail.copy(), rng),
            (n,),
            k,
            "thompson_choose",
        )
        require_pmf(
            np.bincount(out, minlength=k),
            thompson_pmf(np.array(s), np.array(f)),
            f"with successes {fmt_vec(s)} and failures {fmt_vec(f)} (uniform prior)",
        )


def _constant(means: np.ndarray) -> float:
    best = means.max()
    bad = means[means < best]
    kl = bad * np.log(bad / best) + (1 - bad) * np.log((1 - bad) / (1 - best))
    return float(np.sum((best - bad) / kl))


def check_lai_robbins_constant(student: Student, rng: np.random.Generator) -> None:
    for means in ((0.2, 0.5, 0.7), (0.9, 0.8, 0.85, 0.1), (0.3, 0.6, 0.6)):
        m = np.array(means)
        got = Student.number(student.call("lai_robbins_constant", m.copy()), "lai_robbins_constant")
        require_close(got, _constant(m), f"for means {fmt_vec(means)}, your constant")
