"""Regret lower bounds on the arms of a run, per stationary segment, for the regret plots.

:func:`bound_curves` reads the arms' laws a :class:`~dpbandits.experiments.results.Results`
records (:mod:`dpbandits.experiments.arm_laws`) and evaluates the bounds of
:mod:`dpbandits.theory.lower_bounds` at the recorded steps;
``plotting.plot_cumulative(results, bounds=True)`` draws them (docs/private-bandits.md, "Lower
bounds"). Each is the asymptotic bound ``c log T`` read at finite ``T``: a reference curve, not
a finite-time guarantee.

Which bounds, by reward family:

- Bernoulli arms: all four, Lai--Robbins and, at each eps, Shariff & Sheffet (2018), Azize &
  Basu (2022) and Azize et al. (2025).
- Gaussian arms clipped to ``[lo, hi]`` (the project's Gaussian environments, e.g. Fig. 9):
  Lai--Robbins and Azize & Basu (2022) only, the other two being stated for Bernoulli arms. The
  regret is measured against the *clipped* means, so the gaps are theirs, and the model class
  of arm ``a`` is ``{clip(N(m, s_a^2), lo, hi) : m real}`` with ``s_a`` known. Its
  distinguishability gaps have no closed form; the curves use upper bounds of them, which keep
  the bound valid (and lower than the exact one): the clipped reward is a function of the
  Gaussian one, so by the data-processing inequality KL and TV between clipped laws are at most
  those between the Gaussians, ``kl_inf(a) <= (m'_a - m_a)^2 / (2 s_a^2)`` and
  ``tv_inf(a) <= 2 Phi(|m'_a - m_a| / (2 s_a)) - 1``, where ``m'_a`` is the mean before
  clipping at which arm ``a``'s clipped mean reaches ``mu*`` (Brent's method,
  ``xtol = 1e-12``). Where clipping is negligible this is the Gaussian bound.

Non-stationary runs (change points): the curve is the sum over segments of each segment's bound
at its length, ``B(t) = sum_{i < j} c_i log L_i + c_j log(t - start_j)`` for ``t`` in segment
``j``. The reason: an algorithm told the change points could restart at each one and meet every
segment as a fresh stationary problem; knowing the change points can only help, so an algorithm
that does not know them cannot do better, asymptotically in every segment's length. When the
means drift within segments there is no stationary segment and no curve
(:func:`~dpbandits.experiments.arm_laws.laws_of` says so).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import brentq

from dpbandits.core import checks
from dpbandits.experiments.arm_laws import ArmLaws, SegmentLaw, laws_of, record_laws
from dpbandits.experiments.envspec import env_spec, make_env
from dpbandits.theory import lower_bounds as lb
from dpbandits.theory import trust_bounds as ttb
from envs.core import expected_clipped_normal

__all__ = [
    "BoundCurve",
    "bound_curves",
    "bound_label",
    "check_bounds_drawable",
    "segment_coefficients",
    "trust_curves",
]

#: Absolute tolerance of the root search for the pre-clipping alternative mean ``m'_a``.
XTOL = 1e-12


@dataclass(frozen=True)
class BoundCurve:
    """One lower-bound curve: ``key`` (a name of :data:`dpbandits.theory.BOUND_LABELS`), its
    ``epsilon`` (``inf`` for Lai--Robbins), legend ``label`` (:func:`bound_label`) and
    ``values`` at ``results.steps``, summed over ``segments`` stationary segments."""

    key: str
    epsilon: float
    label: str
    values: NDArray[np.float64]
    segments: int = 1


def bound_label(name: str, segments: int = 1, parameter: str = "") -> str:
    """The one legend label of a lower-bound curve, for every bound and figure: ``lower bound:
    NAME``, then its privacy ``parameter`` (``"ε=1"``; none for Lai--Robbins) and, with change
    points, ``summed over N segments``: the curve is the sum of each stationary segment's bound
    at the segment's length (docs/private-bandits.md "Lower bounds"), not one segment's bound."""
    parts = [f"lower bound: {name}", *([parameter] if parameter else [])]
    if segments > 1:
        parts.append(f"summed over {segments} segments")
    return ", ".join(parts)


def _clipped_divergences(
    seg: SegmentLaw, lo: float, hi: float
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Gaps of the clipped means and upper bounds of ``kl_inf``, ``tv_inf`` (module doc)."""
    assert seg.sds is not None
    m, s = seg.means, seg.sds
    mu = expected_clipped_normal(m, s, lo, hi)
    best = float(mu.max())
    gaps = best - mu
    kl = np.zeros_like(m)
    tv = np.zeros_like(m)
    for a in np.flatnonzero(gaps > 0):
        shift = _alternative_shift(float(m[a]), float(s[a]), best, lo, hi)
        kl[a] = float(lb.kl_gaussian(0.0, shift, s[a])) if math.isfinite(shift) else math.inf
        tv[a] = float(lb.tv_gaussian(0.0, shift, s[a])) if math.isfinite(shift) else math.inf
    return gaps, kl, tv


