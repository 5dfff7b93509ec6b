"""Paper 002's real-data path as a user with own files takes it: bad cells named by line and
column, Table 1's R^2 on a sparse file, the paper's numbers chosen by --paper-dataset, notices
printed with --no-progress, stand-ins keyed by name."""

from __future__ import annotations

import csv
import importlib.util
import re

import numpy as np
import pytest

from dpbandits.cli import main
from dpbandits.topk import real_data as rd

# found, not imported: importing scikit-learn (and pandas with it) in every test process at
# collection costs more than this file's tests; the one test that needs it imports it
pytestmark = pytest.mark.skipif(importlib.util.find_spec("sklearn") is None,
                                reason="needs scikit-learn (the topk extra)")  # fmt: skip

GOOD = ["1,2,a", "3,4,b", "5,6,a", "7,9,b"]


@pytest.mark.parametrize(
    "lines, words",
    [
        (["1,2,a", "", "3,x,b", "5,6,a"], "line 4, column 'g1' is not a number: 'x'"),
        (["1,2,a", "3,,b", "5,6,a"], "line 3, column 'g1' is missing: ''"),
        (["1,2,a", "3,NA,b", "5,6,a"], "line 3, column 'g1' is missing: 'NA'"),
        (["1,2,a", "3,inf,b", "5,6,a"], "line 3, column 'g1' is not finite"),
        (["1,2,a", "", "", "3,4,", "5,6,a"], "line 5, column 'y': the label of sample 2"),
        (["1,2,a", "3,4,b,9", "5,6,a"], "line 3: 4 fields, the header has 3"),
    ],
)
def test_bad_microarray_cells_are_named_by_line(tmp_path, lines, words):
    path = tmp_path / "m.csv"
    path.write_text("\n".join(["g0,g1,y", *lines]) + "\n")
    with pytest.raises(ValueError, match=re.escape(words)):
        rd.load_microarray(str(path))


def test_bad_cell_in_genes_layout_names_line_and_gene(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("id,s1,s2,s3\ng0,1,2,3\ng1,4,oops,6\ny,a,b,a\n")
    with pytest.raises(
        ValueError, match=re.escape("sample 's2', line 3 (gene 'g1') is not a number")
    ):
        rd.load_microarray(str(path), layout="genes")
    path.write_text("id,s1,s2,s3\ng0,1,2,3\ng1,4,5,6\ny,a,,a\n")
    with pytest.raises(ValueError, match=re.escape("line 4, sample 's2' of the row 'y'")):
        rd.load_microarray(str(path), layout="genes")


def _sparse_csv(path, n=60, d=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * (rng.random((n, d)) < 0.1)
    y = X[:, :4] @ np.array([3.0, 2.0, 2.0, 1.0]) + 0.3 * rng.standard_normal(n)
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow([f"g{j}" for j in range(d)] + ["y"])
        w.writerows(np.column_stack([X, y]).round(5).tolist())


def _table1(out):
    with open(out / "table1.csv") as fh:
        return list(csv.DictReader(fh))


def test_sparse_user_file_gets_a_table1_r2_and_notices_without_progress(tmp_path, capsys):
    """At lambda = 0.1 the LASSO keeps nothing of a sparse file (R^2 = 0, as the paper's
    definition gives); Table 1 then also reports the R^2 at the truth's penalty, and the
    notice that the truth came from further down the path is printed with --no-progress."""
    path = tmp_path / "alon.csv"  # named like a Table 1 set: no paper numbers without the option
    _sparse_csv(path)
    out = tmp_path / "o"
    argv = ["topk", "--data", str(path), "--target", "y", "--figure", "table1",
            "--no-progress", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    (row,) = _table1(out)
    assert float(row["r2"]) == 0.0 and row["n_nonzero"] == "0"
    assert float(row["r2_truth"]) > 0.5 and float(row["truth_lambda"]) < 0.1
    assert row["r2_paper"] == "nan" and row["paper_dataset"] == ""
    err = capsys.readouterr().err
    assert "the truth continues down the LASSO path" in err
    assert main([*argv, "--paper-dataset", "Alon"]) == 0
    (row,) = _table1(out)
    assert float(row["r2_paper"]) == 0.4822 and row["paper_dataset"] == "alon"
    assert "0.4822 (alon)" in capsys.readouterr().out
    assert main([*argv, "--paper-dataset", "-"]) == 0  # '-': none of Table 1
    (row,) = _table1(out)
    assert row["r2_paper"] == "nan" and row["paper_dataset"] == ""


@pytest.mark.parametrize(
    "extra, words",
    [
        (["--paper-dataset", "nope"], "unknown Table 1 data set 'nope'"),
        (["--paper-dataset", "alon,golub"], "--paper-dataset names 2 data set(s) for 1 --data"),
    ],
)
def test_paper_dataset_is_checked(tmp_path, capsys, extra, words):
    path = tmp_path / "d.csv"
    _sparse_csv(path)
    argv = ["topk", "--data", str(path), "--target", "y", "--out", str(tmp_path / "o"), *extra]
    assert main(argv) == 2
    assert words in capsys.readouterr().err


def test_a_standin_is_the_same_data_alone_or_among_others(tmp_path):
    rows = {}
    for names in ("sorlie", "sorlie,christensen", "christensen,sorlie"):
        out = tmp_path / names.replace(",", "_")
        argv = ["topk", "--standin", names, "--figure", "table1", "--no-progress",
                "--out", str(out)]  # fmt: skip
        assert main(argv) == 0
        rows[names] = {r["dataset"]: r for r in _table1(out)}
    first = rows["sorlie"]["sorlie (stand-in)"]
    for other in ("sorlie,christensen", "christensen,sorlie"):
        assert rows[other]["sorlie (stand-in)"] == first
    assert (
        rows["sorlie,christensen"]["christensen (stand-in)"]
        == rows["christensen,sorlie"]["christensen (stand-in)"]
    )
    a, b = rd.standin("sorlie", 0), rd.standin("Sorlie ", 0)
    np.testing.assert_array_equal(a.X, b.X)
    assert a.paper == "sorlie"
