"""The compiled-selector protocol: a selector's row kernel and its parameters (docs/selectors.md).

A compiled loop that selects at every step -- the private agent's fused loop
(``agents.private``) -- cannot call a selector object. A selector that can run there says so
with a method ``compiled_kernel(n_candidates)`` returning a :class:`CompiledKernel`: a compiled
function (a numba dispatcher, e.g. made with :func:`dpbandits.core.jit.kernel` or
``numba.njit``) and the parameters it takes for ``n_candidates`` candidates. The built-in
selectors use exactly this protocol, each class declaring its own kernel; a plug-in that
provides one runs inside the loop at the speed of a built-in (``examples/custom_selector.py``).
A selector without one (or whose method returns ``None``) is played step by step through its
``select_batch``.

The kernel's contract, ``kernel(params, q, d, rng, out) -> bool``:

- ``params``: the tuple of :class:`CompiledKernel` (numbers and numpy arrays; arrays are
  never written, and a read-only array keeps one compiled version of the caller);
- ``q``, ``d``: float64 arrays of shape ``(R, K)``, ``K = n_candidates >= 2``, finite scores
  and finite positive sensitivities (ones for a selector whose ``uses_sensitivities`` is
  False), as ``select_batch`` receives them; never written;
- ``rng``: a numba ``Generator`` (numpy's ``Generator`` inside compiled code), the only
  source of randomness;
- ``out``: an int64 array of shape ``(R,)``, to fill with one index in ``[0, K)`` per row;
- it returns True; or False, *having drawn nothing*, for an input that ``select_batch`` would
  refuse (e.g. a noise scale that overflows): the caller then calls ``select_batch`` for its
  error.

The kernel has the law of ``select_batch`` on the same input: the built-ins' ``select_batch``
runs the kernel itself (:func:`run_kernel`), so they draw the same numbers and select the
same candidates from the same seed.

Every caller runs one compiled version of a kernel per type of its ``params``: the one for
writable C-contiguous ``q`` and ``d`` (:func:`kernel_address`), which the private agent's loop
calls by address, and which :func:`run_kernel` and :func:`call_kernel` call by address too,
through a small trampoline that links none of the kernel's code (read-only arrays, as
``Selector.select`` hands them, are passed as they are; others are copied). So a selection is
typed, lowered and optimised once, not once per entry point and array type
(docs/performance.md, "The test command's cost").

``dpbandits.testing.check_selector`` checks the law for any selector (same seed, same
indices; else the same law by a two-sample test).

A subclass inherits its parent's kernel; one that overrides ``select_batch`` but not
``compiled_kernel`` has changed the selection and not the kernel, so :func:`compiled_kernel`
gives ``None`` for it (its own ``select_batch`` is used).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numba
import numpy as np
from numba.extending import is_jitted
from numpy.typing import NDArray

from dpbandits.core.jit import (
    generator_address,
    generator_at,
    kernel,
    kernel_template,
    specialise,
)
from dpbandits.core.numba_compat import (
    GENERATOR_TYPE,
    as_writable,
    call_bool_at,
    compiled_address,
    type_key,
)

__all__ = [
    "CompiledKernel",
    "call_kernel",
    "compiled_kernel",
    "kernel_address",
    "kernel_callee",
    "kernel_indices",
    "run_kernel",
]


class CompiledKernel(NamedTuple):
    """A selector's compiled row kernel and its parameters for some number of candidates
    (the module docstring states the kernel's contract)."""

    #: ``kernel(params, q, d, rng, out) -> bool``, a compiled function (numba dispatcher)
    kernel: Any
    #: the kernel's first argument: a tuple of numbers and numpy arrays
    params: tuple[Any, ...]


def _defining_class(cls: type, attribute: str) -> type | None:
    return next((c for c in cls.__mro__ if attribute in c.__dict__), None)


def compiled_kernel(selector: Any, n_candidates: int) -> CompiledKernel | None:
    """``selector``'s :class:`CompiledKernel` for ``n_candidates`` candidates, or ``None``:
    no ``compiled_kernel`` method, a method that returns ``None`` (parameters with no compiled
    form; ``select_batch`` then raises its own error at the first selection), or a subclass
    that overrides ``select_batch`` below the class that defines ``compiled_kernel``.

    Raises ``TypeError`` naming the selector when the method returns something else than a
    ``CompiledKernel`` of a compiled function and a tuple."""
    method = getattr(selector, "compiled_kernel", None)
    if not callable(method):
        return None
    cls = type(selector)
    owner, select = _defining_class(cls, "compiled_kernel"), _defining_class(cls, "select_batch")
    if owner is not None and select is not None and select is not owner:
        if issubclass(select, owner):  # select_batch changed below the kernel's class
            return None
    spec = method(n_candidates)
    if spec is None:
        return None
    name = getattr(selector, "name", cls.__name__)
    if not isinstance(spec, CompiledKernel):
        raise TypeError(
            f"selector {name!r}: compiled_kernel() must return a CompiledKernel or None, "
            f"got {type(spec).__name__}"
        )
    if not is_jitted(spec.kernel):
        raise TypeError(
            f"selector {name!r}: CompiledKernel.kernel must be a compiled function "
            f"(dpbandits.core.jit.kernel or numba.njit), got {type(spec.kernel).__name__}"
        )
    if not isinstance(spec.params, tuple):
        raise TypeError(
            f"selector {name!r}: CompiledKernel.params must be a tuple, "
            f"got {type(spec.params).__name__}"
        )
    return spec


def _select(params: Any, q: Any, d: Any, rng: Any, out: Any) -> bool:
    """A plug-in's inline kernel, bound in each compiled version of :func:`_selection`."""
    raise NotImplementedError("bound by dpbandits.core.jit.specialise")


@kernel_template
def _selection(params: Any, q: Any, d: Any, rng: Any, out: Any) -> bool:
    """The kernel ``_select``, compiled to be inlined into its callers (an ``inline_kernel``,
    a plug-in's), as a function of its own: a function marked to be inlined may have no
    address of its own to be called at."""
    return _select(params, q, d, rng, out)


def kernel_callee(kernel_: Any) -> Any:
    """The compiled function that callers of ``kernel_`` call by address
    (:func:`kernel_address`): ``kernel_`` itself, or for a kernel compiled to be inlined into
    its callers, :func:`_selection` bound to it (one specialisation per kernel)."""
    forceinline = getattr(kernel_, "targetoptions", {}).get("forceinline", False)
    return specialise(_selection, _select=kernel_) if forceinline else kernel_


#: The argument types every caller hands a kernel, after ``params``: writable C-contiguous
#: ``q`` and ``d``, numba's Generator, a writable C-contiguous ``out``.
_F2 = numba.types.Array(numba.types.float64, 2, "C")
_I1 = numba.types.Array(numba.types.int64, 1, "C")
_ADDRESSES: dict[tuple[Any, Any], tuple[int, int]] = {}


def kernel_address(kernel_: Any, params: tuple[Any, ...]) -> tuple[int, int]:
    """``(address, token)`` of ``kernel_`` compiled (or loaded from the disk cache) for
    ``(params, q, d, rng, out)`` with the one set of array types of every caller: ``q``, ``d``
    writable C-contiguous float64 ``(R, K)`` arrays, ``out`` a writable C-contiguous int64
    ``(R,)`` array, ``rng`` numba's Generator. The arguments of
    :func:`dpbandits.core.numba_compat.call_bool_at`: how the private agent's loop and
    :func:`call_kernel` (hence the built-in selectors' ``select_batch``) call a kernel, so
    that it is compiled once for all of them (docs/performance.md, "Cold start"). Found
    once per process, kernel and type of ``params`` (typing ``params`` costs ~0.1 ms)."""
    key = (kernel_, type_key(params))
    known = _ADDRESSES.get(key)
    if known is None:
        argtypes = (numba.typeof(params), _F2, _F2, GENERATOR_TYPE, _I1)
        known = _ADDRESSES[key] = compiled_address(kernel_callee(kernel_), argtypes)
    return known


@kernel
def _run_at(address: int, token: int, params: Any, q: Any, d: Any, generator: int,
            out: Any) -> bool:  # fmt: skip
    """The kernel at ``address`` (:func:`kernel_address`) on ``q``, ``d`` as C-contiguous
    writable arrays (a strided array copied; a read-only one typed as writable: a kernel never
    writes into them, and another array type would compile the kernel once more), the
    Generator by address (:func:`generator_at`, which saves the ~5 µs of passing a Generator
    object) and ``out``. Compiled per type of ``params``, ``q`` and ``d``, in ~0.15 CPU-s: it
    links none of the kernel's code."""
    q = as_writable(np.ascontiguousarray(q))
    d = as_writable(np.ascontiguousarray(d))
    return call_bool_at(address, token, (params, q, d, generator_at(generator), out))


_FLOAT = np.dtype(np.float64)


def run_kernel(
    kernel_: Any,
    params: tuple[Any, ...],
    q: NDArray[np.float64],
    d: NDArray[np.float64],
    rng: np.random.Generator,
) -> NDArray[np.int64] | None:
    """:func:`call_kernel` of ``CompiledKernel(kernel_, params)`` on arrays ``q``, ``d`` of one
    shape ``(R, K)``: the built-in selectors' ``select_batch``, ~1.5 µs more than the
    kernel's own work. Arrays that are not C-contiguous float64 are copied."""
    if q.dtype is not _FLOAT or d.dtype is not _FLOAT:  # (the layout: in _run_at)
        q, d = q.astype(np.float64), d.astype(np.float64)
    known = _ADDRESSES.get((kernel_, type_key(params)))
    address, token = kernel_address(kernel_, params) if known is None else known
    out = np.empty(q.shape[0], dtype=np.int64)
    return out if _run_at(address, token, params, q, d, generator_address(rng), out) else None


def call_kernel(
    spec: CompiledKernel, q: NDArray[np.float64], d: NDArray[np.float64], rng: np.random.Generator
) -> NDArray[np.int64] | None:
    """Run ``spec``'s kernel on a validated ``(R, K)`` batch from Python, drawing from ``rng``:
    the ``R`` indices, or ``None`` when the kernel refused the input. It calls the very
    compiled function the private agent's loop calls (:func:`kernel_address`); the built-in
    selectors' ``select_batch`` is this call (:func:`run_kernel`), and
    ``dpbandits.testing.check_selector`` calls a plug-in's kernel with it. ``d`` may be
    anything that broadcasts to ``q``'s shape; arrays that are not C-contiguous float64 are
    copied (the kernel is compiled for those only)."""
    q = np.asarray(q, dtype=np.float64)
    d = np.asarray(d, dtype=np.float64)
    if d.shape != q.shape:
        d = np.broadcast_to(d, q.shape)
    return run_kernel(spec.kernel, spec.params, q, d, rng)


def kernel_indices(
    spec: CompiledKernel, q: NDArray[np.float64], d: NDArray[np.float64], rng: np.random.Generator
) -> NDArray[np.int64]:
    """:func:`call_kernel` for a kernel that never refuses its input (the ``select_batch`` of
    the built-in selectors whose kernel always returns True)."""
    out = run_kernel(spec.kernel, spec.params, q, d, rng)
    if out is None:
        raise RuntimeError(f"the kernel {spec.kernel} refused an input it always takes")
    return out
