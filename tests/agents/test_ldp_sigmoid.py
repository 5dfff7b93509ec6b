"""LDP-UCB-LS and LDP-UCB-BS (Ren, Zhou, Liu & Shroff 2020, the sigmoid curators CTL-S and
CTB-S): the reports' laws against their closed forms, regret against a slow independent
implementation (the curators and the authors' indices, ``ucb_bandit_gaussian`` in their code),
audits at eps and bad input (docs/trust-models.md)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from scipy.special import expit

import agents
import dpbandits
from dpbandits.audit import audit_agent
from dpbandits.core.checks import ParameterError
from dpbandits.testing import check_agent
from tests.agents.test_trust_agents import reference_ldp_ucb

# rewards of every size: S saturates at both ends (S(-1e6) = 0, S(1e6) = 1 in doubles)
XS = np.array([-1e6, -3.0, -0.4, 0.0, 0.7, 2.5, 1e6])


@pytest.mark.parametrize("name", ["ldp_ucb_ls", "ldp_ucb_bs"])
def test_conformance_kit(name: str) -> None:
    assert check_agent(agents.make(name), horizon=300).ok


def _first_reports(agent, rewards: np.ndarray, seed: int) -> np.ndarray:
    """The report of each replication's first reward (``rewards[r]``): its first step pulls
    one arm, whose report sum is then the report itself."""
    agent.reset(rewards.size, 2, rng=seed)
    actions = agent.act()
    agent.update(actions, rewards)
    sums = agent.arm_field("sum")
    assert np.all(agent.arm_field("count")[np.arange(rewards.size), actions] == 1)
    return sums[np.arange(rewards.size), actions]


@pytest.mark.parametrize("eps", [0.3, 1.0, 4.0])
def test_ctb_s_reports_bits_of_the_randomized_response_law(eps: float) -> None:
    """P[y = 1 | x] = q + (p - q) S(x), p = e^eps / (1 + e^eps): a binomial z per reward."""
    n = 40_000
    x = np.repeat(XS, n)
    y = _first_reports(agents.LDPUCBBS(eps), x, seed=5)
    assert set(np.unique(y)) <= {0.0, 1.0}
    p = math.exp(eps) / (1 + math.exp(eps))
    for i, xi in enumerate(XS):
        want = (1 - p) + (2 * p - 1) * float(expit(xi))
        got = y[i * n : (i + 1) * n].mean()
        z = (got - want) / math.sqrt(want * (1 - want) / n)
        assert abs(z) < 5, f"x = {xi}: P[y=1] {got:.4f} vs {want:.4f} (z = {z:.2f})"


@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_ctl_s_reports_are_sigmoid_plus_laplace(eps: float) -> None:
    """y - S(x) is Laplace(1/eps) whatever x (Kolmogorov-Smirnov), so E[y] = E[S(X)]."""
    n = 30_000
    x = np.repeat(XS, n)
    y = _first_reports(agents.LDPUCBLS(eps), x, seed=6)
    noise = y - expit(x)
    for i, xi in enumerate(XS):
        p = stats.kstest(noise[i * n : (i + 1) * n], stats.laplace(scale=1 / eps).cdf).pvalue
        assert p > 1e-6, f"x = {xi}: KS p = {p:.2g}"
    # debiasing: the mean report of Gaussian rewards is E[S(X)] (z against the closed form's
    # numeric integral), not S(E[X])
    g = np.random.default_rng(8).normal(0.8, 2.0, 200_000)
    y = _first_reports(agents.LDPUCBLS(eps), g, seed=9)
    want = stats.norm(0.8, 2.0).expect(expit)
    z = (y.mean() - want) / (y.std(ddof=1) / math.sqrt(y.size))
    assert abs(z) < 5 and abs(want - expit(0.8)) > 0.02


# -- regret against a slow independent implementation ------------------------------------------
MEANS, SD = np.array([0.0, 0.6]), 1.0
T, R = 1500, 300


def _sigmoid_gaussian(a: int, rng: np.random.Generator) -> float:
    """What the curators CTL-S / CTB-S are given: ``S(x)`` of a Gaussian reward of arm ``a``
    (the authors' ``pull_CTL`` / ``pull_CTB`` in ``ucb_bandit_gaussian``)."""
    return 1 / (1 + math.exp(-rng.normal(MEANS[a], SD)))


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["LS", "BS"])
def test_regret_matches_an_independent_implementation(kind: str) -> None:
    agent = agents.LDPUCBLS(1.0) if kind == "LS" else agents.LDPUCBBS(1.0)
    env = {"id": "dpbandits/KArmedGaussian-v0", "means": list(MEANS), "sds": SD, "lo": -100.0,
           "hi": 100.0, "horizon": T}  # fmt: skip
    res = dpbandits.run(env, {"a": agent}, n_runs=R, seed=11, n_jobs=1, progress=False)
    ours = np.asarray(res.data["a"]["total_regret"], dtype=float)
    g = np.random.default_rng(2025)
    ref = np.array([reference_ldp_ucb(kind[0], 1.0, g, MEANS, T, _sigmoid_gaussian)
                    for _ in range(R)])  # fmt: skip
    z = (ours.mean() - ref.mean()) / math.sqrt(ours.var(ddof=1) / R + ref.var(ddof=1) / R)
    assert abs(z) < 5, f"mean regret {ours.mean():.1f} vs reference {ref.mean():.1f}: z = {z:.2f}"
    assert ours.mean() < 0.9 * T * 0.3  # it learns: well below uniform play's T * gap / 2


