"""Running independent tasks in parallel: a local process pool or any ``concurrent.futures``
executor (e.g. a Dask cluster's), with progress reports and a clean stop on Ctrl-C or SIGTERM.

Results never depend on where a task runs: every task carries its own seeds. This module only
decides *where* tasks run, and makes sure that when the caller is interrupted no worker process is
left behind.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import os
import queue as queue_mod
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Generic, NamedTuple, TypeVar

from dpbandits.core import signals
from dpbandits.core.signals import check_signals

__all__ = [
    "TaskTime",
    "exit_with_parent",
    "pool_context",
    "report_progress",
    "run_tasks",
]

T = TypeVar("T")
R = TypeVar("R")

_progress_queue: Any = None  # set in worker processes by _init_worker

#: How long :func:`_terminate_pool` waits for the executor's manager thread to finish its
#: clean-up (it only joins stopped processes and closes pipes: well under a second).
_MANAGER_JOIN_SECONDS = 10.0


_exited_with_parent = False


def exit_with_parent() -> None:
    """In a worker process on Linux: be killed when the parent process dies.

    A pool worker waits for its next task forever; if the main process is killed with SIGKILL
    (which it cannot catch to stop its workers), the workers would outlive it. Elsewhere, and in
    the main process, this does nothing.
    """
    global _exited_with_parent
    if _exited_with_parent or not sys.platform.startswith("linux"):
        return
    import multiprocessing

    parent = multiprocessing.parent_process()
    if parent is None:  # the main process: never
        return
    _exited_with_parent = True
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
        if os.getppid() != parent.pid:
            if not parent.is_alive():  # the parent died before prctl: go now
                os._exit(1)
            # Started by a fork server (the ``forkserver`` start method): the signal comes when
            # the server dies, not the parent; a thread waits for the parent's end instead.
            _watch_parent(parent.sentinel)
    except (OSError, AttributeError):  # pragma: no cover - no prctl: nothing to do
        pass


def _watch_parent(sentinel: int) -> None:
    """Exit this process as soon as ``sentinel`` (the parent's, see
    ``multiprocessing.parent_process``) says that the parent has ended."""
    from multiprocessing.connection import wait

    def watch() -> None:
        wait([sentinel])
        os._exit(1)

    threading.Thread(target=watch, name="dpbandits-exit-with-parent", daemon=True).start()


def _init_worker(q: Any) -> None:
    global _progress_queue
    _progress_queue = q
    signals.forget_received()  # the parent's (a forked copy): this worker received no signal
    # A forked worker inherits the parent's handlers: SIGTERM must stop it, not raise
    # Terminated in it, and Ctrl-C (sent to the whole process group) is the parent's to handle:
    # it terminates the workers, which would otherwise each print a traceback.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    exit_with_parent()


def report_progress(n: int) -> None:
    """Report ``n`` units of work done from a task in a pool worker (no-op elsewhere)."""
    if _progress_queue is not None:
        _progress_queue.put(n)


class TaskTime(NamedTuple):
    """Where and when one task ran. ``time.time()`` is the same clock in every process of a
    machine; a task run by a remote executor reports its own machine's clock."""

    task: int  #: the task's index in ``tasks``
    worker: int  #: the id of the process that ran it
    start: float  #: ``time.time()`` when it started
    end: float  #: ``time.time()`` when it ended


class _Timed(Generic[R]):
    """``fn`` that also returns where and when it ran (picklable when ``fn`` is)."""

    def __init__(self, fn: Callable[..., R]) -> None:
        self.fn = fn

    def __call__(self, *args: Any) -> tuple[R, int, float, float]:
        start = time.time()
        out = self.fn(*args)
        return out, os.getpid(), start, time.time()


def pool_context() -> Any:
    """The ``multiprocessing`` context of the local pool: ``fork`` on Linux, else the default.

    A forked worker starts with everything the parent has already done -- its imports (numpy,
    numba, Gymnasium, the library: about a second) and numba's initialisation, done once in the
    parent when the agents are probed -- so it runs its first task within milliseconds; with
    ``spawn``/``forkserver`` (the default from Python 3.14) every worker would redo them. The
    tasks are compiled kernels that start no threads, which is what makes forking safe here.
    """
    import multiprocessing as mp

    if sys.platform.startswith("linux") and "fork" in mp.get_all_start_methods():
        return mp.get_context("fork")
    return mp.get_context()


