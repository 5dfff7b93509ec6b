"""Compiling a run's kernels before its tasks start: once per machine, never once per worker.

The agents play compiled loops (:mod:`dpbandits.core.jit`); numba compiles each one at its
first call and caches it on disk, so only the first run on a machine pays for it (docs/
performance.md, "Cold start"). Left to the tasks, that first call happens in every worker
process at once: each compiles the same code, the progress bar sits at 0 % without a word, and
its ETA is computed from the compile time. Instead, :func:`warm_up` plays every agent of a run
for a few steps on the run's own environment before the tasks start, in this process:

- the forked workers of the local pool (``dpbandits.experiments.parallel.pool_context``) then
  start with the compiled code in memory, and load nothing;
- only what the run uses is compiled: the private agent's loop holds its own selector's kernel
  and quantile method only (``agents.private_loop.play_loop``);
- when there is compiling to do and several workers, the agents' loops are compiled in parallel
  by forked processes (each loop once: agents with the same ``compile_key`` share it), which
  write the disk cache that this process then reads; the kernels that several loops call (the
  private agents' window update: ``shared_parts``) are compiled once, by one of them, beside
  the loops that do not call them, and the loops that do are compiled after, loading them
  from the disk cache instead of compiling them again;
- :class:`CompileNotice`, around the run's set-up, prints one line before the first
  compilation: what is being compiled and about how long it takes;
- the progress bar starts afterwards, so that its ETA is never computed from compile time.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import os
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

from dpbandits.core import compile_progress
from dpbandits.core.numba_compat import on_compile
from dpbandits.core.traits import compile_key, cost_hint
from dpbandits.experiments.agentspec import is_private
from dpbandits.experiments.chunk import ChunkTask, run_chunk
from dpbandits.experiments.parallel import run_tasks

__all__ = [
    "WARM_UP_STEPS",
    "CompileNotice",
    "compile_estimate",
    "compile_notice",
    "print_line",
    "refill_noise_blocks",
    "warm_up",
    "warm_up_task",
]

#: Steps played per agent by :func:`warm_up`, after the initial round of one pull per arm.
WARM_UP_STEPS = 32
#: Rough compile times on one core of the 2-core test machine, idle (docs/performance.md): what
#: every run compiles once (environment, regret, the first quantile method), and each loop. The
#: private loop's 3.5 s of round 10, scaled by the measured drop of the private loops' compile
#: CPU time in round 12 (x0.74: the window update compiled once, no literal recompiles, RS
#: without the other methods' samplers; docs/performance.md, "Cold start: fewer compilations").
_SECONDS_COMMON, _SECONDS_PRIVATE, _SECONDS_OTHER = 4.0, 2.6, 1.0


def compile_estimate(agents: list[Any], n_jobs: int = 1, n_arms: int = 2) -> float:
    """About how many seconds compiling the kernels of ``agents`` takes on a machine with an
    empty kernel cache, on ``n_jobs`` processes (docs/performance.md, "Cold start")."""
    loops = {compile_key(a, n_arms): is_private(a) for a in agents}
    work = sum(_SECONDS_PRIVATE if p else _SECONDS_OTHER for p in loops.values())
    return _SECONDS_COMMON + work / max(1, min(n_jobs, len(loops)))


class CompileNotice:
    """While active (:func:`compile_notice`), counts numba's compilations in this process and,
    before the first one, calls ``announce`` once with what is being compiled (the labels of
    :attr:`pending`, the agents not warmed up yet) and about how long it takes."""

    def __init__(self, agents: Mapping[str, Any], n_jobs: int,
                 announce: Callable[[str], None] | None) -> None:  # fmt: skip
        self.pending: dict[str, Any] = dict(agents)
        self.n_jobs = n_jobs
        self.announce = announce
        self.compiled = 0
        self.bar: Any = None
        self._total = len(self.pending)
        self._pid = os.getpid()

    def started(self, py_func: Any) -> None:
        """numba starts compiling ``py_func``."""
        if os.getpid() != self._pid:  # a forked compiling process: this one announces
            return
        self.compiled += 1
        if self.compiled == 1 and self.announce is not None and self.pending:
            seconds = compile_estimate(list(self.pending.values()), self.n_jobs)
            self.announce(f"compiling kernels for {', '.join(self.pending)} (first run on "
                          f"this machine, ~{seconds:.0f} s)…")  # fmt: skip
            from tqdm.auto import tqdm

            # how far: the agents whose code is ready; what: the kernel compiling here, or the
            # agents the compiling processes work on (a terminal only: disable=None)
            self.bar = tqdm(total=self._total, desc="compiling", unit=" agents",
                            initial=self._total - len(self.pending), file=sys.stderr,
                            leave=False, disable=None, dynamic_ncols=True)  # fmt: skip
        if self.bar is not None:
            name = getattr(py_func, "__qualname__", "") or repr(py_func)
            self.bar.set_postfix_str(name.split("__", 1)[0], refresh=True)

    def ready(self, labels: list[str], working: str = "") -> None:
        """The code of the agents ``labels`` is compiled (or loaded); ``working``: what is
        compiling now."""
        for label in labels:
            if self.pending.pop(label, None) is not None and self.bar is not None:
                self.bar.update(1)
        if self.bar is not None and working:
            self.bar.set_postfix_str(working, refresh=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


@contextlib.contextmanager
def compile_notice(
    agents: Mapping[str, Any], n_jobs: int = 1, announce: Callable[[str], None] | None = None
) -> Iterator[CompileNotice]:
    """A :class:`CompileNotice` for the ``label -> agent`` mapping of a run, active in the
    block: wrap a run's set-up and :func:`warm_up` in it."""
    notice = CompileNotice(agents, n_jobs, announce)
    # this notice and its bar replace the library's general one (core/compile_progress.py)
    with compile_progress.quiet(), on_compile(notice.started):
        try:
            yield notice
        finally:
            notice.close()


