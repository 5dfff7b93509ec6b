"""Compiled per-step kernels: the one decorator every kernel of the library is compiled with.

A bandit step is a handful of arithmetic operations per replication; called through numpy it
costs the fixed price of every numpy call (about 1 µs each), whatever the number of
replications. The agents whose step is compiled (UCB, Thompson sampling, SW-UCB, D-UCB, Exp3)
write it once, as scalar code compiled by `numba <https://numba.pydata.org>`_, and use the same
compiled functions for the step-by-step protocol (``act``/``update``) and for the engine's
fused loop over a block of steps (``Agent.play``); the private agent's mechanisms (private
means, windowed quantiles, the built-in selectors) are compiled the same way. See
``docs/performance.md``.

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

__all__ = ["beats", "kernel"]

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
