"""K-armed bandit whose means drift with time (App. H-1 general form).

The means are any function of the 0-based step ``t``. The named profiles -- :func:`linear_drift`,
:func:`sinusoidal_drift`, :func:`step_drift`, :func:`piecewise_linear_drift`, or a mapping
``{"profile": "linear", ...}`` -- are picklable (they run on worker processes and Dask clusters)
and can be written in config files.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from dpbandits.core import checks
from dpbandits.core.checks import ParameterError, ParameterTypeError
from envs.base import BanditEnv, BanditVectorEnv
from envs.core import (
    FloatArray,
    Schedule,
    as_vector,
    check_int,
    check_schedule_args,
    evaluate_schedule,
)

DriftFn = Callable[[npt.NDArray[np.int64]], npt.ArrayLike]

__all__ = [
    "DEFAULT_MEANS",
    "DriftProfile",
    "DriftingBandit",
    "DriftingBanditVectorEnv",
    "LinearDrift",
    "PiecewiseLinearDrift",
    "SinusoidalDrift",
    "StepDrift",
    "drift_profile",
    "drifting_schedule",
    "linear_drift",
    "piecewise_linear_drift",
    "sinusoidal_drift",
    "step_drift",
]


def _per_arm(name: str, value: Any) -> FloatArray:
    arr = np.atleast_1d(checks.real_array(value, name, finite=False))
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a scalar or a per-arm vector, got {value!r}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return arr


def _plain(x: Any) -> Any:
    """Numbers and nested lists of numbers, for :meth:`DriftProfile.to_dict`."""
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, np.generic):
        return x.item()
    return x


class DriftProfile:
    """A named, picklable drift profile: a vectorised callable ``t (n,) -> (n, K)``.

    Unlike a lambda or a local function, a profile can be sent to worker processes (the
    engine's ``n_jobs > 1``, a Dask cluster) and written to and read from a config file:
    :meth:`to_dict` gives ``{"profile": <name>, **parameters}`` and :func:`drift_profile` turns
    such a mapping back into the profile. Two profiles with the same parameters are equal.
    """

    profile: str = ""
    _params: dict[str, Any]

    def __call__(self, t: npt.NDArray[np.int64]) -> FloatArray:  # pragma: no cover - abstract
        raise NotImplementedError

    def to_dict(self) -> dict[str, Any]:
        """``{"profile": name, **parameters}``, plain numbers and lists (TOML/JSON-able)."""
        return {"profile": self.profile, **{k: _plain(v) for k, v in self._params.items()}}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DriftProfile) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash(repr(self))

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={_plain(v)!r}" for k, v in self._params.items())
        return f"{type(self).__name__}({args})"


class LinearDrift(DriftProfile):
    """Means moving linearly from ``start`` (at step ``t_start``) to ``end`` (at ``t_end``);
    constant before and after."""

    profile = "linear"

    def __init__(
        self, start: npt.ArrayLike, end: npt.ArrayLike, t_end: int, t_start: int = 0
    ) -> None:
        t_start = check_int("t_start", t_start, minimum=0)
        t_end = check_int("t_end", t_end)
        if t_end <= t_start:
            raise ParameterError(
                f"t_end must be > t_start, got t_start={t_start}, t_end={t_end}", "t_end"
            )
        a, b = _per_arm("start", start), _per_arm("end", end)
        if not (a.size == b.size or 1 in (a.size, b.size)):
            raise ValueError(f"start and end must be per-arm vectors of one length, got {a}, {b}")
        self._a, self._b, self._t0, self._t1 = a, b, t_start, t_end
        self._params = {"start": start, "end": end, "t_end": t_end, "t_start": t_start}

    def __call__(self, t: npt.NDArray[np.int64]) -> FloatArray:
        span = self._t1 - self._t0
        frac = np.clip((np.asarray(t, dtype=np.float64) - self._t0) / span, 0.0, 1.0)
        return np.asarray(self._a + (self._b - self._a) * frac[:, None], dtype=np.float64)


class SinusoidalDrift(DriftProfile):
    """Means ``center + amplitude * sin(2 pi t / period + phase)``, per arm (broadcast)."""

    profile = "sinusoidal"

    def __init__(
        self,
        center: npt.ArrayLike,
        amplitude: npt.ArrayLike,
        period: float,
        phase: npt.ArrayLike = 0.0,
    ) -> None:
        if isinstance(period, bool) or not isinstance(period, (int, float, np.integer,
                                                              np.floating)):  # fmt: skip
            raise ParameterTypeError(
                f"period must be a real number, got {type(period).__name__}", "period"
            )
        p = float(period)
        if not (np.isfinite(p) and p > 0):
            raise ParameterError(f"period must be finite and > 0, got {period}", "period")
        arrays = [_per_arm(n, v) for n, v in
                  (("center", center), ("amplitude", amplitude), ("phase", phase))]  # fmt: skip
        try:
            c, amp, ph = np.broadcast_arrays(*arrays)
        except ValueError:
            raise ValueError(
                "center, amplitude and phase must be scalars or per-arm vectors of one length"
            ) from None
        self._c, self._amp, self._ph, self._period = c, amp, ph, p
        self._params = {"center": center, "amplitude": amplitude, "period": period,
                        "phase": phase}  # fmt: skip

    def __call__(self, t: npt.NDArray[np.int64]) -> FloatArray:
        angle = 2.0 * np.pi * np.asarray(t, dtype=np.float64)[:, None] / self._period + self._ph
        return np.asarray(self._c + self._amp * np.sin(angle), dtype=np.float64)


def _levels(name: str, values: Any, n: int) -> FloatArray:
    if isinstance(values, (str, bytes)) or not isinstance(values, (list, tuple, np.ndarray)):
        raise TypeError(f"{name} must be a list of per-arm vectors, got {values!r}")
    if len(values) != n:
        raise ValueError(f"{name} must have {n} entries, got {len(values)}")
    rows = [_per_arm(f"{name}[{j}]", v) for j, v in enumerate(values)]
    k = max(r.size for r in rows)
    if any(r.size not in (1, k) for r in rows):
        raise ValueError(f"every entry of {name} must have the same number of arms")
    return np.stack([np.broadcast_to(r, (k,)) for r in rows])


def _steps(name: str, steps: Any, *, minimum: int) -> list[int]:
    if isinstance(steps, (str, bytes)) or not isinstance(steps, (list, tuple, np.ndarray)):
        raise TypeError(f"{name} must be a list of steps, got {steps!r}")
    out = [check_int(f"{name}[{j}]", s, minimum=minimum) for j, s in enumerate(steps)]
    if any(b <= a for a, b in zip(out, out[1:], strict=False)):
        raise ValueError(f"{name} must be strictly increasing, got {out}")
    return out


class StepDrift(DriftProfile):
    """Piecewise-constant means: ``values[0]`` before ``at[0]``, ``values[j]`` from step
    ``at[j - 1]`` (0-based, the first step with the new values) on.

    The steps ``at`` are the environment's change points (so the engine reports the regret of
    every segment)."""

    profile = "step"

    def __init__(self, values: Any, at: Any) -> None:
        steps = _steps("at", at, minimum=1)
        self._table = _levels("values", values, len(steps) + 1)
        self._at = np.asarray(steps, dtype=np.int64)
        self._params = {"values": values, "at": steps}

    @property
    def change_points(self) -> tuple[int, ...]:
        return tuple(int(s) for s in self._at)

    def __call__(self, t: npt.NDArray[np.int64]) -> FloatArray:
        idx = np.searchsorted(self._at, np.asarray(t, dtype=np.int64), side="right")
        return np.asarray(self._table[idx], dtype=np.float64)


class PiecewiseLinearDrift(DriftProfile):
    """Means interpolated linearly through points ``(steps[j], values[j])``; constant before
    the first and after the last point."""

    profile = "piecewise_linear"

    def __init__(self, steps: Any, values: Any) -> None:
        st = _steps("steps", steps, minimum=0)
        if not st:
            raise ParameterError("steps must contain at least one point", "steps")
        self._table = _levels("values", values, len(st))
        self._st = np.asarray(st, dtype=np.float64)
        self._params = {"steps": st, "values": values}

    def __call__(self, t: npt.NDArray[np.int64]) -> FloatArray:
        x = np.asarray(t, dtype=np.float64)
        cols = [np.interp(x, self._st, self._table[:, k]) for k in range(self._table.shape[1])]
        return np.asarray(np.stack(cols, axis=1), dtype=np.float64)


_PROFILES: dict[str, type[DriftProfile]] = {
    cls.profile: cls for cls in (LinearDrift, SinusoidalDrift, StepDrift, PiecewiseLinearDrift)
}


def drift_profile(spec: Any) -> DriftProfile:
    """A profile from ``{"profile": name, **parameters}`` (the form of
    :meth:`DriftProfile.to_dict` and of config files); names: ``linear``, ``sinusoidal``,
    ``step``, ``piecewise_linear``."""
    if isinstance(spec, DriftProfile):
        return spec
    if not isinstance(spec, Mapping):
        raise TypeError(f"a drift profile is a mapping {{'profile': name, ...}}, got {spec!r}")
    params = dict(spec)
    name = params.pop("profile", None)
    cls = _PROFILES[checks.one_of(name, _PROFILES, "profile")]
    try:
        return cls(**params)
    except TypeError as exc:
        if "argument" not in str(exc):
            raise
        sig = inspect.signature(cls.__init__)
        accepted = [p for p in sig.parameters if p != "self"]
        raise TypeError(
            f"{name} drift profile takes {', '.join(accepted)}; got {', '.join(sorted(params))}"
        ) from None


def linear_drift(
    start: npt.ArrayLike, end: npt.ArrayLike, t_end: int, t_start: int = 0
) -> LinearDrift:
    """Means moving linearly from ``start`` (at step ``t_start``) to ``end`` (at ``t_end``).

    Constant at ``start`` before ``t_start`` and at ``end`` after ``t_end``. ``start``/``end``
    are per-arm vectors (or scalars). Returns a picklable vectorised callable
    ``t (n,) -> (n, K)`` (:class:`LinearDrift`).
    """
    return LinearDrift(start, end, t_end, t_start)


def sinusoidal_drift(
    center: npt.ArrayLike, amplitude: npt.ArrayLike, period: float, phase: npt.ArrayLike = 0.0
) -> SinusoidalDrift:
    """Means ``center + amplitude * sin(2 pi t / period + phase)``, per arm (broadcast).

    Returns a picklable vectorised callable ``t (n,) -> (n, K)`` (:class:`SinusoidalDrift`).
    """
    return SinusoidalDrift(center, amplitude, period, phase)


def step_drift(values: Any, at: Any) -> StepDrift:
    """Means ``values[j]`` from step ``at[j - 1]`` on (``values[0]`` first): abrupt changes
    inside a drifting environment (:class:`StepDrift`)."""
    return StepDrift(values, at)


def piecewise_linear_drift(steps: Any, values: Any) -> PiecewiseLinearDrift:
    """Means through the points ``(steps[j], values[j])``, linear in between
    (:class:`PiecewiseLinearDrift`)."""
    return PiecewiseLinearDrift(steps, values)


#: Default: two arms oscillating in opposition around 0.5 (period 20_000 steps).
DEFAULT_MEANS: DriftProfile = SinusoidalDrift(0.5, 0.3, 20_000, (0.0, np.pi))


def drifting_schedule(
    means: Any = DEFAULT_MEANS,
    sds: Any = "auto",
    horizon: int = 50_000,
    arm: str = "gaussian",
    lo: float = 0.0,
    hi: float = 1.0,
    vectorized: bool = True,
) -> Schedule:
    """Tabulate ``means(t)`` (and ``sds(t)`` if callable) over ``t = 0..horizon-1``."""
    horizon, arm_t, lo, hi = check_schedule_args(horizon, arm, lo, hi)
    vectorized = checks.flag(vectorized, "vectorized")
    if isinstance(means, Mapping):
        means = drift_profile(means)
    if isinstance(sds, str) and sds == "auto":
        # 0.1 for Gaussian arms, none for Bernoulli arms (a config file has no None to write)
        sds = 0.1 if arm_t == "gaussian" else None
    if isinstance(sds, Mapping):
        sds = drift_profile(sds)
    if callable(means):
        m = evaluate_schedule("means", means, horizon, vectorized=vectorized)
    else:
        m = np.broadcast_to(as_vector("means", means), (horizon, np.size(means))).copy()
    n_arms = m.shape[1]
    s: FloatArray | None
    if arm_t == "bernoulli":
        if sds is not None:
            raise ParameterError(f"sds must be None for bernoulli arms, got {sds!r}", "sds")
        s = None
    elif callable(sds):
        s = evaluate_schedule("sds", sds, horizon, vectorized=vectorized)
        if s.shape[1] not in (1, n_arms):
            raise ValueError(f"sds(t) must give {n_arms} values (one per arm), got {s.shape[1]}")
    elif sds is None:
        raise ValueError("sds are required for gaussian arms")
    else:
        s_vec = np.atleast_1d(checks.real_array(sds, "sds", finite=False))
        if s_vec.ndim != 1 or s_vec.size not in (1, n_arms):
            raise ParameterError(
                f"sds must be a scalar or have length {n_arms}, got {sds!r}", "sds"
            )
        s = np.broadcast_to(s_vec, (horizon, n_arms)).copy()
    # abrupt changes of a step profile are change points (regret is reported per segment)
    cps = sorted(
        {c for f in (means, sds) for c in getattr(f, "change_points", ()) if 0 < c < horizon}
    )
    return Schedule(m, s, arm=arm_t, lo=lo, hi=hi, change_points=tuple(cps))


class DriftingBandit(BanditEnv):
    """K-armed bandit with means drifting as a function of the step (App. H-1).

    ## Description
    Arm ``a`` pays ``clip(N(m_a(t), s_a(t)^2), lo, hi)`` (or Bernoulli(``m_a(t)``)) at the 0-based
    step ``t``. ``means`` is a callable of ``t`` — a named profile (:func:`linear_drift`,
    :func:`sinusoidal_drift`, :func:`step_drift`, :func:`piecewise_linear_drift`, or a mapping
    ``{"profile": ..., ...}``; picklable) or any function — or a constant per-arm vector;
    ``sds`` is a scalar, a per-arm vector or a callable. Both are tabulated once at
    construction (memory ``O(horizon * K)``), so an invalid value at any step raises
    ``ValueError`` right away.

    Callables are *vectorised* by default: called once with the int64 array ``t`` of all steps,
    shape ``(horizon,)``, they return ``(horizon, K)``. Pass ``vectorized=False`` to use a plain
    ``f(t: int) -> K values`` (called once per step).

    ## Action / Observation Space
    ``Discrete(K)`` / ``Discrete(1)`` (always ``0``).

    ## Episode End
    Never terminated; truncated on step ``horizon - 1``. ``change_points`` are the steps of a
    :func:`step_drift` profile (``()`` for continuous profiles).

    ## Info (evaluation data: an agent must not read it)
    ``t``, ``expected_rewards`` (K,), ``optimal_arm``, ``regret``.

    ## Arguments
    | Parameter     | Default                        | Description                           |
    |---------------|--------------------------------|---------------------------------------|
    | `means`       | 2 arms, `sinusoidal_drift(0.5, 0.3, 20_000, (0, pi))` | callable or vector |
    | `sds`         | `"auto"`: 0.1 (Gaussian), `None` (Bernoulli) | scalar, vector, callable |
    | `horizon`     | `50_000`                       | number of steps                       |
    | `arm`         | `"gaussian"`                   | or `"bernoulli"`                      |
    | `lo`, `hi`    | `0.0`, `1.0`                   | clipping bounds                       |
    | `vectorized`  | `True`                         | how callables are called              |
    | `render_mode` | `None`                         | `None` or `"ansi"`                    |
    """

    build_schedule = staticmethod(drifting_schedule)


class DriftingBanditVectorEnv(BanditVectorEnv):
    """``num_envs`` copies of :class:`DriftingBandit` in numpy arrays (same arguments)."""

    env_class = DriftingBandit
