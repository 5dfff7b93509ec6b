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
{2, 10} candidates (``--r``, ``--k`` to change), for every compiled selector, in ns per call and
per row (best CPU time of ``--repeat`` loops of ``--calls`` calls, after one warm-up call that
also compiles); and, in the same run, ns per row of the batch kernel behind it alone
(``gem_rows``, ``rnm_rows``, ...: a compiled loop of calls with a Generator by address, as a
fused agent loop calls them) next to the time of one standard exponential per candidate.
"""

from __future__ import annotations

import argparse
import math
import os
import time
from collections.abc import Callable

import numba
import numpy as np
from scipy.stats import spearmanr

from dpbandits import selectors
from dpbandits.core.jit import generator_address, generator_at
from dpbandits.selectors import gem, noisy_max, random_stopping, simple
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


def _best_of(
    fn: Callable[[], object], repeat: int, clock: Callable[[], float] = time.perf_counter
) -> float:
    """Best of ``repeat`` timings of ``fn()`` by ``clock`` (``time.process_time``: this
    process's CPU time only, robust to a busy machine)."""
    best = math.inf
    for _ in range(repeat):
        t0 = clock()
        fn()
        best = min(best, clock() - t0)
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


# --- the batch kernels timed alone: a compiled loop of calls, as a fused agent loop calls them --
# Compiled at every run, not cached: numba's disk cache of a function is not invalidated when a
# kernel it calls (and inlines) changes, and these loops must time the kernels as they are now.
_driver = numba.njit(nogil=True, error_model="numpy")


@_driver
def _drive_rnm(n, q, d, epsilon, code, address, out):  # type: ignore[no-untyped-def]
    rng = generator_at(address)
    for _ in range(n):
        noisy_max.rnm_rows(q, d, epsilon, code, rng, out)


@_driver
def _drive_permute_and_flip(n, q, d, epsilon, address, out):  # type: ignore[no-untyped-def]
    rng = generator_at(address)
    for _ in range(n):
        noisy_max.permute_and_flip_rows(q, d, epsilon, rng, out)


@_driver
def _drive_rnmh(n, q, d, epsilon, address, out):  # type: ignore[no-untyped-def]
    rng = generator_at(address)
    for _ in range(n):
        noisy_max.rnmh_rows(q, d, epsilon, rng, out)


@_driver
def _drive_gem(n, q, d, t, ts, lam, code, method, address, out):  # type: ignore[no-untyped-def]
    rng = generator_at(address)
    for _ in range(n):
        gem.gem_rows(q, d, t, ts, lam, code, method, rng, out)


@_driver
def _drive_combined_gem(n, q, d, t, p_keep, lam, code, method, address, out):  # type: ignore[no-untyped-def]  # noqa: E501
    rng = generator_at(address)
    for _ in range(n):
        gem.combined_gem_rows(q, d, t, p_keep, lam, code, method, rng, out)


@_driver
def _drive_rs(n, q, d, epsilon, eta, method, gamma, cdf, address, out):  # type: ignore[no-untyped-def]  # noqa: E501
    rng = generator_at(address)
    for _ in range(n):
        random_stopping.rs_select_rows(q, d, epsilon, eta, method, gamma, cdf, rng, out)


@_driver
def _drive_krr(n, q, p_keep, address, out):  # type: ignore[no-untyped-def]
    rng = generator_at(address)
    for _ in range(n):
        simple.krr_select_rows(q, p_keep, rng, out)


@_driver
def _drive_greedy(n, q, address, out):  # type: ignore[no-untyped-def]
    rng = generator_at(address)
    for _ in range(n):
        simple.argmax_ties_rows(q, rng, out)


@_driver
def _drive_uniform(n, k, address, out):  # type: ignore[no-untyped-def]
    rng = generator_at(address)
    for _ in range(n):
        simple.uniform_rows(k, rng, out)


@_driver
def _drive_exponentials(n, r, k, address, out):  # type: ignore[no-untyped-def]
    rng = generator_at(address)
    total = 0.0
    for _ in range(n):
        for _ in range(r * k):
            total += rng.standard_exponential()
    out[0] = total > 0.0


def _kernel_loop(name: str, sel: selectors.Selector, q: np.ndarray, d: np.ndarray,
                 address: int, out: np.ndarray) -> Callable[[int], object]:  # fmt: skip
    """``n -> n`` calls of the batch kernel behind ``sel.select_batch`` in one compiled loop."""
    r, k = q.shape
    eps = sel.epsilon
    method = 0 if k <= gem.PAIRWISE_MAX_K else gem.METHODS.index("hull")  # "auto"
    p: dict = vars(sel)
    if name in ("rnm", "exponential_mechanism"):
        code = noisy_max.noise_code(p["noise"])
        return lambda n: _drive_rnm(n, q, d, eps, code, address, out)
    if name == "permute_and_flip":
        return lambda n: _drive_permute_and_flip(n, q, d, eps, address, out)
    if name == "rnmh":
        return lambda n: _drive_rnmh(n, q, d, eps, address, out)
    if name in ("gem", "mgem"):
        t, code = sel.t(k), noisy_max.noise_code(p["noise"])  # type: ignore[attr-defined]
        return lambda n: _drive_gem(n, q, d, t, np.empty(0), eps / 2, code, method, address, out)
    if name == "combined_gem":
        eps_g = sel.epsilon_g  # type: ignore[attr-defined]
        t, code = gem.gem_t(k, eps_g, p["beta"]), noisy_max.noise_code(p["noise"])
        p_keep = 1.0 / (1.0 + math.exp(-sel.epsilon_c))  # type: ignore[attr-defined]
        return lambda n: _drive_combined_gem(n, q, d, t, p_keep, eps_g / 2, code, method,
                                             address, out)  # fmt: skip
    if name in ("rs", "rs_tnb"):
        eta, gamma = p.get("eta", 1.0), p["gamma"]
        tnb, cdf = random_stopping.tnb_method(eta, gamma)
        return lambda n: _drive_rs(n, q, d, eps, eta, tnb, gamma, cdf, address, out)
    if name == "krr":
        p_keep = 1.0 / (1.0 + (k - 1) * math.exp(-eps))
        return lambda n: _drive_krr(n, q, p_keep, address, out)
    if name == "greedy":
        return lambda n: _drive_greedy(n, q, address, out)
    if name == "uniform":
        return lambda n: _drive_uniform(n, k, address, out)
    raise ValueError(f"no batch kernel known for {name!r}")


def per_step(calls: int, repeat: int, ks: list[int], rows: list[int]) -> None:
    """ns per ``select_batch`` call (and per row) at the bandit agents' batch sizes, and ns per
    row of the batch kernel alone (called in a compiled loop, as a fused agent loop does)."""
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average {load}; CPU time, best of {repeat} x {calls} calls (select_batch) / "
          f"of {repeat} compiled loops (kernel)\n")  # fmt: skip
    header = (f"{'selector':<24} {'K':>4} {'R':>4} {'ns/call':>10} {'ns/row':>8} "
              f"{'kernel ns/row':>14} {'1 Exp/cand':>11}")  # fmt: skip
    print(header)
    print("-" * len(header))
    for k in ks:
        for r in rows:
            data = np.random.default_rng(0)
            q = data.uniform(0.0, 1.0, size=(r, k))
            d = data.uniform(0.01, 0.2, size=(r, k))  # windowed-sensitivity scale
            out = np.empty(max(r, 1), dtype=np.int64)
            kgen = np.random.default_rng(2)
            address = generator_address(kgen)
            n_kernel = max(1, (calls * 100) // (r * k))  # ~ calls * 100 candidate-rows

            def exponentials(n=n_kernel, r=r, k=k, address=address, out=out):
                return _drive_exponentials(n, r, k, address, out)

            exponentials(1)
            floor = _best_of(exponentials, repeat, time.process_time) / n_kernel
            for name, params in PER_STEP_CASES:
                sel = selectors.make(name, epsilon=EPS, **params)
                gen = np.random.default_rng(1)
                sel.select_batch(q, d, gen)  # compile / load the kernels

                def loop(sel=sel, q=q, d=d, gen=gen):
                    for _ in range(calls):
                        sel.select_batch(q, d, gen)

                t = _best_of(loop, repeat, time.process_time) / calls
                direct = _kernel_loop(name, sel, q, d, address, out)
                direct(1)  # compile / load
                t_kernel = (
                    _best_of(lambda f=direct, n=n_kernel: f(n), repeat, time.process_time)
                    / n_kernel
                )
                label = name + ("" if not params else f" ({', '.join(map(str, params.values()))})")
                print(f"{label:<24} {k:>4} {r:>4} {1e9 * t:>10.0f} {1e9 * t / r:>8.0f} "
                      f"{1e9 * t_kernel / r:>14.1f} {1e9 * floor / r:>11.1f}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--naive-rows", type=int, default=2_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--per-step", action="store_true", help="time select_batch at R = 1, 100")
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--k", action="append", type=int, help="--per-step K (default 2, 10)")
    parser.add_argument("--r", action="append", type=int, help="--per-step R (default 1, 100)")
    args = parser.parse_args()
    if args.per_step:
        per_step(args.calls, args.repeat, args.k or [2, 10], args.r or [1, 100])
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
