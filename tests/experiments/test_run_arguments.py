"""The run's counts and seed are checked by one function of the input policy
(``dpbandits.core.checks``), so the engine, a config and the command line word a bad value
alike; a bool is never a count or a seed (TypeError)."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import agents
from dpbandits import course
from dpbandits.cli import main
from dpbandits.core import checks
from dpbandits.experiments import engine
from dpbandits.experiments.config import ConfigError, ConfigTypeError, Experiment

ENV = {"id": "dpbandits/TwoArmedShift-v0", "t_shift": 50, "horizon": 100}
CONFIG = {
    "experiment": {"env": "dpbandits/TwoArmedShift-v0", "n_runs": 2,
                   "env_kwargs": {"t_shift": 50, "horizon": 100}},
    "agents": {"UCB": {"kind": "ucb"}},
}  # fmt: skip


def _run(**kwargs):
    args = {"n_runs": 2, "seed": 0, "n_jobs": 1, "progress": False} | kwargs
    return engine.run(ENV, {"UCB": agents.UCB()}, **args)


@pytest.mark.parametrize("seed", [True, False, np.bool_(True), 1.0, "1"])
def test_a_seed_that_is_not_an_int_is_a_type_error(seed):
    with pytest.raises(TypeError, match=r"^seed must be an integer, got "):
        _run(seed=seed)


@pytest.mark.parametrize("name", ["n_runs", "chunk_size", "n_jobs"])
@pytest.mark.parametrize("value", [True, np.bool_(True), 2.0])
def test_a_count_that_is_not_an_int_is_a_type_error(name, value):
    with pytest.raises(TypeError, match=rf"^{name} must be an integer, got "):
        _run(**{name: value})


def test_negative_seed_and_zero_counts_are_value_errors():
    with pytest.raises(ValueError, match=r"^seed must be >= 0, got -1$"):
        _run(seed=-1)
    for name in ("n_runs", "chunk_size", "n_jobs"):
        with pytest.raises(ValueError, match=rf"^{name} must be >= 1, got 0$"):
            _run(**{name: 0})


def test_a_good_seed_still_runs():
    a, b = _run(seed=np.int64(3)), _run(seed=3)
    np.testing.assert_array_equal(a.mean("UCB"), b.mean("UCB"))
    assert a.config["seed"] == 3


def test_n_runs_is_worded_alike_by_the_engine_a_config_and_the_command_line(capsys):
    """One rule, one wording: ``must be >= 1, got 0``, after the name each layer uses."""
    rule = "must be >= 1, got 0"
    with pytest.raises(ValueError) as engine_error:
        checks.positive_int(0, "n_runs")
    with pytest.raises(ValueError) as run_error:
        _run(n_runs=0)
    cfg = copy.deepcopy(CONFIG)
    cfg["experiment"]["n_runs"] = 0
    with pytest.raises(ConfigError) as config_error:
        Experiment.from_dict(cfg)
    with pytest.raises(SystemExit):
        main(["run", "--runs", "0"])
    assert str(engine_error.value) == str(run_error.value) == f"n_runs {rule}"
    assert str(config_error.value).startswith(f"experiment.n_runs: {rule}")
    assert f"argument --runs: {rule}\n" in capsys.readouterr().err


def test_a_bool_n_runs_is_a_type_error_in_a_config():
    cfg = copy.deepcopy(CONFIG)
    cfg["experiment"]["n_runs"] = True
    with pytest.raises(ConfigTypeError, match=r"^experiment.n_runs: must be an integer, got bool"):
        Experiment.from_dict(cfg)


@pytest.mark.parametrize("option", ["--runs", "--jobs"])
@pytest.mark.parametrize("command", ["run", "shift"])
def test_the_command_line_counts_use_the_same_rule(command, option, capsys):
    with pytest.raises(SystemExit) as info:
        main([command, option, "-3"])
    assert info.value.code == 2
    assert f"argument {option}: must be >= 1, got -3\n" in capsys.readouterr().err


def test_the_course_checker_refuses_a_bool_seed():
    with pytest.raises(TypeError, match=r"^seed must be an integer, got bool"):
        course.check(1, "does-not-matter.py", seed=True)
