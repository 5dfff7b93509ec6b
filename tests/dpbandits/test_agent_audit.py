"""The end-to-end privacy audit of a whole agent (dpbandits.audit.agent).

These are the quick audit's tests (``quick=True``: two tables, four changed steps, half the runs
pick the events and half bound them, on the four best neighbours); the search's are in
test_agent_audit_search.py. Sizes are chosen so that each verdict is certain, not lucky: the
numbers in each docstring are the bounds' closed forms or were measured over 20 seeds, and the
margins are derived from the Clopper-Pearson bounds at the audit's per-bound level
``alpha / (3 * neighbours)``.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import agents
from dpbandits.audit import audit_agent
from dpbandits.audit.agent import FAMILIES, claimed_epsilon
from dpbandits.audit.reward_tables import default_steps, play_table
from dpbandits.cli import main
from tests.marks import slow_except

#: The quick audit's per-bound level when each of its four neighbours gives 3 events.
ALPHA_EACH = 1e-3 / (4 * 3)



def with_a_tenth_of_the_noise(cls: type, attr: str) -> type:
    """``cls`` whose mechanisms are set up with ``10 * attr`` (their Laplace scales divided by
    10) while its privacy report still states ``attr``."""

    class Broken(cls):  # type: ignore[misc, valid-type]
        def setup(self) -> None:
            claimed = getattr(self, attr)
            setattr(self, attr, 10 * claimed)
            try:
                super().setup()
            finally:
                setattr(self, attr, claimed)

    Broken.__name__ = f"Broken{cls.__name__}"
    return Broken


#: The App. H agent whose private means (the hybrid mechanism) run at 10 eps_M.
BrokenMeans = with_a_tenth_of_the_noise(agents.PrivateAgent, "epsilon_means")


class RandomizedResponse(agents.Agent):
    """Plays, after the initial round, one eps-randomized-response bit of ``[x_0 >= 1/2]`` (the
    first reward) at every step: exactly eps-DP, and the event "plays arm 1" has probabilities
    ``e^eps / (1 + e^eps)`` and ``1 / (1 + e^eps)`` on tables whose first rewards are 1 and 0."""

    name = "randomized_response"

    def __init__(self, epsilon: float = 1.0) -> None:
        self.epsilon = epsilon

    def setup(self) -> None:
        self._bit = np.zeros(self.n_runs, dtype=np.int64)

    def choose(self) -> np.ndarray:
        return self._bit.copy()

    def observe(self, actions: np.ndarray, rewards: np.ndarray) -> None:
        if self.t == 0:
            truth = (rewards >= 0.5).astype(np.int64)
            keep = self.rng.random(self.n_runs) < 1 / (1 + math.exp(-self.epsilon))
            self._bit = np.where(keep, truth, 1 - truth)

    def privacy_report(self) -> dict:
        return {"epsilon_total": float(self.epsilon)}


def _ceiling(n: int, alpha_each: float = ALPHA_EACH) -> float:
    """The largest bound ``n`` held-out runs per table give: an event seen in all ``n`` runs on
    one table (Clopper-Pearson lower bound ``alpha^(1/n)``) and in none on the other (upper
    bound ``1 - alpha^(1/n)``)."""
    root = alpha_each ** (1 / n)
    return math.log(root) - math.log1p(-root)


def test_ucb_loss_is_the_ceiling_of_the_runs():
    """UCB is deterministic: on the default table (arm 0 pays 0, arm 1 pays 1) it plays arm 1 at
    step 2, and arm 0 when step 0's reward becomes 1 (a tie, broken towards arm 0). Every event
    of every family is then seen in all held-out runs on one table and in none on the other, so
    ``eps_lower`` is exactly the closed-form ceiling, 3.97 at 500 held-out runs."""
    r = audit_agent(agents.UCB(), quick=True, runs=1000, horizon=100, rng=0)
    assert r.epsilon is None and r.passed is None
    assert r.eps_lower == pytest.approx(_ceiling(500), rel=1e-9)
    assert r.eps_lower > 3.9
    assert {e.family for e in r.events} <= set(FAMILIES) and len(r.events) == 12
    assert all(e.lower == pytest.approx(_ceiling(500)) for e in r.events)
    assert any("deterministic" in n for n in r.notes)


def test_thompson_sampling_is_flagged():
    """Thompson sampling's loss is far above 1: 4000 runs certify 2.75-3.62 (20 seeds, median
    3.17); the best events are tails of the first pull of arm 0 (p about 0.3 against < 0.01)."""
    r = audit_agent(agents.ThompsonSampling(), quick=True, runs=4000, horizon=100, rng=0)
    assert r.epsilon is None
    assert r.eps_lower > 2.0


class OverclaimingLDP(agents.LDPUCBL):
    """LDP-UCB-L whose curator adds the noise of eps = ``epsilon`` while its report claims
    ``claim``: a false claim of local (hence global) DP."""

    def __init__(self, epsilon: float = 20.0, claim: float = 0.5) -> None:
        super().__init__(epsilon)
        self.claim = claim

    def privacy_report(self) -> dict:
        return {**super().privacy_report(), "epsilon_total": self.claim}


def test_a_false_ldp_claim_is_caught_on_the_tie_table():
    """LDP-UCB-L plays an arm with at most ``4 ln(t + 1)`` reports first, then follows its index.
    On the default table (arm 1 pays 1, arm 0 pays 0) neither depends on one reward: its
    actions had the same law on both tables of every pair the quick audit tried, and it
    certified 0 for reports at eps = 20 claiming 0.5 (seeds 0 and 1, before the tie table). On
    ``zeros`` (an exact tie) the first index decision, ``a[28]``, is the sign of the changed
    report against the others' noise: about 1 000 of the 2 000 held-out runs against about 4
    (bounds 3.2-4.1 over seeds 0-4). At 5 standard deviations (888 against 14 runs) the bound
    is still 3.2, far above the claim."""
    r = audit_agent(OverclaimingLDP(20.0, 0.5), quick=True, runs=4000, horizon=100, rng=0)
    assert r.epsilon == 0.5
    assert r.passed is False and r.eps_lower > 2.0, str(r)
    assert r.worst is not None and r.worst.table == "zeros"
    from dpbandits.audit.events import log_ratio_lower

    assert float(log_ratio_lower(888, 2000, 14, 2000, ALPHA_EACH)) > 2.0


def test_the_bound_is_valid_and_tight_on_a_known_loss():
    """An agent whose whole output is one eps-randomized-response bit has loss exactly eps = 1.
    The audit must not exceed it (probability <= alpha) and, with 10 000 held-out runs, certify
    at least 0.80: the expected bound is 0.916 and it stays above 0.807 while both held-out
    counts are within 5 standard deviations of their means."""
    r = audit_agent(RandomizedResponse(1.0), quick=True, runs=20_000, horizon=4, rng=0)
    assert r.epsilon == 1.0 and r.passed
    assert 0.80 < r.eps_lower <= 1.0
    best = r.worst
    assert best is not None and best.step == 0
    assert best.estimate == pytest.approx(1.0, abs=0.1)


@pytest.mark.parametrize("selector", ["rnm", "mgem", "krr", "rs", "gem"])
def test_app_h_agents_pass_at_their_ledger_total(selector):
    """The App. H agents (means, Smith's quantile windows and selection) pass at the ledger's
    total ``epsilon_total = eps_M + eps_p`` (``eps_M`` for kRR, which estimates no
    sensitivities); windows of 20 rewards make the quantile mechanism release within the 100
    steps. (The library's default grid quantiles: the registered ``private`` agent, below.)"""
    agent = agents.PrivateAgent(selector, window=20, quantile_method="smith")
    r = audit_agent(agent, quick=True, runs=2000, horizon=100, rng=0)
    assert r.epsilon == (1.0 if selector == "krr" else 2.0)
    assert r.epsilon_source == "privacy_report()['epsilon_total']"
    assert r.passed, str(r)


def _private_kinds() -> list[str]:
    """Every registered agent whose class has a privacy report (new ones are picked up)."""
    out = []
    for name in agents.available():
        cls = agents.describe(name).cls
        if cls is not None and callable(getattr(cls, "privacy_report", None)):
            out.append(name)
    return out


#: One agent of each family in the everyday run (App. H, DP-UCB, DP-SE, AdaP, DP-KL, DP-TS,
#: local DP, sliding-window and change-detecting variants); CI's slow step audits the others.
_EVERYDAY_AUDITS = ["private", "dp_ucb", "dp_se", "adap_ucb", "dp_klucb", "dp_ts", "ldp_ucb_l",
                    "sw_adap_ucb", "cd_adap_ucb"]  # fmt: skip


@pytest.mark.parametrize("kind", slow_except(_private_kinds(), fast=_EVERYDAY_AUDITS))
def test_registered_private_agents_pass_at_their_claim(kind):
    """Every registered private agent, built with its defaults, passes at the total its own
    privacy report claims (a bug in an agent or its ledger that shows in the actions fails).
    A rho-zCDP agent (no finite pure eps) is audited at the (eps, delta) its rho gives at
    delta = 1e-3 (docs/trust-models.md)."""
    agent = agents.make(kind)
    agent.reset(1, 2, horizon=100, rng=0)
    zcdp = agent.privacy_report().get("notion") == "zcdp"
    if zcdp:
        pytest.importorskip("dp_accounting")
    r = audit_agent(agent, quick=True, runs=2000, horizon=100, rng=0,
                    delta=1e-3 if zcdp else None)
    assert r.epsilon is not None and r.epsilon < math.inf
    assert r.passed, str(r)


def test_means_with_a_tenth_of_the_noise_are_caught():
    """The Fig. 9 kRR agent (eps_S = 4, no sensitivities, claim eps_M = 1) with its means' Laplace
    scale divided by 10: over 20 seeds 2000 runs certify 2.48-3.27 (median 2.95) against the
    claim 1. The best events (e.g. 'arm 0 played more than 3 times in steps 2..5': about 0.003
    against 0.33) stay above 1.8 while their counts are within 5 standard deviations. The
    correct agent passes on the same table and seed."""
    broken = audit_agent(BrokenMeans("krr", epsilon_select=4), quick=True, runs=2000,
                         horizon=100, rng=0)  # fmt: skip
    assert broken.epsilon == 1.0
    assert broken.passed is False
    assert broken.eps_lower > 2.0
    correct = audit_agent(agents.PrivateAgent("krr", epsilon_select=4), quick=True, runs=2000,
                          horizon=100, rng=0)  # fmt: skip
    assert correct.passed


def _dp_se_threshold_table(epsilon: float, horizon: int = 3000) -> np.ndarray:
    """A table on which DP-SE's first elimination is a coin flip: arm 1 pays 1, and arm 0's
    rewards in epoch 1 (the even steps up to ``2 R_1``) average exactly ``1 - 2 (h_1 + c_1)``,
    the elimination radius (Sajed & Sheffet, ICML 2019; ``agents.dp_se``, step 3, with
    ``beta = 1/T``)."""
    from agents.dp_se import epoch_length

    beta = 1.0 / horizon
    r1 = epoch_length(1, 2, epsilon, beta, float(horizon))
    radius = 2 * (math.sqrt(math.log(16 / beta) / (2 * r1)) + math.log(8 / beta) / (r1 * epsilon))
    target = r1 * (1 - radius)
    ones = int(target)
    arm0 = np.zeros(horizon)
    arm0[0 : 2 * ones : 2] = 1.0
    arm0[2 * ones] = target - ones  # the fraction that puts the mean on the threshold
    return np.stack([arm0, np.ones(horizon)], axis=1)


# two audits of 4000 runs over 3000 steps: 20-26 CPU-s, the most of any everyday test
@pytest.mark.slow
def test_an_agent_that_decides_rarely_is_audited_on_its_decision():
    """DP-SE's actions depend on the rewards only through its eliminations, the first after
    2 R_1 = 2760 steps here: on the default table it shows nothing. On a table that puts the
    first elimination on its threshold, the correct agent shows 0.42 (the event's log-ratio is
    about 0.6; the decision is 1-DP) and the agent with a tenth of the Laplace noise is caught
    (4.59: arm 0 is kept in half the runs on one table and in none of the 2000 on the other,
    near the ceiling 5.36 of 4000 runs)."""
    Broken = with_a_tenth_of_the_noise(agents.DPSE, "epsilon")
    nothing = audit_agent(agents.DPSE(), quick=True, runs=200, horizon=500, rng=0)
    assert nothing.eps_lower == 0 and nothing.events == [] and nothing.notes
    correct = audit_agent(agents.DPSE(), table=_dp_se_threshold_table(1.0), steps=[0, 2],
                          quick=True, runs=4000, rng=0)  # fmt: skip
    assert correct.epsilon == 1.0 and correct.passed
    assert correct.eps_lower > 0.2
    broken = audit_agent(Broken(), table=_dp_se_threshold_table(10.0), steps=[0, 2], quick=True,
                         runs=4000, rng=0)  # fmt: skip
    assert broken.epsilon == 1.0 and broken.passed is False
    assert broken.eps_lower > 4.0


def test_same_seed_same_result():
    """Every draw (the table, each batch of runs) comes from ``rng``."""
    kw = dict(quick=True, runs=400, horizon=50, chunk=128)
    a = audit_agent(agents.ThompsonSampling(), rng=3, **kw).to_dict()
    b = audit_agent(agents.ThompsonSampling(), rng=3, **kw).to_dict()
    c = audit_agent(agents.ThompsonSampling(), rng=4, **kw).to_dict()
    for d in (a, b, c):
        d.pop("seconds")
    assert a == b
    assert a != c


def test_the_agent_given_is_left_alone():
    agent = agents.ThompsonSampling()
    audit_agent(agent, quick=True, runs=100, horizon=20, rng=0)
    with pytest.raises(RuntimeError, match="reset"):
        agent.act()


def test_play_table_gives_the_step_protocol_actions():
    """The block path and the step path play the same runs (same seed, same table)."""
    table = np.random.default_rng(0).random((60, 3))
    block = play_table(agents.PrivateAgent("mgem"), table, 50, rng=1)

    class Stepwise(agents.PrivateAgent):  # overrides choose: played through act/update
        def choose(self):
            return super().choose()

    step = play_table(Stepwise("mgem"), table, 50, rng=1)
    assert block.shape == (50, 60)
    np.testing.assert_array_equal(block, step)


def test_default_steps_and_claims():
    assert default_steps(500, 2) == (0, 1, 4, 125)
    assert default_steps(4, 2) == (0, 1)
    assert claimed_epsilon(agents.UCB()) is None
    agent = agents.PrivateAgent("krr")
    agent.reset(1, 2, horizon=10, rng=0)
    assert claimed_epsilon(agent) == 1.0

    class NoTotal(agents.UCB):
        def privacy_report(self):
            return {"means": {"epsilon": 1.0}}

    with pytest.raises(ValueError, match="epsilon_total"):
        audit_agent(NoTotal(), quick=True, runs=10, horizon=10)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"runs": 2}, ValueError, "runs"),
        ({"runs": 10.0}, TypeError, "runs"),
        ({"alpha": 0.0}, ValueError, "alpha"),
        ({"epsilon": -1.0}, ValueError, "epsilon"),
        ({"horizon": 1}, ValueError, "horizon"),
        ({"steps": [99]}, ValueError, "steps"),
        ({"steps": []}, ValueError, "steps"),
        ({"table": np.zeros(3)}, ValueError, "table"),
        ({"table": np.full((5, 2), 2.0)}, ValueError, "reward_range"),
        ({"table": np.zeros((5, 2)), "env": "dpbandits/KArmedBernoulli-v0"}, ValueError, "env"),
        ({"reward_range": (0.0, 1.0)}, ValueError, "reward_range"),
        ({"env": "dpbandits/NoSuchEnv-v0"}, ValueError, "env"),
        ({"budget": 0.0}, ValueError, "budget"),
        ({"quick": 1}, TypeError, "quick"),
        ({"table": "nosuch"}, ValueError, "table"),
        ({"rng": "x"}, TypeError, "rng"),
    ],
)
def test_bad_input_is_refused_before_any_work(kwargs, error, match):
    kwargs = {"quick": True, "runs": 10, "horizon": 10} | kwargs
    with pytest.raises(error, match=match):
        audit_agent(agents.UCB(), **kwargs)
    with pytest.raises(TypeError, match="protocol"):
        audit_agent(object(), quick=True, runs=10, horizon=10)


