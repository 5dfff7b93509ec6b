"""The one input policy of the library: how every public function checks its arguments.

- A *number* is a real ``int``/``float`` or a NumPy real scalar. ``bool``, ``str``, ``complex``
  and anything else are refused with a ``TypeError`` (``True`` is not 1 and ``"0.5"`` is not 0.5
  here: accepting them hides bugs in the caller).
- A value of the right type outside its range (``epsilon <= 0``, a NaN, a probability of 1.5)
  is refused with a ``ValueError``.
- An *array of scores* converts to float64 without loss: complex, boolean, string and object
  arrays are refused, and entries must be finite where the function says so.
- Every message names the parameter, the value and the rule, e.g.
  ``epsilon must be finite and > 0, got -1.0``.

Mechanisms that add noise of scale ``c / epsilon`` also bound that scale with
:func:`noise_scale`, so that a tiny but positive ``epsilon`` (``5e-324``) is refused up-front
with the smallest accepted value, instead of producing ``inf`` and ``NaN`` later.

- A *flag* is a ``bool`` (or NumPy bool): ``"no"`` and ``0`` are refused (:func:`flag`).
- An ``rng`` is a :class:`numpy.random.Generator`, a seed (a non-negative int, not ``bool``), a
  ``SeedSequence``/``BitGenerator`` or ``None`` (:func:`generator`).
- Per-run state that would not fit in this machine's memory is refused up-front with the sizes
  that asked for it (:func:`memory`), not with a ``MemoryError`` or a swap storm later.
"""

from __future__ import annotations

import inspect
import math
import numbers
import os
from collections.abc import Collection, Mapping
from collections.abc import Set as AbstractSet
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "MAX_NOISE_SCALE",
    "MemoryWarning",
    "ParameterError",
    "ParameterTypeError",
    "available_memory",
    "bind",
    "bounds",
    "flag",
    "format_bytes",
    "generator",
    "integer",
    "memory",
    "noise_scale",
    "number",
    "one_of",
    "physical_memory",
    "positive_int",
    "positive_number",
    "probability",
    "pulls",
    "real_array",
    "size",
    "step_actions",
    "step_rewards",
    "unit_interval",
]

#: Largest noise scale a mechanism accepts. Sums of a few thousand Laplace or exponential draws
#: of this scale (each below ~750 scales in magnitude) stay far below the float64 maximum
#: (1.8e308), so releases, means and selections computed from them are finite.
MAX_NOISE_SCALE = 1e300


class ParameterError(ValueError):
    """A ``ValueError`` about one named parameter: ``param`` is its name, so that a caller
    (the config layer) can point at the key that set it without reading the message."""

    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


class ParameterTypeError(TypeError):
    """A ``TypeError`` about one named parameter (``param``, as :class:`ParameterError`)."""

    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


def _is_real(value: Any) -> bool:
    return (
        isinstance(value, numbers.Real)
        and not isinstance(value, (bool, np.bool_))
        and not isinstance(value, (str, bytes))
    )


def number(value: Any, name: str, *, finite: bool = True) -> float:
    """``value`` as a float: a real number (not bool/str/complex), finite unless told."""
    if not _is_real(value):
        raise ParameterTypeError(
            f"{name} must be a real number, got {type(value).__name__} {value!r}", name
        )
    v = float(value)
    if finite and not math.isfinite(v):
        raise ParameterError(f"{name} must be finite, got {v!r}", name)
    if math.isnan(v):
        raise ParameterError(f"{name} must not be NaN", name)
    return v


def positive_number(value: Any, name: str, *, allow_inf: bool = False) -> float:
    """``value`` as a float ``> 0`` (finite unless ``allow_inf``)."""
    if not _is_real(value):
        raise ParameterTypeError(
            f"{name} must be a real number, got {type(value).__name__} {value!r}", name
        )
    v = float(value)
    if not (v > 0) or (not allow_inf and math.isinf(v)):  # NaN fails ``v > 0``
        rule = "> 0" if allow_inf else "finite and > 0"
        raise ParameterError(f"{name} must be {rule}, got {v!r}", name)
    return v


