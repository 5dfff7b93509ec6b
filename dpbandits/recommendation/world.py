"""A synthetic latent-factor stand-in for paper 004's MovieLens world (§4).

Paper 004 treats a neural network trained on MovieLens 25M as the ground truth ``u_M(f, b)``
(a rating in ``[0, 5]``); that network cannot be shipped, so this module draws a world with the
same *shapes*:

- ``G`` genres with popularities ``pi ~ Dirichlet(1)``;
- an item ``b`` is a binary genre vector (§4.2): 1 to 3 genres drawn by popularity;
- a user's feature vector ``f = [like; dislike]`` has ``d = 2G`` entries (§4.2): the share of
  the user's liked (resp. disliked) movies in each genre, each half summing to 1. Tastes form
  clusters, as real users do: ``n_archetypes`` archetypes ``a_j ~ Dirichlet(alpha G pi)`` and a
  user's taste ``theta ~ Dirichlet(concentration a_j)`` near a uniformly drawn one; the like
  half is the empirical genre share of ``n_liked`` movies drawn from ``theta``, the dislike half
  that of ``n_disliked`` movies drawn from the popularity tilted away from the taste
  (``pi (1 - theta)`` normalised), so profiles are noisy and sparse like real ones;
- the ground truth is a fixed latent-factor model,
  ``u_M(f, b) = 5 sigmoid(c_b + s (f P^T) . (b Q^T) / (h sqrt(|b|)))``, with Gaussian factor
  matrices ``P`` (``h x d``), ``Q`` (``h x G``) and item biases ``c_b``: a smooth, non-linear
  function of both, as a network would be.

The public training users ``A^tr`` and the private evaluation users are drawn from the same
model. :mod:`dpbandits.recommendation.movielens` builds the same objects from a local MovieLens
ratings file instead.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from dpbandits.selectors.base import RNGLike

__all__ = ["LatentWorld", "make_world", "sample_users"]

FloatArray = NDArray[np.float64]


def _check_count(value: object, name: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class LatentWorld:
    """Users' public training set, items and the ground-truth utility ``u_M`` (module doc)."""

    train: FloatArray  # (n_train, d) feature vectors of A^tr (public)
    items: FloatArray  # (m, G) binary genre vectors
    genre_popularity: FloatArray  # (G,)
    P: FloatArray  # (h, d)
    Q: FloatArray  # (h, G)
    item_bias: FloatArray  # (m,)
    strength: float
    alpha: float
    archetypes: FloatArray  # (n_archetypes, G)
    concentration: float
    n_liked: int
    n_disliked: int

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
        user = fa @ self.P.T  # (..., h)
        item = (self.items @ self.Q.T) / np.sqrt(self.items.sum(axis=1, keepdims=True))
        logit = self.item_bias + self.strength * (user @ item.T) / self.P.shape[0]
        return 5.0 / (1.0 + np.exp(-logit))


def _profiles(
    theta: FloatArray, n: int, rng: np.random.Generator
) -> FloatArray:  # genre shares of n movies drawn from each row's distribution
    counts = np.stack([rng.multinomial(n, p) for p in theta]).astype(np.float64)
    return counts / n


def sample_users(world: LatentWorld, n: int, rng: RNGLike = None) -> FloatArray:
    """Draw ``n`` users' feature vectors ``[like; dislike]`` (shape ``(n, 2G)``)."""
    n = _check_count(n, "n", minimum=0)
    gen = np.random.default_rng(rng)
    pi = world.genre_popularity
    arch = world.archetypes[gen.integers(0, world.archetypes.shape[0], size=n)]
    theta = np.stack([gen.dirichlet(world.concentration * a + 1e-3) for a in arch]).reshape(
        n, pi.size
    )
    away = pi * (1.0 - theta) + 1e-12
    away /= away.sum(axis=1, keepdims=True)
    like = _profiles(theta, world.n_liked, gen)
    dislike = _profiles(away, world.n_disliked, gen)
    return np.concatenate([like, dislike], axis=1)


def make_world(
    *,
    n_train: int = 1000,
    n_items: int = 500,
    n_genres: int = 19,
    n_factors: int = 16,
    strength: float = 8.0,
    alpha: float = 0.2,
    n_archetypes: int = 30,
    concentration: float = 50.0,
    n_liked: int = 400,
    n_disliked: int = 200,
    rng: RNGLike = None,
) -> LatentWorld:
    """Draw a world (module docstring).

    ``alpha`` is the Dirichlet concentration of the archetypes (small: few genres each),
    ``concentration`` how tightly users' tastes gather around their archetype, ``strength`` the
    scale of the taste-item interaction in the logit of ``u_M``.
    """
    n_train = _check_count(n_train, "n_train")
    n_items = _check_count(n_items, "n_items")
    g = _check_count(n_genres, "n_genres", minimum=2)
    h = _check_count(n_factors, "n_factors")
    n_liked = _check_count(n_liked, "n_liked")
    n_disliked = _check_count(n_disliked, "n_disliked")
    n_arch = _check_count(n_archetypes, "n_archetypes")
    for name, v in (("strength", strength), ("alpha", alpha), ("concentration", concentration)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not (0 < float(v) < np.inf):
            raise ValueError(f"{name} must be a finite number > 0, got {v!r}")
    gen = np.random.default_rng(rng)
    pi = gen.dirichlet(np.ones(g))
    items = np.zeros((n_items, g))
    n_gen = gen.integers(1, 4, size=n_items)
    for i, c in enumerate(n_gen):
        items[i, gen.choice(g, size=min(int(c), g), replace=False, p=pi)] = 1.0
    P = gen.standard_normal((h, 2 * g))
    P[:, g:] *= -1.0  # a disliked genre pulls the other way (Q is shared)
    Q = gen.standard_normal((h, g))
    bias = gen.normal(-0.5, 0.1, size=n_items)
    archetypes = gen.dirichlet(alpha * g * pi, size=n_arch)
    world = LatentWorld(
        train=np.zeros((0, 2 * g)),
        items=items,
        genre_popularity=pi,
        P=P,
        Q=Q,
        item_bias=bias,
        strength=float(strength),
        alpha=float(alpha),
        archetypes=archetypes,
        concentration=float(concentration),
        n_liked=n_liked,
        n_disliked=n_disliked,
    )
    train = sample_users(world, n_train, gen)
    return LatentWorld(**{**world.__dict__, "train": train})
