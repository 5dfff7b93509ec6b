"""A synthetic latent-factor stand-in for paper 004's MovieLens world (§4, §5).

Paper 004 treats a neural network trained on MovieLens 25M as the ground truth ``u_M(f, b)``
(a rating in ``[0, 5]``); that network cannot be shipped, so this module draws a world with the
same *shapes* and, with the defaults, the statistics §5 reports about the real one
(:func:`world_statistics`, :data:`PAPER_WORLD_STATISTICS`; docs/recommendation.md):

- ``G`` genres with popularities ``pi ~ Dirichlet(1)``;
- an item ``b`` is a binary genre vector (§4.2): 1 to 3 genres drawn by popularity;
- a user's feature vector ``f = [like; dislike]`` has ``d = 2G`` entries (§4.2), each half
  summing to 1. Tastes lie on a low-dimensional set: ``theta = sum_j w_j a_j`` mixes
  ``n_archetypes`` archetypes ``a_j ~ Dirichlet(alpha G pi)`` with weights
  ``w ~ Dirichlet(mix)``. The like half is ``Dirichlet(kappa theta)`` and the dislike half
  ``Dirichlet(kappa pi (1 - theta))`` (normalised): noisy around the taste, with a per-user
  precision ``kappa = precision exp(precision_spread N(0, 1))`` -- users with many ratings
  have precise profiles, users with few noisy ones;
- the ground truth is a fixed latent-factor model with a rough user embedding,
  ``u_M(f, b) = 5 sigmoid(c_b + s z(f) . (b Q^T) / (h sqrt(|b|)))`` with
  ``z(f) = f P^T + roughness sin(frequency f R^T + phase)``: Gaussian ``P``, ``R``
  (``h x d``), ``Q`` (``h x G``), uniform phases and item biases ``c_b ~ N(-0.5, bias_sd^2)``.
  The sine term makes the best items of users a short distance apart differ, as the paper's
  network does (§5.2: 27 % duplication among the top-5 of 5 nearby users, a 0.25 rating gap
  between the top-5 of users 0.1 apart); a smooth bilinear truth cannot (0.7 duplication).

The public training users ``A^tr`` and the private evaluation users are drawn from the same
model. :mod:`dpbandits.recommendation.movielens` builds the same objects from a local MovieLens
ratings file instead.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpbandits.core.arrays import FloatArray, IntArray
from dpbandits.selectors.base import RNGLike

__all__ = [
    "MOVIELENS_USERS",
    "PAPER_WORLD_STATISTICS",
    "LatentWorld",
    "make_world",
    "nearest_l1",
    "sample_users",
    "world_statistics",
]


def _check_count(value: object, name: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


#: The statistics paper 004 reports about its MovieLens world (§5.1-5.2, Figs. 2-5): the
#: fraction of 5-, 10- and 15-user clusters with l1 diameter <= 0.2, the mean top-5 duplication
#: of 5-user clusters, the mean rating gap between the top-5 of users within l1 distance 0.1
#: and the mean best rating, over 1500 users of 162,541.
PAPER_WORLD_STATISTICS: dict[str, float] = {
    "diameter_5": 0.75,
    "diameter_10": 0.45,
    "diameter_15": 0.24,
    "duplication": 0.27,
    "neighbour_gap": 0.25,
    "best_rating": 4.51,
}
#: The number of MovieLens 25M users the paper's statistics are taken over.
MOVIELENS_USERS = 162_541


@dataclass(frozen=True)
class LatentWorld:
    """Users' public training set, items and the ground-truth utility ``u_M`` (module doc)."""

    train: FloatArray  # (n_train, d) feature vectors of A^tr (public)
    items: FloatArray  # (m, G) binary genre vectors
    genre_popularity: FloatArray  # (G,)
    P: FloatArray  # (h, d)
    Q: FloatArray  # (h, G)
    R: FloatArray  # (h, d)
    phase: FloatArray  # (h,)
    item_bias: FloatArray  # (m,)
    strength: float
    roughness: float
    frequency: float
    alpha: float
    archetypes: FloatArray  # (n_archetypes, G)
    mix: float
    precision: float
    precision_spread: float

    @property
    def n_genres(self) -> int:
        return int(self.items.shape[1])

    @property
    def d(self) -> int:
        return 2 * self.n_genres

    @property
    def n_items(self) -> int:
        return int(self.items.shape[0])

    def utility(self, f: NDArray[np.float64]) -> FloatArray:
        """``u_M(f, b)`` for every item ``b``: shape ``f.shape[:-1] + (m,)``, values in [0, 5]."""
        fa = np.asarray(f, dtype=np.float64)
        if fa.shape[-1] != self.d:
            raise ValueError(f"feature vectors must have d = {self.d} entries, got {fa.shape}")
        user = fa @ self.P.T + self.roughness * np.sin(
            self.frequency * (fa @ self.R.T) + self.phase
        )
        item = (self.items @ self.Q.T) / np.sqrt(self.items.sum(axis=1, keepdims=True))
        logit = self.item_bias + self.strength * (user @ item.T) / self.P.shape[0]
        return 5.0 / (1.0 + np.exp(-logit))


