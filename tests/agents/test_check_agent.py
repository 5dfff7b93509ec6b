"""check_agent, the agents' conformance kit: every built-in agent passes, and each kind of
subtly broken agent is caught by the check that names its fault."""

from __future__ import annotations

import numpy as np
import pytest

import agents
from agents.base import Agent, ArmStatistics
from dpbandits.core.params import Param
from dpbandits.testing import AgentCheckError, check_agent
from tests.marks import slow_except


@pytest.mark.parametrize("name", slow_except(agents.available(), fast=["ucb", "adap_ucb"]))
def test_every_built_in_agent_passes(name):
    horizon = 1200 if name == "dp_se" else 300  # DP-SE decides only after its first epoch
    report = check_agent(agents.make(name), horizon=horizon)
    assert report.ok and len(report.results) == 5


class Greedy(Agent):
    """A correct small agent: epsilon-greedy on the running means, with a block path."""

    name = "greedy_test"
    parameter_constraints = {"explore": Param(low=0, high=1, doc="exploration probability")}

    def __init__(self, explore: float = 0.1) -> None:
        self.explore = explore

    def setup(self) -> None:
        self.stats = ArmStatistics(self.n_runs, self.n_arms)

    def choose(self):
        means = self.stats.sums / self.stats.counts
        best = np.argmax(means, axis=1)
        u = self.rng.random(self.n_runs)
        other = self.rng.integers(self.n_arms, size=self.n_runs)
        return np.where(u < self.explore, other, best).astype(np.int64)

    def observe(self, actions, rewards):
        runs = np.arange(self.n_runs)
        self.stats.sums[runs, actions] += rewards
        self.stats.counts[runs, actions] += 1

    def play(self, rows, actions, rewards):
        runs = np.arange(self.n_runs)
        for i in range(rows.shape[0]):
            a = self._initial[self.t + i] if self.t + i < self.n_arms else self.choose()
            r = rows[i, a * self.n_runs + runs]
            self.observe(a, r)
            actions[i], rewards[i] = a, r
        self.played(rows.shape[0])


def test_a_correct_agent_passes():
    report = check_agent(Greedy(0.2))
    assert report.ok, str(report)


class OffByOneBlocks(Greedy):
    def play(self, rows, actions, rewards):
        runs = np.arange(self.n_runs)
        for i in range(rows.shape[0]):
            # the warm-up arm of the block's own index, not of the step: wrong after block 1
            a = self._initial[i] if i < self.n_arms else self.choose()
            r = rows[i, a * self.n_runs + runs]
            self.observe(a, r)
            actions[i], rewards[i] = a, r
        self.played(rows.shape[0])


class GlobalRandom(Greedy):
    def choose(self):
        means = self.stats.sums / self.stats.counts
        u = np.random.random(self.n_runs)  # noqa: NPY002 (the bug under test)
        other = self.rng.integers(self.n_arms, size=self.n_runs)
        return np.where(u < self.explore, other, np.argmax(means, axis=1)).astype(np.int64)


class StateOutsideReset(Greedy):
    def __init__(self, explore: float = 0.1) -> None:
        super().__init__(explore)
        self.stats = None

    def setup(self) -> None:
        if self.stats is None or self.stats.sums.shape != (self.n_runs, self.n_arms):
            self.stats = ArmStatistics(self.n_runs, self.n_arms)  # kept across resets


class ParamUnderAnotherName(Greedy):
    def __init__(self, explore: float = 0.1) -> None:
        self.eps = explore  # get_params() cannot find "explore"

    parameter_constraints = {}

    def choose(self):
        means = self.stats.sums / self.stats.counts
        u = self.rng.random(self.n_runs)
        other = self.rng.integers(self.n_arms, size=self.n_runs)
        return np.where(u < self.eps, other, np.argmax(means, axis=1)).astype(np.int64)


class ValidatesInInit(Greedy):
    def __init__(self, explore: float = 0.1) -> None:
        if not 0 <= explore <= 1:
            raise ValueError(f"explore must be in [0, 1], got {explore}")
        super().__init__(explore)


class NoValidation(Greedy):
    parameter_constraints = {}  # explore undeclared and never checked: NaN is accepted


class Unpicklable(Greedy):
    def setup(self) -> None:
        super().setup()
        self.hook = lambda x: x  # a reset agent cannot be sent to a worker


class BadShape(Greedy):
    def choose(self):
        return super().choose()[:, None]


class VagueError(Greedy):
    parameter_constraints = {}

    def setup(self) -> None:
        if not isinstance(self.explore, float) or not 0 <= self.explore <= 1:
            raise ValueError("bad value")  # does not name the parameter
        super().setup()


@pytest.mark.parametrize(
    ("agent", "check"),
    [
        (OffByOneBlocks(0.2), "blocks"),
        (GlobalRandom(0.2), "determinism"),
        (StateOutsideReset(0.2), "determinism"),
        (ParamUnderAnotherName(0.2), "params"),
        (ValidatesInInit(0.2), "validation"),
        (NoValidation(0.2), "validation"),
        (Unpicklable(0.2), "params"),
        (BadShape(0.2), "protocol"),
        (VagueError(0.2), "validation"),
    ],
    ids=lambda x: type(x).__name__ if isinstance(x, Agent) else x,
)
def test_a_broken_agent_is_caught_by_the_check_that_names_its_fault(agent, check):
    with pytest.raises(AgentCheckError) as info:
        check_agent(agent)
    failed = dict(info.value.report.failures)
    assert check in failed, str(info.value.report)


def test_bad_arguments_of_check_agent():
    with pytest.raises(TypeError, match="class"):
        check_agent(Greedy)
    with pytest.raises(TypeError, match="reset"):
        check_agent(object())
    with pytest.raises(ValueError, match="skip"):
        check_agent(Greedy(), skip=["nope"])
    with pytest.raises(ValueError, match="horizon"):
        check_agent(Greedy(), n_arms=3, horizon=3)


def test_the_report_without_raising():
    report = check_agent(BadShape(0.2), raise_on_failure=False)
    assert not report.ok and "FAIL protocol" in str(report)
