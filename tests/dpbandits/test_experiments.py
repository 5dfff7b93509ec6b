"""The batched regret engine and Results."""

from __future__ import annotations

import json

import gymnasium
import numpy as np
import pytest

import agents
import envs  # noqa: F401  (registers the ids)
from dpbandits.experiments import Results, chunk_seeds, run, shift_agents, shift_env

ENV = shift_env(t_shift=150, horizon=300)


def replay_with_env_loop(agent, label, seed, env_kwargs):
    """The plain single-replication loop a student would write, with the engine's seeds."""
    env = gymnasium.make("dpbandits/TwoArmedShift-v0", **env_kwargs)
    env_seed, agent_ss = chunk_seeds(seed, 0, label)
    env.reset(seed=env_seed)
    agent.reset(1, 2, horizon=env_kwargs["horizon"], rng=np.random.default_rng(agent_ss))
    actions, regret, rewards = [], [], []
    for _ in range(env_kwargs["horizon"]):
        a = agent.act()
        _, r, terminated, truncated, info = env.step(int(a[0]))
        agent.update(a, np.array([r]))
        actions.append(int(a[0]))
        regret.append(info["regret"])
        rewards.append(r)
    assert truncated and not terminated
    return np.array(actions), np.array(regret), np.array(rewards)


@pytest.mark.parametrize(
    "make_agent",
    [agents.UCB, agents.ThompsonSampling, lambda: agents.PrivateAgent("mgem", window=20),
     lambda: agents.PrivateAgent("rs", window=20, gamma=0.05), agents.Exp3],
    ids=["UCB", "TS", "mGEM", "RS", "Exp3"],
)  # fmt: skip
def test_engine_with_one_run_takes_the_actions_of_a_plain_env_loop(make_agent):
    seed, label = 11, "X"
    res = run(ENV, {label: make_agent()}, n_runs=1, seed=seed, progress=False, n_jobs=1,
              keep_actions=True, record_stride=1)  # fmt: skip
    actions, regret, rewards = replay_with_env_loop(
        make_agent(), label, seed, {"t_shift": 150, "horizon": 300}
    )
    assert np.array_equal(res.data[label]["actions"][:, 0], actions)
    # regret from the expected-reward table equals the env's per-step info["regret"]
    np.testing.assert_allclose(res.data[label]["regret"][:, 0], np.cumsum(regret), rtol=1e-12)
    np.testing.assert_allclose(res.data[label]["reward"][:, 0], np.cumsum(rewards), rtol=1e-12)
    d = res.data[label]
    assert d["pre_change_regret"][0] == pytest.approx(regret[:150].sum(), rel=1e-12)
    assert d["post_change_regret"][0] == pytest.approx(regret[150:].sum(), rel=1e-9, abs=1e-12)
    # one run: the standard error is undefined, reported as null in strict JSON
    assert (
        json.loads(json.dumps(res.to_json(), allow_nan=False))["agents"][label]["regret_se"] is None
    )


def small_run(seed=3, n_jobs=1, **kw):
    agent_map = {"UCB": "ucb", "TS": agents.ThompsonSampling(),
                 "mGEM": agents.PrivateAgent("mgem", window=20)}  # fmt: skip
    kw.setdefault("chunk_size", 2)
    return run(ENV, agent_map, n_runs=5, seed=seed, progress=False, n_jobs=n_jobs, **kw)


def test_same_seed_same_results_whatever_the_workers():
    a = small_run()
    assert a.equals(small_run())
    assert a.equals(small_run(n_jobs=2))  # 3 chunks x 3 agents over two processes
    b = small_run(seed=4)
    assert not np.array_equal(a.data["TS"]["regret"], b.data["TS"]["regret"])


def test_agent_results_do_not_depend_on_other_agents():
    full = small_run()
    alone = run(ENV, {"TS": agents.ThompsonSampling()}, n_runs=5, seed=3, progress=False,
                n_jobs=1, chunk_size=2)  # fmt: skip
    assert np.array_equal(full.data["TS"]["regret"], alone.data["TS"]["regret"])


