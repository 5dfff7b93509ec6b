"""Running an experiment from its config; regret per segment between change points."""

from __future__ import annotations

import numpy as np
import pytest

import agents
from dpbandits.experiments.config import Experiment
from dpbandits.experiments.engine import run
from dpbandits.experiments.presets import shift_agents
from dpbandits.experiments.results import Results


def test_run_from_config_equals_run_from_python(piecewise):
    exp = Experiment.from_dict(piecewise)
    from_config = exp.run(n_jobs=1, progress=False)
    env = {"id": "dpbandits/PiecewiseBandit-v0", **piecewise["experiment"]["env_kwargs"]}
    by_hand = run(
        env,
        {"UCB": agents.UCB(), "mGEM": agents.PrivateAgent("mgem", epsilon_select=1.0,
                                                          beta=0.05, window=20)},
        n_runs=6, seed=7, n_jobs=1, progress=False, chunk_size=4,
    )  # fmt: skip
    assert from_config.labels == by_hand.labels
    for label in by_hand.labels:
        for key, arr in by_hand.data[label].items():
            np.testing.assert_array_equal(from_config.data[label][key], arr, err_msg=key)
    assert from_config.privacy == by_hand.privacy
    # the config that produced the results travels with them, and reads back
    assert Experiment.from_results(from_config) == exp
    assert "epsilon_select = 1.0" in Experiment.from_results(from_config).to_toml()


def test_fig9_config_is_the_shift_preset():
    exp = Experiment.from_toml("examples/configs/fig9.toml")
    objs = exp.agent_objects()
    preset = shift_agents()
    assert list(objs) == list(preset)
    for label, agent in objs.items():
        assert type(agent) is type(preset[label])
        assert repr(agent) == repr(preset[label]), label
    assert exp.env_config() == {"id": "dpbandits/TwoArmedShift-v0", "means": [0.2, 0.8],
                                "sds": [0.1, 0.3], "t_shift": 30000, "horizon": 50000}  # fmt: skip
    assert (exp.n_runs, exp.seed, exp.chunk_size) == (100, 0, 100)


def test_segment_regret_for_every_change_point_sums_to_the_total(piecewise):
    exp = Experiment.from_dict(piecewise)
    res = run(exp.env_config(), exp.agent_objects(), n_runs=6, seed=1, n_jobs=1,
              progress=False, keep_actions=True, chunk_size=4)  # fmt: skip
    assert res.config["change_points"] == [100, 200, 300]
    assert res.segments() == [(0, 100), (100, 200), (200, 300), (300, 400)]
    import gymnasium

    table = gymnasium.make(exp.env_config()["id"], **exp.env_kwargs).unwrapped
    table = table.expected_reward_table()
    gap = table.max(axis=1, keepdims=True) - table  # (T, K) per-step regret of each arm
    for label in res.labels:
        d = res.data[label]
        seg = d["segment_regret"]
        assert seg.shape == (4, 6)
        np.testing.assert_allclose(seg.sum(axis=0), d["total_regret"], rtol=1e-12)
        # each segment is the regret of its steps, recomputed from the actions
        per_step = np.take_along_axis(gap, d["actions"].astype(np.intp), axis=1)  # (T, R)
        for j, (a, b) in enumerate(res.segments()):
            np.testing.assert_allclose(seg[j], per_step[a:b].sum(axis=0), rtol=1e-9,
                                       atol=1e-9)  # fmt: skip
        # back-compatible split at the first change point
        np.testing.assert_allclose(d["pre_change_regret"], seg[0], rtol=1e-12)
        np.testing.assert_allclose(d["post_change_regret"], seg[1:].sum(axis=0), rtol=1e-9)
    row = res.summary()["UCB"]
    assert [k for k in row if k.startswith("regret_segment_")] == [
        f"regret_segment_{j}" for j in range(4)]  # fmt: skip
    assert row["regret_segment_2"] == pytest.approx(res.data["UCB"]["segment_regret"][2].mean())
    text = str(res.summary())
    for a, b in res.segments():
        assert f"regret in [{a}, {b})" in text
    assert "regret_segment_3" in res.to_json()["agents"]["mGEM"]
    pd = pytest.importorskip("pandas")
    runs = res.to_frame("runs")
    assert isinstance(runs, pd.DataFrame)
    np.testing.assert_array_equal(runs.loc[runs.agent == "mGEM", "regret_segment_2"],
                                  res.data["mGEM"]["segment_regret"][2])  # fmt: skip