def _alternative_shift(m: float, s: float, target: float, lo: float, hi: float) -> float:
    """``m' - m`` where ``E clip(N(m', s^2), lo, hi) = target`` (> the clipped mean at ``m``);
    ``inf`` when no mean reaches it (``target`` at the upper clipping bound)."""

    def excess(x: float) -> float:
        return float(expected_clipped_normal(x, s, lo, hi)) - target

    upper, step = max(m, hi), s
    for _ in range(64):  # the clipped mean tends to hi: a target below it is bracketed soon
        if excess(upper) > 0:
            return float(brentq(excess, m, upper, xtol=XTOL)) - m
        upper, step = upper + step, 2.0 * step
    return math.inf


def segment_coefficients(laws: ArmLaws, epsilon: float) -> list[dict[str, float]]:
    """The coefficient ``c`` of every bound that applies (module doc) in each segment."""
    eps = checks.positive_number(epsilon, "epsilon", allow_inf=True)
    out = []
    for seg in laws.segments:
        if laws.arm == "bernoulli":
            out.append(lb.coefficients(seg.means, eps))
        else:
            gaps, kl, tv = _clipped_divergences(seg, laws.lo, laws.hi)
            out.append(lb.coefficients_from_divergences(gaps, kl, tv, eps))
    return out


def _curve(steps: NDArray[np.int64], segments: list[SegmentLaw], coefs: list[float]) -> Any:
    """``sum_{i<j} c_i log L_i + c_j log(t - start_j)`` at each step count ``t`` (segment j)."""
    return _curve_fn(steps, segments, [_c_log(c) for c in coefs])


def _c_log(c: float) -> Any:
    """``n -> c log n``, a segment's bound of the form of every private bound here."""
    return lambda n: c * np.log(n)


def bound_curves(results: Any, epsilons: Sequence[float] = (1.0,)) -> list[BoundCurve]:
    """The lower-bound curves of ``results`` at its recorded steps: Lai--Robbins, then every
    eps-global-DP bound that applies at each of ``epsilons`` (module doc), then the eps-LDP and
    rho-zCDP bounds of the run's own privacy reports (:func:`trust_curves`). A ``ValueError``
    when the results do not record stationary laws of the arms."""
    eps_list = [checks.positive_number(e, "epsilon", allow_inf=True) for e in epsilons]
    laws = laws_of(results)
    steps = results.steps
    n_seg = len(laws.segments)
    curves = []
    for j, eps in enumerate([math.inf, *eps_list]):
        coefs = segment_coefficients(laws, eps)
        for key in coefs[0]:
            if (key == "lai_robbins") != (j == 0):
                continue  # Lai--Robbins once (it has no eps), the private bounds at each eps
            eps_text = "" if key == "lai_robbins" else f"ε={eps:g}"
            label = bound_label(lb.BOUND_LABELS[key], n_seg, eps_text)
            values = _curve(steps, laws.segments, [c[key] for c in coefs])
            curves.append(BoundCurve(key, eps, label, values, n_seg))
    return curves + trust_curves(results)


def _segment_divergences(laws: ArmLaws, seg: SegmentLaw) -> Any:
    """``(gaps, kl_inf, tv_inf)`` of one segment (Gaussian arms: the module doc's upper
    bounds)."""
    if laws.arm == "bernoulli":
        return lb.distinguishability(seg.means)
    return _clipped_divergences(seg, laws.lo, laws.hi)