def _dirichlet_rows(alpha: FloatArray, rng: np.random.Generator) -> FloatArray:
    """One Dirichlet draw per row of ``alpha`` (normalised Gamma variates)."""
    g = rng.gamma(alpha)
    return g / g.sum(axis=1, keepdims=True)


def sample_users(world: LatentWorld, n: int, rng: RNGLike = None) -> FloatArray:
    """Draw ``n`` users' feature vectors ``[like; dislike]`` (shape ``(n, 2G)``)."""
    n = _check_count(n, "n", minimum=0)
    gen = np.random.default_rng(rng)
    pi = world.genre_popularity
    w = gen.dirichlet(np.full(world.archetypes.shape[0], world.mix), size=n)
    theta = w @ world.archetypes
    kappa = world.precision * np.exp(world.precision_spread * gen.standard_normal((n, 1)))
    away = pi * (1.0 - theta) + 1e-12
    away /= away.sum(axis=1, keepdims=True)
    # the 1e-3 floor keeps every Gamma shape positive (a genre outside the taste)
    like = _dirichlet_rows(kappa * theta + 1e-3, gen)
    dislike = _dirichlet_rows(kappa * away + 1e-3, gen)
    return np.concatenate([like, dislike], axis=1)


def make_world(
    *,
    n_train: int = 1000,
    n_items: int = 2000,
    n_genres: int = 19,
    n_factors: int = 16,
    strength: float = 8.0,
    roughness: float = 0.55,
    frequency: float = 45.0,
    bias_sd: float = 0.1,
    alpha: float = 0.2,
    n_archetypes: int = 4,
    mix: float = 1.0,
    precision: float = 1150.0,
    precision_spread: float = 0.6,
    rng: RNGLike = None,
) -> LatentWorld:
    """Draw a world (module docstring).

    The defaults reproduce the statistics of paper 004's MovieLens world within 20 %
    (:func:`world_statistics`; docs/recommendation.md has the measured values): the user
    model (``n_archetypes``, ``mix``, ``precision``, ``precision_spread``) sets the cluster
    diameters, the ground truth (``strength``, ``roughness``, ``frequency``, ``bias_sd``,
    ``n_items``) the top-k duplication, the neighbours' rating gap and the best rating.
    ``roughness = 0`` gives the smooth bilinear-sigmoid truth.
    """
    n_train = _check_count(n_train, "n_train")
    n_items = _check_count(n_items, "n_items")
    g = _check_count(n_genres, "n_genres", minimum=2)
    h = _check_count(n_factors, "n_factors")
    n_arch = _check_count(n_archetypes, "n_archetypes")
    positive = (("strength", strength), ("alpha", alpha), ("mix", mix), ("precision", precision))
    for name, v in positive:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not (0 < float(v) < np.inf):
            raise ValueError(f"{name} must be a finite number > 0, got {v!r}")
    non_negative = (
        ("roughness", roughness), ("frequency", frequency), ("bias_sd", bias_sd),
        ("precision_spread", precision_spread),
    )  # fmt: skip
    for name, v in non_negative:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not (0 <= float(v) < np.inf):
            raise ValueError(f"{name} must be a finite number >= 0, got {v!r}")
    # the world keeps every checked number but bias_sd (drawn into item_bias below)
    numbers = {name: float(v) for name, v in (*positive, *non_negative) if name != "bias_sd"}
    gen = np.random.default_rng(rng)
    pi = gen.dirichlet(np.ones(g))
    # the user model first, so that the population does not depend on n_items
    archetypes = gen.dirichlet(alpha * g * pi, size=n_arch)
    R = gen.standard_normal((h, 2 * g))
    phase = gen.uniform(0.0, 2.0 * np.pi, size=h)
    items = np.zeros((n_items, g))
    n_gen = gen.integers(1, 4, size=n_items)
    for i, c in enumerate(n_gen):
        items[i, gen.choice(g, size=min(int(c), g), replace=False, p=pi)] = 1.0
    P = gen.standard_normal((h, 2 * g))
    P[:, g:] *= -1.0  # a disliked genre pulls the other way (Q is shared)
    Q = gen.standard_normal((h, g))
    bias = gen.normal(-0.5, bias_sd, size=n_items)
    world = LatentWorld(
        train=np.zeros((0, 2 * g)),
        items=items,
        genre_popularity=pi,
        P=P,
        Q=Q,
        R=R,
        phase=phase,
        item_bias=bias,
        archetypes=archetypes,
        **numbers,
    )
    return replace(world, train=sample_users(world, n_train, gen))


