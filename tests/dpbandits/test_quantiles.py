"""Smith's DP quantile mechanism (``method="smith"``) and windowed sensitivities (App. H).

The exact interval probabilities are computed here with a plain loop over intervals,
independently of the implementation. The grid mechanism (the default) is tested in
``test_quantiles_grid.py``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import dpbandits.quantiles as quantiles_module
from dpbandits.quantiles import (
    WindowedSensitivity,
    _exponential_quantile,
    _intervals,
    _utility,
    dp_quantile,
    dp_quantiles,
)
from tests.stats import P_MIN, assert_counts_match_pmf, assert_same_distribution


def exact_interval_probs(x, q, eps, lo, hi):
    """P(interval i) ∝ width_i exp(-eps |i - q n| / 2), with log-sum-exp for tiny weights."""
    z = [lo] + sorted(min(max(v, lo), hi) for v in x) + [hi]
    n = len(x)
    logs = []
    for i in range(n + 1):
        width = z[i + 1] - z[i]
        logs.append(-math.inf if width == 0 else math.log(width) - eps * abs(i - q * n) / 2)
    top = max(logs)
    w = [0.0 if v == -math.inf else math.exp(v - top) for v in logs]
    total = sum(w)
    return np.array([v / total for v in w]), np.array(z)


def mixture_cdf(z, probs):
    """CDF of 'choose interval i w.p. probs[i], then uniform on it' (positive widths only)."""

    def cdf(y):
        y = np.asarray(y)[..., None]
        left, right = z[:-1], z[1:]
        width = right - left
        safe = np.where(width > 0, width, 1.0)
        frac = np.where(width > 0, np.clip((y - left) / safe, 0, 1), (y >= right) * 1.0)
        return (frac * probs).sum(-1)

    return cdf


def test_interval_choice_and_output_distribution_match_exact() -> None:
    x = [0.05, 0.21, 0.22, 0.4, 0.55, 0.61, 0.9, 1.7, -0.3]  # two values outside [0, 1]
    q, eps, lo, hi = 0.3, 2.0, 0.0, 1.0
    probs, z = exact_interval_probs(x, q, eps, lo, hi)
    draws = dp_quantile(
        np.broadcast_to(x, (200_000, len(x))), q, eps, lo, hi, rng=1, method="smith"
    )
    assert draws.shape == (200_000,)
    assert draws.min() >= lo and draws.max() <= hi
    # intervals are recovered from the output (ties at end points have probability 0)
    idx = np.searchsorted(z, draws, side="right") - 1
    counts = np.bincount(np.clip(idx, 0, len(x)), minlength=len(x) + 1)
    # zero-width intervals [0, 0] and [1, 1] (from the clipped values) have probability 0
    assert probs[0] == 0.0 and probs[-1] == 0.0
    assert_counts_match_pmf(counts, probs)
    # and the whole output distribution (uniform inside the chosen interval)
    assert stats.kstest(draws[:20_000], mixture_cdf(z, probs)).pvalue > P_MIN


def test_duplicates_get_zero_probability_and_exact_pmf() -> None:
    rng = np.random.default_rng(2)
    x = [0.3, 0.3, 0.3, 0.0, 0.7, 0.7, 1.0]
    q, eps = 0.5, 1.5
    probs, _ = exact_interval_probs(x, q, eps, 0.0, 1.0)
    assert (probs == 0).sum() == 5  # [0,0], [.3,.3] x2, [.7,.7], [1,1]
    z = _intervals(np.broadcast_to(np.asarray(x), (100_000, len(x))), 0.0, 1.0)
    _, idx = _exponential_quantile(z, _utility(len(x), [q], eps), rng)
    assert_counts_match_pmf(np.bincount(idx[:, 0], minlength=len(x) + 1), probs)


def test_log_space_path_for_huge_epsilon() -> None:
    """Weights underflow in the direct form; the log-space path must give the exact pmf."""
    rng = np.random.default_rng(3)
    x = [0.3] * 4
    q, eps = 0.5, 1200.0  # intervals [0, .3] and [.3, 1] both have utility -eps: exp underflows
    probs, z = exact_interval_probs(x, q, eps, 0.0, 1.0)
    np.testing.assert_allclose(probs[[0, 4]], [0.3, 0.7])
    draws = dp_quantile(np.broadcast_to(x, (50_000, 4)), q, eps, 0.0, 1.0, rng=rng, method="smith")
    counts = np.array([(draws < 0.3).sum(), 0, 0, 0, (draws > 0.3).sum()])
    assert counts.sum() == draws.size
    assert_counts_match_pmf(counts, probs)
    # huge scores and eps in the usual regime, no overflow / NaN
    for method in ("smith", "grid"):
        out = dp_quantile(np.linspace(-1e6, 1e6, 1001), 0.9, 1e3, -1e6, 1e6, rng=4, method=method)
        assert math.isfinite(out) and abs(out - 0.8e6) < 1e4


def test_dp_quantiles_split_epsilon_equally() -> None:
    x = [0.1, 0.2, 0.45, 0.5, 0.8]
    eps = 3.0
    out = dp_quantiles(
        np.broadcast_to(x, (100_000, 5)), [0.1, 0.9], eps, 0.0, 1.0, rng=5, method="smith"
    )
    assert out.shape == (100_000, 2)
    for j, q in enumerate([0.1, 0.9]):
        probs, z = exact_interval_probs(x, q, eps / 2, 0.0, 1.0)
        idx = np.searchsorted(z, out[:, j], side="right") - 1
        assert_counts_match_pmf(np.bincount(np.clip(idx, 0, 5), minlength=6), probs)


def test_output_always_inside_bounds_and_batched_shapes() -> None:
    rng = np.random.default_rng(6)
    for lo, hi in [(0.0, 1.0), (-3.0, -2.999999), (1.0, 1.0 + 1e-12), (-1e9, 1e9)]:
        x = rng.normal(loc=(lo + hi) / 2, scale=(hi - lo), size=(50, 20, 7))
        for q in [0.0, 0.1, 0.5, 1.0]:
            for method in ("smith", "grid"):
                out = dp_quantile(x, q, 0.5, lo, hi, rng=rng, method=method)
                assert out.shape == (50, 20)
                assert np.all((out >= lo) & (out <= hi))
    assert isinstance(dp_quantile([0.5], 0.5, 1.0, 0.0, 1.0), float)


def test_degenerate_data() -> None:
    rng = np.random.default_rng(7)
    # all equal: only [lo, v] and [v, hi] have positive width
    out = dp_quantile(np.full((20_000, 10), 0.25), 0.1, 1.0, 0.0, 1.0, rng=rng, method="smith")
    probs, _ = exact_interval_probs([0.25] * 10, 0.1, 1.0, 0.0, 1.0)
    assert_counts_match_pmf([(out < 0.25).sum(), (out > 0.25).sum()], probs[[0, 10]])
    # n = 1 and all data at an end point
    for x in ([0.7], [0.0, 0.0, 0.0], [1.0]):
        out = dp_quantile(
            np.broadcast_to(x, (1000, len(x))), 0.5, 1.0, 0.0, 1.0, rng=rng, method="smith"
        )
        assert np.all(np.isfinite(out)) and out.min() >= 0 and out.max() <= 1
    # no data at all: uniform on [lo, hi]
    out = dp_quantile(np.empty((5000, 0)), 0.5, 1.0, 2.0, 4.0, rng=rng, method="smith")
    assert stats.kstest(out, stats.uniform(2.0, 2.0).cdf).pvalue > P_MIN


def test_quantile_seed_determinism() -> None:
    x = np.random.default_rng(0).random((10, 30))
    for method in ("smith", "grid"):
        np.testing.assert_array_equal(
            dp_quantiles(x, [0.1, 0.9], 1.0, 0, 1, rng=11, method=method),
            dp_quantiles(x, [0.1, 0.9], 1.0, 0, 1, rng=11, method=method),
        )


def test_quantile_bad_input() -> None:
    for eps in [0.0, -1.0, np.nan, np.inf]:
        with pytest.raises(ValueError, match="epsilon"):
            dp_quantile([0.5], 0.5, eps, 0.0, 1.0)
    with pytest.raises(ValueError, match="lo must be < hi"):
        dp_quantile([0.5], 0.5, 1.0, 1.0, 0.0)
    with pytest.raises(ValueError, match="hi - lo must be finite"):
        dp_quantile([0.5], 0.5, 1.0, -1e308, 1e308)
    with pytest.raises(ValueError, match=r"q must lie in \[0, 1\]"):
        dp_quantile([0.5], 1.5, 1.0, 0.0, 1.0)
    with pytest.raises(ValueError, match="NaN"):
        dp_quantile([0.5, np.nan], 0.5, 1.0, 0.0, 1.0)
    with pytest.raises(ValueError, match="qs"):
        dp_quantiles([0.5], [], 1.0, 0.0, 1.0)
    with pytest.raises(ValueError, match="axis"):
        dp_quantile(0.5, 0.5, 1.0, 0.0, 1.0)


# ---------------------------------------------------------------------------- windowed


def test_windowed_each_reward_used_exactly_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Spy on the data given to the mechanism: per (run, arm) it is the reward stream cut
    into consecutive windows of w, each used once; estimates change only at boundaries."""
    seen: list[np.ndarray] = []
    real = quantiles_module.window_estimate_smith

    def spy(buf, fill, values, n_est, full, *args):
        seen.append(buf[full].copy())  # the windows handed to the mechanism, in order
        return real(buf, fill, values, n_est, full, *args)

    monkeypatch.setattr(quantiles_module, "window_estimate_smith", spy)
    n_runs, n_arms, w = 4, 3, 5
    ws = WindowedSensitivity(n_runs, n_arms, 1.0, lo=0.0, hi=2.0, window=w, rng=0, method="smith")
    rng = np.random.default_rng(1)
    fed: dict[tuple[int, int], list[float]] = {
        (r, a): [] for r in range(n_runs) for a in range(n_arms)
    }
    windows: dict[tuple[int, int], list[np.ndarray]] = {k: [] for k in fed}
    np.testing.assert_array_equal(ws.values, np.full((n_runs, n_arms), 2.0))  # initial hi - lo
    for _ in range(200):
        a = rng.integers(0, n_arms, size=n_runs)
        r = rng.uniform(-0.5, 2.5, size=n_runs)
        before, n_before = ws.values, ws.n_estimates
        seen.clear()
        ws.update(a, r)
        for i in range(n_runs):
            fed[(i, int(a[i]))].append(float(np.clip(r[i], 0.0, 2.0)))
        changed = ws.n_estimates != n_before
        # an estimate happens exactly when the arm's buffer reaches w
        for i in range(n_runs):
            for arm in range(n_arms):
                assert changed[i, arm] == (arm == a[i] and len(fed[(i, arm)]) % w == 0)
        np.testing.assert_array_equal(ws.values[~changed], before[~changed])
        if changed.any():
            assert len(seen) == 1 and seen[0].shape == (changed.sum(), w)
            for row, (i, arm) in zip(seen[0], np.argwhere(changed), strict=True):
                windows[(int(i), int(arm))].append(row)
        else:
            assert not seen
    for key, rewards in fed.items():
        used = np.concatenate(windows[key]) if windows[key] else np.empty(0)
        n_full = len(rewards) // w
        np.testing.assert_array_equal(used, rewards[: n_full * w])
        assert ws.n_estimates[key] == n_full and ws.fill[key] == len(rewards) - n_full * w


