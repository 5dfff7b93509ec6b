"""DP quantiles on tied, discrete and continuous data: grid against Smith (docs/quantiles.md).

Not part of the test suite. Prints, all measured in this run (seed 0):

1. the mean 10%-90% range ``p_0.9 - p_0.1`` of ``dp_quantiles(x, (0.1, 0.9), eps_p, 0, 1)`` on
   200 Bernoulli(p) rewards (true range 1), p in {0.2, 0.5, 0.8}, eps_p in {0.5, 1, 4, 16};
2. the median on 200 equal values (0.3, 0.0, 1.0, 0.123456) at eps = 1: largest error and the
   fraction of draws more than 0.01 away;
3. Beta(2, 5), n = 1000: median absolute error of the DP median, against the population median
   and against the sample median, for each method, and the ratio grid / Smith, at eps in
   {0.1, 1, 10};
4. the empirical privacy loss on neighbouring data sets (one value replaced): histograms of the
   outputs (grid points; Smith's outputs binned on 16 equal bins), the plug-in
   ``max |log p - log p'|`` and its lower confidence bound (Clopper-Pearson, family-wise
   alpha = 1e-6), against eps;
5. the time per estimate of ``WindowedSensitivity`` (grid / Smith);
6. the 10%-90% range of 200-reward windows (clipped Gaussians, Bernoulli, discrete values):
   Smith's, the grid of ``WindowedSensitivity`` (64 intervals) and the fine grid (2^16);
7. the cost of ``sampler="exact"``: time per release of ``dp_quantile`` (n = 200) and of a
   ``WindowedSensitivity`` run, exact / float, with the expected number of proposals of the
   rejection sampler computed from the mechanism's weights (mean over 50 data sets);
8. the agents' hot path: ``WindowedSensitivity.update_flat`` (grid, float sampler, windows of
   200, uniform rewards) at R in {1, 100}, K in {2, 10}: µs per step and ns per row (best of
   three CPU times); ``dp_quantile`` per call (one 1-d data set) and per row (a batch), grid
   and Smith.

Usage: ``python benchmarks/bench_quantiles.py [--quick]``.
"""

from __future__ import annotations

import argparse
import functools
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from scipy import stats

from dpbandits.audit.selector import clopper_pearson
from dpbandits.quantiles import (
    DEFAULT_ENDPOINT_MASS,
    QuantileOptions,
    WindowedSensitivity,
    dp_quantile,
    dp_quantiles,
)

if TYPE_CHECKING:
    from typing_extensions import Unpack

METHODS = ("smith", "grid")


def section(title: str, *columns: str) -> None:
    """Print a section title and, when ``columns`` are given, a Markdown table header."""
    print(f"## {title}")
    print()
    if columns:
        print("| " + " | ".join(columns) + " |")
        print("|" + "---|" * len(columns))


def bernoulli(draws: int) -> None:
    section(
        "1. Bernoulli(p), n = 200: mean estimated 10%-90% range (true: 1)",
        "p", "eps_p", "smith: mean range, E abs", "grid: mean range",
    )  # fmt: skip
    rng = np.random.default_rng(0)
    for p in (0.2, 0.5, 0.8):
        x = (rng.random((draws, 200)) < p).astype(np.float64)
        for eps in (0.5, 1.0, 4.0, 16.0):
            r = {}
            for m in METHODS:
                out = dp_quantiles(x, (0.1, 0.9), eps, 0.0, 1.0, rng=rng, method=m)
                r[m] = out[:, 1] - out[:, 0]
            se = r["grid"].std(ddof=1) / np.sqrt(draws)
            print(
                f"| {p} | {eps:g} | {r['smith'].mean():+.3f}, {np.abs(r['smith']).mean():.3f} "
                f"| {r['grid'].mean():.3f} ± {se:.3f} |"
            )
    print()


def all_equal(draws: int) -> None:
    section(
        "2. Median of 200 equal values, eps = 1",
        "value", "smith: max error, P(error > 0.01)", "grid: max error, P(error > 0.01)",
    )  # fmt: skip
    for v in (0.3, 0.0, 1.0, 0.123456):
        x = np.full((draws, 200), v)
        cells = []
        for m in METHODS:
            err = np.abs(dp_quantile(x, 0.5, 1.0, 0.0, 1.0, rng=1, method=m) - v)
            cells.append(f"{err.max():.2e}, {np.mean(err > 0.01):.3f}")
        print(f"| {v} | {cells[0]} | {cells[1]} |")
    print()


