"""The synthetic request generator (App. G knobs) and the Recommendation-v0 environment."""

import gymnasium as gym
import numpy as np
import pytest
from scipy import stats

import envs  # noqa: F401  (registers the ids)
from dpbandits.recommendation.synthetic import generate_requests
from envs.recommendation import RecommendationEnv, RecommendationVectorEnv
from tests.stats import P_MIN, assert_mean_close, assert_proportion_close


def test_private_scores_have_the_documented_beta_marginal():
    req = generate_requests(4000, n_candidates=5, extremeness=0.2, mean=0.3, rng=0)
    kappa = 1 / 0.2 - 1
    p = stats.kstest(req.private.ravel(), stats.beta(0.3 * kappa, 0.7 * kappa).cdf).pvalue
    assert p > P_MIN
    # extremeness 1/3 at mean 1/2 is the uniform law of App. G Fig. 10a
    u = generate_requests(4000, n_candidates=5, rng=1).private.ravel()
    assert stats.kstest(u, "uniform").pvalue > P_MIN


def test_extremeness_one_is_the_weighted_bernoulli():
    req = generate_requests(20_000, n_candidates=3, extremeness=1.0, mean=0.9, rng=2)
    assert set(np.unique(req.private)) <= {0.0, 1.0}
    assert_proportion_close(int(req.private.sum()), req.private.size, 0.9)


@pytest.mark.parametrize("extremeness", [0.3, 1.0])
def test_public_scores_are_calibrated_predictions(extremeness):
    # s_server = E[s | x_pub]: residuals have mean 0 and are uncorrelated with s_server
    req = generate_requests(
        20_000, n_candidates=4, extremeness=extremeness, informativeness=0.6, rng=3
    )
    resid = (req.private - req.public).ravel()
    assert_mean_close(resid, 0.0)
    assert_mean_close(resid * (req.public.ravel() - 0.5), 0.0)
    # and the public scores carry information: correlated with the private ones
    assert np.corrcoef(req.private.ravel(), req.public.ravel())[0, 1] > 0.3


def test_informativeness_limits():
    one = generate_requests(100, informativeness=1.0, rng=4)
    assert np.allclose(one.public, one.private)
    zero = generate_requests(100, informativeness=0.0, mean=0.4, rng=4)
    assert np.all(zero.public == 0.4)


def test_candidate_counts_and_padding():
    req = generate_requests(30_000, n_candidates=(2, 5), rng=5)
    counts = req.eligible.sum(axis=1)
    assert counts.min() == 2 and counts.max() == 5
    assert stats.chisquare(np.bincount(counts)[2:]).pvalue > P_MIN
    assert np.all(req.private[~req.eligible] == 0) and np.all(req.public[~req.eligible] == 0)


def test_generator_is_deterministic_and_validates():
    a, b = generate_requests(50, rng=9), generate_requests(50, rng=9)
    assert np.array_equal(a.private, b.private) and np.array_equal(a.public, b.public)
    with pytest.raises(ValueError, match="extremeness"):
        generate_requests(5, extremeness=0.0)
    with pytest.raises(ValueError, match="informativeness"):
        generate_requests(5, informativeness=1.2)
    with pytest.raises(TypeError, match="mean"):
        generate_requests(5, mean=True)
    with pytest.raises(ValueError, match="n_candidates"):
        generate_requests(5, n_candidates=(4, 2))


def test_env_steps_and_rewards():
    env = gym.make("dpbandits/Recommendation-v0", n_candidates=(2, 4), horizon=3000)
    obs, _ = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    total, expected = [], []
    for t in range(3000):
        a = int(np.argmax(np.where(obs["eligible"] == 1, obs["private"], -1)))
        obs, r, term, trunc, info = env.step(a)
        assert not term and trunc == (t == 2999)
        assert info["expected_reward"] == info["greedy_reward"]
        assert info["greedy_reward"] >= info["nonpersonalised_reward"]
        total.append(r)
        expected.append(info["expected_reward"])
    # Bernoulli engagement with the chosen private score as probability
    assert_mean_close(np.array(total) - np.array(expected), 0.0)


def test_env_ineligible_actions_show_nothing_and_out_of_range_ones_fail():
    env = RecommendationEnv(n_candidates=(1, 3), horizon=50)
    obs, _ = env.reset(seed=1)
    with pytest.raises(ValueError, match="outside"):
        env.step(7)
    while obs["eligible"].all():
        obs, *_ = env.step(0)
    _, r, _, _, info = env.step(int(np.flatnonzero(obs["eligible"] == 0)[0]))  # padding
    assert r == 0.0 and info["expected_reward"] == 0.0 and info["eligible_action"] is False
    with pytest.raises(TypeError, match="action"):
        env.step(1.0)


def test_env_passes_gymnasium_check_env():
    import warnings

    from gymnasium.utils.env_checker import check_env

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(
            gym.make("dpbandits/Recommendation-v0", n_candidates=(2, 5), horizon=20).unwrapped
        )


def test_vector_env_matches_the_single_env_interface():
    venv = gym.make_vec(
        "dpbandits/Recommendation-v0",
        num_envs=4,
        vectorization_mode="vector_entry_point",
        horizon=2,
    )
    obs, _ = venv.reset(seed=3)
    assert obs["public"].shape == (4, 10) and venv.observation_space.contains(obs)
    acts = np.zeros(4, dtype=np.int64)
    _, r, term, trunc, info = venv.step(acts)
    assert r.shape == (4,) and not trunc.any() and info["expected_reward"].shape == (4,)
    _, _, _, trunc, _ = venv.step(acts)
    assert trunc.all()
    _, r, _, trunc, info = venv.step(acts)  # NEXT_STEP autoreset
    assert info == {} and np.all(r == 0) and not trunc.any()
    v2 = RecommendationVectorEnv(num_envs=4, horizon=2)
    o2, _ = v2.reset(seed=3)
    assert np.array_equal(o2["private"], obs["private"])  # same seed, same requests


def test_env_contexts_determine_the_scores():
    from scipy.special import ndtr

    from dpbandits.recommendation.synthetic import score_quantile

    env = RecommendationEnv(
        n_candidates=(2, 6), extremeness=0.25, informativeness=0.6, mean=0.4, horizon=10
    )
    obs, _ = env.reset(seed=4)
    for _ in range(5):
        e = obs["eligible"] == 1
        z = 0.6 * obs["public_context"] + 0.8 * obs["private_context"]
        assert np.allclose(obs["private"][e], score_quantile(ndtr(z[e]), 0.4, 0.25))
        assert np.all(obs["public_context"][~e] == 0)
        # the public score is increasing in the public context alone
        order = np.argsort(obs["public_context"][e])
        assert np.all(np.diff(obs["public"][e][order]) >= 0)
        obs, *_ = env.step(0)
