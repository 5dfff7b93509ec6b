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

- ``cache=True``: the machine code is written to disk and loaded by later processes, so only
  the first run on a machine pays the compilation (about a second per kernel). Not next to the
  module, numba's default, which for an installed package is site-packages: in a per-user
  cache directory, one folder per library version and CPU, or ``NUMBA_CACHE_DIR`` when set
  (:mod:`dpbandits.core.kernel_cache`; ``dpbandits cache`` shows and clears it). numba checks
  a cached kernel against its own source file only, but a kernel holds the code of the kernels
  it calls, from other modules too: so every kernel of the library is checked against the
  compiled part of all of the library's kernel modules (:func:`library_stamp`), and a change
  to any kernel or constant (an upgrade, a ``git pull`` in an editable install) recompiles
  them all instead of running stale code.
- ``error_model="numpy"``: a division by zero gives ``inf``/``nan`` as the numpy code it
  replaces would, instead of raising ``ZeroDivisionError``.
- No ``fastmath``: every kernel does the same IEEE operations in the same order as the numpy
  expressions documented next to it, so the results are identical to the last bit, and its
  random draws come from the caller's ``numpy.random.Generator`` (numba draws the same numbers
  as numpy from the same state, in the order of the loops).
"""

from __future__ import annotations

import functools
import hashlib
import re
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

import numba
import numpy as np

from dpbandits.core import compile_progress
from dpbandits.core.kernel_cache import kernel_cache_dir
from dpbandits.core.numba_compat import (
    add_compile_listener,
    borrowed,
    called_through,
    defer_blas_probe,
    float_bits,
    generator_at,
    install_cache_locators,
    name_cache_files_by_key,
    next_uint32,
    next_uint64,
    no_literal_calls,
)

__all__ = [
    "beats",
    "borrowed",
    "float_bits",
    "generator_address",
    "generator_at",
    "inline_kernel",
    "integers_below",
    "compiled_source",
    "kernel",
    "kernel_template",
    "library_stamp",
    "pairwise_sum",
    "popcount",
    "specialise",
]

F = TypeVar("F", bound=Callable[..., Any])


# -- the disk cache: a kernel is fresh only if every kernel module is unchanged
_ROOT = Path(__file__).resolve().parents[2]  # holds the packages dpbandits, agents, envs
_PACKAGES = ("dpbandits", "agents", "envs")
#: Kernel modules that do not import this one: this one, and the intrinsics it re-exports.
_ALWAYS = ("jit.py", "numba_compat.py")


def _kernel_modules() -> list[Path]:
    """The library's source files that may define kernels (those that use this module)."""
    files = []
    for package in _PACKAGES:
        for path in sorted((_ROOT / package).rglob("*.py")):
            text = path.read_bytes()
            if path.name in _ALWAYS or b"dpbandits.core.jit" in text:
                files.append(path)
    return files


def compiled_source(text: str) -> str:
    """The part of a module's source that compiled code can depend on: every top-level line
    except the bodies of classes and of functions that are not kernels (decorated with
    ``kernel`` or ``intrinsic``). Editing a method or a Python function then recompiles
    nothing; editing a kernel, a constant or an import recompiles every kernel."""
    kept: list[str] = []
    keep, decorators = True, []
    for line in text.splitlines():
        top = line[:1] not in ("", " ", "\t", "#", ")", "]", "}")
        if top and line.startswith("@"):
            decorators.append(line)
            continue
        if top:
            if line.startswith("class "):
                keep = False
            elif line.startswith(("def ", "async def ")):
                keep = any("kernel" in d or "intrinsic" in d for d in decorators)
            else:
                keep = True
            kept.extend(decorators if keep else [])
            decorators = []
        if keep:
            kept.append(line)
    return "\n".join(kept)


@functools.cache
def library_stamp() -> str:
    """A hash of the compiled part of every kernel module of the library (their names and
    :func:`compiled_source`): part of the cache key of every kernel (module docstring).
    Computed once per process (a few ms)."""
    digest = hashlib.sha256()
    for path in _kernel_modules():
        text = compiled_source(path.read_text(encoding="utf-8"))
        digest.update(path.relative_to(_ROOT).as_posix().encode() + b"\0" + text.encode())
    return digest.hexdigest()


#: Set on the Python function of every kernel (:func:`kernel`, :func:`inline_kernel`,
#: :func:`specialise`): only these are cached under :func:`library_stamp`, wherever they are
#: defined (a user's kernel calling the library's holds their code too).
_MARK = "_dpbandits_kernel"
#: Set on a specialisation (:func:`specialise`): the source files, outside the library, of the
#: functions bound into it, whose whole text is part of its cache key.
_SOURCES = "_dpbandits_sources"


