"""Sweeps: grid cells in a content-addressed store, the same numbers on every scheduler,
resumption after a kill, failing cells, summary.csv and plots."""

from __future__ import annotations

import copy
import csv
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from dpbandits.experiments.config import Experiment, to_toml
from dpbandits.experiments.results import Results
from dpbandits.experiments.sweep import check_scheduler, sweep

ROOT = Path(__file__).resolve().parents[2]


def _files(out: Path) -> dict[str, tuple[int, int]]:
    """Every stored result: name -> (inode, mtime in ns)."""
    return {p.name: (p.stat().st_ino, p.stat().st_mtime_ns)
            for p in (out / "store").glob("*/*.npz")}  # fmt: skip


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """An uninterrupted serial sweep of the 2 x 2 piecewise grid."""
    from tests.experiments.conftest import PIECEWISE

    cfg = copy.deepcopy(PIECEWISE)
    cfg["sweep"] = {"agents.mGEM.epsilon_select": [0.5, 2.0],
                    "experiment.env_kwargs.horizon": [350, 400]}  # fmt: skip
    out = tmp_path_factory.mktemp("reference")
    res = sweep(Experiment.from_dict(cfg), out, scheduler="serial", progress=False, plots=False)
    return cfg, out, res


def test_summary_csv_has_one_row_per_cell_and_agent_with_segments(reference):
    cfg, out, res = reference
    assert res.ok and len(res.computed) == 4 and res.reused == []
    rows = _rows(out / "summary.csv")
    header = next(csv.reader(open(out / "summary.csv")))
    assert header == [
        "agents.mGEM.epsilon_select", "experiment.env_kwargs.horizon", "agent", "n_runs",
        "regret_mean", "regret_sd", "regret_se", "regret_segment_0", "regret_segment_1",
        "regret_segment_2", "regret_segment_3", "result",
    ]  # fmt: skip
    assert [(r["agents.mGEM.epsilon_select"], r["experiment.env_kwargs.horizon"], r["agent"])
            for r in rows] == [(e, h, a) for e in ("0.5", "2.0") for h in ("350", "400")
                               for a in ("UCB", "mGEM")]  # fmt: skip
    for r in rows:
        segs = sum(float(r[f"regret_segment_{j}"]) for j in range(4))
        assert segs == pytest.approx(float(r["regret_mean"]), rel=1e-12)
        assert float(r["regret_se"]) == pytest.approx(float(r["regret_sd"]) / 6**0.5)
        cell = Results.load(out / r["result"])  # every cell's results load
        assert cell.config["experiment_config"]["experiment"]["env_kwargs"]["horizon"] == int(
            r["experiment.env_kwargs.horizon"])  # fmt: skip
        assert cell.config["experiment_config"]["agents"]["mGEM"]["epsilon_select"] == float(
            r["agents.mGEM.epsilon_select"])  # fmt: skip
        mean = float(cell.data[r["agent"]]["total_regret"].mean())
        assert repr(mean) == r["regret_mean"]  # full precision: bit-identical when read back
    cells = _rows(out / "cells.csv")
    assert [c["status"] for c in cells] == ["computed"] * 4
    assert len({c["seed"] for c in cells}) == 4
    assert Experiment.from_toml(out / "sweep.toml") == Experiment.from_dict(cfg)


def test_a_cell_reruns_on_its_own_from_its_results_file(reference, capsys):
    from dpbandits.cli import main

    _, out, res = reference
    stored = Results.load(res.result_path(3))
    exp = Experiment.from_results(stored)
    assert exp.seed == res.cells[3].seed and not exp.sweep
    again = exp.run(n_jobs=1, progress=False)
    for label in stored.labels:
        for key, arr in stored.data[label].items():
            assert (again.data[label][key] == arr).all(), key
    assert main(["run", str(res.result_path(3)), "--print-config"]) == 0
    assert Experiment.from_toml(capsys.readouterr().out) == exp


