"""K-armed bandit whose means drift with time (App. H-1 general form).

The means are any function of the 0-based step ``t``; :func:`linear_drift` and
:func:`sinusoidal_drift` build the two usual ones.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from envs.base import BanditEnv, BanditVectorEnv
from envs.core import (
    FloatArray,
    Schedule,
    as_vector,
    check_arm,
    check_bounds,
    check_int,
    evaluate_schedule,
)

DriftFn = Callable[[npt.NDArray[np.int64]], npt.ArrayLike]


def linear_drift(start: npt.ArrayLike, end: npt.ArrayLike, t_end: int, t_start: int = 0) -> DriftFn:
    """Means moving linearly from ``start`` (at step ``t_start``) to ``end`` (at ``t_end``).

    Constant at ``start`` before ``t_start`` and at ``end`` after ``t_end``. ``start``/``end``
    are per-arm vectors (or scalars). Returns a vectorised callable ``t (n,) -> (n, K)``.
    """
    t_start = check_int("t_start", t_start, minimum=0)
    t_end = check_int("t_end", t_end)
    if t_end <= t_start:
        raise ValueError(f"t_end must be > t_start, got t_start={t_start}, t_end={t_end}")
    a = np.atleast_1d(np.asarray(start, dtype=np.float64))
    b = np.atleast_1d(np.asarray(end, dtype=np.float64))
    if a.ndim != 1 or b.ndim != 1 or not (a.size == b.size or 1 in (a.size, b.size)):
        raise ValueError(f"start and end must be per-arm vectors of one length, got {a}, {b}")

    def means(t: npt.NDArray[np.int64]) -> FloatArray:
        frac = np.clip((np.asarray(t, dtype=np.float64) - t_start) / (t_end - t_start), 0.0, 1.0)
        return np.asarray(a + (b - a) * frac[:, None], dtype=np.float64)

    return means


def sinusoidal_drift(
    center: npt.ArrayLike, amplitude: npt.ArrayLike, period: float, phase: npt.ArrayLike = 0.0
) -> DriftFn:
    """Means ``center + amplitude * sin(2 pi t / period + phase)``, per arm (broadcast).

    Returns a vectorised callable ``t (n,) -> (n, K)``.
    """
    period = float(period)
    if not (np.isfinite(period) and period > 0):
        raise ValueError(f"period must be finite and > 0, got {period}")
    c, amp, ph = np.broadcast_arrays(
        *(np.atleast_1d(np.asarray(v, dtype=np.float64)) for v in (center, amplitude, phase))
    )
    if c.ndim != 1:
        raise ValueError("center, amplitude and phase must be scalars or per-arm vectors")

    def means(t: npt.NDArray[np.int64]) -> FloatArray:
        angle = 2.0 * np.pi * np.asarray(t, dtype=np.float64)[:, None] / period + ph
        return np.asarray(c + amp * np.sin(angle), dtype=np.float64)

    return means


#: Default: two arms oscillating in opposition around 0.5 (period 20_000 steps).
DEFAULT_MEANS: DriftFn = sinusoidal_drift(0.5, 0.3, 20_000, (0.0, np.pi))


def drifting_schedule(
    means: Any = DEFAULT_MEANS,
    sds: Any = 0.1,
    horizon: int = 50_000,
    *,
    arm: str = "gaussian",
    lo: float = 0.0,
    hi: float = 1.0,
    vectorized: bool = True,
) -> Schedule:
    """Tabulate ``means(t)`` (and ``sds(t)`` if callable) over ``t = 0..horizon-1``."""
    horizon = check_int("horizon", horizon, minimum=1)
    arm_t = check_arm(arm)
    lo, hi = check_bounds(lo, hi)
    if callable(means):
        m = evaluate_schedule("means", means, horizon, vectorized=vectorized)
    else:
        m = np.broadcast_to(as_vector("means", means), (horizon, np.size(means))).copy()
    n_arms = m.shape[1]
    s: FloatArray | None
    if arm_t == "bernoulli":
        if sds is not None:
            raise ValueError(f"sds must be None for bernoulli arms, got {sds!r}")
        s = None
    elif callable(sds):
        s = evaluate_schedule("sds", sds, horizon, vectorized=vectorized)
        if s.shape[1] not in (1, n_arms):
            raise ValueError(f"sds(t) must give {n_arms} values (one per arm), got {s.shape[1]}")
    elif sds is None:
        raise ValueError("sds are required for gaussian arms")
    else:
        s_vec = np.atleast_1d(np.asarray(sds, dtype=np.float64))
        if s_vec.ndim != 1 or s_vec.size not in (1, n_arms):
            raise ValueError(f"sds must be a scalar or have length {n_arms}, got {sds!r}")
        s = np.broadcast_to(s_vec, (horizon, n_arms)).copy()
    return Schedule(m, s, arm=arm_t, lo=lo, hi=hi, change_points=())


class DriftingBandit(BanditEnv):
    """K-armed bandit with means drifting as a function of the step (App. H-1).

    ## Description
    Arm ``a`` pays ``clip(N(m_a(t), s_a(t)^2), lo, hi)`` (or Bernoulli(``m_a(t)``)) at the 0-based
    step ``t``. ``means`` is a callable of ``t`` — :func:`linear_drift`, :func:`sinusoidal_drift`
    or any function — or a constant per-arm vector; ``sds`` is a scalar, a per-arm vector or a
    callable. Both are tabulated once at construction (memory ``O(horizon * K)``), so an invalid
    value at any step raises ``ValueError`` right away.

    Callables are *vectorised* by default: called once with the int64 array ``t`` of all steps,
    shape ``(horizon,)``, they return ``(horizon, K)``. Pass ``vectorized=False`` to use a plain
    ``f(t: int) -> K values`` (called once per step).

    ## Action / Observation Space
    ``Discrete(K)`` / ``Discrete(1)`` (always ``0``).

    ## Episode End
    Never terminated; truncated on step ``horizon - 1``. ``change_points == ()``.

    ## Info (evaluation data: an agent must not read it)
    ``t``, ``expected_rewards`` (K,), ``optimal_arm``, ``regret``.

    ## Arguments
    | Parameter     | Default                        | Description                           |
    |---------------|--------------------------------|---------------------------------------|
    | `means`       | 2 arms, `sinusoidal_drift(0.5, 0.3, 20_000, (0, pi))` | callable or vector |
    | `sds`         | `0.1`                          | scalar, vector, callable; Bernoulli: `None` |
    | `horizon`     | `50_000`                       | number of steps                       |
    | `arm`         | `"gaussian"`                   | or `"bernoulli"`                      |
    | `lo`, `hi`    | `0.0`, `1.0`                   | clipping bounds                       |
    | `vectorized`  | `True`                         | how callables are called              |
    | `render_mode` | `None`                         | `None` or `"ansi"`                    |
    """

    def __init__(
        self,
        means: Any = DEFAULT_MEANS,
        sds: Any = 0.1,
        horizon: int = 50_000,
        arm: str = "gaussian",
        lo: float = 0.0,
        hi: float = 1.0,
        vectorized: bool = True,
        render_mode: str | None = None,
    ) -> None:
        schedule = drifting_schedule(
            means, sds, horizon, arm=arm, lo=lo, hi=hi, vectorized=vectorized
        )
        self._setup(schedule, render_mode)


class DriftingBanditVectorEnv(BanditVectorEnv):
    """``num_envs`` copies of :class:`DriftingBandit` in numpy arrays (same arguments)."""

    def __init__(
        self,
        num_envs: int = 1,
        means: Any = DEFAULT_MEANS,
        sds: Any = 0.1,
        horizon: int = 50_000,
        arm: str = "gaussian",
        lo: float = 0.0,
        hi: float = 1.0,
        vectorized: bool = True,
        render_mode: str | None = None,
    ) -> None:
        schedule = drifting_schedule(
            means, sds, horizon, arm=arm, lo=lo, hi=hi, vectorized=vectorized
        )
        self._setup(num_envs, schedule, render_mode)
