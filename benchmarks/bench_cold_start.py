"""Benchmark of the first run on a machine: commands timed with an empty kernel cache, then again.

Each command runs in a fresh interpreter with its own empty ``NUMBA_CACHE_DIR`` (a temporary
directory), which is where every compiled kernel of the library is then written and read
(``dpbandits.core.jit``): the *cold* run compiles what it needs, the *warm* run right after it
loads it. Target (docs/performance.md, "Cold start"): the first ``dpbandits shift`` <= 3x the
next one on 2 cores, in wall time and in CPU time (both ratios are printed, each from a cold
and a warm run made back to back, so that the load of the machine mostly cancels out).

- ``shift``: ``dpbandits shift`` (Fig. 9: 7 agents x 100 replications x 50 000 steps, all
  cores, figures written to a temporary directory);
- ``run-ucb``: ``dpbandits run`` with one non-private agent (UCB) on the paper's environment;
- ``import``: ``python -c "import agents"``.

For each: wall seconds and CPU seconds (the process and its children: worker processes,
compiling processes), cold and warm, and the cold/warm ratios of both, from one run of this
script (with ``--repeat N``, N pairs and the spread of their ratios);
and the line the cold run printed before compiling, if any. The machine's load is printed:
other processes on the same cores slow every number down.

Run:  python benchmarks/bench_cold_start.py [--only shift,run-ucb,import] [--repeat 1]
(``PYTHONPATH=/other/checkout python benchmarks/bench_cold_start.py`` times another checkout
with the same interpreter.)
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any

COMMANDS: dict[str, list[str]] = {
    "shift": ["-m", "dpbandits", "shift", "--out", "{out}"],
    "run-ucb": ["-m", "dpbandits", "run", "--env", "dpbandits/TwoArmedShift-v0", "--agent",
                "UCB=ucb", "--out", "{out}"],
    "import": ["-c", "import agents"],
}


def timed(args: list[str], cache: str, out: str) -> dict[str, Any]:
    """Run ``python args`` with ``NUMBA_CACHE_DIR=cache``: wall and CPU seconds (children
    included), and the first stderr line that mentions compiling."""
    env = {**os.environ, "NUMBA_CACHE_DIR": cache}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, *(a.format(out=out) for a in args)], env=env,
                          capture_output=True, text=True)  # fmt: skip
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed:\n{proc.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = proc.stderr.replace("\r", "\n").splitlines()
    said = next((line.strip() for line in lines if "compiling" in line), "")
    return {"wall": wall, "cpu": cpu, "said": said}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(COMMANDS), help="commands to time")
    parser.add_argument("--repeat", type=int, default=1, help="cold/warm pairs per command")
    args = parser.parse_args()
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = [n for n in names if n not in COMMANDS]
    if unknown:
        parser.error(f"--only: unknown command(s) {unknown}; choose from {list(COMMANDS)}")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")  # fmt: skip
    print(f"{'command':10} {'cold wall':>10} {'cold cpu':>9} {'warm wall':>10} {'warm cpu':>9} "
          f"{'ratio wall':>10} {'ratio cpu':>9}")  # fmt: skip
    said: dict[str, str] = {}
    ratios: dict[str, list[tuple[float, float]]] = {}
    for name in names:
        for _ in range(args.repeat):
            root = tempfile.mkdtemp(prefix="dpbandits-cold-")
            try:
                cache, out = os.path.join(root, "numba"), os.path.join(root, "out")
                cold = timed(COMMANDS[name], cache, out)
                warm = timed(COMMANDS[name], cache, out)
            finally:
                shutil.rmtree(root, ignore_errors=True)
            said.setdefault(name, cold["said"])
            ratios.setdefault(name, []).append((cold["wall"] / warm["wall"],
                                                cold["cpu"] / warm["cpu"]))  # fmt: skip
            print(f"{name:10} {cold['wall']:9.1f}s {cold['cpu']:8.1f}s {warm['wall']:9.1f}s "
                  f"{warm['cpu']:8.1f}s {cold['wall'] / warm['wall']:9.1f}x "
                  f"{cold['cpu'] / warm['cpu']:8.1f}x", flush=True)  # fmt: skip
    for name, pairs in ratios.items():
        if len(pairs) > 1:  # the spread over the pairs, each measured back to back
            wall, cpu = sorted(p[0] for p in pairs), sorted(p[1] for p in pairs)
            print(f"{name}: cold / warm over {len(pairs)} pairs: wall "
                  f"{wall[0]:.1f}-{wall[-1]:.1f}x (median {wall[len(wall) // 2]:.1f}x), CPU "
                  f"{cpu[0]:.1f}-{cpu[-1]:.1f}x "
                  f"(median {cpu[len(cpu) // 2]:.1f}x)")  # fmt: skip
    for name, line in said.items():
        print(f"{name}: {line or '(no compile message)'}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
