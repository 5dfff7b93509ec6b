"""Local-DP selection of one recommendation on the device (paper 001, §2.3 and Algorithm 2).

The device holds *private* scores ``s`` (pClick_device) of the ``a`` candidates the server sent
and must reveal which one it shows. Local DP protects the whole private score vector: two
*arbitrary* private vectors are neighbours. A selector from :mod:`dpbandits.selectors` is
eps-DP for neighbours with ``|q - q'| <= d`` coordinate-wise, so it becomes a local-DP selector
once the private scores are mapped into a box of known width:

- :class:`Scaled` -- Eq. 3, ``s_scaled = (s - min s) / (max s - min s)`` lies in ``[0, 1]``, so
  the inner selector runs with sensitivity ``Δ = 1``;
- :class:`Clipped` -- Eq. 4, ``s_clipped = clip(s, s_server - Δ/2, s_server + Δ/2)`` lies in a
  box of width ``Δ`` around the *public* scores, so the inner selector runs with sensitivity
  ``Δ``. As ``eps -> inf`` it converges to the greedy choice on the clipped, not the private,
  scores (the plateau of Fig. 3).

Either transform followed by ``rnm`` is the paper's select-noisy-max (Algorithm 1, noise scale
``2Δ/eps``); with Gumbel noise it is the softmax of Eq. 5 (:func:`softmax_pmf`). Randomised
response (Eq. 2, :func:`rr_pmf`) is :class:`dpbandits.selectors.KRR`, which needs no transform:
it depends on the private scores only through their argmax.

The server-side cut-off of Algorithm 2 (``getFinalCandidates``) is :func:`cutoff_mask`; it reads
public scores only and costs no privacy. :func:`select_among` runs any selector on the kept
candidates of each request (rows with different numbers of candidates are grouped by count).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from dpbandits.core import checks
from dpbandits.core.arrays import BoolArray
from dpbandits.selectors.base import (
    FloatArray,
    IntArray,
    RNGLike,
    Selector,
    prepare_inputs,
)
from dpbandits.selectors.spec import resolve_selector

__all__ = [
    "Clipped",
    "Scaled",
    "clip_scores",
    "cutoff_mask",
    "rr_pmf",
    "scale_scores",
    "select_among",
    "softmax_pmf",
]


def _scores(s: ArrayLike, name: str = "s") -> FloatArray:
    """Scores of shape ``(..., K)``: real, finite, at least one axis (the input policy)."""
    a = checks.real_array(s, name)
    if a.ndim == 0 or a.shape[-1] == 0:
        raise ValueError(f"{name} must have shape (..., K) with K >= 1, got shape {a.shape}")
    return a


def _mask(mask: ArrayLike, shape: tuple[int, ...], what: str) -> BoolArray:
    m = np.asarray(mask)
    if m.dtype != np.bool_:  # an int mask [1, 0] would be read as indices by mistake elsewhere
        raise TypeError(f"mask must be a boolean array, got dtype {m.dtype}")
    if m.shape != shape:
        raise ValueError(f"mask shape {m.shape} differs from {what} shape {shape}")
    return m


def scale_scores(s: ArrayLike) -> FloatArray:
    """Eq. 3: ``(s - min s) / (max s - min s)`` along the last axis; all-equal rows give 0."""
    a = _scores(s)
    lo = a.min(axis=-1, keepdims=True)
    with np.errstate(over="ignore"):
        span = a.max(axis=-1, keepdims=True) - lo
    if not np.all(np.isfinite(span)):  # max - min overflows (e.g. 1e308 and -1e308): halve
        a, lo = 0.5 * a, 0.5 * lo
        span = a.max(axis=-1, keepdims=True) - lo
    out = np.zeros_like(a)
    np.divide(a - lo, span, out=out, where=span > 0)
    # a - lo <= span in exact arithmetic; the division can round a hair above 1
    return np.clip(out, 0.0, 1.0, out=out)


def clip_scores(s: ArrayLike, public: ArrayLike, bound: float) -> FloatArray:
    """Eq. 4: ``max(min(s_server + Δ/2, s), s_server - Δ/2)`` with ``bound = Δ/2``."""
    b = checks.positive_number(bound, "bound (the clipping bound Δ/2)")
    pub, a = checks.real_array(public, "public"), _scores(s)
    try:
        np.broadcast_shapes(a.shape, pub.shape)
    except ValueError:
        raise ValueError(
            f"public scores with shape {pub.shape} do not broadcast to s with shape {a.shape}"
        ) from None
    return np.clip(a, pub - b, pub + b)


class _Transformed(Selector):
    """A selector applied to transformed private scores (shared part of Scaled and Clipped)."""

    uses_sensitivities = False  # the transform fixes the sensitivity; the caller's d is unused
    inner: Selector

    def _init_inner(self, inner: str | Selector, epsilon: float | None) -> None:
        if epsilon is not None:
            checks.positive_number(epsilon, "epsilon")
        # a name, a 'name:key=value' spec or an instance, at epsilon when given
        self.inner = resolve_selector(inner, epsilon)
        self.epsilon = float(self.inner.epsilon)

    @property
    def private(self) -> bool:  # type: ignore[override]
        return bool(self.inner.private)

    @property
    def guarantee(self) -> str:  # type: ignore[override]
        if not self.inner.private:
            return f"not private ({self.inner.name} is not)"
        return "eps-local-DP w.r.t. the whole private score vector"

    def get_params(self) -> dict[str, Any]:
        params = super().get_params()
        params["epsilon"] = self.epsilon
        return params

    def with_epsilon(self, epsilon: float) -> _Transformed:
        params = self.get_params()
        params["inner"] = self.inner.with_epsilon(epsilon)
        params["epsilon"] = None
        return type(self)(**params)

    def select(self, q: ArrayLike, d: ArrayLike | None = None, rng: RNGLike = None) -> IntArray:
        q2, _, batch_shape = prepare_inputs(q, d)
        gen = checks.generator(rng)
        if q2.shape[1] == 1 or q2.shape[0] == 0:
            return np.zeros(batch_shape, dtype=np.int64)
        z, sens = self.transform(q2, self._public_for(batch_shape + (q2.shape[1],)))
        return self.inner.select(z, sens, gen).reshape(batch_shape)

    def select_batch(self, q: FloatArray, d: FloatArray, rng: np.random.Generator) -> IntArray:
        z, sens = self.transform(q, self._public_for(q.shape))
        return self.inner.select(z, sens, rng)

    def _public_for(self, shape: tuple[int, ...]) -> FloatArray | None:
        """Public scores as an ``(R, K)`` batch for private scores of ``shape`` (or None)."""
        return None

    def transform(self, q: FloatArray, public: FloatArray | None) -> tuple[FloatArray, float]:
        """Transformed scores of a validated ``(R, K)`` batch and their sensitivity."""
        raise NotImplementedError


class Scaled(_Transformed):
    """Select-noisy-max on scaled private scores, Eq. 3 of paper 001.

    The scores of each request are mapped to ``[0, 1]`` and the ``inner`` selector runs with
    sensitivity 1. For an inner selector that is eps-DP for neighbours ``|q - q'| <= d``, the
    result is eps-local-DP: any two private vectors map into ``[0, 1]^K``, where they are
    neighbours at ``d = 1``, and the output is a post-processing of that selector.
    """

    name = "scaled"
    summary = "inner selector on (s - min s)/(max s - min s) with sensitivity 1 (Eq. 3)"

    def __init__(self, inner: str | Selector = "rnm", epsilon: float | None = None) -> None:
        self._init_inner(inner, epsilon)

    def transform(self, q: FloatArray, public: FloatArray | None) -> tuple[FloatArray, float]:
        return scale_scores(q), 1.0


class Clipped(_Transformed):
    """Select-noisy-max on private scores clipped around the public ones, Eq. 4 of paper 001.

    ``bound`` is the clipping bound ``Δ/2``; ``public`` holds the server scores ``s_server``,
    broadcastable to the private scores (shape ``(K,)`` or the batch's ``(..., K)``). The
    clipped scores lie in ``[s_server - Δ/2, s_server + Δ/2]``, a box of width ``Δ = 2 bound``
    fixed by public data, so the inner selector runs with sensitivity ``Δ`` and the result is
    eps-local-DP (same argument as :class:`Scaled`).
    """

    name = "clipped"
    summary = "inner selector on clip(s, s_server -+ Δ/2) with sensitivity Δ (Eq. 4)"

    def __init__(
        self,
        inner: str | Selector = "rnm",
        bound: float = 0.5,
        public: ArrayLike | None = None,
        epsilon: float | None = None,
    ) -> None:
        self.bound = checks.positive_number(bound, "bound (the clipping bound Δ/2)")
        self.public = None if public is None else self._check_public(public)
        self._init_inner(inner, epsilon)

    @staticmethod
    def _check_public(public: ArrayLike) -> FloatArray:
        try:
            pub = np.asarray(public, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"public must be an array of real numbers: {exc}") from None
        if pub.ndim == 0 or not np.all(np.isfinite(pub)):
            raise ValueError("public scores must be a finite array of shape (..., K)")
        return pub

    def with_public(self, public: ArrayLike) -> Clipped:
        """The same selector with other public scores (one request or a batch)."""
        return Clipped(self.inner, self.bound, public)

    def _public_for(self, shape: tuple[int, ...]) -> FloatArray:
        if self.public is None:
            raise ValueError("Clipped needs the public scores: Clipped(..., public=s_server)")
        pub = self.public
        ok = pub.ndim <= len(shape) and pub.shape[-1] == shape[-1]
        try:
            ok = ok and np.broadcast_shapes(pub.shape, shape) == shape
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(
                f"public scores with shape {pub.shape} do not match private scores with shape "
                f"{shape} (need the same K and a broadcastable batch)"
            )
        return np.broadcast_to(pub, shape).reshape(-1, shape[-1])

    def transform(self, q: FloatArray, public: FloatArray | None) -> tuple[FloatArray, float]:
        assert public is not None
        return clip_scores(q, public, self.bound), 2.0 * self.bound

    def __repr__(self) -> str:
        pub = None if self.public is None else f"<{self.public.shape}>"
        return f"Clipped(inner={self.inner!r}, bound={self.bound!r}, public={pub})"


# -- closed forms --------------------------------------------------------------------------


def rr_pmf(s: ArrayLike, epsilon: float) -> FloatArray:
    """Eq. 2: randomised response over the ``a`` candidates of each row of ``s``.

    ``e^eps / (a - 1 + e^eps)`` on the argmax and ``1 / (a - 1 + e^eps)`` elsewhere. With ``c``
    tied maxima (as :class:`~dpbandits.selectors.KRR` breaks ties) the "truth" is a uniform one
    of them and a non-truthful answer a uniform one of the other ``a - 1`` candidates, so each
    maximum has ``keep / c + (1 - 1/c) (1 - keep) / (a - 1)``.
    """
    eps = checks.positive_number(epsilon, "epsilon")
    a = _scores(s)
    k = a.shape[-1]
    if k == 1:
        return np.ones_like(a)
    is_max = a == a.max(axis=-1, keepdims=True)
    c = is_max.sum(axis=-1, keepdims=True)
    keep = 1.0 / (1.0 + (k - 1) * math.exp(-eps))  # e^eps / (a - 1 + e^eps), no overflow
    other = (1.0 - keep) / (k - 1)
    return np.where(is_max, keep / c + (1.0 - 1.0 / c) * other, other)


def softmax_pmf(s: ArrayLike, epsilon: float, sensitivity: float = 1.0) -> FloatArray:
    """Eq. 5: ``exp(s_i eps / (2Δ)) / sum_j exp(s_j eps / (2Δ))`` along the last axis.

    The law of select-noisy-max with Gumbel noise of scale ``2Δ/eps`` (the exponential
    mechanism).
    """
    eps = checks.positive_number(epsilon, "epsilon")
    delta = checks.positive_number(sensitivity, "sensitivity")
    a = _scores(s)
    # (a - max) / (2 delta) * eps, in this order: a - max cannot overflow after the halving,
    # and a huge eps / (2 delta) times 0 stays 0 at the maximum
    z = ((0.5 * a - 0.5 * a.max(axis=-1, keepdims=True)) / delta) * eps
    w = np.exp(z)
    return w / w.sum(axis=-1, keepdims=True)


# -- server-side cut-off and masked selection -----------------------------------------------


def cutoff_mask(public: ArrayLike, gamma: float, mask: ArrayLike | None = None) -> BoolArray:
    """Algorithm 2, ``getFinalCandidates``: keep ``s_server >= (1 - gamma) max(s_server)``.

    ``public`` has shape ``(..., K)`` with scores ``>= 0`` (the rule is relative to the maximum,
    as for the paper's bids x pClick); ``gamma`` in ``[0, 1]`` (0 keeps the best candidates
    only, 1 keeps all). ``mask`` marks the eligible candidates of each row (default: all); the
    maximum is taken over them and the result is a sub-mask of it, never empty where the row
    has an eligible candidate. Uses public data only: no privacy cost.
    """
    g = checks.unit_interval(gamma, "gamma (the score cut-off)")
    pub = np.asarray(public, dtype=np.float64)
    if pub.ndim == 0:
        raise ValueError("public scores must have shape (..., K)")
    if not np.all(np.isfinite(pub)) or np.any(pub < 0):
        raise ValueError("public scores must be finite and >= 0 (the cut-off is relative)")
    elig = np.ones(pub.shape, dtype=bool) if mask is None else _mask(mask, pub.shape, "public")
    best = np.where(elig, pub, -np.inf).max(axis=-1, keepdims=True)
    return elig & (pub >= (1.0 - g) * best)


def select_among(
    selector: Selector,
    private: ArrayLike,
    mask: ArrayLike | None = None,
    rng: RNGLike = None,
    *,
    public: ArrayLike | None = None,
) -> IntArray:
    """Run ``selector`` on the candidates ``mask`` keeps in each row; indices into the row.

    ``private`` (and ``public``, needed by :class:`Clipped`) have shape ``(R, K)``; every row of
    ``mask`` keeps at least one candidate. Rows with the same number ``a`` of kept candidates
    are compacted into an ``(R_a, a)`` batch (candidate order kept) and selected together, so
    RR sees exactly its ``a`` candidates (Eq. 2). A :class:`Clipped` selector is given the
    matching public scores via :meth:`Clipped.with_public`.
    """
    if not callable(getattr(selector, "select", None)):
        raise TypeError(
            f"selector must be a selector object (e.g. dpbandits.selectors.make('rnm')), got "
            f"{type(selector).__name__} {selector!r}"
        )
    priv = checks.real_array(private, "private")
    if priv.ndim != 2:
        raise ValueError(f"private scores must have shape (R, K), got {priv.shape}")
    r, k = priv.shape
    keep = np.ones((r, k), dtype=bool) if mask is None else _mask(mask, priv.shape, "private")
    counts = keep.sum(axis=1)
    if r and counts.min() < 1:
        raise ValueError(f"mask keeps no candidate in row {int(np.argmin(counts))}")
    pub = (
        None if public is None else np.broadcast_to(checks.real_array(public, "public"), priv.shape)
    )
    gen = checks.generator(rng)
    out = np.empty(r, dtype=np.int64)
    for a in np.unique(counts):
        rows = np.flatnonzero(counts == a)
        # column indices of the kept candidates, in order: a stable argsort of ~keep
        cols = np.argsort(~keep[rows], axis=1, kind="stable")[:, :a]
        sub = np.take_along_axis(priv[rows], cols, axis=1)
        sel = selector
        if isinstance(selector, Clipped):
            if pub is None:
                raise ValueError("a Clipped selector needs public= scores")
            sel = selector.with_public(np.take_along_axis(pub[rows], cols, axis=1))
        choice = sel.select(sub, None, gen)
        out[rows] = cols[np.arange(rows.size), choice]
    return out
