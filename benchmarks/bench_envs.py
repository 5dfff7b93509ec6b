"""Speed of the bandit environments: ``Env.step`` against the native ``VectorEnv`` (App. H-1).

Prints steps per second of

- ``TwoArmedShift.step`` (one replication, the object a student uses), raw and through
  ``gymnasium.make`` (with Gymnasium's wrappers);
- ``TwoArmedShiftVectorEnv.step`` with R = 100 (the regret engine's chunk) and R = 1_000, per
  copy, i.e. copies x steps per second;
- Gymnasium's generic ``SyncVectorEnv`` over R = 100 ``Env`` copies (``make_vec(...,
  vectorization_mode="sync")``), the peer the native VectorEnv replaces;

and the ratios measured in this run. Usage: ``python benchmarks/bench_envs.py [--steps N]``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import gymnasium as gym
import numpy as np

import envs

ENV_ID = "dpbandits/TwoArmedShift-v0"


def _rate(step: Callable[[], object], n_steps: int, reset: Callable[[], object]) -> float:
    """Best of 3 timings of ``n_steps`` calls; returns calls per second."""
    best = np.inf
    for _ in range(3):
        reset()
        t0 = time.perf_counter()
        for _ in range(n_steps):
            step()
        best = min(best, time.perf_counter() - t0)
    return n_steps / best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40_000, help="steps per timing (< horizon)")
    args = parser.parse_args(argv)
    n = args.steps
    horizon = max(50_000, n + 1)
    rows: list[tuple[str, float, float]] = []  # (label, calls/s, copy-steps/s)

    env = envs.TwoArmedShift(horizon=horizon)
    rate = _rate(lambda: env.step(1), n, lambda: env.reset(seed=0))
    rows.append(("Env.step (raw TwoArmedShift)", rate, rate))

    wrapped = gym.make(ENV_ID, horizon=horizon)
    rate = _rate(lambda: wrapped.step(1), n, lambda: wrapped.reset(seed=0))
    rows.append(("Env.step via gymnasium.make (wrappers)", rate, rate))

    for R, steps in ((100, n), (1_000, max(1, n // 4))):
        vec = envs.TwoArmedShiftVectorEnv(num_envs=R, horizon=horizon)
        acts = (np.arange(R) % 2).astype(np.int64)
        rate = _rate(
            lambda vec=vec, acts=acts: vec.step(acts), steps, lambda vec=vec: vec.reset(seed=0)
        )
        rows.append((f"VectorEnv.step, R={R}", rate, rate * R))

    R = 100
    sync = gym.make_vec(ENV_ID, num_envs=R, vectorization_mode="sync", horizon=horizon)
    acts = (np.arange(R) % 2).astype(np.int64)
    rate = _rate(lambda: sync.step(acts), max(1, n // 200), lambda: sync.reset(seed=0))
    rows.append((f"SyncVectorEnv (gymnasium), R={R}", rate, rate * R))

    print(f"{'':44s} {'calls/s':>12s} {'us/call':>9s} {'copy-steps/s':>14s}")
    for label, calls, copy_steps in rows:
        print(f"{label:44s} {calls:12,.0f} {1e6 / calls:9.2f} {copy_steps:14,.0f}")
    env_rate = rows[0][2]
    vec1000 = rows[3][2]
    print()
    print(f"VectorEnv(R=1_000) per copy / Env.step:        {vec1000 / env_rate:8.1f}x")
    print(f"VectorEnv(R=100) / SyncVectorEnv(R=100):       {rows[2][2] / rows[4][2]:8.1f}x")
    engine = 7 * 50_000 / rows[2][1]
    print(f"regret engine, 7 agents x 50_000 steps, R=100: {engine:8.2f} s of environment time")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
