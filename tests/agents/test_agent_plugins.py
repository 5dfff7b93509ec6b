"""Third-party agents through the entry-point group ``dpbandits.agents``: a real installed
distribution (a ``.dist-info`` folder with ``entry_points.txt`` on ``sys.path``) whose agent
appears in ``agents.available()``, ``agents.describe``, ``dpbandits list``, experiment configs
and the command line's ``--agent``, and passes ``check_agent``; a broken entry point of the same
distribution fails only its own name (error isolation, as for selectors)."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

import agents
from dpbandits.cli import main
from dpbandits.core.traits import AgentTraits, traits_of
from dpbandits.experiments.config import Experiment
from dpbandits.testing import check_agent

PLUGIN = '''
"""A plug-in agent package."""
import numpy as np

import agents
from dpbandits.core.params import Param
from dpbandits.core.traits import AgentTraits


class Greedy(agents.Agent):
    """Epsilon-free greedy with an optimistic start ``c`` (a plug-in agent)."""

    name = "plugin_greedy"
    traits = AgentTraits(rewards="unit")
    parameter_constraints = {"c": Param(low=0, doc="optimistic initial mean")}

    def __init__(self, c=1.0):
        self.c = c

    def setup(self):
        self.sums = np.full((self.n_runs, self.n_arms), float(self.c))
        self.counts = np.ones((self.n_runs, self.n_arms))

    def choose(self):
        return (self.sums / self.counts).argmax(axis=1)

    def observe(self, actions, rewards):
        rows = np.arange(self.n_runs)
        self.sums[rows, actions] += rewards
        self.counts[rows, actions] += 1.0
'''


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """The distribution ``fake-agent-plugin`` installed on ``sys.path`` for one test."""
    (tmp_path / "fake_agent_plugin.py").write_text(textwrap.dedent(PLUGIN))
    dist = tmp_path / "fake_agent_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-agent-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        "[dpbandits.agents]\n"
        "plugin_greedy = fake_agent_plugin:Greedy\n"
        "plugin_broken = fake_agent_plugin:DoesNotExist\n"
    )
    assert "plugin_greedy" not in agents.available()
    monkeypatch.syspath_prepend(str(tmp_path))
    agents.refresh_plugins()
    yield tmp_path
    monkeypatch.undo()
    agents.refresh_plugins()
    assert "plugin_greedy" not in agents.available()


def test_an_installed_plugin_agent_is_listed_built_and_described(installed):
    assert {"plugin_greedy", "plugin_broken"} <= set(agents.available())
    agent = agents.make("Plugin_Greedy", c=0.5)  # names are case-insensitive
    assert type(agent).__name__ == "Greedy" and agent.c == 0.5
    kind = agents.describe("plugin_greedy")
    assert kind.cls is type(agent) and list(kind.parameters) == ["c"] and not kind.var_keyword
    assert set(kind.constraints) == {"c"}
    assert traits_of(kind.cls) == AgentTraits(rewards="unit")


def test_a_broken_plugin_fails_only_its_own_name(installed):
    with pytest.raises(ValueError, match="agent plug-in 'plugin_broken'.*failed to load"):
        agents.make("plugin_broken")
    kind = agents.describe("plugin_broken")  # described by its error, not raised
    assert kind.cls is None and "failed to load" in kind.error
    assert isinstance(agents.make("ucb"), agents.UCB)  # the others keep working


def test_a_plugin_agent_passes_check_agent(installed):
    report = check_agent(agents.make("plugin_greedy"), horizon=60)
    assert report.ok


def test_dpbandits_list_shows_the_plugin_and_the_broken_one(installed, capsys):
    assert main(["list", "agents"]) == 0
    out = " ".join(capsys.readouterr().out.split())  # (the parameters are wrapped)
    assert "plugin_greedy Greedy: Epsilon-free greedy" in out
    assert "c=1.0 [number >= 0]" in out
    assert "plugin_broken ? (agent plug-in 'plugin_broken'" in out and "failed to load" in out


def test_a_config_and_the_command_line_take_the_plugin_kind(installed, tmp_path):
    exp = Experiment.from_dict({
        "experiment": {"env": "dpbandits/TwoArmedShift-v0",
                       "env_kwargs": {"t_shift": 50, "horizon": 100}, "n_runs": 2},
        "agents": {"G": {"kind": "plugin_greedy", "c": 0.25}},
    })  # fmt: skip
    assert exp.agent_objects()["G"].c == 0.25
    with pytest.raises(ValueError, match="c: must be >= 0"):
        Experiment.from_dict({
            "experiment": {"env": "dpbandits/TwoArmedShift-v0",
                           "env_kwargs": {"t_shift": 50, "horizon": 100}},
            "agents": {"G": {"kind": "plugin_greedy", "c": -1}},
        })  # fmt: skip
    out = tmp_path / "out"
    argv = ["run", "--env", "dpbandits/TwoArmedShift-v0", "--env-arg", "t_shift=50,horizon=100",
            "--agent", "G=plugin_greedy:c=0.5", "--runs", "2", "--jobs", "1", "--no-plots",
            "--no-progress", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    assert any(out.iterdir())


def test_describe_builds_nothing():
    built = []

    class Counting(agents.UCB):
        def __init__(self, alpha: float = 1.0) -> None:
            built.append(alpha)
            super().__init__(alpha=alpha)

    agents.register("counting-test", Counting)
    try:
        kind = agents.describe("counting-test")
        assert kind.cls is Counting and list(kind.parameters) == ["alpha"] and built == []
        assert kind.constraints == dict(agents.UCB.parameter_constraints)
    finally:
        agents.unregister("counting-test")


def test_every_built_in_declares_its_traits():
    for name in agents.BUILT_IN:
        cls = agents.describe(name).cls
        assert isinstance(cls.__dict__.get("traits") or cls.traits, AgentTraits), name
    assert traits_of(agents.describe("dp_klucb").cls).rewards == "bernoulli"
    assert traits_of(agents.describe("private").cls).private
    rng = np.random.default_rng(0)  # an undeclared duck-typed agent: traits from its hooks

    class Duck:
        def private_means(self):
            return rng.random((1, 2))

    assert traits_of(Duck()).private and not traits_of(Duck()).compiled
