"""Bernoulli Kullback--Leibler indices, compiled: the one home of the KL upper confidence bound
of KL-UCB (Garivier & Cappé 2011) and of the private divergence ``d_eps`` of DP-KLUCB and
DP-IMED (Azize, Wu, Honda, Orabona, Ito & Basu 2025).

- :func:`kl_bernoulli` ``kl(p, q) = p ln(p/q) + (1-p) ln((1-p)/(1-q))`` (``0 ln 0 = 0``);
- :func:`kl_upper` ``max{q in [p, 1] : kl(p, q) <= level}``, the index of KL-UCB (Garivier &
  Cappé 2011, Algorithm 1) and of AdaP-KLUCB (Azize & Basu 2022, eq. (7));
- :func:`d_eps` ``d_eps(x, y) = inf_{z between x and y} eps |z - x| + kl(z, y)``, the
  divergence of Azize et al. (2025) that interpolates between ``kl`` (large ``eps``) and
  ``eps`` times the total variation (small ``eps``), for ``y >= x`` (``0`` for ``y <= x``,
  the one-sided convention of KL-UCB and IMED);
- :func:`d_eps_upper` ``max{q in [x, 1] : d_eps(x, q) <= level}``, the index of DP-KLUCB.

These are scalar kernels for the agents' compiled steps. The lower bounds of
:mod:`dpbandits.theory` compute ``kl`` and ``d_eps`` on arrays, with validation and for ``x >
y`` too (``d_epsilon_bernoulli``); the tests check that the two agree.

How :func:`kl_upper` is computed (the documented tolerance). ``kl(p, q)`` is increasing and
convex in ``q`` on ``[p, 1)``, and so is ``g(y) = kl(p, sigma(y)) - level = softplus(y) - p y
- H(p) - level`` in the log-odds ``y = ln(q / (1 - q))`` (``g' = sigma(y) - p``, ``g'' =
sigma(y)(1 - sigma(y)) > 0``), which is nearly linear where ``q`` is close to 1, so no step
runs into the pole of ``kl`` at ``q = 1``. Halley's method on ``g`` starts from the smaller of
the local quadratic solution ``logit(p) + sqrt(2 level / (p (1 - p)))`` and the upper bound
``logit(1 - e^-c)``, ``c = (level + H(p)) / (1 - p)`` (from ``kl(p, q) >= -(1-p) ln(1-q) -
H(p)``), or from a caller's warm start (the root for a nearby ``p`` and ``level``: an agent
keeps each arm's last root), and stops when Newton's bound on the error left in ``y`` is below
``1e-13``, when ``g`` is down to its rounding errors, or after 60 steps; about two steps. The
result is within :data:`KL_UPPER_TOLERANCE` ``= 1e-10`` of the exact root for ``level >=
1e-12`` (tested against ``scipy.optimize.brentq``): below that, the rounding of ``kl`` itself
(``~1e-16 / (q - p)`` in ``q``) is the limit. ``p = 0`` and ``p = 1`` have closed forms (``1 -
exp(-level)`` and ``1``).

``d_eps`` (Azize et al. 2025). For ``y > x`` the infimum over ``z in [x, y]`` of ``eps (z - x) +
kl(z, y)`` is at ``z* = y e^-eps / (y e^-eps + 1 - y)`` when ``z* > x`` -- then ``d_eps(x, y) =
-eps x - ln(1 - y (1 - e^-eps))`` -- and at ``z = x`` (``d_eps = kl(x, y)``) otherwise, i.e. for
``y <= y_c = x / (x + (1 - x) e^-eps)``, where ``kl(x, y)`` is at most ``kl(x, y_c) = ln(x + (1
- x) e^-eps) + eps (1 - x)`` (:func:`kink_level`). Both pieces are increasing in ``y`` and
agree at ``y_c``, so :func:`d_eps_upper` is :func:`kl_upper` below ``kl(x, y_c)`` and the
closed form ``(1 - e^(-eps x - level)) / (1 - e^-eps)`` (capped at 1) above it. ``d_eps(x, 1) =
eps (1 - x)`` is finite: a level above it gives the index 1.
"""

from __future__ import annotations

import math

from dpbandits.core.jit import kernel

__all__ = [
    "KL_UPPER_TOLERANCE",
    "d_eps",
    "d_eps_upper",
    "d_eps_upper_logit",
    "kink_level",
    "kl_bernoulli",
    "kl_upper",
    "kl_upper_logit",
    "kl_with",
    "log_pair",
    "neg_entropy",
    "sigmoid",
]

