"""Paper 002's real-data path: the LASSO convention, the loaders, Table 1, Figs. 6-7 (§5)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpbandits.topk import experiments as te
from dpbandits.topk import feature_selection as fs
from dpbandits.topk import real_data as rd


def _sparse(seed=5, n=100, d=300, support=(10, 20, 30, 40, 50)):
    """A plainly sparse regression: y = X w + N(0, 1), five weights of size 0.8-1.5."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    w = np.zeros(d)
    w[list(support)] = [1.0, -1.0, 1.5, -0.8, 1.2]
    return X, X @ w + rng.normal(size=n)


def test_lasso_alpha_conventions():
    assert fs.lasso_alpha(0.1, 50) == 0.1  # paper 002 = scikit-learn's alpha
    assert fs.lasso_alpha(0.1, 50, "half_sum") == pytest.approx(0.1 / 50)
    assert fs.lasso_alpha(0.1, 50, "sum") == pytest.approx(0.1 / 100)
    with pytest.raises(ValueError, match="convention must be one of"):
        fs.lasso_alpha(0.1, 50, "glmnet")
    with pytest.raises(ValueError, match="lam"):
        fs.lasso_alpha(0.0, 50)
    with pytest.raises(ValueError, match=r"n \(rows"):
        fs.lasso_alpha(0.1, 0)


def test_lasso_ranking_continues_down_the_path_on_sparse_data():
    """At lambda = 0.1 (paper units) a continuous target scaled to infinity-norm 1 zeroes every
    coefficient (max |X^T y| / N < 0.1); the ranking continues down the LASSO path, says so,
    and its first five are the true support."""
    Xs, ys = fs.preprocess(*_sparse())
    assert np.abs(Xs.T @ ys).max() / Xs.shape[0] < 0.1
    r = fs.lasso_ranking(Xs, ys, 5)
    assert r.n_nonzero == 0 and r.extended and r.lam_used < 0.1
    assert set(r.features[:5].tolist()) == {10, 20, 30, 40, 50}
    # when lambda keeps >= k features the ranking is the paper's: |coef| at lambda, best first
    r2 = fs.lasso_ranking(Xs, ys, 3, lam=0.01)
    assert not r2.extended and r2.n_nonzero >= 3
    np.testing.assert_array_equal(r2.features[:3], fs.lasso_top_k(Xs, ys, 3, alpha=0.01))
    with pytest.raises(ValueError, match="k = 5 exceeds"):
        fs.lasso_ranking(np.c_[Xs[:, :4], np.zeros((100, 2))], ys, 5)