def test_common_random_numbers_across_agents():
    # UCB is deterministic given the rewards: two copies face the same draws, so act alike.
    res = run(ENV, {"A": "ucb", "B": agents.UCB()}, n_runs=4, seed=1, progress=False, n_jobs=1)
    assert np.array_equal(res.data["A"]["regret"], res.data["B"]["regret"])
    assert np.array_equal(res.data["A"]["reward"], res.data["B"]["reward"])


def test_results_save_load_round_trip(tmp_path):
    res = small_run(keep_actions=True)
    path = res.save(tmp_path / "res")
    assert path.suffix == ".npz" and path.exists()
    loaded = Results.load(path)
    assert loaded.equals(res)
    assert loaded.config == res.config and loaded.privacy == res.privacy
    assert str(loaded.summary()) == str(res.summary())
    assert loaded.data["UCB"]["actions"].dtype == np.int8
    assert json.loads(json.dumps(res.to_json()))["agents"].keys() == {"UCB", "TS", "mGEM"}


def test_results_content_and_summary():
    res = small_run(record_stride=50)
    assert res.labels == ["UCB", "TS", "mGEM"]
    assert np.array_equal(res.steps, np.arange(50, 301, 50))
    assert res.arrays["expected_rewards"].shape == (6, 2)
    d = res.data["mGEM"]
    assert d["regret"].shape == (6, 5) and d["private_means"].shape == (6, 5, 2)
    assert d["sensitivities"].shape == (6, 5, 2)
    assert d["action_counts"].sum(axis=1).tolist() == [300] * 5
    np.testing.assert_allclose(d["action_freq"].sum(axis=1), 1.0)
    np.testing.assert_allclose(d["pre_change_regret"] + d["post_change_regret"], d["total_regret"])
    assert np.all(np.diff(d["regret"], axis=0) >= 0)  # pseudo-regret never decreases
    row = res.summary()["mGEM"]
    assert row["regret_mean"] == pytest.approx(d["total_regret"].mean())
    assert row["regret_se"] == pytest.approx(d["total_regret"].std(ddof=1) / np.sqrt(5))
    assert "eps_M=1" in row["privacy"] and res.summary()["UCB"]["privacy"].startswith("none")
    assert "mGEM" in str(res.summary()) and "|" in res.summary().to_markdown()
    assert "Privacy ledger" in res.privacy_text()
    # the true 10-90% range of the clipped rewards: before the shift arm 1 ~ N(0.8, 0.3^2)
    q = res.arrays["true_quantile_range"]
    assert q[0, 1] == pytest.approx(
        min(0.8 + 0.3 * 1.2815515655446004, 1) - (0.8 - 0.3 * 1.2815515655446004)
    )
    frame = res.to_frame()
    assert set(frame.columns) >= {"agent", "step", "regret_mean", "regret_se"}
    assert len(res.to_frame("runs")) == 15


def test_run_accepts_names_configs_and_instances():
    env_instance = gymnasium.make("dpbandits/TwoArmedShift-v0", t_shift=50, horizon=100)
    res = run(env_instance, {"u": {"kind": "ucb", "log": "t"}, "p": "private"}, n_runs=2,
              progress=False, n_jobs=1)  # fmt: skip
    assert res.config["horizon"] == 100 and res.config["change_points"] == [50]
    vec = gymnasium.make_vec("dpbandits/TwoArmedShift-v0", num_envs=3, t_shift=50, horizon=100,
                             vectorization_mode="vector_entry_point")  # fmt: skip
    res_vec = run(vec, {"u": {"kind": "ucb", "log": "t"}}, n_runs=2, progress=False, n_jobs=1)
    assert np.array_equal(res_vec.data["u"]["regret"], res.data["u"]["regret"])
    res2 = run({"id": "dpbandits/TwoArmedShift-v0", "t_shift": 60}, [agents.UCB()], n_runs=2,
               horizon=120,
               progress=False, n_jobs=1)  # fmt: skip
    assert res2.labels == ["ucb"] and res2.config["horizon"] == 120


