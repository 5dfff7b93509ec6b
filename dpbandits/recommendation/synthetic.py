"""Synthetic recommendation requests with the three knobs of paper 001, App. G.

Each request has ``K`` candidates (fixed or drawn per request). Candidate ``i`` of a request has
two standard-normal latent effects: ``x_pub[i]``, what the *public* (server) context -- query,
time, the candidate's population statistics -- says about it, and ``x_priv[i]``, what the user's
*private* (device) context adds. Their mix

    z = rho * x_pub + sqrt(1 - rho^2) * x_priv

is mapped to the private score (pClick_device, the engagement probability) by the quantile
transform ``s = F^-1(Phi(z))``, so ``s`` has exactly the marginal law ``F``:

- ``F = Beta(mu kappa, (1 - mu) kappa)`` with ``kappa = 1/extremeness - 1``: mean ``mu`` and
  variance ``extremeness * mu (1 - mu)``, i.e. ``extremeness`` is the fraction of the largest
  variance a score in ``[0, 1]`` with mean ``mu`` can have. ``extremeness = 1/3`` with
  ``mu = 1/2`` is the uniform law (App. G, Fig. 10a); ``extremeness = 1`` is the weighted
  Bernoulli(``mu``) of Fig. 10b-c; small values concentrate the scores near ``mu``.

The public score (pClick_server) is the best prediction without private data,
``s_server = E[s | x_pub]`` (Gauss-Hermite quadrature), so ``informativeness = rho`` runs from
uninformative public scores (``rho = 0``: the constant ``mu``) to ``s_server = s`` (``rho = 1``);
this plays the role of the mixing weight of Eq. 6 (App. H). The knobs of App. G are
``extremeness`` (a: extreme private scores), ``n_candidates`` (b: more candidates) and
``informativeness`` (c: informative public scores).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import special, stats

from dpbandits.core.arrays import FloatArray
from dpbandits.selectors.base import RNGLike

__all__ = ["Requests", "generate_requests", "score_quantile"]


#: Gauss-Hermite nodes for E[g(rho x + sqrt(1 - rho^2) T)], T ~ N(0, 1).
_GH_NODES = 64
#: The quantile map g(z) = F^-1(Phi(z)) is tabulated on this grid for the expectation.
_Z_GRID = np.linspace(-9.0, 9.0, 4001)


def _check_unit(value: Any, name: str, *, lo_open: bool, hi_open: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    v = float(value)
    ok = (0.0 < v if lo_open else 0.0 <= v) and (v < 1.0 if hi_open else v <= 1.0)
    if not ok:
        lo, hi = "(" if lo_open else "[", ")" if hi_open else "]"
        raise ValueError(f"{name} must lie in {lo}0, 1{hi}, got {v!r}")
    return v


def _check_candidates(n_candidates: Any) -> tuple[int, int]:
    def one(v: Any) -> int:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"n_candidates must be integers >= 1, got {v!r}")
        return int(v)

    if isinstance(n_candidates, tuple | list):
        if len(n_candidates) != 2:
            raise ValueError(f"n_candidates range must be (low, high), got {n_candidates!r}")
        lo, hi = one(n_candidates[0]), one(n_candidates[1])
        if lo > hi:
            raise ValueError(f"n_candidates range needs low <= high, got {n_candidates!r}")
        return lo, hi
    k = one(n_candidates)
    return k, k


def score_quantile(u: FloatArray, mean: float, extremeness: float) -> FloatArray:
    """``F^-1(u)`` of the private score law (Beta, or Bernoulli at ``extremeness = 1``)."""
    if extremeness >= 1.0:
        return (u > 1.0 - mean).astype(np.float64)
    kappa = 1.0 / extremeness - 1.0
    return np.asarray(stats.beta.ppf(u, mean * kappa, (1.0 - mean) * kappa), dtype=np.float64)


@dataclass(frozen=True)
class Requests:
    """A batch of recommendation requests, candidates padded to ``K = max`` columns.

    ``private`` are the device scores (engagement probabilities), ``public`` the server scores,
    ``eligible`` marks the real candidates of each row (padding is ``False``, score 0).
    ``x_pub``/``x_priv`` are the latent public and private effects.
    """

    private: FloatArray
    public: FloatArray
    eligible: NDArray[np.bool_]
    x_pub: FloatArray
    x_priv: FloatArray

    @property
    def n(self) -> int:
        return int(self.private.shape[0])

    def subset(self, rows: NDArray[np.int64] | slice) -> Requests:
        return Requests(
            self.private[rows],
            self.public[rows],
            self.eligible[rows],
            self.x_pub[rows],
            self.x_priv[rows],
        )


def generate_requests(
    n: int,
    *,
    n_candidates: int | tuple[int, int] = 10,
    extremeness: float = 1.0 / 3.0,
    informativeness: float = 0.5,
    mean: float = 0.5,
    rng: RNGLike = None,
) -> Requests:
    """Draw ``n`` requests (module docstring for the model).

    ``n_candidates`` is ``K`` or a range ``(low, high)`` drawn uniformly per request;
    ``extremeness`` in ``(0, 1]``; ``informativeness`` (rho) in ``[0, 1]``; ``mean`` (mu) in
    ``(0, 1)``.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"n must be an integer >= 0, got {n!r}")
    lo, hi = _check_candidates(n_candidates)
    e = _check_unit(extremeness, "extremeness", lo_open=True, hi_open=False)
    rho = _check_unit(informativeness, "informativeness", lo_open=False, hi_open=False)
    mu = _check_unit(mean, "mean", lo_open=True, hi_open=True)
    gen = np.random.default_rng(rng)
    n = int(n)
    counts = gen.integers(lo, hi + 1, size=n) if hi > lo else np.full(n, lo)
    eligible = np.arange(hi)[None, :] < counts[:, None]
    x_pub = gen.standard_normal((n, hi))
    x_priv = gen.standard_normal((n, hi))
    sigma = math.sqrt(max(0.0, 1.0 - rho * rho))
    z = rho * x_pub + sigma * x_priv
    private = score_quantile(special.ndtr(z), mu, e)
    public = _conditional_mean(x_pub, rho, sigma, mu, e)
    private = np.where(eligible, private, 0.0)
    public = np.where(eligible, public, 0.0)
    return Requests(private, public, eligible, x_pub, x_priv)


def _conditional_mean(
    x_pub: FloatArray, rho: float, sigma: float, mu: float, e: float
) -> FloatArray:
    """``E[F^-1(Phi(rho x + sigma T))]``, T ~ N(0, 1): the calibrated server score."""
    if sigma == 0.0:
        return score_quantile(special.ndtr(x_pub), mu, e)
    if rho == 0.0:
        return np.full(x_pub.shape, mu)
    if e >= 1.0:  # Bernoulli: P(z > Phi^-1(1 - mu) | x) in closed form
        c = special.ndtri(1.0 - mu)
        return np.asarray(special.ndtr((rho * x_pub - c) / sigma), dtype=np.float64)
    table = score_quantile(special.ndtr(_Z_GRID), mu, e)
    t, w = np.polynomial.hermite_e.hermegauss(_GH_NODES)  # weight exp(-t^2/2)
    w = w / w.sum()
    out = np.zeros(x_pub.shape)
    for tj, wj in zip(t, w, strict=True):
        out += wj * np.interp(rho * x_pub + sigma * tj, _Z_GRID, table)
    return out
