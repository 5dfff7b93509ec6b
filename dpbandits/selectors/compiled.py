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

The kernel has the law of ``select_batch`` on the same input. The built-ins' ``select_batch``
runs the kernel itself (:class:`KernelBacked`), so they draw the same numbers and select the
same candidates from the same seed; ``dpbandits.testing.check_selector`` checks it for any
selector (same seed, same indices; else the same law by a two-sample test).

One compiled selection for every caller. Every caller reaches a kernel the same way
(:func:`selection_args`): the kernel compiled once per type of its ``params``, for writable
C-contiguous ``q`` and ``d``, and called by address from an entry that reads the parameters
where they are stored (:func:`_selection_packed`, compiled per parameter types, a few lines).
The private agent's loop calls that entry by address; ``select_batch`` (and
:func:`call_kernel`) call it from Python through one small entry, :func:`_run_at`, whose
argument types do not depend on the selector (the stored parameters' address and the call
addresses, ``q``, ``d``, the Generator's address): it hands read-only ``q`` and ``d`` (as
``Selector.select`` passes them) on as they are, copies other layouts, and links none of the
kernel's code. So a selection is typed, lowered and optimised once, not once per entry point
and array type (docs/performance.md, "One compiled selection per selector"). The addresses
and the stored parameters are made once per selector object and number of candidates
(:class:`KernelBacked`): a call costs what the former per-selector entries cost.

A subclass inherits its parent's kernel; one that overrides ``select_batch`` but not
``compiled_kernel`` has changed the selection and not the kernel, so :func:`compiled_kernel`
gives ``None`` for it (its own ``select_batch`` is used).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
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
    borrowable,
    call_bool_at,
    compiled_address,
    load_borrowed,
    native_size,
    store_borrowed,
)

__all__ = [
    "CompiledKernel",
    "KernelBacked",
    "call_kernel",
    "compiled_kernel",
    "kernel_callee",
    "selection_args",
    "selection_key",
]


class CompiledKernel(NamedTuple):
    """A selector's compiled row kernel and its parameters for some number of candidates
    (the module docstring states the kernel's contract)."""

    #: ``kernel(params, q, d, rng, out) -> bool``, a compiled function (numba dispatcher)
    kernel: Any
    #: the kernel's first argument: a tuple of numbers and numpy arrays
    params: tuple[Any, ...]


