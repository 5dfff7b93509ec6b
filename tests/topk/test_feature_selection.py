"""DP-SIS, SIS and the two-stage baseline (paper 002, Algorithm 1, §3, §5)."""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest

from dpbandits.topk import exact
from dpbandits.topk import experiments as te
from dpbandits.topk import feature_selection as fs
from dpbandits.topk import real_data as rd


def _design(seed=0, n=100, d=12):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    w = np.zeros(d)
    w[[2, 7]] = [1.0, -0.7]
    y = X @ w + rng.normal(scale=1.0, size=n)
    return fs.preprocess(X, y)


def test_preprocess_centres_and_scales():
    X, y = _design()
    np.testing.assert_allclose(np.abs(X).max(axis=0), 1.0)
    np.testing.assert_allclose(X.mean(axis=0), 0.0, atol=1e-12)
    assert math.isclose(float(np.abs(y).max()), 1.0) and abs(y.mean()) < 1e-12
    Xc, _ = fs.preprocess(np.ones((5, 2)), np.arange(5.0))  # constant columns stay 0
    assert np.all(Xc == 0)


@pytest.mark.parametrize("mechanism, pmf", [("canonical_lipschitz", "lipschitz"), ("gumbel", "pl")])
def test_dp_sis_accuracy_against_exact_law(mechanism, pmf):
    """Mean top-k accuracy of DP-SIS equals the one computed from the mechanism's exact law
    on the scores |X^T y| (an independent computation: enumeration of all outputs)."""
    X, y = _design()
    k, eps = 2, 3.0
    scores = np.abs(X.T @ y)
    truth = set(np.argsort(-scores)[:k].tolist())
    law = (
        exact.lipschitz_pmf(scores, k, eps)
        if pmf == "lipschitz"
        else exact.plackett_luce_pmf(scores, k, eps)
    )
    acc_per_outcome = np.array([len(truth & set(o)) / k for o in law[0]])
    expected = float(acc_per_outcome @ law[1])
    var = float(((acc_per_outcome - expected) ** 2) @ law[1])
    rng = np.random.default_rng(1)
    acc = [
        len(truth & set(fs.dp_sis(X, y, k, eps, mechanism, rng).tolist())) / k for _ in range(1500)
    ]
    z = (np.mean(acc) - expected) / math.sqrt(var / len(acc))
    assert abs(z) < 5, (np.mean(acc), expected)


def test_dp_sis_checks_norms_and_normalizes():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 6))
    y = X[:, 0] * 3
    with pytest.raises(ValueError, match="infinity-norm <= 1"):
        fs.dp_sis(X, y, 2, 1.0)
    Xs, ys = fs.preprocess(X, y)
    with pytest.raises(ValueError, match="y must have infinity-norm"):
        fs.dp_sis(Xs, ys * 2, 2, 1.0)
    out = fs.dp_sis(X, y, 2, 1e6, normalize=True, rng=0)
    np.testing.assert_array_equal(np.sort(out), np.sort(np.argsort(-np.abs(Xs.T @ ys))[:2]))
    np.testing.assert_array_equal(
        fs.dp_sis(Xs, ys, 2, 1.0, rng=5), fs.dp_sis(Xs, ys, 2, 1.0, rng=5)
    )
    with pytest.raises(ValueError, match="k must satisfy"):
        fs.dp_sis(Xs, ys, 7, 1.0)
    with pytest.raises(ValueError, match="X must have shape"):
        fs.dp_sis(ys, ys, 1, 1.0)
    with pytest.raises(ValueError, match="finite"):
        fs.dp_sis(np.full((3, 2), np.nan), np.zeros(3), 1, 1.0)
    with pytest.raises(TypeError, match="epsilon must be a real"):
        fs.dp_sis(Xs, ys, 2, "1")


def test_sis_and_two_stage_non_private():
    rng = np.random.default_rng(3)
    X, y = te.figure1_design("W1", rng)
    assert set(fs.sis(X, y, 5).tolist()) == set(range(5))
    counts = fs.support_counts(X, y, 5)
    assert counts.shape == (100,) and counts.max() <= 10  # 10 blocks of 10 rows
    out = fs.two_stage(X, y, 5, None, rng=0)
    assert len(set(out.tolist())) == 5
    priv = fs.two_stage(X, y, 5, 1.0, "gumbel", rng=0)
    assert len(set(priv.tolist())) == 5


