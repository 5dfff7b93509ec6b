"""Checks of exercise 4: randomized response, report noisy max, privacy loss, the audit."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from scipy import stats

from dpbandits.course.checker import CheckFailed, Student
from dpbandits.course.common import (
    fmt,
    fmt_vec,
    require_close,
    require_pmf,
    require_same_draws,
    seed_from,
)
from dpbandits.course.stats import ALPHA, argmax_pmf

N_DRAWS = 100_000


def _distinct_rows(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    """``n`` random score rows with distinct entries (no ties)."""
    # rng.permuted: an order of its own for each row (rng.permutation would share one)
    return rng.permuted(np.tile(np.arange(k, dtype=float) / k, (n, 1)), axis=1) + 0.01 * rng.random(
        (n, 1)
    )


def _rr_law(k: int, p_best: float, worst: bool = False) -> np.ndarray:
    """Law of the chosen rank when the argmax (or, ``worst``, the argmin) is kept with
    probability ``p_best`` and one of the others is drawn uniformly otherwise."""
    p = np.full(k, (1 - p_best) / (k - 1))
    p[-1 if worst else 0] = p_best
    return p


def _rr_causes(k: int, eps: float) -> list[tuple[str, np.ndarray]]:
    def keep(e: float, extra: float = -1) -> float:
        return float(np.exp(e) / (np.exp(e) + k + extra))

    p = keep(eps)
    return [
        ("the wrong eps: the argmax is kept with probability e^eps / (e^eps + K - 1), "
         "with the whole eps (yours looks like eps/2)", _rr_law(k, keep(eps / 2))),
        ("the wrong eps: the argmax is kept with probability e^eps / (e^eps + K - 1) "
         "(yours looks like 2 eps)", _rr_law(k, keep(2 * eps))),
        ("the other candidate must be one of the K - 1 *others*: yours can be the argmax "
         "again", np.r_[p + (1 - p) / k, np.full(k - 1, (1 - p) / k)]),
        ("the denominator is e^eps + K - 1 (the argmax and the K - 1 others)",
         _rr_law(k, keep(eps, 0))),
        ("the binary formula e^eps / (e^eps + 1): with K candidates it is e^eps / (e^eps + K - 1)",
         _rr_law(k, float(np.exp(eps) / (np.exp(eps) + 1)))),
        ("keeping the argmin: the true answer is the argmax of q", _rr_law(k, p, worst=True)),
        ("the argmax is kept with probability p = e^eps / (e^eps + K - 1), not 1 - p",
         _rr_law(k, 1 - p)),
        ("one keep-or-not draw for the whole batch: draw one per row (rng.random(R))",
         _rr_law(k, 1.0)),
        ("one keep-or-not draw for the whole batch: draw one per row (rng.random(R))",
         _rr_law(k, 0.0)),
    ]  # fmt: skip


def check_randomized_response(student: Student, rng: np.random.Generator) -> None:
    """Law of the rank of the pick: argmax w.p. e^eps/(e^eps+K-1), each other 1/(e^eps+K-1);
    draws from ``rng`` only."""
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
        labels = ["the true answer (the argmax)"] + [
            f"the candidate ranked {j + 1}" for j in range(1, k)
        ]
        require_pmf(
            np.bincount(rank, minlength=k),
            _rr_law(k, float(np.exp(eps) / (np.exp(eps) + k - 1))),
            f"your randomized response with K = {k} at eps = {fmt(eps)}",
            labels,
            causes=_rr_causes(k, eps),
        )
    q = _distinct_rows(rng, 100, 4)
    require_same_draws(
        lambda g: student.call("randomized_response", q.copy(), 1.0, g), "randomized_response",
        seed_from(rng),
    )  # fmt: skip


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

WRONG_SCALE = "noise on the wrong scale: Gumbel noise of scale 2 D / eps, D = max_a d_a of the row"


def _rnm_causes(q: np.ndarray, d: np.ndarray, eps: float) -> Iterator[tuple[str, np.ndarray]]:
    """Laws of typical mistakes, computed only when asked (a failed test)."""
    big = d.max()
    gumbel, laplace = stats.gumbel_r, stats.laplace
    yield (
        WRONG_SCALE + " (yours looks like D / eps: the factor 2 is missing)",
        softmax_pmf(q, d / 2, eps),
    )
    yield (
        WRONG_SCALE + " (yours ignores the sensitivities, as if D = 1)",
        softmax_pmf(q, np.ones_like(d), eps),
    )
    yield WRONG_SCALE + " (yours looks like 4 D / eps)", softmax_pmf(q, 2 * d, eps)
    yield (
        "each candidate's own sensitivity d_a as its noise scale (the paper's RNMH, Sec. IV-A, "
        "which is not eps-DP): every candidate of a row gets the scale 2 D / eps, D = max d",
        argmax_pmf(q, 2 * d / eps, gumbel),
    )
    yield (
        "Laplace noise: report noisy max here adds Gumbel noise (rng.gumbel)",
        argmax_pmf(q, 2 * big / eps, laplace),
    )
    yield (
        WRONG_SCALE + " (yours uses the mean sensitivity, not the largest)",
        softmax_pmf(q, np.full_like(d, d.mean()), eps),
    )
    yield (
        WRONG_SCALE + " (yours multiplies by eps instead of dividing)",
        argmax_pmf(q, 2 * big * eps, gumbel),
    )
    yield (
        "the noise is added to the scores, not subtracted",
        argmax_pmf(q, 2 * big / eps, stats.gumbel_l),
    )
    yield (
        "the argmin: report the candidate with the largest noisy score",
        argmax_pmf(-q, 2 * big / eps, stats.gumbel_l),
    )


def _rnm_law(
    q: tuple[float, ...], d: tuple[float, ...], eps: float, picks: np.ndarray, what: str
) -> None:
    """Chi-square of ``picks``, the choices of rows that all have scores ``q`` and
    sensitivities ``d``, against the law of Gumbel report noisy max."""
    k = len(q)
    counts = np.bincount(picks, minlength=k)
    if np.count_nonzero(counts) == 1 and softmax_pmf(np.array(q), np.array(d), eps).max() < 0.999:
        raise CheckFailed(
            f"{what}: every row chose candidate {int(np.argmax(counts))}",
            cause="the rows share one draw of noise: draw noise of shape (R, K), one per row "
            "and candidate",
        )
    require_pmf(
        counts, softmax_pmf(np.array(q), np.array(d), eps), what,
        causes=_rnm_causes(np.array(q), np.array(d), eps),
    )  # fmt: skip


def check_report_noisy_max(student: Student, rng: np.random.Generator) -> None:
    """Chi-square of the picks against the softmax law of Gumbel report noisy max, on batches
    of one problem and on a batch mixing two (D is the row's own); draws from ``rng`` only."""

    def select(q: np.ndarray, d: np.ndarray, eps: float) -> np.ndarray:
        out = student.call("report_noisy_max", q.copy(), d.copy(), eps, rng)
        return Student.indices(out, (q.shape[0],), q.shape[1], "report_noisy_max")

    for q, d, eps in RNM_CASES:
        qa = np.tile(np.array(q), (N_DRAWS, 1))
        da = np.tile(np.array(d), (N_DRAWS, 1))
        _rnm_law(
            q, d, eps, select(qa, da, eps),
            f"your report noisy max on q = {fmt_vec(q)}, d = {fmt_vec(d)} at eps = {fmt(eps)}",
        )  # fmt: skip
    # Rows of two problems in one batch: each row's D is its own largest sensitivity.
    (q1, d1, _), (q2, d2, _) = RNM_CASES[3], RNM_CASES[0]
    first = rng.random(N_DRAWS) < 0.5
    qa = np.where(first[:, None], np.array(q1), np.array(q2))
    da = np.where(first[:, None], np.array(d1), np.array(d2))
    picks = select(qa, da, 1.0)
    for mask, (q, d) in ((first, (q1, d1)), (~first, (q2, d2))):
        try:
            _rnm_law(
                q, d, 1.0, picks[mask],
                f"in a batch mixing two problems, the rows with q = {fmt_vec(q)}, "
                f"d = {fmt_vec(d)} at eps = 1",
            )  # fmt: skip
        except CheckFailed as exc:
            raise CheckFailed(
                str(exc),
                cause="D taken over the whole batch: each row's D is the largest sensitivity "
                "of that row, d.max(axis=1, keepdims=True)",
            ) from None
    q_rows, d_rows = _distinct_rows(rng, 100, 4), rng.random((100, 4)) + 0.5
    require_same_draws(
        lambda g: student.call("report_noisy_max", q_rows.copy(), d_rows.copy(), 1.0, g),
        "report_noisy_max", seed_from(rng),
    )  # fmt: skip


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
        both = (a > 0) & (b > 0)
        ratio = np.log(a[both]) - np.log(b[both])
        expected = _loss(a, b)
        if np.isinf(expected):
            causes = [(
                "an outcome possible under one law and impossible under the other has "
                "infinite loss (np.inf)", got,
            )]  # fmt: skip
        else:
            causes = [
                ("the loss counts both directions: max |ln p_a - ln p'_a|, with the absolute "
                 "value", float(np.max(ratio))),
                ("the loss counts both directions: max |ln p_a - ln p'_a|, with the absolute "
                 "value", float(np.max(-ratio))),
                ("the loss is a log-ratio, ln(p_a / p'_a), not the ratio itself",
                 float(np.max(np.maximum(a[both] / b[both], b[both] / a[both])))),
                ("the loss is the largest log-ratio over the outcomes, not their mean or sum",
                 float(np.mean(np.abs(ratio)))),
                ("the loss is the largest log-ratio over the outcomes, not their mean or sum",
                 float(np.sum(np.abs(ratio)))),
                ("ln is the natural logarithm (np.log)", float(np.max(np.abs(ratio))) / np.log(10)),
                ("outcomes impossible under both laws (p_a = p'_a = 0) do not count", np.inf),
            ]  # fmt: skip
        require_close(
            got, expected, f"for p = {fmt_vec(p)} and p' = {fmt_vec(pp)}, your loss",
            causes=causes,
        )  # fmt: skip


def _wrapped(student: Student, name: str, uses_d: bool) -> Callable[..., Any]:
    """The student's function as ``fn(q, d, eps, rng)`` with its output checked."""

    def fn(q: np.ndarray, d: np.ndarray, eps: float, rng: np.random.Generator) -> np.ndarray:
        out = student.call(name, q, d, eps, rng) if uses_d else student.call(name, q, eps, rng)
        return Student.indices(out, (q.shape[0],), q.shape[1], name)

    return fn


AUDIT_CAUSES = {
    "randomized_response": "kRR keeps the argmax with probability e^eps / (e^eps + K - 1): with "
    "a larger eps (or a smaller denominator) its privacy loss exceeds eps",
    "report_noisy_max": "noise on the wrong scale: every candidate of a row needs Gumbel noise of "
    "scale 2 D / eps with D = max_a d_a (a smaller scale, or a scale of its own d_a per "
    "candidate, loses more than eps)",
}


def check_audit(student: Student, rng: np.random.Generator) -> None:
    """The library's auditor on hard neighbouring pairs: the loss lower bound must be <= eps."""
    from dpbandits import selectors
    from dpbandits.audit.selector import HARD_PAIRS, NeighbouringPair, estimate_privacy_loss

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
                    f"the privacy audit (dpbandits.audit.selector) finds that your {name} is not "
                    f"{fmt(eps)}-DP: on the neighbouring inputs q = {fmt_vec(pair.q)} and "
                    f"q' = {fmt_vec(pair.q_prime)} (d = {fmt_vec(pair.d)}) its privacy loss is "
                    f"at least {fmt(res.loss_lower, 3)} (estimate {fmt(res.loss, 3)}; "
                    f"{res.draws} draws per input, error level {res.alpha:g}), more than "
                    f"eps = {fmt(eps)}",
                    cause=AUDIT_CAUSES[name],
                )


