"""Change-point tests of the piecewise-stationary bandit agents, compiled: the one home of the
Bernoulli GLR test of GLR-klUCB, the two-sided CUSUM test of CUSUM-UCB, the window test of M-UCB
and the data-independent forced-exploration schedule they share.

Scalar kernels (``dpbandits.core.jit``) that an agent's compiled step calls per replication and
arm; each takes the few numbers its statistic needs, so an agent keeps its own layout of them.

- :func:`glr_bernoulli` -- the Bernoulli generalized likelihood ratio of a change after the
  ``s``-th of ``n`` observations, ``s kl(mu_1:s, mu_1:n) + (n - s) kl(mu_s+1:n, mu_1:n)``
  (Besson, Kaufmann, Maillard & Seznec, JMLR 2022, Definition of the B-GLRT, the statistic of
  their Algorithm 1 (GLR-klUCB)); :func:`glr_split` is the same on integer counts through a
  table of ``i ln i`` (:func:`xlogx_table`), and :func:`glr_detect` its maximum over the
  split points ``s = ds, 2 ds, ...`` below ``n`` compared with the threshold
  :func:`glr_threshold` ``beta(n, delta) = ln(3 n^(3/2) / delta)``, the threshold the authors
  recommend in practice (their Lemma on false alarms proves a larger one);
- :func:`cusum_step` -- one step of the two-sided CUSUM of Liu, Lee & Shroff (AAAI 2018,
  Algorithm 2): ``g+ = max(0, g+ + u0 - y - eps)``, ``g- = max(0, g- + y - u0 - eps)``, with
  ``u0`` the mean of the arm's first ``M`` observations; an alarm when either reaches ``h``;
- :func:`window_push` / :func:`window_alarm` -- the test of M-UCB (Cao, Wen, Kveton & Xie,
  AISTATS 2019, Algorithm 1, "CD(w, b)"): with the last ``w`` observations of an arm (``w``
  even), an alarm when ``|sum of the newer half - sum of the older half| > b``;
- :func:`forced_arm` -- the deterministic forced exploration of M-UCB (Cao et al., Algorithm
  2) and GLR-klUCB (Besson et al., Algorithm 1): with ``P = floor(K / alpha)``, the step
  ``since`` (0-based, counted from the last restart for M-UCB, from the start for GLR-klUCB)
  plays arm ``since mod P`` when that is below ``K``. In the papers' 1-based time ``t``, ``t mod
  P in {1, .., K}`` plays arm ``t mod P``: the same arms, every arm including the last once
  per period (``P > K``; ``P <= K`` explores at every step).

Every statistic is a function of an arm's own observations since its last restart, so the same
kernels serve a private agent that runs them on its released (noisy) sums -- with its own
threshold, calibrated for that noise.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpbandits.core.jit import kernel

__all__ = [
    "cusum_step",
    "forced_arm",
    "FORCED_PERIOD_CAP",
    "forced_period",
    "glr_bernoulli",
    "glr_detect",
    "glr_split",
    "glr_threshold",
    "window_alarm",
    "window_push",
    "xlogx_table",
]


# -- Bernoulli GLR (Besson et al. 2022) --------------------------------------------------------
@kernel
def _xlogx(x: float) -> float:
    return x * math.log(x) if x > 0.0 else 0.0


@kernel
def _count_term(k: float, m: float) -> float:
    """``k ln(k/m) + (m - k) ln((m - k)/m) = -m H(k/m)`` for ``0 <= k <= m``, ``m > 0``: the
    log-likelihood of ``k`` successes in ``m`` Bernoulli draws at their own mean."""
    return _xlogx(k) + _xlogx(m - k) - _xlogx(m)


@kernel
def glr_bernoulli(s: float, sum_s: float, n: float, sum_n: float) -> float:
    """``s kl(sum_s / s, sum_n / n) + (n - s) kl((sum_n - sum_s) / (n - s), sum_n / n)`` for
    ``0 < s < n`` and sums in ``[0, s]``, ``[0, n]``: the log of the Bernoulli GLR of a change
    after the ``s``-th of ``n`` observations (Besson et al. 2022, eq. of ``log GLR(n)``). Written
    as ``-s H(mu_1:s) - (n - s) H(mu_s+1:n) + n H(mu_1:n)`` (the two ``kl`` share ``mu_1:n``, so
    its logarithms cancel), which is 0 when the two means are equal and never negative."""
    out = _count_term(sum_s, s) + _count_term(sum_n - sum_s, n - s) - _count_term(sum_n, n)
    return out if out > 0.0 else 0.0


def xlogx_table(n_max: int) -> NDArray[np.float64]:
    """``i ln i`` for ``i = 0 .. n_max`` (``0 ln 0 = 0``): :func:`glr_split`'s table."""
    i = np.arange(n_max + 1, dtype=np.float64)
    out = np.zeros(n_max + 1)
    out[1:] = i[1:] * np.log(i[1:])
    return out


@kernel
def glr_split(table: Any, s: int, k_s: int, n: int, k_n: int) -> float:
    """:func:`glr_bernoulli` for integer counts: ``k_s`` ones among the first ``s`` of ``n``
    Bernoulli observations, ``k_n`` among all, from ``table[i] = i ln i`` (six look-ups instead
    of six logarithms). Equal to :func:`glr_bernoulli` up to the rounding of the table (about
    ``1e-16 n ln n``)."""
    k2, m2 = k_n - k_s, n - s
    out = (table[k_s] + table[s - k_s] - table[s]) + (table[k2] + table[m2 - k2] - table[m2])
    out -= table[k_n] + table[n - k_n] - table[n]
    return out if out > 0.0 else 0.0