def _defining_class(cls: type, *attributes: str) -> type | None:
    return next((c for c in cls.__mro__ if any(a in c.__dict__ for a in attributes)), None)


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
    # (a KernelBacked selector's kernel is its kernel_for's, which compiled_kernel returns)
    owner = _defining_class(cls, "compiled_kernel", "kernel_for")
    select = _defining_class(cls, "select_batch")
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
    (:func:`selection_args`): ``kernel_`` itself, or for a kernel compiled to be inlined into
    its callers, :func:`_selection` bound to it (one specialisation per kernel)."""
    forceinline = getattr(kernel_, "targetoptions", {}).get("forceinline", False)
    return specialise(_selection, _select=kernel_) if forceinline else kernel_


# -- the selection's entry: the same argument types for every selector, the selector's
# parameters as the address where _pack stored them
#: The numba type of the selector's parameters, bound in :func:`_selection_packed`.
_PARAMS: Any = None


@kernel
def _pack(params: Any, address: int) -> None:
    """Store ``params`` (``CompiledKernel.params``, :func:`~dpbandits.core.numba_compat.borrowable`
    types) at ``address``, for :func:`_selection_packed`; the caller keeps its arrays alive."""
    store_borrowed(address, params)


@kernel_template
def _selection_packed(params_at: int, select_fn: int, select_token: int, q: Any, d: Any,
                      rng: Any, out: Any) -> bool:  # fmt: skip
    """The selection: the parameters of type ``_PARAMS`` stored at ``params_at``
    (:func:`_pack`), passed to the selector's kernel at ``select_fn``. Compiled once per
    parameter types (a few lines), not per selector: kRR and permute-and-flip share one, as do
    GEM and mGEM."""
    params = load_borrowed(params_at, _PARAMS)
    return call_bool_at(select_fn, select_token, (params, q, d, rng, out))


@kernel
def _selection_direct(params: Any, select_fn: int, select_token: int, q: Any, d: Any, rng: Any,
                      out: Any) -> bool:  # fmt: skip
    """The same for parameters that cannot be stored at an address (a plug-in's typed list, a
    record...): passed by value, so the callers are compiled for their types too."""
    return call_bool_at(select_fn, select_token, (params, q, d, rng, out))


#: The argument types every caller hands a kernel after ``params``: writable C-contiguous
#: ``q`` and ``d``, numba's Generator, a writable C-contiguous ``out``.
_F2 = numba.types.Array(numba.types.float64, 2, "C")
_I1 = numba.types.Array(numba.types.int64, 1, "C")
_CALLS = (numba.types.int64, numba.types.int64)  # (select_fn, select_token)
_STEP = (_F2, _F2, GENERATOR_TYPE, _I1)  # (q, d, rng, out)


def selection_key(selector_kernel: Any, params: tuple[Any, ...]) -> tuple[Any, str]:
    """What :func:`selection_args` compiles for: the selector's kernel and the numba type of
    its parameters (by name: the same in every process)."""
    return selector_kernel, str(numba.typeof(params))


def selection_args(selector_kernel: Any, params: tuple[Any, ...]) -> tuple[tuple[Any, ...], Any]:
    """``(params or their address, entry address, entry token, kernel address, kernel token)``
    -- how every caller reaches ``selector_kernel`` with ``params`` (the private agent's loop,
    ``agents.private_loop.play_loop``; ``select_batch`` and :func:`call_kernel`, through
    :func:`_run_at`) -- and what the caller must keep alive as long as it uses them (the
    stored parameters).

    The selector's kernel is compiled (or loaded) for ``params`` and the step arguments
    ``(q, d, rng, out)`` (:func:`dpbandits.core.numba_compat.compiled_address`). Parameters of
    numbers and arrays (every built-in selector's) are stored at an address (:func:`_pack`,
    their arrays borrowed from ``params``) and read by :func:`_selection_packed`, compiled per
    parameter types; any other parameters go by value through :func:`_selection_direct`.
    Typing ``params`` costs ~0.1 ms: callers keep the result (:class:`KernelBacked`)."""
    params_type = numba.typeof(params)
    select = compiled_address(kernel_callee(selector_kernel), (params_type, *_STEP))
    if not borrowable(params_type):
        entry = compiled_address(_selection_direct, (params_type, *_CALLS, *_STEP))
        return (params, *entry, *select), params
    stored = np.zeros(-(-native_size(params_type) // 8), dtype=np.int64)
    _pack(params, stored.ctypes.data)
    entry = compiled_address(specialise(_selection_packed, _PARAMS=params_type),
                             (numba.types.int64, *_CALLS, *_STEP))  # fmt: skip
    return (stored.ctypes.data, *entry, *select), (stored, params)


# -- the selection from Python
#: The indices' dtype, as an object: ``np.empty(r, _INDEX)`` is ~0.1 µs faster than with
#: ``dtype=np.int64`` (a tenth of a one-row selection's Python side)
_INDEX = np.dtype(np.int64)

#: The numba type of a call's head (:func:`_call_head`): the entry's address and token, the
#: kernel's address and token, four int64s.
_HEAD = numba.types.UniTuple(numba.types.int64, 4)


@kernel
def _run_at(carrier: Any, head_at: int, q: Any, d: Any, generator: int, out: Any) -> bool:
    """The selection of :func:`selection_args` -- the parameters or their address ``carrier``,
    the four call values stored at ``head_at`` (:func:`_call_head`) -- on ``q`` and ``d`` as
    the loop passes them: float64, C-contiguous (a strided array is copied) and typed as
    writable (a read-only array is passed as it is: a kernel never writes into it, and another
    array type would compile the kernel once more), the Generator by address
    (:func:`generator_at`: the kernel's one Generator type, and ~5 µs less than passing a
    Generator object). Six arguments, the call values read from memory: each argument costs a
    Python call ~25 ns. Compiled per type of ``q`` and ``d`` (and of the parameters when they
    go by value), in ~0.2 CPU-s: it links none of the kernel's code."""
    entry_fn, entry_token, select_fn, select_token = load_borrowed(head_at, _HEAD)
    q = as_writable(np.ascontiguousarray(np.asarray(q, dtype=np.float64)))
    d = as_writable(np.ascontiguousarray(np.asarray(d, dtype=np.float64)))
    rng = generator_at(generator)
    return call_bool_at(entry_fn, entry_token, (carrier, select_fn, select_token, q, d, rng, out))


def _call_head(spec: CompiledKernel) -> tuple[Any, int, Any]:
    """``(carrier, head address, kept)``: the arguments of :func:`_run_at` for ``spec`` after
    :func:`selection_args`, and what they point to (the caller keeps it alive)."""
    (carrier, *calls), kept = selection_args(spec.kernel, spec.params)
    head = np.array(calls, dtype=np.int64)  # _HEAD's layout: four int64s in a row
    return carrier, head.ctypes.data, (head, kept)


def call_kernel(
    spec: CompiledKernel, q: NDArray[np.float64], d: NDArray[np.float64], rng: np.random.Generator
) -> NDArray[np.int64] | None:
    """Run ``spec``'s kernel on a validated ``(R, K)`` batch from Python, drawing from ``rng``:
    the ``R`` indices, or ``None`` when the kernel refused the input. It calls the compiled
    selection every caller calls (:func:`selection_args`: that of the private agent's loop);
    ``dpbandits.testing.check_selector`` calls a plug-in's kernel with it. ``d`` may be
    anything that broadcasts to ``q``'s shape. Typing ``params`` costs ~0.1 ms a call: a
    ``select_batch`` that runs its own kernel uses :class:`KernelBacked`."""
    carrier, head_at, _kept = _call_head(spec)
    q = np.asarray(q, dtype=np.float64)
    d = np.asarray(d, dtype=np.float64)
    if d.shape != q.shape:
        d = np.broadcast_to(d, q.shape)
    out = np.empty(q.shape[0], _INDEX)
    return out if _run_at(carrier, head_at, q, d, generator_address(rng), out) else None