def test_windowed_estimate_distribution_matches_dp_quantiles() -> None:
    """d = max(|p_hi - p_lo|, floor) with eps_p split equally, compared to an independent
    computation with dp_quantile at eps_p / 2 (two-sample test)."""
    rng = np.random.default_rng(8)
    window, eps_p, n_runs = 6, 2.0, 30_000
    data = np.array([0.2, 0.9, 0.35, 0.5, 0.1, 0.65])
    ws = WindowedSensitivity(n_runs, 2, eps_p, window=window, rng=9, method="smith")
    for t in range(window):
        ws.update(np.ones(n_runs, dtype=np.int64), np.full(n_runs, data[t]))
    got = ws.values[:, 1]
    assert (ws.values[:, 0] == 1.0).all() and (ws.n_estimates[:, 1] == 1).all()
    x = np.broadcast_to(data, (n_runs, window))
    p_lo = dp_quantile(x, 0.1, eps_p / 2, 0.0, 1.0, rng=rng, method="smith")
    p_hi = dp_quantile(x, 0.9, eps_p / 2, 0.0, 1.0, rng=rng, method="smith")
    assert_same_distribution(got, np.maximum(np.abs(p_hi - p_lo), 1e-6))


def test_windowed_floor_initial_and_accuracy() -> None:
    ws = WindowedSensitivity(50, 2, 1.0, window=10, floor=0.8, initial=0.3, rng=0)
    np.testing.assert_array_equal(ws.values, 0.3)
    for _ in range(10):
        ws.update(np.zeros(50, dtype=np.int64), np.full(50, 0.5))
    assert (ws.values[:, 0] >= 0.8).all() and (ws.values[:, 1] == 0.3).all()
    # with a huge eps the mechanism picks interval i = q n (weight ratio e^-2500 otherwise):
    # p_lo in [x_(20), x_(21)], p_hi in [x_(180), x_(181)] (1-based order statistics)
    ws = WindowedSensitivity(200, 1, 1e4, lo=-5.0, hi=5.0, window=200, rng=1, method="smith")
    r = np.random.default_rng(2).normal(0.0, 1.0, size=(200, 200))
    for t in range(200):
        ws.update(np.zeros(200, dtype=np.int64), r[:, t])
    x = np.sort(np.clip(r, -5.0, 5.0), axis=1)
    d = ws.values[:, 0]
    assert np.all(d >= x[:, 179] - x[:, 20]) and np.all(d <= x[:, 180] - x[:, 19])


