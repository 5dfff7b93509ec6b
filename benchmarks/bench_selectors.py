"""Time per call of every selector on a batch of R rows, against a naive per-row loop.

    python benchmarks/bench_selectors.py [--rows 10000] [--naive-rows 2000] [--repeat 3]
    python benchmarks/bench_selectors.py --per-step [--calls 20000]

For each selector and K in {2, 100} the script times ``sel.select(q, d, rng)`` on R rows (best
of ``--repeat``) and a straightforward per-row implementation of the same mechanism (numpy on
one row at a time, the way one would write it without batching), both in the same run. The
naive loop is timed on ``--naive-rows`` rows and scaled linearly to R (it is a loop over
independent rows, so its time is linear in R); pass ``--naive-rows`` equal to ``--rows`` to
time it in full. Not part of the test suite.

A second reference column, ``1 Exp/cand``, is the time to merely draw one standard exponential
per candidate (``rng.standard_exponential((R, K))``): every noisy-max style selector draws at
least that much noise, so at K = 100 it bounds the speed-up of those selectors from above
(the per-row loop spends a similar time in the same C sampler). It is context only; the
speed-up column is always against the per-row loop.

``--per-step`` times instead the private bandit agents' per-step call: ``sel.select_batch(q, d,
rng)`` (the validated-input hook the agents call once per step) at R in {1, 100} rows and K in
{2, 10} candidates, for the report-noisy-max and GEM families, in ns per call and per row
(best of ``--repeat`` loops of ``--calls`` calls, after one warm-up call that also compiles).
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable

import numpy as np
from scipy.stats import spearmanr

from dpbandits import selectors
from dpbandits.selectors.random_stopping import sample_tnb

EPS = 1.0


# --- naive per-row implementations (one row q, d of shape (K,)) ------------------------------
def _argmax_ties(q, rng):
    return int(rng.choice(np.flatnonzero(q == q.max())))


def naive_uniform(q, d, rng):
    return int(rng.integers(q.size))


def naive_greedy(q, d, rng):
    return _argmax_ties(q, rng)


def naive_krr(q, d, rng):
    k = q.size
    best = _argmax_ties(q, rng)
    if rng.random() < math.exp(EPS) / (math.exp(EPS) + k - 1):
        return best
    return int(rng.choice([a for a in range(k) if a != best]))


def _naive_rnm(noise):
    def f(q, d, rng):
        scale = 2 * d.max() / EPS
        if noise == "exponential":
            z = rng.exponential(scale, q.size)
        elif noise == "gumbel":
            z = rng.gumbel(0, scale, q.size)
        else:
            z = rng.laplace(0, scale, q.size)
        return int(np.argmax(q + z))

    return f


def naive_exponential_mechanism(q, d, rng):
    w = np.exp(EPS * (q - q.max()) / (2 * d.max()))
    return int(rng.choice(q.size, p=w / w.sum()))


def naive_permute_and_flip(q, d, rng):
    p = np.exp(EPS * (q - q.max()) / (2 * d.max()))
    for a in rng.permutation(q.size):
        if rng.random() < p[a]:
            return int(a)
    raise AssertionError("unreachable: the maximiser accepts")


def naive_rnmh(q, d, rng):
    return int(np.argmax(q + rng.exponential(2 * d / EPS)))


def _naive_rs(eta):
    def f(q, d, rng):
        n = int(sample_tnb(eta, 0.05, 1, rng)[0])
        a = rng.integers(q.size, size=n)
        v = q[a] + rng.laplace(0, (2 + eta) * d[a] / EPS)
        return int(a[np.argmax(v)])

    return f


def _gem_row(q, d, eps, sign, rng):
    t = sign * 2 * math.log(q.size / 0.05) / eps
    s = q - t * d
    qp = ((s[:, None] - s[None, :]) / (d[:, None] + d[None, :])).min(axis=1)
    return int(np.argmax(qp + rng.exponential(2 / eps, q.size)))


def naive_gem(q, d, rng):
    return _gem_row(q, d, EPS, 1.0, rng)


def naive_mgem(q, d, rng):
    return _gem_row(q, d, EPS, -1.0, rng)


def naive_combined_gem(q, d, rng):
    rho = spearmanr(q, d).statistic if np.ptp(q) > 0 and np.ptp(d) > 0 else np.nan
    bit = not (rho < 0)
    ec = 0.6 * EPS
    if rng.random() >= math.exp(ec) / (math.exp(ec) + 1):
        bit = not bit
    return _gem_row(q, d, EPS - ec, -1.0 if bit else 1.0, rng)


CASES: list[tuple[str, dict, Callable]] = [
    ("uniform", {}, naive_uniform),
    ("greedy", {}, naive_greedy),
    ("krr", {}, naive_krr),
    ("rnm", {}, _naive_rnm("exponential")),
    ("rnm", {"noise": "laplace"}, _naive_rnm("laplace")),
    ("exponential_mechanism", {}, naive_exponential_mechanism),
    ("permute_and_flip", {}, naive_permute_and_flip),
    ("rnmh", {}, naive_rnmh),
    ("rs", {}, _naive_rs(1.0)),
    ("rs_tnb", {}, _naive_rs(0.0)),
    ("gem", {}, naive_gem),
    ("mgem", {}, naive_mgem),
    ("combined_gem", {}, naive_combined_gem),
]


def _best_of(fn: Callable[[], object], repeat: int) -> float:
    best = math.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


#: The selectors the private agents call at every step (the compiled ones).
PER_STEP_CASES: list[tuple[str, dict]] = [
    ("rnm", {}),
    ("rnm", {"noise": "gumbel"}),
    ("rnm", {"noise": "laplace"}),
    ("exponential_mechanism", {}),
    ("permute_and_flip", {}),
    ("rnmh", {}),
    ("gem", {}),
    ("mgem", {}),
    ("combined_gem", {}),
    ("rs", {}),
    ("rs_tnb", {}),
    ("krr", {}),
    ("greedy", {}),
    ("uniform", {}),
]


def per_step(calls: int, repeat: int) -> None:
    """ns per ``select_batch`` call (and per row) at the bandit agents' batch sizes."""
    print(f"select_batch(q, d, rng): best of {repeat} x {calls} calls\n")
    header = f"{'selector':<24} {'K':>3} {'R':>4} {'ns/call':>10} {'ns/row':>8}"
    print(header)
    print("-" * len(header))
    for k in (2, 10):
        for r in (1, 100):
            data = np.random.default_rng(0)
            q = data.uniform(0.0, 1.0, size=(r, k))
            d = data.uniform(0.01, 0.2, size=(r, k))  # windowed-sensitivity scale
            for name, params in PER_STEP_CASES:
                sel = selectors.make(name, epsilon=EPS, **params)
                gen = np.random.default_rng(1)
                sel.select_batch(q, d, gen)  # compile / load the kernels

                def loop(sel=sel, q=q, d=d, gen=gen):
                    for _ in range(calls):
                        sel.select_batch(q, d, gen)

                t = _best_of(loop, repeat) / calls
                label = name + ("" if not params else f" ({', '.join(map(str, params.values()))})")
                print(f"{label:<24} {k:>3} {r:>4} {1e9 * t:>10.0f} {1e9 * t / r:>8.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--naive-rows", type=int, default=2_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--per-step", action="store_true", help="time select_batch at R = 1, 100")
    parser.add_argument("--calls", type=int, default=20_000)
    args = parser.parse_args()
    if args.per_step:
        per_step(args.calls, args.repeat)
        return
    r, rn = args.rows, min(args.naive_rows, args.rows)
    rng = np.random.default_rng(0)
    print(
        f"R = {r} rows per call; naive per-row loop timed on {rn} rows and scaled to R; "
        f"vectorised: best of {args.repeat}\n"
    )
    header = (
        f"{'selector':<24} {'K':>4} {'batched [ms]':>13} {'per-row loop [ms]':>18} {'speed-up':>9}"
        f" {'1 Exp/cand [ms]':>16}"
    )
    print(header)
    print("-" * len(header))
    for k in (2, 100):
        q = rng.normal(size=(r, k))
        d = rng.uniform(0.5, 2.0, size=(r, k))
        noise_rng = np.random.default_rng(4)
        t_floor = _best_of(lambda k=k, g=noise_rng: g.standard_exponential((r, k)), args.repeat)
        for name, params, naive in CASES:
            sel = selectors.make(name, epsilon=EPS, **params)
            sel.select(q[:10], d[:10], rng=1)  # warm caches (e.g. the D_eta,gamma table)
            t_fast = _best_of(lambda sel=sel, q=q, d=d: sel.select(q, d, rng=2), args.repeat)
            gen = np.random.default_rng(3)

            def loop(naive=naive, gen=gen, q=q, d=d):
                return [naive(q[i], d[i], gen) for i in range(rn)]

            t_naive = _best_of(loop, 1) * r / rn
            label = name + ("" if not params else f" ({', '.join(map(str, params.values()))})")
            print(
                f"{label:<24} {k:>4} {1e3 * t_fast:>13.2f} {1e3 * t_naive:>18.1f} "
                f"{t_naive / t_fast:>8.0f}x {1e3 * t_floor:>16.2f}"
            )


if __name__ == "__main__":
    main()
