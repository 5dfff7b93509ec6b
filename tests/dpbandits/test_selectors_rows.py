"""The selectors' batch and one-row kernels against numpy reference loops, bit for bit.

The kernels loop over the rows of 2-D arrays with branch-free argmax scans; these references
(numpy on one row at a time, drawing the same numbers in the same order) check them on the
inputs where such scans go wrong: ties, signed zeros, infinite scores (NaN gaps, whose first
occurrence ``numpy.argmax`` returns), and K around the brute-force / shortcut switch.
"""

import math

import numpy as np
import pytest

from dpbandits import selectors
from dpbandits.core.arms import read_only
from dpbandits.selectors import gem, noisy_max, simple
from tests.dpbandits.test_selectors_gem import naive_gem_scores
from tests.dpbandits.test_selectors_noisy_max import _reference_noise
from tests.dpbandits.test_selectors_simple import _numpy_argmax_ties, _numpy_krr

KS = [2, 3, 8, 9, 50]
R = 30


def _scores(kind, k, seed):
    """``(q, d)`` of shape ``(R, K)``: continuous, tied, signed zeros, or with infinities."""
    g = np.random.default_rng([k, seed])
    d = g.uniform(0.1, 2.0, size=(R, k))
    if kind == "normal":
        q = g.normal(size=(R, k))
    elif kind == "ties":
        q = np.round(g.normal(size=(R, k)))
        q[::3] = 1.0  # constant rows
        d = np.round(d) + 0.5
    elif kind == "zeros":
        q = g.choice([0.0, -0.0, -1.0], size=(R, k))
    else:  # +inf makes the row maximum's gap inf - inf = NaN; -inf gaps are -inf
        q = g.normal(size=(R, k))
        q[::2, g.integers(k)] = np.inf
        q[1::3, -1] = -np.inf
    return q, d


KINDS = ["normal", "ties", "zeros", "inf"]


