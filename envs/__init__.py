"""Gymnasium environments for non-stationary bandits (SPEC §5).

Importing this package registers the ``dpbandits/<Name>-v0`` ids with Gymnasium (each with an
``entry_point`` for ``gymnasium.make`` and a ``vector_entry_point`` for
``gymnasium.make_vec(..., vectorization_mode="vector_entry_point")``). Importing it twice (or
reloading it) does not register anything twice.

    dpbandits/TwoArmedShift-v0    TwoArmedShift / TwoArmedShiftVectorEnv
    dpbandits/PiecewiseBandit-v0  PiecewiseStationaryBandit / PiecewiseStationaryBanditVectorEnv
    dpbandits/DriftingBandit-v0   DriftingBandit / DriftingBanditVectorEnv
    dpbandits/Recommendation-v0   RecommendationEnv / RecommendationVectorEnv
"""

from __future__ import annotations

import gymnasium

from envs.base import BanditEnv, BanditVectorEnv
from envs.core import Schedule, expected_clipped_normal
from envs.drifting import (
    DriftingBandit,
    DriftingBanditVectorEnv,
    linear_drift,
    sinusoidal_drift,
)
from envs.piecewise import PiecewiseStationaryBandit, PiecewiseStationaryBanditVectorEnv
from envs.recommendation import RecommendationEnv, RecommendationVectorEnv
from envs.two_armed_shift import TwoArmedShift, TwoArmedShiftVectorEnv

__all__ = [
    "ENV_IDS",
    "OTHER_ENV_IDS",
    "BanditEnv",
    "BanditVectorEnv",
    "DriftingBandit",
    "DriftingBanditVectorEnv",
    "PiecewiseStationaryBandit",
    "PiecewiseStationaryBanditVectorEnv",
    "RecommendationEnv",
    "RecommendationVectorEnv",
    "Schedule",
    "TwoArmedShift",
    "TwoArmedShiftVectorEnv",
    "expected_clipped_normal",
    "linear_drift",
    "register_envs",
    "sinusoidal_drift",
]

#: id -> (entry_point, vector_entry_point)
ENV_IDS: dict[str, tuple[str, str]] = {
    "dpbandits/TwoArmedShift-v0": (
        "envs.two_armed_shift:TwoArmedShift",
        "envs.two_armed_shift:TwoArmedShiftVectorEnv",
    ),
    "dpbandits/PiecewiseBandit-v0": (
        "envs.piecewise:PiecewiseStationaryBandit",
        "envs.piecewise:PiecewiseStationaryBanditVectorEnv",
    ),
    "dpbandits/DriftingBandit-v0": (
        "envs.drifting:DriftingBandit",
        "envs.drifting:DriftingBanditVectorEnv",
    ),
}

#: Environments that are not bandit schedules (their own observation spaces and API), kept
#: apart from :data:`ENV_IDS`, whose entries the bandit test-suite treats as ``BanditEnv``.
OTHER_ENV_IDS: dict[str, tuple[str, str]] = {
    "dpbandits/Recommendation-v0": (
        "envs.recommendation:RecommendationEnv",
        "envs.recommendation:RecommendationVectorEnv",
    ),
}


def register_envs() -> None:
    """Register every id of :data:`ENV_IDS` and :data:`OTHER_ENV_IDS` not registered yet
    (idempotent).

    No ``max_episode_steps``: each environment truncates itself at its ``horizon`` argument, so
    ``gymnasium.make(id, horizon=...)`` is the way to change the episode length.
    """
    for env_id, (entry_point, vector_entry_point) in {**ENV_IDS, **OTHER_ENV_IDS}.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(
                id=env_id, entry_point=entry_point, vector_entry_point=vector_entry_point
            )


register_envs()
