"""The config package: the input policy at key paths, the agents registry it builds through,
one documented example, and every module small with a one-line docstring."""

from __future__ import annotations

import ast
import copy
import re
from pathlib import Path

import numpy as np
import pytest

import agents
import dpbandits.experiments.config as config_pkg
from dpbandits.experiments.config import EXAMPLE_TOML, ConfigError, ConfigTypeError, Experiment

ROOT = Path(__file__).resolve().parents[2]


def _with_agent_value(cfg, label, key, value):
    cfg = copy.deepcopy(cfg)
    cfg["agents"][label][key] = value
    return cfg


@pytest.mark.parametrize(
    ("key", "value", "error", "message"),
    [
        ("epsilon_select", 1 + 0j, ConfigTypeError, "must be a number, got"),
        ("epsilon_select", True, ConfigTypeError, "must be a number, got true"),
        ("epsilon_select", "1.0", ConfigTypeError, "must be a number, got '1.0'"),
        ("epsilon_select", float("inf"), ConfigError, "must be finite, got Infinity"),
        ("epsilon_select", float("nan"), ConfigError, "must not be NaN"),
        ("epsilon_means", -0.0, ConfigError, "must be > 0, got -0.0"),
        ("window", 20.0, ConfigError, "must be an int"),
        ("beta", 1 + 0j, ConfigTypeError, "got complex"),  # the selector's own check
    ],
)
def test_agent_numbers_follow_the_input_policy(piecewise, key, value, error, message):
    cfg = _with_agent_value(piecewise, "mGEM", key, value)
    with pytest.raises(error) as info:
        Experiment.from_dict(cfg)
    assert str(info.value).startswith(f"agents.mGEM.{key}: ") and message in str(info.value)


def test_numpy_numbers_are_numbers(piecewise):
    cfg = copy.deepcopy(piecewise)
    cfg["experiment"]["n_runs"] = np.int64(3)
    cfg["agents"]["mGEM"]["epsilon_select"] = np.float64(2.0)
    cfg["agents"]["UCB"]["alpha"] = np.float32(1.5)
    exp = Experiment.from_dict(cfg)
    assert exp.n_runs == 3 and exp.agents["mGEM"]["epsilon_select"] == 2.0
    # a NumPy bool is no more a count than True is
    cfg["experiment"]["n_runs"] = np.bool_(True)
    with pytest.raises(ConfigTypeError, match=r"^experiment.n_runs: must be an integer"):
        Experiment.from_dict(cfg)


@pytest.mark.parametrize(
    ("key", "value", "error", "message"),
    [
        ("n_runs", True, ConfigTypeError, "must be an integer, got bool True"),
        ("chunk_size", "4", ConfigTypeError, "must be an integer, got str '4'"),
        ("record_stride", 0, ConfigError, "must be >= 1, got 0"),
        ("horizon", 1e3, ConfigTypeError, "must be an integer, got float 1000.0"),
    ],
)
def test_experiment_integers_name_their_key(piecewise, key, value, error, message):
    cfg = copy.deepcopy(piecewise)
    cfg["experiment"][key] = value
    with pytest.raises(error) as info:
        Experiment.from_dict(cfg)
    assert str(info.value) == f"experiment.{key}: {message}"
    assert info.value.path == f"experiment.{key}"


def test_agents_describe_gives_each_kind_and_its_parameters():
    ucb = agents.describe("UCB")
    assert ucb.name == "ucb" and ucb.cls is agents.UCB and ucb.error == ""
    assert {"alpha", "log"} <= set(ucb.parameters) and not ucb.var_keyword
    private = agents.describe("private")
    assert private.cls is agents.PrivateAgent and private.var_keyword  # selector parameters
    assert private.parameters["window"].default == 200
    for name in agents.available():
        assert agents.describe(name).name == name
    with pytest.raises(ValueError, match="unknown agent 'nope'"):
        agents.describe("nope")
    with pytest.raises(TypeError, match="agent name must be a str"):
        agents.describe(3)  # type: ignore[arg-type]