def _file_digest(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _cache_stamp(py_func: Any) -> Any:
    """The part of a compiled function's cache key that numba's own (its source file) misses:
    :func:`library_stamp` for a kernel, with the text of the user files bound into a
    specialisation; ``None`` (numba's own locators) for any other compiled function."""
    if not getattr(py_func, _MARK, False):
        return None
    sources = getattr(py_func, _SOURCES, ())
    if not sources:
        return library_stamp()
    return (library_stamp(), *(_file_digest(p) for p in sources))


def _cache_directory() -> str:
    return str(kernel_cache_dir())


install_cache_locators(_cache_stamp, _cache_directory)
# a notice and a progress bar while the library's kernels compile (core/compile_progress.py)
compile_progress.install(lambda py_func: getattr(py_func, _MARK, False), add_compile_listener)
defer_blas_probe()


#: numba's options of every kernel (module docstring). No C-ABI wrapper (``cfunc``): numba
#: makes one beside every compiled function, for numba's first-class function values, which
#: the library does not use (a kernel passed as one raises ``ValueError``); generating and
#: compiling it took ~10 % of the compile time of a cold ``dpbandits shift``
#: (docs/performance.md, "Cold start").
_OPTIONS: dict[str, Any] = {"nogil": True, "error_model": "numpy", "no_cfunc_wrapper": True}


def _compile(fn: F, **options: Any) -> F:
    """``fn`` compiled with the library's options (module docstring) and ``options``, marked as
    a kernel (the cache key above). Other kernels call its twin, compiled without the wrapper
    through which Python calls it (:func:`~dpbandits.core.numba_compat.called_through`)."""
    setattr(fn, _MARK, True)
    compiled = _dispatcher(fn, {**_OPTIONS, **options})

    def callee() -> Any:
        # the same function under a name of its own (its own cache files), without the
        # wrapper Python calls go through: what other kernels call (called_through)
        twin = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__,
                                  fn.__closure__)  # fmt: skip
        twin.__qualname__ = f"{fn.__qualname__}__callee"
        twin.__module__ = fn.__module__
        for name in (_MARK, _SOURCES):
            if hasattr(fn, name):
                setattr(twin, name, getattr(fn, name))
        return _dispatcher(twin, {**_OPTIONS, **options, "no_cpython_wrapper": True})

    return cast(F, called_through(compiled, callee))


def _dispatcher(fn: Any, options: dict[str, Any]) -> Any:
    try:
        compiled = numba.njit(cache=True, **options)(fn)
        name_cache_files_by_key(compiled)
    except RuntimeError:  # no source file (code typed in an interpreter), no writable cache
        compiled = numba.njit(**options)(fn)
    # compiled per argument type, not per constant value of a call site (no_literal_calls)
    return no_literal_calls(compiled)


def kernel(fn: F) -> F:
    """Compile ``fn`` as a library kernel (see the module docstring for the options). LLVM
    inlines it into its callers where its cost model says so (the callee's code is linked into
    every caller, from the disk cache too)."""
    # forceinline stated, not inherited: numba gives a function first compiled inside an
    # inline kernel's compilation that kernel's setting otherwise (order-dependent caches)
    return _compile(fn, forceinline=False)


def inline_kernel(fn: F) -> F:
    """Compile ``fn`` as a kernel that is always inlined into every kernel calling it, for a
    few-nanosecond function whose call would cost as much as its work (a random sampler passes
    the bit generator's six words). Other options as :func:`kernel`.

    The inlining is LLVM's (numba's ``forceinline``: the function is compiled once per argument
    types, marked ``alwaysinline``, and linked into each caller, from the disk cache too), not
    numba's ``inline="always"``, which copies and types the function's code again at every call
    site, nested inline kernels included: that cost 2x the compile time of a loop on the
    skeleton (Thompson sampling's loops 24 -> 12 CPU-s, docs/performance.md "Cold start"),
    for the same machine code."""
    return _compile(fn, forceinline=True)


def kernel_template(fn: F) -> F:
    """Mark ``fn`` as a kernel written once and compiled per binding by :func:`specialise`
    (it is never compiled, or called, as it is): its source counts as a kernel's
    (:func:`compiled_source`)."""
    setattr(fn, _MARK, True)
    return fn


_SPECIALISED: dict[tuple[Any, ...], Any] = {}


