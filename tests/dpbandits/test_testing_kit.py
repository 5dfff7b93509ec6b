"""The conformance kit dpbandits.testing.check_selector: it passes every correct built-in selector,
finds the privacy violation of the non-private ones, and catches third-party selectors that are
subtly wrong: too little noise or eps spent twice, batch-unsafe, unseeded or on the global random
state, out of range for some K, biased on ties or broken by large/negative scores, unvalidated."""

import copy
import importlib.util
import math
import pickle
import sys
from pathlib import Path

import numpy as np
import pytest

from dpbandits import selectors
from dpbandits.selectors.base import prepare_inputs, row_max
from dpbandits.testing import (
    CHECK_NAMES,
    GROUPS,
    CheckResult,
    SelectorCheckError,
    SelectorReport,
    check_selector,
)
from tests.marks import slow_except
from tests.stats import assert_counts_match_pmf

BUILTIN = [
    name
    for name in selectors.available()
    if type(selectors.make(name)).__module__.startswith("dpbandits.selectors")
]
NOT_PRIVATE = {"greedy", "rnmh"}


def failed(report: SelectorReport) -> set[str]:
    """Required checks that failed."""
    return {c.name for c in report.failures}


# ---------------------------------------------------------------------------------------------
# third-party selectors (module level, so that they pickle like a user's plug-in)
# ---------------------------------------------------------------------------------------------
class HalfNoiseRNM(selectors.Selector):
    """RNM with scale D/eps instead of 2D/eps (eq. (3)): true loss 2 eps on 'shift2'."""

    name = "half_noise_rnm"

    def select_batch(self, q, d, rng):
        scale = d.max(axis=1, keepdims=True) / self.epsilon
        return np.argmax(q + rng.exponential(size=q.shape) * scale, axis=1)


class KRRDoubleEps(selectors.Selector):
    """kRR keeping the argmax with probability e^{2eps}/(e^{2eps}+K-1): loss 2 eps on 'swap'."""

    name = "krr_double_eps"
    uses_sensitivities = False

    def select_batch(self, q, d, rng):
        r, k = q.shape
        best = np.argmax(q + 1e-9 * rng.random(q.shape), axis=1)  # random ties, scores are far
        keep = rng.random(r) < 1.0 / (1.0 + (k - 1) * math.exp(-2.0 * self.epsilon))
        other = rng.integers(0, k - 1, size=r)
        other += other >= best
        return np.where(keep, best, other)


class KRRIgnoresK(selectors.Selector):
    """kRR keeping the argmax with probability e^eps/(e^eps+1) whatever K: right for K = 2 only."""

    name = "krr_ignores_k"
    uses_sensitivities = False

    def select_batch(self, q, d, rng):
        r, k = q.shape
        is_max = q == q.max(axis=1, keepdims=True)
        best = np.argmax(is_max * rng.random(q.shape), axis=1)  # uniform among the maximisers
        keep = rng.random(r) < 1.0 / (1.0 + math.exp(-self.epsilon))
        other = rng.integers(0, k - 1, size=r)
        other += other >= best
        return np.where(keep, best, other)


class UnseededEM(selectors.Selector):
    """The exponential mechanism drawing from a fresh unseeded generator: not reproducible."""

    name = "unseeded_em"

    def select_batch(self, q, d, rng):
        own = np.random.default_rng()
        return selectors.ExponentialMechanism(self.epsilon).select(q, d, own)


class FixedSeedEM(selectors.Selector):
    """The exponential mechanism with a fixed internal seed: every seed gives the same draws."""

    name = "fixed_seed_em"

    def select_batch(self, q, d, rng):
        return selectors.ExponentialMechanism(self.epsilon).select(q, d, 12345)


class CopiesGeneratorEM(selectors.Selector):
    """Draws from a copy of the generator: an agent would repeat the same noise every step."""

    name = "copies_generator_em"

    def select_batch(self, q, d, rng):
        return selectors.ExponentialMechanism(self.epsilon).select(q, d, copy.deepcopy(rng))


