"""DP quantiles (Smith's exponential mechanism) and windowed sensitivities (App. H, SPEC §3).

- :func:`dp_quantile` -- one eps-DP quantile per leading index of ``x`` (batched);
- :func:`dp_quantiles` -- several levels of the same data, eps split equally (sequential
  composition);
- :class:`WindowedSensitivity` -- the App. H sensitivity estimate of every (replication, arm):
  ``d[a] = max(|p_0.9 - p_0.1|, floor)`` from disjoint windows of ``w`` rewards.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpbandits.continual import _check_bounds, _check_count, _check_positive, _check_pulls

__all__ = ["WindowedSensitivity", "dp_quantile", "dp_quantiles"]


def _check_level(q: Any, name: str = "q") -> float:
    try:
        qf = float(q)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a real number, got {q!r}") from None
    if not 0.0 <= qf <= 1.0:
        raise ValueError(f"{name} must be in [0, 1], got {q!r}")
    return qf


def _intervals(
    x: NDArray[np.float64], lo: float, hi: float, clip: bool = True
) -> NDArray[np.float64]:
    """Sorted clipped data with end points: ``z_0 = lo <= z_1 <= ... <= z_n <= z_{n+1} = hi``.

    ``clip=False`` when ``x`` is already inside ``[lo, hi]``.
    """
    z = np.empty(x.shape[:-1] + (x.shape[-1] + 2,))
    z[..., 0] = lo
    z[..., -1] = hi
    if clip:
        np.clip(x, lo, hi, out=z[..., 1:-1])
    else:
        z[..., 1:-1] = x
    z[..., 1:-1].sort(axis=-1)
    return z


def _utility(n: int, levels: Sequence[float], epsilon: float) -> NDArray[np.float64]:
    """``eps u_i / 2`` with ``u_i = -|i - q n|``, ``i = 0..n``, one row per level (L, n+1)."""
    i = np.arange(n + 1)
    return np.stack([(-0.5 * epsilon) * np.abs(i - q * n) for q in levels])


def _exponential_quantile(
    z: NDArray[np.float64],
    util: NDArray[np.float64],
    rng: np.random.Generator,
    exp_util: NDArray[np.float64] | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Smith's mechanism on end points ``z`` (..., n+2) for the L rows of ``util`` (L, n+1).

    Interval ``i`` (``0..n``) is ``[z_i, z_{i+1}]``; it is chosen with probability
    proportional to ``(z_{i+1} - z_i) exp(util_i)``.  Since ``util <= 0`` these weights are
    computed directly when no row's total underflows (the common case, and cheap); otherwise in
    log space, shifted by the maximum before exponentiating, where ``log 0 = -inf``.  Either
    way zero-width intervals get weight exactly 0.  The interval is drawn by inverse CDF with a
    target in ``(0, total]``, so a zero-weight interval (flat cumulative sum) is never chosen.
    The output is uniform on the chosen interval.  Returns (values, intervals), each of shape
    (..., L).  ``exp_util`` = ``exp(util)`` may be passed precomputed.
    """
    lead = z.shape[:-1]
    n2 = z.shape[-1]
    z2 = z.reshape(-1, n2)
    m, n_lev = z2.shape[0], util.shape[0]
    width = z2[:, 1:] - z2[:, :-1]
    # fast path: weights width * exp(util) directly (exp(util) <= 1, util max is ~0); used when
    # every row's total weight is far from underflow, else the log-space path below
    weights = width[:, None, :] * (np.exp(util) if exp_util is None else exp_util)
    cum = np.cumsum(weights, axis=-1)
    if np.minimum.reduce(cum[..., -1], axis=None) < 1e-250:
        logw = np.full(width.shape, -np.inf)
        np.log(width, out=logw, where=width > 0)
        logits = logw[:, None, :] + util  # (M, L, n+1)
        logits -= logits.max(axis=-1, keepdims=True)
        np.exp(logits, out=logits)
        cum = np.cumsum(logits, axis=-1)
    uu = rng.random((m, n_lev, 2))  # one draw for the interval, one for the point in it
    target = (1.0 - uu[..., :1]) * cum[..., -1:]
    i = (cum < target).sum(axis=-1)  # first index with cum >= target
    flat = (np.arange(m) * n2)[:, None] + i
    zf = z2.reshape(-1)
    left, right = zf[flat], zf[flat + 1]
    u = uu[..., 1]
    # left + u (right - left) could round one ulp past ``right``; keep it inside the interval
    value = np.minimum(left + u * (right - left), right)
    return value.reshape(lead + (n_lev,)), i.reshape(lead + (n_lev,))


