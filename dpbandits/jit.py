"""Compiled per-step kernels: the one decorator every kernel of the library is compiled with.

A bandit step is a handful of arithmetic operations per replication; called through numpy it
costs the fixed price of every numpy call (about 1 µs each), whatever the number of
replications. The agents whose step is compiled (UCB, Thompson sampling, SW-UCB, D-UCB) write
it once, as scalar code compiled by `numba <https://numba.pydata.org>`_, and use the same
compiled functions for the step-by-step protocol (``act``/``update``) and for the engine's
fused loop over a block of steps (``Agent.play``). See ``docs/performance.md``.

Choices, each for a reason:

- ``cache=True``: the machine code is written next to the module (or in numba's user cache
  directory when that is read-only) and loaded by later processes, so only the first run on a
  machine pays the compilation (about a second per kernel).
- ``error_model="numpy"``: a division by zero gives ``inf``/``nan`` as the numpy code it
  replaces would, instead of raising ``ZeroDivisionError``.
- No ``fastmath``: every kernel does the same IEEE operations in the same order as the numpy
  expressions documented next to it, so the results are identical to the last bit, and its
  random draws come from the caller's ``numpy.random.Generator`` (numba draws the same numbers
  as numpy from the same state, in the order of the loops).
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any, TypeVar, cast

import numba
import numpy as np
from numba.core import cgutils
from numba.extending import intrinsic
from numba.np.random.generator_core import next_uint32
from numpy.typing import NDArray

__all__ = ["beats", "generator_from", "generator_pointers", "integers_below", "kernel"]

F = TypeVar("F", bound=Callable[..., Any])


def kernel(fn: F) -> F:
    """Compile ``fn`` as a library kernel (see the module docstring for the options)."""
    compiled: Any
    try:
        compiled = numba.njit(cache=True, nogil=True, error_model="numpy")(fn)
    except RuntimeError:  # no file to cache next to (code typed in an interpreter)
        compiled = numba.njit(nogil=True, error_model="numpy")(fn)
    return cast(F, compiled)


@kernel
def beats(v: float, best: float) -> bool:
    """Whether ``v`` replaces ``best`` in a left-to-right scan for ``numpy.argmax``'s answer:
    the first maximum, NaN counting as larger than everything (the scan stops at a NaN)."""
    return v > best or (v != v and best == best)


# -- a Generator argument without numba's per-call unboxing --------------------------------
# numba unboxes a numpy.random.Generator argument on every call of a compiled function with
# three ctypes.cast calls and a Python-level typeof: 20-60 us, far more than a selection step.
# A step called once per bandit step instead passes the generator's pointers (a small array,
# typed in C by the dispatcher) and rebuilds numba's Generator value inside the compiled code
# with `generator_from`; the kernels it calls draw from the same bit generator state, so the
# numbers are the same.
_BitGeneratorType = numba.core.types.NumPyRandomBitGeneratorType("bit_generator")
_NEXT: dict[type, tuple[int, ...]] = {}  # per numpy bit generator class
_POINTERS: dict[int, tuple[Any, NDArray[np.uint64]]] = {}  # id -> (generator, pointers)
_POINTERS_KEPT = 16


def generator_pointers(gen: Any) -> NDArray[np.uint64]:
    """The pointers of ``gen`` (a ``numpy.random.Generator``) that :func:`generator_from` turns
    back into the generator inside compiled code: the state (twice), the ``next_uint64``,
    ``next_uint32`` and ``next_double`` functions, and the ``bitgen_t``, as a read-only
    ``uint64`` array. The arrays of the last few generators are kept (with the generators,
    so that the pointers stay valid and an ``id`` is never reused while kept)."""
    hit = _POINTERS.get(id(gen))
    if hit is not None and hit[0] is gen:
        return hit[1]
    bit_generator = gen.bit_generator
    ct = bit_generator.ctypes
    cls = type(bit_generator)
    # numpy's bit generators set the same static C functions in every instance of a class
    fns = _NEXT.get(cls)
    if fns is None:
        fns = tuple(
            ctypes.cast(f, ctypes.c_void_p).value or 0
            for f in (ct.next_uint64, ct.next_uint32, ct.next_double)
        )
        if cls.__module__.startswith("numpy.random"):
            _NEXT[cls] = fns
    state = ct.state_address
    out = np.array((state, state, *fns, ct.bit_generator.value or 0), dtype=np.uint64)
    out.setflags(write=False)
    if len(_POINTERS) >= _POINTERS_KEPT:
        _POINTERS.clear()
    _POINTERS[id(gen)] = (gen, out)
    return out


@intrinsic
def _generator_struct(typingctx: Any, pointers: Any) -> Any:
    """numba's ``Generator`` value from a tuple of the six pointers: the fields numba's own
    unboxing fills, with no Python object behind it (so it cannot be returned to Python)."""
    sig = numba.core.types.npy_rng(pointers)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        (tup,) = args
        bit_gen = cgutils.create_struct_proxy(_BitGeneratorType)(context, builder)
        bit_gen.state_address = builder.extract_value(tup, 0)
        bit_gen.state = builder.extract_value(tup, 1)
        bit_gen.fnptr_next_uint64 = builder.extract_value(tup, 2)
        bit_gen.fnptr_next_uint32 = builder.extract_value(tup, 3)
        bit_gen.fnptr_next_double = builder.extract_value(tup, 4)
        bit_gen.bit_generator = builder.extract_value(tup, 5)
        out = cgutils.create_struct_proxy(signature.return_type)(context, builder)
        out.bit_generator = bit_gen._getvalue()  # meminfo and parent stay NULL
        return out._getvalue()

    return sig, codegen


@kernel
def generator_from(pointers: Any) -> Any:
    """The generator of :func:`generator_pointers`'s array, inside compiled code."""
    p = pointers
    return _generator_struct((p[0], p[1], p[2], p[3], p[4], p[5]))  # type: ignore[call-arg]


_U32 = np.uint64(0xFFFFFFFF)


@kernel
def integers_below(k: int, rng: Any) -> int:
    """``rng.integers(0, k)`` for ``k >= 1``: the same draw as numpy (Lemire's method on one
    32-bit word per try for ``k <= 2**32``), several times faster than numba's version."""
    if k == 1:
        return 0  # numpy draws nothing
    if k > 4294967296:
        return rng.integers(0, k)
    bits = rng.bit_generator
    if k == 4294967296:
        return np.int64(next_uint32(bits))
    excl = np.uint64(k)
    m = np.uint64(next_uint32(bits)) * excl
    leftover = m & _U32
    if leftover < excl:
        threshold = (_U32 - np.uint64(k - 1)) % excl
        while leftover < threshold:
            m = np.uint64(next_uint32(bits)) * excl
            leftover = m & _U32
    return np.int64(m >> np.uint64(32))
