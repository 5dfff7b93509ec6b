"""Regret of private agents on a Bernoulli bandit, by quantile mechanism (docs/quantiles.md).

Not part of the test suite. Two Bernoulli arms with means (0.3, 0.7), swapped at half of the
horizon (``dpbandits/PiecewiseBandit-v0``, ``arm="bernoulli"``); private agents with
``eps_M = eps_p = 1`` and ``eps_S = 16``, window 200, levels 0.1/0.9. For each selector the
sensitivity estimates come from

- ``smith``: Smith's mechanism (the method before the grid mechanism existed);
- ``grid``: the grid mechanism (the default);
- ``oracle``: no estimate, the true 10%-90% range (1 for both arms).

Prints the mean total regret ± SE per (selector, method), the ratio grid / smith and
oracle / smith with the paired z of the difference (the runs share the environment's reward
noise), and the mean sensitivity estimate at the end of the run.

Usage: ``python benchmarks/bench_bernoulli_bandit.py [--runs 40] [--horizon 20000]``.
"""

from __future__ import annotations

import argparse
import math
import time
from typing import Any

import numpy as np

import agents
from dpbandits.experiments import run


class TrueRange:
    """Sensitivity estimator that always reports the true range (1: Bernoulli arms)."""

    def __init__(self, n_runs: int, n_arms: int, rng: Any) -> None:
        self.values = np.ones((n_runs, n_arms))
        self.n_estimates = np.zeros((n_runs, n_arms), dtype=np.int64)

    def update(self, actions: Any, rewards: Any) -> None:
        pass


def true_range(n_runs: int, n_arms: int, rng: Any) -> TrueRange:
    return TrueRange(n_runs, n_arms, rng)


def _cell(x: np.ndarray) -> str:
    return f"{x.mean():,.0f} ± {x.std(ddof=1) / math.sqrt(x.size):,.0f}"


def _ratio(x: np.ndarray, base: np.ndarray) -> str:
    """Ratio of mean regrets and the paired z of the difference (the runs share the noise)."""
    diff = x - base
    z = diff.mean() / (diff.std(ddof=1) / math.sqrt(x.size))
    return f"{x.mean() / base.mean():.3f} ({z:+.1f})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--horizon", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=1)
    args = ap.parse_args()
    t_change = args.horizon // 2
    env = {
        "id": "dpbandits/PiecewiseBandit-v0",
        "arm": "bernoulli",
        "segments": [(0, [0.3, 0.7]), (t_change, [0.7, 0.3])],
        "horizon": args.horizon,
    }
    params = {"rnm": {}, "gem": {"beta": 0.05}, "mgem": {"beta": 0.05}, "rs": {"gamma": 0.05}}
    agent_map: dict[str, Any] = {}
    for sel, extra in params.items():
        for method in ("smith", "grid", "oracle"):
            kw: dict[str, Any] = dict(epsilon_select=16.0, **extra)
            if method == "oracle":
                kw["sensitivity"] = true_range
            else:
                kw["quantile_method"] = method
            agent_map[f"{sel}/{method}"] = agents.PrivateAgent(sel, **kw)
    t0 = time.perf_counter()
    res = run(env, agent_map, n_runs=args.runs, seed=args.seed, progress=False, n_jobs=args.jobs)
    print(
        f"# Bernoulli bandit (0.3, 0.7) swapped at {t_change}, horizon {args.horizon}, "
        f"{args.runs} runs, seed {args.seed}, eps_S = 16, eps_M = eps_p = 1 "
        f"({time.perf_counter() - t0:.0f} s)"
    )
    print()
    print("| selector | smith | grid (default) | true range | grid / smith (paired z) "
          "| true / smith (paired z) | mean d at the end: smith / grid |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for sel in params:
        tot = {m: res.data[f"{sel}/{m}"]["total_regret"] for m in ("smith", "grid", "oracle")}
        cells = [_cell(tot[m]) for m in ("smith", "grid", "oracle")]
        ratios = [_ratio(tot[m], tot["smith"]) for m in ("grid", "oracle")]
        d_end = {
            m: float(res.data[f"{sel}/{m}"]["sensitivities"][-1].mean()) for m in ("smith", "grid")
        }
        print(
            f"| {sel} | {' | '.join(cells)} | {' | '.join(ratios)} "
            f"| {d_end['smith']:.3f} / {d_end['grid']:.3f} |"
        )


if __name__ == "__main__":
    main()