def test_two_stage_names_the_extra_when_sklearn_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn.linear_model", None)
    monkeypatch.setitem(sys.modules, "sklearn", None)
    X, y = _design()
    with pytest.raises(ImportError, match=r"need scikit-learn: pip install .*scikit-learn"):
        fs.two_stage(X, y, 2)


def test_figure1_sis_beats_two_stage():
    """Figure 1 (W1, W1/W2): SIS picks features 1-5 much more often than two-stage.

    The paper gives the claim, not numbers: we test the difference of the two selection
    rates of features 1-5 with a two-proportion z-test, and that SIS is near ideal.
    """
    reps = 40
    rec = te.figure1_counts(reps, seed=0)
    for design in ("W1", "W1/W2"):
        c = {
            m: np.array([r["count"] for r in rec if r["design"] == design and r["method"] == m])
            for m in ("SIS", "two-stage")
        }
        n = 5 * reps
        p_sis, p_two = c["SIS"][:5].sum() / n, c["two-stage"][:5].sum() / n
        pooled = (p_sis + p_two) / 2
        z = (p_sis - p_two) / math.sqrt(2 * pooled * (1 - pooled) / n)
        assert z > 5, (design, p_sis, p_two)
        assert p_sis > 0.8
        assert c["SIS"].sum() == c["two-stage"].sum() == 5 * reps


def test_fan_lv_design():
    data = te.fan_lv_design(np.random.default_rng(0))
    assert data.X.shape == (100, 2000) and data.truth.size == 8
    np.testing.assert_allclose(np.abs(data.X).max(axis=0), 1.0)


def test_order_metrics_closed_examples():
    scores = np.arange(30, 0, -1.0)  # feature i has rank i + 1
    sel = np.array(
        [
            [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
            [0, 1, 2, 3, 4, 5, 6, 7, 8, 10],
            [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
            [0, 1, 2, 3, 4, 5, 6, 7, 8, 14],
        ]
    )
    m = te.order_metrics(sel, scores, 10)
    assert m["top"].tolist() == [True, False, False, False]
    assert m["great"].tolist() == [True, True, False, False]  # top 1 + within top 11
    assert m["good"].tolist() == [True, True, True, True]  # top 0 + within top 15


def test_accuracy_curves_records():
    data = te.fan_lv_design(np.random.default_rng(0))
    rec = te.accuracy_curves(data, [5], [1.0, 1e4], trials=5, seed=0)
    methods = {r["method"] for r in rec}
    assert methods == {"SIS", "two-stage", "DP-SIS", "two-stage (private)"}
    sis = next(r for r in rec if r["method"] == "SIS")
    big = next(r for r in rec if r["method"] == "DP-SIS" and r["epsilon"] == 1e4)
    assert big["accuracy"] == sis["accuracy"] and big["top"] == 1.0
    with pytest.raises(ValueError, match="epsilons must be"):
        te.accuracy_curves(data, [5], [0.0], trials=2)
    with pytest.raises(ValueError, match="k must be an integer or 'log'"):
        te.accuracy_curves(data, ["five"], [1.0], trials=2)
    assert te.resolve_k("log", 2000) == 7


def test_load_csv(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 5))
    y = 2 * X[:, 1] - X[:, 3]
    path = tmp_path / "data.csv"
    lines = ["a,b,c,d,e,target"] + [
        ",".join(f"{v:.6f}" for v in (*row, t)) for row, t in zip(X, y, strict=True)
    ]
    path.write_text("\n".join(lines) + "\n")
    data = rd.load_csv(str(path), "target")  # the default penalty selects features
    assert data.X.shape == (40, 5) and data.feature_names == ("a", "b", "c", "d", "e")
    assert set(data.truth[:2].tolist()) == {1, 3}
    assert data.n_nonzero >= 1 and data.r2 > 0.5
    with pytest.raises(ValueError, match="no column 'y'"):
        rd.load_csv(str(path), "y")
    bad = tmp_path / "bad.csv"
    bad.write_text("a,target\n1,2\nx,3\n")
    with pytest.raises(ValueError, match="column 'a' is not a number"):
        rd.load_csv(str(bad), "target")
    with pytest.raises(ValueError, match="no such file"):
        rd.load_csv(str(tmp_path / "missing.csv"), "target")