def _state(g):
    return g.bit_generator.state["state"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("k", KS)
def test_noisy_max_kernels_are_numpy_argmax_loops(kind, k):
    q, d = _scores(kind, k, 1)
    q, d = read_only(q), read_only(d)  # the rows the library's kernels get (their one type)
    eps = 0.9
    lam = eps / (2.0 * d.max(axis=1))
    with np.errstate(invalid="ignore"):
        gaps = (q - q.max(axis=1, keepdims=True)) * lam[:, None]
    for code, noise in enumerate(noisy_max.NOISES):
        a, b, c = (np.random.default_rng(code) for _ in range(3))
        batch = np.empty(R, dtype=np.int64)
        noisy_max.rnm_rows(q, d, eps, code, a, batch)
        rows = [noisy_max.rnm_row(q[r], lam[r], code, b) for r in range(R)]
        ref = [int(np.argmax(gaps[r] + _reference_noise(noise, c, k))) for r in range(R)]
        np.testing.assert_array_equal(batch, ref)
        np.testing.assert_array_equal(rows, ref)
        assert _state(a) == _state(b) == _state(c)
        e, one, singles = np.random.default_rng(code), np.empty(1, dtype=np.int64), []
        for r in range(R):  # batches of one row (one replication) take another path
            noisy_max.rnm_rows(q[r : r + 1], d[r : r + 1], eps, code, e, one)
            singles.append(one[0])
        np.testing.assert_array_equal(singles, ref)
    a, b, c = (np.random.default_rng(7) for _ in range(3))
    batch = np.empty(R, dtype=np.int64)
    noisy_max.permute_and_flip_rows(q, d, eps, a, batch)
    rows = [noisy_max.permute_and_flip_row(q[r], lam[r], b) for r in range(R)]
    e, one, singles = np.random.default_rng(7), np.empty(1, dtype=np.int64), []
    for r in range(R):
        noisy_max.permute_and_flip_rows(q[r : r + 1], d[r : r + 1], eps, e, one)
        singles.append(one[0])
    ref = []
    for r in range(R):
        x = c.standard_exponential(k) + gaps[r]
        with np.errstate(invalid="ignore"):  # a NaN (inf - inf gap) is never accepted
            ref.append(int(np.argmin(np.where(x >= 0.0, x, np.inf))))
    np.testing.assert_array_equal(batch, ref)
    np.testing.assert_array_equal(rows, ref)
    np.testing.assert_array_equal(singles, ref)
    assert _state(a) == _state(b) == _state(c)
    a, b, c = (np.random.default_rng(8) for _ in range(3))
    noisy_max.rnmh_rows(q, d, eps, a, batch)
    rows = [noisy_max.rnmh_row(q[r], d[r], eps, b) for r in range(R)]
    with np.errstate(invalid="ignore"):
        ref = [int(np.argmax(c.standard_exponential(k) * (d[r] * 2.0 / eps) + (q[r] - q[r].max())))
               for r in range(R)]  # fmt: skip
    np.testing.assert_array_equal(batch, ref)
    np.testing.assert_array_equal(rows, ref)
    assert _state(a) == _state(b) == _state(c)


@pytest.mark.parametrize("kind", ["normal", "ties", "zeros"])
@pytest.mark.parametrize("k", KS)
def test_gem_kernels_are_numpy_loops(kind, k):
    # the brute force and the Pareto front are exact; the hull too on continuous scores
    q, d = _scores(kind, k, 2)
    # the rows' and batches' kernels get read-only rows from the library (select hands them to
    # select_batch read-only: their one type, compiled once); gem_scores gets the caller's arrays
    q_w, d_w = q, d
    q, d = read_only(q), read_only(d)
    lam = 0.45
    methods = [0, 1, 2] if kind == "normal" else [0, 1]
    s, u = np.empty(k), np.empty(k)
    for t in (2.5, -4.0):
        qp = np.array([naive_gem_scores(q[r], d[r], t) for r in range(R)])
        ts = np.where(np.arange(R) % 3 == 0, -t, t)  # per-row shifts, as combined GEM has
        qp_ts = np.array([naive_gem_scores(q[r], d[r], ts[r]) for r in range(R)])
        for code, noise in enumerate(noisy_max.NOISES):
            c, c_ts = np.random.default_rng(code), np.random.default_rng(code)
            ref = [int(np.argmax(_reference_noise(noise, c, k) + qp[r] * lam)) for r in range(R)]
            ref_ts = [int(np.argmax(_reference_noise(noise, c_ts, k) + qp_ts[r] * lam))
                      for r in range(R)]  # fmt: skip
            for method in methods:
                a, b, a_ts = (np.random.default_rng(code) for _ in range(3))
                batch, batch_ts = np.empty(R, dtype=np.int64), np.empty(R, dtype=np.int64)
                assert gem.gem_rows(q, d, t, np.empty(0), lam, code, method, a, batch)
                assert gem.gem_rows(q, d, 0.0, ts, lam, code, method, a_ts, batch_ts)
                rows = [gem.gem_row(q[r], d[r], t, lam, code, method, s, u, b) for r in range(R)]
                np.testing.assert_array_equal(batch, ref)
                np.testing.assert_array_equal(batch_ts, ref_ts)
                np.testing.assert_array_equal(rows, ref)
                assert _state(a) == _state(b) == _state(c) == _state(a_ts) == _state(c_ts)
                scores = np.empty((R, k))
                assert gem.gem_scores_rows(q_w, d_w, t, np.empty(0), method, scores)
                np.testing.assert_array_equal(scores == 0.0, qp == 0.0)
                np.testing.assert_allclose(scores, qp, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("kind", ["ties", "zeros", "normal"])
@pytest.mark.parametrize("k", [2, 3, 9, 32, 33, 50])
def test_combined_gem_kernel_is_numpy_loop(kind, k):
    # K <= 32 counts the ranks, K > 32 sorts them: both give heuristics.spearman's sign
    q, d = _scores(kind, k, 3)
    d[::5] = 0.7  # constant d: a NaN correlation, bit 1
    t, p_keep, lam = 1.5, 0.7, 0.35
    bit = ~(selectors.spearman(q, d) < 0)
    rq, rd = np.empty(k, dtype=np.int64), np.empty(k, dtype=np.int64)
    np.testing.assert_array_equal(
        [gem.spearman_nonnegative_row(q[r], d[r], rq, rd) for r in range(R)], bit
    )
    a, c = np.random.default_rng(4), np.random.default_rng(4)
    out = np.empty(R, dtype=np.int64)
    assert gem.combined_gem_rows(q, d, t, p_keep, lam, 0, 0 if k <= 8 else 1, a, out)
    flip = c.random(R) >= p_keep
    ref = []
    for r in range(R):
        tr = -t if bit[r] != flip[r] else t
        ref.append(
            int(np.argmax(c.standard_exponential(k) + naive_gem_scores(q[r], d[r], tr) * lam))
        )
    np.testing.assert_array_equal(out, ref)
    assert _state(a) == _state(c)


@pytest.mark.parametrize("kind", KINDS + ["nan"])
@pytest.mark.parametrize("k", KS)
def test_ranking_kernels_are_numpy_loops(kind, k):
    q, _ = _scores("ties" if kind == "nan" else kind, k, 5)
    if kind == "nan":  # numpy.maximum gives NaN: no maximiser, index 0, nothing drawn
        q[::4, k // 2] = np.nan
    a, b, c = (np.random.default_rng(6) for _ in range(3))
    out = np.empty(R, dtype=np.int64)
    simple.argmax_ties_rows(q, a, out)
    with np.errstate(invalid="ignore"):
        ref = _numpy_argmax_ties(q, c)
    np.testing.assert_array_equal(out, ref)
    np.testing.assert_array_equal([simple.argmax_ties(q[r], b) for r in range(R)], ref)
    assert _state(a) == _state(b) == _state(c)
    if kind == "nan":
        return
    for eps in (0.2, 3.0):
        p_keep = 1.0 / (1.0 + (k - 1) * math.exp(-eps))
        a, c = np.random.default_rng(9), np.random.default_rng(9)
        simple.krr_select_rows(q, p_keep, a, out)
        np.testing.assert_array_equal(out, _numpy_krr(q, eps, c))
        assert _state(a) == _state(c)


def _scaled_gaps(q, lam):
    """``(q - max q) * lam`` row-wise, maximisers 0 and -inf gaps -inf whatever ``lam``."""
    g = q - q.max(axis=1, keepdims=True)
    with np.errstate(invalid="ignore"):
        u = g * lam[:, None]
    u[g == 0.0] = 0.0
    u[g == -np.inf] = -np.inf
    return u


@pytest.mark.parametrize(
    "eps,extreme", [(0.8, 1.0), (0.8, 0.0), (0.8, 1e-320), (1e-20, 1e308), (1e-20, 1.0)]
)
def test_a_batch_with_an_extreme_inverse_scale_goes_through_the_scale(eps, extreme):
    # one row whose eps / (2 max d) is infinite or 0 makes the whole batch use 1 / (1 / lam)
    # (the former numpy code's noise scale and back), every other row too
    g = np.random.default_rng(11)
    q, d = g.normal(size=(R, 4)), g.uniform(1e-3, 1e3, size=(R, 4))
    d[R // 2] = extreme
    with np.errstate(over="ignore", divide="ignore"):
        lam = eps / (2.0 * d.max(axis=1))
        if not np.all((lam > 0.0) & (lam < np.inf)):
            lam = 1.0 / (1.0 / lam)
    gaps = _scaled_gaps(q, lam)
    for code, noise in enumerate(noisy_max.NOISES):
        a, c = np.random.default_rng(code), np.random.default_rng(code)
        out = np.empty(R, dtype=np.int64)
        noisy_max.rnm_rows(q, d, eps, code, a, out)
        ref = [int(np.argmax(gaps[r] + _reference_noise(noise, c, 4))) for r in range(R)]
        np.testing.assert_array_equal(out, ref)
        assert _state(a) == _state(c)
    a, c = np.random.default_rng(13), np.random.default_rng(13)
    noisy_max.permute_and_flip_rows(q, d, eps, a, out)
    x = c.standard_exponential((R, 4)) + gaps
    np.testing.assert_array_equal(out, np.argmin(np.where(x >= 0.0, x, np.inf), axis=1))
    assert _state(a) == _state(c)
