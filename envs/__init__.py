"""Gymnasium environments for non-stationary bandits (App. H-1).

Importing this package registers the ``dpbandits/<Name>-v0`` ids with Gymnasium (each with an
``entry_point`` for ``gymnasium.make`` and a ``vector_entry_point`` for
``gymnasium.make_vec(..., vectorization_mode="vector_entry_point")``). Importing it twice (or
reloading it) does not register anything twice.

    dpbandits/TwoArmedShift-v0    TwoArmedShift / TwoArmedShiftVectorEnv
    dpbandits/PiecewiseBandit-v0  PiecewiseStationaryBandit / PiecewiseStationaryBanditVectorEnv
    dpbandits/DriftingBandit-v0   DriftingBandit / DriftingBanditVectorEnv
    dpbandits/KArmedBernoulli-v0  KArmedBernoulli / KArmedBernoulliVectorEnv
    dpbandits/KArmedGaussian-v0   KArmedGaussian / KArmedGaussianVectorEnv
    dpbandits/Recommendation-v0   RecommendationEnv / RecommendationVectorEnv
    dpbandits/LocalDP-v0          LocalDPReward / LocalDPBanditVectorEnv (any env, eps-LDP rewards)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpbandits.core.registration import ENV_IDS, OTHER_ENV_IDS, register_envs
from dpbandits.core.sibling_packages import lazy_attributes
from envs.base import BanditEnv, BanditVectorEnv
from envs.core import Schedule, expected_clipped_normal
from envs.two_armed_shift import TwoArmedShift, TwoArmedShiftVectorEnv

if TYPE_CHECKING:
    from envs.drifting import (
        DriftingBandit,
        DriftingBanditVectorEnv,
        DriftProfile,
        drift_profile,
        linear_drift,
        piecewise_linear_drift,
        sinusoidal_drift,
        step_drift,
    )
    from envs.k_armed import (
        KArmedBernoulli,
        KArmedBernoulliVectorEnv,
        KArmedGaussian,
        KArmedGaussianVectorEnv,
    )
    from envs.local_dp import (
        LocalDPBanditVectorEnv,
        LocalDPReward,
        LocalDPVectorReward,
    )
    from envs.piecewise import PiecewiseStationaryBandit, PiecewiseStationaryBanditVectorEnv
    from envs.recommendation import RecommendationEnv, RecommendationVectorEnv

__dpbandits_package__ = "envs"  # checked by dpbandits.core.sibling_packages

__all__ = [
    "ENV_IDS",
    "OTHER_ENV_IDS",
    "BanditEnv",
    "BanditVectorEnv",
    "DriftingBandit",
    "DriftingBanditVectorEnv",
    "DriftProfile",
    "KArmedBernoulli",
    "KArmedBernoulliVectorEnv",
    "KArmedGaussian",
    "KArmedGaussianVectorEnv",
    "LocalDPBanditVectorEnv",
    "LocalDPReward",
    "LocalDPVectorReward",
    "PiecewiseStationaryBandit",
    "PiecewiseStationaryBanditVectorEnv",
    "RecommendationEnv",
    "RecommendationVectorEnv",
    "Schedule",
    "TwoArmedShift",
    "TwoArmedShiftVectorEnv",
    "drift_profile",
    "expected_clipped_normal",
    "linear_drift",
    "piecewise_linear_drift",
    "register_envs",
    "sinusoidal_drift",
    "step_drift",
]

register_envs()

# Every environment but the paper's two-armed shift is imported on first use of its names here
# (or by Gymnasium on the first ``make`` of its id): a run imports only the module of the
# environment it plays. The recommendation environment's module alone needs scipy.stats (about
# a second of imports); the others cost ~10 ms each (docs/performance.md, "Fig. 9 fixed costs").
_LAZY = {
    **dict.fromkeys(
        ["DriftingBandit", "DriftingBanditVectorEnv", "DriftProfile", "drift_profile",
         "linear_drift", "piecewise_linear_drift", "sinusoidal_drift", "step_drift"],
        "envs.drifting",
    ),
    **dict.fromkeys(
        ["KArmedBernoulli", "KArmedBernoulliVectorEnv", "KArmedGaussian",
         "KArmedGaussianVectorEnv"],
        "envs.k_armed",
    ),
    **dict.fromkeys(
        ["PiecewiseStationaryBandit", "PiecewiseStationaryBanditVectorEnv"], "envs.piecewise"
    ),
    **dict.fromkeys(
        ["LocalDPBanditVectorEnv", "LocalDPReward", "LocalDPVectorReward"], "envs.local_dp"
    ),
    **dict.fromkeys(["RecommendationEnv", "RecommendationVectorEnv"], "envs.recommendation"),
}  # fmt: skip


__getattr__ = lazy_attributes("envs", _LAZY, globals())
