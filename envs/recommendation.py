"""Private recommendation requests as a Gymnasium environment (paper 001, Algorithm 2).

Each step is one recommendation opportunity drawn by
:func:`dpbandits.recommendation.synthetic.generate_requests` (knobs of App. G: ``extremeness``
of the private scores, ``n_candidates``, ``informativeness`` of the public scores). The
observation is a dict:

- ``"public"`` ``(K,)``: the server scores (pClick_server);
- ``"private"`` ``(K,)``: the device scores (pClick_device), to be read on the device only --
  an agent that reveals its action must select with a local-DP selector
  (:mod:`dpbandits.recommendation.local`);
- ``"eligible"`` ``(K,)`` int8: 1 for the request's real candidates (a request with fewer than
  ``K = max n_candidates`` candidates is padded with zeros);
- ``"public_context"`` / ``"private_context"`` ``(K,)``: the latent effects ``x_pub`` (what the
  server's context says about each candidate) and ``x_priv`` (what the user's private context
  adds) from which both scores are computed, for agents that learn their own scoring models.

The action is the index of the candidate shown; an action on a padding column shows nothing
(reward 0, ``info["eligible_action"]`` False), so ``"eligible"`` is the action mask. The reward
is the engagement, a Bernoulli draw with the private score of the shown candidate as its
probability.
``info`` holds evaluation data: ``"expected_reward"`` (the private score of the action),
``"greedy_reward"`` (the largest private score: the non-private limit) and
``"nonpersonalised_reward"`` (the private score of the best public candidate, ties to the
first). ``terminated`` is always False; ``truncated`` is True on step ``horizon - 1``.

The vector form draws all copies' requests in one batch and autoresets like
:class:`envs.base.BanditVectorEnv` (``AutoresetMode.NEXT_STEP``, all copies together).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from gymnasium.error import ResetNeeded
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from dpbandits.core import checks
from dpbandits.recommendation.synthetic import Requests, generate_requests
from envs.base import vector_signature
from envs.core import check_int, check_seed

__all__ = ["RecommendationEnv", "RecommendationVectorEnv"]

#: Bound of the context boxes: the contexts are standard normal, and a float64 standard normal
#: draw never exceeds 40 in absolute value (the tail beyond it is below 1e-300).
_CONTEXT_BOUND = 40.0


class _RequestsMixin:
    """Generator settings and the observation/info of a batch of requests."""

    n_max: int
    horizon: int
    _params: dict[str, Any]
    _req: Requests | None

    def _init_params(
        self,
        n_candidates: int | tuple[int, int],
        extremeness: float,
        informativeness: float,
        mean: float,
        horizon: int,
    ) -> None:
        self._params = dict(
            n_candidates=n_candidates,
            extremeness=extremeness,
            informativeness=informativeness,
            mean=mean,
        )
        generate_requests(0, **self._params)  # validates the knobs before any work
        hi = n_candidates[1] if isinstance(n_candidates, tuple | list) else n_candidates
        self.n_max = int(hi)
        self.horizon = check_int("horizon", horizon, minimum=1)
        self._req = None

    def _single_spaces(self) -> tuple[spaces.Discrete, spaces.Dict]:
        k = self.n_max
        obs = spaces.Dict(
            {
                "public": spaces.Box(0.0, 1.0, (k,), np.float64),
                "private": spaces.Box(0.0, 1.0, (k,), np.float64),
                "eligible": spaces.MultiBinary(k),
                "public_context": spaces.Box(-_CONTEXT_BOUND, _CONTEXT_BOUND, (k,), np.float64),
                "private_context": spaces.Box(-_CONTEXT_BOUND, _CONTEXT_BOUND, (k,), np.float64),
            }
        )
        return spaces.Discrete(k), obs

    def _draw(self, n: int, rng: np.random.Generator) -> dict[str, npt.NDArray[Any]]:
        self._req = generate_requests(n, rng=rng, **self._params)
        return _observation(self._req)

    def _outcome(
        self, actions: npt.NDArray[np.int64], rng: np.random.Generator
    ) -> tuple[npt.NDArray[np.float64], dict[str, npt.NDArray[Any]]]:
        req = self._req
        assert req is not None
        rows = np.arange(req.n)
        outside = (actions < 0) | (actions >= self.n_max)
        if outside.any():
            bad = int(np.flatnonzero(outside)[0])
            raise ValueError(
                f"action {int(actions[bad])} of copy {bad} is outside [0, {self.n_max})"
            )
        shown = req.eligible[rows, actions]
        # a padding column shows nothing: engagement probability 0 (the private score there is 0)
        p = np.where(shown, req.private[rows, actions], 0.0)
        reward = (rng.random(req.n) < p).astype(np.float64)
        best_public = np.argmax(np.where(req.eligible, req.public, -np.inf), axis=1)
        info = {
            "expected_reward": p,
            "greedy_reward": np.where(req.eligible, req.private, -np.inf).max(axis=1),
            "nonpersonalised_reward": req.private[rows, best_public],
            "eligible_action": shown,
        }
        return reward, info


def _observation(req: Requests) -> dict[str, npt.NDArray[Any]]:
    return {
        "public": req.public.copy(),
        "private": req.private.copy(),
        "eligible": req.eligible.astype(np.int8),
        "public_context": np.where(req.eligible, req.x_pub, 0.0),
        "private_context": np.where(req.eligible, req.x_priv, 0.0),
    }


def _check_actions(actions: Any, n: int) -> npt.NDArray[np.int64]:
    a = np.asarray(actions)
    if a.shape != (n,) or not np.issubdtype(a.dtype, np.integer):
        raise ValueError(f"actions must be {n} integers, got shape {a.shape}, dtype {a.dtype}")
    return a.astype(np.int64)


class RecommendationEnv(_RequestsMixin, gym.Env[Any, Any]):
    """One stream of recommendation requests (module docstring)."""

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(
        self,
        n_candidates: int | tuple[int, int] = 10,
        extremeness: float = 1.0 / 3.0,
        informativeness: float = 0.5,
        mean: float = 0.5,
        horizon: int = 1000,
    ) -> None:
        self._init_params(n_candidates, extremeness, informativeness, mean, horizon)
        self.action_space, self.observation_space = self._single_spaces()
        self._t = -1

    #: Requests drawn at once (one generator call per block, not per step: same law, ~100x
    #: cheaper per step).
    BLOCK = 256

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, npt.NDArray[Any]], dict[str, Any]]:
        super().reset(seed=check_seed(seed))
        self._t = 0
        self._block: Requests | None = None
        self._pos = 0
        return self._next(), {}

    def _next(self) -> dict[str, npt.NDArray[Any]]:
        """The next request of the current block (a new block when it is used up)."""
        if self._block is None or self._pos >= self._block.n:
            self._block = generate_requests(self.BLOCK, rng=self.np_random, **self._params)
            self._pos = 0
        self._req = self._block.subset(slice(self._pos, self._pos + 1))
        self._pos += 1
        return {k: v[0] for k, v in _observation(self._req).items()}

    def step(
        self, action: int
    ) -> tuple[dict[str, npt.NDArray[Any]], float, bool, bool, dict[str, Any]]:
        if self._t < 0 or self._t >= self.horizon:
            raise ResetNeeded("call reset() before step() (and after the episode is truncated)")
        if isinstance(action, bool) or not isinstance(action, (int, np.integer)):
            raise TypeError(f"action must be an integer, got {type(action).__name__}")
        reward, info = self._outcome(np.array([int(action)]), self.np_random)
        self._t += 1
        truncated = self._t >= self.horizon
        obs = self._next()
        return obs, float(reward[0]), False, truncated, {k: v[0].item() for k, v in info.items()}


class RecommendationVectorEnv(_RequestsMixin, VectorEnv[Any, Any, Any]):
    """``num_envs`` request streams drawn in one batch; ``info`` values are arrays ``(R,)``."""

    metadata: dict[str, Any] = {"render_modes": [], "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, num_envs: int = 1, *args: Any, **kwargs: Any) -> None:
        """``num_envs`` streams; the other arguments are :class:`RecommendationEnv`'s."""
        name = type(self).__name__
        arguments = checks.bind(self.__signature__, (num_envs, *args), kwargs, name)
        arguments.apply_defaults()
        del arguments.arguments["num_envs"]
        self._init_params(**arguments.arguments)
        self.num_envs = check_int("num_envs", num_envs, minimum=1)
        self.single_action_space, self.single_observation_space = self._single_spaces()
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self._t = -1
        self._prev_done = False

    __signature__ = vector_signature(RecommendationEnv)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, npt.NDArray[Any]], dict[str, Any]]:
        super().reset(seed=check_seed(seed))
        self._t = 0
        self._prev_done = False
        return self._draw(self.num_envs, self.np_random), {}

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        if self._t < 0:
            raise ResetNeeded("call reset() before step()")
        r = self.num_envs
        if self._prev_done:  # NEXT_STEP autoreset: this step only resets
            self._t = 0
            self._prev_done = False
            obs = self._draw(r, self.np_random)
            zeros = np.zeros(r, dtype=np.bool_)
            return obs, np.zeros(r), zeros, zeros.copy(), {}
        acts = _check_actions(actions, r)
        reward, info = self._outcome(acts, self.np_random)
        self._t += 1
        done = self._t >= self.horizon
        self._prev_done = done
        obs = self._draw(r, self.np_random)
        return obs, reward, np.zeros(r, dtype=np.bool_), np.full(r, done), info
