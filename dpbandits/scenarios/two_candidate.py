"""Two-candidate maps ``HG(M, M')`` (§V-A, Fig. 2; App. D, Figs. 10-12; §VI, App. H).

Two candidates with scores ``q_1 < q_2`` (so ``a* = 2``, index 1) and sensitivities
``(d_1, d_2)``. For two mechanisms

    HG(M, M') = P[M(q) != a*] - P[M'(q) != a*]                                  (§V-A)

is positive exactly when ``M'`` errs less often than ``M``. :func:`hg_map` estimates it by
Monte Carlo over a grid of ``(d_1, d_2)`` -- each mechanism is called once per grid row on a
``(n_d1, n_draws, 2)`` batch -- and :func:`hg_closed_map` evaluates it from closed forms.

Closed forms of the error probability ``P[M != a*]`` (:func:`error_probability`), with
``g = q_2 - q_1 > 0`` and ``D = max(d_1, d_2)``:

- ``rnm`` / ``permute_and_flip`` (exponential noise of mean ``2D/eps``): ``exp(-eps g/(2D))/2``
  (§V-A; permute-and-flip has the same output distribution, Ding et al. 2021);
- ``rnmh`` (noise of mean ``2 d_a/eps``): ``exp(-eps g/(2 d_1)) / (1 + d_2/d_1)`` (§V-A);
- ``exponential_mechanism``: ``1 / (1 + exp(eps g/(2D)))`` (softmax of ``eps q/(2D)``);
- ``krr``: ``1 / (e^eps + 1)``; ``uniform``: ``1/2``; ``greedy``: 0;
- ``gem`` / ``mgem`` (derived here, not in the paper): with ``t = +-2 ln(2/beta)/eps`` and
  ``s_a = q_a - t d_a``, GEM's normalised scores are ``0`` for the larger ``s`` and
  ``-|s_2 - s_1|/(d_1 + d_2)`` for the other, then exponential-noise RNM with ``D = 1``:
  ``P[err] = exp(-eps c/2)/2`` if ``s_2 > s_1``, ``1 - exp(-eps c/2)/2`` if ``s_1 > s_2``,
  ``1/2`` if equal, with ``c = |s_2 - s_1|/(d_1 + d_2)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from dpbandits.core import checks
from dpbandits.core.arrays import FloatArray
from dpbandits.selectors.spec import resolve_selector

__all__ = [
    "CLOSED_FORMS",
    "HGMap",
    "error_probability",
    "rnm_error_probability",
    "rnmh_error_probability",
    "hg_closed_map",
    "hg_map",
    "error_rate",
]


def _check_pair(
    q1: float, q2: float, d1: ArrayLike, d2: ArrayLike
) -> tuple[float, FloatArray, FloatArray]:
    q1, q2 = checks.number(q1, "q1"), checks.number(q2, "q2")
    if not q1 < q2:
        raise ValueError(f"need q1 < q2 so that candidate 2 is the unique best, got {q1}, {q2}")
    a1 = checks.real_array(d1, "d1")
    a2 = checks.real_array(d2, "d2")
    for nm, a in (("d1", a1), ("d2", a2)):
        if not np.all(a > 0):
            raise ValueError(f"{nm} must be finite and > 0")
    return q2 - q1, a1, a2


def rnm_error_probability(
    q1: float, q2: float, d1: ArrayLike, d2: ArrayLike, epsilon: float
) -> FloatArray:
    """RNM (exponential noise, ``D = max(d1, d2)``): ``P[pick 1] = exp(-eps (q2-q1)/(2D))/2``."""
    eps = checks.positive_number(epsilon, "epsilon")
    g, a1, a2 = _check_pair(q1, q2, d1, d2)
    return 0.5 * np.exp(-eps * g / (2.0 * np.maximum(a1, a2)))


def rnmh_error_probability(
    q1: float, q2: float, d1: ArrayLike, d2: ArrayLike, epsilon: float
) -> FloatArray:
    """RNMH (noise mean ``2 d_a/eps``): ``P[pick 1] = exp(-eps (q2-q1)/(2 d1)) / (1 + d2/d1)``.

    (§V-A; derivation: ``P[z_1 - z_2 > g] = e^{-lambda_1 g} lambda_2 / (lambda_1 + lambda_2)``
    for independent exponentials of rates ``lambda_a = eps / (2 d_a)``.)
    """
    eps = checks.positive_number(epsilon, "epsilon")
    g, a1, a2 = _check_pair(q1, q2, d1, d2)
    return np.exp(-eps * g / (2.0 * a1)) / (1.0 + a2 / a1)


def _em_error(q1: float, q2: float, d1: ArrayLike, d2: ArrayLike, epsilon: float) -> FloatArray:
    eps = checks.positive_number(epsilon, "epsilon")
    g, a1, a2 = _check_pair(q1, q2, d1, d2)
    # 1 / (1 + e^x) computed stably as expit(-x).
    from scipy.special import expit

    return np.asarray(expit(-eps * g / (2.0 * np.maximum(a1, a2))), dtype=np.float64)


def _gem_error(sign: float) -> Callable[..., FloatArray]:
    def f(
        q1: float, q2: float, d1: ArrayLike, d2: ArrayLike, epsilon: float, beta: float = 0.05
    ) -> FloatArray:
        eps = checks.positive_number(epsilon, "epsilon")
        g, a1, a2 = _check_pair(q1, q2, d1, d2)
        beta = checks.number(beta, "beta")
        if not (0 < beta < 2):
            raise ValueError(f"beta must be in (0, 2) for two candidates, got {beta}")
        t = sign * 2.0 * math.log(2.0 / beta) / eps
        diff = (q2 - t * a2) - (q1 - t * a1)  # s_2 - s_1
        half = 0.5 * np.exp(-eps * np.abs(diff) / (2.0 * (a1 + a2)))
        return np.where(diff > 0, half, np.where(diff < 0, 1.0 - half, 0.5))

    return f


def _const(value: float) -> Callable[..., FloatArray]:
    def f(q1: float, q2: float, d1: ArrayLike, d2: ArrayLike, epsilon: float) -> FloatArray:
        checks.positive_number(epsilon, "epsilon")
        _, a1, a2 = _check_pair(q1, q2, d1, d2)
        return np.full(np.broadcast_shapes(a1.shape, a2.shape), value)

    return f


def _krr_error(q1: float, q2: float, d1: ArrayLike, d2: ArrayLike, epsilon: float) -> FloatArray:
    eps = checks.positive_number(epsilon, "epsilon")
    _, a1, a2 = _check_pair(q1, q2, d1, d2)
    from scipy.special import expit

    return np.full(np.broadcast_shapes(a1.shape, a2.shape), float(expit(-eps)))


#: Closed-form ``P[M != a*]`` for two candidates, by selector name.
CLOSED_FORMS: dict[str, Callable[..., FloatArray]] = {
    "rnm": rnm_error_probability,
    "permute_and_flip": rnm_error_probability,
    "rnmh": rnmh_error_probability,
    "exponential_mechanism": _em_error,
    "krr": _krr_error,
    "uniform": _const(0.5),
    "greedy": _const(0.0),
    "gem": _gem_error(+1.0),
    "mgem": _gem_error(-1.0),
}


def error_probability(
    name: str,
    q1: float,
    q2: float,
    d1: ArrayLike,
    d2: ArrayLike,
    epsilon: float,
    **kwargs: Any,
) -> FloatArray:
    """Closed-form probability that selector ``name`` misses the best of two candidates."""
    if name not in CLOSED_FORMS:
        raise ValueError(f"no closed form for {name!r}; available: {sorted(CLOSED_FORMS)}")
    return CLOSED_FORMS[name](q1, q2, d1, d2, epsilon, **kwargs)


@dataclass
class HGMap:
    """``HG(M, M')`` on a grid: ``hg[j, i]`` is at ``(d1[i], d2[j])`` (rows = d2, for imshow).

    ``error_m`` / ``error_m2`` are the error probabilities of each mechanism, ``se`` the
    standard error of ``hg`` (zeros for a closed-form map).
    """

    m: str
    m2: str
    d1: FloatArray
    d2: FloatArray
    epsilon: float
    q1: float
    q2: float
    hg: FloatArray
    se: FloatArray
    error_m: FloatArray
    error_m2: FloatArray
    n_draws: int | None = None
    method: str = "monte carlo"

    @property
    def title(self) -> str:
        return f"HG({self.m}, {self.m2}), eps={self.epsilon:g}, q2-q1={self.q2 - self.q1:g}"

    def records(self) -> list[dict[str, Any]]:
        return [
            {
                "m": self.m,
                "m2": self.m2,
                "epsilon": self.epsilon,
                "gap": self.q2 - self.q1,
                "d1": float(self.d1[i]),
                "d2": float(self.d2[j]),
                "hg": float(self.hg[j, i]),
                "se": float(self.se[j, i]),
                "method": self.method,
            }
            for j in range(self.d2.size)
            for i in range(self.d1.size)
        ]


def _grid(values: ArrayLike, name: str) -> FloatArray:
    a = np.atleast_1d(np.asarray(values, dtype=np.float64))
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-d grid")
    if not np.all(np.isfinite(a) & (a > 0)):
        raise ValueError(f"{name} must be finite and > 0")
    return a


def hg_closed_map(
    m: str,
    m2: str,
    d1: ArrayLike,
    d2: ArrayLike,
    epsilon: float,
    q1: float = 0.0,
    q2: float = 1.0,
) -> HGMap:
    """Closed-form :class:`HGMap` (only for names in :data:`CLOSED_FORMS`): the same as
    ``hg_map(m, m2, d1, d2, epsilon, q1, q2, method="closed form")``."""
    return hg_map(m, m2, d1, d2, epsilon, q1, q2, method="closed form")


def _label(spec: Any) -> str:
    return spec if isinstance(spec, str) else str(getattr(spec, "name", spec))


def error_rate(
    selector: Any,
    d1: ArrayLike,
    d2: ArrayLike,
    epsilon: float,
    q1: float = 0.0,
    q2: float = 1.0,
    n_draws: int = 4000,
    seed: int | np.random.SeedSequence | None = 0,
) -> tuple[FloatArray, FloatArray]:
    """Monte Carlo ``P[M != a*]`` on the grid ``(d2, d1)``: returns ``(rate, se)``.

    ``selector`` is a name (``"rs:gamma=0.01"`` passes keyword arguments), an instance or a
    plug-in; it is run at ``epsilon`` with one call per grid row on a ``(n_d1, n_draws, 2)``
    batch. Row ``j`` draws from ``SeedSequence(seed).spawn``-style child ``j``.
    """
    eps = checks.positive_number(epsilon, "epsilon")
    g1, g2 = _grid(d1, "d1"), _grid(d2, "d2")
    _check_pair(q1, q2, g1, g2)
    if isinstance(n_draws, bool) or not isinstance(n_draws, (int, np.integer)) or n_draws < 2:
        raise ValueError(f"n_draws must be an int >= 2, got {n_draws!r}")
    sel = resolve_selector(selector, eps)
    sel = sel.with_epsilon(eps)
    root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    children = root.spawn(g2.size)
    q = np.empty((g1.size, n_draws, 2))
    q[..., 0], q[..., 1] = q1, q2
    rate = np.empty((g2.size, g1.size))
    for j, (dd2, child) in enumerate(zip(g2, children, strict=True)):
        d = np.empty((g1.size, 1, 2))
        d[:, 0, 0], d[:, 0, 1] = g1, dd2
        idx = np.asarray(sel.select(q, d, np.random.default_rng(child)))
        if idx.shape != (g1.size, n_draws):
            raise ValueError(
                f"selector {_label(selector)!r} returned shape {idx.shape}, "
                f"expected {(g1.size, n_draws)}"
            )
        rate[j] = (idx != 1).mean(axis=1)
    se = np.sqrt(rate * (1 - rate) / n_draws)
    return rate, se


def hg_map(
    m: Any,
    m2: Any,
    d1: ArrayLike,
    d2: ArrayLike,
    epsilon: float,
    q1: float = 0.0,
    q2: float = 1.0,
    n_draws: int = 4000,
    seed: int | np.random.SeedSequence | None = 0,
    *,
    method: str = "monte carlo",
) -> HGMap:
    """:class:`HGMap` of ``HG(M, M')`` (Figs. 2, 10-12), by ``method``:

    - ``"monte carlo"``: :func:`error_rate` of each mechanism; the two draw independently (seed
      children 0 and 1), so ``se = sqrt(se_M^2 + se_M'^2)`` with binomial standard errors;
    - ``"closed form"``: :func:`error_probability` (names of :data:`CLOSED_FORMS` only), ``se``
      zero; ``n_draws`` and ``seed`` are not used.
    """
    if method == "closed form":
        g1, g2 = _grid(d1, "d1"), _grid(d2, "d2")
        D1, D2 = np.meshgrid(g1, g2)
        e1 = error_probability(m, q1, q2, D1, D2, epsilon)
        e2 = error_probability(m2, q1, q2, D1, D2, epsilon)
        se, n = np.zeros_like(e1), None
    elif method == "monte carlo":
        root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
        s_m, s_m2 = root.spawn(2)
        e1, se1 = error_rate(m, d1, d2, epsilon, q1, q2, n_draws, s_m)
        e2, se2 = error_rate(m2, d1, d2, epsilon, q1, q2, n_draws, s_m2)
        g1, g2 = _grid(d1, "d1"), _grid(d2, "d2")
        se, n = np.sqrt(se1**2 + se2**2), int(n_draws)
    else:
        raise ValueError(f"method must be 'monte carlo' or 'closed form', got {method!r}")
    return HGMap(
        _label(m), _label(m2), g1, g2, float(epsilon), float(q1), float(q2),
        hg=e1 - e2, se=se, error_m=e1, error_m2=e2, n_draws=n, method=method,
    )  # fmt: skip