def _binding(fn: Any) -> tuple[str, str, str | None]:
    """A bound function's short name for a file name, its full name, and its source file
    outside the library (``""`` when it has none: no cache is then safe). A bound numba type is
    named by its own name (which numba derives from all it is), shortened to a hash."""
    if isinstance(fn, numba.types.Type):
        digest = hashlib.sha256(str(fn).encode()).hexdigest()[:10]
        return f"type_{digest}", f"numba type {fn}", None
    py = getattr(fn, "py_func", fn)
    module = getattr(py, "__module__", None) or "?"
    qualname = getattr(py, "__qualname__", None) or repr(py)
    path = getattr(getattr(py, "__code__", None), "co_filename", "")
    short = re.sub(r"\W+", "_", f"{module.rsplit('.', 1)[-1]}_{qualname}")
    file = Path(path).resolve() if path and Path(path).is_file() else None
    inside = file is not None and any(file.is_relative_to(_ROOT / p) for p in _PACKAGES)
    outside = None if inside else (str(file) if file is not None else "")
    return short, f"{module}.{qualname}@{path}", outside


def specialise(template: Callable[..., Any], *, inline: bool = False, **bindings: Any) -> Any:
    """``template`` (a :func:`kernel_template`) compiled as a kernel with each global name in
    ``bindings`` bound to the given compiled function (or numba type, for an intrinsic that
    takes a type: ``numba_compat.load_borrowed``): one compiled function per binding,
    made once per process and cached on disk under a name of its own
    (``<template>__<bound function>_<hash>``), so that only the bindings a program uses are
    ever compiled, and the bound function is called directly (inlined by LLVM where it pays)
    at the speed of a call written in the template.

    numba can take a compiled function as an argument, but keys its disk cache for such a
    caller on the argument's identity in the process that compiled it: a cached caller is
    never found again (docs/performance.md). Here the binding is part of the function's name
    instead, and the cache key covers the bound code: the library's kernels through
    :func:`library_stamp`, a function from a user's file through that file's whole text. (A
    user's kernel calling kernels of *other* user files is keyed on its own file only, as
    numba keys every function.) A function with no source file (typed in an interpreter)
    gives a specialisation that is not cached.

    ``inline=True`` compiles it as an :func:`inline_kernel` (for a specialisation that is itself
    bound into another one, per replication: an agent's arm choice in the play loop).
    """
    key = (template, inline, *sorted(bindings.items(), key=lambda item: item[0]))
    compiled = _SPECIALISED.get(key)
    if compiled is not None:
        return compiled
    options: dict[str, Any] = {"forceinline": inline}  # stated either way (see kernel)
    names, fulls, sources = [], [], []
    for name in sorted(bindings):
        short, full, outside = _binding(bindings[name])
        names.append(short)
        fulls.append(f"{name}={full}")
        if outside is not None:
            sources.append(outside)
    digest = hashlib.sha256("|".join(fulls).encode()).hexdigest()[:10]
    namespace = dict(template.__globals__)
    namespace.update(bindings)
    clone = types.FunctionType(template.__code__, namespace, template.__name__,
                               template.__defaults__, template.__closure__)  # fmt: skip
    clone.__qualname__ = f"{template.__qualname__}__{'__'.join(names)}_{digest}"
    clone.__module__ = template.__module__
    clone.__doc__ = template.__doc__
    if "" in sources:  # a bound function without a file: its code cannot be keyed
        setattr(clone, _MARK, True)
        compiled = no_literal_calls(numba.njit(**{**_OPTIONS, **options})(clone))
    else:
        setattr(clone, _SOURCES, tuple(sources))
        compiled = _compile(clone, **options)
    _SPECIALISED[key] = compiled
    return compiled


_M1 = np.uint64(0x5555555555555555)
_M2 = np.uint64(0x3333333333333333)
_M4 = np.uint64(0x0F0F0F0F0F0F0F0F)
_H01 = np.uint64(0x0101010101010101)
_ONE, _TWO, _FOUR, _56 = (np.uint64(v) for v in (1, 2, 4, 56))


@inline_kernel
def popcount(x: Any) -> int:
    """The number of set bits of the uint64 ``x`` (the SWAR population count): random
    stopping's coin flips, the tree nodes a release of the binary mechanism sums."""
    x = x - ((x >> _ONE) & _M1)
    x = (x & _M2) + ((x >> _TWO) & _M2)
    x = (x + (x >> _FOUR)) & _M4
    return np.int64((x * _H01) >> _56)


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