def test_windowed_underflow_fallback() -> None:
    """Constant windows and a huge eps: every positive-width interval's weight underflows in
    the direct form, so the log-space path runs; p_lo ~ U[0, .5], p_hi ~ U[.5, 1], hence
    d = p_hi - p_lo is triangular on [0, 1]."""
    ws = WindowedSensitivity(20_000, 1, 1e4, window=10, rng=5, method="smith")
    for _ in range(10):
        ws.update(np.zeros(20_000, dtype=np.int64), np.full(20_000, 0.5))
    d = ws.values[:, 0]
    assert np.all(np.isfinite(d))
    assert stats.kstest(d, stats.triang(0.5).cdf).pvalue > P_MIN


def test_windowed_vectorised_counts() -> None:
    rng = np.random.default_rng(3)
    ws = WindowedSensitivity(500, 3, 1.0, window=7, rng=4)
    counts = np.zeros((500, 3), dtype=np.int64)
    for _ in range(60):
        a = rng.integers(0, 3, size=500)
        ws.update(a, rng.random(500))
        counts[np.arange(500), a] += 1
    np.testing.assert_array_equal(ws.n_estimates, counts // 7)
    np.testing.assert_array_equal(ws.fill, counts % 7)
    assert np.all((ws.values > 0) & (ws.values <= 1))


def test_windowed_bad_input() -> None:
    with pytest.raises(ValueError, match="epsilon"):
        WindowedSensitivity(2, 2, 0.0)
    with pytest.raises(ValueError, match="lo must be < hi"):
        WindowedSensitivity(2, 2, 1.0, lo=1.0, hi=0.0)
    with pytest.raises(ValueError, match="window"):
        WindowedSensitivity(2, 2, 1.0, window=0)
    with pytest.raises(ValueError, match="floor"):
        WindowedSensitivity(2, 2, 1.0, floor=0.0)
    with pytest.raises(ValueError, match="levels"):
        WindowedSensitivity(2, 2, 1.0, levels=(0.1, 1.2))
    ws = WindowedSensitivity(2, 2, 1.0, window=2, rng=0)
    with pytest.raises(ValueError, match="NaN"):
        ws.update(np.array([0, 1]), np.array([np.nan, 0.5]))
    with pytest.raises(ValueError, match="actions"):
        ws.update(np.array([0, 2]), np.array([0.5, 0.5]))
    assert ws.fill.sum() == 0  # bad updates change nothing


# ------------------------------------------------------------- same bits as the numpy code


def numpy_smith(z, util, uu):
    """The vectorised numpy code that the compiled ``smith_quantile_rows`` replaced (end points
    ``z`` (M, n+2), utilities (L, n+1), uniforms ``uu`` (M, L, 2)): the reference of its bits.
    The log-space weights are used for every row as soon as one row's total underflows."""
    m, n2 = z.shape
    width = z[:, 1:] - z[:, :-1]
    cum = np.cumsum(width[:, None, :] * np.exp(util), axis=-1)
    if np.minimum.reduce(cum[..., -1], axis=None) < 1e-250:
        logw = np.full(width.shape, -np.inf)
        np.log(width, out=logw, where=width > 0)
        masked = np.where(np.isfinite(logw)[:, None, :], util, -np.inf)
        logits = util - masked.max(axis=-1, keepdims=True)
        logits += logw[:, None, :]
        cum = np.cumsum(np.exp(logits), axis=-1)
    i = (cum < (1.0 - uu[..., :1]) * cum[..., -1:]).sum(axis=-1)
    flat = (np.arange(m) * n2)[:, None] + i
    left, right = z.reshape(-1)[flat], z.reshape(-1)[flat + 1]
    return np.minimum(left + uu[..., 1] * (right - left), right)


def test_compiled_smith_has_the_bits_of_the_numpy_code() -> None:
    """dp_quantiles(method="smith") == the numpy code it replaced, to the last bit, with the
    same Generator state afterwards; including calls where one row underflows (tied data at a
    huge eps), which switch every row of the call to the log-space weights."""
    rng = np.random.default_rng(30)
    for trial in range(120):
        n, rows = int(rng.integers(0, 25)), int(rng.integers(1, 5))
        x = [rng.random((rows, n)), rng.choice([0.0, 0.3, 1.0], size=(rows, n)),
             rng.normal(0.5, 0.6, (rows, n))][trial % 3]  # fmt: skip
        if trial % 5 == 0 and n:
            x[0] = 0.3  # all tied: tiny total weight at a large eps
        lo, hi = (0.0, 1.0) if trial % 2 else (-0.3, 2.5)
        eps = float(rng.choice([1e-300, 1e-3, 1.0, 50.0, 1e3, 1e300]))
        qs = [0.0, 1.0, 0.5] if trial % 7 == 0 else list(rng.random(int(rng.integers(1, 4))))
        seed = int(rng.integers(2**31))
        got_rng = np.random.default_rng(seed)
        got = dp_quantiles(x, qs, eps, lo, hi, rng=got_rng, method="smith")
        ref_rng = np.random.default_rng(seed)
        z = _intervals(np.asarray(x, dtype=float), lo, hi)
        ref = numpy_smith(z, _utility(n, qs, eps / len(qs)), ref_rng.random((rows, len(qs), 2)))
        np.testing.assert_array_equal(got.view(np.uint64), ref.view(np.uint64))
        assert got_rng.random() == ref_rng.random()


def test_windowed_smith_has_the_bits_of_the_numpy_code() -> None:
    n_runs, n_arms, w = 6, 2, 15
    for eps in (1.0, 1e4):  # 1e4: the log-space weights
        ws = WindowedSensitivity(n_runs, n_arms, eps, window=w, rng=31, method="smith")
        ref_rng = np.random.default_rng(31)
        s = n_runs * n_arms
        buf, fill, values = np.zeros((s, w)), np.zeros(s, dtype=np.int64), np.full(s, 1.0)
        rng = np.random.default_rng(32)
        for _ in range(5 * w * n_arms):
            a = rng.integers(0, n_arms, size=n_runs)
            x = rng.choice([0.2, 0.5, rng.random()], size=n_runs)
            ws.update(a, x)
            flat = np.arange(n_runs) * n_arms + a
            pos = fill[flat]
            buf[flat, pos] = x
            fill[flat] = pos + 1
            full = flat[pos + 1 == w]
            if full.size:
                z = _intervals(buf[full], 0.0, 1.0)
                uu = ref_rng.random((full.size, 2, 2))
                p = numpy_smith(z, _utility(w, (0.1, 0.9), eps / 2), uu)
                values[full] = np.maximum(np.abs(p[:, 1] - p[:, 0]), 1e-6)
                fill[full] = 0
        np.testing.assert_array_equal(ws.values.ravel().view(np.uint64), values.view(np.uint64))
        np.testing.assert_array_equal(ws.fill.ravel(), fill)
        assert ws.n_estimates.sum() > 0


@pytest.mark.parametrize("window", [1, 5, 200])
def test_windowed_smith_kernel_equals_the_numpy_estimate(window: int) -> None:
    """The compiled Smith estimate of the full windows (window_estimate_smith) gives the bits of
    the numpy code it replaced: the windows sorted between the end points (_intervals), then
    _exponential_quantile on all of them with numpy's uniforms; tied and end-point rewards
    included."""
    n_runs, n_arms, lo, hi = 7, 3, -1.0, 2.0
    ws = WindowedSensitivity(n_runs, n_arms, 0.7, lo=lo, hi=hi, window=window, rng=5,
                             method="smith")  # fmt: skip
    ref_rng = np.random.default_rng(5)
    values = np.full((n_runs, n_arms), hi - lo)
    bufs: dict[tuple[int, int], list[float]] = {}
    rng = np.random.default_rng(6)
    for _ in range(3 * window * n_arms):
        a = rng.integers(0, n_arms, size=n_runs)
        x = np.where(rng.random(n_runs) < 0.3, rng.integers(0, 3, size=n_runs) * 0.5,
                     rng.uniform(-1.5, 2.5, size=n_runs))  # fmt: skip
        ws.update(a, x)
        full = []
        for r in range(n_runs):
            bufs.setdefault((r, int(a[r])), []).append(float(np.clip(x[r], lo, hi)))
            if len(bufs[(r, int(a[r]))]) == window:
                full.append((r, int(a[r])))
        if full:
            z = quantiles_module._intervals(np.array([bufs[k] for k in full]), lo, hi)
            util = quantiles_module._utility(window, (0.1, 0.9), 0.35)
            p = quantiles_module._exponential_quantile(z, util, ref_rng)[0]
            for (r, arm), row in zip(full, p, strict=True):
                values[r, arm] = max(abs(row[1] - row[0]), 1e-6)
                bufs[(r, arm)] = []
        np.testing.assert_array_equal(ws.values, values)


def test_sort_in_range_sorts_like_numpy() -> None:
    """The windows' bucket sort gives numpy's sorted array: ties, end points, crowded buckets
    (values packed in a sliver of the range), one value, negative ranges, huge ranges."""
    from dpbandits.quantiles.kernels import BUCKET_INSERTION_MAX, sort_in_range

    rng = np.random.default_rng(21)
    for trial in range(3000):
        n = int(rng.integers(1, 260))
        lo, hi = sorted(rng.normal(size=2) * 10.0 ** rng.integers(-3, 300))
        if not hi > lo or not np.isfinite(hi - lo):
            continue
        kind = trial % 4
        if kind == 0:
            x = rng.uniform(lo, hi, n)
        elif kind == 1:  # ties and end points
            x = lo + rng.integers(0, 4, n) * ((hi - lo) / 3)
        elif kind == 2:  # crowded: more than BUCKET_INSERTION_MAX values in one bucket
            x = lo + (hi - lo) * (0.5 + rng.random(n) * 1e-9)
        else:
            x = np.where(rng.random(n) < 0.5, lo, rng.uniform(lo, hi, n))
        x = np.clip(x, lo, hi)
        out = np.empty(n)
        sort_in_range(x, lo, hi, out, np.empty(3 * n + 3, dtype=np.int64))
        np.testing.assert_array_equal(out, np.sort(x))
    assert BUCKET_INSERTION_MAX < 260  # the crowded case reached shell_sort