#: Absolute accuracy of :func:`kl_upper` (and of :func:`d_eps_upper` where it uses it) for
#: ``level >= 1e-12`` (module docstring).
KL_UPPER_TOLERANCE = 1e-10

_STEP_TOLERANCE = 1e-13
_MAX_STEPS = 60


@kernel
def _xlogx(x: float) -> float:
    """``x ln x`` with ``0 ln 0 = 0``."""
    return x * math.log(x) if x > 0.0 else 0.0


@kernel
def kl_bernoulli(p: float, q: float) -> float:
    """``kl(p, q)`` between Bernoulli(p) and Bernoulli(q), ``p, q in [0, 1]``: ``inf`` when
    ``q`` is 0 or 1 and ``p`` is not ``q``."""
    out = 0.0
    if p > 0.0:
        if q <= 0.0:
            return math.inf
        out += p * math.log(p / q)
    if p < 1.0:
        if q >= 1.0:
            return math.inf
        out += (1.0 - p) * math.log((1.0 - p) / (1.0 - q))
    return out


@kernel
def neg_entropy(p: float) -> float:
    """``-H(p) = p ln p + (1 - p) ln(1 - p)`` (``0 ln 0 = 0``), the part of ``kl(p, q)`` that
    does not depend on ``q``: an agent keeps it per arm (it changes only when the arm is
    pulled)."""
    return _xlogx(p) + _xlogx(1.0 - p)


@kernel
def kl_with(p: float, neg_h: float, log_q: float, log_1mq: float) -> float:
    """``kl(p, q) = -H(p) - p ln q - (1 - p) ln(1 - q)`` from ``neg_h = neg_entropy(p)`` and the
    two logarithms of ``q``, which a scan comparing many arms with one ``q`` computes once.
    ``0 * -inf`` counts as 0 (``p`` is 0 or 1 there)."""
    out = neg_h
    if p > 0.0:
        out -= p * log_q
    if p < 1.0:
        out -= (1.0 - p) * log_1mq
    return out


@kernel
def _cold_start(p: float, neg_h: float, level: float) -> float:
    """A log-odds near the root of ``kl(p, .) = level`` for ``0 < p < 1``: the smaller of the
    local quadratic solution ``logit(p) + sqrt(2 level / (p (1 - p)))`` and the upper bound
    ``logit(1 - e^-c)``, ``c = (level + H(p)) / (1 - p)`` (module docstring)."""
    c = (level - neg_h) / (1.0 - p)
    y = c + math.log(-math.expm1(-c))
    quad = math.log(p) - math.log1p(-p) + math.sqrt(2.0 * level / (p * (1.0 - p)))
    return min(y, quad)


@kernel
def kl_upper_logit(p: float, neg_h: float, level: float, start: float) -> float:
    """The log-odds ``ln(q / (1 - q))`` of ``q = kl_upper(p, level)`` (``+inf`` for ``q = 1``,
    ``-inf`` for ``q = 0``), with ``neg_h = neg_entropy(p)``; Halley's method from the log-odds
    ``start`` (the root for nearby ``p`` and ``level``: a warm start) or, when ``start`` is NaN
    or left of ``logit(p)``, from :func:`_cold_start` (module docstring)."""
    if p >= 1.0 or math.isinf(level):
        return math.inf
    if p <= 0.0:
        return math.log(math.expm1(level)) if level > 0.0 else -math.inf  # q = 1 - e^-level
    if not level > 0.0:
        return math.log(p) - math.log1p(-p)
    warm = start > -math.inf and start < math.inf  # (NaN or infinite: no warm start)
    y = start if warm else _cold_start(p, neg_h, level)
    for _ in range(_MAX_STEPS):
        e = math.exp(-abs(y))
        s = 1.0 / (1.0 + e) if y >= 0.0 else e / (1.0 + e)
        slope = s - p
        if not slope > 0.0:  # left of logit(p): a stale warm start, start afresh (once)
            if not warm:
                break
            warm = False
            y = _cold_start(p, neg_h, level)
            continue
        g = max(y, 0.0) + math.log1p(e) - p * y + neg_h - level
        curvature = s * (1.0 - s)
        denominator = 2.0 * slope * slope - g * curvature
        # Halley's step; Newton's if Halley's denominator is not positive (far from the root)
        step = 2.0 * g * slope / denominator if denominator > 0.0 else g / slope
        y -= step
        # stop when Newton's bound on the error left after this step is below the tolerance,
        # or when g is at the level of its rounding errors (further steps would be noise)
        if curvature * step * step <= 2.0 * _STEP_TOLERANCE * slope:
            break
        if abs(g) <= 1e-15 * (1.0 + abs(y)):
            break
    return y


