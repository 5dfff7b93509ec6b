"""numpy's standard normal, exponential and gamma samplers as kernels: the same draws, faster;
and a standard Laplace sampler built on the exponential.

numba's ``Generator.standard_normal`` is a line-by-line copy of numpy's ziggurat (Marsaglia &
Tsang 2000), and so draws numpy's numbers -- but its ``if sign: x = -x`` compiles to a branch
that the processor mispredicts on every other draw: 14 ns per normal where the draw of the
64-bit word it is made of costs 5.5 ns (measured on the 2-core test machine). The kernels
below take the same word, the same tables and the same operations, so they return the same
numbers bit for bit, but apply the sign as a multiplication by ``+-1.0`` (exact: it flips the
sign bit, as negation does) and convert the mantissa with a signed conversion (exact: it is
below ``2**53``): 6.5 ns per normal. The gamma sampler is numpy's (Marsaglia & Tsang's
squeeze method for a shape above 1) on these normals; :func:`gamma_with` takes its two
constants, so that a caller drawing many times with the same shape computes them once.

The samplers are inlined into the kernels that call them (``dpbandits.core.jit.inline_kernel``):
a call would cost as much as a draw. They take the Generator's bit generator, ``bits =
rng.bit_generator`` inside a kernel: a numba Generator carries a reference count, an increment
and a decrement per call of a kernel that is not inlined; the bit generator is plain pointers.
The rare branches (about 1 % of the draws) are numba's code, in kernels of their own. The
tables are numpy's ``ziggurat_constants.h``, as numba ships them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpbandits.core.jit import generator_at, inline_kernel, kernel
from dpbandits.core.numba_compat import (
    next_double,
    next_uint64,
    random_standard_exponential,
    random_standard_gamma,
    random_standard_normal,
)
from dpbandits.core.numba_compat import ziggurat as zig

__all__ = [
    "fill_standard_laplace",
    "fill_standard_normal",
    "gamma_constants",
    "gamma_with",
    "standard_exponential",
    "standard_gamma",
    "standard_laplace",
    "standard_normal",
]

# numpy's tables; the integer thresholds as int64 (all below 2**53) for signed comparisons
_KI = np.asarray(zig.ki_double, dtype=np.int64)
_WI = np.asarray(zig.wi_double, dtype=np.float64)
_FI = np.asarray(zig.fi_double, dtype=np.float64)
_KE = np.asarray(zig.ke_double, dtype=np.int64)
_WE = np.asarray(zig.we_double, dtype=np.float64)
_FE = np.asarray(zig.fe_double, dtype=np.float64)
_NOR_R = float(zig.ziggurat_nor_r)
_NOR_INV_R = float(zig.ziggurat_nor_inv_r)
_EXP_R = float(zig.ziggurat_exp_r)
_SIGN = np.array([1.0, -1.0])  # the sign bit of the word as a factor: no branch to mispredict
_MANTISSA = np.uint64(0x000FFFFFFFFFFFFF)
_BYTE = np.uint64(0xFF)


@kernel
def _normal_rare(bits: Any, rabs: int, idx: int, x: float) -> float:
    """The ziggurat's other 0.7 %: the tail (layer 0) or the wedge test, else a fresh draw."""
    if idx == 0:
        while True:
            xx = -_NOR_INV_R * np.log1p(-next_double(bits))
            yy = -np.log1p(-next_double(bits))
            if yy + yy > xx * xx:
                if (rabs >> 8) & 0x1:
                    return -(_NOR_R + xx)
                return _NOR_R + xx
    if ((_FI[idx - 1] - _FI[idx]) * next_double(bits) + _FI[idx]) < np.exp(-0.5 * x * x):
        return x
    return random_standard_normal(bits)  # rejected: numpy starts over with a new word


@inline_kernel
def standard_normal(bits: Any) -> float:
    """``rng.standard_normal()``: numpy's number, from the same draws (module docstring)."""
    r = next_uint64(bits)
    idx = np.int64(r & _BYTE)
    r >>= np.uint64(8)
    rabs = np.int64((r >> np.uint64(1)) & _MANTISSA)
    x = rabs * _WI[idx]
    x *= _SIGN[np.int64(r & np.uint64(1))]
    if rabs < _KI[idx]:
        return x
    return _normal_rare(bits, rabs, idx, x)