def integer(
    value: Any, name: str, *, minimum: int | None = None, allow_integral_float: bool = False
) -> int:
    """``value`` as an int: a Python or NumPy integer, not bool. Floats are refused unless
    ``allow_integral_float`` (then ``3e4`` is 30000 and ``2.5`` is a ``ValueError``)."""
    if allow_integral_float and _is_real(value) and not isinstance(value, (int, np.integer)):
        f = float(value)
        if not (math.isfinite(f) and f.is_integer()):
            raise ParameterError(f"{name} must be an integer, got {value!r}", name)
        value = int(f)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ParameterTypeError(
            f"{name} must be an integer, got {type(value).__name__} {value!r}", name
        )
    v = int(value)
    if minimum is not None and v < minimum:
        raise ParameterError(f"{name} must be >= {minimum}, got {v}", name)
    return v


def positive_int(value: Any, name: str) -> int:
    """``value`` as an int ``>= 1``."""
    return integer(value, name, minimum=1)


def _within_unit(value: Any, name: str, *, low_open: bool, high_open: bool) -> float:
    """``value`` as a float in the unit interval, each end open or closed as given."""
    v = number(value, name)
    above = 0.0 < v if low_open else 0.0 <= v
    below = v < 1.0 if high_open else v <= 1.0
    if not (above and below):
        interval = f"{'(' if low_open else '['}0, 1{')' if high_open else ']'}"
        raise ParameterError(f"{name} must lie in {interval}, got {v!r}", name)
    return v


def probability(value: Any, name: str, *, open_interval: bool = True) -> float:
    """``value`` as a float in ``(0, 1)`` (or ``(0, 1]`` when ``open_interval=False``)."""
    return _within_unit(value, name, low_open=True, high_open=open_interval)


def unit_interval(value: Any, name: str) -> float:
    """``value`` as a float in the closed interval ``[0, 1]`` (a quantile level, a cut-off)."""
    return _within_unit(value, name, low_open=False, high_open=False)


def real_array(x: Any, name: str, *, finite: bool = True) -> NDArray[np.float64]:
    """``x`` as a float64 array; refuses complex, boolean, string and non-numeric input, and
    (when ``finite``) NaN and infinite entries, naming the first bad index."""
    try:
        a = np.asarray(x)
    except (TypeError, ValueError):
        # numpy's message ("setting an array element with a sequence ...") names neither the
        # argument nor the rule; a nested sequence of unequal lengths is the usual cause
        raise TypeError(
            f"{name} must be an array of real numbers; got a ragged nested sequence (rows of "
            f"unequal lengths) or a non-numeric object: {type(x).__name__}"
        ) from None
    kind = a.dtype.kind
    if kind == "O":
        try:
            if not all(_is_real(v) for v in a.ravel()):
                raise TypeError
            a = a.astype(np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"{name} must contain only real numbers") from None
    elif kind not in "iuf":
        what = {"c": "complex", "b": "boolean", "U": "string", "S": "bytes"}.get(kind, a.dtype)
        raise TypeError(f"{name} must be an array of real numbers, got a {what} array")
    out = np.asarray(a, dtype=np.float64)
    if finite and out.size and not np.isfinite(out).all():
        bad = np.argwhere(~np.isfinite(out))[0]
        where = ", ".join(str(int(i)) for i in bad)
        raise ValueError(f"{name} must be finite; {name}[{where}] = {out[tuple(bad)]!r}")
    return out


def bind(
    signature: inspect.Signature, args: tuple[Any, ...], kwargs: Mapping[str, Any], caller: str
) -> inspect.BoundArguments:
    """``signature.bind(*args, **kwargs)`` for a constructor made from a signature (an agent
    :func:`~agents.base.variant`, an environment built from its schedule function): a call it
    refuses raises the ``TypeError`` Python raises for a written function of that signature,
    named ``caller`` (``TwoArmedShift() takes from 0 to 7 positional arguments but 8 were
    given``), not :mod:`inspect`'s own wording (``too many positional arguments``)."""
    try:
        return signature.bind(*args, **kwargs)
    except TypeError as exc:
        raise TypeError(f"{caller}() {_call_error(str(exc), signature, len(args))}") from None


def _call_error(text: str, signature: inspect.Signature, n_args: int) -> str:
    """:meth:`inspect.Signature.bind`'s refusal ``text`` of a call with ``n_args`` positional
    arguments, worded as Python words it for a written function of that ``signature``."""
    if text == "too many positional arguments":
        kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        positional = [p for p in signature.parameters.values() if p.kind in kinds]
        most = len(positional)
        least = sum(p.default is p.empty for p in positional)
        span = str(most) if least == most else f"from {least} to {most}"
        return f"takes {span} positional argument{'s' * (most != 1)} but {n_args} were given"
    if text.startswith("multiple values"):
        return f"got {text}"
    return text


