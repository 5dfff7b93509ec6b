"""Piecewise-stationary K-armed bandit (App. H-1 general form)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dpbandits.core.checks import ParameterError, ParameterTypeError
from envs.base import BanditEnv, BanditVectorEnv
from envs.core import (
    FloatArray,
    Schedule,
    as_vector,
    check_int,
    check_means,
    check_schedule_args,
    check_sds,
)

Segment = tuple[int, Sequence[float], Sequence[float] | None]

#: Default: three arms whose means rotate at steps 10_000 and 20_000.
DEFAULT_SEGMENTS: tuple[Segment, ...] = (
    (0, (0.2, 0.5, 0.8), (0.1, 0.1, 0.1)),
    (10_000, (0.5, 0.8, 0.2), (0.1, 0.1, 0.1)),
    (20_000, (0.8, 0.2, 0.5), (0.1, 0.1, 0.1)),
)
DEFAULT_HORIZON = 30_000


def piecewise_schedule(
    segments: Sequence[Any] = DEFAULT_SEGMENTS,
    horizon: int = DEFAULT_HORIZON,
    arm: str = "gaussian",
    lo: float = 0.0,
    hi: float = 1.0,
) -> Schedule:
    """Build the :class:`Schedule` of a list of segments ``(start, means, sds)``.

    Step ``t`` (0-based) follows the last segment whose ``start <= t``: a segment's ``start`` is
    the first step with its parameters, so the change points are the starts after the first.
    Starts must be integers, begin at 0, strictly increase and stay below ``horizon``. For
    Bernoulli arms a segment is ``(start, means)`` or ``(start, means, None)``.
    """
    horizon, arm_t, lo, hi = check_schedule_args(horizon, arm, lo, hi)
    if isinstance(segments, (str, bytes)) or not isinstance(segments, Sequence):
        raise ParameterTypeError(
            f"segments must be a sequence of (start, means, sds), got {segments!r}", "segments"
        )
    if len(segments) == 0:
        raise ParameterError("segments must contain at least one segment", "segments")
    starts: list[int] = []
    means_rows: list[FloatArray] = []
    sds_rows: list[FloatArray] = []
    n_arms: int | None = None
    for j, seg in enumerate(segments):
        if not isinstance(seg, Sequence) or len(seg) not in (2, 3):
            raise ValueError(f"segments[{j}] must be a tuple (start, means, sds), got {seg!r}")
        start = check_int(f"segments[{j}] start", seg[0])
        means = as_vector(f"segments[{j}] means", seg[1], n_arms)
        n_arms = means.size
        check_means(f"segments[{j}] means", means, arm_t)
        sds = seg[2] if len(seg) == 3 else None
        if arm_t == "gaussian":
            if sds is None:
                raise ValueError(f"segments[{j}] needs sds for gaussian arms")
            sds_arr = as_vector(f"segments[{j}] sds", sds, n_arms)
            check_sds(f"segments[{j}] sds", sds_arr)
            sds_rows.append(sds_arr)
        elif sds is not None:
            raise ValueError(f"segments[{j}] sds must be None for bernoulli arms, got {sds!r}")
        starts.append(start)
        means_rows.append(means)
    if starts[0] != 0:
        raise ValueError(f"the first segment must start at step 0, got start {starts[0]}")
    for j in range(1, len(starts)):
        if starts[j] <= starts[j - 1]:
            raise ValueError(
                "segment starts must be strictly increasing (segments sorted, not overlapping); "
                f"got segments[{j - 1}] start {starts[j - 1]} then segments[{j}] start {starts[j]}"
            )
    if starts[-1] >= horizon:
        raise ValueError(
            f"every segment must start before the horizon {horizon}, got start {starts[-1]}"
        )
    lengths = np.diff(np.array([*starts, horizon]))
    means_table = np.repeat(np.stack(means_rows), lengths, axis=0)
    sds_table = np.repeat(np.stack(sds_rows), lengths, axis=0) if sds_rows else None
    return Schedule(
        means_table, sds_table, arm=arm_t, lo=lo, hi=hi, change_points=tuple(starts[1:])
    )


class PiecewiseStationaryBandit(BanditEnv):
    """Piecewise-stationary K-armed bandit (App. H-1).

    ## Description
    The arms' reward distributions are constant on segments of steps and change at given steps.
    Gaussian arms give ``clip(N(m_a, s_a^2), lo, hi)``; Bernoulli arms give 1 with probability
    ``m_a`` and 0 otherwise.

    ## Action Space
    ``Discrete(K)``: the arm to pull.

    ## Observation Space
    ``Discrete(1)``: always ``0`` (a bandit has no state).

    ## Rewards
    The reward of step ``t`` (0-based) comes from the segment containing ``t``. Its exact mean is
    ``expected_rewards(t)`` (the clipped-Gaussian mean of App. H-1).

    ## Episode End
    Never terminated; truncated on step ``horizon - 1``.

    ## Change points
    ``segments = [(start_0 = 0, means, sds), (start_1, ...), ...]``: step ``start_j`` (0-based) is
    the **first** step drawn from segment ``j``; ``change_points == (start_1, start_2, ...)``.

    ## Info (evaluation data: an agent must not read it)
    ``t``, ``expected_rewards`` (K,), ``optimal_arm``, ``regret`` (this step's dynamic
    pseudo-regret).

    ## Arguments
    | Parameter     | Default                  | Description                                     |
    |---------------|--------------------------|-------------------------------------------------|
    | `segments`    | `DEFAULT_SEGMENTS`       | sequence of `(start, means, sds)`               |
    | `horizon`     | `30_000`                 | number of steps of an episode                   |
    | `arm`         | `"gaussian"`             | `"gaussian"` (clipped) or `"bernoulli"`         |
    | `lo`, `hi`    | `0.0`, `1.0`             | reward range (clipping bounds)                  |
    | `render_mode` | `None`                   | `None` or `"ansi"`                              |

    ```python
    >>> import gymnasium as gym, envs
    >>> env = gym.make("dpbandits/PiecewiseBandit-v0",
    ...                segments=[(0, [0.1, 0.9], [0.1, 0.1]), (50, [0.9, 0.1], [0.1, 0.1])],
    ...                horizon=100)
    >>> env.unwrapped.change_points
    (50,)

    ```
    """

    build_schedule = staticmethod(piecewise_schedule)


class PiecewiseStationaryBanditVectorEnv(BanditVectorEnv):
    """``num_envs`` copies of :class:`PiecewiseStationaryBandit` in numpy arrays."""

    env_class = PiecewiseStationaryBandit
