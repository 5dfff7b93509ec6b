"""Checks of exercise 2: the UCB index, Beta-Bernoulli Thompson sampling, Lai-Robbins."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from scipy import integrate, stats

from dpbandits.course.checker import CheckFailed, Student
from dpbandits.course.common import (
    first_match,
    fmt,
    fmt_vec,
    require_close,
    require_pmf,
    require_same_draws,
    seed_from,
)

NOT_SHRINKING = (
    "a bonus that does not shrink with the count: the bonus is alpha * sqrt(ln t / N), "
    "smaller for an arm pulled more often"
)


def _ucb_causes(
    counts: np.ndarray, sums: np.ndarray, t: int, alpha: float
) -> list[tuple[str, np.ndarray]]:
    mean = sums / counts
    log = np.log(t)
    return [
        (NOT_SHRINKING, mean + alpha * np.sqrt(log) + 0 * counts),
        (NOT_SHRINKING + " (N, not t, under the root)", mean + alpha * np.sqrt(log / t)),
        ("the square root is missing: the bonus is alpha * sqrt(ln t / N)",
         mean + alpha * log / counts),
        ("the square root must cover ln t / N, not only ln t", mean + alpha * np.sqrt(log) /
        counts),
        ("alpha multiplies the square root; it is not inside it",
         mean + np.sqrt(alpha * log / counts)),
        ("the mean is S / N (the arm's own pulls), not S / t", sums / t + alpha * np.sqrt(log /
        counts)),
        ("ln is the natural logarithm (np.log), not log10 or log2",
         mean + alpha * np.sqrt(np.log10(t) / counts)),
        ("ln is the natural logarithm (np.log), not log10 or log2",
         mean + alpha * np.sqrt(np.log2(t) / counts)),
        ("ln t, with t the number of pulls so far (not t + 1)",
         mean + alpha * np.sqrt(np.log(t + 1) / counts)),
        ("no extra factor 2 under the root: alpha already sets the width (alpha = sqrt 2 is UCB1)",
         mean + alpha * np.sqrt(2 * log / counts)),
        ("divide by N, not N + 1 (every arm has been pulled at least once)",
         mean + alpha * np.sqrt(log / (counts + 1))),
        ("the index is the mean *plus* the bonus", alpha * np.sqrt(log / counts) + 0 * mean),
    ]  # fmt: skip


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
                "(= S/N + alpha * sqrt(ln t / N))",
                cause=first_match(got, _ucb_causes(counts, sums, t, alpha), 1e-9, 1e-12),
            )


def thompson_pmf(successes: np.ndarray, failures: np.ndarray, prior: float = 1.0) -> np.ndarray:
    """``P(arm j has the largest Beta(prior + s, prior + f) sample)``, by numerical
    integration (``prior = 1``: the uniform prior)."""
    s = tuple(float(v) for v in np.asarray(successes, dtype=float).ravel())
    f = tuple(float(v) for v in np.asarray(failures, dtype=float).ravel())
    return np.array(_thompson_pmf(s, f, float(prior)))


@functools.lru_cache(maxsize=64)
def _thompson_pmf(successes: tuple[float, ...], failures: tuple[float, ...],
                  prior: float) -> tuple[float, ...]:  # fmt: skip
    """:func:`thompson_pmf` of the same cases is the same (a few tenths of a second of
    quadrature each): the check of every seed reuses it."""
    a = prior + np.asarray(successes, dtype=float)
    b = prior + np.asarray(failures, dtype=float)
    k = a.size
    out = np.empty(k)
    for j in range(k):

        def integrand(x: float, j: int = j) -> float:
            others = np.prod([stats.beta.cdf(x, a[i], b[i]) for i in range(k) if i != j])
            return float(stats.beta.pdf(x, a[j], b[j]) * others)

        out[j] = integrate.quad(integrand, 0.0, 1.0, epsabs=1e-12, epsrel=1e-10, limit=200)[0]
    return tuple(float(v) for v in out / out.sum())


def _greedy_pmf(scores: np.ndarray) -> np.ndarray:
    """The law of a deterministic argmax of ``scores`` (ties: the first)."""
    p = np.zeros(scores.size)
    p[int(np.argmax(scores))] = 1.0
    return p


CASES = (
    ((1, 3, 0), (2, 1, 1)),
    ((10, 12, 3), (10, 8, 1)),
    ((2, 0), (0, 2)),
    ((0, 0, 0, 0), (0, 1, 2, 3)),
)


def _thompson_causes(s: np.ndarray, f: np.ndarray) -> Iterator[tuple[str, np.ndarray]]:
    """Laws of typical mistakes, computed only when asked (a failed test)."""
    k = s.size
    yield (
        "the law of the *worst* sample: the Beta parameters are swapped (successes come "
        "first: Beta(1 + s, 1 + f)) or you take the argmin",
        thompson_pmf(f, s),
    )
    yield (
        "playing the posterior mean: Thompson sampling plays the largest *sample* (rng.beta)",
        _greedy_pmf((1 + s) / (2 + s + f)),
    )
    yield (
        "a prior other than the uniform Beta(1, 1): the posterior is Beta(1 + s, 1 + f)",
        thompson_pmf(s, f, prior=0.5),
    )
    yield (
        "Beta(1 + s, 1 + s + f): the second parameter counts the failures only",
        thompson_pmf(s, s + f),
    )
    yield ("one sample for the whole batch: draw one sample per row and arm", np.full(k, 1.0 / k))


def check_thompson_choose(student: Student, rng: np.random.Generator) -> None:
    """Chi-square of the chosen arms against the exact law of Thompson sampling; draws from
    ``rng`` only."""
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
        counts = np.bincount(out, minlength=k)
        what = f"with successes {fmt_vec(s)} and failures {fmt_vec(f)} (uniform prior)"
        if np.count_nonzero(counts) == 1 and k > 1:
            raise CheckFailed(
                f"{what}: every row chose arm {int(np.argmax(counts))}",
                cause="every row made the same choice: no sampling at all (the posterior mean "
                "is not a sample), or one sample shared by all rows: draw "
                "theta = rng.beta(1 + s, 1 + f), one sample per row and arm",
            )
        require_pmf(
            counts, thompson_pmf(np.array(s), np.array(f)), what,
            causes=_thompson_causes(np.array(s, dtype=float), np.array(f, dtype=float)),
        )  # fmt: skip
    succ, fail = rng.integers(0, 3, size=(2, 100, 3)).astype(float)
    require_same_draws(
        lambda g: student.call("thompson_choose", succ.copy(), fail.copy(), g),
        "thompson_choose", seed_from(rng),
    )  # fmt: skip


def _kl(p: np.ndarray, q: float, log: Callable[[Any], Any] = np.log) -> np.ndarray:
    """Bernoulli ``kl(p, q)`` (``log`` the logarithm, for the wrong-base mistakes)."""
    return np.asarray(p * log(p / q) + (1 - p) * log((1 - p) / (1 - q)))


def _constant(means: np.ndarray) -> float:
    best = means.max()
    bad = means[means < best]
    return float(np.sum((best - bad) / _kl(bad, best)))


def check_lai_robbins_constant(student: Student, rng: np.random.Generator) -> None:
    for means in ((0.2, 0.5, 0.7), (0.9, 0.8, 0.85, 0.1), (0.3, 0.6, 0.6)):
        m = np.array(means)
        got = Student.number(student.call("lai_robbins_constant", m.copy()), "lai_robbins_constant")
        best = m.max()
        bad = m[m < best]
        gap = best - bad
        kl_reversed = best * np.log(best / bad) + (1 - best) * np.log((1 - best) / (1 - bad))
        require_close(
            got, _constant(m), f"for means {fmt_vec(means)}, your constant",
            causes=[
                ("kl(mu*, mu_a) instead of kl(mu_a, mu*): kl is not symmetric, its first "
                 "argument is the suboptimal arm's mean", np.sum(gap / kl_reversed)),
                ("each term is (mu* - mu_a) / kl(mu_a, mu*): the gap is missing",
                 np.sum(1 / _kl(bad, best))),
                ("each term is (mu* - mu_a) / kl(mu_a, mu*), not gap^2 / kl",
                 np.sum(gap**2 / _kl(bad, best))),
                ("the Bernoulli kl has two terms: p ln(p/q) + (1 - p) ln((1 - p)/(1 - q))",
                 np.sum(gap / (bad * np.log(bad / best)))),
                ("kl uses natural logarithms (np.log)", np.sum(gap / _kl(bad, best, np.log2))),
                ("kl uses natural logarithms (np.log)", np.sum(gap / _kl(bad, best, np.log10))),
                ("kl(mu_a, mu*) is the Bernoulli divergence, not the Gaussian (mu* - mu_a)^2 / 2",
                 np.sum(gap / (gap**2 / 2))),
                ("an arm tied with the best one adds nothing: sum over mu_a < mu* only",
                 np.inf),
            ],
        )  # fmt: skip
