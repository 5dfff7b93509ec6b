"""The change-point tests of agents.change_tests against closed forms and slow numpy references:
the Bernoulli GLR statistic (Besson et al. 2022), its scan and threshold, the two-sided CUSUM
(Liu et al. 2018, Alg. 2), M-UCB's window test (Cao et al. 2019, Alg. 1) and the forced
exploration schedule."""

from __future__ import annotations

import math

import numpy as np
import pytest

from agents.change_tests import (
    FORCED_PERIOD_CAP,
    cusum_step,
    forced_arm,
    forced_period,
    glr_bernoulli,
    glr_detect,
    glr_split,
    glr_threshold,
    window_alarm,
    window_push,
    xlogx_table,
)


def kl(p: float, q: float) -> float:
    """Bernoulli kl, written from its definition (0 ln 0 = 0)."""
    out = 0.0
    if p > 0:
        out += p * math.log(p / q)
    if p < 1:
        out += (1 - p) * math.log((1 - p) / (1 - q))
    return out


def glr_reference(x: np.ndarray, s: int) -> float:
    """s kl(mu_1:s, mu_1:n) + (n - s) kl(mu_s+1:n, mu_1:n), from the means of the slices."""
    n = x.size
    mu, mu1, mu2 = x.mean(), x[:s].mean(), x[s:].mean()
    if mu1 == mu2:
        return 0.0
    return s * kl(mu1, mu) + (n - s) * kl(mu2, mu)


def test_glr_by_hand() -> None:
    # 0 0 1 1 split in the middle: 2 kl(0, 1/2) + 2 kl(1, 1/2) = 4 ln 2
    assert glr_bernoulli(2.0, 0.0, 4.0, 2.0) == pytest.approx(4 * math.log(2), abs=1e-14)
    # 1 0 0 after one: kl(1, 1/3) + 2 kl(0, 1/3) = ln 3 + 2 ln(3/2)
    assert glr_bernoulli(1.0, 1.0, 3.0, 1.0) == pytest.approx(
        math.log(3) + 2 * math.log(1.5), abs=1e-14
    )
    # no change in the means: 0
    assert glr_bernoulli(2.0, 1.0, 4.0, 2.0) == 0.0
    assert glr_bernoulli(3.0, 3.0, 5.0, 5.0) == 0.0


def test_glr_against_numpy_reference() -> None:
    rng = np.random.default_rng(1)
    table = xlogx_table(400)
    for _ in range(200):
        n = int(rng.integers(2, 400))
        p = rng.random()
        x = (rng.random(n) < p).astype(float)
        if rng.random() < 0.5:  # a change somewhere
            c = int(rng.integers(1, n))
            x[c:] = (rng.random(n - c) < rng.random()).astype(float)
        s = int(rng.integers(1, n))
        ref = glr_reference(x, s)
        ks, kn = int(x[:s].sum()), int(x.sum())
        assert glr_bernoulli(float(s), float(ks), float(n), float(kn)) == pytest.approx(
            ref, rel=1e-12, abs=1e-12
        )
        assert glr_split(table, s, ks, n, kn) == pytest.approx(ref, rel=1e-9, abs=1e-9)


def test_glr_real_sums_match_the_reference() -> None:
    # the statistic is defined for sub-Bernoulli data in [0, 1] too (released noisy means)
    rng = np.random.default_rng(2)
    for _ in range(50):
        n = int(rng.integers(2, 100))
        x = rng.random(n)
        s = int(rng.integers(1, n))
        ref = glr_reference(x, s)
        got = glr_bernoulli(float(s), float(x[:s].sum()), float(n), float(x.sum()))
        assert got == pytest.approx(ref, rel=1e-10, abs=1e-12)


def test_glr_threshold() -> None:
    for n, delta in [(1, 0.5), (10, 0.01), (12345, 1 / math.sqrt(2 * 50_000))]:
        assert glr_threshold(float(n), delta) == pytest.approx(
            math.log(3 * n**1.5 / delta), rel=1e-14
        )


def slow_detect(x: np.ndarray, ds: int, threshold: float) -> int:
    for s in range(ds, x.size, ds):
        if glr_reference(x, s) >= threshold:
            return s
    return 0


@pytest.mark.parametrize("ds", [1, 3, 10])
def test_glr_detect_is_the_first_split_over_the_threshold(ds: int) -> None:
    rng = np.random.default_rng(ds)
    table = xlogx_table(300)
    hits = 0
    for _ in range(100):
        n = int(rng.integers(2, 300))
        x = (rng.random(n) < 0.3).astype(float)
        c = int(rng.integers(1, n))
        x[c:] = (rng.random(n - c) < 0.8).astype(float)
        prefix = np.concatenate([[0.0], np.cumsum(x)[ds - 1 :: ds]])
        threshold = glr_threshold(float(n), 0.01)
        got = glr_detect(table, prefix, n, int(x.sum()), ds, threshold)
        assert got == slow_detect(x, ds, threshold)
        hits += got > 0
    assert 10 < hits < 100  # both outcomes exercised


def cusum_reference(y: np.ndarray, m: int, eps: float, h: float) -> int:
    """Liu et al. (2018) Alg. 2 literally: the 1-based index of the alarm, 0 if none."""
    u0 = y[:m].mean()
    gp = gm = 0.0
    for k in range(m + 1, y.size + 1):
        gp = max(0.0, gp + (u0 - y[k - 1] - eps))
        gm = max(0.0, gm + (y[k - 1] - u0 - eps))
        if gp >= h or gm >= h:
            return k
    return 0


