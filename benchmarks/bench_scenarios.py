"""Speed of the selection-scenario harness (issue 6 target: scenario 1 at paper size <= 30 s).

Scenario 1 at the paper's size -- 100 candidates, 10_000 trials, 12 eps values (0.01 .. 16) --
with every private built-in selector. Prints the time per selector (time inside ``select``,
measured by :func:`dpbandits.scenarios.evaluation.evaluate`), the harness overhead and the total,
and,
for comparison in the same run, a naive per-trial loop (one ``select`` call per trial on a
``(K,)`` vector) on a subsample, extrapolated to 10_000 trials.

    python benchmarks/bench_scenarios.py [--trials 10000] [--naive-trials 200]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from dpbandits import scenarios, selectors
from dpbandits.scenarios.evaluation import evaluate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=10_000)
    parser.add_argument("--naive-trials", type=int, default=200)
    parser.add_argument("--scenario", default="1")
    args = parser.parse_args()

    names = [n for n in selectors.available() if selectors.make(n, epsilon=1.0).private]
    eps = scenarios.PAPER_EPSILONS
    print(
        f"scenario {args.scenario}: {args.trials} trials x 100 candidates x {eps.size} eps; "
        f"private selectors: {', '.join(names)}"
    )
    t0 = time.perf_counter()
    ev = evaluate(args.scenario, names, eps, args.trials, seed=0, keep_errors=False)
    total = time.perf_counter() - t0
    in_select = sum(ev.timings.values())

    # Naive reference: one call per trial, no batching.
    data = scenarios.get(args.scenario).sample(args.trials, seed=0)
    m = min(args.naive_trials, args.trials)
    naive: dict[str, float] = {}
    rng = np.random.default_rng(1)
    for name in names:
        sel = selectors.make(name, epsilon=1.0)
        t = time.perf_counter()
        for i in range(m):
            sel.select(data.scores[i], data.sensitivities, rng)
        naive[name] = (time.perf_counter() - t) / m * args.trials * eps.size

    print(f"\n{'selector':<24}{'batched [s]':>12}{'naive loop [s]':>16}{'speed-up':>10}")
    for name in names:
        b = ev.timings[name]
        print(f"{name:<24}{b:>12.2f}{naive[name]:>16.1f}{naive[name] / max(b, 1e-9):>10.0f}x")
    print(
        f"\ntotal {total:.2f} s (selectors {in_select:.2f} s, harness {total - in_select:.2f} s: "
        f"data generation, errors, correlations); target <= 30 s: "
        f"{'OK' if total <= 30 else 'MISSED'}"
    )
    print(f"naive loop (extrapolated from {m} trials): {sum(naive.values()):.0f} s")


if __name__ == "__main__":
    main()