@kernel
def glr_threshold(n: float, delta: float) -> float:
    """``beta(n, delta) = ln(3 n^(3/2) / delta)``, the GLR threshold Besson et al. (2022) use
    in practice (section on the choice of the threshold; Lemma on false alarms proves
    ``2 T(ln(3 n sqrt(n) / delta) / 2) + 6 ln(1 + ln n)``, larger)."""
    return math.log(3.0 * n * math.sqrt(n) / delta)


@kernel
def glr_detect(table: Any, prefix: Any, n: int, k_n: int, ds: int, threshold: float) -> int:
    """The first split ``s`` in ``ds, 2 ds, ...`` below ``n`` whose :func:`glr_split` reaches
    ``threshold``, or 0 if none does. ``prefix[j]`` is the number of ones among the first
    ``j ds`` observations (the agents keep these only: ``n / ds`` numbers per arm); ``k_n``
    among all ``n``. ``ds = 1`` scans every split of the definition (Besson et al. scan ``s``
    from 1 to ``n - 1``); a larger ``ds`` is their "Delta s" speed-up (appendix on speeding up
    the test; ``ds = 10`` in their experiments)."""
    j = 1
    s = ds
    while s < n:
        if glr_split(table, s, int(prefix[j]), n, k_n) >= threshold:
            return s
        j += 1
        s += ds
    return 0


# -- two-sided CUSUM (Liu, Lee & Shroff 2018) --------------------------------------------------
@kernel
def cusum_step(g_plus: float, g_minus: float, y: float, u0: float,
               eps: float) -> tuple[float, float]:  # fmt: skip
    """One observation ``y`` after the first ``M`` (whose mean is ``u0``) of the two-sided
    CUSUM (Liu et al. 2018, Algorithm 2): ``s+ = u0 - y - eps``, ``s- = y - u0 - eps``,
    ``g+ = max(0, g+ + s+)``, ``g- = max(0, g- + s-)``. The test raises an alarm when ``g+ >=
    h`` or ``g- >= h``: ``g+`` grows when the mean falls by more than ``eps``, ``g-`` when it
    rises."""
    gp = g_plus + (u0 - y - eps)
    gm = g_minus + (y - u0 - eps)
    return (gp if gp > 0.0 else 0.0), (gm if gm > 0.0 else 0.0)


# -- M-UCB's window test (Cao et al. 2019) -----------------------------------------------------
@kernel
def window_push(window: Any, halves: Any, n: int, y: float) -> None:
    """Record the ``n``-th observation ``y`` (``n >= 1``) of an arm in its ring ``window``
    (``w`` slots, ``w`` even: observation ``i`` in slot ``(i - 1) mod w``) and keep
    ``halves = [sum of the older w/2, sum of the newer w/2]`` of the last ``w``
    (fewer while ``n < w``). The two sums are recomputed from the window every ``w``
    observations, so rounding errors of adding and removing cannot accumulate."""
    w = window.shape[0]
    half = w // 2
    slot = (n - 1) % w
    if n > w:
        halves[0] -= window[slot]  # observation n - w leaves the window
    window[slot] = y
    halves[1] += y
    if n > half:  # observation n - w/2 moves from the newer half to the older one
        m = window[(n - 1 - half) % w]
        halves[1] -= m
        halves[0] += m
    if slot == w - 1:  # a full turn: the older half is slots 0 .. w/2 - 1
        older = 0.0
        newer = 0.0
        for i in range(half):
            older += window[i]
            newer += window[half + i]
        halves[0] = older
        halves[1] = newer


@kernel
def window_alarm(halves: Any, n: int, w: int, b: float) -> bool:
    """M-UCB's change test (Cao et al. 2019, Algorithm 1): with at least ``w`` observations,
    ``|newer half - older half| > b``."""
    return n >= w and abs(halves[1] - halves[0]) > b


# -- forced exploration (Cao et al. 2019; Besson et al. 2022) ----------------------------------
#: The largest period :func:`forced_period` returns: exact in a float64 and an int64.
FORCED_PERIOD_CAP = 2**53


def forced_period(n_arms: int, alpha: float) -> int:
    """``floor(K / alpha)`` (at least 1), the period of :func:`forced_arm`; 0 for ``alpha =
    0`` (no forced exploration).

    Capped at ``2**53``: the agents keep the period in a float64 parameter array and the
    kernel reads it as an int64, so a tiny ``alpha`` (``K / alpha`` past 2**63, or inf) would
    otherwise wrap to a negative period and silently switch forced exploration off. No run
    reaches step 2**53, so the capped period forces exactly the same steps (the first K)."""
    if alpha <= 0.0:
        return 0
    ratio = n_arms / alpha
    return max(1, math.floor(ratio) if ratio < FORCED_PERIOD_CAP else FORCED_PERIOD_CAP)


@kernel
def forced_arm(since: int, period: int, n_arms: int) -> int:
    """The arm step ``since`` must explore (module docstring), or -1 if it is free."""
    if period <= 0:
        return -1
    a = since % period
    return a if a < n_arms else -1