class KernelBacked:
    """Mixin of a selector whose ``select_batch`` runs its own compiled kernel,
    :meth:`kernel_for` (every built-in selector; its ``compiled_kernel`` gives the same
    kernel): put it before ``Selector`` in the bases, e.g. ``class RNM(KernelBacked,
    Selector)``. Its :meth:`select_batch` runs the kernel and raises ``ValueError`` for an
    input the kernel refuses; a selector with an error message of its own overrides it and
    calls :meth:`run_kernel`.

    The arguments of the call (:func:`selection_args`: the stored parameters, the addresses)
    are made at the first selection with a number of candidates and kept on the object, so a
    call costs what a call of a compiled function costs (typing the parameters alone costs
    ~0.1 ms). Setting any attribute of the object (``sel.epsilon = 0.5``) drops them: the next
    selection makes them again from the new parameters. The last Generator drawn from is held
    with its address, for the same reason. They hold this process's addresses, so copies and
    pickles of the object leave them out."""

    #: per number of candidates: (carrier, head address, kept) of kernel_for(K)
    #: (:func:`_call_head`); the class's is empty and never written (an object gets its own)
    _kernel_calls: Mapping[int, tuple[Any, int, Any]] = MappingProxyType({})
    #: the last Generator drawn from and its bit generator's address (``generator_address``,
    #: ~0.2 µs, a tenth of a one-row selection): a private agent draws from one at every step
    _generator: tuple[Any, int] = (None, 0)

    def compiled_kernel(self, n_candidates: int) -> CompiledKernel | None:
        """:meth:`kernel_for`'s kernel: what the private loop runs (``Selector.compiled_kernel``;
        a subclass that overrides it to return ``None`` is played through its ``select_batch``,
        which still runs :meth:`kernel_for`'s)."""
        return self.kernel_for(n_candidates)

    def kernel_for(self, n_candidates: int) -> CompiledKernel | None:
        """The kernel ``select_batch`` runs for ``n_candidates`` candidates, whatever a
        subclass's ``compiled_kernel`` says; ``None`` if there is none for these parameters."""
        raise NotImplementedError

    def run_kernel(
        self, q: NDArray[np.float64], d: NDArray[np.float64], rng: np.random.Generator
    ) -> NDArray[np.int64] | None:
        """:meth:`kernel_for`'s kernel on a validated ``(R, K)`` batch ``q``, ``d`` (the arrays
        ``select_batch`` receives), drawing from ``rng``: the ``R`` indices, or ``None`` when the
        kernel refused the input (having drawn nothing) or there is no kernel."""
        known = self._kernel_calls.get(q.shape[1]) or self._remember_calls(q.shape[1])
        if known is None:
            return None
        held = self._generator
        address = held[1] if held[0] is rng else self._hold(rng)
        out = np.empty(q.shape[0], _INDEX)
        return out if _run_at(known[0], known[1], q, d, address, out) else None

    def select_batch(
        self, q: NDArray[np.float64], d: NDArray[np.float64], rng: np.random.Generator
    ) -> NDArray[np.int64]:
        """The selection on a validated batch (``Selector.select_batch``): :meth:`run_kernel`
        (written out again: a Python call is ~5% of a one-row selection)."""
        known = self._kernel_calls.get(q.shape[1]) or self._remember_calls(q.shape[1])
        held = self._generator
        address = held[1] if held[0] is rng else self._hold(rng)
        out = np.empty(q.shape[0], _INDEX)
        if known is not None and _run_at(known[0], known[1], q, d, address, out):
            return out
        name = getattr(self, "name", type(self).__name__)
        raise ValueError(f"selector {name!r}: its kernel refused this input (q, d)")

    def _hold(self, rng: np.random.Generator) -> int:
        # the Generator is held with its address: while it is, no other object has its id
        address = generator_address(rng)
        self.__dict__["_generator"] = (rng, address)
        return address

    def _remember_calls(self, k: int) -> tuple[Any, int, Any] | None:
        spec = self.kernel_for(k)
        if spec is None:
            return None
        known = _call_head(spec)
        # (in __dict__ directly: setting an attribute drops them, __setattr__)
        self.__dict__.setdefault("_kernel_calls", {})[k] = known
        return known

    def __setattr__(self, name: str, value: Any) -> None:
        # a parameter may have changed: the stored parameters are made again when next used
        super().__setattr__(name, value)
        self.__dict__.pop("_kernel_calls", None)

    def __getstate__(self) -> dict[str, Any]:
        # (copy and pickle): the addresses are this process's, and the copy's own to make
        state = dict(self.__dict__)
        state.pop("_kernel_calls", None)
        state.pop("_generator", None)
        return state
