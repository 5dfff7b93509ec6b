"""How much memory a run of the engine needs, estimated and checked before any work.

:func:`dpbandits.experiments.engine.run` holds, at its peak (App. H's experiment at any size):

- in the calling process: the environment built to probe it (its ``(T, K)`` tables: means, sds,
  expected rewards, regret, best arm), the results of every agent (curves at the recorded
  steps, traces of the private agents, per-run values; twice while the chunks are joined) and
  one pending task per (agent, chunk of ``chunk_size`` runs);
- per running task (a worker process, or the calling process with ``n_jobs=1``): its own
  environment, every action of its chunk (``(T, chunk)`` int8 for up to 127 arms), the agent's
  state for the chunk and the task's output.

:func:`memory_estimate` adds these up from the sizes a user passes (runs, horizon, arms, agents,
strides, workers); :func:`check_memory` refuses a run that cannot fit in this machine's memory
with a ``ValueError`` that gives the sizes, the estimate by part and the option that lowers the
largest part (with the largest value that fits), runs it without the traces (summary-only) with
a :class:`~dpbandits.core.checks.MemoryWarning` when only the traces do not fit, and warns when
the run takes more than :data:`WARN_BYTES` or more than the memory available now. The names in
the messages are the engine's arguments; the command line puts its own options there with
:func:`option_names`. docs/cli.md ("What every command guarantees") and docs/performance.md.
"""

from __future__ import annotations

import contextlib
import contextvars
import copy
import math
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from dpbandits.core.checks import (
    MemoryWarning,
    available_memory,
    format_bytes,
    physical_memory,
)

__all__ = [
    "API_NAMES",
    "ENV_TABLES",
    "TASK_BYTES",
    "WARN_BYTES",
    "MemoryEstimate",
    "RunSizes",
    "agent_state_bytes",
    "state_bytes",
    "check_memory",
    "memory_estimate",
    "option_names",
    "record_points",
]

#: ``(T, K)`` float64 tables one environment holds at its peak: the project's environments keep
#: means, sds, expected rewards and regret (4) and build them with temporaries; measured with
#: ``tracemalloc``: 4.3-5.3 for the two-armed shift, piecewise and drifting bandits.
ENV_TABLES = 5
#: Bytes of one pending (agent, chunk) task in the calling process: the task, its copy of the
#: agent, and its future and work item in the process pool (measured: about 1 + 1.8 KB).
TASK_BYTES = 3 * 1024
#: Floats of a vector environment's reward tape and its block buffers (``envs.core``).
TAPE_FLOATS = 1 << 18
#: A run that needs more than this (or more than the memory available when it starts) is
#: announced with a :class:`~dpbandits.core.checks.MemoryWarning` before it starts.
WARN_BYTES = 2 * 2**30

#: What the messages call each size: the engine's arguments. ``None``: no option sets it.
API_NAMES: dict[str, str | None] = {
    "n_runs": "n_runs",
    "horizon": "horizon",
    "n_arms": "the number of arms",
    "workers": "n_jobs",
    "record_stride": "record_stride",
    "trace": "trace=False",
    "chunk_size": "chunk_size",
}
_names: contextvars.ContextVar[Mapping[str, str | None]] = contextvars.ContextVar(
    "dpbandits_memory_names", default=API_NAMES
)


@contextlib.contextmanager
def option_names(names: Mapping[str, str | None]) -> Iterator[None]:
    """Within the block, messages of :func:`check_memory` call the sizes by ``names`` (e.g.
    ``{"n_runs": "--runs", "horizon": "--horizon"}``; the other sizes keep their
    :data:`API_NAMES`): the command line's options instead of the engine's arguments."""
    token = _names.set({**API_NAMES, **names})
    try:
        yield
    finally:
        _names.reset(token)