def _curve_fn(steps: NDArray[np.int64], segments: list[SegmentLaw], fns: list[Any]) -> Any:
    """A segment-wise bound at each step count ``t``: ``fns[j](n)`` is segment ``j``'s bound
    after ``n`` of its steps, counted from the segment's start, on top of the full bounds of
    the segments before it (:func:`_curve` for ``c log n``)."""
    t = np.asarray(steps, dtype=np.float64)
    out = np.zeros_like(t)
    offset = 0.0
    for seg, fn in zip(segments, fns, strict=True):
        inside = (t > seg.start) & (t <= seg.end)
        n = t[inside] - seg.start
        with np.errstate(invalid="ignore"):  # c = inf at n = 1 (c log 1 is NaN): no regret yet
            out[inside] = offset + np.where(n > 1, fn(np.maximum(n, 1.0)), 0.0)
        length = seg.end - seg.start
        offset += float(fn(np.array([float(length)]))[0]) if length > 1 else 0.0
    return out


def _zcdp_fn(gaps: Any, kl: Any, tv: Any, rho: float) -> Any:
    """``n -> sum_a Delta_a max(log n / kl_inf(a), sqrt(log n / rho) / tv_inf(a))``
    (:func:`dpbandits.theory.zcdp`)."""
    return lambda n: ttb.zcdp_from_divergences(gaps, kl, tv, rho, np.log(n))


def trust_curves(results: Any) -> list[BoundCurve]:
    """The lower bounds of the other trust models the run's privacy reports state
    (docs/trust-models.md): the eps-LDP bound (:func:`dpbandits.theory.local_dp`) at each eps
    of a local report (an LDP agent, or any agent on ``dpbandits/LocalDP-v0``), and the
    rho-zCDP bound (:func:`dpbandits.theory.zcdp`) at each rho of a zCDP agent."""
    local, rhos = set(), set()
    for rep in results.privacy.values():
        if isinstance(rep, dict) and rep.get("notion") == "local":
            local.add(float(rep["epsilon_local"]))
        elif isinstance(rep, dict) and rep.get("notion") == "zcdp":
            rhos.add(float(rep["rho"]))
    if not local and not rhos:
        return []
    laws = laws_of(results)
    divs = [_segment_divergences(laws, seg) for seg in laws.segments]
    n_seg = len(laws.segments)
    curves = []
    for eps in sorted(local):
        contraction = ttb.ldp_contraction(eps)
        coefs = [ttb.ldp_coefficient_from_divergences(g, kl, tv, contraction) for g, kl, tv in divs]
        label = bound_label(ttb.TRUST_BOUND_LABELS["local_dp"], n_seg, f"ε={eps:g}")
        values = _curve(results.steps, laws.segments, coefs)
        curves.append(BoundCurve("local_dp", eps, label, values, n_seg))
    for rho in sorted(rhos):
        fns = [_zcdp_fn(g, kl, tv, rho) for g, kl, tv in divs]
        label = bound_label(ttb.TRUST_BOUND_LABELS["zcdp"], n_seg, f"ρ={rho:g}")
        values = _curve_fn(results.steps, laws.segments, fns)
        curves.append(BoundCurve("zcdp", rho, label, values, n_seg))
    return curves


def check_bounds_drawable(env: Any) -> None:
    """Refuse, before a run, an environment (an id, a config ``{"id": ..., **kwargs}`` or an
    environment) on whose results no lower bound can be drawn: one that does not expose its
    arms' laws, or whose means drift within the segments between change points."""
    spec = env_spec(env)
    probe = make_env(spec)
    try:
        u = probe.unwrapped
        horizon = getattr(u, "horizon", None)
        cps = [int(c) for c in getattr(u, "change_points", ())]
        rec = None if horizon is None else record_laws(u, int(horizon), cps)
    finally:
        probe.close()
    if rec is None:
        raise ValueError(
            f"no regret lower bound applies to {spec['id']}: its arms' reward laws are not "
            "stationary between change points (drifting means) or it does not expose them"
        )
