"""A change test on released Laplace-noised sums, compiled: the detector of the private agents for
piecewise-stationary bandits (:mod:`agents.private_shift`; docs/private-shift.md).

An arm's releases are pairs ``(S~_i, n_i)``: the sum of a batch of ``n_i`` rewards in ``[0, 1]``
plus one ``Lap(b)`` variable, ``b = 1 / eps``. The test looks at the last ``k`` releases of an
arm, oldest first, and asks for every split ``s = 1 .. k - 1`` whether the pooled mean of the
first ``s`` releases, ``m_1 = (S~_1 + .. + S~_s) / N_1``, and that of the others, ``m_2``, differ
by more than the two parts of ``m_1 - m_2`` can deviate when nothing changed (the rewards of
one arm i.i.d. with mean ``mu``):

- the rewards: ``(X-bar_1 - mu) - (X-bar_2 - mu)`` is sub-Gaussian with variance proxy ``(1/N_1
  + 1/N_2) / 4`` (Hoeffding), so it exceeds ``sqrt(L (1/N_1 + 1/N_2) / 2)`` with probability at
  most ``e^-L``;
- the noise: ``sum_i w_i Z_i`` with ``Z_i`` standard Laplace and weights ``w_i = b / N_1`` or
  ``-b / N_2``. A Laplace variable's log moment generating function ``-ln(1 - l^2 w^2)`` is at
  most ``2 l^2 w^2`` for ``|l w| <= 1/sqrt(2)``, so the sum is sub-exponential with ``nu^2 = 4
  sum w_i^2`` on ``|l| <= 1 / (sqrt(2) w_max)``, and Chernoff's bound gives the deviation
  :func:`laplace_deviation`: ``sqrt(2 nu^2 L)`` when that is in the sub-Gaussian range, else
  ``sqrt(2) w_max L + nu^2 / (2 sqrt(2) w_max)`` (Wainwright 2019, Proposition 2.9, with these
  constants), exceeded with probability at most ``e^-L``.

The test fires when ``|m_1 - m_2|`` exceeds the sum of the two deviations at the level ``L = ln(3
k^(3/2) / delta)`` (:func:`detection_level`; the ``k^(3/2)`` as in the threshold Besson, Kaufmann,
Maillard & Seznec (JMLR 2022) recommend for their GLR test), for the splits whose newer side
holds 1, 2, 3, 4, 6, 8, 12, 16, ... releases (a geometric grid, as GLR implementations
subsample their split points): a split of a stationary arm passes it with probability at most
``4 e^-L``, one test (at most ``k - 1`` splits) at most ``4 delta / (3 sqrt(k))``. Over the
many tests of a long run that is no guarantee; the false-alarm rates measured without a change
are in docs/private-shift.md.

The test reads the releases only: it is post-processing of them and costs no privacy.
"""

from __future__ import annotations

import math
from typing import Any

from dpbandits.core.jit import kernel

__all__ = [
    "laplace_deviation",
    "minimum_cap",
    "split_threshold",
    "detection_level",
    "detect_change",
]

_SQRT2 = math.sqrt(2.0)


@kernel
def detection_level(k: float, delta: float) -> float:
    """The level ``L = ln(3 k^(3/2) / delta)`` of a test over the last ``k`` releases."""
    return math.log(3.0 * k * math.sqrt(k) / delta)


@kernel
def laplace_deviation(nu2: float, w_max: float, level: float) -> float:
    """The deviation exceeded with probability at most ``e^-level`` by ``sum_i w_i Z_i``, ``Z_i``
    i.i.d. standard Laplace, ``nu2 = 4 sum_i w_i^2``, ``w_max = max_i |w_i|`` (module
    docstring)."""
    x = math.sqrt(2.0 * nu2 * level)
    if x * w_max * _SQRT2 <= nu2:  # the optimal Chernoff parameter x / nu2 is in range
        return x
    return _SQRT2 * w_max * level + nu2 / (2.0 * _SQRT2 * w_max)