def test_rerun_computes_nothing_and_a_grown_grid_only_the_new_cells(reference, tmp_path):
    cfg, out, _ = reference
    work = tmp_path / "sweep"
    import shutil

    shutil.copytree(out, work)
    before = _files(work)
    res = sweep(Experiment.from_dict(cfg), work, scheduler="serial", progress=False, plots=False)
    assert res.computed == [] and sorted(res.reused) == [0, 1, 2, 3]
    assert _files(work) == before  # no file rewritten
    assert (work / "summary.csv").read_bytes() == (out / "summary.csv").read_bytes()
    # one more epsilon: only its two cells run; the others keep their keys, seeds and numbers
    grown = copy.deepcopy(cfg)
    grown["sweep"]["agents.mGEM.epsilon_select"] = [0.5, 1.0, 2.0]
    res = sweep(Experiment.from_dict(grown), work, scheduler="serial", progress=False,
                plots=False)  # fmt: skip
    assert sorted(res.computed) == [2, 3] and sorted(res.reused) == [0, 1, 4, 5]
    old = _rows(out / "summary.csv")
    new = [r for r in _rows(work / "summary.csv") if r["agents.mGEM.epsilon_select"] != "1.0"]
    assert new == old


def test_every_scheduler_gives_the_same_numbers(reference, tmp_path):
    distributed = pytest.importorskip("distributed")
    cfg, out, _ = reference
    exp = Experiment.from_dict(cfg)
    expected = (out / "summary.csv").read_bytes()
    res = sweep(exp, tmp_path / "p", scheduler="processes", n_jobs=2, progress=False,
                plots=False)  # fmt: skip
    assert res.ok and (tmp_path / "p" / "summary.csv").read_bytes() == expected
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  protocol="tcp", dashboard_address=":0") as cluster:  # fmt: skip
        res = sweep(exp, tmp_path / "d", scheduler=cluster.scheduler_address, progress=False,
                    plots=False)  # fmt: skip
    assert res.ok and res.scheduler.startswith("tcp://")
    assert (tmp_path / "d" / "summary.csv").read_bytes() == expected
    assert _files(tmp_path / "d").keys() == _files(out).keys()


@pytest.mark.slow
def test_local_dask_cluster_scheduler(reference, tmp_path):
    pytest.importorskip("distributed")
    cfg, out, _ = reference
    res = sweep(Experiment.from_dict(cfg), tmp_path / "l", scheduler="local", n_jobs=1,
                progress=False, plots=False)  # fmt: skip
    assert res.ok and res.scheduler == "local"
    assert (tmp_path / "l" / "summary.csv").read_bytes() == (out / "summary.csv").read_bytes()


def test_scheduler_names_are_checked():
    assert check_scheduler("serial") == "serial" and check_scheduler("processes") == "processes"
    with pytest.raises(ValueError, match="scheduler must be one of processes, local, serial"):
        check_scheduler("threads")
    with pytest.raises(ValueError, match="tcp://HOST:PORT"):
        check_scheduler("tcp://somewhere")


def test_a_failing_cell_is_reported_and_the_others_finish(tmp_path, capsys):
    from dpbandits.cli import main

    plugin = tmp_path / "flaky_plugin.py"
    plugin.write_text(textwrap.dedent('''
        import agents

        class Flaky(agents.UCB):
            """UCB that raises at step ``fail_at`` (never when negative)."""
            name = "flaky"

            def __init__(self, alpha=2 ** 0.5, log="T", fail_at=-1):
                super().__init__(alpha=alpha, log=log)
                self.fail_at = fail_at

            def choose(self):
                if self.t == self.fail_at:
                    raise RuntimeError("flaky agent failed on purpose")
                return super().choose()

        agents.register("flaky", Flaky, overwrite=True)
    '''))
    cfg = tmp_path / "flaky.toml"
    cfg.write_text(textwrap.dedent('''
        [experiment]
        env = "dpbandits/TwoArmedShift-v0"
        n_runs = 3
        [experiment.env_kwargs]
        t_shift = 60
        horizon = 100
        [agents.F]
        kind = "flaky"
        [sweep]
        "agents.F.fail_at" = [-1, 50, -2]
    '''))
    out = tmp_path / "out"
    argv = ["sweep", str(cfg), "--out", str(out), "--plugin", str(plugin), "--scheduler",
            "serial", "--no-progress"]  # fmt: skip
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "cell 1 failed (agents.F.fail_at=50): RuntimeError: flaky agent failed on purpose" in err
    rows = _rows(out / "summary.csv")
    assert [r["agents.F.fail_at"] for r in rows] == ["-1", "-2"]
    assert [c["status"] for c in _rows(out / "cells.csv")] == ["computed", "failed", "computed"]
    assert "Traceback" in (out / "failed_cells.txt").read_text()
    # a re-run retries the failed cell only
    assert main(argv) == 1
    assert [c["status"] for c in _rows(out / "cells.csv")] == ["reused", "failed", "reused"]


