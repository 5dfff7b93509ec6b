"""Privacy ledger (App. H "In summary")."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dpbandits.accounting import PrivacyLedger


def test_app_h_budget() -> None:
    """App. H: eps_M = eps_S = eps_p = 1, two arms; eps_p 'to be paid twice'."""
    ledger = PrivacyLedger(1.0, 1.0, 1.0, n_arms=2)
    ledger.record_selections(50_000)
    ledger.record_quantile_pairs(np.array([[40, 210], [38, 212]]))  # (R, K): worst run per arm
    r = ledger.report()
    assert r["counts_public"] is True
    assert r["means"]["epsilon"] == 1.0 and r["means"]["total"] == 1.0
    q = r["quantiles"]
    assert q["pairs_per_arm"] == [40, 212]
    assert q["epsilon_per_pair"] == 1.0 and q["epsilon_per_quantile"] == 0.5
    assert q["paper_count"] == 2.0  # the paper's 2 eps_p for two arms
    assert q["parallel"] == 1.0  # disjoint windows: parallel composition
    s = r["selection"]
    assert s["epsilon_per_action"] == 1.0 and s["n_actions"] == 50_000
    assert s["sequential_bound"] == 50_000.0
    assert r["total_paper"] == 3.0 and r["total_parallel"] == 2.0
    assert json.loads(ledger.to_json()) == r  # JSON-able, round trip


def test_text_says_which_composition() -> None:
    ledger = PrivacyLedger(1.0, 1.0, 4.0, n_arms=2)
    ledger.record_quantile_pairs([3, 5])
    ledger.record_selections(10)
    text = str(ledger)
    for phrase in ["public", "eps_M = 1", "eps_p = 1", "eps_S = 4", "paper's count", "parallel"]:
        assert phrase in text, phrase
    assert "sequential" in text


def test_accumulates_and_unused_components() -> None:
    krr = PrivacyLedger(1.0, None, 4.0, n_arms=2)  # kRR needs no sensitivities (App. H)
    krr.record_selections(5)
    krr.record_selections(7)
    krr.record_quantile_pairs([0, 0])
    r = krr.report()
    assert r["selection"]["n_actions"] == 12 and r["selection"]["sequential_bound"] == 48.0
    assert r["quantiles"]["paper_count"] == 0.0 and r["quantiles"]["parallel"] == 0.0
    assert r["total_paper"] == 1.0
    assert "unused" in str(krr)
    with pytest.raises(ValueError, match="epsilon_quantiles"):
        krr.record_quantile_pairs([1, 0])
    ledger = PrivacyLedger(0.5, 2.0, 1.0, n_arms=3)
    ledger.record_quantile_pairs([1, 0, 0])
    ledger.record_quantile_pairs(np.array([2, 0, 0], dtype=np.int32))
    r = ledger.report()
    assert r["quantiles"]["pairs_per_arm"] == [3, 0, 0]
    assert r["quantiles"]["paper_count"] == 2.0  # only one arm released pairs
    assert r["total_paper"] == 2.5 and r["total_parallel"] == 2.5


def test_bad_input() -> None:
    for bad in [0.0, -1.0, float("nan"), float("inf")]:
        with pytest.raises(ValueError, match="epsilon_means"):
            PrivacyLedger(bad, 1.0, 1.0, 2)
        with pytest.raises(ValueError, match="epsilon_select"):
            PrivacyLedger(1.0, 1.0, bad, 2)
    with pytest.raises(ValueError, match="n_arms"):
        PrivacyLedger(1.0, 1.0, 1.0, 0)
    ledger = PrivacyLedger(1.0, 1.0, 1.0, 2)
    with pytest.raises(ValueError, match="n must be"):
        ledger.record_selections(-1)
    with pytest.raises(ValueError, match="per_arm"):
        ledger.record_quantile_pairs([1, 2, 3])
    with pytest.raises(ValueError, match="per_arm"):
        ledger.record_quantile_pairs([-1, 2])
    with pytest.raises(TypeError, match="per_arm"):
        ledger.record_quantile_pairs([0.5, 2.0])
    with pytest.raises(ValueError, match="epsilon_select"):
        PrivacyLedger(1.0, 1.0, None, 2).record_selections(3)
