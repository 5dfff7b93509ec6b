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

from collections.abc import Callable
from typing import Any, TypeVar, cast

import numba
import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

__all__ = ["beats", "generator_address", "generator_at", "kernel"]

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


# -- a Generator by address: calling a kernel with a numpy Generator costs ~5 µs (numba types it
# in Python and unboxes it with three ctypes.cast calls), 10-50x a small kernel's own work; an
# integer costs nothing. A kernel called once per bandit step takes generator_address(rng) and
# rebuilds the Generator inside with generator_at (the same samplers, the same state: same bits).
def generator_address(rng: np.random.Generator) -> int:
    """The address of ``rng``'s ``bitgen_t`` (numpy's C interface of its bit generator), for
    :func:`generator_at`. ``rng`` must stay alive while a kernel uses the address."""
    return cast(int, rng.bit_generator.ctypes.bit_generator.value)


@intrinsic
def _generator_at(typingctx: Any, address: Any) -> Any:
    """Inside a kernel: the numba ``Generator`` drawing from the bit generator at ``address``
    (:func:`generator_address`). Its fields are read from numpy's ``bitgen_t`` (``state``,
    ``next_uint64``, ``next_uint32``, ``next_double``, in that order), exactly what numba's own
    unboxing of a Generator reads through ctypes; no reference to the Python object is kept."""
    if not isinstance(address, types.Integer):
        return None
    sig = types.NumPyRandomGeneratorType("rng")(address)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        uintp = context.get_value_type(types.uintp)
        words = builder.inttoptr(args[0], uintp.as_pointer())

        def word(i: int) -> Any:
            return builder.load(builder.gep(words, [ir.Constant(ir.IntType(32), i)]))

        bit_gen_type = types.NumPyRandomBitGeneratorType("bit_generator")
        bit_gen = cgutils.create_struct_proxy(bit_gen_type)(context, builder)
        bit_gen.state_address = word(0)
        bit_gen.state = word(0)
        bit_gen.fnptr_next_uint64 = word(1)
        bit_gen.fnptr_next_uint32 = word(2)
        bit_gen.fnptr_next_double = word(3)
        bit_gen.bit_generator = builder.ptrtoint(words, uintp)
        gen = cgutils.create_struct_proxy(signature.return_type)(context, builder)
        gen.bit_generator = bit_gen._getvalue()  # meminfo and parent stay null: not owned
        return gen._getvalue()

    return sig, codegen


#: ``generator_at(address)`` inside a kernel (see :func:`_generator_at`).
generator_at = cast(Callable[[int], Any], _generator_at)
