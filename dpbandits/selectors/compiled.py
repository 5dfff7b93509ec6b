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

The kernel has the law of ``select_batch`` on the same input: the built-ins call the very
row functions their ``select_batch`` calls, so they draw the same numbers and select the
same candidates from the same seed. ``dpbandits.testing.check_selector`` checks it for any
selector (same seed, same indices; else the same law by a two-sample test).

A subclass inherits its parent's kernel; one that overrides ``select_batch`` but not
``compiled_kernel`` has changed the selection and not the kernel, so :func:`compiled_kernel`
gives ``None`` for it (its own ``select_batch`` is used).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numba.extending import is_jitted
from numpy.typing import NDArray

from dpbandits.core.jit import generator_address, generator_at, kernel_template, specialise

__all__ = ["CompiledKernel", "call_kernel", "compiled_kernel"]


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


def _kernel(params: Any, q: Any, d: Any, rng: Any, out: Any) -> bool:
    """A selector's kernel, bound in each compiled version of :func:`_kernel_at`."""
    raise NotImplementedError("bound by dpbandits.core.jit.specialise")


@kernel_template
def _kernel_at(params: Any, q: Any, d: Any, address: int, out: Any) -> bool:
    # the Generator by address: the kernel gets the same Generator type as in a compiled
    # caller (the private agent's loop), so the kernels it calls are compiled once for both
    return _kernel(params, q, d, generator_at(address), out)


def call_kernel(
    spec: CompiledKernel, q: NDArray[np.float64], d: NDArray[np.float64], rng: np.random.Generator
) -> NDArray[np.int64] | None:
    """Run ``spec``'s kernel on a validated ``(R, K)`` batch from Python, drawing from ``rng``:
    the ``R`` indices, or ``None`` when the kernel refused the input (for tests and checks:
    ``dpbandits.testing.check_selector``)."""
    entry = specialise(_kernel_at, _kernel=spec.kernel)
    q = np.ascontiguousarray(q, dtype=np.float64)
    d = np.ascontiguousarray(np.broadcast_to(d, q.shape), dtype=np.float64)
    out = np.empty(q.shape[0], dtype=np.int64)
    return out if entry(spec.params, q, d, generator_address(rng), out) else None
