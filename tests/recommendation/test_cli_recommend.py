"""The ``recommend`` and ``multiselect`` commands: small runs write their files; bad input is
one error line and exit status 2."""

import csv
import json

import pytest

from dpbandits.cli import main


def _rows(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def test_recommend_writes_every_experiment(tmp_path):
    out = tmp_path / "rec"
    code = main(
        [
            "recommend",
            "--requests",
            "300",
            "--epsilon",
            "0.5,5",
            "--gamma",
            "0,1",
            "--grid-candidates",
            "3",
            "--grid-extremeness",
            "1",
            "--grid-informativeness",
            "0.5",
            "--bound",
            "0.1",
            "--out",
            str(out),
            "--json",
            str(tmp_path / "all.json"),
            "--no-progress",
            "--format",
            "svg",
        ]
    )
    assert code == 0
    eps = _rows(out / "epsilon.csv")
    assert {r["mechanism"] for r in eps} == {"rr", "snm_scaled", "snm_clipped"}
    assert len(eps) == 2 * 3
    assert len(_rows(out / "gamma.csv")) == 2
    assert len(_rows(out / "appg_winners.csv")) == 2
    assert (out / "epsilon.svg").exists() and (out / "appg.svg").exists()
    assert set(json.loads((tmp_path / "all.json").read_text())) == {
        "epsilon", "gamma", "appg", "rq1", "auction-epsilon", "auction-gamma"
    }  # fmt: skip
    assert len(_rows(out / "rq1.csv")) == 3 and (out / "auction_gamma.svg").exists()


def test_recommend_single_experiment_without_plots(tmp_path):
    out = tmp_path / "r"
    assert (
        main(
            [
                "recommend",
                "--experiment",
                "gamma",
                "--requests",
                "200",
                "--gamma",
                "lin:0:1:3",
                "--mechanism",
                "rr,snm_clipped",
                "--no-plots",
                "--no-progress",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    assert sorted(p.name for p in out.iterdir()) == ["gamma.csv"]
    assert len(_rows(out / "gamma.csv")) == 6


@pytest.mark.parametrize(
    "argv, match",
    [
        (["--experiment", "fig99"], "--experiment"),
        (["--epsilon", "0,1"], "--epsilon"),
        (["--gamma", "2"], "--gamma"),
        (["--mechanism", "magic"], "--mechanism"),
        (["--extremeness", "0"], "extremeness"),
        (["--n-candidates", "x"], "--n-candidates"),
        (["--bound", "-1"], "--bound"),
    ],
)
def test_recommend_bad_input(tmp_path, capsys, argv, match):
    assert main(["recommend", "--out", str(tmp_path / "o"), *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("dpbandits: error:") and match in err[0]
    assert not (tmp_path / "o").exists()  # validated before any work


def test_multiselect_small_run(tmp_path):
    out = tmp_path / "ms"
    code = main(
        [
            "multiselect",
            "--users",
            "4",
            "--train-users",
            "60",
            "--items",
            "30",
            "--eta",
            "0.1",
            "--k",
            "1,2",
            "--q1",
            "8",
            "--q2",
            "25",
            "--r",
            "10",
            "--p",
            "8",
            "--out",
            str(out),
            "--no-progress",
        ]
    )
    assert code == 0
    rows = _rows(out / "multiselect.csv")
    assert len(rows) == 5 * 2  # default algorithms x k
    text = (out / "table1_d_i.md").read_text()
    assert "sat_realuser k=2" in text and "| 0.1 |" in text
    # the table cells are the CSV's numbers (first column: nopost k=1)
    first = next(r for r in rows if r["algorithm"] == "nopost" and r["k"] == "1")
    line = next(x for x in text.splitlines() if x.startswith("| 0.1 |"))
    assert line.split("|")[2].strip().startswith(f"{float(first['d_i']):.3f} ±")
    assert (out / "table2_d_f.md").exists() and (out / "disutility.png").exists()


@pytest.mark.parametrize(
    "argv, match",
    [
        (["--eta", "0"], "--eta"),
        (["--algorithm", "magic"], "--algorithm"),
        (["--k", "0"], "--k"),
        (["--users", "0"], "--users"),
        (["--movielens", "/no/such/dir"], "--movielens"),
    ],
)
def test_multiselect_bad_input(tmp_path, capsys, argv, match):
    assert main(["multiselect", "--out", str(tmp_path / "o"), *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and match in err[0]
    assert not (tmp_path / "o").exists()


def test_multiselect_on_local_movielens_files(tmp_path, capsys):
    rng = __import__("numpy").random.default_rng(0)
    genres = ["Action", "Comedy|Romance", "Drama", "Sci-Fi|Action", "Horror", "Animation"]
    lines = ["movieId,title,genres"] + [f"{i},M{i},{g}" for i, g in enumerate(genres, 1)]
    (tmp_path / "movies.csv").write_text("\n".join(lines) + "\n")
    ratings = ["userId,movieId,rating,timestamp"]
    for u in range(1, 9):
        for m in range(1, 7):
            ratings.append(f"{u},{m},{rng.integers(1, 6)}.0,{u * 10 + m}")
    (tmp_path / "ratings.csv").write_text("\n".join(ratings) + "\n")
    out = tmp_path / "ml"
    code = main(
        [
            "multiselect",
            "--movielens",
            str(tmp_path),
            "--min-ratings",
            "1",
            "--users",
            "3",
            "--eta",
            "0.1",
            "--k",
            "1,2",
            "--q1",
            "5",
            "--q2",
            "10",
            "--r",
            "3",
            "--p",
            "4",
            "--no-plots",
            "--no-progress",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    assert "MovieLens" in (out / "table1_d_i.md").read_text()
    # the network's quality is shown even with --no-progress (stderr)
    assert "test within 0.5:" in capsys.readouterr().err
