"""The private agents in configs and sweeps (issue 29, deliverables 4 and 5): one swept eps for
the literature's agents and the App. H agents (``agents.*.epsilon|epsilon_select``), the shipped
comparison configs, and bad parameters refused before any work, each with a one-line error
naming the parameter: eps <= 0, an algorithm for Bernoulli bandits on other arms, a horizon the
algorithm needs but does not get (docs/private-bandits.md)."""

from __future__ import annotations

import copy
import csv
import re
from typing import Any

import pytest

import agents
from dpbandits.cli import main
from dpbandits.core.checks import ParameterError
from dpbandits.experiments import engine, run
from dpbandits.experiments.agentspec import reward_family_mismatch, reward_mismatch
from dpbandits.experiments.config import ConfigError, Experiment, assign, check_key_path
from dpbandits.experiments.envspec import reward_bounds, reward_family
from dpbandits.experiments.examples import example_names, example_text
from dpbandits.experiments.results import Results
from dpbandits.experiments.sweep import sweep

#: The eps-global-DP agents of the literature (each takes ``epsilon``, its whole run's eps).
LITERATURE = ("dp_ucb", "dp_ucb_bound", "dp_ucb_hybrid", "dp_ucb_int", "dp_se", "adap_ucb",
              "adap_klucb", "dp_klucb", "dp_imed", "dp_ts")  # fmt: skip
BERNOULLI_ONLY = ("dp_klucb", "dp_imed")
EPS_KEY = "agents.*.epsilon|epsilon_select"

BERNOULLI_ENV = {"env": "dpbandits/KArmedBernoulli-v0", "n_runs": 2, "seed": 3,
                 "env_kwargs": {"means": [0.3, 0.7, 0.5], "horizon": 150}}  # fmt: skip


def config(env: dict[str, Any] | None = None, **agent_tables: dict[str, Any]) -> dict[str, Any]:
    return {"experiment": copy.deepcopy(env or BERNOULLI_ENV), "agents": agent_tables}


@pytest.fixture
def no_work(monkeypatch):
    """Fail the test if the engine gets as far as running a task."""

    def refuse(*args, **kwargs):
        raise AssertionError("a task was started: the check came too late")

    monkeypatch.setattr(engine, "run_in_parallel", refuse)