@kernel
def split_threshold(n1: float, k1: float, n2: float, k2: float, b: float,
                    level: float) -> float:  # fmt: skip
    """The largest ``|m_1 - m_2|`` a stationary arm reaches with probability at most ``2 e^-level``
    per side, for ``k1`` releases of ``n1`` rewards against ``k2`` of ``n2``, noise scale
    ``b``: Hoeffding's deviation plus :func:`laplace_deviation`."""
    rewards = math.sqrt(0.5 * level * (1.0 / n1 + 1.0 / n2))
    if b == 0.0:
        return rewards
    nu2 = 4.0 * b * b * (k1 / (n1 * n1) + k2 / (n2 * n2))
    return rewards + laplace_deviation(nu2, b / min(n1, n2), level)


@kernel
def _on_grid(j: int) -> bool:
    """Whether ``j >= 1`` is ``2^i`` or ``3 2^i``: 1, 2, 3, 4, 6, 8, 12, 16, 24, ..."""
    while j % 2 == 0:
        j //= 2
    return j == 1 or j == 3


@kernel
def detect_change(arms: Any, r: int, a: int, base: int, size: int, head: int, k: int,
                  total_sum: float, total_n: float, b: float, delta: float) -> bool:  # fmt: skip
    """Whether the last ``k`` releases of arm ``a`` of replication ``r`` hold a change (module
    docstring). The releases ``(S~, n)`` are kept in a circular buffer of ``size`` pairs in
    ``arms[r, a, base:]`` (``S~`` at ``base + 2 i``, ``n`` at ``base + 2 i + 1``) whose oldest
    entry is slot ``head``; ``total_sum`` and ``total_n`` are the sums of their ``S~`` and
    ``n``. The splits tried are those whose newer side holds ``j = 1, 2, 3, 4, 6, 8, 12, ...``
    releases (a geometric grid: ``O(log k)`` splits per test, each within a factor 1.5 of any
    other split point); a split is skipped at once when ``|m_1 - m_2|`` is below the
    rewards' part of the threshold, which needs no square root."""
    if k < 2:
        return False
    level = detection_level(float(k), delta)
    s2 = 0.0
    n2 = 0.0
    i = head + k - 1
    if i >= size:
        i -= size
    for j in range(1, k):  # the newer side: the last j releases
        s2 += arms[r, a, base + 2 * i]
        n2 += arms[r, a, base + 2 * i + 1]
        i = i - 1 if i > 0 else size - 1
        if not _on_grid(j):
            continue
        n1 = total_n - n2
        gap = (total_sum - s2) / n1 - s2 / n2
        inv = 1.0 / n1 + 1.0 / n2
        if gap * gap <= 0.5 * level * inv:
            continue
        if abs(gap) > split_threshold(n1, float(k - j), n2, float(j), b, level):
            return True
    return False


def minimum_cap(epsilon: float, delta: float, window: int) -> int:
    """The smallest batch length ``cap`` with which the test can see a change at all: a full
    window of ``window`` releases of ``cap`` rewards each, split in the middle, detects a jump
    of the whole reward range (``|m_1 - m_2| = 1``) only if the threshold is below 1. Below it
    no change is ever detected (about ``2.5 / epsilon`` for ``window = 64``, ``delta =
    0.01``)."""
    half = window // 2
    k1, k2 = float(half), float(window - half)
    level = float(detection_level(float(window), delta))
    b = 1.0 / epsilon
    cap = 1
    while split_threshold(k1 * cap, k1, k2 * cap, k2, b, level) >= 1.0:
        cap *= 2
    lo, hi = cap // 2 + 1, cap  # the smallest cap in (cap / 2, cap] that works
    while lo < hi:
        mid = (lo + hi) // 2
        if split_threshold(k1 * mid, k1, k2 * mid, k2, b, level) < 1.0:
            hi = mid
        else:
            lo = mid + 1
    return max(lo, 1)