@pytest.mark.slow
def test_kill_9_in_the_middle_then_rerun_is_bit_identical(tmp_path):
    """Kill the sweep CLI with SIGKILL once some cells are stored; the re-run computes only the
    rest, leaves stored files alone, and writes the summary of an uninterrupted sweep."""
    from tests.experiments.conftest import PIECEWISE

    cfg = copy.deepcopy(PIECEWISE)
    cfg["experiment"]["env_kwargs"]["horizon"] = 800
    cfg["sweep"] = {"agents.mGEM.epsilon_select": [0.25, 0.5, 1.0, 2.0, 4.0]}
    path = tmp_path / "kill.toml"
    path.write_text(to_toml(cfg))
    out = tmp_path / "killed"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "dpbandits", "sweep", str(path), "--out", str(out),
            "--scheduler", "serial", "--no-progress", "--no-plots"]  # fmt: skip
    proc = subprocess.Popen(argv, env=env, cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not _files(out) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    done = _files(out)
    assert 1 <= len(done) < 5, "the kill should land in the middle of the sweep"
    assert not (out / "summary.csv").exists()

    rerun = subprocess.run(argv, env=env, cwd=tmp_path, capture_output=True, text=True,
                           timeout=300)  # fmt: skip
    assert rerun.returncode == 0, rerun.stderr
    assert (f"5 cells: {5 - len(done)} computed, {len(done)} reused from the store, 0 failed"
            in rerun.stdout)  # fmt: skip
    after = _files(out)
    assert {k: after[k] for k in done} == done  # finished cells were not recomputed
    reference = sweep(Experiment.from_dict(cfg), tmp_path / "whole", scheduler="serial",
                      progress=False, plots=False)  # fmt: skip
    assert reference.ok
    assert (out / "summary.csv").read_bytes() == (tmp_path / "whole" / "summary.csv").read_bytes()
    assert after.keys() == _files(tmp_path / "whole").keys()


def test_plots_are_written_and_kept(reference, tmp_path):
    import shutil

    from dpbandits.experiments.sweep_plots import write_sweep_plots

    _, out, res = reference
    shutil.copytree(out, tmp_path / "s")
    res = copy.copy(res)
    res.out = tmp_path / "s"
    written = write_sweep_plots(res)
    names = {p.relative_to(res.out).as_posix() for p in written}
    assert names == {"plots/regret_vs_agents.mGEM.epsilon_select.png",
                     "plots/regret_vs_experiment.env_kwargs.horizon.png"} | {
                         f"plots/curves/{k[:16]}.png" for k in res.keys}  # fmt: skip
    assert all(p.is_file() and p.read_bytes()[:4] == b"\x89PNG" for p in written)
    stamps = {p: p.stat().st_mtime_ns for p in written if "curves" in p.parts}
    write_sweep_plots(res)  # a cell's curves are drawn once
    assert {p: p.stat().st_mtime_ns for p in stamps} == stamps


def test_plot_functions_return_figures(reference):
    from matplotlib.figure import Figure

    from dpbandits.experiments.sweep_plots import numeric_keys, plot_cell_curves, plot_final_regret

    _, out, res = reference
    keys = ["agents.mGEM.epsilon_select", "experiment.env_kwargs.horizon"]
    assert numeric_keys(res.rows, keys) == keys
    fig = plot_final_regret(res.rows, keys[0], keys)
    assert isinstance(fig, Figure)
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert len(axes) == 2 and all(ax.get_xscale() == "log" for ax in axes)  # epsilon: log x
    assert plot_final_regret(res.rows, keys[1], keys).axes[0].get_xscale() == "linear"
    assert isinstance(plot_cell_curves(Results.load(res.result_path(0)), "cell 0"), Figure)
    with pytest.raises(ValueError, match="numeric value"):
        plot_final_regret([{**res.rows[0], keys[0]: "x"}], keys[0])


def test_uniform_play_and_the_bounds_of_the_sweep_figures(reference):
    """Uniform play's level is its closed form; a cell's curves get the lower bounds at the
    cell's eps only when an agent's whole run is eps-DP at it."""
    import math

    from scipy.stats import norm

    from dpbandits.experiments import sweep_plots as sp

    _, out, res = reference
    cell = Results.load(res.result_path(0))  # horizon 350, 4 segments of clipped N(m, 0.1^2)
    # every segment's means are a permutation of (0.2, 0.5, 0.8): clipped at 0 and 1, the outer
    # ones move in by delta = E[max(X, 0)] - 0.2 for X ~ N(0.2, 0.1^2), so each step's gap to
    # the mean of the three is 0.3 - delta
    delta = 0.2 * norm.cdf(2.0) + 0.1 * norm.pdf(2.0) - 0.2
    assert sp._uniform_regret(cell) == pytest.approx(350 * (0.3 - delta), rel=1e-6)
    levels = sp._bounds_of(res, "agents.mGEM.epsilon_select")
    assert levels[sp.UNIFORM] == {math.inf: sp._uniform_regret(cell)}
    # every bound's label says it is summed over the 4 segments (Lai-Robbins, a level, and the
    # strongest eps-DP bound against eps alike), and which one is drawn against eps
    bound_names = sorted(name for name in levels if name != sp.UNIFORM)
    assert bound_names == ["lower bound: Azize & Basu 2022, ε on the x-axis, summed over 4 "
                           "segments", "lower bound: Lai & Robbins 1985, summed over 4 segments"]
    lit, app_h = {"UCB": sp.REFERENCE, "DP-SE": "lit"}, {"UCB": sp.REFERENCE, "mGEM": sp.APP_H}
    key = "agents.*.epsilon|epsilon_select"
    assert sp._cell_bounds_epsilon({key: 0.1, "x": 3}, lit) == 0.1
    assert sp._cell_bounds_epsilon({key: 1e6}, lit) == math.inf  # eps = inf: Lai-Robbins only
    assert sp._cell_bounds_epsilon({key: 0.1}, app_h) == math.inf  # eps_S is no run's eps
    fig = sp.plot_cell_curves(cell, "cell 0", 0.5)
    labels = [t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().texts]
    assert any("Lai" in t for t in labels) and any("ε=0.5" in t for t in labels), labels


def test_store_keys_paths_and_partial_writes(tmp_path):
    from dpbandits.experiments.store import Store, cell_key

    key = cell_key({"experiment": {"env": "x"}}, 3, version="1")
    assert key == cell_key({"experiment": {"env": "x"}}, 3, version="1") and len(key) == 64
    assert key != cell_key({"experiment": {"env": "x"}}, 4, version="1")
    assert key != cell_key({"experiment": {"env": "x"}}, 3, version="2")
    store = Store(tmp_path)
    assert store.path(key) == tmp_path / key[:2] / f"{key}.npz" and key not in store
    assert store.get(key) is None
    store.path(key).parent.mkdir()
    store.path(key).write_bytes(b"PK\x03\x04 truncated")  # an unreadable file is recomputed
    assert store.get(key) is None
    old = store.path(key).parent / f".{key}.npz.abc.tmp"
    new = store.path(key).parent / f".{key}.npz.def.tmp"
    old.write_bytes(b"x")
    new.write_bytes(b"x")
    os.utime(old, (time.time() - 7200, time.time() - 7200))
    assert store.remove_partial() == [old] and new.exists() and not old.exists()
    with pytest.raises(ValueError, match="hex digest"):
        store.path("../etc")


@pytest.mark.parametrize(("n_jobs", "error", "message"), [
    (0, ValueError, "n_jobs must be >= 1, got 0"),
    (True, TypeError, "n_jobs must be an integer, got bool True"),
    (2.0, TypeError, "n_jobs must be an integer, got float 2.0"),
])  # fmt: skip
def test_sweep_refuses_a_bad_n_jobs_before_any_work(tmp_path, piecewise_sweep, n_jobs, error,
                                                   message):  # fmt: skip
    exp = Experiment.from_dict(piecewise_sweep, check=False)
    with pytest.raises(error, match=f"^{message}$"):
        sweep(exp, tmp_path / "o", n_jobs=n_jobs, scheduler="serial", progress=False)
    assert not (tmp_path / "o").exists()


def test_store_remove_partial_checks_its_age(tmp_path):
    from dpbandits.experiments.store import Store

    store = Store(tmp_path)
    with pytest.raises(ValueError, match="older_than must be >= 0 seconds"):
        store.remove_partial(-1.0)
    with pytest.raises(TypeError, match="older_than must be a real number"):
        store.remove_partial("1")  # type: ignore[arg-type]
    (tmp_path / "ab").mkdir()
    stale = tmp_path / "ab" / ".x.npz.tmp"
    stale.write_bytes(b"partial")
    os.utime(stale, (time.time() - 10, time.time() - 10))
    assert store.remove_partial(5.0) == [stale] and not stale.exists()


def _killed_mid_write(*paths: Path) -> list[Path]:
    """The temporary files a process killed with SIGKILL in the middle of atomic writes of
    ``paths`` leaves behind (written by a real child process, which is then gone)."""
    code = textwrap.dedent(f"""
        import contextlib, os, signal
        from dpbandits.core.files import atomic_open
        with contextlib.ExitStack() as stack:
            for path in {[str(p) for p in paths]!r}:
                stack.enter_context(atomic_open(path)).write(b"half a file")
            os.kill(os.getpid(), signal.SIGKILL)
    """)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", code], env=env, timeout=120)
    assert proc.returncode == -signal.SIGKILL
    left = [next(p.parent.glob(f".{p.name}.*.tmp")) for p in paths]
    assert not any(p.exists() for p in paths)
    return left


def test_a_rerun_removes_what_a_killed_sweep_left_half_written(tmp_path, piecewise_sweep):
    """Issue 30, item 6: a hidden ``*.png.*.tmp`` left in ``plots/`` (and in the store, and
    beside the tables) by a kill is removed when the sweep runs again, at once; a temporary
    file of a write that is going on now (this process's) is left alone."""
    piecewise_sweep["sweep"] = {"agents.mGEM.epsilon_select": [0.5]}
    out = tmp_path / "s"
    stale = _killed_mid_write(out / "plots" / "regret_vs_x.png",
                              out / "plots" / "curves" / "0123456789abcdef.png",
                              out / "summary.csv", out / "store" / "ab" / f"{'ab' * 32}.npz")
    live = out / "plots" / f".regret_vs_y.png.{os.getpid()}.abcdefgh.tmp"
    live.write_bytes(b"being written")
    res = sweep(Experiment.from_dict(piecewise_sweep), out, scheduler="serial", progress=False,
                plots=False)  # fmt: skip
    assert res.ok
    assert [p for p in stale if p.exists()] == []
    assert live.exists()


def test_stale_temporaries_are_told_by_their_writer_or_their_age(tmp_path):
    from dpbandits.core.files import is_stale_temporary, remove_stale_temporaries

    (gone,) = _killed_mid_write(tmp_path / "a.png")
    mine = tmp_path / f".b.png.{os.getpid()}.abcdefgh.tmp"
    old_style = tmp_path / ".c.png.abcdefgh.tmp"  # no pid: written by an earlier version
    not_ours = tmp_path / ".d.png.1.abcdefgh"  # not a temporary file name
    for p in (mine, old_style, not_ours):
        p.write_bytes(b"x")
    assert is_stale_temporary(gone) and not is_stale_temporary(mine)
    assert not is_stale_temporary(old_style) and not is_stale_temporary(not_ours)
    os.utime(old_style, (time.time() - 60, time.time() - 60))
    assert is_stale_temporary(old_style, older_than=30) and not is_stale_temporary(mine, 30)
    assert remove_stale_temporaries(tmp_path) == [gone]
    assert remove_stale_temporaries(tmp_path, older_than=30) == [old_style]
    assert mine.exists() and not_ours.exists()
    assert remove_stale_temporaries(tmp_path / "missing") == []
