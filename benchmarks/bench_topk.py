"""Benchmark: private top-k of d = 10^5 scores, k = 100 -- time and peak memory.

Compares the batched canonical Lipschitz mechanism (Algorithm 2 of paper 002, the h loop
vectorised over t) with a naive transcription of Algorithm 2 (the double loop over t and h in
Python, one class at a time), plus the one-shot Gumbel, peeling and joint mechanisms. Prints
ratios measured in this run. ``--quick`` uses d = 10^4 (the naive loop is slow).

    PYTHONPATH=. python -P benchmarks/bench_topk.py [--quick] [--no-joint]
"""

from __future__ import annotations

import argparse
import math
import time
import tracemalloc

import numpy as np

from dpbandits import topk


def naive_algorithm2(q: np.ndarray, k: int, eps: float, gamma: float, rng) -> np.ndarray:
    """Algorithm 2 line by line (partition classes), scalar Python loops: the reference."""
    d = q.size
    order = np.argsort(-q, kind="stable")
    x = q[order] - q[order[0]]
    e1, e2 = (1 - gamma) * eps, gamma * eps
    best_v = (e2 - e1) / 2 * x[k - 1] + rng.standard_exponential()
    best_h, best_t = k - 1, k
    for t in range(k + 1, d + 1):
        log_m = 0.0
        for h in range(k - 1, -1, -1):
            if h < k - 1:
                log_m += math.log((t - h - 2) / (k - h - 1))  # C(t-h-2, k-h-1) update
            log_s = math.log(rng.standard_exponential()) - log_m
            s = math.exp(log_s)
            noise = -math.log(-math.expm1(-s)) if log_s > -20 else -log_s + s / 2
            v = e2 / 2 * x[t - 1] - e1 / 2 * x[h] + noise
            if v > best_v:
                best_v, best_h, best_t = v, h, t
    body = rng.choice(np.arange(best_h + 1, best_t - 1), size=k - best_h - 1, replace=False)
    pos = np.concatenate([np.arange(best_h), body, [best_t - 1]]).astype(int)
    return np.sort(order[pos])


def measure(fn) -> tuple[float, float]:
    tracemalloc.start()
    t0 = time.perf_counter()
    fn()
    elapsed = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
    return elapsed, peak


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="d = 10^4 instead of 10^5")
    ap.add_argument("--no-joint", action="store_true", help="skip the joint mechanism (~1 GB)")
    args = ap.parse_args()
    d, k, eps = (10_000 if args.quick else 100_000), 100, 1.0
    q = np.random.default_rng(0).normal(size=d) * 10
    rows = []
    for name in (
        "canonical_lipschitz",
        "gumbel",
        "peeling",
        *(() if args.no_joint else ("joint",)),
    ):
        sel = topk.make(name, epsilon=eps)
        t, mem = measure(lambda sel=sel: sel.select(q, k, 1.0, rng=1))
        rows.append((name, t, mem))
    # the scalar loop takes minutes at d = 10^5: compare both at d_naive = 10^4
    qn = q[:10_000]
    t_naive, mem_naive = measure(
        lambda: naive_algorithm2(qn, k, eps, 0.5, np.random.default_rng(1))
    )
    cl = topk.make("canonical_lipschitz", epsilon=eps)
    t_small, _ = measure(lambda: cl.select(qn, k, 1.0, rng=1))
    sel = topk.make("canonical_lipschitz", epsilon=eps)
    t_batch, mem_batch = measure(
        lambda: sel.select(np.broadcast_to(q[: d // 10], (10, d // 10)), k, 1.0, rng=2)
    )
    print(f"top-k of d = {d} scores, k = {k}, eps = {eps} (one call, one row)\n")
    print(f"{'mechanism':<26}{'time [s]':>10}{'peak [MB]':>11}")
    for name, t, mem in rows:
        print(f"{name:<26}{t:>10.3f}{mem:>11.1f}")
    t_cl = rows[0][1]
    print(
        f"\nat d = {qn.size}: naive Algorithm 2 loop {t_naive:.2f} s ({mem_naive:.1f} MB) vs "
        f"batched {t_small:.3f} s: {t_naive / t_small:.0f}x"
    )
    print(f"canonical Lipschitz / one-shot Gumbel: {t_cl / rows[1][1]:.1f}x time")
    print(f"batch of 10 rows of d = {d // 10}: {t_batch:.3f} s, {mem_batch:.1f} MB")


if __name__ == "__main__":
    main()