# -- configs and sweeps -------------------------------------------------------------------------
def test_every_literature_agent_runs_in_a_sweep_of_one_eps_with_the_app_h_agents(tmp_path):
    """One swept key sets ``epsilon`` of the literature's agents and ``epsilon_select`` of the
    App. H agents (two keys would be a product grid); each ledger states the cell's eps."""
    tables = {kind: {"kind": kind, "epsilon": 1.0} for kind in LITERATURE}
    tables["mGEM"] = {"kind": "private", "selector": "mgem", "epsilon_select": 1.0, "window": 20}
    tables["UCB"] = {"kind": "ucb"}
    cfg = config(**tables)
    cfg["sweep"] = {EPS_KEY: [0.5, 2.0]}
    done = sweep(Experiment.from_dict(cfg), tmp_path / "s", scheduler="serial", progress=False,
                 plots=False)  # fmt: skip
    assert done.ok, done.failed
    with open(tmp_path / "s" / "summary.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 2 * len(tables)
    for row in rows:
        eps = float(row[EPS_KEY])
        report = Results.load(tmp_path / "s" / row["result"]).privacy[row["agent"]]
        if row["agent"] in LITERATURE:
            assert report["epsilon_total"] == eps, row["agent"]
        elif row["agent"] == "mGEM":  # eps_S per action; the whole run is eps_M + eps_p
            assert report["selection"]["epsilon_per_action"] == eps
            assert report["epsilon_total"] == 2.0
        else:
            assert report is None


def test_alternatives_in_a_wildcard_key_set_each_name_an_agent_has():
    cfg = config(A={"kind": "dp_ts", "epsilon": 1.0},
                 B={"kind": "private", "selector": "rnm", "epsilon_select": 1.0},
                 C={"kind": "ucb"})  # fmt: skip
    check_key_path(EPS_KEY, cfg["experiment"], cfg["agents"], "sweep")
    assign(cfg, EPS_KEY, 0.25)
    assert cfg["agents"]["A"]["epsilon"] == 0.25 and "epsilon_select" not in cfg["agents"]["A"]
    assert cfg["agents"]["B"]["epsilon_select"] == 0.25 and "epsilon" not in cfg["agents"]["B"]
    assert cfg["agents"]["C"] == {"kind": "ucb"}
    for key, rule in [
        ("agents.*.alpha|gamma", "no agent sets 'alpha' or 'gamma'"),
        ("agents.*.epsilon|", "an empty parameter name"),
        ("agents.A.epsilon|epsilon_select", "alternatives A|B are for agents.*"),
    ]:
        with pytest.raises(ConfigError, match=rule):
            check_key_path(key, cfg["experiment"], cfg["agents"], "sweep")


@pytest.mark.parametrize("name", [n for n in example_names() if n.startswith("private_")])
def test_the_shipped_comparison_configs_pass_every_check(name):
    """Every cell is checked as a run would be (environment built, each agent reset once, the
    Bernoulli-only agents only on Bernoulli arms): the comparison re-runs from its config."""
    exp = Experiment.from_toml(example_text(name))
    kinds = {spec["kind"] for spec in exp.agents.values()}
    if name != "private_threshold":
        assert set(LITERATURE) - set(BERNOULLI_ONLY) <= kinds
        assert {"ucb", "klucb", "thompson", "private"} <= kinds
        selectors = {spec.get("selector") for spec in exp.agents.values()}
        assert {"krr", "rnm", "rs", "gem", "mgem"} <= selectors
        assert exp.sweep == {EPS_KEY: [0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 1e6]}
    bernoulli = exp.env_kwargs.get("arm") == "bernoulli" or "Bernoulli" in exp.env
    assert (set(BERNOULLI_ONLY) <= kinds) == bernoulli


# -- eps <= 0 -------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", LITERATURE)
def test_a_bad_epsilon_is_refused_at_its_key_in_a_config_and_in_a_sweep_cell(kind):
    for eps in (0, -1.0):
        with pytest.raises(ConfigError, match=rf"^agents\.X\.epsilon: must be > 0, got {eps}$"):
            Experiment.from_dict(config(X={"kind": kind, "epsilon": eps}))
    cfg = config(X={"kind": kind, "epsilon": 1.0})
    cfg["sweep"] = {EPS_KEY: [1.0, 0.0]}
    with pytest.raises(
        ConfigError,
        match=rf"^agents\.X\.epsilon: must be > 0, got 0\.0 \(in the "
        rf"sweep cell {EPS_KEY.replace('*', '[*]').replace('|', '[|]')}=0\.0\)$",
    ):
        Experiment.from_dict(cfg)


@pytest.mark.parametrize("kind", LITERATURE)
def test_a_bad_epsilon_is_refused_by_the_engine_before_any_work(kind, no_work):
    with pytest.raises(ValueError, match=r"^agent 'X': epsilon must be > 0, got 0$") as info:
        run({"id": "dpbandits/KArmedBernoulli-v0", "means": [0.3, 0.6], "horizon": 50},
            {"X": agents.make(kind, epsilon=0)}, n_runs=2, progress=False, n_jobs=1)  # fmt: skip
    assert info.value.param == "epsilon"  # type: ignore[attr-defined]


# -- an algorithm for Bernoulli bandits on other arms ---------------------------------------------
GAUSSIAN_ENVS = [
    {"id": "dpbandits/KArmedGaussian-v0", "means": [0.3, 0.6], "horizon": 50},
    {"id": "dpbandits/TwoArmedShift-v0", "t_shift": 20, "horizon": 50},
    {"id": "dpbandits/PiecewiseBandit-v0", "horizon": 50,
     "segments": [[0, [0.3, 0.6], [0.1, 0.1]], [25, [0.6, 0.3], [0.1, 0.1]]]},
]  # fmt: skip


@pytest.mark.parametrize("kind", BERNOULLI_ONLY)
@pytest.mark.parametrize("env", GAUSSIAN_ENVS, ids=lambda e: e["id"].split("/")[1])
def test_the_engine_refuses_a_bernoulli_only_agent_on_other_arms_before_any_work(
    kind, env, no_work
):
    agent = agents.make(kind)
    assert agent.traits.rewards == "bernoulli"
    with pytest.raises(ParameterError) as info:
        run(env, {"X": agent}, n_runs=2, progress=False, n_jobs=1)
    msg = str(info.value)
    assert info.value.param == "env" and "\n" not in msg
    assert msg.startswith(f"agent 'X': env {env['id']} has gaussian arms, but ")
    assert "is defined for Bernoulli rewards only" in msg


@pytest.mark.parametrize("kind", BERNOULLI_ONLY)
def test_a_bernoulli_only_agent_runs_on_bernoulli_arms(kind):
    for env in ({"id": "dpbandits/KArmedBernoulli-v0", "means": [0.3, 0.6], "horizon": 60},
                {"id": "dpbandits/PiecewiseBandit-v0", "arm": "bernoulli", "horizon": 60,
                 "segments": [[0, [0.3, 0.6]], [30, [0.6, 0.3]]]}):  # fmt: skip
        res = run(env, {"X": agents.make(kind)}, n_runs=2, progress=False, n_jobs=1)
        assert res.privacy["X"]["epsilon_total"] == 1.0


WIDE_ENVS = [
    {"id": "dpbandits/KArmedGaussian-v0", "means": [0.3, 0.6], "lo": -100.0, "hi": 100.0,
     "horizon": 50},
    {"id": "dpbandits/PiecewiseBandit-v0", "horizon": 50, "lo": 0.0, "hi": 2.0,
     "segments": [[0, [0.3, 0.6], [0.1, 0.1]], [25, [0.6, 0.3], [0.1, 0.1]]]},
]  # fmt: skip


@pytest.mark.parametrize("kind", ["cd_adap_ucb", "sw_adap_klucb", "adap_ucb", "m_ucb",
                                  "cusum_ucb", "exp3"])  # fmt: skip
@pytest.mark.parametrize("env", WIDE_ENVS, ids=lambda e: e["id"].split("/")[1])
def test_the_engine_refuses_an_agent_for_the_unit_interval_on_wider_arms_before_any_work(
        kind, env, no_work):  # fmt: skip
    """Gaussian arms clipped to a range wider than [0, 1]: without the check the agent stopped
    at the first reward outside [0, 1], after compiling and playing (it may come late)."""
    agent = agents.make(kind)
    assert agent.traits.rewards == "unit"
    with pytest.raises(ParameterError) as info:
        run(env, {"X": agent}, n_runs=2, progress=False, n_jobs=1)
    msg = str(info.value)
    assert info.value.param == "env"
    assert f"has Gaussian arms clipped to [{env['lo']:g}, {env['hi']:g}], but " in msg
    assert "needs rewards in [0, 1]" in msg


def test_agents_for_real_rewards_and_the_unit_interval_pass_the_range_check():
    import gymnasium as gym

    wide = gym.make("dpbandits/KArmedGaussian-v0", means=[0.3, 0.6], lo=-1.0, hi=2.0)
    assert reward_bounds(wide) == (-1.0, 2.0)
    assert reward_bounds(gym.make("dpbandits/KArmedBernoulli-v0", n_arms=2)) is None
    assert reward_bounds(object()) is None
    assert reward_family_mismatch(agents.make("sw_ucb"), "gaussian", "w", (-1.0, 2.0)) is None
    assert reward_family_mismatch(agents.make("cd_adap_ucb"), "gaussian", "w", (0.0, 1.0)) is None
    assert reward_family_mismatch(agents.make("cd_adap_ucb"), "gaussian", "w", (-1.0, 2.0))


def test_a_reward_mismatch_says_its_cause_once_so_the_config_can_point_at_the_key():
    """One call tells the clipping range (fix lo/hi) from the arms (fix arm or env) and the
    privatized reports; its message is the one ``reward_family_mismatch`` gives."""
    unit, bern = agents.make("cd_adap_ucb"), agents.make("dp_imed")
    cases = [
        (unit, "gaussian", (-1.0, 2.0), "bounds"),
        (bern, "gaussian", (-1.0, 2.0), "family"),
        (bern, "gaussian", None, "family"),
        (unit, "privatized", None, "privatized"),
        (bern, "privatized", (-1.0, 2.0), "privatized"),
    ]
    for agent, arm, bounds, cause in cases:
        found = reward_mismatch(agent, arm, "w", bounds)
        assert found is not None and found[0] == cause, (arm, bounds, found)
        assert found[1] == reward_family_mismatch(agent, arm, "w", bounds)
    assert reward_mismatch(unit, "gaussian", "w", (0.0, 1.0)) is None


def test_the_reward_family_is_read_from_the_environment_and_unknown_passes():
    import gymnasium as gym

    assert reward_family(gym.make("dpbandits/KArmedBernoulli-v0", n_arms=2)) == "bernoulli"
    assert reward_family(gym.make("dpbandits/TwoArmedShift-v0")) == "gaussian"
    assert reward_family(object()) is None  # an environment that does not say
    # then the agent itself refuses the first reward that is not 0 or 1, at that step
    assert reward_family_mismatch(agents.make("dp_klucb"), None, "mine") is None
    assert reward_family_mismatch(agents.make("adap_klucb"), "gaussian", "mine") is None


@pytest.mark.parametrize(("env", "path"), [
    ({"env": "dpbandits/KArmedGaussian-v0", "env_kwargs": {"means": [0.3, 0.6]}},
     "experiment.env"),
    ({"env": "dpbandits/PiecewiseBandit-v0", "env_kwargs": {"segments": [[0, [0.3, 0.6],
                                                                           [0.1, 0.1]]]}},
     "experiment.env_kwargs.arm"),
])  # fmt: skip
def test_a_config_refuses_a_bernoulli_only_agent_on_other_arms_at_the_environment_key(env, path):
    env = {**env, "n_runs": 2, "horizon": 50}
    with pytest.raises(
        ConfigError,
        match=rf"^{path}: agent 'DP-IMED': \S+ has gaussian arms, "
        "but DP-IMED is defined for Bernoulli rewards only: run it on",
    ):
        Experiment.from_dict(config(env, **{"DP-IMED": {"kind": "dp_imed"}}))


@pytest.mark.parametrize(("bounds", "path"), [
    ({"lo": -5.0, "hi": 5.0}, "experiment.env_kwargs.lo"),
    ({"lo": 0.0, "hi": 1.5}, "experiment.env_kwargs.hi"),
    ({"hi": 3.0}, "experiment.env_kwargs.hi"),
])  # fmt: skip
def test_a_config_refuses_a_unit_interval_agent_on_wider_arms_at_the_bound_to_change(bounds, path):
    """The wider clipping range is found when the config is read (before any cell runs), and the
    error names the key that puts the range outside [0, 1], not the engine's ``env``."""
    env = {"env": "dpbandits/KArmedGaussian-v0", "n_runs": 2, "horizon": 50,
           "env_kwargs": {"means": [0.3, 0.6], **bounds}}  # fmt: skip
    with pytest.raises(ConfigError, match=rf"^{re.escape(path)}: agent 'A': \S+ has Gaussian arms "
                       r"clipped to \[.*\], but AdaP-UCB needs rewards in \[0, 1\]"):  # fmt: skip
        Experiment.from_dict(config(env, A={"kind": "adap_ucb"}))
    Experiment.from_dict(
        config({**env, "env_kwargs": {"means": [0.3, 0.6]}}, A={"kind": "adap_ucb"})
    )


def test_a_sweep_refuses_the_cell_with_other_arms_before_any_cell_runs():
    env = {"env": "dpbandits/KArmedBernoulli-v0", "n_runs": 2, "horizon": 50,
           "env_kwargs": {"means": [0.3, 0.6]}}  # fmt: skip
    cfg = config(env, K={"kind": "dp_klucb"})
    cfg["sweep"] = {"experiment.env": ["dpbandits/KArmedBernoulli-v0",
                                       "dpbandits/KArmedGaussian-v0"]}  # fmt: skip
    with pytest.raises(ConfigError, match=r"^experiment\.env: agent 'K': .*\(in the sweep cell "
                       r"experiment\.env='dpbandits/KArmedGaussian-v0'\)$"):  # fmt: skip
        Experiment.from_dict(cfg)


def test_the_command_line_says_it_in_one_line(capsys):
    argv = [
        "run",
        "--env",
        "dpbandits/KArmedGaussian-v0",
        "--env-arg",
        "means=[0.3, 0.6]",
        "--env-arg",
        "horizon=50",
        "--agent",
        "D=dp_klucb",
        "--runs",
        "2",
        "--no-plots",
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0
    assert err.startswith(
        "dpbandits: error: experiment.env: agent 'D': "
        "dpbandits/KArmedGaussian-v0 has gaussian arms, but DP-KLUCB"
    )


# -- a horizon the algorithm needs but does not get -----------------------------------------------
NEEDS_HORIZON = [("dp_ucb", {}, "DPUCB(mechanism='tree') sizes its tree by it"),
                 ("dp_se", {}, "DPSE(beta=None) takes beta = 1/T"),
                 ("ucb", {}, "UCB(log='T') has ln T in its bonus"),
                 ("exp3", {}, "Exp3(gamma=None) tunes gamma to it")]  # fmt: skip


@pytest.mark.parametrize(("kind", "params", "why"), NEEDS_HORIZON)
def test_an_agent_that_needs_the_horizon_says_so_when_reset_without_it(kind, params, why):
    agent = agents.make(kind, **params)
    message = f"horizon must be given, reset(..., horizon=T): {why}"
    with pytest.raises(ParameterError, match=f"^{re.escape(message)}$") as info:
        agent.reset(2, 3, rng=0)
    assert info.value.param == "horizon"
    agent.reset(2, 3, horizon=10, rng=0)
    assert agent.act().shape == (2,)


@pytest.mark.parametrize(("kind", "params"), [
    ("dp_se", {"beta": 0.01}), ("dp_ucb", {"mechanism": "hybrid"}), ("ucb", {"log": "t"}),
    ("exp3", {"gamma": 0.1}), *[(k, {}) for k in LITERATURE if k not in ("dp_ucb", "dp_se")],
])  # fmt: skip
def test_the_anytime_forms_need_no_horizon(kind, params):
    agent = agents.make(kind, **params)
    agent.reset(2, 3, rng=0)
    assert agent.act().shape == (2,)


def test_every_private_agent_is_listed(capsys):
    assert main(["list", "agents"]) == 0
    listed = capsys.readouterr().out
    for kind in (*LITERATURE, "klucb", "private"):
        assert f"\n{kind} " in listed