def test_table1_r2_needs_the_mean_convention():
    """Table 1 has R^2 = 0.0080 (Tian) and 0.0689 (Gravier). Labels independent of the genes,
    d >> N: under the paper's convention the LASSO keeps almost nothing (R^2 < 0.1), under
    alpha = lambda / N or lambda / (2N) it interpolates (R^2 > 0.99) -- so Table 1 was not
    computed with those conventions."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((170, 1000))  # N like Tian's (173) and Gravier's (168)
    y = np.where(rng.permutation(170) < 85, 0.0, 1.0)
    Xs, ys = fs.preprocess(X, y)
    assert fs.lasso_r2(Xs, ys) < 0.1
    assert fs.lasso_r2(Xs, ys, convention="half_sum") > 0.99
    assert fs.lasso_r2(Xs, ys, convention="sum") > 0.99


def _write_microarray(tmp_path, layout):
    rng = np.random.default_rng(1)
    n, d = 30, 12
    labels = np.array(["tumor", "normal"] * (n // 2))
    X = rng.standard_normal((n, d))
    X[:, 4] += 2.0 * (labels == "tumor")
    genes = [f"g{j}" for j in range(d)]
    path = tmp_path / f"{layout}.csv"
    if layout == "samples":  # R's write.csv: row names under an empty header, then y
        lines = [",".join(['""', *genes, "y"])]
        lines += [",".join([f"s{i}", *map(str, X[i]), labels[i]]) for i in range(n)]
    else:  # a row per gene, the labels in the row named y
        lines = [",".join(["gene", *(f"s{i}" for i in range(n))])]
        lines += [",".join([g, *map(str, X[:, j])]) for j, g in enumerate(genes)]
        lines.insert(3, ",".join(["y", *labels]))
    path.write_text("\n".join(lines) + "\n")
    return path, X, labels


@pytest.mark.parametrize("layout", ["samples", "genes"])
def test_load_microarray_layouts(tmp_path, layout):
    path, X, labels = _write_microarray(tmp_path, layout)
    data = rd.load_microarray(str(path), layout=layout)
    assert data.X.shape == (30, 12) and data.feature_names[4] == "g4"
    codes = (labels == "tumor").astype(float)  # sorted classes: normal = 0, tumor = 1
    Xs, ys = fs.preprocess(X, codes)
    np.testing.assert_allclose(data.X, Xs, atol=1e-12)
    np.testing.assert_allclose(data.y, ys)
    assert data.truth[0] == 4 and data.r2 == pytest.approx(fs.lasso_r2(Xs, ys))


def test_load_microarray_rejects_bad_files(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text("g0,g1,y\n1,2,a\n3,NA,b\n4,5,a\n")
    with pytest.raises(ValueError, match="line 3, column 'g1' is missing"):
        rd.load_microarray(str(path))
    path.write_text("g0,g1,y\n1,2,a\n3,4,\n4,5,a\n")
    with pytest.raises(ValueError, match="line 3, column 'y': the label of sample 2 is missing"):
        rd.load_microarray(str(path))
    with pytest.raises(ValueError, match="no row 'y'"):
        rd.load_microarray(str(path), layout="genes")
    with pytest.raises(ValueError, match="layout must be"):
        rd.load_microarray(str(path), layout="wide")


@pytest.mark.parametrize("spec", [(40, 300, 0.6), (60, 200, 0.4), "alon"])
def test_microarray_standin_matches_shape_and_r2(spec):
    data = rd.microarray_standin(spec, 0)
    n, d, r2 = rd.TABLE1[spec] if isinstance(spec, str) else spec
    assert data.X.shape == (n, d)
    assert abs(data.r2 - r2) <= 0.01
    assert data.r2 == pytest.approx(fs.lasso_r2(data.X, data.y))
    assert set(np.unique(data.y).round(12).tolist()) == {-1.0, 1.0}  # balanced labels
    with pytest.raises(ValueError, match="unknown Table 1 data set"):
        rd.microarray_standin("nope")


def test_microarray_standin_below_the_noise_floor():
    """With few samples, labels independent of 200 genes already give R^2 > 0.2 at lambda =
    0.1: the stand-in then has no signal (mu = 0) and reports the R^2 it has."""
    data = rd.microarray_standin((50, 200, 0.2), 0)
    assert data.r2 > 0.2
    n_informative_shift = np.abs(data.X[:, data.support].mean(axis=0)).max()
    assert n_informative_shift < 1e-12  # centred, and no class shift was added


def test_accuracy_differences_and_table1():
    data = rd.microarray_standin((40, 300, 0.6), 0)
    rec = te.accuracy_curves(data, [5], [1.0, 1e4], trials=20, seed=0)
    diffs = rd.accuracy_differences(rec)
    assert {(r["epsilon"], r["k"]) for r in diffs} == {(1.0, 5), (1e4, 5)}
    big = next(r for r in diffs if r["epsilon"] == 1e4)
    acc = {r["method"]: r["accuracy"] for r in rec if r["epsilon"] == 1e4}
    assert big["difference"] == pytest.approx(acc["DP-SIS"] - acc["two-stage (private)"])
    rows = rd.table1([data, rd.microarray_standin("alon", 0)])
    assert rows[1]["r2_paper"] == 0.4822 and math.isnan(rows[0]["r2_paper"])
    assert rows[0]["n"] == 40 and rows[0]["p"] == 300