def warm_up_task(task: ChunkTask) -> ChunkTask:
    """``task`` cut to :data:`WARM_UP_STEPS` steps past the initial round, with a copy of its
    agent: the same kernels with the same argument types as the task itself."""
    h = min(task.horizon, task.n_arms + WARM_UP_STEPS)
    end = np.array([h], dtype=np.int64)
    return dataclasses.replace(
        task,
        agent=copy.deepcopy(task.agent),
        horizon=h,
        record_steps=end,
        trace_steps=end if task.trace_steps.size else task.trace_steps[:0],
        table=None if task.table is None else task.table[:h],
        keep_actions=False,
        change_points=tuple(c for c in task.change_points if 0 < c < h),
    )


def _play(task: ChunkTask) -> None:
    run_chunk(task, progress=_ignore)


def shared_parts(agent: Any, n_arms: int) -> list[tuple[Callable[..., Any], tuple[Any, ...]]]:
    """``agent.shared_parts(n_arms)``: ``(function, args)`` calls that compile kernels the
    loops of several agents call (``agents.private.PrivateAgent.shared_parts``); none for an
    agent without the method."""
    method = getattr(agent, "shared_parts", None)
    return list(method(n_arms)) if callable(method) else []


def _run_item(item: Any) -> None:
    """A task of the compiling processes: a ``(function, args)`` call of
    :func:`shared_parts`, or a warm-up task (:func:`warm_up_task`)."""
    if isinstance(item, tuple):
        fn, args = item
        fn(*args)
    else:
        _play(item)


def _ignore(n: int) -> None:
    pass


def _cost(task: ChunkTask) -> float:
    return cost_hint(task.agent)


