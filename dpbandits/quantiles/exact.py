"""The grid quantile mechanism sampled exactly, without floating point (``sampler="exact"``).

The grid mechanism (``dpbandits.quantiles``, docs/quantiles.md) outputs grid point ``j`` with
probability ``∝ mu_j exp(-eps dist_j / 2)``: ``mu_j = 1`` per grid point ``j = 0..m`` plus
``endpoint_mass (m + 1)`` at ``0`` and ``m``, ``dist_j = dist(q n, [L_j, U_j])`` with
``L_j = #{k < j}`` and ``U_j = #{k <= j}`` for the snapped data ``k``. Its default sampler
computes these weights in float64 and draws by inverse CDF with a 53-bit uniform, which is not
the exact law in the tails (Ilvento 2020, "Implementing the exponential mechanism with base-2
differential privacy"). This one is exact, by rejection:

1. propose ``j`` from the data-independent base measure ``mu`` with integer randomness only:
   an end point's extra mass with probability ``2w / (1 + 2w)`` (an exact rational coin, ``w``
   the float ``endpoint_mass`` read as the rational it is), else ``integers(0, m + 1)``;
2. accept it with probability exactly ``exp(-gamma_j)``, ``gamma_j = (eps/2) dist_j`` a
   ``Fraction`` (``eps`` and ``q`` are floats, so ``eps/2`` and ``q n`` are exact rationals):
   ``floor(gamma_j)`` coins ``exp(-1)`` (vectorised), then, for the few proposals that pass,
   the coin ``exp(-(gamma_j - floor(gamma_j)))`` of Canonne, Kamath and Steinke (2020)
   (``dpbandits.core.exact_sampling``).

The accepted ``j`` has law ``mu_j exp(-gamma_j) / sum_i mu_i exp(-gamma_i)``: the grid
mechanism's law, exactly. Expected work per release: ``mu(all) / sum_j mu_j exp(-gamma_j)``
proposals: at most ``(m + 1)(1 + 2w)`` (some grid point has ``dist = 0`` and mass ``>= 1``), the
case of all-equal data; about ``(1 + 2w) n tanh(eps / 4)`` (``~ (1 + 2w) n eps / 4`` for a
small eps), whatever ``m``, on data spread over the grid; at most ``e`` rational coins
``exp(-fraction)`` on average (a proposal passes the integer part with probability
``exp(-floor(gamma)) <= e exp(-gamma)``). The running time depends on the data: the sampler
makes the output's law exact, not its timing.
"""

from __future__ import annotations

import functools
from fractions import Fraction
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from dpbandits.core.exact_sampling import (
    bernoulli_array,
    bernoulli_exp,
    bernoulli_exp_fractions,
    bernoulli_exp_int,
)

__all__ = ["grid_quantile_exact"]

#: Integer parts of ``gamma`` are stored as int64 up to this cap; the rest stays in the exact
#: residual (a proposal needs ``2**62`` coins ``exp(-1)`` in a row to get there).
_WHOLE_CAP = 2**62
#: Proposals drawn per round at most (all pending releases together): bounds the memory.
_MAX_BATCH = 2**20


class _Tables(NamedTuple):
    """``gamma = (eps/2) |i - q n|`` for ranks ``i = 0..n``, per level: ``floor`` and ``ceil``
    of ``q n`` (L,), the integer parts ``whole`` (L, n+1), ``integral`` (no fractional part),
    and the exact residuals ``gamma - whole`` as numerators over ``den`` (one per level)."""

    floor: NDArray[np.int64]
    ceil: NDArray[np.int64]
    whole: NDArray[np.int64]
    integral: NDArray[np.bool_]
    residual_num: list[list[int]]
    den: list[int]