def test_cli(tmp_path, capsys):
    """``dpbandits audit-agent`` at a tiny size: the verdict is the exit status (0 within the
    claim or no claim, 1 above it), ``--json`` holds the result, bad input is one line naming
    the option (exit 2) before any work."""
    path = tmp_path / "ucb.json"
    assert main(["audit-agent", "ucb", "--quick", "--runs", "200", "--horizon", "40",
                 "--no-progress", "--json", str(path)]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "no privacy claim" in out
    data = json.loads(path.read_text())
    assert data["eps_lower"] == pytest.approx(_ceiling(100)) and data["passed"] is None
    assert main(["audit-agent", "private:selector=krr,epsilon_select=4", "--quick", "--runs", "400",
                 "--horizon", "60", "--step", "0,1", "--no-progress"]) == 0  # fmt: skip
    assert "PASS" in capsys.readouterr().out
    agents.register("broken_krr_cli_test", lambda: BrokenMeans("krr", epsilon_select=4))
    try:
        # 1000 runs: the broken kRR agent's bound is 2.12-2.73 (claim 1) over 20 seeds
        assert main(["audit-agent", "broken_krr_cli_test", "--quick", "--runs", "1000",
                     "--horizon", "60", "--no-progress"]) == 1  # fmt: skip
        assert "FAIL" in capsys.readouterr().out
    finally:
        agents.unregister("broken_krr_cli_test")
    for argv, option in [(["ucb", "--runs", "1"], "--runs"), (["ucb", "--step", "x"], "--step"),
                         (["ucb", "--alpha", "1.5"], "--alpha"), (["nosuch"], "AGENT"),
                         (["ucb", "--delta", "1.5"], "--delta"),
                         (["ucb", "--delta", "0"], "--delta"),
                         (["private:epsilon_means=0"], "epsilon_means"),
                         (["ucb", "--horizon", "5000", "--env", "dpbandits/KArmedBernoulli-v0"],
                          "--horizon")]:  # fmt: skip
        assert main(["audit-agent", *argv, "--no-progress"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and option in err, err


def test_cli_delta(capsys):
    """``--delta``: a rho-zCDP agent against the accountant's eps at DELTA; the verdict and the
    claim say the delta."""
    pytest.importorskip("dp_accounting")
    assert main(["audit-agent", "adac_ucb:rho=0.5", "--quick", "--runs", "400", "--horizon", "60",
                 "--delta", "1e-3", "--no-progress"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "PASS" in out and "at delta=0.001" in out and "delta=0.001 by dp-accounting" in out


def test_the_report_wraps_long_events_at_word_boundaries() -> None:
    """An event longer than its 30-character column was cut mid-word; it goes on under it."""
    from dpbandits.audit.agent_result import AgentAuditResult, EventBound

    event = "arm 1 pulled at least 12 times in steps 10-40 after the change"
    bound = EventBound("counts", 12, event, "P/P'", 30, 10, 100, 0.2, 1.1, 0.3, table="tie@1")
    result = AgentAuditResult("ucb", 1.0, "claimed", 0.2, 0.05, 200, 50, 2, (12,), [bound], 1.0,
                              "a table", tables=("tie@1",))  # fmt: skip
    lines = str(result).splitlines()
    row = next(i for i, x in enumerate(lines) if x.startswith("tie@1"))
    # table (16), step (5) and two spaces before the event column
    more = [x[24:] for x in lines[row + 1 : row + 3] if x.startswith(" " * 24)]
    assert more and all(len(x) <= 30 for x in more), lines[row : row + 3]
    assert " ".join(" ".join([lines[row][24:54], *more]).split()) == event, lines[row : row + 3]