def warm_up(tasks: list[ChunkTask], n_jobs: int = 1, notice: CompileNotice | None = None) -> float:
    """Play every agent of ``tasks`` (its first task) for a few steps in this process
    (:func:`warm_up_task`), so that every kernel the tasks call is compiled, or loaded from the
    disk cache, before they start; return the seconds it took.

    The cheapest agent goes first, which compiles what every agent shares. If anything was
    compiled so far (counted by ``notice``, active around the run's set-up: an empty kernel
    cache) and ``n_jobs > 1``, the other agents' loops are then compiled by ``n_jobs`` forked
    processes, one per ``compile_key``, the slowest first, in two rounds around the kernels
    several of them call (:func:`_compile_in_processes`); they write the disk cache, and this
    process then loads them.
    """
    start = time.perf_counter()
    firsts: dict[str, ChunkTask] = {}
    for task in tasks:
        firsts.setdefault(task.label, task)
    order = sorted(firsts.values(), key=lambda t: (is_private(t.agent), _cost(t)))
    if not order:
        return 0.0
    with contextlib.ExitStack() as stack:
        if notice is None:
            notice = stack.enter_context(compile_notice({t.label: t.agent for t in order}))
        minis = [warm_up_task(t) for t in order]
        _play(minis[0])
        if any(is_private(t.agent) for t in order):
            refill_noise_blocks()
        notice.ready([minis[0].label])
        rest = minis[1:]
        if notice.compiled and n_jobs > 1 and len(rest) > 1:
            by_key: dict[Any, list[ChunkTask]] = {}
            for mini in rest:
                by_key.setdefault(compile_key(mini.agent, mini.n_arms), []).append(mini)
            groups = sorted(by_key.values(), key=lambda g: -_cost(g[0]))
            try:
                _compile_in_processes(groups, n_jobs, notice)
            except Exception:  # noqa: BLE001 (e.g. an agent that cannot be pickled)
                pass  # the pass below compiles here instead, and raises a real error itself
        for mini in rest:
            _play(mini)
            notice.ready([mini.label])
    return time.perf_counter() - start


def _compile_in_processes(groups: list[list[ChunkTask]], n_jobs: int,
                          notice: CompileNotice) -> None:  # fmt: skip
    """Compile the loops of ``groups`` (one task each, the slowest first) in ``n_jobs`` forked
    processes, in two rounds: first the kernels several loops call (:func:`shared_parts`, each
    once) beside the loops that call none of them, then the loops that call them, which load
    them from the disk cache instead of compiling them again (a process that started such a
    loop while another compiled its part compiled the part twice: 6 of the 43 CPU-s of a cold
    ``dpbandits shift``, docs/performance.md "Cold start")."""
    parts: list[Any] = []
    free: list[list[ChunkTask]] = []
    bound: list[list[ChunkTask]] = []
    for group in groups:
        own = shared_parts(group[0].agent, group[0].n_arms)
        parts.extend(part for part in own if part not in parts)
        (bound if own else free).append(group)
    working = {id(g): g[0].label for g in groups}
    width = min(n_jobs, max(len(parts) + len(free), len(bound)))

    def shown() -> str:
        return f"in {width} processes: {', '.join(working.values())}" if working else ""

    notice.ready([], shown())
    for items in ([*parts, *(g[0] for g in free)], [g[0] for g in bound]):
        def done(i: int, _: Any, items: list[Any] = items) -> None:
            item = items[i]
            if isinstance(item, tuple):  # a shared part
                return
            group = next(g for g in groups if g[0] is item)
            working.pop(id(group), None)
            notice.ready([t.label for t in group], shown())

        if items:
            run_tasks(_run_item, items, n_jobs=min(n_jobs, len(items)), on_done=done)


def refill_noise_blocks() -> None:
    """Compile (or load) the private means' noise refill here, before the workers start: the
    warm-up's few steps never reach the end of a noise block (``block`` pulls of an arm,
    :class:`dpbandits.continual.PrivateMeans`), so each worker compiled the refill's kernels
    itself in the middle of its run, once per worker on an empty cache. Blocks of 2 counts
    reach it at the third pull, with the argument types of any block size."""
    from dpbandits.continual import PrivateMeans

    means = PrivateMeans(2, 2, 1.0, block=2, rng=0)
    actions, rewards = np.zeros(2, dtype=np.intp), np.ones(2)
    for _ in range(5):
        means.update(actions, rewards)


def print_line(line: str) -> None:
    """Print ``line`` on stderr at once (where the progress bar goes)."""
    print(line, file=sys.stderr, flush=True)
