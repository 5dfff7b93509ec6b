"""The paper's two-armed bandit with one abrupt shift (App. H-1, Fig. 9)."""

from __future__ import annotations

from collections.abc import Sequence

from dpbandits.core.checks import ParameterError
from envs.base import BanditEnv, BanditVectorEnv
from envs.core import Schedule, as_vector, check_int
from envs.piecewise import piecewise_schedule


def two_armed_shift_schedule(
    means: Sequence[float] = (0.2, 0.8),
    sds: Sequence[float] = (0.1, 0.3),
    t_shift: int = 30_000,
    horizon: int = 50_000,
    lo: float = 0.0,
    hi: float = 1.0,
) -> Schedule:
    """Segments ``[(0, means, sds), (t_shift, means[::-1], sds[::-1])]``, Gaussian arms."""
    horizon = check_int("horizon", horizon, minimum=1)
    t_shift = check_int("t_shift", t_shift)
    if not 0 < t_shift < horizon:
        raise ParameterError(
            f"t_shift must lie in (0, horizon) = (0, {horizon}), got {t_shift}", "t_shift"
        )
    m = as_vector("means", means)
    if m.size != 2:
        raise ParameterError(f"means must have length 2 (two arms), got {m.size}", "means")
    s = as_vector("sds", sds)
    if s.size != 2:
        raise ParameterError(f"sds must have length 2 (two arms), got {s.size}", "sds")
    segments = [(0, m, s), (t_shift, m[::-1], s[::-1])]
    return piecewise_schedule(segments, horizon, arm="gaussian", lo=lo, hi=hi)


class TwoArmedShift(BanditEnv):
    """Two Gaussian arms clipped to ``[lo, hi]`` whose parameters swap at ``t_shift`` (App. H-1).

    ## Description
    The paper's bandit under distribution shift (App. H-1, Fig. 9): arm ``a`` pays
    ``clip(N(m_a, s_a^2), lo, hi)``. Before the shift ``m = (0.2, 0.8)``, ``s = (0.1, 0.3)``;
    from step ``t_shift`` on the means and the standard deviations are swapped.

    ## Action Space
    ``Discrete(2)``.

    ## Observation Space
    ``Discrete(1)``: always ``0``.

    ## Rewards
    Clipped Gaussian; ``expected_rewards(t)`` is the exact clipped mean (App. H-1), e.g.
    ``(0.20085, 0.75502)`` before the shift with the defaults.

    ## Episode End
    Never terminated; truncated on step ``horizon - 1`` (the ``horizon``-th step).

    ## Change point
    Steps are 0-based. Steps ``0 .. t_shift - 1`` use ``(means, sds)``; step ``t_shift`` is the
    **first** step with the swapped parameters (``change_points == (t_shift,)``). With 1-based
    time ``tau = t + 1`` this is the paper's "``tau <= t_shift``: before, ``tau > t_shift``:
    after".

    ## Info (evaluation data: an agent must not read it)
    ``t``, ``expected_rewards`` (2,), ``optimal_arm``, ``regret``.

    ## Arguments
    | Parameter     | Default       | Description                                           |
    |---------------|---------------|-------------------------------------------------------|
    | `means`       | `(0.2, 0.8)`  | means of arms 0 and 1 before the shift                |
    | `sds`         | `(0.1, 0.3)`  | standard deviations before the shift (> 0)            |
    | `t_shift`     | `30_000`      | first 0-based step after the shift, `0 < t_shift < horizon` |
    | `horizon`     | `50_000`      | number of steps of an episode                         |
    | `lo`, `hi`    | `0.0`, `1.0`  | clipping bounds                                       |
    | `render_mode` | `None`        | `None` or `"ansi"`                                    |

    ```python
    >>> import gymnasium as gym, envs
    >>> env = gym.make("dpbandits/TwoArmedShift-v0", t_shift=300, horizon=500)
    >>> obs, info = env.reset(seed=0)
    >>> obs, reward, terminated, truncated, info = env.step(1)
    >>> info["t"], info["optimal_arm"]
    (0, 1)

    ```
    """

    build_schedule = staticmethod(two_armed_shift_schedule)


class TwoArmedShiftVectorEnv(BanditVectorEnv):
    """``num_envs`` copies of :class:`TwoArmedShift` in numpy arrays (same arguments)."""

    env_class = TwoArmedShift
