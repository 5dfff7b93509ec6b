"""Theory: regret lower bounds of stochastic bandits, without and with eps-global DP.

:mod:`dpbandits.theory.lower_bounds` has the Lai--Robbins bound and the eps-global-DP
problem-dependent bounds of Shariff & Sheffet (2018), Azize & Basu (2022) and Azize, Wu, Honda,
Orabona, Ito & Basu (2025), as functions of the arm means, eps and the horizon; docs:
docs/private-bandits.md, "Lower bounds".
"""

from __future__ import annotations

from dpbandits.theory.lower_bounds import (
    ARM_FAMILIES,
    BOUND_LABELS,
    KARWA_VADHAN_CONSTANT,
    azize_2025,
    azize_basu,
    coefficients,
    coefficients_from_divergences,
    d_epsilon_bernoulli,
    distinguishability,
    kl_bernoulli,
    kl_gaussian,
    lai_robbins,
    regret_lower_bounds,
    shariff_sheffet,
    tv_gaussian,
)
from dpbandits.theory.trust_bounds import (
    TRUST_BOUND_LABELS,
    ldp_contraction,
    local_dp,
    local_dp_coefficient,
    zcdp,
)

__all__ = [
    "ARM_FAMILIES",
    "BOUND_LABELS",
    "KARWA_VADHAN_CONSTANT",
    "TRUST_BOUND_LABELS",
    "azize_2025",
    "azize_basu",
    "coefficients",
    "coefficients_from_divergences",
    "d_epsilon_bernoulli",
    "distinguishability",
    "kl_bernoulli",
    "kl_gaussian",
    "lai_robbins",
    "ldp_contraction",
    "local_dp",
    "local_dp_coefficient",
    "regret_lower_bounds",
    "shariff_sheffet",
    "tv_gaussian",
    "zcdp",
]
