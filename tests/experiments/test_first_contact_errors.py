"""The config and option mistakes of a first contact get errors that point to the fix (each
message names the option or key, and the likely intended value)."""

from __future__ import annotations

import copy

import pytest

from dpbandits.cli import main
from dpbandits.experiments.config import ConfigError, Experiment
from dpbandits.experiments.config.quick_flags import parse_agent_option

CONFIG = {
    "experiment": {"env": "dpbandits/TwoArmedShift-v0", "n_runs": 2,
                   "env_kwargs": {"t_shift": 50, "horizon": 100}},
    "agents": {"mGEM": {"kind": "private", "selector": "mgem"}},
}  # fmt: skip


def test_a_typo_in_an_agent_kind_on_the_command_line_is_named():
    with pytest.raises(ValueError, match=r"unknown agent kind 'ucbb' \(did you mean 'ucb'\?"):
        parse_agent_option(["UCB=ucbb"])


def test_a_typo_in_a_parameter_suggests_the_right_one():
    cfg = copy.deepcopy(CONFIG)
    cfg["agents"]["mGEM"]["epsilon_selct"] = 1.0
    with pytest.raises(ConfigError, match=r"agents\.mGEM\.epsilon_selct: .*did you mean "
                       r"'epsilon_select'"):  # fmt: skip
        Experiment.from_dict(cfg)


def test_epsilon_is_not_offered_for_a_private_agent_and_is_refused_with_its_name():
    """The selector's ``epsilon`` is the agent's ``epsilon_select``: the list of accepted keys
    does not offer it, and giving it names the right key (not an internal TypeError)."""
    cfg = copy.deepcopy(CONFIG)
    cfg["agents"]["mGEM"]["epsilon"] = 1.0
    with pytest.raises(ConfigError, match=r"agents\.mGEM\.epsilon: .*'epsilon_select'") as info:
        Experiment.from_dict(cfg)
    assert "multiple values" not in str(info.value)
    accepted = str(info.value).split("accepted:")[1]
    assert "epsilon_select" in accepted and " epsilon," not in accepted


@pytest.mark.parametrize("command", ["run", "shift"])
def test_runs_zero_is_worded_alike_by_every_command(command, capsys):
    with pytest.raises(SystemExit) as info:
        main([command, "--runs", "0"])
    assert info.value.code == 2
    assert "argument --runs: must be >= 1, got 0" in capsys.readouterr().err


@pytest.mark.parametrize("option", ["--eps-select", "--eps-means", "--eps-krr", "--eps-quantiles"])
def test_a_bad_epsilon_option_is_named(option, capsys):
    with pytest.raises(SystemExit):
        main(["shift", option, "-1"])
    assert f"argument {option}: must be finite and > 0" in capsys.readouterr().err


class _Counting:
    """Counts how often agents of one config are built and probed (reset for one run)."""

    built = 0
    probes = 0


def test_a_config_agent_is_built_once_and_probed_once():
    import agents
    from agents.ucb import UCB

    class CountingUCB(UCB):
        def __init__(self, alpha: float = 1.0, log: str = "T") -> None:
            _Counting.built += 1
            super().__init__(alpha=alpha, log=log)

        def reset(self, n_runs, n_arms, *, horizon=None, rng=None):
            if n_runs == 1:
                _Counting.probes += 1
            super().reset(n_runs, n_arms, horizon=horizon, rng=rng)

    agents.register("counting_ucb_test", CountingUCB, overwrite=True)
    try:
        cfg = copy.deepcopy(CONFIG)
        cfg["agents"] = {"U": {"kind": "counting_ucb_test", "alpha": 2.0}}
        cfg["experiment"]["n_runs"] = 3
        _Counting.built = _Counting.probes = 0
        exp = Experiment.from_dict(cfg)
        built_by_describe = _Counting.built - 1  # agents.describe builds one with defaults
        exp.run(progress=False, n_jobs=1)
        assert _Counting.built - built_by_describe == 1
        assert _Counting.probes == 1
    finally:
        agents.unregister("counting_ucb_test")