def test_segments_without_change_points_and_old_files(tmp_path):
    res = run({"id": "dpbandits/DriftingBandit-v0", "horizon": 200}, ["ucb"], n_runs=3,
              n_jobs=1, progress=False)  # fmt: skip
    assert res.segments() == [(0, 200)]
    np.testing.assert_array_equal(res.segment_regret("ucb")[0], res.data["ucb"]["total_regret"])
    assert "regret in" not in str(res.summary())  # one segment: the total column says it all
    # a file written before segments existed: the split at the first change point
    two = run({"id": "dpbandits/TwoArmedShift-v0", "t_shift": 50, "horizon": 100}, ["ucb"],
              n_runs=3, n_jobs=1, progress=False)  # fmt: skip
    del two.data["ucb"]["segment_regret"]
    del two.config["segments"]
    loaded = Results.load(two.save(tmp_path / "old.npz"))
    assert loaded.summary()["ucb"]["regret_segment_1"] == pytest.approx(
        loaded.data["ucb"]["post_change_regret"].mean())  # fmt: skip


def test_list_agents_are_labelled_by_name_never_dict():
    res = run({"id": "dpbandits/TwoArmedShift-v0", "t_shift": 50, "horizon": 100},
              [{"kind": "ucb"}, {"kind": "private", "selector": "rnm"}, agents.Exp3(), "ucb"],
              n_runs=2, n_jobs=1, progress=False)  # fmt: skip
    assert res.labels == ["ucb", "private", "exp3", "ucb-2"]


def test_cli_run_with_quick_flags(tmp_path, capsys):
    from dpbandits.cli import main

    out = tmp_path / "r"
    code = main(["run", "--env", "dpbandits/PiecewiseBandit-v0", "--env-arg", "horizon=300",
                 "--env-arg", "segments=[[0, [0.2, 0.8], [0.1, 0.1]], [120, [0.8, 0.2], "
                 "[0.1, 0.1]], [240, [0.5, 0.6], [0.1, 0.1]]]",
                 "--agent", "UCB=ucb", "--agent", "mGEM=private:selector=mgem,epsilon_select=2",
                 "--runs", "3", "--seed", "5", "--out", str(out), "--no-progress", "--jobs", "1",
                 "--format", "svg"])  # fmt: skip
    text = capsys.readouterr().out
    assert code == 0
    assert "regret in [0, 120)" in text and "regret in [240, 300)" in text
    res = Results.load(out / "results.npz")
    assert res.labels == ["UCB", "mGEM"] and res.config["seed"] == 5
    again = Experiment.from_toml(out / "config.toml")
    assert again.agents["mGEM"] == {"kind": "private", "selector": "mgem", "epsilon_select": 2}
    assert (out / "cumulative.svg").is_file()
    header = (out / "summary.csv").read_text().splitlines()[0].split(",")
    assert header[:5] == ["agent", "n_runs", "regret_mean", "regret_sd", "regret_se"]
    assert header[5:] == ["regret_segment_0", "regret_segment_1", "regret_segment_2"]
    # --print-config writes the resolved config and runs nothing
    assert main(["run", str(out / "config.toml"), "--print-config", "--seed", "8"]) == 0
    printed = Experiment.from_toml(capsys.readouterr().out)
    assert printed.seed == 8 and printed.agents == again.agents


def test_cli_run_refuses_a_sweep(tmp_path, capsys, piecewise_sweep):
    from dpbandits.cli import main
    from dpbandits.experiments.config import to_toml

    cfg = tmp_path / "s.toml"
    cfg.write_text(to_toml(piecewise_sweep))
    assert main(["run", str(cfg), "--out", str(tmp_path / "o")]) == 2
    assert "use `dpbandits sweep`" in capsys.readouterr().err.replace("run it with", "use")
