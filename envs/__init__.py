"""Gymnasium environments for non-stationary bandits (SPEC §5).

Importing this package registers the ``dpbandits/<Name>-v0`` ids with Gymnasium (each with an
``entry_point`` for ``gymnasium.make`` and a ``vector_entry_point`` for
``gymnasium.make_vec(..., vectorization_mode="vector_entry_point")``). Importing it twice (or
reloading it) does not register anything twice.

    dpbandits/TwoArmedShift-v0    TwoArmedShift / TwoArmedShiftVectorEnv
    dpbandits/PiecewiseBandit-v0  PiecewiseStationaryBandit / PiecewiseStationaryBanditVectorEnv
    dpbandits/DriftingBandit-v0   DriftingBandit / DriftingBanditVectorEnv
"""

from __future__ import annotations

from dpbandits.registration import ENV_IDS, register_envs
from envs.base import BanditEnv, BanditVectorEnv
from envs.core import Schedule, expected_clipped_normal
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
from envs.piecewise import PiecewiseStationaryBandit, PiecewiseStationaryBanditVectorEnv
from envs.two_armed_shift import TwoArmedShift, TwoArmedShiftVectorEnv

__dpbandits_package__ = "envs"  # checked by dpbandits.sibling_packages

__all__ = [
    "ENV_IDS",
    "BanditEnv",
    "BanditVectorEnv",
    "DriftingBandit",
    "DriftingBanditVectorEnv",
    "DriftProfile",
    "PiecewiseStationaryBandit",
    "PiecewiseStationaryBanditVectorEnv",
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
