"""Asymptotic regret lower bounds of stochastic bandits, without and with eps-global DP.

Every bound here has the form

    liminf_{T -> inf}  Reg_T(pi, nu) / log T  >=  c(nu, eps)

for every policy ``pi`` that is *consistent* on the model class (``Reg_T = o(T^a)`` for every
``a > 0`` on every instance of the class) and, for the private bounds, *eps-global DP*: the
whole action sequence is eps-DP with respect to the reward sequence, two reward sequences being
neighbours when they differ in one step's reward (Azize & Basu 2022, Definition 2). Each
function returns ``c * log T`` for the given horizons: the asymptotic bound read at a finite
horizon, a reference curve for regret plots, not a finite-time guarantee (the ``o(log T)``
terms of the theorems are not known). docs/private-bandits.md, "Lower bounds", shows them.

Model classes (the keywords ``arm`` and ``sds`` of :class:`ArmModel`, taken by every bound that
covers Gaussian arms):

- ``"bernoulli"``: arm ``a`` is Bernoulli(``mu_a``), the class of every arm all Bernoulli laws;
- ``"gaussian"``: arm ``a`` is ``N(mu_a, s_a^2)`` with its standard deviation ``s_a`` known,
  the class of arm ``a`` being ``{N(m, s_a^2) : m real}``.

The problem enters through the gaps ``Delta_a = mu* - mu_a`` and the *distinguishability gaps*
of each suboptimal arm (Azize & Basu 2022, Sec. 3; Lattimore & Szepesvari 2020, Sec. 16.1):
``kl_inf(a) = inf {KL(nu_a, nu') : nu' in M_a, mean(nu') > mu*}`` and the same infimum of the
total variation, ``tv_inf(a)``. Bernoulli: ``kl_inf = kl(mu_a, mu*)`` (binary relative entropy)
and ``tv_inf = Delta_a``; Gaussian: ``kl_inf = Delta_a^2 / (2 s_a^2)`` and
``tv_inf = 2 Phi(Delta_a / (2 s_a)) - 1``. When ``mu* = 1`` no Bernoulli law beats the best
arm: both infima are over an empty set, ``+inf``, and every bound is 0.

The bounds (sums over the arms with ``Delta_a > 0``):

- :func:`lai_robbins`: ``c = sum Delta_a / kl_inf(a)``. Lai & Robbins (1985); the general form
  is Theorem 16.2 of Lattimore & Szepesvari (2020). No privacy.
- :func:`shariff_sheffet`: ``c = max(sum Delta_a / kl_inf(a), n_sub / (6 eps))``, ``n_sub`` the
  number of suboptimal arms; Bernoulli arms. Shariff & Sheffet (NeurIPS 2018) state
  ``Omega(max{sum log T / Delta_a, K log T / eps})`` (as cited by Azize & Basu 2022, Sec. 1,
  and Sajed & Sheffet 2019) without constants; the function says which constants it uses.
- :func:`azize_basu`: ``c = sum Delta_a / min(kl_inf(a), 6 eps tv_inf(a))``. Azize & Basu
  (NeurIPS 2022), Theorem 3, eq. (4): any reward distributions with finite means; here
  Bernoulli, or Gaussian with known sd.
- :func:`azize_2025`: ``c = sum Delta_a / d_eps(mu_a, mu*)`` with
  ``d_eps(x, y) = inf_{z in [x, y]} eps (z - x) + kl(z, y)``. Azize, Wu, Honda, Orabona, Ito &
  Basu (NeurIPS 2025, "Optimal Regret of Bandits under Differential Privacy"), Theorem 1;
  Bernoulli arms.

They are ordered, for every instance and eps (tested in tests/dpbandits/test_lower_bounds.py):
``lai_robbins <= shariff_sheffet <= azize_basu <= azize_2025``, because a maximum of two sums is
at most the sum of the maxima, ``d_eps <= min(kl, eps Delta)`` (take ``z = x`` or ``z = y``) and
``eps Delta < 6 eps Delta``. ``azize_2025 >= n_sub log T / eps`` for the same reason. With
``eps = inf`` (no privacy) all four equal :func:`lai_robbins`. The privacy terms vanish in the
low-privacy regime: :func:`azize_basu` equals :func:`lai_robbins` once
``eps >= kl_inf(a) / (6 tv_inf(a))`` for every arm, :func:`azize_2025` once
``eps >= logit(mu*) - logit(mu_a)`` for every arm (where ``z = mu_a`` minimises ``d_eps``).

Inputs are checked before any work (the library's input policy, :mod:`dpbandits.core.checks`):
``means`` a 1-D sequence of at least two finite means (in ``[0, 1]`` for Bernoulli arms),
``sds`` positive (Gaussian arms only), ``epsilon > 0`` (``inf`` allowed), ``horizon`` a number
or array of numbers ``>= 1``; the result has the shape of ``horizon``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, TypedDict

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import erf, expit, logit, rel_entr

from dpbandits.core import checks

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = [
    "ARM_FAMILIES",
    "ArmModel",
    "BOUND_LABELS",
    "KARWA_VADHAN_CONSTANT",
    "azize_2025",
    "azize_basu",
    "coefficients",
    "coefficients_from_divergences",
    "d_epsilon_bernoulli",
    "distinguishability",
    "kl_bernoulli",
    "kl_gaussian",
    "lai_robbins",
    "regret_lower_bounds",
    "shariff_sheffet",
    "tv_gaussian",
]

#: The reward families the closed forms cover.
ARM_FAMILIES = ("bernoulli", "gaussian")

#: The names of the bounds, as keys of :func:`coefficients` and :func:`regret_lower_bounds`,
#: with a short citation (the legend of the regret plots).
BOUND_LABELS = {
    "lai_robbins": "Lai & Robbins 1985",
    "shariff_sheffet": "Shariff & Sheffet 2018",
    "azize_basu_2022": "Azize & Basu 2022",
    "azize_2025": "Azize et al. 2025",
}

#: The constant of the Karwa--Vadhan coupling lemma (Karwa & Vadhan 2018, Lemma 6.1): an eps-DP
#: algorithm fed ``n`` i.i.d. samples of ``P`` or of ``Q`` gives every event probabilities within
#: a factor ``exp(6 eps n TV(P, Q))``. It is the 6 of Azize & Basu (2022), Theorem 3, whose proof
#: makes that lemma sequential, and of the explicit form of Shariff & Sheffet's bound.
KARWA_VADHAN_CONSTANT = 6.0


class ArmModel(TypedDict, total=False):
    """The model class of the arms (module docstring), the keywords every bound passes on to
    :func:`distinguishability` unchanged: ``arm`` (``"bernoulli"``, the default, or
    ``"gaussian"``) and ``sds``, the known standard deviations of Gaussian arms (one, or one per
    arm; ``None``, the default, for Bernoulli arms). A misspelt keyword is a ``TypeError``."""

    arm: str
    sds: ArrayLike | None


# -- divergences ------------------------------------------------------------------------------
def kl_bernoulli(p: ArrayLike, q: ArrayLike) -> NDArray[np.float64]:
    """``kl(p, q) = p log(p/q) + (1-p) log((1-p)/(1-q))``, elementwise (arrays broadcast).

    ``0 log 0 = 0``; ``+inf`` when ``q`` is 0 or 1 and ``p != q``. Raises ``ValueError`` for
    values outside ``[0, 1]``.
    """
    p_, q_ = _unit_interval(p, "p"), _unit_interval(q, "q")
    return np.asarray(rel_entr(p_, q_) + rel_entr(1.0 - p_, 1.0 - q_), dtype=np.float64)


def kl_gaussian(m1: ArrayLike, m2: ArrayLike, sd: ArrayLike) -> NDArray[np.float64]:
    """``KL(N(m1, sd^2), N(m2, sd^2)) = (m1 - m2)^2 / (2 sd^2)``, elementwise (broadcast)."""
    a, b, s = checks.real_array(m1, "m1"), checks.real_array(m2, "m2"), _positive(sd, "sd")
    return np.asarray((a - b) ** 2 / (2.0 * s**2), dtype=np.float64)


def tv_gaussian(m1: ArrayLike, m2: ArrayLike, sd: ArrayLike) -> NDArray[np.float64]:
    """``TV(N(m1, sd^2), N(m2, sd^2)) = 2 Phi(|m1 - m2| / (2 sd)) - 1``, elementwise.

    Written as ``erf(|m1 - m2| / (2 sqrt(2) sd))``, which keeps its precision for small gaps.
    """
    a, b, s = checks.real_array(m1, "m1"), checks.real_array(m2, "m2"), _positive(sd, "sd")
    return np.asarray(erf(np.abs(a - b) / (2.0 * math.sqrt(2.0) * s)), dtype=np.float64)


def d_epsilon_bernoulli(x: ArrayLike, y: ArrayLike, epsilon: float) -> NDArray[np.float64]:
    """The KL-TV characteristic of Azize et al. (2025), Theorem 1, for Bernoulli laws:

        ``d_eps(x, y) = inf_{z between x and y}  eps |z - x| + kl(z, y)``,

    elementwise in ``x`` and ``y`` (broadcast). It is the cheapest way to move the data law
    ``Bernoulli(x)`` to ``Bernoulli(y)`` when the first part of the move, to ``Bernoulli(z)``,
    costs ``eps`` times its total variation (group privacy) and the rest its relative entropy.
    ``d_eps <= min(kl(x, y), eps |y - x|)``; ``eps = inf`` gives ``kl(x, y)``.

    How it is computed: the objective is convex in ``z`` and, for ``x <= y``, its derivative
    ``eps + logit(z) - logit(y)`` vanishes at ``z0 = expit(logit(y) - eps)``, below ``y``; so the
    minimiser over ``[x, y]`` is ``max(x, z0)`` (for ``x > y``: ``min(x, expit(logit(y) +
    eps))``). This closed form replaces a numerical search: it is exact up to rounding, and
    tests/dpbandits/test_lower_bounds.py checks it against scipy's bounded Brent minimisation
    (``xatol = 1e-12``) at random points, where it is never larger than the search's minimum by
    more than ``1e-12``.
    """
    eps = checks.positive_number(epsilon, "epsilon", allow_inf=True)
    x_, y_ = np.broadcast_arrays(_unit_interval(x, "x"), _unit_interval(y, "y"))
    if math.isinf(eps):
        return kl_bernoulli(x_, y_)
    with np.errstate(divide="ignore"):  # logit(0) = -inf and logit(1) = inf are exact here
        ly = logit(y_)
    z = np.where(x_ <= y_, np.maximum(x_, expit(ly - eps)), np.minimum(x_, expit(ly + eps)))
    return np.asarray(eps * np.abs(z - x_) + kl_bernoulli(z, y_), dtype=np.float64)


# -- the problem ------------------------------------------------------------------------------
def distinguishability(
    means: ArrayLike, *, arm: str = "bernoulli", sds: ArrayLike | None = None
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """``(gaps, kl_inf, tv_inf)`` of every arm, each of shape ``(K,)`` (see the module).

    ``gaps[a] = mu* - mu_a``; ``kl_inf`` and ``tv_inf`` are the distinguishability gaps of Azize
    & Basu (2022), Sec. 3, in the model class of ``arm``: 0 for the optimal arms, ``+inf`` for
    every suboptimal arm of a Bernoulli bandit whose best mean is 1.
    """
    mu, sd = _check_arms(means, arm, sds)
    best = float(mu.max())
    gaps = best - mu
    if arm == "bernoulli":
        kl = kl_bernoulli(mu, best)
        tv = gaps.copy()
        if best == 1.0:  # no Bernoulli law has a mean above 1
            kl[gaps > 0] = np.inf
            tv[gaps > 0] = np.inf
    else:
        assert sd is not None
        kl = kl_gaussian(mu, best, sd)
        tv = tv_gaussian(mu, best, sd)
    return gaps, kl, tv


def coefficients_from_divergences(
    gaps: ArrayLike, kl_inf: ArrayLike, tv_inf: ArrayLike, epsilon: float
) -> dict[str, float]:
    """The coefficients ``c`` of the bounds valid for any model class, from its gaps and
    distinguishability gaps: ``{"lai_robbins": c, "azize_basu_2022": c}`` (see the module).

    For a class this module has no closed form for, pass upper bounds of ``kl_inf`` and
    ``tv_inf`` (for example, by the data-processing inequality, those of a law the rewards are a
    function of): every coefficient then stays a valid, smaller, lower bound. Arms with
    ``gaps <= 0`` do not count; a suboptimal arm must have ``kl_inf > 0`` and ``tv_inf > 0``
    (``+inf`` allowed: such an arm costs nothing).
    """
    eps = checks.positive_number(epsilon, "epsilon", allow_inf=True)
    g, kl, tv = _check_divergences(gaps, kl_inf, tv_inf)
    sub = g > 0
    g, kl, tv = g[sub], kl[sub], tv[sub]
    private = KARWA_VADHAN_CONSTANT * eps * tv  # tv > 0, so eps = inf gives inf, never NaN
    return {
        "lai_robbins": float(np.sum(g / kl)),
        "azize_basu_2022": float(np.sum(g / np.minimum(kl, private))),
    }


def coefficients(
    means: ArrayLike, epsilon: float, *, arm: str = "bernoulli", sds: ArrayLike | None = None
) -> dict[str, float]:
    """The coefficient ``c`` (bound ``= c log T``) of every bound that applies to ``arm``:
    all four for Bernoulli arms, ``lai_robbins`` and ``azize_basu_2022`` for Gaussian arms."""
    eps = checks.positive_number(epsilon, "epsilon", allow_inf=True)
    gaps, kl, tv = distinguishability(means, arm=arm, sds=sds)
    out = coefficients_from_divergences(gaps, kl, tv, eps)
    if arm == "bernoulli":
        sub = gaps > 0
        # Shariff & Sheffet's private term, per suboptimal arm that some law can beat: with
        # tv_inf = Delta_a it is Delta_a / (6 eps tv_inf) = 1 / (6 eps)
        private = float(np.sum(gaps[sub] / (KARWA_VADHAN_CONSTANT * eps * tv[sub])))
        out["shariff_sheffet"] = max(out["lai_robbins"], private)
        mu = np.asarray(means, dtype=np.float64)
        best = float(mu.max())
        if best < 1.0:
            d = d_epsilon_bernoulli(mu[sub], best, eps)
            out["azize_2025"] = float(np.sum(gaps[sub] / d))
        else:  # inf over an empty set of alternatives, as for the other bounds
            out["azize_2025"] = 0.0
    return {key: out[key] for key in BOUND_LABELS if key in out}


# -- the bounds -------------------------------------------------------------------------------
def lai_robbins(
    means: ArrayLike, horizon: ArrayLike, **model: Unpack[ArmModel]
) -> NDArray[np.float64]:
    """The Lai--Robbins bound ``sum_a Delta_a / kl_inf(a) * log T`` (no privacy).

    Lai & Robbins (1985); for any model class of the product form it is Theorem 16.2 of
    Lattimore & Szepesvari (2020): every consistent policy has
    ``liminf Reg_T / log T >= sum_{Delta_a > 0} Delta_a / kl_inf(a)``. Bernoulli:
    ``kl_inf = kl(mu_a, mu*)``; Gaussian with known sd: ``Delta_a^2 / (2 s_a^2)``, so
    ``c = sum 2 s_a^2 / Delta_a``.
    """
    logt = _log_horizon(horizon)
    gaps, kl, tv = distinguishability(means, **model)
    return _times_log(coefficients_from_divergences(gaps, kl, tv, math.inf)["lai_robbins"], logt)


def shariff_sheffet(means: ArrayLike, epsilon: float, horizon: ArrayLike) -> NDArray[np.float64]:
    """Shariff & Sheffet's eps-global-DP bound for Bernoulli bandits, with explicit constants:
    ``max(sum_a Delta_a / kl(mu_a, mu*), n_sub / (6 eps)) * log T``.

    Shariff & Sheffet (NeurIPS 2018, "Differentially Private Contextual Linear Bandits") give
    the first lower bound on the extra regret of an eps-DP algorithm for the stochastic MAB
    problem with Bernoulli rewards, ``Omega(max{sum_{a != a*} log T / Delta_a, K log T / eps})``
    (the form Azize & Basu 2022, Sec. 1, cite; Sajed & Sheffet 2019 cite its
    ``Omega(K log T / eps)`` part). The statement is an ``Omega()``: no constants. The
    constants used here are the ones the argument gives:

    - the non-private term is the Lai--Robbins coefficient itself, the exact form of which
      ``sum log T / Delta_a`` is the order (for Bernoulli arms
      ``Delta_a / kl(mu_a, mu*) >= mu*(1 - mu*) / Delta_a``);
    - the private term is ``1 / (6 eps)`` per suboptimal arm: by the Karwa--Vadhan coupling
      (:data:`KARWA_VADHAN_CONSTANT`), moving arm ``a``'s mean just above ``mu*`` changes the
      probability of any event by at most ``exp(6 eps Delta_a E[N_a])``, so consistency needs
      ``E[N_a] >= (1 - o(1)) log T / (6 eps Delta_a)``, a regret ``Delta_a E[N_a]`` of
      ``log T / (6 eps)``. With these constants it is the bound Azize & Basu (2022, Sec. 3,
      remark 2 on Theorem 3) say theirs retrieves, and it is at most :func:`azize_basu`.

    ``n_sub`` counts the suboptimal arms (0 when ``mu* = 1``: no Bernoulli arm can beat it).
    """
    logt = _log_horizon(horizon)
    return _times_log(coefficients(means, epsilon)["shariff_sheffet"], logt)


def azize_basu(
    means: ArrayLike, epsilon: float, horizon: ArrayLike, **model: Unpack[ArmModel]
) -> NDArray[np.float64]:
    """Azize & Basu's eps-global-DP bound
    ``sum_a Delta_a / min(kl_inf(a), 6 eps tv_inf(a)) * log T``.

    Azize & Basu (NeurIPS 2022, "When Privacy Meets Partial Information"), Theorem 3, eq. (4):
    for every environment of distributions with finite means and every consistent eps-global-DP
    policy, ``liminf Reg_T / log T`` is at least this coefficient. Bernoulli:
    ``tv_inf = Delta_a``, so ``c = sum max(Delta_a / kl(mu_a, mu*), 1 / (6 eps))``. It equals
    :func:`lai_robbins` in the low-privacy regime ``eps >= kl_inf(a) / (6 tv_inf(a))``.
    """
    logt = _log_horizon(horizon)
    eps = checks.positive_number(epsilon, "epsilon", allow_inf=True)
    gaps, kl, tv = distinguishability(means, **model)
    return _times_log(coefficients_from_divergences(gaps, kl, tv, eps)["azize_basu_2022"], logt)


def azize_2025(means: ArrayLike, epsilon: float, horizon: ArrayLike) -> NDArray[np.float64]:
    """The refined eps-global-DP bound of Azize, Wu, Honda, Orabona, Ito & Basu (2025),
    ``sum_a Delta_a / d_eps(mu_a, mu*) * log T``, for Bernoulli bandits.

    NeurIPS 2025, "Optimal Regret of Bandits under Differential Privacy" (arXiv 2505.05613,
    "Optimal Regret of Bernoulli Bandits under Global Differential Privacy"), Theorem 1: every
    consistent eps-global-DP policy has ``liminf Reg_T / log T >= sum Delta_a / d_eps(mu_a,
    mu*)``, with the KL-TV characteristic ``d_eps`` of :func:`d_epsilon_bernoulli`; their
    DP-KLUCB and DP-IMED reach it up to a factor arbitrarily close to 1. It interpolates between
    :func:`lai_robbins` (large eps: ``d_eps = kl`` once ``eps >= logit(mu*) - logit(mu_a)``) and
    ``sum 1 / eps`` (``eps -> 0``: ``d_eps ~ eps Delta_a``), and is at least
    :func:`azize_basu`. The paper covers Bernoulli arms only, so this function does too.
    """
    logt = _log_horizon(horizon)
    return _times_log(coefficients(means, epsilon)["azize_2025"], logt)


def regret_lower_bounds(
    means: ArrayLike, epsilon: float, horizon: ArrayLike, **model: Unpack[ArmModel]
) -> dict[str, NDArray[np.float64]]:
    """Every bound that applies to ``arm`` at ``horizon``, by name (:data:`BOUND_LABELS`):
    all four for Bernoulli arms; ``lai_robbins`` and ``azize_basu_2022`` for Gaussian ones."""
    logt = _log_horizon(horizon)
    return {k: _times_log(c, logt) for k, c in coefficients(means, epsilon, **model).items()}


# -- checks -----------------------------------------------------------------------------------
def _unit_interval(x: ArrayLike, name: str) -> NDArray[np.float64]:
    a = checks.real_array(x, name)
    if a.size and ((a < 0.0) | (a > 1.0)).any():
        bad = a[(a < 0.0) | (a > 1.0)].flat[0]
        raise ValueError(f"{name} must lie in [0, 1] (Bernoulli means), got {bad!r}")
    return a


def _positive(x: ArrayLike, name: str) -> NDArray[np.float64]:
    a = checks.real_array(x, name)
    if a.size and not (a > 0.0).all():
        raise ValueError(f"{name} must be > 0, got {a[~(a > 0.0)].flat[0]!r}")
    return a


def _check_arms(
    means: ArrayLike, arm: Any, sds: ArrayLike | None
) -> tuple[NDArray[np.float64], NDArray[np.float64] | None]:
    if not isinstance(arm, str):
        raise TypeError(f"arm must be a string, got {type(arm).__name__} {arm!r}")
    checks.one_of(arm, ARM_FAMILIES, "arm")
    mu = checks.real_array(means, "means")
    if mu.ndim != 1:
        raise ValueError(f"means must be a 1-D sequence of arm means, got shape {mu.shape}")
    if mu.size < 2:
        raise ValueError(f"means must have at least 2 arms (one arm has no regret), got {mu.size}")
    if arm == "bernoulli":
        if sds is not None:
            raise ValueError("sds must be None for Bernoulli arms (the mean fixes the law)")
        if ((mu < 0.0) | (mu > 1.0)).any():
            bad = mu[(mu < 0.0) | (mu > 1.0)][0]
            raise ValueError(f"means of Bernoulli arms must lie in [0, 1], got {bad!r}")
        return mu, None
    if sds is None:
        raise ValueError("sds must be given for Gaussian arms (their known standard deviations)")
    sd = _positive(sds, "sds")
    if sd.ndim > 1 or sd.size not in (1, mu.size):
        raise ValueError(
            f"sds must be one standard deviation or one per arm ({mu.size}), got shape {sd.shape}"
        )
    return mu, np.broadcast_to(sd, mu.shape).astype(np.float64)


def _check_divergences(
    gaps: ArrayLike, kl_inf: ArrayLike, tv_inf: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    g = checks.real_array(gaps, "gaps")
    kl = checks.real_array(kl_inf, "kl_inf", finite=False)
    tv = checks.real_array(tv_inf, "tv_inf", finite=False)
    if g.ndim != 1 or kl.shape != g.shape or tv.shape != g.shape:
        raise ValueError(
            "gaps, kl_inf and tv_inf must be 1-D arrays of the same length, got shapes "
            f"{g.shape}, {kl.shape}, {tv.shape}"
        )
    sub = g > 0
    for name, arr in (("kl_inf", kl), ("tv_inf", tv)):
        if np.isnan(arr).any() or not (arr[sub] > 0.0).all():
            raise ValueError(f"{name} must be > 0 (or +inf) for every arm with a positive gap, "
                             f"and never NaN; got {arr.tolist()}")  # fmt: skip
    return g, kl, tv


def _log_horizon(horizon: ArrayLike) -> NDArray[np.float64]:
    t = checks.real_array(horizon, "horizon")
    if t.size and not (t >= 1.0).all():
        raise ValueError(f"horizon must be >= 1, got {t[~(t >= 1.0)].flat[0]!r}")
    return np.log(t)


def _times_log(c: float, logt: NDArray[np.float64]) -> NDArray[np.float64]:
    """``c * log T``; 0 at ``T = 1`` even when ``c = inf`` (no regret before a second step)."""
    out = np.zeros_like(logt)
    np.multiply(c, logt, out=out, where=logt > 0)
    return out[()] if out.ndim == 0 else out
