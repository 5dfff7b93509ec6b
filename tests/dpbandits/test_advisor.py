"""``dpbandits.selectors.recommend``: the correlation heuristic of §V-B / App. I as advice."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpbandits import scenarios, selectors
from dpbandits.selectors import Recommendation, recommend


def test_rule_positive_negative_none() -> None:
    q = np.linspace(-1, 1, 50)
    up = recommend(q, 0.1 + q - q.min())
    assert isinstance(up, Recommendation)
    assert up.selector == "mgem" and up.pearson == pytest.approx(1.0)
    down = recommend(q, 2.2 - q)
    assert down.selector == "gem" and down.spearman == pytest.approx(-1.0)
    # a symmetric V: no monotone relation, Pearson 0 (Spearman ~0: rounding breaks the ties)
    flat = recommend(q, 0.1 + np.abs(q))
    assert flat.selector == "rnm"
    assert abs(flat.pearson) < 1e-12 and abs(flat.spearman) < 0.05
    for rec in (up, down, flat):
        assert rec.selector in selectors.available()
        assert "\n" not in rec.reason and rec.reason
        assert rec.selector in str(rec)


def test_correlations_match_references() -> None:
    rng = np.random.default_rng(0)
    q = rng.normal(size=40)
    d = np.exp(0.5 * q + rng.normal(size=40))
    rec = recommend(q, d)
    assert rec.pearson == pytest.approx(stats.pearsonr(q, d)[0], abs=1e-12)
    assert rec.spearman == pytest.approx(stats.spearmanr(q, d)[0], abs=1e-12)
    assert rec.weighted == pytest.approx(float(selectors.weighted_correlation(q, d)), abs=1e-15)
    assert rec.measure == "weighted" and rec.threshold == 0.2


def test_measure_and_threshold_choose_the_rule() -> None:
    q = np.arange(10.0)
    d = np.array([5.0, 1, 2, 3, 4, 5, 6, 7, 8, 9.5])  # mostly increasing
    rec = recommend(q, d, measure="spearman")
    assert rec.measure == "spearman"
    assert rec.selector == rec.by_measure["spearman"] == "mgem"
    # threshold above the correlation: "no correlation"
    strict = recommend(q, d, measure="spearman", threshold=0.99)
    assert strict.selector == "rnm" and "within" in strict.reason
    # |rho| == threshold counts as none (documented: |rho| <= threshold)
    assert recommend(q, d, measure="pearson", threshold=abs(rec.pearson)).selector == "rnm"


def test_undefined_correlation_recommends_rnm() -> None:
    rec = recommend([1.0, 1.0, 1.0], [0.5, 1.0, 2.0])
    assert math.isnan(rec.pearson) and math.isnan(rec.weighted)
    assert rec.selector == "rnm" and "undefined" in rec.reason


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="same length"):
        recommend([1.0, 2.0], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="at least 2"):
        recommend([1.0], [1.0])
    with pytest.raises(ValueError, match="sensitivities must be > 0.*index 1"):
        recommend([1.0, 2.0], [1.0, 0.0])
    with pytest.raises(ValueError, match="finite"):
        recommend([1.0, np.nan], [1.0, 1.0])
    with pytest.raises(ValueError, match="1-d"):
        recommend([[1.0, 2.0]], [[1.0, 2.0]])
    with pytest.raises(TypeError, match="scores must be real"):
        recommend([True, False], [1.0, 2.0])
    with pytest.raises(TypeError, match="sensitivities must be real"):
        recommend([1.0, 2.0], [1 + 1j, 2.0])
    with pytest.raises(ValueError, match="measure"):
        recommend([1.0, 2.0], [1.0, 2.0], measure="kendall")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="threshold"):
        recommend([1.0, 2.0], [1.0, 2.0], threshold=1.0)
    with pytest.raises(TypeError, match="threshold"):
        recommend([1.0, 2.0], [1.0, 2.0], threshold="0.2")  # type: ignore[arg-type]


def test_fig4_scenarios_separate_the_measures() -> None:
    """App. I (Fig. 18): on the two Fig. 4 scenarios Pearson and Spearman both say "positive"
    (both > 0); the weighted correlation is much larger on scenario 1 (where mGEM beats RNM)
    than on scenario 2 (where RNM beats mGEM at eps >= 1) and falls below the threshold there."""
    r1 = recommend(*scenarios.get("exc1").parameters())
    r2 = recommend(*scenarios.get("exc2").parameters())
    assert r1.pearson > 0 and r1.spearman > 0 and r2.pearson > 0 and r2.spearman > 0
    assert r1.selector == "mgem" and r2.selector == "rnm"
    assert r2.by_measure["pearson"] == r2.by_measure["spearman"] == "mgem"
    assert r1.weighted > 0.8 > 0.2 > r2.weighted


def test_recommendation_on_bimodal_scenarios_is_the_best_of_three() -> None:
    """Scenarios 1-3 (§VI-b): the advice has the lowest MSE at eps = 1 (paired z < -5), except
    in scenario 3, where RNM is "the safe choice": not worse than GEM or mGEM by 5 se."""
    from dpbandits.scenarios.evaluation import evaluate

    for name, expected in (("1", "mgem"), ("2", "gem"), ("3", "rnm")):
        sc = scenarios.get(name)
        q, d = sc.parameters()  # type: ignore[attr-defined]
        rec = recommend(q, d)
        assert rec.selector == expected
        ev = evaluate(sc, ["gem", "mgem", "rnm"], [1.0], 2000, seed=0)
        others = [s for s in ("gem", "mgem", "rnm") if s != expected]
        for other in others:
            diff, se = ev.difference(expected, other)
            if name == "3":
                assert diff[0] < 5 * se[0], (name, other, diff, se)
            else:
                assert diff[0] < -5 * se[0], (name, other, diff, se)
