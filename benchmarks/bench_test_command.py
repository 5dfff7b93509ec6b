"""Benchmark of the README's test command: CPU, wall time, peak memory, and what compiles.

Runs ``python -m pytest`` (command (B) of the README: the everyday tests on the workers
pyproject's pytest settings give, ``slow`` deselected) in a fresh interpreter with an empty
kernel cache (its own temporary ``NUMBA_CACHE_DIR`` and ``XDG_CACHE_HOME``), as a new user's
first test run is. Reported from one run:

- CPU seconds (user + system of the test command and every process it started, as
  ``/usr/bin/time`` counts them), wall time, and the peak resident memory of the largest
  process;
- each test's CPU seconds, in its test process and in the processes it started, summed by
  test file;
- numba's compile events in the test processes (this file is also the pytest plugin that logs
  them, ``-p bench_test_command``): how many compilations and their CPU seconds, the same
  kernel and argument types compiled more than once (by the two test processes), the CPU of
  second and later compilations of one kernel for other argument types, and the kernels and
  test files that compile most. Compilations in the tests' own subprocesses are not logged
  (they load what the test processes compiled: the kernel cache is shared).

Target (issue 41, README "Install"): <= 400 CPU-s and <= 1.5 GB on 2 cores. The machine's load
is printed: other processes on the same cores slow the wall time and raise the CPU seconds.

Run:  python benchmarks/bench_test_command.py [--keep DIR] [-- extra pytest arguments]
"""

from __future__ import annotations

import argparse
import collections
import gc
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
_LOG_ENV = "DPBANDITS_BENCH_COMPILE_LOG"


# -- the pytest plugin (loaded in every test process with -p bench_test_command) -----------------
_state: dict[str, Any] = {"test": None, "started": []}


def pytest_configure(config: Any) -> None:  # noqa: ARG001
    log = os.environ.get(_LOG_ENV)
    if not log:
        return
    from numba.core import event  # numba's documented event API

    path = Path(log) / f"compiles-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}.jsonl"

    class Listener(event.Listener):
        # a stack of [start CPU, CPU of the compilations nested in it]
        def on_start(self, e: Any) -> None:
            _state["started"].append([time.process_time(), 0.0])

        def on_end(self, e: Any) -> None:
            start, nested = _state["started"].pop()
            cpu = time.process_time() - start
            depth = len(_state["started"])
            if depth:  # inside another compilation: also counted in the outer one's cpu
                _state["started"][-1][1] += cpu
            fn = getattr(e.data.get("dispatcher"), "py_func", None)
            name = f"{getattr(fn, '__module__', None)}.{getattr(fn, '__qualname__', fn)}"
            with path.open("a") as f:
                f.write(json.dumps({"test": _state["test"], "kernel": name, "cpu": cpu,
                                    "own": cpu - nested, "depth": depth, "pid": os.getpid(),
                                    "types": str(e.data.get("args"))}) + "\n")  # fmt: skip

    event.register("numba:compile", Listener())
    gc.callbacks.append(_gc_timer)


_gc: dict[str, float] = {"start": 0.0, "cpu": 0.0, "full": 0.0}


def _gc_timer(phase: str, info: dict[str, int]) -> None:
    """CPU spent in Python's cyclic garbage collector (of which in full collections)."""
    if phase == "start":
        _gc["start"] = time.process_time()
        return
    cpu = time.process_time() - _gc["start"]
    _gc["cpu"] += cpu
    if info["generation"] == 2:
        _gc["full"] += cpu


def pytest_unconfigure(config: Any) -> None:  # noqa: ARG001
    log = os.environ.get(_LOG_ENV)
    if log:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        with (Path(log) / f"process-{worker}.json").open("w") as f:
            json.dump({"cpu": time.process_time(), "gc": _gc["cpu"], "gc_full": _gc["full"]}, f)


def pytest_runtest_logstart(nodeid: str, location: Any) -> None:  # noqa: ARG001
    _state["test"] = nodeid


def _cpu() -> tuple[float, float]:
    """CPU seconds (user + system) of this process and of its finished children."""
    me, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: Any, nextitem: Any) -> Any:  # noqa: ARG001
    """Log each test's CPU (set-up, call and tear-down): in the test process and in the
    processes it started and waited for (subprocess runs, pools)."""
    log = os.environ.get(_LOG_ENV)
    before = _cpu()
    yield
    if log:
        after = _cpu()
        path = Path(log) / f"tests-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}.jsonl"
        with path.open("a") as f:
            f.write(json.dumps({"test": item.nodeid, "cpu": after[0] - before[0],
                                "children": after[1] - before[1]}) + "\n")  # fmt: skip


