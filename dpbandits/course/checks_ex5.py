"""Checks of exercise 5: dyadic decomposition, binary tree mechanism, naive Laplace sums."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from scipy import stats

from dpbandits.course.checker import CheckFailed, Student
from dpbandits.course.common import fmt
from dpbandits.course.stats import ALPHA, fmt_p, ks_pvalue, laplace_square_moments, z_pvalue

#: Horizon of the noise checks: a power of two, where floor(log2 T) + 1 != ceil(log2 T).
T_NOISE = 32
#: Calls of the student's mechanism for the noise checks.
N_CALLS = 4000


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


def check_dyadic_decomposition(student: Student, rng: np.random.Generator) -> None:
    for n in range(1, 301):
        got = _as_nodes(student.call("dyadic_decomposition", n), n)
        exp = set(_nodes(n))
        if got != exp:
            raise CheckFailed(
                f"for n = {n} your nodes are {sorted(got, reverse=True)}, expected "
                f"{sorted(exp, reverse=True)} (items {_blocks(exp)})"
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
        raise CheckFailed(
            f"with eps = 1e9 (almost no noise) your release at n = {n} is {fmt(got[n - 1], 6)}, "
            f"the true prefix sum x_1 + ... + x_{n} is {fmt(exact[n - 1], 6)}"
        )


def _noise(student: Student, name: str, eps: float, rng: np.random.Generator) -> np.ndarray:
    """``(N_CALLS, T_NOISE)`` errors ``release - prefix sum`` of independent calls."""
    z = np.empty((N_CALLS, T_NOISE))
    for c in range(N_CALLS):
        x = rng.random(T_NOISE)
        z[c] = _releases(student, name, x, eps, rng) - np.cumsum(x)
    return z


def _laplace_cdf(x: np.ndarray) -> np.ndarray:
    return np.asarray(stats.laplace.cdf(x))


def _require_scale(samples: np.ndarray, b: float, what: str) -> None:
    p = ks_pvalue(samples / b, _laplace_cdf)
    if p < ALPHA:
        sd = float(np.std(samples))
        raise CheckFailed(
            f"{what} has standard deviation {fmt(sd, 3)}, expected Laplace noise of scale "
            f"{fmt(b, 3)} (sd {fmt(np.sqrt(2) * b, 3)}) (Kolmogorov-Smirnov {fmt_p(p)}, "
            f"{samples.size} draws)"
        )


def _require_square_mean(z: np.ndarray, m: int, b: float, what: str) -> None:
    mean, var = laplace_square_moments(m, b)
    p = z_pvalue(float(np.mean(z * z)), mean, np.sqrt(var / z.size))
    if p < ALPHA:
        raise CheckFailed(
            f"{what} has variance {fmt(np.mean(z * z), 3)}, expected {fmt(mean, 3)} "
            f"(the sum of {m} Laplace noises of scale {fmt(b, 3)}) ({fmt_p(p)}, {z.size} draws)"
        )


def check_binary_mechanism(student: Student, rng: np.random.Generator) -> None:
    """Exact sums without noise, Laplace(L/eps) at powers of two, node noise shared, variances."""
    _check_exact(student, "binary_mechanism", rng)
    eps = 1.0
    levels = T_NOISE.bit_length()  # floor(log2 T) + 1
    b = levels / eps
    z = _noise(student, "binary_mechanism", eps, rng)
    powers = [2**k - 1 for k in range(levels)]  # columns of n = 1, 2, 4, ..., 32
    _require_scale(
        z[:, powers].ravel(),
        b,
        f"with T = {T_NOISE} (L = {levels} levels) and eps = {fmt(eps)}, the error of your "
        "releases at n = 1, 2, 4, ..., 32 (one node each)",
    )
    for n1, n2 in ((2, 3), (8, 12)):
        prod = z[:, n1 - 1] * z[:, n2 - 1]
        # X = A, Y = A + B with A, B i.i.d. Laplace(b): E[XY] = 2 b^2, Var[XY] = 24 b^4.
        p = z_pvalue(float(prod.mean()), 2 * b * b, np.sqrt(24 * b**4 / prod.size))
        if p < ALPHA:
            raise CheckFailed(
                f"the releases at n = {n1} and n = {n2} share the node of items 1-{n1}, so "
                f"their errors must have covariance {fmt(2 * b * b, 3)} (2 (L/eps)^2); yours "
                f"have {fmt(prod.mean(), 3)} ({fmt_p(p)}): draw each node's noise once and "
                "reuse it"
            )
    n = T_NOISE - 1  # 31 = 16 + 8 + 4 + 2 + 1: five nodes
    _require_square_mean(z[:, n - 1], bin(n).count("1"), b, f"the error of your release at n = {n}")


def check_naive_prefix_sums(student: Student, rng: np.random.Generator) -> None:
    """Exact sums without noise; Laplace(1/eps) per item; variance 2 n / eps^2 at n = T."""
    _check_exact(student, "naive_prefix_sums", rng)
    eps = 2.0
    b = 1.0 / eps
    z = _noise(student, "naive_prefix_sums", eps, rng)
    _require_scale(z[:, 0], b, f"at eps = {fmt(eps)}, the error of your first release (one item)")
    _require_square_mean(
        z[:, -1], T_NOISE, b, f"at eps = {fmt(eps)}, the error of your release at n = {T_NOISE}"
    )
