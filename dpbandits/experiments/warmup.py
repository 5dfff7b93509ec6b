"""Compiling a run's kernels before its tasks start: once per machine, never once per worker.

The agents play compiled loops (:mod:`dpbandits.core.jit`); numba compiles each one at its
first call and caches it on disk, so only the first run on a machine pays for it (docs/
performance.md, "Cold start"). Left to the tasks, that first call happens in every worker
process at once: each compiles the same code, the progress bar sits at 0 % without a word, and
its ETA is computed from the compile time. Instead, :func:`warm_up` plays every agent of a run
for a few steps on the run's own environment before the tasks start, in this process:

- the forked workers of the local pool (``dpbandits.experiments.parallel.pool_context``) then
  start with the compiled code in memory, and load nothing;
- only what the run uses is compiled: the private agents share one loop
  (``agents.private_loop.play_loop``), which calls their selectors' kernels and their quantile
  methods' window updates by address, so a run compiles the kernels of its own selectors and
  methods only, and the loop once;
- when there is compiling to do and several workers, it is done by forked processes, each
  kernel once, as a graph of jobs started as soon as what they call is compiled, the longest
  chain of work first (:func:`_compile_in_processes`): the first agent's steps (environment,
  regret, bookkeeping) and the kernels that several agents call (the private agents' loop and
  window update: ``shared_parts``; the private means' noise refill) from the start, side by
  side, then each agent's own kernels (each once: agents with the same ``compile_key`` share
  them: its loop, or a private agent's selector kernel), which loads what it calls from the
  disk cache instead of compiling it again; this process then loads them all. On an empty
  kernel cache the shared kernels start earlier still, in a process forked before the agents
  are probed (:func:`early_parts`);
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
from dpbandits.experiments.parallel import exit_with_parent, pool_context, run_tasks

__all__ = [
    "WARM_UP_STEPS",
    "CompileNotice",
    "EarlyParts",
    "compile_estimate",
    "compile_notice",
    "early_parts",
    "print_line",
    "refill_noise_blocks",
    "warm_up",
    "warm_up_task",
]

#: Steps played per agent by :func:`warm_up`, after the initial round of one pull per arm.
WARM_UP_STEPS = 32
#: Rough compile times on one idle core of the 2-core test machine (numba's compile events of a
#: cold ``dpbandits shift``, all its processes, round 17; docs/performance.md "Cold start"): what
#: every run compiles once (environment, regret, bookkeeping, the private means' noise: ~5 s), a
#: private agent's own kernels (its selector's kernel and the entry that passes it its
#: parameters: RS 4.7 s, RNM 2.6, kRR 1.0, GEM 0.9: ~2.3 s), another agent's loop (Thompson
#: sampling 2.1 s, UCB 1.1), and what the private agents share, once: the window update (3.4 s)
#: and their loop (~2.1 s). In all 23 CPU-s, ~10 s of wall time on the two cores.
_SECONDS_COMMON, _SECONDS_PRIVATE, _SECONDS_OTHER, _SECONDS_SHARED = 5.0, 2.3, 1.6, 5.5


def compile_estimate(agents: list[Any], n_jobs: int = 1, n_arms: int = 2) -> float:
    """About how many seconds compiling the kernels of ``agents`` takes on a machine with an
    empty kernel cache, on ``n_jobs`` processes (docs/performance.md, "Cold start")."""
    loops = {compile_key(a, n_arms): is_private(a) for a in agents}
    work = sum(_SECONDS_PRIVATE if p else _SECONDS_OTHER for p in loops.values())
    work += _SECONDS_COMMON + (_SECONDS_SHARED if any(loops.values()) else 0.0)
    # the jobs of _compile_in_processes: the first agent's and the shared kernels side by side
    return work / max(1, min(n_jobs, len(loops) + 1))


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
        #: whether the kernel cache was empty when the notice started (a first run: set only
        #: with ``n_jobs > 1``, for :func:`early_parts`)
        self.empty_cache = n_jobs > 1 and _cache_is_empty()

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


class EarlyParts:
    """The kernels several loops call (:func:`shared_parts`) being compiled by a forked process
    started before the run's set-up (:func:`early_parts`), and a pipe whose read end reaches
    end-of-file when that process ends (it holds the only write end)."""

    def __init__(self, parts: list[tuple[Callable[..., Any], tuple[Any, ...]]]) -> None:
        self.parts = parts
        self.fd, write = os.pipe()
        self.process = pool_context().Process(target=_compile_parts, args=(parts, write),
                                              daemon=True)  # fmt: skip
        self.process.start()
        os.close(write)  # the process holds the only write end: end-of-file when it ends

    def wait(self) -> None:
        """Until the process has ended (its parts are then in the disk cache)."""
        _wait_for_end(self.fd)

    def close(self, stop: bool = False) -> None:
        if stop and self.process.is_alive():
            self.process.terminate()
        self.process.join()
        os.close(self.fd)


def _compile_parts(parts: list[tuple[Callable[..., Any], tuple[Any, ...]]], write: int) -> None:
    exit_with_parent()
    for fn, args in parts:
        fn(*args)


def _wait_for_end(fd: int) -> None:
    while os.read(fd, 1):  # nothing is ever written: b"" once the writer has ended
        pass


def _after_early(fd: int, parts: list[tuple[Callable[..., Any], tuple[Any, ...]]]) -> None:
    """A job of the compiling processes: wait for the early process (:class:`EarlyParts`),
    then load ``parts`` from the disk cache it wrote (or compile them, if that process
    failed). One job for all of them: it holds one of the compiling processes while it
    waits."""
    _wait_for_end(fd)
    for fn, args in parts:
        fn(*args)


def _cache_is_empty() -> bool:
    from dpbandits.core.kernel_cache import CACHE_SUFFIXES, kernel_cache_dir

    directory = kernel_cache_dir()
    return not directory.is_dir() or not any(
        p.suffix in CACHE_SUFFIXES for p in directory.rglob("*")
    )


@contextlib.contextmanager
def early_parts(agents: Mapping[str, Any], n_arms: int,
                notice: CompileNotice) -> Iterator[EarlyParts | None]:  # fmt: skip
    """On a first run (the kernel cache was empty when ``notice`` started, with ``n_jobs > 1``)
    and a forking pool, start compiling the kernels several loops call (:func:`shared_parts`:
    the private agents' window update, the longest compilation of a cold run) at once in a
    forked process, while this process probes the agents (whose private means compile their
    noise) and makes the tasks; :func:`warm_up` waits for it before the loops that call them.
    In the block: the :class:`EarlyParts`, or ``None`` (nothing to start); stopped on an
    error."""
    parts: list[tuple[Callable[..., Any], tuple[Any, ...]]] = []
    if notice.empty_cache and _forks():
        for agent in agents.values():
            with contextlib.suppress(Exception):  # a bad agent: its probe says why, next
                parts += [p for p in shared_parts(agent, n_arms) if p not in parts]
    early = EarlyParts(parts) if parts else None
    try:
        yield early
    except BaseException:
        if early is not None:
            early.close(stop=True)
            early = None
        raise
    finally:
        if early is not None:
            early.close()


def _forks() -> bool:
    return bool(pool_context().get_start_method() == "fork")


def warm_up(tasks: list[ChunkTask], n_jobs: int = 1, notice: CompileNotice | None = None,
            early: EarlyParts | None = None) -> float:
    """Play every agent of ``tasks`` (its first task) for a few steps in this process
    (:func:`warm_up_task`), so that every kernel the tasks call is compiled, or loaded from the
    disk cache, before they start; return the seconds it took.

    If the run's set-up compiled something (counted by ``notice``, active around it: an empty
    kernel cache) and ``n_jobs > 1``, everything is compiled first by ``n_jobs`` forked
    processes (:func:`_compile_in_processes`): the cheapest agent's few steps (what every agent
    shares: environment, regret, bookkeeping), the kernels several loops call, each agent's loop
    once per ``compile_key``; they write the disk cache, and this process then loads it. Else the
    cheapest agent goes first here, and if that compiled something, the other agents' loops go
    to the forked processes.
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
        private = any(is_private(t.agent) for t in order)
        parallel = n_jobs > 1 and len(minis) > 1
        played = 0
        if not (parallel and notice.compiled):  # nothing compiled yet: maybe a warm cache
            if early is not None:
                early.wait()  # (else this process would compile its parts a second time)
            _play(minis[0])
            notice.ready([minis[0].label])
            played = 1
        if parallel and notice.compiled:
            try:
                _compile_in_processes(minis[played:], played == 0, private, n_jobs, notice,
                                      early)  # fmt: skip
            except Exception:  # noqa: BLE001 (e.g. an agent that cannot be pickled)
                pass  # the pass below compiles here instead, and raises a real error itself
            if early is not None:
                early.wait()
        if private:
            refill_noise_blocks()
        for mini in minis[played:]:
            _play(mini)
            notice.ready([mini.label])
    return time.perf_counter() - start