# -- the statistics of §5 ----------------------------------------------------------------------


def nearest_l1(queries: FloatArray, population: FloatArray, k: int, chunk: int = 64) -> IntArray:
    """The ``k`` nearest rows of ``population`` to each query in l1 distance, nearest first
    (a query that is a row of the population finds itself first); shape ``(n_queries, k)``."""
    q = np.asarray(queries, dtype=np.float64)
    pop = np.asarray(population, dtype=np.float64)
    if q.ndim != 2 or pop.ndim != 2 or q.shape[1] != pop.shape[1]:
        raise ValueError(f"queries {q.shape} and population {pop.shape} must be (n, d), same d")
    kk = _check_count(k, "k")
    if kk > pop.shape[0]:
        raise ValueError(f"k = {kk} exceeds the population of {pop.shape[0]}")
    out = np.empty((q.shape[0], kk), dtype=np.int64)
    for s in range(0, q.shape[0], chunk):
        block = q[s : s + chunk]
        dist = np.zeros((block.shape[0], pop.shape[0]))
        for j in range(pop.shape[1]):  # one coordinate at a time: memory n_queries x N
            dist += np.abs(block[:, j, None] - pop[None, :, j])
        idx = np.argpartition(dist, kk - 1, axis=1)[:, :kk]
        near = np.take_along_axis(dist, idx, axis=1)
        out[s : s + chunk] = np.take_along_axis(idx, np.argsort(near, axis=1), axis=1)
    return out


def _diameters(points: FloatArray) -> FloatArray:
    """Largest l1 distance within each cluster; ``points`` has shape ``(n, size, d)``."""
    return np.abs(points[:, :, None, :] - points[:, None, :, :]).sum(axis=-1).max(axis=(1, 2))


def _top(u: FloatArray, k: int) -> IntArray:
    return np.argpartition(-u, k - 1, axis=1)[:, :k]


def world_statistics(
    population: FloatArray,
    utility: Any,
    *,
    sizes: tuple[int, ...] = (5, 10, 15),
    n_query: int = 1500,
    radius: float = 0.2,
    top_k: int = 5,
    pair_radius: float = 0.1,
    rng: RNGLike = None,
) -> dict[str, float]:
    """The statistics of paper 004 §5 on a user population (Figs. 2-5).

    ``n_query`` users drawn from ``population`` (the paper: 1500 of all 162,541 MovieLens
    users) are each the centre of clusters of the ``sizes`` nearest users (itself included);
    ``diameter_<size>`` is the fraction whose largest pairwise l1 distance is at most
    ``radius``. ``duplication`` is the mean of ``1 - q / (5 top_k)`` over the 5-user clusters,
    ``q`` the number of distinct items among the members' top-``top_k`` (Fig. 4).
    ``neighbour_gap`` is, over the centres whose nearest other user lies within
    ``pair_radius``, the mean of (a1's mean rating of its own top-``top_k``) minus (a1's mean
    rating of a2's top-``top_k``) (Fig. 3; ``n_pairs`` says how many); ``best_rating`` the
    mean best rating of the centres (Fig. 2). ``utility(f)`` returns ``(n, m)`` ratings.
    """
    pop = np.asarray(population, dtype=np.float64)
    gen = np.random.default_rng(rng)
    nq = min(_check_count(n_query, "n_query"), pop.shape[0])
    centres = gen.choice(pop.shape[0], size=nq, replace=False)
    near = nearest_l1(pop[centres], pop, max(max(sizes), 5, 2))
    out: dict[str, float] = {}
    for size in sizes:
        out[f"diameter_{size}"] = float((_diameters(pop[near[:, :size]]) <= radius).mean())
    five = near[:, :5]
    u = np.asarray(utility(pop[five.reshape(-1)]), dtype=np.float64)
    top = _top(u, top_k).reshape(nq, 5 * top_k)
    distinct = np.array([np.unique(t).size for t in top])
    out["duplication"] = float((1.0 - distinct / (5 * top_k)).mean())
    u_c = u.reshape(nq, 5, -1)[:, 0]
    out["best_rating"] = float(u_c.max(axis=1).mean())
    a1, a2 = near[:, 0], near[:, 1]
    close = np.abs(pop[a1] - pop[a2]).sum(axis=1) <= pair_radius
    out["n_pairs"] = float(close.sum())
    if close.any():
        u1 = u_c[close]
        u2 = u.reshape(nq, 5, -1)[close, 1]
        rows = np.arange(u1.shape[0])[:, None]
        own, other = _top(u1, top_k), _top(u2, top_k)
        out["neighbour_gap"] = float((u1[rows, own].mean(1) - u1[rows, other].mean(1)).mean())
    else:
        out["neighbour_gap"] = float("nan")
    return out