def flag(value: Any, name: str) -> bool:
    """``value`` as a bool: only ``True``/``False`` (or NumPy bools); ``0``, ``"no"`` are refused
    (``bool("no")`` is ``True``: accepting it would silently flip the option)."""
    if not isinstance(value, (bool, np.bool_)):
        raise ParameterTypeError(
            f"{name} must be True or False, got {type(value).__name__} {value!r}", name
        )
    return bool(value)


def one_of(value: Any, choices: Collection[Any], name: str) -> Any:
    """``value`` when it is one of ``choices`` (a sequence or a mapping, listed in their order;
    a set, listed sorted); else a :class:`ParameterError` (a ``ValueError``) naming ``name``, the
    choices and the value, e.g. ``algorithm must be one of ('sat', 'avg'), got 'max'``."""
    if isinstance(choices, AbstractSet):
        options = tuple(sorted(choices, key=repr))
    else:
        options = tuple(choices)
    if value not in options:
        raise ParameterError(f"{name} must be one of {options}, got {value!r}", name)
    return value


def generator(rng: Any, name: str = "rng") -> np.random.Generator:
    """``rng`` as a :class:`numpy.random.Generator` (returned unchanged when it is one): a seed
    (non-negative int, not bool), a ``SeedSequence``/``BitGenerator``, or ``None``."""
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (bool, np.bool_)):
        raise TypeError(f"{name} must be a numpy Generator, a non-negative int seed or None, "
                        f"got bool {rng!r}")  # fmt: skip
    try:
        return np.random.default_rng(rng)
    except (TypeError, ValueError):
        raise TypeError(
            f"{name} must be a numpy Generator, a non-negative int seed (or a sequence of them), "
            f"a SeedSequence or None, got {type(rng).__name__} {rng!r}"
        ) from None


def physical_memory() -> int:
    """This machine's physical memory in bytes (2^40 where the system does not say)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, OSError, ValueError):  # not POSIX: assume a large machine
        return 1 << 40


def available_memory() -> int:
    """The memory available now without swapping (``MemAvailable`` of ``/proc/meminfo``), in
    bytes; :func:`physical_memory` where the system does not say."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return physical_memory()


class MemoryWarning(UserWarning):
    """A run will take much of this machine's memory: it starts, and the warning says how much
    it needs and which option lowers it (the command line shows it as one line)."""


def format_bytes(n: float) -> str:
    """``n`` bytes for a message: ``"3.6 GiB"`` (three significant digits, binary units)."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:.3g} {unit}"
        n /= 1024
    return f"{n:.3g} PiB"  # pragma: no cover


def memory(n_values: int, what: str, itemsize: int = 8) -> None:
    """Refuse state of ``n_values`` items of ``itemsize`` bytes that exceeds this machine's
    physical memory, with a ``ValueError`` saying ``what`` asked for it (e.g.
    ``"n_runs * n_arms * window = 2 * 2 * 2**40"``), before anything is allocated."""
    need = int(n_values) * int(itemsize)
    have = physical_memory()
    if need > have:
        raise ValueError(
            f"{what} would need {format_bytes(need)} of memory, more than this machine has "
            f"({format_bytes(have)}); use smaller sizes"
        )


def noise_scale(numerator: float, epsilon: float, what: str, name: str = "epsilon") -> float:
    """``numerator / epsilon``, the scale of a mechanism's noise, or a ``ValueError`` naming the
    smallest ``epsilon`` that keeps the scale at most :data:`MAX_NOISE_SCALE`."""
    scale = numerator / epsilon if epsilon > 0 else math.inf
    if not scale <= MAX_NOISE_SCALE:
        smallest = numerator / MAX_NOISE_SCALE
        raise ParameterError(
            f"{name}={epsilon!r} is too small for {what}: the noise scale {numerator:g}/{name} "
            f"would exceed {MAX_NOISE_SCALE:g} and the released values would overflow; use "
            f"{name} >= {smallest:.3g}",
            name,
        )
    return scale


def bounds(lo: Any, hi: Any) -> tuple[float, float]:
    """``(lo, hi)`` as floats with ``lo < hi``, both finite, and ``hi - lo`` finite."""
    lo_f, hi_f = number(lo, "lo", finite=False), number(hi, "hi", finite=False)
    if not (math.isfinite(lo_f) and math.isfinite(hi_f)):
        raise ValueError(f"lo and hi must be finite, got lo={lo!r}, hi={hi!r}")
    if not lo_f < hi_f:
        raise ValueError(f"lo must be < hi, got lo={lo!r}, hi={hi!r}")
    if not math.isfinite(hi_f - lo_f):
        raise ValueError(f"hi - lo must be finite, got lo={lo!r}, hi={hi!r}")
    return lo_f, hi_f


def size(value: Any) -> tuple[int, ...]:
    """A NumPy-style ``size`` argument: an int or a tuple of non-negative ints."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        value = (int(value),)
    try:
        shape = tuple(integer(s, "size") for s in value)
    except TypeError:
        raise TypeError(f"size must be an int or a tuple of ints, got {value!r}") from None
    if any(s < 0 for s in shape):
        raise ValueError(f"size must have non-negative entries, got {value!r}")
    return shape


