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
    assert "argument --runs: must be >= 1, got '0'" in capsys.readouterr().err


@pytest.mark.parametrize("option", ["--eps-select", "--eps-means", "--eps-krr", "--eps-quantiles"])
def test_a_bad_epsilon_option_is_named(option, capsys):
    with pytest.raises(SystemExit):
        main(["shift", option, "-1"])
    assert f"argument {option}: must be finite and > 0" in capsys.readouterr().err
