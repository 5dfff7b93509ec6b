"""``recommend`` and ``multiselect`` as a user with own files runs them: what was loaded is
printed (also with --no-progress), the rule for candidates never shown, bad files refused
with their line, help texts that describe the models that run."""

from __future__ import annotations

import csv

import pytest

from dpbandits.cli import main

HEAD = "auction_id,bid,pclick_server,pclick_device,click,shown"


def _file(tmp_path, n=40, unshown_every=0):
    """``n`` auctions of 3 ads; with ``unshown_every`` > 0, every such auction has an ad the
    log never showed (shown = 0, click empty)."""
    lines = [HEAD]
    for i in range(n):
        for j in range(3):
            unshown = unshown_every and i % unshown_every == 0 and j == 2
            click = "" if unshown else str((i + j) % 2)
            shown = "0" if unshown else "1"
            lines.append(f"a{i},{1 + j},{0.05 + 0.01 * j},{0.04 + 0.02 * j},{click},{shown}")
    path = tmp_path / "mine.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def _run(tmp_path, path, *extra):
    out = tmp_path / "o"
    argv = ["recommend", "--auctions", str(path), "--experiment", "rq1", "--no-plots",
            "--no-progress", "--out", str(out), *extra]  # fmt: skip
    return main(argv), out


def test_summary_is_printed_with_no_progress(tmp_path, capsys):
    code, out = _run(tmp_path, _file(tmp_path))
    assert code == 0
    err = capsys.readouterr().err
    assert "mine.csv: 120 rows -> 40 auctions, 3.00 candidates on average (3-3)" in err
    assert "clicks logged on 120 shown ads" in err
    assert "outcome click, pay per click, clipping bounds" in err


def test_candidates_never_shown_follow_the_documented_rule(tmp_path, capsys):
    path = _file(tmp_path, unshown_every=4)
    code, out = _run(tmp_path, path)  # auto: not every candidate has a click -> pclick_device
    assert code == 0
    err = capsys.readouterr().err
    assert "10 auctions have candidates never shown" in err
    assert "outcome pclick_device: 10 of 40 auctions have candidates the log never showed" in err
    code, out = _run(tmp_path, path, "--outcome", "click")
    assert code == 0
    assert "outcome click: left out 10 of 40 auctions" in capsys.readouterr().err
    with open(out / "rq1.csv") as fh:
        assert len(list(csv.DictReader(fh))) == 3


def test_bad_file_is_refused_with_its_line(tmp_path, capsys):
    path = _file(tmp_path)
    lines = path.read_text().splitlines()
    lines[5] = "a1,2,0.06,1.3,0,1"
    path.write_text("\n".join(lines) + "\n")
    code, out = _run(tmp_path, path)
    assert code == 2
    err = capsys.readouterr().err
    assert f"{path}, line 6, column 'pclick_device': 1.3 is out of range" in err


def test_clicks_needed_but_absent(tmp_path, capsys):
    path = tmp_path / "noclick.csv"
    path.write_text("auction_id,bid,pclick_server,pclick_device\na,1,0.1,0.2\na,2,0.1,0.1\n")
    code, _ = _run(tmp_path, path, "--outcome", "click")
    assert code == 2
    assert "--outcome click: the data has no logged clicks" in capsys.readouterr().err


def test_multiselect_help_describes_the_models_that_run(capsys):
    with pytest.raises(SystemExit):
        main(["multiselect", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "latent-factor model with a rough user embedding" in text
    assert "neural network fitted to its ratings" in text
    assert "a bilinear rating model fitted to it is the ground truth" not in text