def dp_quantile(
    x: ArrayLike,
    q: float,
    epsilon: float,
    lo: float,
    hi: float,
    rng: np.random.Generator | int | None = None,
) -> NDArray[np.float64] | float:
    """eps-DP ``q``-quantile of the last axis of ``x`` by Smith's exponential mechanism (SPEC §3).

    ``x`` (..., n) is clipped to ``[lo, hi]`` and sorted; with ``z_0 = lo`` and ``z_{n+1} = hi``,
    interval ``i`` is chosen with probability ``∝ (z_{i+1} - z_i) exp(-eps |i - q n| / 2)`` and a
    uniform point of it is returned (utility sensitivity 1 for replace-one neighbours, fixed n;
    used in App. H for the 0.1/0.9 reward quantiles).  One independent draw per leading index;
    returns an array of shape ``x.shape[:-1]`` (a float for 1-d ``x``), always in ``[lo, hi]``.
    Degenerate data (all equal, n = 1, even n = 0) are fine: the end points keep the total width
    ``hi - lo > 0``.  NaN in ``x`` raises ValueError (values outside ``[lo, hi]`` are clipped).
    """
    qf = _check_level(q)  # checked here so that the error names ``q``, not ``qs``
    value = dp_quantiles(x, [qf], epsilon, lo, hi, rng)[..., 0]  # one level: all of epsilon
    return float(value) if value.ndim == 0 else value


def dp_quantiles(
    x: ArrayLike,
    qs: Sequence[float] | ArrayLike,
    epsilon: float,
    lo: float,
    hi: float,
    rng: np.random.Generator | int | None = None,
) -> NDArray[np.float64]:
    """Several DP quantiles of the same data, each with ``epsilon / len(qs)`` (SPEC §3).

    Sequential composition: the whole vector is eps-DP.  Returns shape ``x.shape[:-1] +
    (len(qs),)``; the data are sorted once.
    """
    levels = [_check_level(q, "qs") for q in np.atleast_1d(np.asarray(qs, dtype=np.float64))]
    if not levels:
        raise ValueError("qs must contain at least one quantile level")
    eps = _check_positive(epsilon)
    lo_f, hi_f = _check_bounds(lo, hi)
    xa = np.asarray(x, dtype=np.float64)
    if xa.ndim == 0:
        raise ValueError("x must have at least one axis (the data axis)")
    if np.isnan(xa).any():
        raise ValueError("x must not contain NaN")
    gen = np.random.default_rng(rng)
    util = _utility(xa.shape[-1], levels, eps / len(levels))
    return _exponential_quantile(_intervals(xa, lo_f, hi_f), util, gen)[0]