def record_points(horizon: int, stride: int | None = None) -> int:
    """How many steps the engine records for a curve: every ``stride`` steps (default
    ``horizon // 1000``, at least 1) and the last one."""
    stride = max(1, horizon // 1000) if stride is None else stride
    return horizon // stride + (1 if horizon % stride else 0)


@dataclass(frozen=True)
class RunSizes:
    """The sizes of a run that decide its memory (see the module docstring)."""

    n_runs: int
    horizon: int
    n_arms: int = 2
    n_agents: int = 1
    #: agents that record traces of their private means and sensitivities (private agents)
    n_traced: int = 0
    record_stride: int | None = None
    trace: bool = True
    trace_stride: int | None = None
    chunk_size: int = 100
    #: processes that run tasks on this machine at once (0: a remote executor runs them)
    workers: int = 1
    keep_actions: bool = False
    n_segments: int = 1
    #: bytes of an agent's state per run (:func:`agent_state_bytes`), the largest agent's
    agent_bytes_per_run: int = 0


@dataclass(frozen=True)
class MemoryEstimate:
    """Bytes a run needs at its peak, by part (:func:`memory_estimate`)."""

    sizes: RunSizes
    parts: dict[str, int]

    @property
    def total(self) -> int:
        return sum(self.parts.values())

    def describe(self) -> str:
        """The parts, largest first, those above 1% of the total: ``"the actions of 2
        running tasks 3.73 GiB, the environment's tables 1.79 GiB"``."""
        big = sorted(((b, p) for p, b in self.parts.items() if b >= self.total / 100),
                     reverse=True)  # fmt: skip
        return ", ".join(f"{part} {format_bytes(b)}" for b, part in big)


def memory_estimate(sizes: RunSizes) -> MemoryEstimate:
    """The memory a run of the engine needs at its peak (see the module docstring)."""
    s = sizes
    T, R, K = s.horizon, s.n_runs, s.n_arms
    n = min(s.chunk_size, R)  # runs of one task
    n_tasks = s.n_agents * math.ceil(R / s.chunk_size)
    running = min(s.workers, n_tasks)
    rec = record_points(T, s.record_stride)
    traced = s.n_traced if s.trace else 0
    tr = record_points(T, s.trace_stride or s.record_stride) if traced else 0
    itemsize = 1 if K <= 127 else (2 if K <= 32767 else 8)

    def per_agent(runs: int) -> int:  # an agent's results: curves, per-run values, pull counts
        return 8 * runs * (2 * rec + 4 + s.n_segments + K) + 8 * rec * K

    def traces(runs: int) -> int:  # private means and sensitivities at the trace steps
        return 2 * 8 * tr * runs * K

    env = 8 * T * (ENV_TABLES * K + 1)
    parts = {
        "the environment's tables": (1 + running) * env,
        f"the actions of {running} running task(s)": running * T * n * itemsize,
        "the results": 2 * s.n_agents * per_agent(R) + 2 * running * per_agent(n),
        "the traces": 2 * traced * traces(R) + 2 * running * traces(n),
        "the pending tasks": n_tasks * TASK_BYTES,
        "the agents' state and reward tapes": running * (
            n * s.agent_bytes_per_run + 8 * max(TAPE_FLOATS, 4 * K * n)
        ),
    }  # fmt: skip
    if s.keep_actions:
        parts["the actions kept"] = 2 * s.n_agents * T * R * itemsize
    return MemoryEstimate(s, parts)


#: The sizes that lower each part, in the order the advice names them.
_KNOBS: dict[str, tuple[str, ...]] = {
    "the actions kept": ("horizon", "n_runs"),
    "the environment's tables": ("horizon", "n_arms"),
    "the actions": ("horizon", "workers", "chunk_size"),
    "the results": ("n_runs", "record_stride"),
    "the traces": ("trace", "n_runs"),
    "the pending tasks": ("n_runs",),
    "the agents' state": ("workers", "n_arms"),
}


def _largest_fitting(sizes: RunSizes, knob: str, limit: int) -> int | None:
    """The largest value of ``knob`` (a size that grows the estimate) below its current one
    with which the run fits in ``limit`` bytes; ``None`` if none does."""
    current = getattr(sizes, knob)

    def fits(v: int) -> bool:
        changes: dict[str, Any] = {knob: v}
        return memory_estimate(replace(sizes, **changes)).total <= limit

    if not isinstance(current, int) or current <= 1 or not fits(1):
        return None
    lo, hi = 1, current  # fits(lo), not fits(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo


def _advice(est: MemoryEstimate, limit: int, part: str | None = None,
            exclude: tuple[str, ...] = ()) -> str:  # fmt: skip
    """The options that lower ``part`` (default: the largest): those with a value that fits
    first, with the largest such value; the first one alone, without a value, when none has
    one."""
    names = _names.get()
    part = part or max(est.parts, key=lambda p: est.parts[p])
    knobs = next(k for key, k in _KNOBS.items() if part.startswith(key))
    fitting, others = [], []
    for knob in knobs:
        name = names.get(knob)
        if name is None or knob in exclude:
            continue
        if knob == "record_stride":  # a larger stride records fewer points
            fitting.append(f"raise {name}")
        elif knob == "trace":
            fitting.append(f"set {name}")
        else:
            best = _largest_fitting(est.sizes, knob, limit)
            if best is not None:
                fitting.append(f"lower {name} to at most {best:,}")
            else:
                others.append(f"lower {name}")
    chosen = fitting or others[:1]
    return " or ".join(chosen) if chosen else "use smaller sizes"


def _given(sizes: RunSizes, at_least: bool) -> str:
    names = _names.get()
    shown = f"{names['n_runs']} {sizes.n_runs:,}, {names['horizon']} {sizes.horizon:,}"
    plural = "s" if sizes.n_agents != 1 else ""
    arms = "" if at_least else f", {sizes.n_arms} arm{'s' if sizes.n_arms != 1 else ''}"
    return f"{shown} ({sizes.n_agents} agent{plural}{arms})"


def check_memory(sizes: RunSizes, *, at_least: bool = False, warn: bool = True) -> MemoryEstimate:
    """Check a run against this machine's memory before any work; return its estimate.

    - More than the physical memory: a ``ValueError`` with the sizes, the estimate by part and
      the option that lowers the largest part -- unless the run fits without its traces: then
      it is the estimate without them (``sizes.trace`` false; the caller records no traces)
      and a :class:`~dpbandits.core.checks.MemoryWarning` says so.
    - More than :data:`WARN_BYTES` or than the memory available now: a ``MemoryWarning``.

    ``at_least``: ``sizes`` is a lower bound (the number of arms not known yet, say): only the
    refusal applies, worded "at least". ``warn=False``: only the refusal (a caller that checks
    early, before the engine checks again and warns).
    """
    est = memory_estimate(sizes)
    limit = physical_memory()
    given = _given(sizes, at_least)
    if est.total > limit:
        if sizes.trace and sizes.n_traced and not at_least:
            lean = memory_estimate(replace(sizes, trace=False))
            if lean.total <= limit:
                if warn:
                    warnings.warn(
                        f"{given}: the traces of the private agents alone would need "
                        f"{format_bytes(est.parts['the traces'])}, more than this machine's "
                        f"{format_bytes(limit)} of memory with the rest of the run: running "
                        f"without them (summary and curves only; about "
                        f"{format_bytes(lean.total)}); to keep them: "
                        f"{_advice(est, limit, 'the traces', exclude=('trace',))}",
                        MemoryWarning,
                        stacklevel=3,
                    )
                return lean
        raise ValueError(
            f"{given}: the run would need {'at least ' if at_least else ''}about "
            f"{format_bytes(est.total)} of memory ({est.describe()}), more than this machine's "
            f"{format_bytes(limit)}; {_advice(est, limit)}"
        )
    if warn and not at_least:
        available = available_memory()
        if est.total > min(WARN_BYTES, available):
            warnings.warn(
                f"{given}: the run needs about {format_bytes(est.total)} of memory "
                f"({est.describe()}; {format_bytes(available)} available now); to use less: "
                f"{_advice(est, min(WARN_BYTES, available))}",
                MemoryWarning,
                stacklevel=3,
            )
    return est


def agent_state_bytes(agent: Any, n_arms: int, horizon: int) -> int:
    """Bytes of the arrays a copy of ``agent`` holds per run once reset for one run of
    ``n_arms`` arms and ``horizon`` steps (0 when it cannot be reset: the engine's probe of the
    agent reports that). The agents' tables grow with the runs of a chunk, their noise blocks
    and windows with the arms."""
    try:
        probe = copy.deepcopy(agent)
        probe.reset(1, n_arms, horizon=horizon, rng=np.random.default_rng(0))
    except Exception:  # noqa: BLE001 (a bad agent is reported by the engine's own probe)
        return 0
    return state_bytes(probe)


def state_bytes(reset_agent: Any) -> int:
    """Bytes of the arrays an agent already reset for one run holds (the engine measures the
    copy its probe resets, :func:`dpbandits.experiments.agentspec.probe_agent`)."""
    return _array_bytes(reset_agent, set(), 0)


#: Packages whose objects :func:`agent_state_bytes` looks into for arrays (an agent's parts:
#: estimators, noise blocks, selectors), not numba's, numpy's or the interpreter's own.
_OWN_PACKAGES = ("agents", "dpbandits", "envs")


def _array_bytes(obj: Any, seen: set[int], depth: int) -> int:
    """Bytes of the numpy arrays reachable from ``obj`` through the attributes of the project's
    objects (and of a plug-in's agent), lists, tuples and dicts (each array once, views by
    their base)."""
    if id(obj) in seen or depth > 6:
        return 0
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        return _array_bytes(obj.base, seen, depth + 1) if obj.base is not None else obj.nbytes
    items: Any = ()
    if isinstance(obj, (list, tuple)):
        items = obj
    elif isinstance(obj, dict):
        items = obj.values()
    elif hasattr(obj, "__dict__") and not isinstance(obj, type):
        module = type(obj).__module__ or ""
        if depth == 0 or module.split(".")[0] in _OWN_PACKAGES:
            items = vars(obj).values()
    return sum(_array_bytes(v, seen, depth + 1) for v in items)