@kernel
def sigmoid(y: float) -> float:
    """``1 / (1 + e^-y)`` without overflow: the ``q`` of a log-odds ``y``."""
    if y >= 0.0:
        return 1.0 / (1.0 + math.exp(-y))
    e = math.exp(y)
    return e / (1.0 + e)


@kernel
def log_pair(y: float) -> tuple[float, float]:
    """``(ln q, ln(1 - q))`` of the log-odds ``y`` of ``q``: ``-softplus(-y)``, ``-softplus(y)``
    (finite for any finite ``y``, also where ``q`` rounds to 0 or 1)."""
    tail = math.log1p(math.exp(-abs(y)))
    return -(max(-y, 0.0) + tail), -(max(y, 0.0) + tail)


@kernel
def kl_upper(p: float, level: float) -> float:
    """``max{q in [p, 1] : kl(p, q) <= level}`` for ``p in [0, 1]``, ``level >= 0`` (``p`` for
    ``level <= 0``, 1 for an infinite level), accurate to :data:`KL_UPPER_TOLERANCE` (module
    docstring)."""
    if not level > 0.0 or p >= 1.0 or p <= 0.0:
        if p <= 0.0 and level > 0.0:
            return -math.expm1(-level)
        return min(max(p, 0.0), 1.0)
    y = kl_upper_logit(p, neg_entropy(p), level, math.nan)
    return min(max(sigmoid(y), p), 1.0)


@kernel
def kink_level(x: float, eps: float) -> float:
    """``kl(x, y_c)`` at the kink ``y_c = x / (x + (1 - x) e^-eps)`` of ``d_eps(x, .)``: ``ln(x +
    (1 - x) e^-eps) + eps (1 - x)`` (module docstring); ``d_eps(x, y) = kl(x, y)`` exactly when
    ``kl(x, y)`` is at most this."""
    return math.log(x + (1.0 - x) * math.exp(-eps)) + eps * (1.0 - x)


@kernel
def d_eps(x: float, y: float, eps: float) -> float:
    """Azize et al.'s (2025) ``d_eps(x, y) = inf_{z in [x, y]} eps (z - x) + kl(z, y)`` for
    ``0 <= x <= y <= 1``, and 0 for ``y <= x`` (module docstring)."""
    if not y > x:
        return 0.0
    k = kl_bernoulli(x, y)
    if k <= kink_level(x, eps):  # z* <= x: the infimum is at z = x
        return k
    return -eps * x - math.log1p(-y * -math.expm1(-eps))


@kernel
def _logit(q: float) -> float:
    """``ln(q / (1 - q))``, infinite at 0 and 1."""
    if q <= 0.0:
        return -math.inf
    if q >= 1.0:
        return math.inf
    return math.log(q) - math.log1p(-q)


@kernel
def d_eps_upper_logit(x: float, neg_h: float, kink: float, level: float, eps: float,
                      start: float) -> float:  # fmt: skip
    """The log-odds of ``d_eps_upper(x, level, eps)``, with ``neg_h = neg_entropy(x)`` and
    ``kink = kink_level(x, eps)`` (an agent keeps both per arm), and a warm start for the
    ``kl`` piece as :func:`kl_upper_logit`: :func:`kl_upper_logit` up to the kink, the closed
    form ``(1 - e^(-eps x - level)) / (1 - e^-eps)`` (capped at 1) above it."""
    if not level > 0.0 or x >= 1.0:
        return _logit(min(max(x, 0.0), 1.0))
    if level <= kink:
        return kl_upper_logit(x, neg_h, level, start)
    return _logit(min(max(math.expm1(-eps * x - level) / math.expm1(-eps), x), 1.0))


@kernel
def d_eps_upper(x: float, level: float, eps: float) -> float:
    """``max{q in [x, 1] : d_eps(x, q) <= level}`` for ``x in [0, 1]``, ``level >= 0`` (``x``
    for ``level <= 0``), accurate to :data:`KL_UPPER_TOLERANCE` (module docstring)."""
    if not level > 0.0 or x >= 1.0:
        return min(max(x, 0.0), 1.0)
    y = d_eps_upper_logit(x, neg_entropy(x), kink_level(x, eps), level, eps, math.nan)
    return min(max(sigmoid(y), x), 1.0)
