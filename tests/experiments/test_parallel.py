"""Stopping a local process pool: no worker and no thread of the executor is left behind."""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing as mp
import os
import signal
import struct
import sys
import time

import numpy as np
import pytest

from dpbandits.experiments.parallel import TaskTime, _init_worker, pool_context, run_tasks


def _half_a_result(fd: int) -> None:
    """Write the first bytes of a 1 MB result message into the executor's result pipe (``fd``,
    inherited by the forked worker), then hang: as a worker stopped mid-send would leave it."""
    os.write(fd, struct.pack("!i", 1 << 20) + b"x" * 100)
    time.sleep(600)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs the fork start method")
def test_stopping_a_pool_mid_send_leaves_no_thread_waiting_for_the_rest() -> None:
    from dpbandits.experiments.parallel import _terminate_pool

    ex = cf.ProcessPoolExecutor(1, mp_context=mp.get_context("fork"), initializer=_init_worker,
                                initargs=(None,))  # fmt: skip
    ex.submit(time.sleep, 0).result()  # starts the worker and the manager thread
    fd = ex._result_queue._writer.fileno()  # type: ignore[attr-defined]
    ex.submit(_half_a_result, fd)
    manager = ex._executor_manager_thread  # type: ignore[attr-defined]
    time.sleep(1.0)  # the manager thread is now blocked reading the rest of the message
    assert manager is not None and manager.is_alive()
    procs = list(ex._processes.values())  # type: ignore[attr-defined]
    _terminate_pool(ex)
    manager.join(timeout=10)
    # without the fix, the thread waits forever and the interpreter hangs at exit joining it
    assert not manager.is_alive()
    assert not any(p.is_alive() for p in procs)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs the fork start method")
def test_a_stopped_pool_leaves_nothing_for_the_exit_hook_to_race_with(monkeypatch) -> None:
    """After ``_terminate_pool`` the executor's manager thread has ended and its wake-up pipe is
    closed: the interpreter's exit hook (``concurrent.futures.process._python_exit``) writes
    to that pipe without a lock on Python 3.11, and a write racing with the manager thread's
    close printed ``OSError: [Errno 9] Bad file descriptor`` after SIGTERM's one-line message
    (issue 30, item 5). The manager's clean-up is slowed down here, so that the race is not
    left to chance: without the join in ``_terminate_pool`` the pipe is still open."""
    import concurrent.futures.process as cfp

    from dpbandits.experiments.parallel import _terminate_pool

    original = cfp._ExecutorManagerThread.join_executor_internals  # type: ignore[attr-defined]

    def slow_clean_up(self: object) -> None:
        time.sleep(0.5)  # a loaded machine: the main thread reaches the exit hook first
        original(self)

    monkeypatch.setattr(cfp._ExecutorManagerThread, "join_executor_internals", slow_clean_up)
    ex = cf.ProcessPoolExecutor(1, mp_context=mp.get_context("fork"), initializer=_init_worker,
                                initargs=(None,))  # fmt: skip
    ex.submit(time.sleep, 0).result()  # starts the worker and the manager thread
    ex.submit(time.sleep, 600)
    manager = ex._executor_manager_thread  # type: ignore[attr-defined]
    wakeup = ex._executor_manager_thread_wakeup  # type: ignore[attr-defined]
    _terminate_pool(ex)
    assert not manager.is_alive()
    assert wakeup._closed


def test_run_tasks_in_a_pool_gives_the_serial_results() -> None:
    tasks = list(range(7))
    assert run_tasks(abs, [-t for t in tasks], n_jobs=2) == {t: t for t in tasks}


def _pid_of(task: int) -> tuple[int, int]:
    return task, os.getpid()


def test_timeline_says_which_process_ran_each_task_and_when() -> None:
    tasks = list(range(5))
    for n_jobs in (1, 2):
        timeline: list[TaskTime] = []
        before = time.time()
        out = run_tasks(_pid_of, tasks, n_jobs=n_jobs, timeline=timeline)
        after = time.time()
        # the results are the bare results, the timeline one row per task, each run once
        assert sorted(out) == tasks and all(out[t][0] == t for t in tasks)
        assert sorted(tt.task for tt in timeline) == tasks
        for tt in timeline:
            assert tt.worker == out[tt.task][1]  # the process that really ran it
            assert before <= tt.start <= tt.end <= after
        workers = {tt.worker for tt in timeline}
        assert (workers == {os.getpid()}) if n_jobs == 1 else (os.getpid() not in workers)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork is chosen on Linux only")
def test_the_pool_forks_on_linux_whatever_the_default_start_method() -> None:
    # workers must inherit the parent's imports and numba's set-up (spawn and forkserver, the
    # default from Python 3.14, would redo them in every worker)
    assert pool_context().get_start_method() == "fork"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux-only")
@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_pool_workers_start_whatever_the_start_method(method: str) -> None:
    # a worker of a fork server has the server as its system parent: it must not take that for
    # the death of its parent (every forkserver worker stopped at once, a broken pool)
    ex = cf.ProcessPoolExecutor(2, mp_context=mp.get_context(method), initializer=_init_worker,
                                initargs=(None,))  # fmt: skip
    try:
        assert list(ex.map(abs, [-1, -2, -3])) == [1, 2, 3]
    finally:
        ex.shutdown()