def check_expected_utility_krr(student: Student, rng: np.random.Generator) -> None:
    for q, eps in (
        ((0.9, 0.8, 0.5, 0.2, 0.1), 1.0),
        ((0.3, 0.7, 0.2), 0.5),
        ((0.1, 0.4, 0.2), 3.0),
    ):
        a = np.array(q)
        got = Student.number(
            student.call("expected_utility_krr", a.copy(), eps), "expected_utility_krr"
        )
        k = a.size
        best, rest = a.max(), (a.sum() - a.max()) / (k - 1)

        def utility(p: float, others: float = rest, best: float = best) -> float:
            return float(p * best + (1 - p) * others)

        pb = float(np.exp(eps) / (np.exp(eps) + k - 1))
        require_close(
            got, utility(pb), f"for q = {fmt_vec(q)} at eps = {fmt(eps)}, your utility",
            causes=[
                ("the other candidates are the K - 1 *others*: average them without the best "
                 "one", utility(pb, a.mean())),
                ("the denominator is e^eps + K - 1", utility(float(np.exp(eps) / (np.exp(eps) +
                k)))),
                ("the other candidates also score: add (1 - p) times their average",
                 float(pb * best)),
                ("the other candidates are drawn uniformly: use their average, not the worst",
                 utility(pb, a.min())),
                ("the average of the K - 1 others divides by K - 1, not K",
                 utility(pb, (a.sum() - best) / k)),
                ("the wrong eps: kRR keeps the argmax with probability e^eps / (e^eps + K - 1)",
                 utility(float(np.exp(eps / 2) / (np.exp(eps / 2) + k - 1)))),
            ],
        )  # fmt: skip