def test_a_kind_that_needs_arguments_is_described_and_checked_by_its_constructor(piecewise):
    def needs_arm(arm):  # a factory without defaults
        return agents.UCB(alpha=float(arm))

    agents.register("needs-arm-test", needs_arm)
    try:
        kind = agents.describe("needs-arm-test")  # learnt from the factory: nothing built
        assert kind.cls is None and kind.factory is needs_arm and not kind.var_keyword
        assert kind.error == "" and list(kind.parameters) == ["arm"]
        cfg = copy.deepcopy(piecewise)
        cfg["agents"] = {"A": {"kind": "needs-arm-test", "arm": 2}}
        assert Experiment.from_dict(cfg).agent_objects()["A"].alpha == 2.0
        cfg["agents"]["A"] = {"kind": "needs-arm-test", "other": 2}
        with pytest.raises(ConfigError, match=r"^agents\.A\.other: unknown parameter .*: arm"):
            Experiment.from_dict(cfg)
    finally:
        agents.unregister("needs-arm-test")


def test_a_registered_kind_is_a_config_kind(piecewise):
    class Greedy(agents.UCB):
        """UCB without exploration bonus scaling beyond ``alpha``."""

        def __init__(self, alpha: float = 0.5) -> None:
            super().__init__(alpha=alpha)

    agents.register("greedy-config-test", Greedy)
    try:
        cfg = copy.deepcopy(piecewise)
        cfg["agents"]["G"] = {"kind": "greedy-config-test", "alpha": 0.25}
        assert isinstance(Experiment.from_dict(cfg).agent_objects()["G"], Greedy)
        cfg["agents"]["G"]["bonus"] = 1
        with pytest.raises(ConfigError, match="agents.G.bonus: unknown parameter of agent kind"):
            Experiment.from_dict(cfg)
    finally:
        agents.unregister("greedy-config-test")


def test_the_docs_show_the_documented_example():
    text = (ROOT / "docs" / "experiments.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```toml\n(.*?)```", text, flags=re.S)
    assert EXAMPLE_TOML in blocks


def test_every_config_module_is_small_with_a_one_line_summary():
    package = Path(config_pkg.__file__).parent
    modules = sorted(package.glob("*.py"))
    assert len(modules) >= 6
    for path in modules:
        source = path.read_text(encoding="utf-8")
        doc = ast.get_docstring(ast.parse(source))
        assert doc and len(doc.splitlines()[0]) <= 100, path.name
        assert len(source.splitlines()) < 600, path.name


def test_an_unchecked_experiment_still_names_the_key_of_an_unknown_kind():
    exp = Experiment(env="dpbandits/TwoArmedShift-v0", agents={"X": {"kind": "nope"}})
    with pytest.raises(ConfigError, match=r"^agents\.X\.kind: unknown agent kind 'nope'"):
        exp.agent_objects()


def test_public_names_stay_importable_from_dpbandits_config():
    for name in ("Experiment", "ConfigError", "ConfigTypeError", "Cell", "EXPERIMENT_DEFAULTS",
                 "SECTIONS", "canonical_json", "cell_seed", "load_config", "parse_agent_option",
                 "parse_assignments", "parse_value", "split_values", "resolve_env",
                 "to_toml"):  # fmt: skip
        assert hasattr(config_pkg, name), name
    assert set(config_pkg.__all__) <= set(dir(config_pkg))


def test_unregister_removes_a_run_time_name_and_restores_an_overwritten_built_in():
    agents.register("ucb", agents.ThompsonSampling, overwrite=True)
    try:
        assert isinstance(agents.make("ucb"), agents.ThompsonSampling)
    finally:
        agents.unregister("UCB")
    assert type(agents.make("ucb")) is agents.UCB
    with pytest.raises(ValueError, match="not a run-time registered agent"):
        agents.unregister("ucb")
    with pytest.raises(ValueError, match="not a run-time registered agent"):
        agents.unregister("never-registered")