def run_cusum(y: np.ndarray, m: int, eps: float, h: float) -> int:
    u0 = y[:m].mean()
    gp = gm = 0.0
    for k in range(m + 1, y.size + 1):
        gp, gm = cusum_step(gp, gm, float(y[k - 1]), u0, eps)
        if gp >= h or gm >= h:
            return k
    return 0


def test_cusum_by_hand() -> None:
    # u0 = 1/2 from (0, 1); then ones: g- grows by 1 - 1/2 - 0.1 = 0.4 per step, reaching
    # h = 1 at the third one, observation 5; g+ stays 0
    y = np.array([0.0, 1.0, 1.0, 1.0, 1.0, 1.0])
    assert run_cusum(y, 2, 0.1, 1.0) == 5
    assert cusum_step(0.0, 0.0, 1.0, 0.5, 0.1) == (0.0, pytest.approx(0.4))
    assert cusum_step(0.0, 0.0, 0.0, 0.5, 0.1) == (pytest.approx(0.4), 0.0)
    # a fall: zeros after (1, 1): g+ grows by 0.9 per step
    assert run_cusum(np.array([1.0, 1.0, 0.0, 0.0, 0.0]), 2, 0.1, 1.5) == 4


def test_cusum_two_sided_against_the_reference() -> None:
    rng = np.random.default_rng(3)
    alarms = 0
    for _ in range(300):
        m = int(rng.integers(1, 30))
        n = int(rng.integers(m + 1, 200))
        p0, p1 = rng.random(2)
        c = int(rng.integers(1, n))
        y = np.where(np.arange(n) < c, rng.random(n) < p0, rng.random(n) < p1).astype(float)
        eps, h = float(rng.uniform(0, 0.2)), float(rng.uniform(1, 10))
        got = run_cusum(y, m, eps, h)
        assert got == cusum_reference(y, m, eps, h)
        alarms += got > 0
    assert 30 < alarms < 300


@pytest.mark.parametrize("w", [2, 4, 10, 50])
def test_window_halves_and_alarm(w: int) -> None:
    rng = np.random.default_rng(w)
    window = np.zeros(w)
    halves = np.zeros(2)
    x = np.concatenate([rng.random(3 * w + 7) < 0.2, rng.random(2 * w) < 0.9]).astype(float)
    x[::5] = rng.random(x[::5].size)  # rewards in [0, 1], not only 0/1
    b = math.sqrt(w / 2 * math.log(2 * 2 * 1000**2))
    for n in range(1, x.size + 1):
        window_push(window, halves, n, float(x[n - 1]))
        last = x[max(0, n - w) : n]
        older, newer = last[: max(0, last.size - w // 2)], last[max(0, last.size - w // 2) :]
        assert halves[0] == pytest.approx(older.sum(), abs=1e-12)
        assert halves[1] == pytest.approx(newer.sum(), abs=1e-12)
        expected = n >= w and abs(newer.sum() - older.sum()) > b
        assert window_alarm(halves, n, w, b) == expected


def test_window_alarm_on_a_deterministic_change() -> None:
    # w = 4, b = 1.5: (0 0 | 1 1) gives |2 - 0| = 2 > 1.5 at the 4th observation after a switch
    w, b = 4, 1.5
    window, halves = np.zeros(w), np.zeros(2)
    x = [0.0] * 6 + [1.0] * 6
    first = 0
    for n, y in enumerate(x, start=1):
        window_push(window, halves, n, y)
        if window_alarm(halves, n, w, b):
            first = n
            break
    # after 0 0 0 0 0 0 1: older (0 0), newer (0 1): 1; after ...1 1: older (0 0) newer (1 1): 2
    assert first == 8


@pytest.mark.parametrize(("k", "alpha"), [(2, 0.05), (3, 0.1), (5, 0.3), (7, 0.9)])
def test_forced_exploration_draws_every_arm_including_the_last(k: int, alpha: float) -> None:
    period = forced_period(k, alpha)
    assert period == max(1, math.floor(k / alpha))
    arms = [forced_arm(t, period, k) for t in range(3 * period)]
    forced = [a for a in arms if a >= 0]
    if period > k:
        # once per period each, in order 0 .. K-1, the last included (the SMPyBandits bug)
        assert forced == list(range(k)) * 3
        # the paper's 1-based rule: t mod P in {1..K} plays arm t mod P
        for t0, a in enumerate(arms):
            r = (t0 + 1) % period
            assert a == (r - 1 if 1 <= r <= k else -1)
    else:
        assert all(a >= 0 for a in arms) and set(forced) == set(range(k)) - set()
    assert forced_period(k, 0.0) == 0
    assert forced_arm(5, 0, k) == -1


@pytest.mark.parametrize("alpha", [1e-12, 1e-300, 5e-324])
def test_a_tiny_forced_rate_keeps_forcing_the_first_steps(alpha: float) -> None:
    """K / alpha past what an int64 holds (or inf) is capped, not wrapped to a negative period
    that switches forced exploration off: the first K steps still play arms 0 .. K-1."""
    k = 3
    period = forced_period(k, alpha)
    assert 1 <= period <= FORCED_PERIOD_CAP
    stored = int(np.float64(period))  # the agents keep it in a float64 parameter array
    assert stored == period
    assert [forced_arm(t, stored, k) for t in range(6)] == [0, 1, 2, -1, -1, -1]
