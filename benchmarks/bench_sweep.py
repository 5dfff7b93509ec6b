"""Sweep overhead per cell (config checks, task dispatch, store write, summary) against the cost
of a Fig. 9-sized cell (7 agents x 100 runs x 50 000 steps, one worker).

    PYTHONPATH=. python benchmarks/bench_sweep.py [--fig9-scale 1.0] [--cells 40]

Prints times measured in this run and their ratio. ``--fig9-scale 0.1`` runs a tenth of the
horizon and scales the time up (the engine's cost is linear in the horizon).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from dpbandits.experiments.config import Experiment
from dpbandits.experiments.sweep import sweep

ROOT = Path(__file__).resolve().parents[1]


def tiny(n_cells: int) -> Experiment:
    return Experiment.from_dict({
        "experiment": {"env": "dpbandits/TwoArmedShift-v0", "n_runs": 2, "trace": False,
                       "env_kwargs": {"t_shift": 10, "horizon": 20}},
        "agents": {"UCB": {"kind": "ucb"}},
        "sweep": {"agents.UCB.alpha": [1.0 + i / n_cells for i in range(n_cells)]},
    })  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cells", type=int, default=40)
    ap.add_argument("--fig9-scale", type=float, default=1.0)
    args = ap.parse_args()

    exp = tiny(args.cells)
    cells = exp.cells()
    # warm-up: a first run in a process loads (or, on a new machine, compiles) the kernels, a
    # one-off that would otherwise be counted as the first cell's time
    cells[0].experiment.run(seed=cells[0].seed, n_jobs=1, progress=False)
    t0 = time.perf_counter()
    for c in cells:
        c.experiment.run(seed=c.seed, n_jobs=1, progress=False)
    direct = (time.perf_counter() - t0) / len(cells)
    for scheduler in ("serial", "processes"):
        with tempfile.TemporaryDirectory() as d:
            t0 = time.perf_counter()
            res = sweep(exp, d, scheduler=scheduler, n_jobs=2, progress=False, plots=False)
            first = time.perf_counter() - t0
            t0 = time.perf_counter()
            sweep(exp, d, scheduler=scheduler, n_jobs=2, progress=False, plots=False)
            resumed = time.perf_counter() - t0
        assert res.ok
        over = first / len(cells) - direct
        per = first / len(cells) * 1e3
        print(
            f"{scheduler:>9}: {len(cells)} tiny cells in {first:.2f} s: {per:.1f} ms/cell, of "
            f"which sweep overhead ~{over * 1e3:.1f} ms (a bare run: {direct * 1e3:.1f} ms); "
            f"re-run with every cell stored: {resumed:.2f} s "
            f"({resumed / len(cells) * 1e3:.1f} ms/cell)"
        )
        if scheduler == "serial":
            serial_over = over

    fig9 = Experiment.from_toml(ROOT / "examples" / "configs" / "fig9.toml")
    if args.fig9_scale != 1.0:
        h = int(50_000 * args.fig9_scale)
        fig9 = fig9.with_values({"experiment.env_kwargs.horizon": h,
                                 "experiment.env_kwargs.t_shift": int(0.6 * h)})  # fmt: skip
    warm = {"experiment.env_kwargs.horizon": 500, "experiment.env_kwargs.t_shift": 300}
    fig9.with_values(warm).run(n_jobs=1, progress=False)  # warm-up, as above
    t0 = time.perf_counter()
    fig9.run(n_jobs=1, progress=False)
    cell = (time.perf_counter() - t0) / args.fig9_scale
    note = f" (measured at scale {args.fig9_scale}, scaled)" if args.fig9_scale != 1 else ""
    print(f"Fig. 9-sized cell on one worker: {cell:.1f} s{note}")
    print(f"sweep overhead per cell / Fig. 9-sized cell: {serial_over / cell:.2e}")


if __name__ == "__main__":
    main()
