"""Stationary K-armed bandits (Bernoulli and clipped-Gaussian arms) for first lectures."""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from dpbandits.core.checks import ParameterTypeError
from envs.base import BanditEnv, BanditVectorEnv
from envs.core import Schedule, as_vector, check_bounds, check_int
from envs.piecewise import piecewise_schedule

__all__ = [
    "DEFAULT_ARMS",
    "KArmedBernoulli",
    "KArmedBernoulliVectorEnv",
    "KArmedGaussian",
    "KArmedGaussianVectorEnv",
    "k_armed_means",
]

#: Number of arms when neither ``n_arms`` nor ``means`` is given (Sutton & Barto's testbed).
DEFAULT_ARMS = 10
DEFAULT_HORIZON = 1000


def k_armed_means(
    n_arms: int | None,
    means: Sequence[float] | None,
    means_seed: Any,
    lo: float = 0.0,
    hi: float = 1.0,
) -> np.ndarray:
    """The arms' means: ``means`` if given, else ``n_arms`` draws uniform on ``[lo, hi]``.

    The draws come from ``numpy.random.default_rng(means_seed)``, so the same ``means_seed``
    gives the same bandit (the reward draws are seeded separately, by ``reset(seed=...)``).
    ``n_arms`` and ``means`` may both be given if they agree.
    """
    lo, hi = check_bounds(lo, hi)
    if means is not None:
        m = as_vector("means", means)
        if n_arms is not None and check_int("n_arms", n_arms, minimum=1) != m.size:
            raise ValueError(f"n_arms={n_arms} disagrees with len(means)={m.size}")
        return m
    k = DEFAULT_ARMS if n_arms is None else check_int("n_arms", n_arms, minimum=1)
    if isinstance(means_seed, bool):
        raise ParameterTypeError(
            f"means_seed must be an int, a SeedSequence or None, got {means_seed!r}", "means_seed"
        )
    return np.random.default_rng(means_seed).uniform(lo, hi, size=k)


def bernoulli_schedule(
    n_arms: int | None = None,
    means: Sequence[float] | None = None,
    means_seed: Any = 0,
    horizon: int = DEFAULT_HORIZON,
) -> Schedule:
    """One segment of Bernoulli arms with success probabilities ``means``."""
    m = k_armed_means(n_arms, means, means_seed)
    return piecewise_schedule([(0, m)], horizon, arm="bernoulli")


def gaussian_schedule(
    n_arms: int | None = None,
    means: Sequence[float] | None = None,
    sds: float | Sequence[float] = 0.2,
    means_seed: Any = 0,
    horizon: int = DEFAULT_HORIZON,
    lo: float = 0.0,
    hi: float = 1.0,
) -> Schedule:
    """One segment of Gaussian arms ``N(means, sds^2)`` clipped to ``[lo, hi]``."""
    m = k_armed_means(n_arms, means, means_seed, lo, hi)
    if isinstance(sds, bool):
        raise ParameterTypeError(
            f"sds must be a positive number or one per arm, got {sds!r}", "sds"
        )
    if isinstance(sds, numbers.Real):
        s = np.full(m.size, float(sds))
    else:
        s = as_vector("sds", sds, m.size)
    return piecewise_schedule([(0, m, s)], horizon, arm="gaussian", lo=lo, hi=hi)


class KArmedBernoulli(BanditEnv):
    """Stationary K-armed Bernoulli bandit: arm ``a`` pays 1 with probability ``means[a]``.

    ## Description
    The first bandit of a course: ``K`` coins with unknown biases. Means are given, or drawn
    uniformly on ``[0, 1]`` from ``means_seed`` (default 0: the same bandit every time).

    ## Action Space
    ``Discrete(K)``.

    ## Observation Space
    ``Discrete(1)``: always ``0`` (a bandit has no state).

    ## Rewards
    ``0`` or ``1``; ``expected_rewards(t) == means`` at every step.

    ## Episode End
    Never terminated; truncated on step ``horizon - 1``.

    ## Info (evaluation data: an agent must not read it)
    ``t``, ``expected_rewards`` (K,), ``optimal_arm``, ``regret`` (``max(means) - means[a_t]``),
    as for every environment of :mod:`envs`.

    ## Arguments
    | Parameter     | Default | Description                                                 |
    |---------------|---------|-------------------------------------------------------------|
    | `n_arms`      | `None`  | number of arms (10 if `means` is not given)                 |
    | `means`       | `None`  | success probabilities in `[0, 1]`; `None`: drawn            |
    | `means_seed`  | `0`     | seed of the drawn means (`None`: fresh entropy)             |
    | `horizon`     | `1000`  | number of steps of an episode                               |
    | `render_mode` | `None`  | `None` or `"ansi"`                                          |

    ```python
    >>> import gymnasium as gym, envs
    >>> env = gym.make("dpbandits/KArmedBernoulli-v0", means=[0.2, 0.5, 0.7], horizon=100)
    >>> obs, info = env.reset(seed=0)
    >>> obs, reward, terminated, truncated, info = env.step(0)
    >>> info["optimal_arm"], round(info["regret"], 3)
    (2, 0.5)

    ```
    """

    build_schedule = staticmethod(bernoulli_schedule)


class KArmedBernoulliVectorEnv(BanditVectorEnv):
    """``num_envs`` copies of :class:`KArmedBernoulli` (same bandit) in numpy arrays."""

    env_class = KArmedBernoulli


class KArmedGaussian(BanditEnv):
    """Stationary K-armed bandit with Gaussian arms clipped to ``[lo, hi]``.

    ## Description
    Arm ``a`` pays ``clip(N(means[a], sds[a]^2), lo, hi)``. Means are given, or drawn uniformly
    on ``[lo, hi]`` from ``means_seed``. With the defaults (``[0, 1]``, ``sd = 0.2``) rewards
    are bounded, as UCB's bonus assumes; Sutton & Barto's unbounded testbed is
    ``means`` drawn from ``N(0, 1)``, ``sds=1`` and wide bounds such as ``lo=-100, hi=100``.

    ## Action Space
    ``Discrete(K)``.

    ## Observation Space
    ``Discrete(1)``: always ``0``.

    ## Rewards
    Clipped Gaussian; ``expected_rewards(t)`` is the exact clipped mean (App. H-1 of the
    paper), which is what regret is measured against.

    ## Episode End
    Never terminated; truncated on step ``horizon - 1``.

    ## Info (evaluation data: an agent must not read it)
    ``t``, ``expected_rewards`` (K,), ``optimal_arm``, ``regret``.

    ## Arguments
    | Parameter     | Default | Description                                                 |
    |---------------|---------|-------------------------------------------------------------|
    | `n_arms`      | `None`  | number of arms (10 if `means` is not given)                 |
    | `means`       | `None`  | means before clipping; `None`: drawn uniformly on `[lo, hi]`|
    | `sds`         | `0.2`   | standard deviation(s), one number or one per arm (> 0)      |
    | `means_seed`  | `0`     | seed of the drawn means (`None`: fresh entropy)             |
    | `horizon`     | `1000`  | number of steps of an episode                               |
    | `lo`, `hi`    | `0, 1`  | clipping bounds                                             |
    | `render_mode` | `None`  | `None` or `"ansi"`                                          |
    """

    build_schedule = staticmethod(gaussian_schedule)


class KArmedGaussianVectorEnv(BanditVectorEnv):
    """``num_envs`` copies of :class:`KArmedGaussian` (same bandit) in numpy arrays."""

    env_class = KArmedGaussian
