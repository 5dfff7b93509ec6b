"""Experiments as data: TOML/dict configs, their validation and the quick flags."""

from __future__ import annotations

import copy
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dpbandits.experiments.config import (
    EXAMPLE_TOML,
    ConfigError,
    Experiment,
    load_config,
    parse_agent_option,
    parse_value,
    to_toml,
)

ROOT = Path(__file__).resolve().parents[2]

# the documented shape (the example of docs/experiments.md and dpbandits.experiments.config)
ISSUE_SHAPE = EXAMPLE_TOML


def test_the_documented_shape_reads_and_expands_to_its_grid():
    exp = Experiment.from_toml(ISSUE_SHAPE)
    assert exp.env == "dpbandits/PiecewiseBandit-v0" and exp.n_runs == 40 and exp.seed == 7
    assert exp.agents["mGEM"] == {"kind": "private", "selector": "mgem", "epsilon_select": 1.0,
                                  "beta": 0.05}  # fmt: skip
    cells = exp.cells()
    assert [c.params for c in cells] == [
        {"agents.mGEM.epsilon_select": e, "experiment.env_kwargs.horizon": h}
        for e in (0.5, 1.0, 4.0)
        for h in (10000, 20000)
    ]
    c = cells[5]
    assert c.experiment.agents["mGEM"]["epsilon_select"] == 4.0
    assert c.experiment.env_kwargs["horizon"] == 20000 and not c.experiment.sweep
    assert len({cell.seed for cell in cells}) == 6


def test_toml_round_trip_and_defaults(tmp_path):
    exp = Experiment.from_toml(ISSUE_SHAPE)
    text = exp.to_toml()
    assert Experiment.from_toml(text) == exp
    path = tmp_path / "x.toml"
    path.write_text(text)
    assert Experiment.from_toml(path) == exp
    d = exp.to_dict()["experiment"]
    assert d["chunk_size"] == 100 and d["trace"] is True  # defaults written out
    # odd keys and values survive TOML output
    cfg = {"experiment": {"env": "x", "env_kwargs": {"a b": "q\"uote", "m": {"profile": "linear"}}},
           "agents": {"my agent": {"kind": "ucb", "alpha": 1e-300}}}  # fmt: skip
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib

    assert tomllib.loads(to_toml(cfg)) == cfg


def test_cell_seeds_depend_on_values_not_positions():
    exp = Experiment.from_toml(ISSUE_SHAPE)
    bigger = exp.to_dict()
    bigger["sweep"]["agents.mGEM.epsilon_select"] = [0.25, 0.5, 1.0, 4.0, 8.0]
    seeds = {canon(c.params): c.seed for c in exp.cells()}
    seeds2 = {canon(c.params): c.seed for c in Experiment.from_dict(bigger).cells()}
    assert all(seeds2[k] == s for k, s in seeds.items())
    # without a sweep (or sweeping the seed alone) a cell runs with the experiment's seed
    one = Experiment.from_dict({k: v for k, v in exp.to_dict().items() if k != "sweep"})
    assert [c.seed for c in one.cells()] == [7]
    s = exp.to_dict()
    s["sweep"] = {"experiment.seed": [3, 4]}
    assert [c.seed for c in Experiment.from_dict(s).cells()] == [3, 4]


def canon(params):
    return tuple(sorted(params.items()))


def _with(cfg, path, value):
    cfg = copy.deepcopy(cfg)
    node = cfg
    parts = path.split(".")
    for p in parts[:-1]:
        node = node.setdefault(p, {})
    if value is _DELETE:
        del node[parts[-1]]
    else:
        node[parts[-1]] = value
    return cfg