def _terminate_pool(ex: cf.ProcessPoolExecutor) -> None:
    """Stop every worker of ``ex`` now (running tasks included) and reap them."""
    # (taken now: shutting the executor down forgets its result queue and its manager thread;
    # see below)
    writer = getattr(getattr(ex, "_result_queue", None), "_writer", None)
    manager = getattr(ex, "_executor_manager_thread", None)
    terminate = getattr(ex, "terminate_workers", None)  # Python >= 3.14
    if callable(terminate):
        terminate()
    else:
        # Before 3.14 the executor offers no public way to stop a running task; its worker
        # processes are in ``_processes``.
        procs = list(getattr(ex, "_processes", {}).values())
        for p in procs:
            with contextlib.suppress(Exception):
                p.terminate()
        for p in procs:
            with contextlib.suppress(Exception):
                p.join(timeout=5)
                if p.is_alive():
                    p.kill()
        ex.shutdown(wait=False, cancel_futures=True)
    # A worker stopped while sending its result leaves half a message in the result pipe, and the
    # executor's manager thread waits forever for the rest; the interpreter joins that thread at
    # exit, so the process would hang after printing its last line. The workers are gone: closing
    # this process's copy of the pipe's write end turns that wait into an end-of-file, which the
    # manager thread handles as a broken pool and exits.
    if writer is not None:
        with contextlib.suppress(Exception):
            writer.close()
    # Wait for the manager thread to finish its clean-up, which ends by closing the executor's
    # wake-up pipe. Left running, it races with the interpreter's exit hook
    # (concurrent.futures.process._python_exit), which writes to that pipe without the lock
    # that guards its closing (Python 3.10 and 3.11; CPython gh-125451): a write after the close
    # prints a 12-line "OSError: [Errno 9] Bad file descriptor" traceback from ``threading``
    # after a clean one-line SIGTERM message, about 1 run in 10 under load. Once the thread has
    # ended, the hook sees a closed pipe and does nothing.
    if manager is not None and manager is not threading.current_thread():
        manager.join(timeout=_MANAGER_JOIN_SECONDS)


def _on_executor(executor: Any, call: Callable[..., Any], tasks: Sequence[Any],
                 idx: list[int], done: Callable[[int, Any], None]) -> None:  # fmt: skip
    """:func:`run_tasks` on a user's ``executor``: every task submitted at once."""
    if not isinstance(executor, cf.Executor):
        raise TypeError(
            f"executor must be a concurrent.futures.Executor, got {type(executor).__name__}"
        )
    futures = {executor.submit(call, tasks[i]): i for i in idx}
    try:
        for f in cf.as_completed(futures):
            check_signals()
            done(futures[f], f.result())  # re-raises a worker's error
    except BaseException:
        for f in futures:
            f.cancel()
        raise


def _serially(call: Callable[..., Any], tasks: Sequence[Any], order: list[int],
              progress: Callable[[int], None] | None, on_start: Callable[[int], None] | None,
              done: Callable[[int, Any], None]) -> None:  # fmt: skip
    """:func:`run_tasks` in this process, in ``order``; ``call(task, progress)`` when a
    ``progress`` is given, so that the task can report work as it goes."""
    for i in order:
        check_signals()
        if on_start is not None:
            on_start(i)
        done(i, call(tasks[i]) if progress is None else call(tasks[i], progress))


