"""The private top-k selector protocol: scores ``(..., d)`` -> ``(..., k)`` indices (paper 002, §4).

A *top-k selector* maps scores ``q`` of shape ``(..., d)`` and a sensitivity (``Delta_f`` in
paper 002's Appendix A: every score of a neighbouring data set differs by at most ``Delta_f``)
to ``k`` distinct indices per leading position. Conventions follow
:mod:`dpbandits.selectors.base`: inputs are validated before any work (``ValueError`` /
``TypeError`` naming the argument), ``rng`` is normalised with
:func:`numpy.random.default_rng`, the work is batched over the leading axes, and the
constructor arguments are the selector's parameters (``get_params``, ``with_epsilon``).

``sensitivity`` may be a scalar or an array broadcastable to ``q`` (candidate-wise, like the
single-item selectors' ``d``); the mechanisms use the row maximum ``D = max_a sensitivity[a]``,
the global sensitivity of the score vector.

Output order: a mechanism whose output is a *ranking* (``ordered = True``: peeling, one-shot
Gumbel, joint) returns the ``k`` indices in the order it ranks them; a mechanism whose output
is a *set* (canonical Lipschitz) returns them in increasing index order -- sorting by the true
scores would leak information the mechanism does not release.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from dpbandits.core import checks
from dpbandits.core.arrays import FloatArray, IntArray
from dpbandits.selectors.base import Mechanism, RNGLike, prepare_inputs

__all__ = ["TopKSelector", "check_k", "prepare_topk_inputs"]


def check_k(k: Any, d: int) -> int:
    """Return ``k`` as an int in ``[1, d]`` or raise naming the rule."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"k must be an int, got {type(k).__name__}")
    if not 1 <= int(k) <= d:
        raise ValueError(f"k must satisfy 1 <= k <= d = {d} (the number of scores), got {int(k)}")
    return int(k)


def prepare_topk_inputs(
    q: ArrayLike, k: Any, sensitivity: ArrayLike | None
) -> tuple[FloatArray, FloatArray, int, tuple[int, ...]]:
    """Validate and return ``(q2, D, k, batch_shape)``: ``q2`` of shape ``(R, d)`` and the
    per-row global sensitivity ``D`` of shape ``(R, 1)``."""
    q2, s2, batch_shape = prepare_inputs(q, sensitivity)
    kk = check_k(k, q2.shape[1])
    big = s2.max(axis=1, keepdims=True) if s2.size else np.ones((q2.shape[0], 1))
    return q2, np.asarray(big, dtype=np.float64), kk, batch_shape


class TopKSelector(Mechanism):
    """Base class of the private top-k selectors.

    Attributes
    ----------
    name:
        Registry name (``"canonical_lipschitz"``, ``"gumbel"``, ...).
    epsilon:
        The privacy parameter of one call selecting all ``k`` items (the total budget).
    private:
        Whether the mechanism is differentially private (False for ``exact``).
    guarantee:
        The privacy guarantee of one call, and how eps is spent over the k items.
    ordered:
        Whether the output is a ranking (True, the default: only the k-set mechanisms set
        False) or a set returned in index order (False).
    """

    name: ClassVar[str] = "topk"
    private: ClassVar[bool] = True
    guarantee: ClassVar[str] = "eps-DP"
    ordered: ClassVar[bool] = True
    summary: ClassVar[str] = ""

    def select(
        self,
        q: ArrayLike,
        k: int,
        sensitivity: ArrayLike | None = None,
        rng: RNGLike = None,
    ) -> IntArray:
        """Select ``k`` distinct indices per leading index of ``q``.

        Parameters
        ----------
        q:
            Scores, shape ``(..., d)``, finite.
        k:
            Number of items to select, ``1 <= k <= d``.
        sensitivity:
            ``Delta_f``: a scalar or an array broadcastable to ``q``, finite and ``> 0``
            (``None``: 1). The mechanism uses the row maximum.
        rng:
            A :class:`numpy.random.Generator`, a seed, or None.

        Returns
        -------
        numpy.ndarray
            ``int64`` indices of shape ``q.shape[:-1] + (k,)``, distinct within a row.
        """
        q2, big_d, kk, batch_shape = prepare_topk_inputs(q, k, sensitivity)
        gen = checks.generator(rng)
        r, d = q2.shape
        if r == 0:
            return np.zeros((*batch_shape, kk), dtype=np.int64)
        if kk == d:
            # The only k-subset: releasing it costs no privacy. Ordered mechanisms still rank.
            if self.ordered:
                out = self.select_batch(q2, big_d, kk, gen)
            else:
                out = np.broadcast_to(np.arange(d, dtype=np.int64), (r, d)).copy()
        else:
            out = self.select_batch(q2, big_d, kk, gen)
        return np.asarray(out, dtype=np.int64).reshape(*batch_shape, kk)

    def __call__(
        self, q: ArrayLike, k: int, sensitivity: ArrayLike | None = None, rng: RNGLike = None
    ) -> IntArray:
        return self.select(q, k, sensitivity, rng)

    def select_batch(
        self, q: FloatArray, big_d: FloatArray, k: int, rng: np.random.Generator
    ) -> IntArray:
        """The hook a mechanism implements: select on a validated batch ``q`` of shape
        ``(R, d)`` with ``D`` of shape ``(R, 1)`` and a Generator (called by :meth:`select`)."""
        raise NotImplementedError