def beta_median(draws: int) -> None:
    section(
        "3. Beta(2, 5), n = 1000: median absolute error of the DP median",
        "eps", "vs population median: smith, grid, ratio", "vs sample median: smith, grid, ratio",
    )  # fmt: skip
    rng = np.random.default_rng(2)
    x = rng.beta(2.0, 5.0, size=(draws, 1000))
    true = stats.beta(2.0, 5.0).median()
    sample = np.median(x, axis=1)
    for eps in (0.1, 1.0, 10.0):
        e_pop, e_smp = {}, {}
        for m in METHODS:
            out = dp_quantile(x, 0.5, eps, 0.0, 1.0, rng=3, method=m)
            e_pop[m] = np.median(np.abs(out - true))
            e_smp[m] = np.median(np.abs(out - sample))
        print(
            f"| {eps:g} | {e_pop['smith']:.2e}, {e_pop['grid']:.2e}, "
            f"{e_pop['grid'] / e_pop['smith']:.3f} | {e_smp['smith']:.2e}, {e_smp['grid']:.2e}, "
            f"{e_smp['grid'] / e_smp['smith']:.3f} |"
        )
    print()


PAIRS = {
    "bernoulli n=20, 2 vs 3 zeros, q=0.1": (
        [0.0] * 2 + [1.0] * 18,
        [0.0] * 3 + [1.0] * 17,
        0.1,
    ),
    "ten 0.5 vs one of them at 0, median": ([0.5] * 10, [0.0] + [0.5] * 9, 0.5),
    "six values, a 0 replaced by 1, median": (
        [0.875, 0.125, 0.0, 0.875, 1.0, 0.0],
        [0.875, 0.125, 1.0, 0.875, 1.0, 0.0],
        0.5,
    ),
    "spread data, one value moved across the median": (
        [0.05, 0.15, 0.25, 0.35, 0.45, 0.55, 0.65, 0.75, 0.85, 0.95],
        [0.05, 0.15, 0.25, 0.35, 0.45, 0.55, 0.65, 0.75, 0.85, 0.02],
        0.5,
    ),
}


def exact_grid_loss(x: list[float], xp: list[float], q: float, eps: float, m: int) -> float:
    """max_j |log P(j | x) - log P(j | x')| of the grid mechanism, from its definition."""

    def logp(data: list[float]) -> np.ndarray:
        k = np.clip(np.rint(np.asarray(data) * m), 0, m)
        j = np.arange(m + 1)
        below = (k[None, :] < j[:, None]).sum(axis=1)
        upto = (k[None, :] <= j[:, None]).sum(axis=1)
        qn = q * len(data)
        dist = np.maximum(np.maximum(below - qn, qn - upto), 0.0)
        mass = np.where((j == 0) | (j == m), 1.0 + DEFAULT_ENDPOINT_MASS * (m + 1), 1.0)
        lw = np.log(mass) - eps * dist / 2
        return lw - np.logaddexp.reduce(lw)

    return float(np.abs(logp(x) - logp(xp)).max())


def _bins(out: np.ndarray, method: str, grid_size: int) -> np.ndarray:
    if method == "grid":
        return np.rint(out * grid_size).astype(np.int64)
    return np.minimum((out * 16).astype(np.int64), 15)


def privacy(draws: int) -> None:
    section(
        "4. Empirical privacy loss on neighbouring data sets (one value replaced)",
        "pair", "eps", "method", "plug-in loss", "lower bound (alpha 1e-6)", "exact (grid)",
    )  # fmt: skip
    grid_size = 16
    for name, (x, xp, q) in PAIRS.items():
        for eps in (0.5, 1.0, 4.0):
            for m in METHODS:
                kw: QuantileOptions = {"method": m, "grid_size": grid_size}
                o = dp_quantile(np.broadcast_to(x, (draws, len(x))), q, eps, 0, 1, rng=5, **kw)
                op = dp_quantile(np.broadcast_to(xp, (draws, len(xp))), q, eps, 0, 1, rng=6, **kw)
                k = grid_size + 1
                c = np.bincount(_bins(o, m, grid_size), minlength=k)
                cp = np.bincount(_bins(op, m, grid_size), minlength=k)
                lo, hi = clopper_pearson(c, draws, 1e-6 / (4 * k))
                lo_p, hi_p = clopper_pearson(cp, draws, 1e-6 / (4 * k))
                both = (c > 0) & (cp > 0)
                with np.errstate(divide="ignore"):
                    plug = np.abs(np.log(c[both]) - np.log(cp[both])).max()
                    lower = np.maximum(np.log(lo) - np.log(hi_p), np.log(lo_p) - np.log(hi))
                exact = f"{exact_grid_loss(x, xp, q, eps, grid_size):.3f}" if m == "grid" else ""
                print(
                    f"| {name} | {eps:g} | {m} | {plug:.3f} | {max(0.0, lower.max()):.3f} "
                    f"| {exact} |"
                )
    print()