@kernel
def _exponential_rare(bits: Any, idx: int, x: float) -> float:
    if idx == 0:
        return _EXP_R - np.log1p(-next_double(bits))
    if (_FE[idx - 1] - _FE[idx]) * next_double(bits) + _FE[idx] < np.exp(-x):
        return x
    return random_standard_exponential(bits)  # rejected: numpy starts over with a new word


@inline_kernel
def _exponential_from(word: Any, bits: Any) -> float:
    """numpy's ziggurat exponential from the 64-bit ``word`` (its low three bits unused), and
    more words of ``bits`` in the rare cases."""
    ri = word >> np.uint64(3)
    idx = np.int64(ri & _BYTE)
    rr = np.int64(ri >> np.uint64(8))
    x = rr * _WE[idx]
    if rr < _KE[idx]:
        return x
    return _exponential_rare(bits, idx, x)


@inline_kernel
def standard_exponential(bits: Any) -> float:
    """``rng.standard_exponential()``: numpy's number, from the same draws."""
    return _exponential_from(next_uint64(bits), bits)


@inline_kernel
def standard_laplace(bits: Any) -> float:
    """A standard Laplace variable ``S E`` (density ``exp(-|x|) / 2``): ``E`` numpy's ziggurat
    exponential of a 64-bit word, and its random sign ``S`` that word's lowest bit, which the
    ziggurat leaves unused (so ``S`` is independent of ``E``, also when the ziggurat rejects
    and draws more words). One word per draw: about twice as fast as
    ``rng.laplace()`` and four times ``rng.standard_exponential() * sign`` in numpy."""
    word = next_uint64(bits)
    return _exponential_from(word, bits) * _SIGN[np.int64(word & np.uint64(1))]


@kernel
def gamma_constants(shape: float) -> tuple[float, float]:
    """Marsaglia & Tsang's ``b = shape - 1/3`` and ``c = 1 / sqrt(9 b)`` (numpy's arithmetic)."""
    b = shape - 1.0 / 3.0
    return b, 1.0 / math.sqrt(9.0 * b)


@inline_kernel
def gamma_with(bits: Any, b: float, c: float) -> float:
    """``rng.standard_gamma(shape)`` for ``shape > 1``, given ``(b, c) =
    gamma_constants(shape)``: numpy's loop (Marsaglia & Tsang's squeeze method), line by
    line."""
    while True:
        while True:
            x = standard_normal(bits)
            v = 1.0 + c * x
            if not v <= 0.0:  # numpy's ``while (V <= 0.0)``
                break
        v = v * v * v
        u = next_double(bits)
        if u < 1.0 - 0.0331 * (x * x) * (x * x):
            return b * v
        if np.log(u) < 0.5 * x * x + b * (1.0 - v + np.log(v)):
            return b * v


@kernel
def standard_gamma(bits: Any, shape: float) -> float:
    """``rng.standard_gamma(shape)`` (``shape >= 0``): numpy's number, from the same draws."""
    if shape == 1.0:
        return standard_exponential(bits)
    if shape > 1.0:
        b, c = gamma_constants(shape)
        return gamma_with(bits, b, c)
    return random_standard_gamma(bits, shape)  # 0 <= shape < 1: numba's copy of numpy's


@kernel
def fill_standard_normal(address: int, out: Any) -> None:
    """Fill the C-contiguous ``out`` in order with ``standard_normal`` draws of the Generator at
    ``address`` (``dpbandits.core.jit.generator_address``): ``rng.standard_normal(out.shape)``."""
    bits = generator_at(address).bit_generator
    flat = out.reshape(out.size)
    for i in range(flat.size):
        flat[i] = standard_normal(bits)


@kernel
def fill_standard_laplace(address: int, out: Any) -> None:
    """Fill the C-contiguous ``out`` in order with :func:`standard_laplace` draws of the
    Generator at ``address`` (``dpbandits.core.jit.generator_address``)."""
    bits = generator_at(address).bit_generator
    flat = out.reshape(out.size)
    for i in range(flat.size):
        flat[i] = standard_laplace(bits)