def run_tasks(
    fn: Callable[[T], R],
    tasks: Sequence[T],
    *,
    order: Sequence[int] | None = None,
    n_jobs: int = 1,
    executor: cf.Executor | None = None,
    on_done: Callable[[int, R], None] | None = None,
    progress: Callable[[int], None] | None = None,
    serial_progress: bool = True,
    timeline: list[TaskTime] | None = None,
    after: Sequence[Sequence[int]] | None = None,
    on_start: Callable[[int], None] | None = None,
) -> dict[int, R]:
    """``{i: fn(tasks[i])}``, computed in ``order`` (default: as given).

    - ``executor`` given: every task is submitted to it (a Dask ``Client.get_executor()`` works).
    - ``n_jobs == 1``: in this process, one after the other; ``fn`` is called as
      ``fn(task, progress)`` when ``serial_progress`` and ``progress`` are set, so it can report
      work as it goes.
    - otherwise a local ``ProcessPoolExecutor`` with ``n_jobs`` workers; tasks report progress
      with :func:`report_progress`, forwarded here to ``progress``.

    ``on_done(i, result)`` is called in this process as each task finishes (e.g. to store it).
    ``timeline``, when given, receives a :class:`TaskTime` per task, in the order they finish.
    ``after[i]``, when given: the tasks that must finish before task ``i`` starts (no
    ``executor``); each task then starts as soon as its own are done and a worker is free, the
    first in ``order`` of those ready first, and ``on_start(i)`` is called as it starts.
    On any exception, ``KeyboardInterrupt`` or :class:`~dpbandits.core.signals.Terminated`,
    pending tasks are cancelled, pool workers are terminated, and the exception propagates.
    """
    idx = list(range(len(tasks))) if order is None else list(order)
    outputs: dict[int, R] = {}
    call: Callable[..., Any] = fn if timeline is None else _Timed(fn)

    def done(i: int, r: Any) -> None:
        if timeline is not None:
            r, worker, start, end = r
            timeline.append(TaskTime(i, worker, start, end))
        outputs[i] = r
        if on_done is not None:
            on_done(i, r)

    if after is not None:
        if executor is not None:
            raise ValueError("after: tasks with prerequisites run on the local pool only")
        if len(after) != len(tasks):
            raise ValueError(f"after: {len(after)} entries for {len(tasks)} tasks")
        ready = _ready_order(idx, after)  # (refuses prerequisites that wait for each other)
    if executor is not None:
        _on_executor(executor, call, tasks, idx, done)
        return outputs
    if n_jobs <= 1 or len(idx) <= 1:
        with_progress = progress if serial_progress else None
        _serially(call, tasks, idx if after is None else ready, with_progress, on_start, done)
        return outputs

    ctx = pool_context()
    q = ctx.Queue() if progress is not None else None
    ex = cf.ProcessPoolExecutor(
        max_workers=min(n_jobs, len(idx)), mp_context=ctx, initializer=_init_worker, initargs=(q,)
    )
    waiting = list(idx)  # (with prerequisites) not submitted yet, in order
    started: dict[cf.Future[Any], int] = {}
    pending: set[cf.Future[Any]] = set()

    def submit() -> None:
        # all at once (the pool starts each as a worker frees up), or those whose prerequisites
        # are done, as many as there are workers
        for i in list(waiting):
            if after is not None and (len(pending) >= n_jobs
                                      or any(j not in outputs for j in after[i])):  # fmt: skip
                continue
            waiting.remove(i)
            if on_start is not None:
                on_start(i)
            f = ex.submit(call, tasks[i])
            started[f] = i
            pending.add(f)

    try:
        submit()
        while pending:
            check_signals()  # at least every 0.25 s
            finished, pending = cf.wait(pending, timeout=0.25, return_when=cf.FIRST_COMPLETED)
            if q is not None and progress is not None:
                while True:
                    try:
                        progress(q.get_nowait())
                    except queue_mod.Empty:
                        break
            for f in finished:
                done(started[f], f.result())  # re-raises a worker's error
            submit()
    except BaseException:
        _terminate_pool(ex)
        raise
    else:
        ex.shutdown(wait=True)
    finally:
        if q is not None:
            q.close()
            q.join_thread()
    return outputs


def _ready_order(idx: list[int], after: Sequence[Sequence[int]]) -> list[int]:
    """``idx`` reordered so that every task comes after its prerequisites (``after``), each
    step taking the first task of ``idx`` whose prerequisites are done."""
    out: list[int] = []
    waiting = list(idx)
    while waiting:
        i = next((i for i in waiting if all(j in out for j in after[i])), None)
        if i is None:
            raise ValueError(f"after: tasks {waiting} wait for each other")
        waiting.remove(i)
        out.append(i)
    return out