_DELETE = object()


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        ("agents.mGEM.epsilon_select", -1, "agents.mGEM.epsilon_select: must be > 0, got -1"),
        ("agents.mGEM.epsilon_select", "high", "agents.mGEM.epsilon_select: must be a number"),
        ("agents.mGEM.epsilon_means", 0.0, "agents.mGEM.epsilon_means: must be > 0"),
        ("agents.mGEM.beta", 2.0, "agents.mGEM.beta: must lie in (0, 1), got 2.0"),
        ("agents.mGEM.window", 0, "agents.mGEM.window: must be >= 1, got 0"),
        ("agents.mGEM.window", 2.5, "agents.mGEM.window: must be an int"),
        ("agents.mGEM.foo", 1, "agents.mGEM.foo: unknown parameter of agent kind 'private'"),
        ("agents.mGEM.selector", "zzz", "agents.mGEM.selector: unknown selector 'zzz'"),
        ("agents.UCB.alpha", -1, "agents.UCB.alpha: must be > 0, got -1"),
        ("agents.UCB.alpha", True, "agents.UCB.alpha: must be a number, got true"),
        ("agents.UCB.log", 3, "agents.UCB.log: must be a string"),
        ("agents.UCB.foo", 1, "agents.UCB.foo: unknown parameter of agent kind 'ucb'"),
        ("agents.UCB.kind", "nope", "agents.UCB.kind: unknown agent kind 'nope'"),
        ("agents.UCB.kind", _DELETE, "agents.UCB.kind: missing"),
        ("agents.UCB", "ucb", "agents.UCB: must be a table"),
        ("agents", {}, "agents: must define at least one agent"),
        ("experiment.env", "nope-v0", "experiment.env: unknown environment 'nope-v0'"),
        ("experiment.env", "no_such_module:Env", "experiment.env: cannot import module"),
        ("experiment.env", 3, "experiment.env: must be a non-empty string"),
        ("experiment.env", _DELETE, "experiment.env: missing"),
        ("experiment.n_runs", 0, "experiment.n_runs: must be >= 1, got 0"),
        ("experiment.n_runs", 2.0, "experiment.n_runs: must be an integer, got float"),
        ("experiment.seed", -1, "experiment.seed: must be >= 0, got -1"),
        ("experiment.trace", 1, "experiment.trace: must be true or false"),
        ("experiment.horizon", 10**6, "experiment.horizon: must be <= the environment's"),
        ("experiment.bogus", 1, "experiment.bogus: unknown key"),
        ("experiment.env_kwargs.foo", 1, "experiment.env_kwargs.foo: unknown argument"),
        ("experiment.env_kwargs.horizon", -5, "experiment.env_kwargs.horizon: must be >= 1"),
        ("experiment.env_kwargs.arm", "poisson", "experiment.env_kwargs.arm: must be one of"),
        ("experiment.env_kwargs.segments", [[5, [0.1, 0.2], [0.1, 0.1]]],
         "experiment.env_kwargs: the first segment must start at step 0"),
        ("bogus", {}, "bogus: unknown key"),
        ("sweep.agents.mGEM.epsilon_select", [], 'sweep."agents.mGEM.epsilon_select": must list'),
        ("sweep.agents.mGEM.epsilon_select", 0.5, "must be a list of values"),
        ("sweep.agents.mGEM.epsilon_select", [1.0, 1.0], "values must be distinct"),
        ("sweep.agents.nobody.epsilon_select", [1.0], "no agent 'nobody'"),
        ("sweep.experiment.nope", [1], "not a key of [experiment]"),
        ("sweep.agents.mGEM.epsilon_select", [1.0, -2.0],
         "agents.mGEM.epsilon_select: must be > 0, got -2.0 (in the sweep cell "
         "agents.mGEM.epsilon_select=-2.0)"),
    ],
)
def test_bad_configs_name_the_key_path(piecewise, path, value, message):
    if path.startswith("sweep."):
        cfg = copy.deepcopy(piecewise)
        cfg["sweep"] = {path[len("sweep."):]: value}
    else:
        cfg = _with(piecewise, path, value)
    with pytest.raises(ConfigError) as info:
        Experiment.from_dict(cfg)
    assert message in str(info.value)
    assert isinstance(info.value, ValueError)


def test_wrong_types_are_type_errors(piecewise):
    with pytest.raises(TypeError, match="experiment.n_runs: must be an integer"):
        Experiment.from_dict(_with(piecewise, "experiment.n_runs", "ten"))


def test_not_toml_and_no_file(tmp_path):
    with pytest.raises(ConfigError, match="not valid TOML"):
        Experiment.from_toml("[experiment\nenv = 1")
    with pytest.raises(ConfigError, match="no config file"):
        Experiment.from_toml(tmp_path / "missing.toml")


def test_quick_flag_parsing():
    assert parse_value("2") == 2 and parse_value("0.5") == 0.5 and parse_value("true") is True
    assert parse_value("[0.2, 0.8]") == [0.2, 0.8] and parse_value("mgem") == "mgem"
    assert parse_agent_option(["UCB=ucb", "mGEM=private:selector=mgem,epsilon_select=2"]) == {
        "UCB": {"kind": "ucb"},
        "mGEM": {"kind": "private", "selector": "mgem", "epsilon_select": 2},
    }
    # several agents in one occurrence; a list value keeps its commas
    assert parse_agent_option(["mGEM=private:selector=mgem,levels=[0.2, 0.8],UCB=ucb,exp3"]) == {
        "mGEM": {"kind": "private", "selector": "mgem", "levels": [0.2, 0.8]},
        "UCB": {"kind": "ucb"},
        "exp3": {"kind": "exp3"},
    }
    with pytest.raises(ValueError, match="given twice"):
        parse_agent_option(["a=ucb", "a=exp3"])


