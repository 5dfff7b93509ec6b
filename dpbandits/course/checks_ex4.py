"""Checks of exercise 4: randomized response, report noisy max, privacy loss, the audit."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dpbandits.course.checker import CheckFailed, Student
from dpbandits.course.common import fmt, fmt_vec, require_close, require_pmf
from dpbandits.course.stats import ALPHA

N_DRAWS = 100_000


def _distinct_rows(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    """``n`` random score rows with distinct entries (no ties)."""
    return rng.permutation(
        np.tile(np.arange(k, dtype=float) / k, (n, 1)), axis=1
    ) + 0.01 * rng.random((n, 1))


def check_randomized_response(student: Student, rng: np.random.Generator) -> None:
    """Law of the rank of the pick: argmax w.p. e^eps/(e^eps+K-1), each other 1/(e^eps+K-1)."""
    for k, eps in ((2, 1.0), (4, 0.5), (10, 2.0), (3, 4.0)):
        q = _distinct_rows(rng, N_DRAWS, k)
        out = Student.indices(
            student.call("randomized_response", q.copy(), eps, rng),
            (N_DRAWS,),
            k,
            "randomized_response",
        )
        order = np.argsort(-q, axis=1)
        rank = np.argmax(order == out[:, None], axis=1)
        denom = np.exp(eps) + k - 1
        probs = np.full(k, 1.0 / denom)
        probs[0] = np.exp(eps) / denom
        labels = ["the true answer (the argmax)"] + [
            f"the candidate ranked {j + 1}" for j in range(1, k)
        ]
        require_pmf(
            np.bincount(rank, minlength=k),
            probs,
            f"your randomized response with K = {k} at eps = {fmt(eps)}",
            labels,
        )


def softmax_pmf(q: np.ndarray, d: np.ndarray, eps: float) -> np.ndarray:
    """The law of Gumbel report noisy max: ``P[a] ∝ exp(eps q_a / (2 max d))``."""
    z = eps * (q - q.max()) / (2.0 * d.max())
    w = np.exp(z)
    return w / w.sum()


RNM_CASES = (
    ((0.0, 0.5, 1.0), (1.0, 1.0, 1.0), 1.0),
    ((0.2, 0.8, 0.5, 0.1), (0.1, 0.5, 0.2, 0.3), 2.0),
    ((0.0, 3.0), (1.0, 1.0), 1.0),
    ((1.0, 0.0, 0.6), (0.05, 0.25, 0.1), 1.0),
    # one clear winner among many: separates Gumbel from Laplace noise best
    ((0.0,) * 9 + (4.0,), (1.0,) * 10, 1.0),
)


def check_report_noisy_max(student: Student, rng: np.random.Generator) -> None:
    """Chi-square of the picks against the softmax law of Gumbel report noisy max."""
    for q, d, eps in RNM_CASES:
        k = len(q)
        qa = np.tile(np.array(q), (N_DRAWS, 1))
        da = np.tile(np.array(d), (N_DRAWS, 1))
        out = Student.indices(
            student.call("report_noisy_max", qa, da, eps, rng), (N_DRAWS,), k, "report_noisy_max"
        )
        require_pmf(
            np.bincount(out, minlength=k),
            softmax_pmf(np.array(q), np.array(d), eps),
            f"your report noisy max on q = {fmt_vec(q)}, d = {fmt_vec(d)} at eps = {fmt(eps)}",
        )


def _loss(p: np.ndarray, pp: np.ndarray) -> float:
    seen = (p > 0) | (pp > 0)
    if np.any(seen & ((p == 0) | (pp == 0))):
        return float(np.inf)
    return float(np.max(np.abs(np.log(p[seen]) - np.log(pp[seen]))))


def check_privacy_loss(student: Student, rng: np.random.Generator) -> None:
    cases = (
        ((0.7, 0.2, 0.1), (0.5, 0.3, 0.2)),
        ((0.1, 0.9), (0.3, 0.7)),
        ((0.5, 0.5, 0.0), (0.4, 0.6, 0.0)),
        ((0.5, 0.5, 0.0), (0.4, 0.5, 0.1)),
    )
    for p, pp in cases:
        a, b = np.array(p), np.array(pp)
        got = Student.number(student.call("privacy_loss", a.copy(), b.copy()), "privacy_loss")
        require_close(got, _loss(a, b), f"for p = {fmt_vec(p)} and p' = {fmt_vec(pp)}, your loss")


def _wrapped(student: Student, name: str, uses_d: bool) -> Callable[..., Any]:
    """The student's function as ``fn(q, d, eps, rng)`` with its output checked."""

    def fn(q: np.ndarray, d: np.ndarray, eps: float, rng: np.random.Generator) -> np.ndarray:
        out = student.call(name, q, d, eps, rng) if uses_d else student.call(name, q, eps, rng)
        return Student.indices(out, (q.shape[0],), q.shape[1], name)

    return fn


def check_audit(student: Student, rng: np.random.Generator) -> None:
    """The library's auditor on hard neighbouring pairs: the loss lower bound must be <= eps."""
    from dpbandits import selectors
    from dpbandits.testing.audit import HARD_PAIRS, NeighbouringPair, estimate_privacy_loss

    eps = 1.0
    pairs = dict(HARD_PAIRS)
    # One candidate without noise of its own: noise scaled by each candidate's d_a instead of
    # D = max d (the paper's RNMH, §IV-A) then loses ~1.8 eps with Gumbel noise.
    pairs["one_sided"] = NeighbouringPair(
        "one_sided", np.array([0.0, 3.0]), np.array([0.0, 2.0]), np.array([1e-3, 1.0])
    )
    plan = (
        ("randomized_response", False, ("swap",)),
        ("report_noisy_max", True, ("shift2", "one_up_het", "one_sided")),
    )
    for name, uses_d, pair_names in plan:
        sel = selectors.from_function(
            _wrapped(student, name, uses_d), name=name, epsilon=eps, uses_sensitivities=uses_d
        )
        for pair_name in pair_names:
            pair = pairs[pair_name]
            res = estimate_privacy_loss(sel, pair, draws=200_000, alpha=ALPHA, rng=rng)
            if not res.passed:
                raise CheckFailed(
                    f"the privacy audit (dpbandits.testing.audit) finds that your {name} is not "
                    f"{fmt(eps)}-DP: on the neighbouring inputs q = {fmt_vec(pair.q)} and "
                    f"q' = {fmt_vec(pair.q_prime)} (d = {fmt_vec(pair.d)}) its privacy loss is "
                    f"at least {fmt(res.loss_lower, 3)} (estimate {fmt(res.loss, 3)}; "
                    f"{res.draws} draws per input, error level {res.alpha:g}), more than "
                    f"eps = {fmt(eps)}"
                )


def check_expected_utility_krr(student: Student, rng: np.random.Generator) -> None:
    for q, eps in (((0.9, 0.8, 0.5, 0.2, 0.1), 1.0), ((0.3, 0.7), 0.5), ((0.1, 0.4, 0.2), 3.0)):
        a = np.array(q)
        got = Student.number(
            student.call("expected_utility_krr", a.copy(), eps), "expected_utility_krr"
        )
        k = a.size
        pb = np.exp(eps) / (np.exp(eps) + k - 1)
        exp = pb * a.max() + (1 - pb) * (a.sum() - a.max()) / (k - 1)
        require_close(got, exp, f"for q = {fmt_vec(q)} at eps = {fmt(eps)}, your utility")
