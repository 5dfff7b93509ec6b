"""The engine reads what an agent is from its declared traits (``dpbandits.core.traits``), not
by probing it for hooks; an agent of the bare protocol (no ``agents.Agent`` base, no traits)
still runs, with the traits its hooks show and the scheduling defaults."""

from __future__ import annotations

import numpy as np

import agents
from dpbandits.core.traits import AgentTraits, compile_key, cost_hint, traits_of
from dpbandits.experiments import run

ENV = {"id": "dpbandits/TwoArmedShift-v0", "horizon": 60, "t_shift": 30}
HOOKS = {"privacy_report", "private_means", "sensitivities", "block_player", "play",
         "compile_key", "cost_hint"}  # fmt: skip


class BareGreedy:
    """A plug-in written against the public protocol only: ``reset``, ``act``, ``update``."""

    def __init__(self, c: float = 1.0) -> None:
        self.c = c

    def reset(self, n_runs, n_arms, *, horizon=None, rng=None):
        self.sums = np.full((n_runs, n_arms), float(self.c))
        self.counts = np.ones((n_runs, n_arms))

    def act(self):
        return (self.sums / self.counts).argmax(axis=1).astype(np.int64)

    def update(self, actions, rewards):
        rows = np.arange(actions.shape[0])
        self.sums[rows, actions] += rewards
        self.counts[rows, actions] += 1.0


class Reporting(BareGreedy):
    """A bare-protocol agent that claims a guarantee (its report is kept with the results)."""

    def privacy_report(self):
        return {"epsilon_total": 1.0, "text": "claimed"}


class Watched(agents.Agent):
    """A declared agent that records every attribute it is asked for and does not have."""

    traits = AgentTraits()
    asked: set[str] = set()

    def __getattr__(self, name: str):
        type(self).asked.add(name)
        raise AttributeError(name)

    def setup(self) -> None:
        self.n = np.zeros((self.n_runs, self.n_arms))

    def choose(self):
        return np.zeros(self.n_runs, dtype=np.int64)

    def observe(self, actions, rewards) -> None:
        self.n[np.arange(self.n_runs), actions] += 1.0


def test_a_bare_protocol_agent_runs_with_the_defaults():
    agent = BareGreedy()
    assert traits_of(agent) == AgentTraits()
    assert cost_hint(agent) == 1.0 and compile_key(agent, 2) == (BareGreedy, repr(agent))
    res = run(ENV, {"g": agent, "r": Reporting()}, n_runs=3, seed=0, n_jobs=1, progress=False)
    assert res.data["g"]["total_regret"].shape == (3,)
    assert res.privacy.get("g") is None
    assert res.privacy["r"]["epsilon_total"] == 1.0  # traits_of(Reporting()).reports


def test_every_agent_has_the_scheduling_hints():
    ucb, private = agents.make("ucb"), agents.make("private", selector="krr")
    assert cost_hint(ucb) == 1.0 and compile_key(ucb, 2) == (agents.UCB, repr(ucb))
    assert cost_hint(agents.make("dp_ts")) == agents.LazyDPTS.cost_hint
    assert cost_hint(private) == private.cost_hint == 3.0
    assert compile_key(private, 2) == private.compile_key(2)


def test_reports_defaults_to_private():
    assert AgentTraits(private=True).reports and not AgentTraits().reports
    assert AgentTraits(reports=True).reports and not AgentTraits(reports=True).private
    assert traits_of(agents.make("dp_imed")).reports


def test_the_engine_asks_a_declared_agent_for_no_hook():
    Watched.asked = set()
    res = run(ENV, {"w": Watched()}, n_runs=2, seed=1, n_jobs=1, progress=False)
    assert res.privacy.get("w") is None
    assert not (Watched.asked & HOOKS), Watched.asked