class WindowedSensitivity:
    """Windowed DP sensitivity estimate of every (replication, arm) (App. H, SPEC §3).

    Each arm's rewards (clipped to ``[lo, hi]``) fill a buffer; when ``window`` new rewards have
    arrived, ``p_lo, p_hi = dp_quantiles(buffer, levels, epsilon)`` (``epsilon`` = eps_p for the
    pair, split equally: eps_p/2 each), ``d[a] = max(|p_hi - p_lo|, floor)`` and the buffer is
    emptied -- each reward is used in exactly one estimate, so the pairs are computed on
    disjoint data (App. H).  Before the first estimate ``d[a] = initial`` (default ``hi - lo``).

    ``update(actions (R,), rewards (R,))`` is O(R) numpy per step; estimates run only for the
    buffers that filled in this step, batched.  ``values`` (R, K) current estimates,
    ``n_estimates`` (R, K) number of quantile pairs released per (replication, arm) -- what the
    privacy ledger records.  NaN rewards raise ValueError.
    """

    def __init__(
        self,
        n_runs: int,
        n_arms: int,
        epsilon: float,
        lo: float = 0.0,
        hi: float = 1.0,
        window: int = 200,
        levels: Sequence[float] = (0.1, 0.9),
        floor: float = 1e-6,
        initial: float | None = None,
        rng: np.random.Generator | int | None = None,
    ) -> None:
        self.n_runs = _check_count(n_runs, "n_runs")
        self.n_arms = _check_count(n_arms, "n_arms")
        self.epsilon = _check_positive(epsilon)
        self.lo, self.hi = _check_bounds(lo, hi)
        self.window = _check_count(window, "window")
        lv = tuple(levels)
        if len(lv) != 2:
            raise ValueError(f"levels must be a pair of quantile levels, got {levels!r}")
        self.levels = (_check_level(lv[0], "levels"), _check_level(lv[1], "levels"))
        self.floor = float(floor)
        if not math.isfinite(self.floor) or self.floor <= 0:
            raise ValueError(f"floor must be finite and > 0, got {floor!r}")
        self.initial = self.hi - self.lo if initial is None else float(initial)
        if not math.isfinite(self.initial) or self.initial <= 0:
            raise ValueError(f"initial must be finite and > 0, got {initial!r}")
        self._rng = np.random.default_rng(rng)
        s = self.n_runs * self.n_arms
        self._base = np.arange(self.n_runs, dtype=np.intp) * self.n_arms
        self._buf = np.empty((s, self.window))
        self._buf_flat = self._buf.reshape(-1)
        self._fill = np.zeros(s, dtype=np.int64)
        self._values = np.full(s, self.initial)
        self._n_est = np.zeros(s, dtype=np.int64)
        # eps_p split equally between the two levels (sequential composition)
        self._util = _utility(self.window, self.levels, self.epsilon / 2)
        self._exp_util = np.exp(self._util)
        self._row_offsets = (np.arange(s) * (self.window + 2))[:, None]

    def __repr__(self) -> str:
        return (
            f"WindowedSensitivity(n_runs={self.n_runs}, n_arms={self.n_arms}, "
            f"epsilon={self.epsilon}, lo={self.lo}, hi={self.hi}, window={self.window}, "
            f"levels={self.levels}, floor={self.floor}, initial={self.initial})"
        )

    @property
    def values(self) -> NDArray[np.float64]:
        """Current sensitivity estimates d (R, K)."""
        return self._values.reshape(self.n_runs, self.n_arms).copy()

    @property
    def n_estimates(self) -> NDArray[np.int64]:
        """Number of quantile pairs released so far per (replication, arm), (R, K)."""
        return self._n_est.reshape(self.n_runs, self.n_arms).copy()

    @property
    def fill(self) -> NDArray[np.int64]:
        """Rewards waiting in each buffer (not yet used in any estimate), (R, K)."""
        return self._fill.reshape(self.n_runs, self.n_arms).copy()

    def update(self, actions: ArrayLike, rewards: ArrayLike) -> None:
        """Record one reward per replication; estimate where a window just filled."""
        a, x = _check_pulls(actions, rewards, self.n_runs, self.n_arms, self.lo, self.hi)
        self.update_flat(self._base + a, x)

    def update_flat(self, flat: NDArray[np.intp], x: NDArray[np.float64]) -> None:
        """:meth:`update` on validated input (the agents' hot path): ``flat[r] = r K +
        actions[r]`` and ``x`` the rewards already clipped to ``[lo, hi]``; no checks."""
        pos = self._fill.take(flat)
        self._buf_flat.put(flat * self.window + pos, x)
        pos += 1
        self._fill.put(flat, pos)
        if np.maximum.reduce(pos) == self.window:
            self._estimate(flat[pos == self.window])

    @property
    def current(self) -> NDArray[np.float64]:
        """The current estimates (R, K) without a copy (read-only use; see :attr:`values`)."""
        return self._values.reshape(self.n_runs, self.n_arms)

    def _estimate(self, full: NDArray[np.intp]) -> None:
        """Estimate the streams ``full`` whose windows just filled; empty their buffers.

        Same mechanism as ``dp_quantiles(buffer, levels, eps_p)`` (both levels at once, eps_p/2
        each), written for the per-step hot path: no re-validation, ``exp(util)`` precomputed,
        the buffers are already clipped.  Falls back to the general log-space code if a row's
        total weight could underflow.
        """
        z = _intervals(self._buf[full], self.lo, self.hi, clip=False)  # clipped in update
        weights = np.diff(z, axis=1)[:, None, :] * self._exp_util  # (m, 2, w+1)
        cum = np.cumsum(weights, axis=2)
        total = cum[:, :, -1:]
        if np.minimum.reduce(total, axis=None) < 1e-250:
            p = _exponential_quantile(z, self._util, self._rng)[0]
        else:
            uu = self._rng.random((full.size, 2, 2))
            i = (cum < (1.0 - uu[:, :, :1]) * total).sum(axis=2)  # (m, 2)
            i += self._row_offsets[: full.size]
            zf = z.reshape(-1)
            left = zf[i]
            right = zf[i + 1]
            p = np.minimum(left + uu[:, :, 1] * (right - left), right)
        self._values[full] = np.maximum(np.abs(p[:, 1] - p[:, 0]), self.floor)
        self._n_est[full] += 1
        self._fill[full] = 0  # each reward is used in exactly one estimate