# -- the benchmark ------------------------------------------------------------------------------
def _test_summary(log: Path) -> None:
    rows = [json.loads(line) for f in sorted(log.glob("tests-*.jsonl")) for line in f.open()]
    if not rows:
        return
    own, kids = sum(r["cpu"] for r in rows), sum(r["children"] for r in rows)
    print(f"tests: {len(rows)}, {own:.0f} CPU-s in the test processes (compiling included) "
          f"+ {kids:.0f} CPU-s in the processes they started")  # fmt: skip
    by_file: collections.Counter[str] = collections.Counter()
    for r in rows:
        by_file[r["test"].split("::")[0]] += r["cpu"] + r["children"]
    print("  test files costing most (CPU-s, theirs and their processes'):")
    for name, cpu in by_file.most_common(15):
        print(f"    {cpu:6.1f}  {name}")
    print("  tests costing most (CPU-s: own + processes started):")
    for r in sorted(rows, key=lambda r: -(r["cpu"] + r["children"]))[:15]:
        print(f"    {r['cpu']:5.1f} + {r['children']:5.1f}  {r['test'][:100]}")


def _summary(log: Path) -> None:
    for path in sorted(log.glob("process-*.json")):
        p = json.loads(path.read_text())
        print(f"{path.stem}: {p['cpu']:.0f} CPU-s, of which {p['gc']:.1f} in the garbage "
              f"collector ({p['gc_full']:.1f} in full collections)")  # fmt: skip
    _test_summary(log)
    every = [json.loads(line) for f in sorted(log.glob("compiles-*.jsonl")) for line in f.open()]
    if not every:
        print("no compile events logged")
        return
    _repeats(every)
    rows = [r for r in every if r["depth"] == 0]  # the outermost: their cpu holds the nested
    total = sum(r["cpu"] for r in rows)
    exact = collections.Counter((r["kernel"], r["types"]) for r in rows)
    by_kernel: dict[str, list[float]] = collections.defaultdict(list)
    by_file: collections.Counter[str] = collections.Counter()
    for r in rows:
        by_kernel[r["kernel"]].append(r["cpu"])
        by_file[(r["test"] or "?").split("::")[0]] += r["cpu"]
    per_types: dict[str, dict[str, float]] = collections.defaultdict(dict)
    for r in rows:  # one compilation per kernel and types (the first), the others are repeats
        per_types[r["kernel"]].setdefault(r["types"], r["cpu"])
    extra = sum(sum(v.values()) - max(v.values()) for v in per_types.values())
    print(f"compilations in the test processes: {len(rows)}, {total:.0f} CPU-s")
    print(f"  same kernel and types compiled again: {sum(n - 1 for n in exact.values())}")
    print(f"  later compilations of a kernel for other types: {extra:.0f} CPU-s")
    print("  kernels compiling most (CPU-s, compilations):")
    for name, cpus in sorted(by_kernel.items(), key=lambda kv: -sum(kv[1]))[:12]:
        print(f"    {sum(cpus):6.1f} {len(cpus):3d}  {name[-90:]}")
    print("  test files compiling most (CPU-s):")
    for name, cpu in by_file.most_common(10):
        print(f"    {cpu:6.1f}  {name}")


def _repeats(every: list[dict[str, Any]]) -> None:
    """Compilations of a kernel for types another process (or this one) had compiled already,
    at any depth (a kernel compiled inside its caller's compilation included): each one's own
    CPU, without the compilations nested in it. The disk cache should make them rare: a
    process loads what another one saved, unless both compile it at the same time."""
    seen: dict[tuple[str, str], int] = {}
    again, cpu = 0, 0.0
    for r in every:  # in each process's order; the processes' files one after the other
        key = (r["kernel"], r["types"])
        if key in seen:
            again, cpu = again + 1, cpu + r["own"]
        else:
            seen[key] = r["pid"]
    print(f"compilations at any depth: {len(every)} ({len(seen)} kernels and types), "
          f"{sum(r['own'] for r in every):.0f} CPU-s; the same kernel and types compiled "
          f"again: {again}, {cpu:.1f} CPU-s")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="keep the kernel cache and the logs here")
    parser.add_argument("pytest_args", nargs="*", help="more arguments for pytest (after --)")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-test-command-"))
    for sub in ("numba", "xdg", "log"):
        (work / sub).mkdir(parents=True, exist_ok=True)
    path = os.pathsep.join([str(ROOT / "benchmarks"), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "NUMBA_CACHE_DIR": str(work / "numba"),
           "XDG_CACHE_HOME": str(work / "xdg"), _LOG_ENV: str(work / "log"),
           "PYTHONPATH": path.rstrip(os.pathsep)}  # fmt: skip
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "bench_test_command", *args.pytest_args]
    print(f"load before: {os.getloadavg()[0]:.1f}; {' '.join(cmd)}", flush=True)
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):  # no .pyc files are written or reused
        print(
            "PYTHONDONTWRITEBYTECODE is set: every test process compiles the library's and "
            "the tests' source (and rewrites the tests' asserts) again, ~5 CPU-s each"
        )
    start = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env)
    _, status, usage = os.wait4(proc.pid, 0)  # the rusage of the command and its children
    wall = time.monotonic() - start
    print(f"exit code {os.waitstatus_to_exitcode(status)}; load after: {os.getloadavg()[0]:.1f}")
    print(f"CPU: {usage.ru_utime + usage.ru_stime:.0f} s ({usage.ru_utime:.1f} user + "
          f"{usage.ru_stime:.1f} system); wall {wall / 60:.0f} min {wall % 60:.0f} s; "
          f"peak of the largest process {usage.ru_maxrss / 2**20:.2f} GB")  # fmt: skip
    _summary(work / "log")
    if args.keep is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