def windowed(draws: int) -> None:
    from scipy.stats import norm

    rng = np.random.default_rng(4)
    cases = []
    for mu, sd in ((0.2, 0.1), (0.8, 0.3), (0.5, 0.1), (0.5, 0.02)):
        x = np.clip(rng.normal(mu, sd, (draws, 200)), 0, 1)
        tq = np.clip(norm.ppf([0.1, 0.9], mu, sd), 0, 1)
        cases.append((f"clip N({mu}, {sd}^2)", x, tq[1] - tq[0]))
    x = (rng.random((draws, 200)) < 0.8).astype(float)
    cases.append(("Bernoulli(0.8)", x, 1.0))
    for vals in ([0.2, 0.4, 0.6, 0.8], [0.2, 0.4, 0.6, 0.8, 1.0]):
        x = rng.choice(vals, size=(draws, 200))
        cases.append((f"uniform on {vals}", x, vals[-1] - vals[0]))
    section(
        "6. 10%-90% range of 200-reward windows, eps_p = 1: mean / mean absolute error",
        "rewards (true range)", "Smith", "grid, 64 (window default)", "grid, 2^16",
    )  # fmt: skip
    for name, x, true in cases:
        cells = []
        for method, m in (("smith", 2**16), ("grid", 2**6), ("grid", 2**16)):
            o = dp_quantiles(x, (0.1, 0.9), 1.0, 0, 1, rng=1, method=method, grid_size=m)
            r = o[:, 1] - o[:, 0]
            cells.append(f"{r.mean():.3f} / {np.abs(r - true).mean():.3f}")
        print(f"| {name} ({true:.3f}) | " + " | ".join(cells) + " |")
    print()


def time_windows(
    actions: np.ndarray, rewards: np.ndarray, **options: Unpack[QuantileOptions]
) -> tuple[float, int]:
    """Seconds to feed ``(steps, R)`` actions and rewards to a ``WindowedSensitivity`` (K = 2,
    eps_p = 1, seed 0) with the quantile ``options``; and the number of estimates made."""
    ws = WindowedSensitivity(actions.shape[1], 2, 1.0, rng=0, **options)
    t0 = time.perf_counter()
    for a, x in zip(actions, rewards, strict=True):
        ws.update(a, x)
    return time.perf_counter() - t0, int(ws.n_estimates.sum())


def speed(steps: int) -> None:
    section("5. WindowedSensitivity.update, R = 1000, K = 2, uniform rewards")
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, size=(steps, 1000))
    x = rng.random((steps, 1000))
    for m in METHODS:  # compile the kernels (or load them from numba's cache) untimed
        time_windows(a, x, method=m)
    times = {m: time_windows(a, x, method=m)[0] for m in METHODS}
    print(
        f"{steps} steps: smith {times['smith']:.2f} s, grid {times['grid']:.2f} s, "
        f"ratio grid / smith {times['grid'] / times['smith']:.2f}"
    )


def expected_proposals(x: np.ndarray, q: float, eps: float, m: int) -> float:
    """mu(all) / sum_j mu_j exp(-eps dist_j / 2): the rejection sampler's mean number of
    proposals on the data set ``x`` (1-d)."""
    k = np.sort(np.clip(np.rint(x * m), 0, m))
    j = np.arange(m + 1)
    below, upto = np.searchsorted(k, j, "left"), np.searchsorted(k, j, "right")
    qn = q * x.size
    dist = np.maximum(np.maximum(below - qn, qn - upto), 0.0)
    mu = np.where((j == 0) | (j == m), 1.0 + DEFAULT_ENDPOINT_MASS * (m + 1), 1.0)
    return float(mu.sum() / (mu * np.exp(-eps * dist / 2)).sum())


