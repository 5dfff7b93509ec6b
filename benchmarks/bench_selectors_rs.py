"""Per-call cost of the private agent's selection step: random stopping, kRR and the baselines.

    python benchmarks/bench_selectors_rs.py [--calls 20000] [--repeat 3] [--naive-calls 2000]

The private bandit agent calls ``select_batch(q, d, rng)`` once per step on all its R rows, with
K arms. This script times that call (best of ``--repeat`` loops of ``--calls`` calls, the
selector and the arrays built once) for ``rs``, ``rs_tnb``, ``krr``, ``greedy`` and ``uniform``
at R in {1, 100} and K in {2, 10}, and prints the time per call, the time per row, and the
ratio to a plain per-row numpy loop of the same mechanism measured in the same run (the way one
would write it without batching; timed on ``--naive-calls`` calls). Run it on two checkouts
(``PYTHONPATH=<tree> python benchmarks/bench_selectors_rs.py``) for a before/after comparison.
Not part of the test suite.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable

import numpy as np

from dpbandits import selectors
from dpbandits.selectors.random_stopping import sample_tnb

EPS = 1.0
GAMMA = 0.05


def _argmax_ties(q: np.ndarray, rng: np.random.Generator) -> int:
    return int(rng.choice(np.flatnonzero(q == q.max())))


def _naive_rs(eta: float) -> Callable[..., int]:
    def f(q: np.ndarray, d: np.ndarray, rng: np.random.Generator) -> int:
        n = int(sample_tnb(eta, GAMMA, 1, rng)[0])
        a = rng.integers(q.size, size=n)
        v = q[a] + rng.laplace(0, (2 + eta) * d[a] / EPS)
        return int(a[np.argmax(v)])

    return f


def _naive_krr(q: np.ndarray, d: np.ndarray, rng: np.random.Generator) -> int:
    k = q.size
    best = _argmax_ties(q, rng)
    if rng.random() < math.exp(EPS) / (math.exp(EPS) + k - 1):
        return best
    return int(rng.choice([a for a in range(k) if a != best]))


CASES: list[tuple[str, dict[str, float], Callable[..., int]]] = [
    ("rs", {"gamma": GAMMA}, _naive_rs(1.0)),
    ("rs_tnb", {"gamma": GAMMA}, _naive_rs(0.0)),
    ("krr", {}, _naive_krr),
    ("greedy", {}, lambda q, d, rng: _argmax_ties(q, rng)),
    ("uniform", {}, lambda q, d, rng: int(rng.integers(q.size))),
]


def _best_of(fn: Callable[[], object], repeat: int) -> float:
    best = math.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--naive-calls", type=int, default=2_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    n, nn = args.calls, args.naive_calls
    print(f"select_batch: best of {args.repeat} loops of {n} calls; per-row loop: {nn} calls\n")
    header = (
        f"{'selector':<9} {'K':>3} {'R':>4} {'us/call':>9} {'ns/row':>9} "
        f"{'per-row loop us/call':>21} {'speed-up':>9}"
    )
    print(header)
    print("-" * len(header))
    data = np.random.default_rng(0)
    for name, params, naive in CASES:
        sel = selectors.make(name, epsilon=EPS, **params)
        for k in (2, 10):
            for r in (1, 100):
                # the agent's situation: close means (so every arm gets drawn), d around 1
                q = 0.5 + 0.01 * data.normal(size=(r, k))
                d = data.uniform(0.5, 2.0, size=(r, k))
                gen = np.random.default_rng(1)
                sel.select_batch(q, d, gen)  # compile / warm caches outside the timing

                def loop(sel=sel, q=q, d=d, gen=gen) -> None:  # type: ignore[no-untyped-def]
                    f = sel.select_batch
                    for _ in range(n):
                        f(q, d, gen)

                def naive_loop(q=q, d=d, gen=gen, naive=naive) -> None:  # type: ignore[no-untyped-def]
                    for _ in range(nn):
                        for i in range(q.shape[0]):
                            naive(q[i], d[i], gen)

                t = _best_of(loop, args.repeat) / n
                tn = _best_of(naive_loop, 1) / nn
                print(
                    f"{name:<9} {k:>3} {r:>4} {1e6 * t:>9.2f} {1e9 * t / r:>9.0f} "
                    f"{1e6 * tn:>21.1f} {tn / t:>8.1f}x"
                )


if __name__ == "__main__":
    main()