#: Rough compile costs of what is not an agent's loop, in the units of ``cost_hint`` (whose values
#: follow the loops' compile times: RS's 8 ~ 7 s on an idle core of the 2-core test machine,
#: docs/performance.md "Cold start"): the first agent's steps with the environment's and the
#: engine's kernels (~5.5 s), a shared part (Smith's window update ~6 s) and the noise refill.
_COST_FIRST, _COST_PART, _COST_REFILL = 6.0, 7.0, 1.0


def _compile_in_processes(minis: list[ChunkTask], first: bool, private: bool, n_jobs: int,
                          notice: CompileNotice,
                          early: EarlyParts | None = None) -> None:  # fmt: skip
    """Compile the kernels of ``minis`` (warm-up tasks, the cheapest first) in ``n_jobs`` forked
    processes, each kernel once (they write the disk cache), as a graph of jobs
    (``run_tasks(after=...)``), the longest chain of work first:

    - ``first``: the first task's few steps, which compile what every agent's steps call (the
      environment's reward tape, the regret, the pull counts); every agent's loop after it;
    - the private means' noise refill (:func:`refill_noise_blocks`, if ``private``), which the
      private agents' loops call, and the kernels several loops call (:func:`shared_parts`, each
      once: the private agents' loop, the window update of a quantile method), each before
      the agents that call it; those that ``early`` compiles already (:func:`early_parts`) are
      one job that waits for it and loads them;
    - the kernels of each ``compile_key``, once (the agents sharing it are ready with it): an
      agent's loop, or a private agent's selector kernel (its loop is shared).

    A process that started a loop while another compiled a kernel it calls would compile that
    kernel a second time (6 of the 43 CPU-s of a cold ``dpbandits shift``, docs/performance.md
    "Cold start"); the jobs with no prerequisites (the first task's steps, the window update)
    start at once, side by side."""
    items: list[Any] = []
    after: list[tuple[int, ...]] = []
    cost: list[float] = []
    names: list[str] = []
    labels: list[list[str]] = []

    def add(item: Any, needs: tuple[int, ...], c: float, name: str, ready: list[str]) -> int:
        items.append(item)
        after.append(needs)
        cost.append(c)
        names.append(name)
        labels.append(ready)
        return len(items) - 1

    base: tuple[int, ...] = ()
    rest = minis
    if first:
        base = (add(minis[0], (), _COST_FIRST, minis[0].label, [minis[0].label]),)
        rest = minis[1:]
    refill: tuple[int, ...] = ()
    if private:
        refill = (add((refill_noise_blocks, ()), (), _COST_REFILL, "noise refill", []),)
    parts: dict[Any, int] = {}
    if early is not None:  # one job waits for the early process, for all of its parts
        waiting = add((_after_early, (early.fd, early.parts)), (), _COST_PART, "early parts", [])
        parts.update(dict.fromkeys(early.parts, waiting))
    by_key: dict[Any, list[ChunkTask]] = {}
    for mini in rest:
        by_key.setdefault(compile_key(mini.agent, mini.n_arms), []).append(mini)
    for group in by_key.values():
        head = group[0]
        needs = list(base) + list(refill if is_private(head.agent) else ())
        for part in shared_parts(head.agent, head.n_arms):
            if part not in parts:
                fn, args = part
                name = f"{getattr(fn, '__name__', 'kernel')}{tuple(args)!r}".replace(",)", ")")
                parts[part] = add(part, (), _COST_PART, name, [])
            if parts[part] not in needs:
                needs.append(parts[part])
        add(head, tuple(needs), _cost(head), head.label, [t.label for t in group])
    # longest chain of work first: a job's priority is its cost plus its dependents' largest
    chain = list(cost)
    for i in reversed(range(len(items))):  # dependents come after their prerequisites
        for j in after[i]:
            chain[j] = max(chain[j], cost[j] + chain[i])
    order = sorted(range(len(items)), key=lambda i: -chain[i])
    width = min(n_jobs, len(items))
    working: dict[int, str] = {}

    def shown() -> str:
        return f"in {width} processes: {', '.join(working.values())}" if working else ""

    def started(i: int) -> None:
        working[i] = names[i]
        notice.ready([], shown())

    def done(i: int, _: Any) -> None:
        working.pop(i, None)
        notice.ready(labels[i], shown())

    run_tasks(_run_item, items, order=order, n_jobs=width, after=after, on_start=started,
              on_done=done)  # fmt: skip


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
