"""Settings of every test process.

BLAS threads: numpy's OpenBLAS starts one thread per core in each process and its threads
spin while they wait for work. The README's test command runs one pytest-xdist worker per core
(``-n auto``), so each worker's BLAS threads compete with the other workers for the same cores:
a test with many small linear-algebra calls (eigenvalues of 10x10 matrices, products of small
matrices) then burns about twice the CPU for the same numbers (measured: the recommendation
tables' test 5.0-5.8 CPU-s with 2 BLAS threads per worker, 2.6 with 1, on 2 cores). Each worker
gets its share of the cores instead, unless the user chose a number. This is set here, before
the test modules import numpy (OpenBLAS reads it when it loads), and is inherited by the
processes the tests start.

The garbage collector: a test process holds millions of tracked objects (numba's types, typed
IR and compiled libraries of hundreds of kernels, the three packages' modules), and each full
collection walks all of them: 21 of the README command's 399 CPU-s, 16.8 of them in full
collections. Collecting the youngest generation every 20 000 allocations instead of 700 (and
the older ones as rarely) took that to 7.6 CPU-s (docs/performance.md, "The test command's
cost"). Cycles are still collected; no test depends on when (those that need it call
``gc.collect()``). The library does not change the collector's thresholds.
"""

from __future__ import annotations

import gc
import os

_BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS")


def _blas_threads_per_worker() -> None:
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0") or 0)
    if workers < 1 or any(name in os.environ for name in _BLAS_THREADS):
        return  # one test process (it may use every core), or the user's own setting
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    share = str(max(1, (cores or 1) // workers))
    for name in _BLAS_THREADS:
        os.environ[name] = share


_blas_threads_per_worker()

gc.set_threshold(20_000, 20, 20)
