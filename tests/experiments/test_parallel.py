"""Stopping a local process pool: no worker and no thread of the executor is left behind."""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing as mp
import os
import struct
import sys
import time

import pytest

from dpbandits.parallel import TaskTime, _init_worker, pool_context, run_tasks


def _half_a_result(fd: int) -> None:
    """Write the first bytes of a 1 MB result message into the executor's result pipe (``fd``,
    inherited by the forked worker), then hang: as a worker stopped mid-send would leave it."""
    os.write(fd, struct.pack("!i", 1 << 20) + b"x" * 100)
    time.sleep(600)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs the fork start method")
def test_stopping_a_pool_mid_send_leaves_no_thread_waiting_for_the_rest() -> None:
    from dpbandits.parallel import _terminate_pool

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