# -- privacy -------------------------------------------------------------------------------------
def test_reports_state_local_dp_for_any_reward() -> None:
    for agent in (agents.LDPUCBLS(0.7), agents.LDPUCBBS(0.7)):
        assert agent.traits.rewards == "real"
        agent.reset(2, 2, rng=0)
        rep = agent.privacy_report()
        assert rep["notion"] == "local" and rep["epsilon_local"] == 0.7
        assert rep["epsilon_total"] == 0.7 and "S(x)" in rep["means"]["mechanism"]


@pytest.mark.slow
def test_audits() -> None:
    # at their eps: the quick audit on the default table; the search (a tenth of its budget) on
    # rewards far out on both sides, where S saturates
    wide = {"id": "dpbandits/KArmedGaussian-v0", "means": [-30.0, 30.0], "sds": 1.0,
            "lo": -100.0, "hi": 100.0}  # fmt: skip
    for agent in (agents.LDPUCBLS(1.0), agents.LDPUCBBS(1.0)):
        r = audit_agent(agent, quick=True, runs=4000, horizon=100, rng=0)
        assert r.passed and r.epsilon == 1.0, str(r)
        r = audit_agent(agent, env=wide, budget=0.1, horizon=100, rng=0)
        assert r.passed and r.epsilon == 1.0, str(r)
    # and they catch false claims of the same agents (the Laplace curator's on the quick audit's
    # tie table, 3.99 on zeros, every reward lo = -100)
    liar = audit_agent(agents.LDPUCBBS(6.0), env=wide, quick=True, runs=4000, horizon=100,
                       rng=0, epsilon=0.5)  # fmt: skip
    assert liar.passed is False
    liar = audit_agent(agents.LDPUCBLS(20.0), env=wide, quick=True, runs=4000, horizon=100,
                       rng=0, epsilon=0.5)  # fmt: skip
    assert liar.passed is False


# -- bad input -----------------------------------------------------------------------------------
@pytest.mark.parametrize("cls", [agents.LDPUCBLS, agents.LDPUCBBS])
def test_bad_input(cls) -> None:
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ParameterError, match="epsilon"):
            cls(epsilon=bad).reset(2, 2, rng=0)
    with pytest.raises(TypeError, match="epsilon"):
        cls(epsilon=True).reset(2, 2, rng=0)
    agent = cls(1.0)
    agent.reset(2, 2, rng=0)
    for reward in (float("nan"), float("inf")):
        with pytest.raises(ValueError, match="reward"):
            agent.update(agent.act(), np.array([reward, 0.0]))
    assert np.all(agent.arm_field("count") == 0)  # nothing was learnt from them
