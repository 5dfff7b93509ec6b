"""Regret lower bounds under local DP and under zero-concentrated DP (docs/trust-models.md).

Same setting as :mod:`dpbandits.theory.lower_bounds` (consistent policies, asymptotic bounds
read at a finite horizon as reference curves, the distinguishability gaps ``kl_inf``, ``tv_inf``
of each suboptimal arm), for two other trust models:

- :func:`local_dp`, eps-LDP (Ren, Zhou, Liu & Shroff 2020, "Multi-armed bandits with local
  differential privacy", Theorem 1: ``Omega(sum_a log T / ((e^eps - 1)^2 Delta_a))`` for
  Bernoulli-type instances). The learner sees only reports ``Z_t = M_t(X_t)`` of eps-LDP
  channels. Duchi, Jordan & Wainwright (2018, JASA, Theorem 1) bound the divergence an eps-LDP
  channel leaves between two laws: ``KL(MP || MQ) + KL(MQ || MP) <= min(4, e^(2 eps))
  (e^eps - 1)^2 TV(P, Q)^2``, and by data processing it is also at most ``KL(P || Q)``. The
  divergence decomposition of Lai & Robbins' argument (Lattimore & Szepesvari 2020, Lemma
  15.1 and Theorem 16.2), applied to the reports, then gives for every consistent eps-LDP
  policy
  ``liminf Reg_T / log T >= sum_a Delta_a / min(kl_inf(a), L(eps) tv_inf(a)^2)``,
  ``L(eps) = min(4, e^(2 eps)) (e^eps - 1)^2``. For Bernoulli arms ``tv_inf = Delta_a`` and the
  private term is ``1 / (L(eps) Delta_a)`` per arm, Ren et al.'s order with these constants.
- :func:`zcdp`, rho-zCDP (Azize & Basu 2023, "Concentrated differential privacy for bandits",
  problem-dependent lower bound). Their coupling argument bounds the KL divergence between the
  transcripts of a rho-zCDP policy on two environments that differ in arm ``a`` by
  ``rho (E[N_a] tv(a))^2``; consistency asks that this reach ``log T``, so
  ``E[N_a] >= sqrt(log T / rho) / tv_inf(a)`` beside Lai--Robbins' ``log T / kl_inf(a)``:
  ``Reg_T >~ sum_a Delta_a max(log T / kl_inf(a), sqrt(log T / rho) / tv_inf(a))``. The privacy
  term grows as ``sqrt(log T)``: asymptotically the price of zCDP vanishes next to
  Lai--Robbins', the paper's conclusion. The constants are the ones this argument gives; the
  published text could not be checked for its own.

Both functions take the horizon(s) and return the bound there, of the horizon's shape, and the
model class as the keywords ``arm`` and ``sds`` (:class:`~dpbandits.theory.lower_bounds.ArmModel`);
inputs are checked as in :mod:`dpbandits.theory.lower_bounds`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpbandits.core import checks
from dpbandits.theory.lower_bounds import _log_horizon, _times_log, distinguishability

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from dpbandits.theory.lower_bounds import ArmModel

__all__ = [
    "TRUST_BOUND_LABELS",
    "ldp_coefficient_from_divergences",
    "ldp_contraction",
    "local_dp",
    "local_dp_coefficient",
    "zcdp",
    "zcdp_from_divergences",
]

#: The names of the bounds (keys), with the short citation the regret plots show.
TRUST_BOUND_LABELS = {
    "local_dp": "Ren et al. 2020 (eps-LDP)",
    "zcdp": "Azize & Basu 2023 (rho-zCDP)",
}


def ldp_contraction(epsilon: float) -> float:
    """``L(eps) = min(4, e^(2 eps)) (e^eps - 1)^2``: an eps-LDP channel leaves at most
    ``L(eps) TV^2`` of symmetrised KL between two laws (Duchi, Jordan & Wainwright 2018,
    Theorem 1)."""
    eps = checks.positive_number(epsilon, "epsilon", allow_inf=True)
    if math.isinf(eps):
        return math.inf
    return min(4.0, math.exp(2.0 * eps)) * math.expm1(eps) ** 2


def local_dp_coefficient(means: ArrayLike, epsilon: float, **model: Unpack[ArmModel]) -> float:
    """``c = sum_a Delta_a / min(kl_inf(a), L(eps) tv_inf(a)^2)`` of :func:`local_dp`."""
    contraction = ldp_contraction(epsilon)
    gaps, kl, tv = distinguishability(means, **model)
    return ldp_coefficient_from_divergences(gaps, kl, tv, contraction)


def ldp_coefficient_from_divergences(
    gaps: NDArray[np.float64],
    kl_inf: NDArray[np.float64],
    tv_inf: NDArray[np.float64],
    contraction: float,
) -> float:
    """:func:`local_dp_coefficient` from the arms' gaps and distinguishability gaps (those of
    :func:`dpbandits.theory.lower_bounds.distinguishability`, or upper bounds of them for a
    model class without a closed form) and ``contraction = L(eps)`` (:func:`ldp_contraction`).
    Arms with ``gaps <= 0`` do not count."""
    sub = gaps > 0
    with np.errstate(invalid="ignore"):  # tv = inf (no law beats mu* = 1): that arm costs 0
        private = np.where(np.isinf(tv_inf[sub]), np.inf, contraction * tv_inf[sub] ** 2)
    return float(np.sum(gaps[sub] / np.minimum(kl_inf[sub], private)))


def local_dp(
    means: ArrayLike, epsilon: float, horizon: ArrayLike, **model: Unpack[ArmModel]
) -> NDArray[np.float64]:
    """The eps-LDP bound ``c log T`` (module docstring; Ren et al. 2020, Theorem 1, with the
    constant of Duchi, Jordan & Wainwright 2018, Theorem 1)."""
    logt = _log_horizon(horizon)
    return _times_log(local_dp_coefficient(means, epsilon, **model), logt)


def zcdp(
    means: ArrayLike, rho: float, horizon: ArrayLike, **model: Unpack[ArmModel]
) -> NDArray[np.float64]:
    """The rho-zCDP bound ``sum_a Delta_a max(log T / kl_inf(a), sqrt(log T / rho) /
    tv_inf(a))`` (module docstring; Azize & Basu 2023)."""
    r = checks.positive_number(rho, "rho", allow_inf=True)
    logt = _log_horizon(horizon)
    gaps, kl, tv = distinguishability(means, **model)
    flat = np.atleast_1d(logt).reshape(-1)
    out = np.zeros_like(flat)
    later = flat > 0  # 0 at T = 1: no regret before a second step
    out[later] = zcdp_from_divergences(gaps, kl, tv, r, flat[later])
    res = out.reshape(np.shape(logt))
    return res[()] if res.ndim == 0 else res


def zcdp_from_divergences(
    gaps: NDArray[np.float64],
    kl_inf: NDArray[np.float64],
    tv_inf: NDArray[np.float64],
    rho: float,
    log_horizons: NDArray[np.float64],
) -> NDArray[np.float64]:
    """:func:`zcdp`'s ``sum_a Delta_a max(log T / kl_inf(a), sqrt(log T / rho) / tv_inf(a))``
    at each ``log T`` of the 1-D ``log_horizons``, from the arms' gaps and distinguishability
    gaps (as for :func:`ldp_coefficient_from_divergences`). Arms with ``gaps <= 0`` do not
    count."""
    sub = gaps > 0
    g, kl, tv = gaps[sub], kl_inf[sub], tv_inf[sub]
    lt = np.asarray(log_horizons, dtype=np.float64)[:, None]
    return np.sum(g * np.maximum(lt / kl, np.sqrt(lt / rho) / tv), axis=1)