class BadAgent(agents.Agent):
    def choose(self):
        return np.full(self.n_runs, self.n_arms, dtype=np.int64)  # out of range


class FloatAgent(agents.Agent):
    def choose(self):
        return np.zeros(self.n_runs)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"agents": {"x": "nope"}}, ValueError, "unknown agent kind 'nope'.*available"),
        ({"agents": {"x": {"kind": "private", "selector": "nope"}}}, ValueError,
         "unknown selector"),
        ({"agents": {}}, ValueError, "at least one"),
        ({"agents": {"x": object()}}, TypeError, "reset"),
        ({"n_runs": 0}, ValueError, "n_runs must be >= 1, got 0"),
        ({"n_runs": -3}, ValueError, "n_runs"),
        ({"horizon": 0}, ValueError, "horizon must be >= 1, got 0"),
        ({"horizon": -5}, ValueError, "horizon"),
        ({"agents": {"bad": BadAgent()}}, ValueError, "agent 'bad' returned invalid actions"),
        ({"agents": {"f": FloatAgent()}}, ValueError, "non-integer actions"),
        ({"env": {"no_id": 1}}, ValueError, "'id'"),
        ({"seed": -1}, ValueError, "seed"),
    ],
)  # fmt: skip
def test_bad_input_gives_clear_errors(kwargs, error, match):
    args = {"env": ENV, "agents": {"UCB": "ucb"}, "n_runs": 2, "progress": False, "n_jobs": 1}
    args.update(kwargs)
    with pytest.raises(error, match=match):
        run(**args)


def test_invalid_action_in_a_worker_process_is_reported():
    with pytest.raises(ValueError, match="invalid actions"):
        run(ENV, {"bad": BadAgent(), "ok": "ucb"}, n_runs=2, progress=False, n_jobs=2)


def test_shift_agents_labels():
    ags = shift_agents()
    assert list(ags) == ["UCB", "TS", "kRR", "RNM", "RS", "GEM", "mGEM"]
    assert ags["kRR"].selector_.epsilon == 4.0 and ags["kRR"].selector_.name == "krr"
    assert ags["RS"].selector_.gamma == 0.05 and ags["mGEM"].selector_.beta == 0.05
    assert shift_agents(["private:permute_and_flip"])["private:permute_and_flip"].selector_.name
    with pytest.raises(ValueError, match="known labels"):
        shift_agents(["nope"])


