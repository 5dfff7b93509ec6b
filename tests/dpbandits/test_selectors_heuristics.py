"""spearman and weighted_correlation (§VII, App. I eq. (17))."""

import warnings

import numpy as np
import pytest
from scipy.stats import spearmanr

from dpbandits.selectors import spearman, weighted_correlation


def test_spearman_matches_scipy_with_ties_and_batches():
    rng = np.random.default_rng(0)
    q = rng.integers(0, 4, size=(50, 8)).astype(float)  # many ties
    d = rng.integers(1, 5, size=(50, 8)).astype(float)
    out = spearman(q, d)
    assert out.shape == (50,)
    for r in range(50):
        if np.ptp(q[r]) == 0 or np.ptp(d[r]) == 0:
            assert np.isnan(out[r])
        else:
            assert out[r] == pytest.approx(spearmanr(q[r], d[r]).statistic, abs=1e-12)


def test_spearman_broadcasts_and_constant_is_nan_without_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isnan(spearman([1.0, 2.0, 3.0], 1.0))
        assert spearman([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]], [1.0, 2.0, 5.0]).tolist() == [1.0, -1.0]


def naive_weighted_correlation(q, d, buckets):
    q = np.asarray(q, float)
    d = np.asarray(d, float)
    lo, hi = q.min(), q.max()
    width = (hi - lo) / buckets
    idx = []
    for x in q:
        b = 0 if width == 0 else int((x - lo) // width)
        idx.append(min(b, buckets - 1))  # last interval closed
    w = np.array(
        [d[a] / max(d[c] for c in range(len(q)) if idx[c] == idx[a]) for a in range(len(q))]
    )
    mq = np.sum(w * q) / np.sum(w)
    md = np.sum(w * d) / np.sum(w)
    num = np.sum(w * (q - mq) * (d - md))
    return num / (np.sqrt(np.sum(w * (q - mq) ** 2)) * np.sqrt(np.sum(w * (d - md) ** 2)))


def test_weighted_correlation_matches_naive():
    rng = np.random.default_rng(1)
    q = rng.normal(size=(30, 12))
    d = rng.uniform(0.1, 3.0, size=(30, 12))
    for buckets in (1, 3, 5):
        out = weighted_correlation(q, d, buckets=buckets)
        expected = [naive_weighted_correlation(q[r], d[r], buckets) for r in range(30)]
        np.testing.assert_allclose(out, expected, rtol=1e-10)


def test_weighted_correlation_hand_example():
    # scores 0, 1, 2, 10 with 5 buckets of width 2: buckets 0, 0, 1, 4 (10 is in the closed last)
    q = np.array([0.0, 1.0, 2.0, 10.0])
    d = np.array([1.0, 2.0, 3.0, 4.0])
    w = np.array([0.5, 1.0, 1.0, 1.0])
    mq, md = np.average(q, weights=w), np.average(d, weights=w)
    num = np.sum(w * (q - mq) * (d - md))
    den = np.sqrt(np.sum(w * (q - mq) ** 2) * np.sum(w * (d - md) ** 2))
    assert weighted_correlation(q, d) == pytest.approx(num / den)


def test_weighted_correlation_bad_buckets():
    with pytest.raises(ValueError, match="buckets"):
        weighted_correlation([1.0, 2.0], [1.0, 1.0], buckets=0)
