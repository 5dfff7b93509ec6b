"""Benchmark: cost of the floating-point-safe private means (``noise="discrete"``) against the
default continuous Laplace noise (``noise="laplace"``); not part of the test suite.

Prints, all measured in this run:

1. per-step cost of ``PrivateMeans.update + means`` at R=100, K=2 over a bandit-like action
   sequence (best of 5, the two noises alternating), and their ratio;
2. the wall time of a private agent's run (RNM selector, the two-armed shift of App. H-1,
   R=100) with each noise (its means built by a ``means=`` factory; best of 3, alternating),
   and their ratio;
3. the standard deviation of the release noise at a few counts, both noises, next to the
   closed form (for ``[0, 1]`` the grid does not widen the range: the two laws have the same
   variance up to ``gamma^2 / 6`` per node).

Usage: ``python benchmarks/bench_continual_noise.py [--quick]``.  Results are quoted in
``docs/floating-point.md``.
"""

from __future__ import annotations

import argparse
import functools
import time
from typing import Any

import numpy as np

from dpbandits.continual import PrivateMeans


def time_updates(noise: str, steps: int, runs: int = 100, arms: int = 2) -> float:
    """Seconds per ``update + means`` step."""
    rng = np.random.default_rng(0)
    actions = rng.integers(0, arms, size=(steps, runs))
    rewards = rng.random((steps, runs))
    pm = PrivateMeans(runs, arms, 1.0, n_max=steps, rng=1, noise=noise)
    t0 = time.perf_counter()
    for t in range(steps):
        pm.update(actions[t], rewards[t])
        pm.means(copy=False)
    return (time.perf_counter() - t0) / steps


def best_alternating(fn: Any, repeat: int) -> dict[str, float]:
    """``min`` over ``repeat`` rounds of ``fn(noise)`` for both noises, alternating, so that a
    shared machine's changing load hits both alike."""
    best = {"laplace": np.inf, "discrete": np.inf}
    for _ in range(repeat):
        for noise in best:
            best[noise] = min(best[noise], fn(noise))
    return best


def means_factory(noise: str, horizon: int, n_runs: int, n_arms: int, rng: Any) -> PrivateMeans:
    """The default private means of the agent (eps_M = 1, rewards in [0, 1]) with ``noise``."""
    return PrivateMeans(n_runs, n_arms, 1.0, n_max=horizon, rng=rng, noise=noise)


def time_agent(noise: str, horizon: int, runs: int = 100) -> float:
    """Seconds for one private agent's run on the two-armed shift."""
    import agents
    from dpbandits.experiments import run, shift_env

    agent = agents.PrivateAgent(
        "rnm", epsilon_select=1.0, means=functools.partial(means_factory, noise, horizon)
    )
    t0 = time.perf_counter()
    run(shift_env(t_shift=horizon // 2, horizon=horizon), {noise: agent}, n_runs=runs, seed=0,
        progress=False, n_jobs=1)  # fmt: skip
    return time.perf_counter() - t0


def hybrid_sd(n: int, eps: float = 1.0, b: float = 1.0) -> float:
    """Closed form of App. H: ``Var Z_n = (k+1) 2 (2b/eps)^2 + popcount(m) 2 (2kb/eps)^2``."""
    k = n.bit_length() - 1
    var = (k + 1) * 2 * (2 * b / eps) ** 2 + bin(n - 2**k).count("1") * 2 * (2 * k * b / eps) ** 2
    return float(np.sqrt(var))


def release_sd(noise: str, ns: list[int], runs: int = 20_000) -> dict[int, float]:
    """Empirical standard deviation of ``S_n + Z_n - S_n`` at counts ``ns`` (rewards 0.5)."""
    pm = PrivateMeans(runs, 1, 1.0, rng=2, noise=noise)
    zeros, x = np.zeros(runs, dtype=np.int64), np.full(runs, 0.5)
    out = {}
    for n in range(1, max(ns) + 1):
        pm.update(zeros, x)
        if n in ns:
            out[n] = float(np.std(pm.releases[:, 0] - pm.sums[:, 0]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer steps")
    args = parser.parse_args()
    steps = 5_000 if args.quick else 20_000
    horizon = 2_000 if args.quick else 10_000

    print(f"== 1. PrivateMeans.update + means, R=100, K=2, {steps} steps")
    per_step = best_alternating(lambda noise: time_updates(noise, steps), 5)
    for noise, sec in per_step.items():
        print(f"  {noise:9s} {sec * 1e6:8.1f} us/step")
    print(f"  ratio discrete / laplace: {per_step['discrete'] / per_step['laplace']:.2f}")

    print(f"== 2. private agent (RNM), two-armed shift, R=100, horizon {horizon}")
    time_agent("laplace", 500)  # warm up: imports, environment registration
    wall = best_alternating(lambda noise: time_agent(noise, horizon), 3)
    for noise, sec in wall.items():
        print(f"  {noise:9s} {sec:8.2f} s")
    print(f"  ratio discrete / laplace: {wall['discrete'] / wall['laplace']:.2f}")

    ns = [1, 100, 1000]
    print("== 3. sd of the release noise Z_n, eps=1, [lo, hi] = [0, 1] (20_000 streams)")
    sd = {noise: release_sd(noise, ns) for noise in ("laplace", "discrete")}
    for n in ns:
        print(f"  n={n:5d}  laplace {sd['laplace'][n]:8.3f}  discrete {sd['discrete'][n]:8.3f}"
              f"  closed form {hybrid_sd(n):8.3f}")  # fmt: skip


if __name__ == "__main__":
    main()