def test_cli_shift_writes_table_figures_and_json(tmp_path, capsys):
    from dpbandits.cli import main

    out = tmp_path / "out"
    code = main(["shift", "--runs", "3", "--horizon", "400", "--t-shift", "200", "--agents",
                 "UCB,kRR,mGEM", "--out", str(out), "--json", str(tmp_path / "s.json"),
                 "--no-progress", "--jobs", "1", "--window", "50"])  # fmt: skip
    assert code == 0
    text = capsys.readouterr().out
    assert "total regret" in text and "mGEM" in text and "Privacy ledger" in text
    summary = json.loads((tmp_path / "s.json").read_text())
    assert set(summary) >= {"config", "agents", "privacy"}
    assert set(summary["agents"]["mGEM"]) >= {"regret_mean", "regret_se", "pre_change_regret",
                                               "post_change_regret", "reward_mean"}  # fmt: skip
    for name in (
        "results.npz",
        "fig9a_cumulative.png",
        "fig9b_private_means.png",
        "fig9c_sensitivity_arm0.png",
        "fig9d_sensitivity_arm1.png",
        "fig9.png",
    ):
        assert (out / name).stat().st_size > 0, name  # fmt: skip
    assert main(["shift", "--agents", "nope", "--out", str(out), "--no-progress"]) == 2
    assert "unknown agent label" in capsys.readouterr().err
    # an agent of the library that cannot play these arms says so and where to run it
    assert main(["shift", "--agents", "GLR-klUCB", "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "GLR-klUCB is for Bernoulli rewards" in err and "shift_anchors" in err


def test_plot_functions_return_figures():
    from matplotlib.figure import Figure

    from dpbandits.experiments import plotting

    res = small_run()
    for fig in (plotting.plot_cumulative(res), plotting.plot_cumulative(res, "regret", band="runs"),
                plotting.plot_private_means(res), plotting.plot_sensitivities(res, arm=1),
                plotting.plot_shift(res)):  # fmt: skip
        assert isinstance(fig, Figure)
    with pytest.raises(ValueError, match="label"):
        plotting.plot_cumulative(res, labels=["nope"])
    with pytest.raises(ValueError, match="arm"):
        plotting.plot_sensitivities(res, arm=5)


PLUGIN = """
import numpy as np
from dpbandits import selectors


class PickLast(selectors.Selector):
    name = "pick_last_cli_test"
    uses_sensitivities = False

    def select_batch(self, q, d, rng):
        return np.full(q.shape[0], q.shape[1] - 1, dtype=np.int64)


selectors.register("pick_last_cli_test", PickLast)
"""


def test_cli_selector_from_users_file_runs_by_name(tmp_path, capsys):
    """A selector defined in the user's own file is usable by name, also in worker processes."""
    from dpbandits import selectors
    from dpbandits.cli import main

    plugin = tmp_path / "my_selector.py"
    plugin.write_text(PLUGIN)
    try:
        code = main(["shift", "--plugin", str(plugin), "--agents", "private:pick_last_cli_test,UCB",
                     "--runs", "2", "--horizon", "300", "--t-shift", "150", "--out",
                     str(tmp_path / "o"), "--no-figures", "--no-progress", "--jobs", "2",
                     "--json", str(tmp_path / "s.json")])  # fmt: skip
        assert code == 0
        summary = json.loads((tmp_path / "s.json").read_text())
        row = summary["agents"]["private:pick_last_cli_test"]
        # always arm 1: optimal before the shift (after the initial round), wrong after it
        res = Results.load(tmp_path / "o" / "results.npz")
        counts = res.data["private:pick_last_cli_test"]["action_counts"]
        assert counts[:, 0].tolist() == [1, 1] and row["pre_change_regret"] > 0
    finally:
        selectors.unregister("pick_last_cli_test")


class CoinEnv(gymnasium.Env):
    """A third-party bandit without expected rewards or a vector form: arm a pays a."""

    action_space = gymnasium.spaces.Discrete(2)
    observation_space = gymnasium.spaces.Discrete(1)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return 0, {}

    def step(self, action):
        return 0, float(action), False, False, {}


def test_any_discrete_gymnasium_env_runs_without_regret():
    if "test_dpbandits/Coin-v0" not in gymnasium.registry:
        gymnasium.register("test_dpbandits/Coin-v0", entry_point=CoinEnv)
    with pytest.raises(ValueError, match="horizon must be given"):
        run("test_dpbandits/Coin-v0", {"u": "ucb"}, n_runs=2, progress=False, n_jobs=1)
    res = run("test_dpbandits/Coin-v0", {"u": agents.UCB(log="t")}, n_runs=3, horizon=60,
              progress=False, n_jobs=1)  # fmt: skip
    d = res.data["u"]
    assert np.all(np.isnan(d["total_regret"])) and "-" in str(res.summary())
    # deterministic rewards: UCB1 plays arm 1 except for rare exploration of arm 0
    assert np.all(d["total_reward"] == d["action_counts"][:, 1])
    assert np.all(d["action_counts"][:, 1] > 40)


def test_any_executor_gives_the_same_results():
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=2) as ex:
        assert small_run().equals(small_run(executor=ex))
    with pytest.raises(TypeError, match="executor must be a concurrent.futures.Executor"):
        small_run(executor="dask")


def test_dask_cluster_gives_the_same_results():
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        assert small_run().equals(small_run(executor=client.get_executor()))