_KILLED_PARENT = """
import concurrent.futures as cf, multiprocessing as mp, os, sys, time
from dpbandits.experiments.parallel import _init_worker
ex = cf.ProcessPoolExecutor(2, mp_context=mp.get_context("forkserver"), initializer=_init_worker,
                            initargs=(None,))
pids = {f.result() for f in [ex.submit(os.getpid) for _ in range(4)]}
print(" ".join(map(str, pids)), flush=True)
time.sleep(600)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux-only")
def test_forkserver_workers_die_with_their_parent() -> None:
    import signal
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    path = os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path}
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_PARENT], stdout=subprocess.PIPE,
                            text=True, env=env, cwd=root)  # fmt: skip
    try:
        assert proc.stdout is not None
        workers = [int(p) for p in proc.stdout.readline().split()]
        assert workers and all(_alive(p) for p in workers)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    deadline = time.monotonic() + 20
    while any(_alive(p) for p in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(p) for p in workers)


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):  # gone before the open, or before the read
        return False


@pytest.mark.skipif(not hasattr(signal, "SIGTERM") or sys.platform == "win32",
                    reason="POSIX signals")  # fmt: skip
def test_a_sigterm_during_a_file_write_waits_for_the_write_to_end(tmp_path):
    """SIGTERM inside atomic_open (e.g. in the middle of an .npz's zip records) is raised as
    Terminated when the write has ended: the file is complete, and no clean-up error (zipfile's
    "Can't close the ZIP file while there is an open writing handle") replaces it."""
    from dpbandits.core.files import atomic_open
    from dpbandits.core.signals import Terminated, handle_termination

    path = tmp_path / "a.npz"
    with pytest.raises(Terminated), handle_termination():
        with atomic_open(path) as f:
            os.kill(os.getpid(), signal.SIGTERM)  # arrives mid-write: held
            np.savez(f, x=np.arange(10))
        pytest.fail("Terminated must be raised when the write ends")  # pragma: no cover
    np.testing.assert_array_equal(np.load(path)["x"], np.arange(10))
    # outside a write, a SIGTERM is raised at once
    with pytest.raises(Terminated), handle_termination():
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)


def _nap(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


class _InterruptedInDestructor:
    """Receives SIGINT while its ``__del__`` runs: the KeyboardInterrupt raised there is
    printed and dropped by Python ("Exception ignored in ...")."""

    def __del__(self) -> None:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)  # the handler runs here, inside the destructor


@pytest.fixture
def default_sigint():  # type: ignore[no-untyped-def]
    """SIGINT raising KeyboardInterrupt, as in a terminal, whatever started the tests (a shell's
    background job ignores SIGINT, and its children inherit that)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_an_interrupt_dropped_in_a_destructor_still_stops_the_run(n_jobs, monkeypatch,
                                                                   default_sigint):  # fmt: skip
    # Python prints and drops an exception raised inside __del__: a Ctrl-C arriving while the
    # main thread runs a destructor would be lost and the run would go on to the end.
    # handle_termination remembers it and run_tasks raises it again.
    from dpbandits.core.signals import handle_termination
    from dpbandits.experiments.parallel import run_tasks

    dropped: list[type[BaseException]] = []  # what Python dropped ("Exception ignored in")
    monkeypatch.setattr(sys, "unraisablehook", lambda u: dropped.append(u.exc_type))
    calls: list[int] = []

    def progress(n: int) -> None:
        if not calls:
            _InterruptedInDestructor()  # created and destroyed at once, in the main thread
        calls.append(n)

    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt), handle_termination():
        run_tasks(_nap, [0.3] * 40, n_jobs=n_jobs, progress=progress, serial_progress=False,
                  on_done=lambda i, r: progress(1))  # fmt: skip
    assert time.monotonic() - t0 < 5  # 40 tasks of 0.3 s would take 6 s or more
    assert dropped == [KeyboardInterrupt]  # the scenario happened: the first raise was lost
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # restored


def _order_of(i: int) -> int:
    return i


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_run_tasks_starts_a_task_after_its_prerequisites(n_jobs: int) -> None:
    after = [(), (0,), (), (1, 2), ()]
    started: list[int] = []
    out = run_tasks(_order_of, list(range(5)), n_jobs=n_jobs, after=after,
                    order=[3, 1, 0, 4, 2], on_start=started.append)  # fmt: skip
    assert sorted(out) == list(range(5)) and sorted(started) == list(range(5))
    for i, needs in enumerate(after):
        assert all(started.index(j) < started.index(i) for j in needs)
    if n_jobs == 1:  # the first ready task in order, each time
        assert started == [0, 1, 4, 2, 3]


def test_run_tasks_refuses_prerequisites_that_wait_for_each_other() -> None:
    with pytest.raises(ValueError, match="wait for each other"):
        run_tasks(abs, [1, 2], n_jobs=1, after=[(1,), (0,)])
    with pytest.raises(ValueError, match="wait for each other"):
        run_tasks(abs, [1, 2], n_jobs=2, after=[(1,), (0,)])