def exact_cost(rows: int) -> None:
    section(
        '7. sampler="exact" against the default "float": time per release',
        "data (n = 200), level", "grid", "expected proposals", "float", "exact", "exact / float",
    )  # fmt: skip
    rng = np.random.default_rng(8)
    cases = [
        ("uniform(0, 1), median", rng.random((rows, 200)), 0.5),
        ("Bernoulli(0.8), q = 0.1", (rng.random((rows, 200)) < 0.8).astype(float), 0.1),
        ("200 equal values 0.3, median (worst case)", np.full((rows // 10, 200), 0.3), 0.5),
    ]
    for sampler in ("float", "exact"):  # compile the kernels (or load them) untimed
        dp_quantile(cases[0][1][:2], 0.5, 1.0, 0.0, 1.0, rng=9, sampler=sampler)
    for name, x, q in cases:
        for m in (2**16, 2**6):
            proposals = np.mean([expected_proposals(r, q, 1.0, m) for r in x[:50]])
            t = {}
            for sampler in ("float", "exact"):
                t0 = time.perf_counter()
                dp_quantile(x, q, 1.0, 0.0, 1.0, rng=9, grid_size=m, sampler=sampler)
                t[sampler] = (time.perf_counter() - t0) / x.shape[0]
            print(
                f"| {name} | {m} | {proposals:.0f} "
                f"| {t['float'] * 1e6:.0f} µs | {t['exact'] * 1e6:.0f} µs "
                f"| {t['exact'] / t['float']:.1f} |"
            )
    print()
    one = cases[0][1][0]  # one 1-d data set per call: the per-call overhead, not the batch's
    t = {}
    for sampler in ("float", "exact"):
        t0 = time.perf_counter()
        for i in range(rows):
            dp_quantile(one, 0.5, 1.0, 0.0, 1.0, rng=i, sampler=sampler)
        t[sampler] = (time.perf_counter() - t0) / rows
    print(
        f"One 1-d data set per call (uniform, median, grid 2^16): float {t['float'] * 1e6:.0f} µs, "
        f"exact {t['exact'] * 1e6:.0f} µs, ratio {t['exact'] / t['float']:.1f}"
    )
    print()
    steps = 2 * rows
    a = rng.integers(0, 2, size=(steps, 1000))
    for name, x in (
        ("uniform rewards", rng.random((steps, 1000))),
        ("Bernoulli(0.8) rewards", (rng.random((steps, 1000)) < 0.8).astype(float)),
    ):
        t = {}
        for sampler in ("float", "exact"):
            t[sampler], estimates = time_windows(a, x, sampler=sampler)
        print(
            f"WindowedSensitivity R = 1000, K = 2, {steps} steps, {name} "
            f"({estimates} estimates): float {t['float']:.2f} s, "
            f"exact {t['exact']:.2f} s, ratio exact / float {t['exact'] / t['float']:.1f}"
        )
    print()


def best_time(fn: Callable[[], object], repeat: int = 3) -> float:
    """The smallest of ``repeat`` CPU times of ``fn()`` (seconds): the least disturbed by the
    other processes of a shared machine."""
    times = []
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return min(times)


def feed_windows(flat: np.ndarray, x: np.ndarray, n_arms: int) -> WindowedSensitivity:
    """A new ``WindowedSensitivity`` (grid, eps_p = 1) fed the steps ``flat``, ``x`` (steps, R)
    through ``update_flat``, the agents' hot path."""
    ws = WindowedSensitivity(flat.shape[1], n_arms, 1.0, rng=0)
    for f, v in zip(flat, x, strict=True):
        ws.update_flat(f, v)
    return ws


def hot_path(steps: int) -> None:
    section(
        "8. WindowedSensitivity.update_flat (grid, window 200, uniform rewards) and dp_quantile",
        "case", "µs per call", "ns per row", "estimates per call",
    )  # fmt: skip
    rng = np.random.default_rng(10)
    for n_runs in (1, 100):
        for n_arms in (2, 10):
            flat = np.arange(n_runs) * n_arms + rng.integers(0, n_arms, size=(steps, n_runs))
            x = rng.random((steps, n_runs))
            est = feed_windows(flat, x, n_arms).n_estimates.sum() / steps  # (and compile)
            t = best_time(functools.partial(feed_windows, flat, x, n_arms))
            print(
                f"| update_flat R = {n_runs}, K = {n_arms} | {t / steps * 1e6:.2f} "
                f"| {t / steps / n_runs * 1e9:.0f} | {est:.3f} |"
            )
    one = rng.random(200)
    batch = rng.random((1000, 200))
    gen = np.random.default_rng(1)
    calls = steps // 4
    for method in METHODS:
        release = functools.partial(dp_quantile, q=0.5, epsilon=1.0, lo=0.0, hi=1.0, rng=gen,
                                    method=method)  # fmt: skip
        release(one)
        t = best_time(lambda r=release: [r(one) for _ in range(calls)]) / calls
        print(f"| dp_quantile {method}, one data set (n = 200) | {t * 1e6:.1f} | | |")
        t = best_time(functools.partial(release, batch))
        print(f"| dp_quantile {method}, 1000 data sets (n = 200) | {t * 1e6:.0f} "
              f"| {t / 1000 * 1e9:.0f} | |")  # fmt: skip
    print()


#: part name -> (function, argument with --quick, argument without)
PARTS = {
    "bernoulli": (bernoulli, 1000, 10_000),
    "all_equal": (all_equal, 1000, 10_000),
    "beta": (beta_median, 300, 3000),
    "privacy": (privacy, 20_000, 400_000),
    "windowed": (windowed, 1000, 10_000),
    "speed": (speed, 1000, 4000),
    "exact": (exact_cost, 200, 1000),
    "hot_path": (hot_path, 2000, 10_000),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", nargs="+", choices=tuple(PARTS))
    args = ap.parse_args()
    for name in args.only or tuple(PARTS):
        function, quick, full = PARTS[name]
        function(quick if args.quick else full)


if __name__ == "__main__":
    main()