class SharedNoiseRNM(selectors.Selector):
    """One noise vector for the whole batch: the rows are not independent replications."""

    name = "shared_noise_rnm"

    def select_batch(self, q, d, rng):
        z = rng.exponential(size=q.shape[1]) * 2.0 * d.max() / self.epsilon
        return np.argmax(q + z, axis=1)


class PairedNoiseRNM(selectors.Selector):
    """Rows 2i and 2i+1 share their noise: each row's law is right, the pairs are dependent."""

    name = "paired_noise_rnm"

    def select_batch(self, q, d, rng):
        r, k = q.shape
        z = np.repeat(rng.exponential(size=((r + 1) // 2, k)), 2, axis=0)[:r]
        return np.argmax(q + z * 2.0 * d.max(axis=1, keepdims=True) / self.epsilon, axis=1)


class BatchMaxRNM(selectors.Selector):
    """RNM with D = max d over the whole batch instead of per row: rows influence each other."""

    name = "batch_max_rnm"

    def select_batch(self, q, d, rng):
        scale = 2.0 * d.max() / self.epsilon
        return np.argmax(q + rng.exponential(size=q.shape) * scale, axis=1)


class OneBasedRNM(selectors.Selector):
    """Returns 1-based indices (1..K): index K is out of range."""

    name = "one_based_rnm"

    def select_batch(self, q, d, rng):
        return selectors.RNM(self.epsilon).select(q, d, rng) + 1


class InPlaceRNM(selectors.Selector):
    """Adds its noise to the caller's scores in place."""

    name = "in_place_rnm"

    def select_batch(self, q, d, rng):
        q += rng.exponential(size=q.shape) * 2.0 * d.max(axis=1, keepdims=True) / self.epsilon
        return np.argmax(q, axis=1)

    def select(self, q, d=None, rng=None):
        # skips the base class's copy so that the caller's array is the one modified
        if isinstance(q, np.ndarray) and q.ndim == 2 and q.flags.writeable:
            _, d2, _ = prepare_inputs(q, d)
            return self.select_batch(q, d2, np.random.default_rng(rng))
        return super().select(q, d, rng)


class DuckEM:
    """A duck-typed selector (no base class): the exponential mechanism, validated by hand."""

    name = "duck_em"
    private = True
    guarantee = "eps-DP"

    def __init__(self, epsilon=1.0, validate=True):
        self.epsilon = epsilon
        self.validate = validate

    def select(self, q, d=None, rng=None):
        gen = np.random.default_rng(rng)
        if self.validate:
            q2, d2, shape = prepare_inputs(q, d)
        else:  # no validation at all: NaN, inf, d <= 0 go straight into the mechanism
            q = np.asarray(q, dtype=float)
            shape = q.shape[:-1]
            q2 = q.reshape(-1, q.shape[-1])
            d2 = np.broadcast_to(1.0 if d is None else np.asarray(d, dtype=float), q.shape)
            d2 = d2.reshape(q2.shape)
        scale = 2.0 * d2.max(axis=1, keepdims=True) / self.epsilon
        out = np.argmax(q2 / scale + gen.gumbel(size=q2.shape), axis=1)
        return out.reshape(shape)


class DuckFloatOutput(DuckEM):
    """Returns float indices."""

    name = "duck_float"

    def select(self, q, d=None, rng=None):
        return super().select(q, d, rng).astype(float)


def gumbel_max(q, d, epsilon, rng):
    """The exponential mechanism as a plain function for from_function."""
    scale = 2.0 * d.max(axis=1, keepdims=True) / epsilon
    return np.argmax(q / scale + rng.gumbel(size=q.shape), axis=1)


# Subtle mistakes of a selector author, one class each; all subclass the public hook only
# (Selector.select_batch), except where the mistake needs the duck-typed form.
def inverse_cdf(log_w, rng):
    """One draw per row from the weights exp(log_w) (shifted by the row maximum: no overflow)."""
    cdf = np.cumsum(np.exp(log_w - row_max(log_w)), axis=1)
    u = rng.random(log_w.shape[0])[:, None] * cdf[:, -1:]
    return (cdf <= u).sum(axis=1)


class QuarterNoiseRNM(selectors.Selector):
    """(a) RNM with noise scale D/(2 eps) instead of 2D/eps (eq. (3)): loss 4 eps on 'shift2'."""

    name = "quarter_noise_rnm"

    def select_batch(self, q, d, rng):
        scale = row_max(d) / (2.0 * self.epsilon)
        return np.argmax(q + rng.exponential(size=q.shape) * scale, axis=1)


class BestOfTwoEM(selectors.Selector):
    """(a) eps spent twice: two exponential-mechanism draws at eps, the better one kept.
    On 'shift2' (q = (0, 2) -> (1, 1)) candidate 0 has probability 0.269^2 vs 1/2: loss 1.93."""

    name = "best_of_two_em"

    def select_batch(self, q, d, rng):
        log_w = self.epsilon * q / (2.0 * row_max(d))
        a, b = inverse_cdf(log_w, rng), inverse_cdf(log_w, rng)
        rows = np.arange(q.shape[0])
        return np.where(q[rows, a] >= q[rows, b], a, b)


class AxisSlipEM(selectors.Selector):
    """(b) scores centred by the maximum over the batch (axis=0) instead of the row (axis=1)."""

    name = "axis_slip_em"

    def select_batch(self, q, d, rng):
        return inverse_cdf(self.epsilon * (q - q.max(axis=0)) / (2.0 * row_max(d)), rng)


class SingleRowShortcutEM(selectors.Selector):
    """(b) a shortcut for one row that forgot the 2 of eps/(2D): single calls spend 2 eps."""

    name = "single_row_shortcut_em"

    def select_batch(self, q, d, rng):
        two = 1.0 if q.shape[0] == 1 else 2.0
        return inverse_cdf(self.epsilon * q / (two * row_max(d)), rng)


class GlobalStateRNM(selectors.Selector):
    """(c) noise from numpy's global random state instead of rng."""

    name = "global_state_rnm"

    def select_batch(self, q, d, rng):
        z = np.random.exponential(size=q.shape)  # noqa: NPY002 (the mistake under test)
        return np.argmax(q + z * 2.0 * row_max(d) / self.epsilon, axis=1)


class Uint8IndicesRNM(selectors.Selector):
    """(d) indices stored as uint8 to save memory: index 299 wraps to 43 at K = 300."""

    name = "uint8_rnm"

    def select_batch(self, q, d, rng):
        z = rng.exponential(size=q.shape) * 2.0 * row_max(d) / self.epsilon
        return np.argmax(q + z, axis=1).astype(np.uint8)


class TwoCandidateRNM(selectors.Selector):
    """(d) written for the two-armed bandit: compares candidates 0 and 1 only, whatever K."""

    name = "two_candidate_rnm"

    def select_batch(self, q, d, rng):
        z = rng.exponential(size=q.shape) * 2.0 * row_max(d) / self.epsilon
        return (q[:, 1] + z[:, 1] > q[:, 0] + z[:, 0]).astype(np.int64)


class DuckKRRNoK1:
    """(d) a duck-typed kRR whose draw among the K-1 others breaks at K = 1."""

    name = "duck_krr"
    private = True
    guarantee = "eps-DP"

    def __init__(self, epsilon=1.0):
        self.epsilon = epsilon

    def select(self, q, d=None, rng=None):
        q2, _, shape = prepare_inputs(q, d)
        gen = np.random.default_rng(rng)
        r, k = q2.shape
        best = selectors.Greedy().select(q2, None, gen)
        keep = gen.random(r) < 1.0 / (1.0 + (k - 1) * math.exp(-self.epsilon))
        other = gen.integers(0, k - 1, size=r)  # K = 1: integers(0, 0) raises
        other += other >= best
        return np.where(keep, best, other).reshape(shape)


class FirstMaxKRR(selectors.Selector):
    """(e) kRR whose 'argmax' is np.argmax: ties always go to the first maximiser."""

    name = "first_max_krr"
    uses_sensitivities = False

    def select_batch(self, q, d, rng):
        r, k = q.shape
        best = np.argmax(q, axis=1)
        keep = rng.random(r) < 1.0 / (1.0 + (k - 1) * math.exp(-self.epsilon))
        other = rng.integers(0, k - 1, size=r)
        other += other >= best
        return np.where(keep, best, other)


class NaiveSoftmaxEM(selectors.Selector):
    """(e) the exponential mechanism with weights exp(eps q / 2D) not shifted by the row maximum
    (warnings silenced): large scores overflow, negative ones underflow, and index 0 wins."""

    name = "naive_softmax_em"

    def select_batch(self, q, d, rng):
        with np.errstate(all="ignore"):
            w = np.exp(self.epsilon * q / (2.0 * row_max(d)))
            p = w / w.sum(axis=1, keepdims=True)
        u = rng.random(q.shape[0])[:, None]
        return np.minimum((np.cumsum(p, axis=1) <= u).sum(axis=1), q.shape[1] - 1)


class UncheckedEpsilonEM(selectors.Selector):
    """(f) an __init__ that stores epsilon without validating it (no super().__init__)."""

    name = "unchecked_epsilon_em"

    def __init__(self, epsilon=1.0):
        self.epsilon = epsilon

    def select_batch(self, q, d, rng):
        return inverse_cdf(self.epsilon * q / (2.0 * row_max(d)), rng)


class SkipsValidationEM(selectors.Selector):
    """(f) skips the validation for 2-D float arrays (the agents' hot path): NaN gets through."""

    name = "skips_validation_em"

    def select(self, q, d=None, rng=None):
        if isinstance(q, np.ndarray) and q.ndim == 2 and q.dtype == np.float64:
            d2 = np.broadcast_to(1.0 if d is None else np.asarray(d, dtype=float), q.shape)
            return self.select_batch(q, d2, np.random.default_rng(rng))
        return super().select(q, d, rng)

    def select_batch(self, q, d, rng):
        return inverse_cdf(self.epsilon * q / (2.0 * row_max(d)), rng)


# ---------------------------------------------------------------------------------------------
# built-ins
# ---------------------------------------------------------------------------------------------
def test_builtin_list_is_complete():
    assert {"rnm", "rnmh", "greedy", "krr", "gem", "mgem", "combined_gem", "rs"} <= set(BUILTIN)


@pytest.mark.parametrize("name", slow_except(BUILTIN, fast=["rnm", "rnmh"]))
def test_every_builtin_selector_passes(name):
    report = check_selector(name, raise_on_failure=False)
    assert set(report.names()) == set(CHECK_NAMES)
    assert failed(report) == set(), str(report)
    privacy = report["privacy"]
    if name in NOT_PRIVATE:
        # the audit finds the violation, reports it, and it does not count as a failure
        assert not privacy.passed and not privacy.required, str(privacy)
        assert report.privacy_passed is False and privacy in report.expected_failures
        assert "private = False" in privacy.message
    else:
        assert privacy.passed and privacy.required, str(privacy)
        assert len(report.audit) >= 8 and all(r.passed for r in report.audit)


@pytest.mark.parametrize("name", ["rnm", "greedy", "uniform"])
def test_builtins_reject_complex_bool_and_str(name):
    check_selector(name, skip=[g for g in GROUPS if g != "validation"])


def test_rnmh_fails_on_the_sec4a_pair_without_raising():
    report = check_selector("rnmh", skip=["validation"])  # no raise: private = False
    assert report.passed
    by_pair = {r.pair: r for r in report.audit}
    assert not by_pair["sec4a"].passed and by_pair["sec4a"].loss_lower > 5
    assert "sec4a" in report["privacy"].message


def test_epsilon_argument_checks_the_with_epsilon_copy():
    report = check_selector("krr", epsilon=0.25, raise_on_failure=False, skip=["validation"])
    assert report.epsilon == 0.25 and report.passed
    assert {r.epsilon for r in report.audit} == {0.25}
    with pytest.raises(ValueError, match="no with_epsilon"):
        check_selector(DuckEM(1.0), epsilon=2.0)
    with pytest.raises(ValueError, match="epsilon must be"):
        check_selector("rnm", epsilon=-1.0)


# ---------------------------------------------------------------------------------------------
# third-party selectors, right and wrong
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "sel",
    [
        selectors.from_function(gumbel_max, name="gumbel_max", epsilon=0.5),
        DuckEM(epsilon=2.0),
    ],
    ids=["from_function", "duck_typed"],
)
def test_correct_third_party_selectors_pass(sel):
    report = check_selector(sel, raise_on_failure=False)
    assert failed(report) == set(), str(report)
    assert report.privacy_passed


@pytest.mark.parametrize(
    "cls,pair",
    [
        (HalfNoiseRNM, "shift2"),
        (KRRDoubleEps, "swap"),
        (KRRIgnoresK, "one_up"),
        (QuarterNoiseRNM, "shift2"),
        (BestOfTwoEM, "shift2"),
    ],
)
def test_subtly_wrong_selector_fails_only_the_privacy_audit(cls, pair):
    sel = cls(epsilon=1.0)
    with pytest.raises(SelectorCheckError) as info:
        check_selector(sel)
    report = info.value.report
    assert isinstance(info.value, AssertionError)
    assert failed(report) == {"privacy"}, str(report)
    assert "privacy" in str(info.value)
    worst = {r.pair: r for r in report.audit}[pair]
    # the true loss is 2 eps on this pair (1 + log 9 for KRRIgnoresK, 4 eps for QuarterNoiseRNM,
    # log(0.5 / 0.269^2) = 1.93 for BestOfTwoEM): the lower bound sits ~5.5 standard errors
    # (~0.07) below it, far above 1.5
    assert worst.loss_lower > 1.5, str(worst)
    assert "too little noise" in report["privacy"].message


def test_half_noise_rnm_is_caught_at_every_seed_and_other_eps():
    # the power does not hinge on a seed: the lower bound sits near 1.9 eps every time
    for seed in range(5):
        report = check_selector(HalfNoiseRNM(0.5), rng=seed, raise_on_failure=False,
                                skip=[g for g in GROUPS if g != "privacy"])  # fmt: skip
        assert report.privacy_passed is False
        assert max(r.loss_lower for r in report.audit) > 1.5 * 0.5


@pytest.mark.parametrize(
    "sel,expected",
    [
        (UnseededEM(), {"seeding.same_seed"}),
        (FixedSeedEM(), {"seeding.different_seeds", "seeding.generator_advances"}),
        (CopiesGeneratorEM(), {"seeding.generator_advances"}),
        (SharedNoiseRNM(), {"batch.identical_rows"}),
        (PairedNoiseRNM(), {"batch.rows_independent"}),
        (BatchMaxRNM(), {"batch.rows_separate"}),
        (OneBasedRNM(), {"shapes.output"}),
        (InPlaceRNM(), {"shapes.inputs"}),
        (DuckFloatOutput(), {"shapes.output"}),
    ],
    ids=lambda x: type(x).__name__ if not isinstance(x, set) else "",
)
def test_broken_selector_is_caught(sel, expected):
    report = check_selector(sel, raise_on_failure=False, skip=["privacy"])
    assert not report.passed
    assert expected <= failed(report), str(report)
    for name in expected:
        assert report[name].message


@pytest.mark.parametrize(
    "sel,expected,exact,fragment",
    [
        pytest.param(
            AxisSlipEM(), {"batch.rows_separate"}, True, "depend on that row only", id="AxisSlipEM"
        ),
        pytest.param(
            SingleRowShortcutEM(),
            {"batch.identical_rows"},
            True,
            "single calls",
            id="SingleRowShortcutEM",
        ),
        pytest.param(
            GlobalStateRNM(),
            {"seeding.global_state", "seeding.same_seed"},
            False,
            "np.random",
            id="GlobalStateRNM",
        ),
        pytest.param(
            Uint8IndicesRNM(),
            {"shapes.select_batch"},
            True,
            "uint8, which cannot hold index 299",
            id="Uint8IndicesRNM",
        ),
        pytest.param(
            TwoCandidateRNM(),
            {"symmetry.permutation", "symmetry.ties"},
            True,
            "reverse order",
            id="TwoCandidateRNM",
        ),
        pytest.param(
            DuckKRRNoK1(),
            {"shapes.output"},
            True,
            "K = 1: select raised ValueError",
            id="DuckKRRNoK1",
        ),
        pytest.param(
            FirstMaxKRR(),
            {"symmetry.permutation", "symmetry.ties"},
            True,
            "uniformly at random",
            id="FirstMaxKRR",
        ),
        pytest.param(
            NaiveSoftmaxEM(),
            {"symmetry.shift", "symmetry.ties"},
            True,
            "changes the law",
            id="NaiveSoftmaxEM",
        ),
        pytest.param(
            UncheckedEpsilonEM(),
            {"validation.epsilon", "epsilon.with_epsilon"},
            True,
            "-1.0",
            id="UncheckedEpsilonEM",
        ),
        pytest.param(
            SkipsValidationEM(),
            {"validation.q_nan", "validation.d_negative"},
            False,
            "float64",
            id="SkipsValidationEM",
        ),
    ],
)
def test_subtle_mistake_is_caught_with_the_check_named(sel, expected, exact, fragment):
    # the privacy audit is not needed to find these (and is run for class (a) above); every
    # other check fails a correct selector with probability at most P_MIN = 1e-6, so `exact`
    # states that the kit pinpoints the mistake
    with pytest.raises(SelectorCheckError) as info:
        check_selector(sel, skip=["privacy"])
    report = info.value.report
    assert (failed(report) == expected) if exact else (expected <= failed(report)), str(report)
    text = str(info.value)
    for name in expected:
        assert f"FAIL            {name}: " in text  # the error names each failed check
    assert any(fragment in report[name].message for name in expected), str(report)


def test_global_state_check_restores_the_callers_stream():
    np.random.seed(7)  # noqa: NPY002 (the caller's global stream the kit must leave alone)
    expected = np.random.random()  # noqa: NPY002
    np.random.seed(7)  # noqa: NPY002
    report = check_selector(
        "rnm", raise_on_failure=False, skip=[g for g in GROUPS if g != "seeding"]
    )
    assert report.passed
    assert np.random.random() == expected  # noqa: NPY002


def test_symmetry_group_passes_correct_selectors_at_any_seed():
    # the symmetry checks are exact laws of the paper's selectors, not properties of one seed:
    # 3 tests x 4 selectors x 5 seeds each fail a correct selector with probability <= 1e-6
    for name in ["rnm", "krr", "gem", "greedy"]:
        for seed in range(5):
            report = check_selector(name, rng=seed, skip=[g for g in GROUPS if g != "symmetry"])
            assert report.passed and len(report) == 3


def test_out_of_range_indices_are_named():
    report = check_selector(OneBasedRNM(), raise_on_failure=False, audit=False)
    msg = report["shapes.output"].message
    assert "outside [0, " in msg and "returned index" in msg
    # K = 1 gives index 0 by the base class, so the first failing K is 2
    assert "for K = 2" in msg


def test_unvalidated_duck_selector_fails_validation():
    report = check_selector(DuckEM(validate=False), raise_on_failure=False, skip=["privacy"])
    bad = {c.name for c in report.failures}
    for case in ("q_nan", "q_inf", "d_zero", "d_negative", "d_nan", "d_shape"):
        assert f"validation.{case}" in bad, str(report)
    assert "accepted it and returned" in report["validation.q_nan"].message
    assert not any(name.startswith(("shapes", "seeding", "batch")) for name in bad), str(report)


def test_unpicklable_and_unregistered_protocol():
    def local(q, d, epsilon, rng):
        return gumbel_max(q, d, epsilon, rng)

    report = check_selector(
        selectors.from_function(local, name="local"), raise_on_failure=False, audit=False
    )
    assert failed(report) == {"api.pickle"}
    assert "jobs > 1" in report["api.pickle"].message


def test_bad_attributes_and_with_epsilon():
    class Sloppy(DuckEM):
        private = "yes"

        def with_epsilon(self, epsilon):  # accepts anything, forgets the other parameters
            self.epsilon = epsilon
            return self

    report = check_selector(Sloppy(), raise_on_failure=False, audit=False)
    assert "private must be a bool" in report["api.attributes"].message
    msg = report["epsilon.with_epsilon"].message
    assert "changed the original" in msg and "was accepted" in msg


# ---------------------------------------------------------------------------------------------
# the report and the arguments
# ---------------------------------------------------------------------------------------------
def test_report_object_and_error():
    report = check_selector("uniform", skip=["validation"], draws=2000)
    assert report.passed and len(report) == len(report.checks) > 10
    assert all(isinstance(c, CheckResult) and c.passed for c in report)
    text = str(report)
    assert text.splitlines()[0].startswith("check_selector(Uniform(epsilon=1.0)): PASSED")
    assert "PASS" in text and "shapes.output" in text
    assert report.group("seeding") and all(c.group == "seeding" for c in report.group("seeding"))
    with pytest.raises(KeyError, match="no check named"):
        report["nope"]
    err = SelectorCheckError(check_selector(OneBasedRNM(), raise_on_failure=False, audit=False))
    assert "FAIL" in str(err) and "shapes.output" in str(err)
    pickle.dumps(report)


def test_reproducible_and_skip_does_not_change_other_checks():
    a = check_selector("rnm", raise_on_failure=False, draws=5000)
    b = check_selector("rnm", raise_on_failure=False, draws=5000, skip=["batch", "api"])
    assert [r.counts.tolist() for r in a.audit] == [r.counts.tolist() for r in b.audit]
    c = check_selector("rnm", raise_on_failure=False, audit=False)
    assert a["batch.rows_independent"].message == c["batch.rows_independent"].message
    assert "batch.rows_separate" not in b.names() and "api.pickle" not in b.names()


def test_arguments_are_validated():
    with pytest.raises(ValueError, match="skip: unknown"):
        check_selector("rnm", skip=["shape"])
    with pytest.raises(ValueError, match="draws must be"):
        check_selector("rnm", draws=0)
    with pytest.raises(TypeError, match="draws must be"):
        check_selector("rnm", draws=1.5)
    with pytest.raises(ValueError, match="alpha"):
        check_selector("rnm", alpha=0.0)
    with pytest.raises(ValueError, match="unknown pair"):
        check_selector("rnm", pairs=["nope"])
    with pytest.raises(ValueError, match="unknown selector"):
        check_selector("no_such_selector")
    with pytest.raises(TypeError):
        check_selector(3.0)
    report = check_selector("rnm", pairs=["swap"], skip=["validation"], draws=2000)
    assert [r.pair for r in report.audit] == ["swap"]


def test_missing_attributes_are_reported_not_raised():
    class Bare:
        def select(self, q, d=None, rng=None):
            return DuckEM().select(q, d, rng)

    report = check_selector(Bare(), raise_on_failure=False)
    msg = report["api.attributes"].message
    assert "name must be" in msg and "private must be a bool" in msg and "epsilon must be" in msg
    assert not report["api.protocol"].passed
    assert report["privacy"].message == "no valid epsilon to audit"
    assert report["shapes.output"].passed and report["seeding.same_seed"].passed


def _load_example(monkeypatch):
    path = Path(__file__).resolve().parents[2] / "examples" / "custom_selector.py"
    spec = importlib.util.spec_from_file_location("custom_selector_example", path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # as --plugin does: picklable classes
    spec.loader.exec_module(module)
    return module


def test_example_selector_is_the_exponential_mechanism_and_passes_the_kit(monkeypatch):
    example = _load_example(monkeypatch)
    sel = example.SoftmaxEM(epsilon=0.7)
    report = check_selector(sel, raise_on_failure=False)
    assert failed(report) == set(), str(report)
    assert report.privacy_passed
    # closed form: P(a) ∝ exp(eps q[a] / (2D)), D = max d
    q = np.array([0.0, 1.0, 3.0, -2.0, 2.5])
    d = np.array([0.5, 1.0, 2.0, 1.5, 0.2])
    w = np.exp(0.7 * q / (2 * d.max()))
    n = 200_000
    counts = np.bincount(sel.select(np.tile(q, (n, 1)), d, rng=4), minlength=5)
    assert_counts_match_pmf(counts, w / w.sum())
    # a candidate whose weight underflows to 0 is never drawn
    far = sel.select(np.tile([0.0, -1e6, 5.0], (n, 1)), 1.0, rng=5)
    assert not np.any(far == 1)
    assert "softmax_em" in selectors.available()
