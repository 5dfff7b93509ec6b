"""The orderings the paper states for the selection scenarios (§VI, §VII, Figs. 1, 5-7).

Trials are shared between selectors, so each claim "A beats B" is tested on the *paired*
per-trial differences of squared errors: ``z = mean(diff) / se(diff)`` must be below
``-Z_MAX`` (one-sided, p < 3e-7). The sizes are chosen so that every asserted difference has
|z| of about 10 or more (the smallest over five other seeds at these sizes was 9.6, scenario 3
RNM vs RS at eps = 2; most are 15-100), so a correct implementation passes for essentially any
seed, and an ordering that does not hold fails. "At least as good" (no correlation) is the
one-sided ``z < Z_MAX``.
"""

from __future__ import annotations

import pytest

from dpbandits.scenarios.evaluation import Evaluation, evaluate
from tests.stats import Z_MAX

EPS = [0.15, 1.0]
SELECTORS = ["uniform", "rnm", "rs", "gem", "mgem"]


def assert_beats(ev: Evaluation, a: str, b: str) -> None:
    """``a`` has a significantly smaller MSE than ``b`` at every eps of ``ev``."""
    z = ev.z(a, b)
    for i, eps in enumerate(ev.epsilons):
        assert z[i] < -Z_MAX, (
            f"scenario {ev.scenario}, eps={eps:g}: expected {a} < {b}, got MSE "
            f"{ev.mse[a][i]:.4g} vs {ev.mse[b][i]:.4g} (paired z = {z[i]:.2f})"
        )


def assert_not_worse(ev: Evaluation, a: str, b: str) -> None:
    """``a`` is not significantly worse than ``b`` (one-sided) at every eps."""
    z = ev.z(a, b)
    for i, eps in enumerate(ev.epsilons):
        assert z[i] < Z_MAX, (
            f"scenario {ev.scenario}, eps={eps:g}: {a} significantly worse than {b}: "
            f"{ev.mse[a][i]:.4g} vs {ev.mse[b][i]:.4g} (paired z = {z[i]:.2f})"
        )


@pytest.mark.parametrize("scenario", ["1", "4"])
def test_positive_correlation_mgem_and_rs_beat_rnm_gem_worst(scenario):
    ev = evaluate(scenario, SELECTORS, EPS, n_trials=4000, seed=101)
    assert ev.spearman > 0
    assert_beats(ev, "mgem", "rnm")
    assert_beats(ev, "rs", "rnm")
    # GEM is the worst, and worse than random selection, at small eps.
    for other in ("uniform", "rnm", "rs", "mgem"):
        assert_beats(ev, other, "gem")


@pytest.mark.parametrize("scenario", ["2", "5"])
def test_negative_correlation_is_the_reverse(scenario):
    ev = evaluate(scenario, SELECTORS, EPS, n_trials=4000, seed=202)
    assert ev.spearman < 0
    assert_beats(ev, "gem", "rnm")
    # mGEM and RS lose to RNM, and even to random selection at small eps (the first eps).
    for worse in ("mgem", "rs"):
        assert_beats(ev, "rnm", worse)
        z = ev.z("uniform", worse)[0]
        assert z < -Z_MAX, f"scenario {ev.scenario}, eps={EPS[0]}: uniform vs {worse}: z = {z:.2f}"


@pytest.mark.parametrize(("t", "best", "worst"), [(5.0, "mgem", "gem"), (-5.0, "gem", "mgem")])
def test_increasing_correlation_extremes(t, best, worst):
    """Fig. 6 (§VI-d): mGEM benefits from strong positive correlation, GEM from negative.

    The family's parameters are random, so the size of each gap depends on the seed. Robust
    across parameter draws: the right GEM variant beats the wrong one by a wide margin, and
    the wrong one loses to RNM. (mGEM vs RNM at t = 5 is in the paper's direction for every
    seed we tried, but at 4000 trials not always by 5 standard errors; see docs/scenarios.md.)
    """
    ev = evaluate(f"corr:t={t}", ["rnm", "gem", "mgem"], EPS, n_trials=4000, seed=404)
    assert_beats(ev, best, worst)
    assert_beats(ev, "rnm", worst)


def test_no_correlation_rnm_is_at_least_as_good():
    """Scenario 3 (§VI-b): RS, GEM and mGEM all perform (slightly) worse than RNM."""
    ev = evaluate(3, ["rnm", "rs", "gem", "mgem"], [0.15, 2.0], n_trials=10_000, seed=303)
    assert abs(ev.spearman) < 1e-12
    for other in ("rs", "gem", "mgem"):
        assert_not_worse(ev, "rnm", other)
    # At eps = 2 the gap to RS and mGEM is large enough to be significant.
    z = ev.z("rnm", "rs")[1], ev.z("rnm", "mgem")[1]
    assert max(z) < -Z_MAX, f"rnm vs rs, mgem at eps=2: paired z = {z}"


def test_combined_gem_beats_gem_and_mgem_on_polarised_users():
    """Scenario 7 (§VII, Fig. 7a): adaptive choice wins when half the users correlate each way."""
    ev = evaluate(7, ["gem", "mgem", "combined_gem"], [2.0, 8.0], n_trials=2000, seed=707)
    assert_beats(ev, "combined_gem", "gem")
    assert_beats(ev, "combined_gem", "mgem")
