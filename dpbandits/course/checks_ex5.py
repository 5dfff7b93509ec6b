"""Checks of exercise 5: dyadic decomposition, binary tree mechanism, naive Laplace sums."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
from scipy import stats

from dpbandits.course.checker import CheckFailed, Student
from dpbandits.course.common import CAUSE_LEVEL, fmt, require_same_draws, seed_from
from dpbandits.course.stats import ALPHA, fmt_p, ks_pvalue, laplace_square_moments, z_pvalue


def _require_own_draws(student: Student, name: str, rng: np.random.Generator) -> None:
    """``name(x, 1.0, rng)`` on 16 items draws its noise from the Generator it is given only:
    the same seed gives the same release (:func:`require_same_draws`)."""
    x = rng.random(16)
    require_same_draws(lambda g: student.call(name, x.copy(), 1.0, g), name, seed_from(rng))

#: Horizon of the noise checks: a power of two, where floor(log2 T) + 1 != ceil(log2 T).
T_NOISE = 32
#: Calls of the student's mechanism for the noise checks.
N_CALLS = 4000

WRONG_SPLIT = (
    "the wrong eps split: every item lies in one node per level, so each of the L levels gets "
    "eps / L and the node noise is Laplace(scale = L / eps)"
)


def _nodes(n: int) -> list[tuple[int, int]]:
    return [(lv, (n >> lv) - 1) for lv in range(n.bit_length()) if (n >> lv) & 1]


def _blocks(nodes: Iterable[tuple[int, int]]) -> str:
    return ", ".join(f"{i * 2**lv + 1}-{(i + 1) * 2**lv}" for lv, i in sorted(nodes, reverse=True))


def _as_nodes(value: Any, n: int) -> set[tuple[int, int]]:
    try:
        nodes = [tuple(int(v) for v in node) for node in value]
    except (TypeError, ValueError):
        raise CheckFailed(
            f"`dyadic_decomposition({n})` must return a list of (level, index) pairs"
        ) from None
    if any(len(node) != 2 for node in nodes):
        raise CheckFailed(f"`dyadic_decomposition({n})` must return (level, index) pairs")
    return {(a, b) for a, b in nodes}


def _dyadic_causes(n: int) -> list[tuple[str, set[tuple[int, int]]]]:
    levels = range(n.bit_length())
    return [
        ("an off-by-one in the node index: the block of level l that ends the prefix [1, n] "
         "is node (l, (n >> l) - 1), covering items ((n >> l) - 1) 2^l + 1 .. (n >> l) 2^l",
         {(lv, n >> lv) for lv in levels if (n >> lv) & 1}),
        ("the pairs are (level, index), in that order", {(i, lv) for lv, i in _nodes(n)}),
        ("the top level is missing: the levels of n are 0 .. n.bit_length() - 1",
         {(lv, (n >> lv) - 1) for lv in range(n.bit_length() - 1) if (n >> lv) & 1}),
        ("one node per *set* bit of n: skip the levels whose bit is 0",
         {(lv, (n >> lv) - 1) for lv in levels}),
        ("the wrong index: node (l, i) covers items i 2^l + 1 .. (i + 1) 2^l, so the block "
         "ending the prefix at level l has index (n >> l) - 1",
         {(lv, (n - 1) >> lv) for lv in levels if (n >> lv) & 1}),
        ("the bits of n - 1: the nodes come from the set bits of n itself",
         {(lv, (n >> lv) - 1) for lv in range(max(n - 1, 1).bit_length()) if ((n - 1) >> lv) & 1}),
    ]  # fmt: skip


def check_dyadic_decomposition(student: Student, rng: np.random.Generator) -> None:
    # 13 = 8 + 4 + 1 first: it tells the typical mistakes apart (n = 1 would not).
    for n in (13, *range(1, 301)):
        got = _as_nodes(student.call("dyadic_decomposition", n), n)
        exp = set(_nodes(n))
        if got != exp:
            cause = next((c for c, nodes in _dyadic_causes(n) if nodes == got), None)
            raise CheckFailed(
                f"for n = {n} your nodes are {sorted(got, reverse=True)}, expected "
                f"{sorted(exp, reverse=True)} (items {_blocks(exp)})",
                cause=cause,
            )


def _releases(
    student: Student, name: str, x: np.ndarray, eps: float, rng: np.random.Generator
) -> np.ndarray:
    return Student.floats(student.call(name, x.copy(), eps, rng), (x.size,), name)


def _check_exact(student: Student, name: str, rng: np.random.Generator) -> None:
    """With a huge eps the noise vanishes: the releases must be the prefix sums."""
    x = np.round(rng.random(37), 2)
    eps = 1e9
    got = _releases(student, name, x, eps, rng)
    exact = np.cumsum(x)
    bad = np.abs(got - exact) > 1e-5
    if bad.any():
        n = int(np.flatnonzero(bad)[0]) + 1
        cause = None
        if np.allclose(got, np.r_[0.0, exact[:-1]], atol=1e-5):
            cause = "an off-by-one: release n is S_n = x_1 + ... + x_n, the item x_n included"
        elif np.allclose(got, x, atol=1e-5):
            cause = "the releases are the running sums (np.cumsum), not the items themselves"
        elif np.all(np.abs(got - exact) > 1e3):
            cause = (
                "the noise scale multiplies by eps instead of dividing: a large eps must mean "
                "little noise (scale = ... / eps)"
            )
        raise CheckFailed(
            f"with eps = 1e9 (almost no noise) your release at n = {n} is {fmt(got[n - 1], 6)}, "
            f"the true prefix sum x_1 + ... + x_{n} is {fmt(exact[n - 1], 6)}",
            cause=cause,
        )


def _noise(student: Student, name: str, eps: float, rng: np.random.Generator) -> np.ndarray:
    """``(N_CALLS, T_NOISE)`` errors ``release - prefix sum`` of independent calls."""
    z = np.empty((N_CALLS, T_NOISE))
    for c in range(N_CALLS):
        x = rng.random(T_NOISE)
        z[c] = _releases(student, name, x, eps, rng) - np.cumsum(x)
    return z


Cdf = Callable[[np.ndarray], np.ndarray]


def _laplace_cdf(b: float) -> Cdf:
    return lambda v: np.asarray(stats.laplace.cdf(v, scale=b))


def _require_scale(
    samples: np.ndarray, b: float, what: str, causes: Iterable[tuple[str, Cdf]] = ()
) -> None:
    """Kolmogorov-Smirnov test of ``samples`` against Laplace(``b``); the cause is the
    alternative law of ``causes`` that the samples fit best (p >= CAUSE_LEVEL)."""
    p = ks_pvalue(samples, _laplace_cdf(b))
    if p < ALPHA:
        fits = [(ks_pvalue(samples, cdf), cause) for cause, cdf in causes]
        best = max(fits, default=(0.0, None), key=lambda f: f[0])
        sd = float(np.std(samples))
        raise CheckFailed(
            f"{what} has standard deviation {fmt(sd, 3)}, expected Laplace noise of scale "
            f"{fmt(b, 3)} (sd {fmt(np.sqrt(2) * b, 3)}) (Kolmogorov-Smirnov {fmt_p(p)}, "
            f"{samples.size} draws)",
            cause=best[1] if best[0] >= CAUSE_LEVEL else None,
        )


def _require_square_mean(
    z: np.ndarray, m: int, b: float, what: str, causes: Iterable[tuple[str, int, float]] = ()
) -> None:
    """z-test of the mean of ``z**2`` against a sum of ``m`` Laplace(``b``); the cause is the
    first ``(cause, m', b')`` of ``causes`` whose mean the data fit (p >= CAUSE_LEVEL)."""
    mean, var = laplace_square_moments(m, b)
    got = float(np.mean(z * z))
    p = z_pvalue(got, mean, np.sqrt(var / z.size))
    if p < ALPHA:
        cause = None
        for text, m_alt, b_alt in causes:
            alt_mean, alt_var = laplace_square_moments(m_alt, b_alt)
            if z_pvalue(got, alt_mean, np.sqrt(alt_var / z.size)) >= CAUSE_LEVEL:
                cause = text
                break
        raise CheckFailed(
            f"{what} has variance {fmt(got, 3)}, expected {fmt(mean, 3)} "
            f"(the sum of {m} Laplace noises of scale {fmt(b, 3)}) ({fmt_p(p)}, {z.size} draws)",
            cause=cause,
        )


def _normal_cdf(sd: float) -> Cdf:
    return lambda v: np.asarray(stats.norm.cdf(v, scale=sd))


def check_binary_mechanism(student: Student, rng: np.random.Generator) -> None:
    """Exact sums without noise, Laplace(L/eps) at powers of two, node noise shared and
    nodes independent, variances; draws from ``rng`` only."""
    _check_exact(student, "binary_mechanism", rng)
    eps = 2.0
    levels = T_NOISE.bit_length()  # floor(log2 T) + 1
    b = levels / eps
    z = _noise(student, "binary_mechanism", eps, rng)
    powers = [2**k - 1 for k in range(levels)]  # columns of n = 1, 2, 4, ..., 32
    _require_scale(
        z[:, powers].ravel(),
        b,
        f"with T = {T_NOISE} (L = {levels} levels) and eps = {fmt(eps)}, the error of your "
        "releases at n = 1, 2, 4, ..., 32 (one node each)",
        causes=[
            (f"L = floor(log2 T) + 1 = T.bit_length() levels: ceil(log2 T) = {levels - 1} "
             "misses the level of n = T when T is a power of two",
             _laplace_cdf((levels - 1) / eps)),
            (WRONG_SPLIT + " (yours looks like 1 / eps: the budget is not split)",
             _laplace_cdf(1 / eps)),
            (WRONG_SPLIT + " (yours multiplies by eps instead of dividing)",
             _laplace_cdf(levels * eps)),
            (WRONG_SPLIT + " (yours looks like L / (2 eps))", _laplace_cdf(levels / (2 * eps))),
            (WRONG_SPLIT + " (yours looks like 2 L / eps)", _laplace_cdf(2 * levels / eps)),
            ("Gaussian noise: the binary mechanism adds Laplace noise (rng.laplace)",
             _normal_cdf(float(np.std(z[:, powers])))),
            ("L is fixed by the horizon, L = T.bit_length(), the same for every release (yours "
             "seems to grow with n)", lambda v: np.mean(
                 [stats.laplace.cdf(v, scale=(k + 1) / eps) for k in range(levels)], axis=0)),
        ],
    )  # fmt: skip
    for n1, n2 in ((2, 3), (8, 12)):
        prod = z[:, n1 - 1] * z[:, n2 - 1]
        # X = A, Y = A + B with A, B i.i.d. Laplace(b): E[XY] = 2 b^2, Var[XY] = 24 b^4.
        p = z_pvalue(float(prod.mean()), 2 * b * b, np.sqrt(24 * b**4 / prod.size))
        if p < ALPHA:
            raise CheckFailed(
                f"the releases at n = {n1} and n = {n2} share the node of items 1-{n1}, so "
                f"their errors must have covariance {fmt(2 * b * b, 3)} (2 (L/eps)^2); yours "
                f"have {fmt(prod.mean(), 3)} ({fmt_p(p)})",
                cause="fresh noise at every release: draw each node's noise once and reuse it "
                "in every release that contains the node",
            )
    # n = 1 (node 1-1) and n = 3 (nodes 1-2 and 3-3) share no node: independent errors,
    # E[XY] = 0 and Var[XY] = E X^2 E Y^2 = (2 b^2)(4 b^2).
    prod = z[:, 0] * z[:, 2]
    p = z_pvalue(float(prod.mean()), 0.0, np.sqrt(8 * b**4 / prod.size))
    if p < ALPHA:
        raise CheckFailed(
            f"the releases at n = 1 (node 1-1) and n = 3 (nodes 1-2 and 3-3) share no node, so "
            f"their errors must be uncorrelated; yours have covariance {fmt(prod.mean(), 3)} "
            f"({fmt_p(p)})",
            cause="noise shared by different nodes (one noise per level?): every node "
            "(level, index) gets a noise of its own",
        )
    n = T_NOISE - 1  # 31 = 16 + 8 + 4 + 2 + 1: five nodes
    _require_square_mean(
        z[:, n - 1], bin(n).count("1"), b, f"the error of your release at n = {n}",
        causes=[("L is fixed by the horizon, L = T.bit_length(), the same for every release",
                 5, 5.0 / eps)],
    )  # fmt: skip
    _require_own_draws(student, "binary_mechanism", rng)


def check_naive_prefix_sums(student: Student, rng: np.random.Generator) -> None:
    """Exact sums without noise; Laplace(1/eps) per item; variance 2 n / eps^2 at n = T;
    draws from ``rng`` only."""
    _check_exact(student, "naive_prefix_sums", rng)
    eps = 2.0
    b = 1.0 / eps
    z = _noise(student, "naive_prefix_sums", eps, rng)
    wrong = "noise on the wrong scale: each item gets Laplace(scale = 1 / eps)"
    _require_scale(
        z[:, 0], b, f"at eps = {fmt(eps)}, the error of your first release (one item)",
        causes=[
            (wrong + " (yours looks like 2 / eps)", _laplace_cdf(2 / eps)),
            (wrong + " (yours looks like eps, not 1 / eps)", _laplace_cdf(eps)),
            (wrong + f" (yours looks like T / eps = {T_NOISE} / eps: each item is used once, "
             "so it gets the whole budget)", _laplace_cdf(T_NOISE / eps)),
            ("Gaussian noise: use Laplace noise (rng.laplace)", _normal_cdf(float(np.std(z[:,
            0])))),
        ],
    )  # fmt: skip
    if np.allclose(z[:, -1], T_NOISE * z[:, 0]):
        # One noise for all the items: the error at n is n times the same Laplace draw.
        raise CheckFailed(
            f"at eps = {fmt(eps)}, the error of your release at n = {T_NOISE} is {T_NOISE} times "
            "the error of the first one, in every call",
            cause="one noise shared by all items: draw one per item (size=T)",
        )
    _require_square_mean(
        z[:, -1], T_NOISE, b, f"at eps = {fmt(eps)}, the error of your release at n = {T_NOISE}",
        causes=[
            ("noise on the wrong quantity: add noise to each item once and sum the noisy items; "
             "noise added to each release does not add up", 1, b),
        ],
    )  # fmt: skip
    _require_own_draws(student, "naive_prefix_sums", rng)
