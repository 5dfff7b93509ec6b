"""The selector protocol, input validation and the plain-function wrapper (§IV).

A *selector* maps scores ``q`` of shape ``(..., K)`` and candidate-wise sensitivities ``d``
(Δ_a in the paper, eq. (1)) to one index per leading position. Every selector in this package
derives from :class:`Selector`, which

- validates its inputs (§IV: finite ``q``, ``K >= 1``, finite ``epsilon > 0``,
  finite positive ``d`` broadcastable to ``q``) and raises :class:`ValueError` naming the problem;
- normalises ``rng`` with :func:`numpy.random.default_rng`;
- answers ``K = 1`` with index 0 without touching the mechanism;
- follows scikit-learn's conventions: constructor arguments are stored under their own names,
  validated, and shown by ``repr``; :meth:`Selector.get_params` and :meth:`Selector.with_epsilon`
  rebuild a selector from them.

The public hook a selector author implements is :meth:`Selector.select_batch`: it receives a
validated 2-D batch ``q`` of shape ``(R, K)`` with ``d`` of the same shape (``K >= 2``, finite
scores, positive finite sensitivities) and a ``numpy.random.Generator``, and returns ``R``
indices. :meth:`Selector.select` validates any input and calls it; callers that already hold
valid inputs (the private agent) may call it directly. A selector may also provide
:meth:`Selector.compiled_kernel`, its selection as a compiled row kernel, to run inside compiled
loops (:mod:`dpbandits.selectors.compiled`). docs/selectors.md is the guide.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpbandits.core import arms, checks
from dpbandits.core.arrays import FloatArray, IntArray
from dpbandits.selectors.compiled import CompiledKernel

__all__ = [
    "FunctionSelector",
    "Mechanism",
    "RNGLike",
    "Selector",
    "from_function",
    "prepare_inputs",
    "row_max",
]

RNGLike = np.random.Generator | np.random.BitGenerator | np.random.SeedSequence | int | None


#: Up to this many candidates, :func:`row_max` takes maxima column by column.
_COLUMNWISE_MAX_K = 8


def row_max(x: FloatArray) -> FloatArray:
    """Row maxima of a 2-D array ``x`` as shape ``(R, 1)``.

    For a few candidates, ``np.maximum`` over the columns is 5-25x faster than
    ``x.max(axis=1)``, whose reduction pays a per-row cost on short rows (K = 2 is what the
    bandit agents call 50_000 times per run).
    """
    k = x.shape[1]
    if k > _COLUMNWISE_MAX_K:
        return x.max(axis=1, keepdims=True)
    m = x[:, 0].copy()
    for j in range(1, k):
        np.maximum(m, x[:, j], out=m)
    return m[:, None]


def _first_bad_index(bad: NDArray[np.bool_]) -> str:
    idx = tuple(int(i) for i in np.argwhere(bad)[0])
    return ", ".join(str(i) for i in idx)


def prepare_inputs(
    q: ArrayLike, d: ArrayLike | None
) -> tuple[FloatArray, FloatArray, tuple[int, ...]]:
    """Validate ``(q, d)`` and return ``q`` and ``d`` as float arrays of shape ``(R, K)``.

    Returns ``(q2, d2, batch_shape)`` where ``batch_shape = q.shape[:-1]``. ``d = None`` means
    unit sensitivities. ``d`` must be broadcastable to ``q`` (the batch shape is ``q``'s).
    A given ``d`` is checked (shape, finite, > 0) even by selectors that ignore it, because a
    bad ``d`` is a bug in the caller.

    Scores whose range within a row exceeds the float range are allowed: the mechanisms
    compute ``q - max q`` under ``errstate(over="ignore")`` and an overflow to ``-inf`` is the
    correct limit (probability 0).
    """
    qa = checks.real_array(q, "q", finite=False)  # real dtype only; finiteness checked below
    if qa.ndim == 0:
        raise ValueError("q must have shape (..., K) with at least one axis, got a scalar")
    k = qa.shape[-1]
    if k == 0:
        raise ValueError(f"q has zero candidates (shape {qa.shape}); need K >= 1")
    # Fast path: a finite sum proves every entry finite (one pass, no temporary); only when the
    # sum is not finite (a NaN/inf entry, or an overflow of the sum) look at every entry.
    with np.errstate(over="ignore", invalid="ignore"):
        q_ok = bool(np.isfinite(qa.sum()))
    if not q_ok and not np.all(np.isfinite(qa)):
        bad = ~np.isfinite(qa)
        first = _first_bad_index(bad)
        raise ValueError(f"q must be finite; q[{first}] = {float(qa[bad].ravel()[0])!r}")
    batch_shape = qa.shape[:-1]
    if d is None:
        d_full = np.broadcast_to(_ONE, qa.shape)
    else:
        da = checks.real_array(d, "d", finite=False)
        if da.shape != qa.shape:  # the common case (d given per candidate) needs no broadcast
            try:
                shape = np.broadcast_shapes(qa.shape, da.shape)
            except ValueError:
                shape = None
            if shape != qa.shape:
                raise ValueError(
                    f"d with shape {da.shape} is not broadcastable to q with shape {qa.shape}"
                )
        # min > 0 and max < inf (no NaN) proves every entry valid without a temporary
        d_ok = not da.size or bool(da.min() > 0) and bool(da.max() < np.inf)
        if not d_ok:
            bad = ~(np.isfinite(da) & (da > 0))
            value = float(da[bad].ravel()[0])
            if da.ndim == 0:
                where = "d"
            else:
                pos = np.argwhere(bad)[0]
                where = f"d[{_first_bad_index(bad)}] (candidate {int(pos[-1])})"
            raise ValueError(f"sensitivities d must be finite and > 0, got {where} = {value!r}")
        d_full = da if da.shape == qa.shape else np.broadcast_to(da, qa.shape)
    if qa.ndim == 2:
        return qa, d_full, batch_shape
    # d2 may be a read-only broadcast view: mechanisms never write into d.
    return qa.reshape(-1, k), d_full.reshape(-1, k), batch_shape


_ONE = np.ones(())


def _kernel_batch(q: FloatArray, d: FloatArray) -> tuple[FloatArray, FloatArray]:
    """``(q, d)`` as ``select`` hands them to ``select_batch``: read-only and C-contiguous (a
    copy only if it was not: ``d`` broadcast from one value or one row is copied, ``R K``
    floats). numba compiles a row kernel once per array type -- layout and writability
    included -- so each kernel compiles for one type instead of up to six (the same reason as
    ``arms.read_only`` for the agents' loops; docs/performance.md); the private agent's step
    protocol hands the same type (``agents.private.PrivateAgent.choose``). ``select_batch``
    never writes into its inputs: they may be the caller's own arrays."""
    return arms.read_only(np.ascontiguousarray(q)), arms.read_only(np.ascontiguousarray(d))


M = TypeVar("M", bound="Mechanism")


class Mechanism:
    """What every DP mechanism object shares (selectors, top-k selectors): an ``epsilon``,
    scikit-learn style constructor parameters (stored under their own names, validated, shown
    by ``repr``), and :meth:`with_epsilon` to rebuild it at another privacy parameter."""

    epsilon: float

    def __init__(self, epsilon: float = 1.0) -> None:
        self.epsilon = checks.positive_number(epsilon, "epsilon")

    @classmethod
    def param_names(cls) -> list[str]:
        """Names of the constructor parameters (what ``make(name, **params)`` accepts)."""
        return list(cls.param_defaults())

    @classmethod
    def param_defaults(cls) -> dict[str, Any]:
        """Constructor parameters and their defaults (``inspect.Parameter.empty`` if none)."""
        sig = inspect.signature(cls.__init__)
        return {
            p.name: p.default
            for p in sig.parameters.values()
            if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        }

    def get_params(self) -> dict[str, Any]:
        """The constructor arguments of this mechanism (enough to rebuild it)."""
        return {name: getattr(self, name) for name in self.param_names()}

    def with_epsilon(self: M, epsilon: float) -> M:
        """A copy with another privacy parameter (experiments and scenarios sweep eps)."""
        params = self.get_params()
        params["epsilon"] = epsilon
        return type(self)(**params)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"


class Selector(Mechanism):
    """Base class of all DP selectors (§IV).

    Attributes
    ----------
    name:
        Short registry name (``"rnm"``, ``"mgem"``, ...).
    epsilon:
        The privacy parameter the selector is run with.
    private:
        Whether the selector is differentially private (False for ``greedy`` and ``rnmh``).
    guarantee:
        Human-readable privacy guarantee, e.g. ``"eps-DP"``.
    uses_sensitivities:
        Whether ``d`` influences the output (False for ``uniform``, ``greedy``, ``krr``).
    """

    name: ClassVar[str] = "selector"
    private: ClassVar[bool] = True
    guarantee: ClassVar[str] = "eps-DP"
    uses_sensitivities: ClassVar[bool] = True
    summary: ClassVar[str] = ""

    # -- selection ------------------------------------------------------------------------
    def select(self, q: ArrayLike, d: ArrayLike | None = None, rng: RNGLike = None) -> IntArray:
        """Select one candidate per leading index of ``q``.

        Parameters
        ----------
        q:
            Scores, shape ``(..., K)``, finite.
        d:
            Candidate-wise sensitivities Δ_a (eq. (1)), a scalar or an array broadcastable to
            ``q``; finite and ``> 0``. ``None`` means unit sensitivities.
        rng:
            A :class:`numpy.random.Generator`, a seed, or None.

        Returns
        -------
        numpy.ndarray
            ``int64`` indices of shape ``q.shape[:-1]``.
        """
        q2, d2, batch_shape = prepare_inputs(q, d)
        gen = checks.generator(rng)
        k = q2.shape[1]
        if k == 1 or q2.shape[0] == 0:
            return np.zeros(batch_shape, dtype=np.int64)
        out = self.select_batch(*_kernel_batch(q2, d2), gen)
        return np.asarray(out, dtype=np.int64).reshape(batch_shape)

    def __call__(self, q: ArrayLike, d: ArrayLike | None = None, rng: RNGLike = None) -> IntArray:
        return self.select(q, d, rng)

    def select_batch(self, q: FloatArray, d: FloatArray, rng: np.random.Generator) -> IntArray:
        """The selection itself, on a validated batch: the hook every selector implements.

        ``q`` and ``d`` are float64 arrays of shape ``(R, K)`` with ``K >= 2``, finite scores and
        finite positive sensitivities; ``rng`` is the only source of randomness. Returns ``R``
        indices in ``0..K-1`` (one independent draw per row).
        """
        raise NotImplementedError

    def compiled_kernel(self, n_candidates: int) -> CompiledKernel | None:
        """The selection as a compiled row kernel and its parameters for ``n_candidates``
        candidates, for compiled callers such as the private agent's fused loop; ``None``
        (the default) when there is none: callers then use :meth:`select_batch`, step by step.
        The kernel's contract is in :mod:`dpbandits.selectors.compiled` (docs/selectors.md)."""
        return None


class FunctionSelector(Selector):
    """A selector built from a plain function ``fn(q, d, epsilon, rng) -> indices``.

    ``fn`` receives the validated 2-D batch ``q`` of shape ``(R, K)``, ``d`` of the same shape,
    the float ``epsilon`` and a :class:`numpy.random.Generator`; it must return ``R`` integer
    indices in ``[0, K)``. The wrapper checks the output, so a broken function fails loudly.
    """

    name: str  # type: ignore[misc]
    private: bool  # type: ignore[misc]
    guarantee: str  # type: ignore[misc]
    uses_sensitivities: bool  # type: ignore[misc]

    def __init__(
        self,
        fn: Callable[..., ArrayLike],
        name: str,
        epsilon: float = 1.0,
        private: bool = True,
        guarantee: str = "eps-DP",
        uses_sensitivities: bool = True,
    ) -> None:
        if not callable(fn):
            raise TypeError(f"fn must be callable, got {type(fn).__name__}")
        if not isinstance(name, str) or not name:
            raise ValueError(f"name must be a non-empty string, got {name!r}")
        super().__init__(epsilon)
        self.fn = fn
        self.name = name
        self.private = checks.flag(private, "private")
        self.guarantee = str(guarantee)
        self.uses_sensitivities = checks.flag(uses_sensitivities, "uses_sensitivities")

    def __repr__(self) -> str:
        fn_name = getattr(self.fn, "__qualname__", repr(self.fn))
        return (
            f"FunctionSelector(fn={fn_name}, name={self.name!r}, epsilon={self.epsilon!r}, "
            f"private={self.private!r}, guarantee={self.guarantee!r})"
        )

    def select_batch(self, q: FloatArray, d: FloatArray, rng: np.random.Generator) -> IntArray:
        out = np.asarray(self.fn(q, d, self.epsilon, rng))
        r, k = q.shape
        if out.size != r or not np.issubdtype(out.dtype, np.integer):
            raise ValueError(
                f"selector function {self.name!r} must return {r} integer indices, "
                f"got dtype {out.dtype} and shape {out.shape}"
            )
        out = out.reshape(r)
        if np.any((out < 0) | (out >= k)):
            raise ValueError(f"selector function {self.name!r} returned indices outside [0, {k})")
        return out.astype(np.int64, copy=False)


def from_function(
    fn: Callable[..., ArrayLike],
    *,
    name: str | None = None,
    epsilon: float = 1.0,
    private: bool = True,
    guarantee: str = "eps-DP",
    uses_sensitivities: bool = True,
) -> FunctionSelector:
    """Wrap ``fn(q, d, epsilon, rng) -> indices`` (batched over rows of ``q``) as a Selector."""
    if name is None:
        name = getattr(fn, "__name__", "function")
    return FunctionSelector(
        fn,
        name=name,
        epsilon=epsilon,
        private=private,
        guarantee=guarantee,
        uses_sensitivities=uses_sensitivities,
    )