def test_load_experiment_applies_flags_over_a_file(tmp_path, piecewise):
    path = tmp_path / "c.toml"
    path.write_text(to_toml(piecewise))
    exp = load_config(path, n_runs=3, seed=9, env_args={"horizon": 350},
                          sets={"agents.mGEM.epsilon_select": 4.0},
                          grid={"agents.UCB.alpha": [1.0, 2.0]})  # fmt: skip
    assert (exp.n_runs, exp.seed, exp.env_kwargs["horizon"]) == (3, 9, 350)
    assert exp.agents["mGEM"]["epsilon_select"] == 4.0 and exp.sweep == {
        "agents.UCB.alpha": [1.0, 2.0]}  # fmt: skip
    exp = load_config(env="dpbandits/TwoArmedShift-v0", env_args={"t_shift": 50,
                          "horizon": 100}, agents={"U": {"kind": "ucb"}})  # fmt: skip
    assert exp.env_kwargs == {"t_shift": 50, "horizon": 100}
    with pytest.raises(ConfigError, match=r"--set\.agents\.X\.alpha|agents.X.alpha: no agent"):
        load_config(path, sets={"agents.X.alpha": 1.0})


def test_module_class_environment(tmp_path, monkeypatch):
    (tmp_path / "my_bandit_env.py").write_text(textwrap.dedent('''
        import gymnasium as gym
        import numpy as np

        class Coin(gym.Env):
            """Two arms: arm 1 always pays 1, arm 0 pays 0."""
            def __init__(self, horizon=50, render_mode=None):
                self.horizon = horizon
                self.action_space = gym.spaces.Discrete(2)
                self.observation_space = gym.spaces.Discrete(1)
            def reset(self, *, seed=None, options=None):
                super().reset(seed=seed)
                self.t = 0
                return 0, {}
            def step(self, a):
                self.t += 1
                return 0, float(a == 1), False, self.t >= self.horizon, {}
            def expected_rewards(self, t):
                return np.array([0.0, 1.0])
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    exp = Experiment.from_dict({"experiment": {"env": "my_bandit_env:Coin", "n_runs": 2,
                                               "env_kwargs": {"horizon": 30}},
                                "agents": {"UCB": {"kind": "ucb"}}})  # fmt: skip
    res = exp.run(n_jobs=1, progress=False)
    assert res.data["UCB"]["total_regret"].shape == (2,)
    assert res.data["UCB"]["action_counts"].sum(axis=1).tolist() == [30, 30]
    with pytest.raises(ConfigError, match="experiment.env_kwargs.bad: unknown argument"):
        Experiment.from_dict({"experiment": {"env": "my_bandit_env:Coin",
                                             "env_kwargs": {"bad": 1}},
                              "agents": {"UCB": {"kind": "ucb"}}})  # fmt: skip
    with pytest.raises(ConfigError, match="neither a gymnasium.Env subclass"):
        Experiment.from_dict({"experiment": {"env": "my_bandit_env:np"},
                              "agents": {"UCB": {"kind": "ucb"}}})  # fmt: skip


BAD_CONFIGS = [
    ('[experiment]\nenv = "dpbandits/TwoArmedShift-v0"\n[agents.m]\nkind = "private"\n'
     "epsilon_select = -1\n", "agents.m.epsilon_select: must be > 0, got -1"),
    ('[experiment]\nenv = "nope"\n[agents.u]\nkind = "ucb"\n', "experiment.env: unknown"),
    ("[experiment\n", "not valid TOML"),
    ('[experiment]\nenv = "dpbandits/TwoArmedShift-v0"\n[agents.u]\nkind = "ucb"\n'
     '[sweep]\n"agents.u.alpha" = [1.0, "x"]\n', "agents.u.alpha: must be a number, got 'x'"),
]


@pytest.mark.parametrize(("text", "message"), BAD_CONFIGS)
def test_cli_bad_config_fails_in_one_line_before_any_work(tmp_path, capsys, text, message):
    from dpbandits.cli import main

    cfg = tmp_path / "bad.toml"
    cfg.write_text(text)
    for cmd in ("run", "sweep"):
        assert main([cmd, str(cfg), "--out", str(tmp_path / cmd), "--no-progress"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("dpbandits: error: ") and message in err[0]
        assert not (tmp_path / cmd).exists()  # nothing written: no work started


def test_cli_bad_config_as_a_user_sees_it(tmp_path):
    """The real console: one line on stderr, exit status 2, no traceback."""
    cfg = tmp_path / "bad.toml"
    cfg.write_text(BAD_CONFIGS[0][0])
    out = subprocess.run(
        [sys.executable, "-m", "dpbandits", "sweep", str(cfg), "--out", str(tmp_path / "o")],
        capture_output=True, text=True, cwd=tmp_path, timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr == f"dpbandits: error: {BAD_CONFIGS[0][1]}\n"
    assert not (tmp_path / "o").exists()
