"""The built-in selectors as one compiled call, for compiled callers (docs/performance.md).

A kernel that selects at every step -- the private agent's block loop (``agents.private``) --
cannot call a selector object. :func:`compiled_selection` turns a built-in selector, for ``K``
candidates, into a :class:`CompiledSelection` (an integer kind and the kernel's scalars and
table), and the kernel :func:`select_rows` runs it on a batch with the caller's Generator:
it calls the very batch kernel the selector's ``select_batch`` calls (``rnm_rows``,
``gem_rows``, ``rs_select_rows``, ``krr_select_rows``, ...) with the same arguments, so both
draw the same numbers and select the same candidates.

Only the exact built-in classes are compiled: a subclass may override ``select_batch``, and a
user plug-in has no kernel. For those :func:`compiled_selection` returns ``None`` and the
caller selects through ``select_batch``, step by step.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from dpbandits.core.jit import kernel
from dpbandits.selectors.gem import (
    GEM,
    MGEM,
    CombinedGEM,
    auto_method,
    combined_gem_rows,
    gem_rows,
    gem_t,
)
from dpbandits.selectors.noisy_max import (
    RNM,
    RNMH,
    ExponentialMechanism,
    PermuteAndFlip,
    noise_code,
    permute_and_flip_rows,
    rnm_rows,
    rnmh_rows,
)
from dpbandits.selectors.random_stopping import RS, RandomStoppingTNB, rs_select_rows, tnb_method
from dpbandits.selectors.simple import (
    KRR,
    Greedy,
    Uniform,
    argmax_ties_rows,
    krr_select_rows,
    uniform_rows,
)

__all__ = ["KINDS", "CompiledSelection", "compiled_selection", "select_rows"]

#: The kinds of :class:`CompiledSelection`, by their index.
KINDS: tuple[str, ...] = (
    "rnm", "permute_and_flip", "rnmh", "gem", "combined_gem", "rs", "krr", "greedy", "uniform"
)  # fmt: skip
_RNM, _PF, _RNMH, _GEM, _CGEM, _RS, _KRR, _GREEDY, _UNIFORM = range(len(KINDS))
_NO_TABLE = np.empty(0)
_NO_TABLE.setflags(write=False)


class CompiledSelection(NamedTuple):
    """A built-in selector for ``K`` candidates as :func:`select_rows`' arguments."""

    kind: int
    floats: NDArray[np.float64]
    ints: NDArray[np.int64]
    table: NDArray[np.float64]


def _spec(kind: int, floats: list[float], ints: list[int], table: Any = _NO_TABLE) -> Any:
    # Every table is read-only, as random stopping's cached ones are (tested): one type, so
    # one compiled version of each caller (a 650 KB object for the private agent's loop,
    # compiled and loaded once instead of once per flag).
    return CompiledSelection(
        kind, np.array(floats, dtype=np.float64), np.array(ints, dtype=np.int64),
        np.ascontiguousarray(table, dtype=np.float64),
    )  # fmt: skip


def compiled_selection(selector: Any, k: int) -> CompiledSelection | None:
    """``selector`` (an instance) for ``k`` candidates as a :class:`CompiledSelection`, or
    ``None`` when it has no compiled form (not an exact built-in class, or parameters that its
    ``select_batch`` refuses: it then raises its own error at the first selection)."""
    cls, eps = type(selector), float(getattr(selector, "epsilon", math.nan))
    if cls in (RNM, ExponentialMechanism):
        return _spec(_RNM, [eps], [noise_code(selector.noise)])
    if cls is PermuteAndFlip:
        return _spec(_PF, [eps], [])
    if cls is RNMH:
        return _spec(_RNMH, [eps], [])
    if cls in (GEM, MGEM):
        return _spec(_GEM, [selector.t(k), eps / 2.0],
                     [noise_code(selector.noise), auto_method(k)])  # fmt: skip
    if cls is CombinedGEM:
        eps_g = selector.epsilon_g
        return _spec(_CGEM, [gem_t(k, eps_g, selector.beta), selector.p_keep, eps_g / 2.0],
                     [noise_code(selector.noise), auto_method(k)])  # fmt: skip
    if cls in (RS, RandomStoppingTNB):
        eta = 1.0 if cls is RS else float(selector.eta)
        try:
            method, cdf = tnb_method(eta, selector.gamma)
        except ValueError:  # gamma too small for a table: select_batch says so
            return None
        return _spec(_RS, [eps, eta, selector.gamma], [method], cdf)
    if cls is KRR:
        return _spec(_KRR, [selector.p_keep(k)], [])
    if cls is Greedy:
        return _spec(_GREEDY, [], [])
    if cls is Uniform:
        return _spec(_UNIFORM, [], [])
    return None


@kernel
def select_rows(kind: int, floats: Any, ints: Any, table: Any, q: Any, d: Any, rng: Any,
                out: Any) -> bool:  # fmt: skip
    """Select for every row of ``q``, ``d`` (R, K) into ``out`` (R,) with the selection
    ``(kind, floats, ints, table)`` of :func:`compiled_selection`, drawing from ``rng``.

    Returns False, having drawn nothing, where the selector's ``select_batch`` raises (a noise
    scale that overflows: a tiny epsilon with a large ``d``); the caller then calls
    ``select_batch`` for its error.
    """
    if kind == _RNM:
        rnm_rows(q, d, floats[0], ints[0], rng, out)
    elif kind == _PF:
        permute_and_flip_rows(q, d, floats[0], rng, out)
    elif kind == _RNMH:
        d_max = rnmh_rows(q, d, floats[0], rng, out)
        return math.isfinite(2.0 * d_max / floats[0])
    elif kind == _GEM:
        return gem_rows(q, d, floats[0], _NO_TABLE, floats[1], ints[0], ints[1], rng, out)
    elif kind == _CGEM:
        return combined_gem_rows(q, d, floats[0], floats[1], floats[2], ints[0], ints[1], rng,
                                 out)  # fmt: skip
    elif kind == _RS:
        return rs_select_rows(q, d, floats[0], floats[1], ints[0], floats[2], table, rng, out)
    elif kind == _KRR:
        krr_select_rows(q, floats[0], rng, out)
    elif kind == _GREEDY:
        argmax_ties_rows(q, rng, out)
    else:
        uniform_rows(q.shape[1], rng, out)
    return True