# -- numpy's summation order: a sum that must give numpy's bits (np.sum, add.reduce along a
# contiguous axis) is this one
@kernel
def _block_sum(x: Any, start: int, n: int) -> float:
    """numpy's sum of at most 128 terms ``x[start:start + n]`` (see :func:`pairwise_sum`)."""
    if n < 8:
        res = -0.0  # keeps a sum of -0.0 terms -0.0, as numpy does
        for i in range(start, start + n):
            res += x[i]
        return res
    r0, r1, r2, r3 = x[start], x[start + 1], x[start + 2], x[start + 3]
    r4, r5, r6, r7 = x[start + 4], x[start + 5], x[start + 6], x[start + 7]
    end = start + n - n % 8
    i = start + 8
    while i < end:
        r0 += x[i]
        r1 += x[i + 1]
        r2 += x[i + 2]
        r3 += x[i + 3]
        r4 += x[i + 4]
        r5 += x[i + 5]
        r6 += x[i + 6]
        r7 += x[i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    for j in range(end, start + n):
        res += x[j]
    return res


@kernel
def pairwise_sum(x: Any, start: int, n: int) -> float:
    """``x[start] + ... + x[start + n - 1]`` in numpy's order (its pairwise summation, what
    ``numpy.add.reduce`` does along a contiguous axis, to the last bit: ``0.0 +`` this).

    Fewer than 8 terms: left to right. Up to 128: 8 interleaved accumulators
    ``r_j = x_j + x_{j+8} + ...`` over the largest multiple of 8 terms, combined as
    ``((r_0 + r_1) + (r_2 + r_3)) + ((r_4 + r_5) + (r_6 + r_7))``, then the rest left to
    right. More: the sum of the two halves, split at a multiple of 8 -- evaluated here with an
    explicit stack (numba cannot cache the callers of a recursive function)."""
    if n <= 128:
        return _block_sum(x, start, n)
    # frame d: the terms [starts[d], starts[d] + sizes[d]), its stage (0: left half next,
    # 1: right half next, 2: both done) and its left half's sum; each level halves the size,
    # so 64 frames hold any int64 n.
    starts = np.empty(64, dtype=np.int64)
    sizes = np.empty(64, dtype=np.int64)
    stages = np.zeros(64, dtype=np.int64)
    lefts = np.empty(64)
    starts[0], sizes[0] = start, n
    depth, res = 0, 0.0
    while depth >= 0:
        s, m = starts[depth], sizes[depth]
        if m <= 128:  # a leaf: its sum is the value returned to the frame below
            res = _block_sum(x, s, m)
            depth -= 1
            continue
        half = m // 2
        half -= half % 8
        stage = stages[depth]
        stages[depth] = stage + 1
        if stage == 2:
            res = lefts[depth] + res
            depth -= 1
            continue
        if stage == 1:
            lefts[depth] = res
        depth += 1
        starts[depth] = s if stage == 0 else s + half
        sizes[depth] = half if stage == 0 else m - half
        stages[depth] = 0
    return res


_U32 = np.uint64(0xFFFFFFFF)
_U64 = np.uint64(0xFFFFFFFFFFFFFFFF)
_SHIFT32 = np.uint64(32)


@kernel
def _product_high(x: Any, y: Any) -> Any:
    """The high 64 bits of the 128-bit product of the uint64 ``x`` and ``y`` (numba has no
    128-bit integer), from their 32-bit halves; the low 64 bits are ``x * y`` wrapped."""
    x_lo, x_hi = x & _U32, x >> _SHIFT32
    y_lo, y_hi = y & _U32, y >> _SHIFT32
    lo_lo = x_lo * y_lo
    hi_lo = x_hi * y_lo
    lo_hi = x_lo * y_hi
    # the middle column: each term < 2**32, their sum < 3 * 2**32 (no overflow)
    mid = (lo_lo >> _SHIFT32) + (hi_lo & _U32) + (lo_hi & _U32)
    return x_hi * y_hi + (hi_lo >> _SHIFT32) + (lo_hi >> _SHIFT32) + (mid >> _SHIFT32)


@kernel
def _lemire_64(k: int, rng: Any) -> int:
    """numpy's draw of ``rng.integers(0, k)`` for ``2**32 < k < 2**63`` (``random_bounded_uint64``
    without masking: Lemire's method on one 64-bit word per try, the high 64 bits of
    ``word * k`` kept unless the low 64 bits fall below ``2**64 mod k``)."""
    bits = rng.bit_generator
    excl = np.uint64(k)
    word = next_uint64(bits)
    leftover = word * excl  # the low 64 bits of the product (wraps)
    if leftover < excl:
        threshold = (_U64 - np.uint64(k - 1)) % excl  # 2**64 mod k
        while leftover < threshold:
            word = next_uint64(bits)
            leftover = word * excl
    return np.int64(_product_high(word, excl))


@kernel
def integers_below(k: int, rng: Any) -> int:
    """``rng.integers(0, k)`` for ``1 <= k < 2**63``: the same draw as numpy (Lemire's method on
    one 32-bit word per try for ``k <= 2**32``, on one 64-bit word above), several times faster
    than numba's version, and with no path that raises or allocates (such a path, even never
    taken, slows every call in a hot loop)."""
    if k == 1:
        return 0  # numpy draws nothing
    if k > 4294967296:
        return _lemire_64(k, rng)
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