@functools.lru_cache(maxsize=64)
def _tables(n: int, levels: tuple[float, ...], epsilon: Fraction) -> _Tables:
    half = epsilon / 2
    floors, ceils, whole, integral, nums, dens = [], [], [], [], [], []
    for q in levels:
        qn = Fraction(q) * n  # exact: q is a binary float
        a, b = qn.numerator, qn.denominator
        floors.append(a // b)
        ceils.append(-(-a // b))
        den = half.denominator * b
        # gamma_i = half |i - a/b| = half.numerator |i b - a| / den, in integers
        g = [half.numerator * abs(i * b - a) for i in range(n + 1)]
        w = [min(v // den, _WHOLE_CAP) for v in g]
        r = [v - t * den for v, t in zip(g, w, strict=True)]
        whole.append(w)
        integral.append([v == 0 for v in r])
        nums.append(r)
        dens.append(den)
    return _Tables(
        np.array(floors, dtype=np.int64),
        np.array(ceils, dtype=np.int64),
        np.array(whole, dtype=np.int64).reshape(len(levels), n + 1),
        np.array(integral, dtype=bool).reshape(len(levels), n + 1),
        nums,
        dens,
    )


def grid_quantile_exact(
    k: NDArray[np.int64],
    levels: tuple[float, ...],
    epsilon: Fraction,
    grid_size: int,
    endpoint_mass: float,
    rng: np.random.Generator,
) -> NDArray[np.int64]:
    """Grid index of the eps-DP quantile of each row of sorted snapped data ``k`` (M, n), for
    each level, drawn exactly from the grid mechanism's law (module docstring).

    ``epsilon`` is the exact per-level budget (e.g. ``Fraction(eps) / len(levels)``).  Returns
    (M, L) indices in ``0..grid_size``.
    """
    if epsilon <= 0:
        raise ValueError(f"epsilon must be > 0, got {epsilon!r}")
    m_rows = k.shape[0]
    tab = _tables(k.shape[1], tuple(levels), epsilon)
    w = Fraction(endpoint_mass)
    p_end = 2 * w / (1 + 2 * w)
    out = np.empty((m_rows, len(levels)), dtype=np.int64)
    # rows are searched together with row r's values shifted by r (m + 2): keep that in int64
    chunk = max(1, 2**62 // (grid_size + 2))
    for start in range(0, m_rows, chunk):
        part = k[start : start + chunk]
        out[start : start + chunk] = _rejection(part, tab, p_end, grid_size, rng)
    return out


def _rejection(
    k: NDArray[np.int64], tab: _Tables, p_end: Fraction, m: int, rng: np.random.Generator
) -> NDArray[np.int64]:
    """Rounds of proposals for every pending (row, level) release; each keeps its first
    accepted proposal (the proposals and their coins are i.i.d., so that is one
    rejection-sampling draw; the coins after it are drawn and discarded)."""
    rows, n = k.shape
    n_lev = tab.floor.size
    span = m + 2
    keys = (k + (np.arange(rows, dtype=np.int64) * span)[:, None]).reshape(-1)
    result = np.empty(rows * n_lev, dtype=np.int64)
    pend = np.arange(rows * n_lev)  # release p = row * n_lev + level
    batch = 4  # doubled every round: total work at most twice what the slowest release needs
    while pend.size:
        row, lev = np.divmod(pend, n_lev)
        shape = (pend.size, batch)
        j = rng.integers(0, m + 1, size=shape)  # base mass 1 per grid point ...
        if p_end:  # ... plus endpoint_mass (m + 1) at each end point
            end = bernoulli_array(p_end, j.size, rng).reshape(shape)
            j[end] = m * rng.integers(0, 2, size=int(end.sum()))
        at = j + (row * span)[:, None]
        base = (row * n)[:, None]
        below = np.searchsorted(keys, at, "left") - base  # L_j
        upto = np.searchsorted(keys, at, "right") - base  # U_j
        lv = lev[:, None]
        # dist = L - q n if L > q n, q n - U if U < q n, else 0; the rank says which gamma
        rank = np.where(below > tab.floor[lv], below, np.where(upto < tab.ceil[lv], upto, -1))
        far = rank >= 0
        safe = np.where(far, rank, 0)
        passed = bernoulli_exp_int(np.where(far, tab.whole[lv, safe], 0), rng)
        fraction = far & ~tab.integral[lv, safe]
        # the coin exp(-(gamma - floor(gamma))) where a fractional part is left
        need_p, need_c = np.nonzero(passed & fraction)
        lev_l, rank_l = lev[need_p].tolist(), rank[need_p, need_c].tolist()
        nums = [tab.residual_num[a][r] for a, r in zip(lev_l, rank_l, strict=True)]
        dens = [tab.den[a] for a in lev_l]
        capped = [a >= b for a, b in zip(nums, dens, strict=True)]  # never in practice
        coins = bernoulli_exp_fractions(
            [0 if c else a for a, c in zip(nums, capped, strict=True)], dens, rng
        )
        for t in np.flatnonzero(capped).tolist():
            coins[t] = bernoulli_exp(Fraction(nums[t], dens[t]), rng)
        accept = passed & ~fraction
        accept[need_p, need_c] = coins
        first = np.where(accept.any(axis=1), accept.argmax(axis=1), batch)
        done = first < batch
        result[pend[done]] = j[done, first[done]]
        pend = pend[~done]
        batch = max(1, min(2 * batch, _MAX_BATCH // max(pend.size, 1)))
    return result.reshape(rows, n_lev)
