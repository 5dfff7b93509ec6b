"""Theory: regret lower bounds of stochastic bandits, without and with eps-global DP.

:mod:`dpbandits.theory.lower_bounds` has the Lai--Robbins bound and the eps-global-DP
problem-dependent bounds of Shariff & Sheffet (2018), Azize & Basu (2022) and Azize, Wu, Honda,
Orabona, Ito & Basu (2025), as functions of the arm means, eps and the horizon; docs:
docs/private-bandits.md, "Lower bounds".
"""

from __future__ import annotations

# one list of names: the modules' own __all__
from dpbandits.theory.lower_bounds import *  # noqa: F403
from dpbandits.theory.lower_bounds import __all__ as _lower_bounds_all
from dpbandits.theory.trust_bounds import *  # noqa: F403
from dpbandits.theory.trust_bounds import __all__ as _trust_bounds_all

__all__ = [*_lower_bounds_all, *_trust_bounds_all]
