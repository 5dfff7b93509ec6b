"""Paper 004's world: the statistics of §5 (Figs. 2-5), the calibrated synthetic world and the
MovieLens ground-truth network (§4.1)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpbandits.recommendation.movielens import GENRES, fit_network_world, load_movielens
from dpbandits.recommendation.world import (
    MOVIELENS_USERS,
    PAPER_WORLD_STATISTICS,
    make_world,
    nearest_l1,
    sample_users,
    world_statistics,
)


def test_nearest_l1_matches_brute_force():
    rng = np.random.default_rng(0)
    pop = rng.random((300, 6))
    q = pop[:17] + 0.01 * rng.random((17, 6))
    got = nearest_l1(q, pop, 4, chunk=5)
    dist = np.abs(q[:, None, :] - pop[None, :, :]).sum(-1)
    np.testing.assert_array_equal(got, np.argsort(dist, axis=1, kind="stable")[:, :4])
    with pytest.raises(ValueError, match="exceeds the population"):
        nearest_l1(q, pop[:3], 4)


def test_world_statistics_by_hand():
    """Two groups of 5 users 0.1 apart on one axis (diameter 0.4 within a group of
    (0, .1, .2, .3, .4)) far from each other; group A's users all rank items 0-4 first,
    group B's users items 5-9 (each user of B shifted by one: items 5+j..9+j)."""
    line = np.arange(5) * 0.1
    pop = np.concatenate([np.c_[line, np.zeros(5)], np.c_[line, np.full(5, 50.0)]])

    def utility(f):
        u = np.zeros((f.shape[0], 20))
        for i, (x, y) in enumerate(f):
            if y == 0:
                u[i, :5] = 5.0
            else:
                j = int(round(x * 10))
                u[i, 5 + j : 10 + j] = 4.0 + 0.1 * np.arange(5)
        return u

    st = world_statistics(pop, utility, sizes=(5,), n_query=10, radius=0.45, pair_radius=0.15)
    assert st["diameter_5"] == 1.0
    # A: one distinct top-5 (dup 0.8); B: items 5..13 are 9 distinct (dup 1 - 9/25 = 0.64)
    assert st["duplication"] == pytest.approx((0.8 + 0.64) / 2)
    assert st["best_rating"] == pytest.approx((5.0 + 4.4) / 2)
    st2 = world_statistics(pop, utility, sizes=(5,), n_query=10, radius=0.35)
    assert st2["diameter_5"] == 0.0  # each group's diameter is 0.4


@pytest.mark.slow  # about 5 s: a population of 162,541 users
def test_default_world_has_the_papers_statistics():
    """The default world against paper 004 §5 (within 20 %, the tolerance the world was built
    to), over the paper's population size; 150 cluster centres instead of 1500, so each
    bound also allows 4 standard errors of the sampled fraction or mean."""
    w = make_world(rng=0)
    pop = sample_users(w, MOVIELENS_USERS, rng=1)
    st = world_statistics(pop, w.utility, n_query=150, rng=2)
    for key in ("diameter_5", "diameter_10", "diameter_15"):
        paper = PAPER_WORLD_STATISTICS[key]
        se = math.sqrt(paper * (1 - paper) / 150)
        assert abs(st[key] - paper) <= 0.2 * paper + 4 * se, (key, st[key])
    # duplication is a mean of per-cluster values in [0, 1] with s.d. about 0.1
    assert abs(st["duplication"] - 0.27) <= 0.2 * 0.27 + 4 * 0.1 / math.sqrt(150)
    assert abs(st["best_rating"] - 4.51) <= 0.2 * 4.51


def test_smooth_truth_duplicates_far_more():
    """Without the rough part of u_M the top-5 of nearby users coincide (the 0.7 duplication
    the previous world had); with it they mostly differ."""
    rough, smooth = make_world(rng=0), make_world(rng=0, roughness=0.0)
    pop = sample_users(rough, 20_000, rng=1)
    d_rough = world_statistics(pop, rough.utility, sizes=(5,), n_query=100, rng=2)
    d_smooth = world_statistics(pop, smooth.utility, sizes=(5,), n_query=100, rng=2)
    assert d_smooth["duplication"] > 0.6 > 0.4 > d_rough["duplication"]


def _write_movielens(tmp_path, n_users=40, n_movies=30, seed=0):
    rng = np.random.default_rng(seed)
    combos = ["Action", "Comedy|Romance", "Drama", "Sci-Fi|Action", "Horror", "Animation"]
    genres = [combos[i % len(combos)] for i in range(n_movies)]
    lines = ["movieId,title,genres"] + [f"{i},M{i},{g}" for i, g in enumerate(genres, 1)]
    (tmp_path / "movies.csv").write_text("\n".join(lines) + "\n")
    rows = ["userId,movieId,rating,timestamp"]
    for u in range(1, n_users + 1):
        for m in rng.choice(n_movies, size=15, replace=False) + 1:
            liked = (u % 2 == 0) == ("Action" in genres[m - 1])
            r = float(np.clip(rng.normal(4.2 if liked else 2.5, 0.5), 0.5, 5.0))
            rows.append(f"{u},{m},{round(2 * r) / 2},{u * 100 + m}")
    (tmp_path / "ratings.csv").write_text("\n".join(rows) + "\n")
    return tmp_path / "ratings.csv", tmp_path / "movies.csv"


def test_network_world_on_local_movielens_files(tmp_path):
    ratings, movies = _write_movielens(tmp_path)
    data = load_movielens(ratings, movies)
    w = fit_network_world(data, hidden=(16,), min_user_ratings=5, max_iter=300, rng=0)
    assert w.train.shape == (40, 2 * len(GENRES)) and w.metrics["users"] == 40
    assert 0 <= w.metrics["within_0.5"] <= 1 and w.metrics["rmse"] > 0
    u = w.utility(data.features[:3])
    assert u.shape == (3, 30) and np.all((u >= 0) & (u <= 5))
    # the network sees genres only: movies 1 and 7 are both "Action"
    np.testing.assert_allclose(u[:, 0], u[:, 6])
    assert w.utility(data.features[0]).shape == (30,)
    with pytest.raises(ValueError, match="no user has 100"):
        fit_network_world(data, min_user_ratings=100)
