"""Regression tests from an adversarial probe of the Python API (issue 13).

Each case is an input that once ended in a raw numpy/Python error, a hang, a silent acceptance
of a wrong type or a NaN; now it must end in a ``TypeError``/``ValueError`` (or the documented
``RuntimeError`` of an agent used before ``reset``) whose message names the parameter, or in a
correct finite result.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import agents
from dpbandits import recommendation as rec
from dpbandits import scenarios, selectors, topk
from dpbandits.audit import selector as audit
from dpbandits.continual import BinaryMechanism, HybridMechanism, PrivateMeans, hybrid_noise
from dpbandits.core import checks
from dpbandits.experiments import engine
from dpbandits.experiments.chunk import chunk_seeds
from dpbandits.quantiles import WindowedSensitivity, dp_quantile
from dpbandits.scenarios import evaluation
from dpbandits.scenarios import two_candidate as tc
from dpbandits.testing import check_selector

HUGE = 2**40  # sizes no machine holds: refused up-front, never a MemoryError or a hang
TWO_ARMED = {"id": "dpbandits/TwoArmedShift-v0", "t_shift": 10, "horizon": 20}


def _played(kind: str, **params: Any) -> Any:
    """An agent reset for 2 runs of 3 arms that has played its initial round."""
    agent = agents.make(kind, **params)
    agent.reset(2, 3, horizon=50, rng=0)
    for _ in range(3):
        agent.update(agent.act(), np.full(2, 0.5))
    return agent


def _hybrid_overflow() -> None:
    h = HybridMechanism(1.0, size=2, rng=0)
    h.add(1e300)
    h.add(1e300)


# (id, call, exception, message pattern); one case per line or two, kept compact
# fmt: off
REFUSED: list[tuple[str, Callable[[], Any], type[Exception], str]] = [
    # ragged input: numpy's "inhomogeneous shape" message named neither argument nor rule
    ("selector-ragged", lambda: selectors.make("rnm").select([[1, 2], [3]]), TypeError,
     "q must be an array of real numbers; got a ragged"),
    ("topk-ragged", lambda: topk.make("peeling").select([[1.0, 2.0], [3.0]], 1), TypeError,
     "q must be .* ragged"),
    ("dp_quantile-ragged", lambda: dp_quantile([[0.1, 0.2], [0.3]], 0.5, 1.0, 0, 1), TypeError,
     "x must be .* ragged"),
    # True is not a seed (the input policy refuses bool numbers)
    ("selector-rng-bool", lambda: selectors.make("rnm").select([1.0, 2.0], rng=True), TypeError,
     "rng must be"),
    ("topk-rng-bool", lambda: topk.make("gumbel").select(np.arange(6.0), 2, rng=True), TypeError,
     "rng must be"),
    ("agent-rng-bool", lambda: agents.make("ucb").reset(2, 2, horizon=10, rng=True), TypeError,
     "rng must be"),
    ("audit-rng-bool", lambda: audit.audit("rnm", draws=100, rng=True), TypeError, "rng must be"),
    ("quantile-rng-str", lambda: dp_quantile([0.5], 0.5, 1.0, 0, 1, rng="x"), TypeError,
     "rng must be"),
    ("hybrid_noise-rng-bool", lambda: hybrid_noise(5, 1.0, rng=True), TypeError, "rng must be"),
    # continual release streams: items are real numbers of the streams' shape
    ("hybrid-x-str", lambda: HybridMechanism(1.0, size=2, rng=0).add("1"), TypeError,
     "x must be an array of real numbers"),
    ("hybrid-x-bool", lambda: HybridMechanism(1.0, size=2, rng=0).add(True), TypeError,
     "x must be an array of real numbers"),
    ("binary-x-complex", lambda: BinaryMechanism(4, 1.0, size=2, rng=0).add(1 + 0j), TypeError,
     "x must be an array of real numbers"),
    ("hybrid-x-shape", lambda: HybridMechanism(1.0, size=2, rng=0).add([1.0, 2.0, 3.0]),
     ValueError, r"x must be broadcastable to the streams' size \(2,\)"),
    ("hybrid-mask-shape",
     lambda: HybridMechanism(1.0, size=2, rng=0).add(1.0, mask=[True, False, True]),
     ValueError, "mask must be broadcastable"),
    ("hybrid-prefix-overflow", _hybrid_overflow, ValueError, "prefix sum beyond"),
    ("private-means-clip-str", lambda: PrivateMeans(2, 2, 1.0, clip_means="no"), TypeError,
     "clip_means must be True or False"),
    ("private-means-reward-str",
     lambda: PrivateMeans(2, 3, 1.0, rng=0).update([0, 1], ["0.5", 0.5]), TypeError,
     "rewards must be real numbers"),
    ("private-means-reward-bool",
     lambda: PrivateMeans(2, 3, 1.0, rng=0).update([0, 1], [True, False]), TypeError,
     "rewards must be real numbers"),
    ("private-means-reward-complex",
     lambda: PrivateMeans(2, 3, 1.0, rng=0).update([0, 1], [1 + 0j, 0.5]), TypeError,
     "rewards must be real numbers"),
    ("windowed-reward-bool",
     lambda: WindowedSensitivity(2, 3, 1.0, rng=0).update([0, 1], [True, False]), TypeError,
     "rewards must be real numbers"),
    # sizes that cannot fit: a clear refusal before allocating
    ("private-means-arms", lambda: PrivateMeans(2, HUGE, 1.0), ValueError, "n_runs \\* n_arms"),
    ("private-means-block", lambda: PrivateMeans(2, 2, 1.0, block=HUGE), ValueError,
     "block .* memory"),
    ("windowed-window", lambda: WindowedSensitivity(2, 2, 1.0, window=HUGE), ValueError,
     "window .* memory"),
    ("agent-runs", lambda: agents.make("ucb").reset(HUGE, 2, horizon=10), ValueError,
     "n_runs \\* n_arms .* memory"),
    ("agent-arms", lambda: agents.make("exp3").reset(2, HUGE, horizon=10), ValueError,
     "n_runs \\* n_arms .* memory"),
    ("sw-ucb-window", lambda: agents.make("sw_ucb", window=HUGE).reset(3, 2, horizon=10),
     ValueError, "window \\* n_runs .* memory"),
    ("private-agent-window", lambda: agents.make("private", window=HUGE).reset(3, 2, horizon=10),
     ValueError, "window .* memory"),
    ("scenario-candidates",
     lambda: scenarios.get(4).__class__(n_candidates=10**9).sample(2), ValueError,
     "n_trials \\* n_candidates .* memory"),
    # agents: update() checks what it is fed, act() needs reset()
    ("agent-act-before-reset", lambda: agents.make("ucb").act(), RuntimeError,
     "call reset.* before act"),
    ("agent-action-range", lambda: _played("ucb").update([0, 3], [0.5, 0.5]), ValueError,
     r"actions must be in \[0, 2\]"),
    ("agent-action-negative", lambda: _played("thompson").update([-1, 0], [0.5, 0.5]),
     ValueError, r"actions must be in \[0, 2\]"),
    ("agent-action-float", lambda: _played("sw_ucb").update([0.0, 1.0], [0.5, 0.5]), TypeError,
     "actions must be integers"),
    ("agent-action-bool", lambda: _played("exp3").update([True, False], [0.5, 0.5]), TypeError,
     "actions must be integers"),
    ("agent-action-shape", lambda: _played("d_ucb").update([0], [0.5]), ValueError,
     r"shape \(2,\)"),
    ("agent-reward-nan", lambda: _played("ucb").update([0, 1], [math.nan, 0.5]), ValueError,
     "rewards must be finite"),
    ("agent-reward-inf", lambda: _played("sw_ucb").update([0, 1], [math.inf, 0.5]), ValueError,
     "rewards must be finite"),
    ("agent-reward-str", lambda: _played("exp3").update([0, 1], ["0.5", 0.5]), TypeError,
     "rewards must be real numbers"),
    ("agent-reward-complex", lambda: _played("private").update([0, 1], [1 + 0j, 0.5]),
     TypeError, "rewards must be real numbers"),
    ("agent-reward-2d", lambda: _played("d_ucb").update([[0, 1]], [[0.5, 0.5]]), ValueError,
     r"rewards must have shape \(2,\)"),
    ("exp3-gamma-str", lambda: agents.make("exp3", gamma="bad").reset(2, 2, horizon=10),
     TypeError, "gamma must be a real number"),
    ("d-ucb-gamma-complex", lambda: agents.make("d_ucb", gamma=1j).reset(2, 2, horizon=10),
     TypeError, "gamma must be a real number"),
    ("private-agent-lo-str", lambda: agents.make("private", lo="bad").reset(2, 2, horizon=10),
    TypeError,
     "lo must be a real number"),
    ("private-agent-levels-scalar", lambda: agents.make("private", levels=0.5).reset(2, 2,
    horizon=10), ValueError,
     "levels must be a pair"),
    ("private-agent-means-number", lambda: agents.make("private", means=3).reset(2, 2, horizon=10),
    TypeError,
     "means must be None or a factory"),
    ("private-agent-clip-str", lambda: agents.make("private", clip_means="no").reset(2, 2,
    horizon=10), TypeError,
     "clip_means must be True or False"),
    # local-DP recommendation helpers
    ("softmax-nan", lambda: rec.softmax_pmf([math.nan, 1.0], 1.0), ValueError, "s must be finite"),
    ("softmax-complex", lambda: rec.softmax_pmf([1 + 0j, 1.0], 1.0), TypeError,
     "s must be an array of real numbers"),
    ("rr-str", lambda: rec.rr_pmf(["a", "b"], 1.0), TypeError,
     "s must be an array of real numbers"),
    ("scale-ragged", lambda: rec.scale_scores([[1.0], [1.0, 2.0]]), TypeError,
     "s must be .* ragged"),
    ("clip-bound-negative", lambda: rec.clip_scores([0.1], [0.1], -1), ValueError,
     "bound .* must be finite and > 0"),
    ("clip-bound-nan", lambda: rec.clip_scores([0.1], [0.1], math.nan), ValueError,
     "bound .* must be finite and > 0"),
    ("clip-shapes", lambda: rec.clip_scores([0.1, 0.2], [0.1, 0.2, 0.3], 0.5), ValueError,
     "do not broadcast"),
    ("cutoff-int-mask", lambda: rec.cutoff_mask([0.1, 0.2], 0.5, mask=[1, 0]), TypeError,
     "mask must be a boolean array"),
    ("select-among-int-mask",
     lambda: rec.select_among(selectors.make("rnm"), [[0.1, 0.9]], mask=[[1, 0]], rng=0), TypeError,
     "mask must be a boolean array"),
    ("select-among-name", lambda: rec.select_among("rnm", [[0.1, 0.9]], rng=0), TypeError,
     "selector must be a selector object"),
    # two-candidate closed forms
    ("two-cand-d-str", lambda: tc.rnm_error_probability(0.0, 1.0, "1", 1.0, 1.0), TypeError,
     "d1 must be an array of real numbers"),
    ("two-cand-d-bool", lambda: tc.rnm_error_probability(0.0, 1.0, True, 1.0, 1.0), TypeError,
     "d1 must be an array of real numbers"),
    ("two-cand-q-str", lambda: tc.rnm_error_probability("0", 1.0, 1.0, 1.0, 1.0), TypeError,
     "q1 must be a real number"),
    ("two-cand-q-complex", lambda: tc.hg_closed_map("rnm", "gem", 1.0, 1.0, 1.0, q1=1j),
     TypeError, "q1 must be a real number"),
    # audit
    ("audit-alpha-str", lambda: audit.audit("rnm", draws=100, alpha="0.1"), TypeError,
     "alpha must be a real number"),
    ("audit-chunk-zero",  # was an endless loop
     lambda: audit.estimate_privacy_loss("rnm", "swap", draws=100, chunk=0, rng=0), ValueError,
     "chunk must be >= 1"),
    ("clopper-pearson-n0", lambda: audit.clopper_pearson([0], 0, 0.05), ValueError,
     "n must be >= 1"),
    ("clopper-pearson-over", lambda: audit.clopper_pearson([5], 3, 0.05), ValueError,
     r"successes must be integers in \[0, n\]"),
    ("clopper-pearson-alpha", lambda: audit.clopper_pearson([1], 3, math.nan), ValueError,
     "alpha must be finite"),
    # the conformance kit's own arguments
    ("kit-audit-str", lambda: check_selector("rnm", audit="no"), TypeError,
     "audit must be True or False"),
    ("kit-raise-str", lambda: check_selector("rnm", audit=False, raise_on_failure="yes"),
     TypeError, "raise_on_failure must be True or False"),
    ("kit-rng-bool", lambda: check_selector("rnm", audit=False, rng=True), TypeError,
     "rng must be"),
    ("kit-class", lambda: check_selector(selectors.RNM, audit=False), TypeError,
     "the class RNM; pass an instance"),
    # evaluation, engine, environments
    ("evaluate-eps-bool", lambda: evaluation.evaluate(1, "rnm", [True], n_trials=5), TypeError,
     "epsilons must be real numbers"),
    ("evaluate-eps-str", lambda: evaluation.evaluate(1, "rnm", ["1"], n_trials=5), TypeError,
     "epsilons must be real numbers"),
    ("evaluate-keep-str",
     lambda: evaluation.evaluate(1, "rnm", [1.0], n_trials=5, keep_errors="no"), TypeError,
     "keep_errors must be True or False"),
    ("run-agent-class",
     lambda: engine.run(TWO_ARMED, {"u": agents.UCB}, 2, progress=False, n_jobs=1), TypeError,
     "is the class UCB; pass an instance"),
    ("run-unknown-env", lambda: engine.run("nope", {"u": "ucb"}, 2, progress=False, n_jobs=1),
     ValueError, "env: Environment `nope` doesn't exist"),
    ("drifting-vectorized-int",
     lambda: gym.make("dpbandits/DriftingBandit-v0", vectorized=0), TypeError,
     "vectorized must be True or False"),
    ("drifting-sds-complex", lambda: gym.make("dpbandits/DriftingBandit-v0", sds=1 + 0j),
     TypeError, "sds must be an array of real numbers"),
    ("drifting-sds-str", lambda: gym.make("dpbandits/DriftingBandit-v0", sds="bad"), TypeError,
     "sds must be an array of real numbers"),
    ("env-seed-bool", lambda: gym.make("dpbandits/KArmedBernoulli-v0").reset(seed=True),
     TypeError, "seed must be an integer, got bool"),
    ("env-seed-negative", lambda: gym.make("dpbandits/TwoArmedShift-v0").reset(seed=-1),
     ValueError, "seed must be >= 0"),
    ("chunk-seeds-bool", lambda: chunk_seeds(True, 0, "a"), TypeError, "seed must be an integer"),
    ("chunk-seeds-label", lambda: chunk_seeds(0, 0, 3), TypeError, "label must be a str"),
    ("scenario-seed-bool", lambda: scenarios.get(4).sample(5, seed=True), TypeError,
     "seed must be"),
    ("spearman-complex", lambda: selectors.spearman([1j, 2, 3], [1, 2, 3]), TypeError,
     "q must be an array of real numbers"),
    ("function-selector-flag",
     lambda: selectors.FunctionSelector(lambda q, d, e, r: 0, name="f", private="no"),
     TypeError, "private must be True or False"),
]
# fmt: on


@pytest.mark.parametrize(
    "call, exc, message", [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED]
)
def test_bad_input_is_refused_clearly(call, exc, message):
    with pytest.raises(exc, match=message) as info:
        call()
    assert "\n" not in str(info.value)  # one line


def test_checks_helpers():
    gen = np.random.default_rng(3)
    assert checks.generator(gen) is gen  # a Generator passes through: same stream, no copy
    assert checks.generator(2**70).integers(10) == np.random.default_rng(2**70).integers(10)
    assert checks.flag(np.bool_(True), "f") is True
    with pytest.raises(TypeError, match="f must be True or False, got int 1"):
        checks.flag(1, "f")
    checks.memory(1000, "small")  # fits
    with pytest.raises(ValueError, match="huge would need 8 TiB of memory"):
        checks.memory(HUGE, "huge")
    r = checks.step_rewards(np.array([1e308, 1e308]), 2)  # sum overflows, entries are finite
    assert r.tolist() == [1e308, 1e308]


def test_overflowing_score_ranges_give_finite_results():
    # max - min overflows float64: Eq. 3 still maps the scores to [0, 1]
    np.testing.assert_array_equal(rec.scale_scores([1e308, -1e308, 0.0]), [1.0, 0.0, 0.5])
    # a - max(a) overflows: the softmax still puts all the mass on the maximum
    np.testing.assert_array_equal(rec.softmax_pmf([1e308, -1e308], 1.0), [1.0, 0.0])
    p = rec.softmax_pmf([0.0, 1.0], 2.0, 0.5)  # Eq. 5: exp(s eps / (2 Delta)) normalised
    np.testing.assert_allclose(p, [1 / (1 + math.e**2), math.e**2 / (1 + math.e**2)])


def test_the_stream_checks_leave_valid_streams_unchanged():
    # the lockstep and masked paths of the hybrid mechanism share the checks of add()
    a, b = HybridMechanism(1.0, size=3, rng=5), HybridMechanism(1.0, size=3, rng=5)
    for t in range(9):
        np.testing.assert_array_equal(a.add(0.5 * t), b.add(np.full(3, 0.5 * t), mask=None))


def test_figure_scenarios_takes_a_number():
    assert [s.name for s in scenarios.figure_scenarios(3)] == [scenarios.get(3).name]


def test_the_engine_still_accepts_what_act_returned():
    # the array act() returns is trusted by update() (the engine's path), a copy is checked
    agent = agents.make("ucb")
    agent.reset(2, 2, horizon=5, rng=0)
    a = agent.act()
    agent.update(a, np.array([0.1, 0.2]))
    agent.update(agent.act().tolist(), [0.3, 0.4])
    assert agent.t == 2