_FLOAT64 = np.dtype(np.float64)
_FINITE_WEIGHTS: dict[int, NDArray[np.float64]] = {}
_DOT_LIMIT = 4096  # below this length OpenBLAS computes a dot on one thread


def step_rewards(rewards: ArrayLike, n_runs: int) -> NDArray[np.float64]:
    """One step's rewards, one per replication: a real (not bool/str/complex), finite float64
    array of shape ``(n_runs,)``. The per-step hot path of the agents: one reduction when the
    input is already a finite float64 array."""
    r = rewards
    if type(r) is not np.ndarray or r.dtype is not _FLOAT64:
        r = np.asarray(r)
        if r.dtype.kind not in "iuf":
            raise TypeError(f"rewards must be real numbers, got dtype {r.dtype}")
        r = r.astype(np.float64)
    if r.shape != (n_runs,):
        raise ValueError(f"rewards must have shape ({n_runs},), got {r.shape}")
    if n_runs < _DOT_LIMIT:
        # r . (2^-600, ..., 2^-600) is finite exactly when every r_i is: the terms stay below
        # 1e128, so the sum cannot overflow (no warning), and a NaN or an inf carries through.
        # One BLAS dot is the cheapest test numpy offers for this per-step path.
        w = _FINITE_WEIGHTS.get(n_runs)
        if w is None:
            w = _FINITE_WEIGHTS[n_runs] = np.full(n_runs, 2.0**-600)
        finite = math.isfinite(r.dot(w))
    else:  # OpenBLAS threads long dots, 1000x slower on a busy machine: two ufunc reductions
        finite = math.isfinite(np.maximum.reduce(r)) and math.isfinite(np.minimum.reduce(r))
    if not finite:
        raise ValueError(f"rewards must be finite (no NaN or inf), got {r}")
    return r


def step_actions(actions: ArrayLike, n_runs: int, n_arms: int) -> NDArray[np.int64]:
    """One step's actions, one per replication: integers (not bool) in ``[0, n_arms)``, shape
    ``(n_runs,)``, as int64."""
    a = np.asarray(actions)
    if a.shape != (n_runs,):
        raise ValueError(f"actions must have shape ({n_runs},), got {a.shape}")
    if a.dtype != np.int64:
        if a.dtype.kind not in "iu":
            raise TypeError(f"actions must be integers, got dtype {a.dtype}")
        a = a.astype(np.int64)
    # one reduction checks both ends: negative actions become huge as unsigned
    if n_runs and np.maximum.reduce(a.view(np.uint64)) >= n_arms:
        raise ValueError(f"actions must be in [0, {n_arms - 1}], got {a}")
    return a


def pulls(
    actions: ArrayLike, rewards: ArrayLike, n_runs: int, n_arms: int, lo: float, hi: float
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Validate one step of a bandit (one pull per replication); return actions and the rewards
    clipped to ``[lo, hi]`` (rewards real and not NaN; +-inf are clipped). Used by the per-step
    hot paths of the private means and the windowed sensitivities, so it uses as few numpy calls
    as it can."""
    a = step_actions(actions, n_runs, n_arms)
    r = np.asarray(rewards)
    if r.dtype != np.float64:
        if r.dtype.kind not in "iuf":  # bool, str, complex, object: not rewards
            raise TypeError(f"rewards must be real numbers, got dtype {r.dtype}")
        r = r.astype(np.float64)
    if r.shape != (n_runs,):
        raise ValueError(f"rewards must have shape ({n_runs},), got {r.shape}")
    x = np.minimum(np.maximum(r, lo), hi)  # clip to [lo, hi] (+-inf too); NaN stays NaN
    # x * 0 is 0 for the (now finite) rewards and NaN for NaN: a sum that cannot overflow
    if math.isnan(np.add.reduce(x * 0.0)):
        raise ValueError(f"rewards must not be NaN, got {r}")
    return a, x
