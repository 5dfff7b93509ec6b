"""Privacy of the top-k mechanisms: exact losses on small inputs and the empirical audit."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from dpbandits import topk
from dpbandits.audit.topk import HARD_TOPK_PAIRS, TopKPair, audit_topk
from dpbandits.topk import exact


def _pairs(n: int, seed: int):
    """Random neighbouring pairs: every score moves by at most 1 (the sensitivity)."""
    rng = np.random.default_rng(seed)
    for _ in range(n):
        d = int(rng.integers(3, 6))
        k = int(rng.integers(1, d))
        if rng.random() < 0.5:  # ties: integer grid
            q = rng.integers(-2, 3, size=d).astype(float)
            qp = q + rng.choice([-1.0, 0.0, 1.0], size=d)
        else:
            q = rng.uniform(-3, 3, size=d)
            qp = q + rng.uniform(-1, 1, size=d)
        yield q, qp, k


@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_exact_loss_within_eps(eps):
    """Exact max |log P[o|q] - log P[o|q']| <= eps on random neighbouring pairs."""
    worst = {"lipschitz": 0.0, "plackett_luce": 0.0, "joint": 0.0}
    for q, qp, k in _pairs(20, seed=int(eps * 10)):
        pmfs = {
            "lipschitz": functools.partial(exact.lipschitz_pmf, k=k, epsilon=eps),
            "plackett_luce": functools.partial(exact.plackett_luce_pmf, k=k, epsilon=eps),
            "joint": functools.partial(exact.joint_pmf, k=k, epsilon=eps),
        }
        for name, pmf in pmfs.items():
            loss = exact.exact_privacy_loss(pmf, q, qp)
            worst[name] = max(worst[name], loss)
            assert loss <= eps * (1 + 1e-9), (name, q, qp, k, loss)
    # the pairs are hard enough to matter: each mechanism uses a good part of its budget
    assert min(worst.values()) > 0.3 * eps, worst


def test_algorithm2_as_printed_exceeds_eps_exactly():
    pair = HARD_TOPK_PAIRS["ties4"]
    pmf = functools.partial(exact.lipschitz_pmf, k=pair.k, epsilon=1.0, classes="paper")
    assert exact.exact_privacy_loss(pmf, pair.q, pair.q_prime) > 1.5
    # also without ties
    pmf3 = functools.partial(exact.lipschitz_pmf, k=3, epsilon=1.0, classes="paper")
    q = [-1.203, -0.19, -0.354, 0.679, 1.134]
    qp = [-1.139, 0.295, 0.441, 0.594, 0.199]
    assert exact.exact_privacy_loss(pmf3, q, qp) > 1.1


@pytest.mark.parametrize("name", ["canonical_lipschitz", "joint", "gumbel", "peeling"])
@pytest.mark.parametrize("pair", sorted(HARD_TOPK_PAIRS))
def test_empirical_audit_passes(name, pair):
    res = audit_topk(name, pair, epsilon=1.0, draws=20_000, rng=0)
    assert res.passed, str(res)
    assert np.isfinite(res.loss_upper) or res.loss_upper == np.inf


def test_audit_membership_events_pass_at_larger_d():
    q = tuple(float(v) for v in np.linspace(0, 3, 12))
    qp = tuple(v + (1.0 if i % 2 else -1.0) for i, v in enumerate(q))
    pair = TopKPair("wide", q, qp, 4)
    for name in ("canonical_lipschitz", "gumbel"):
        res = audit_topk(name, pair, epsilon=1.0, events="membership", draws=20_000, rng=1)
        assert res.passed, str(res)


def test_audit_catches_algorithm2_as_printed():
    sel = topk.make("canonical_lipschitz", epsilon=1.0, classes="paper")
    res = audit_topk(sel, "ties4", draws=50_000, rng=2)
    assert not res.passed and res.loss_lower > 1.2, str(res)


def test_audit_catches_unsplit_gumbel():
    """A one-shot Gumbel that forgets to split eps over k (scale 2D/eps) is ~k eps-DP."""

    class Unsplit(topk.OneShotGumbel):
        def select_batch(self, q, big_d, k, rng):
            return super().select_batch(q, big_d / k, k, rng)

    res = audit_topk(Unsplit(epsilon=1.0), "spread", draws=50_000, rng=3)
    assert not res.passed, str(res)


def test_audit_bad_input():
    with pytest.raises(ValueError, match="unknown pair"):
        audit_topk("gumbel", "nope")
    with pytest.raises(ValueError, match="not neighbouring"):
        audit_topk("gumbel", TopKPair("far", (0.0, 0.0, 3.0), (0.0, 0.0, 0.0), 1))
    with pytest.raises(ValueError, match="events must be"):
        audit_topk("gumbel", "spread", events="sets")
    with pytest.raises(ValueError, match="draws must be"):
        audit_topk("gumbel", "spread", draws=0)
