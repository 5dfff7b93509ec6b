"""Local differential privacy at the user: a reward wrapper for any environment (Ren, Zhou, Liu
& Shroff 2020, "Multi-armed bandits with local differential privacy", Sec. 3).

Every reward an environment returns is replaced by the report of an eps-LDP randomizer
(:class:`dpbandits.trust.randomizers.LocalRandomizer`: the Laplace mechanism, Ren et al.'s
CTL, or randomized response on a Bernoulli coin, their CTB) before any agent sees it. An agent
run on the wrapped environment sees reports only, so whatever it does -- actions, estimates,
everything it outputs -- is post-processing of eps-LDP reports: the run is eps-LDP, and also
eps-DP in the global sense (two reward sequences that differ in one step give reports that
differ in law at that step only, by a factor at most ``e^eps``).
:meth:`LocalDPReward.privacy_report` says so, and the experiment engine records it in
``Results.privacy`` beside the agent's own report.

Reports are unbiased by default (``debias=True``: ``E[report] = E[reward]``; randomized response
rescaled), so regret against the arms' true means is measured as before; ``debias=False`` gives
the raw bit of randomized response (ordered like the reward), which Bernoulli-only learners
accept. Laplace reports are real numbers outside the reward range: learners that refuse rewards
outside ``[0, 1]`` (AdaP-UCB, Bernoulli Thompson sampling) refuse them too, which is right --
their guarantees and confidence widths are for bounded rewards.

The randomizer needs the reward range ``[lo, hi]`` (the Laplace scale is ``(hi - lo) / eps``;
randomized response maps ``[lo, hi]`` onto a coin). It is read from the project's environments
(Bernoulli arms: ``[0, 1]``; clipped Gaussian arms: their clipping bounds) or given as
``bounds=(lo, hi)``; for any other environment without ``bounds`` the wrapper refuses, before
any work, naming ``bounds``. ``mechanism="auto"`` takes randomized response for Bernoulli arms
and the Laplace mechanism otherwise.

Forms (both registered as ``dpbandits/LocalDP-v0``, whose ``env`` argument is the wrapped
environment's id or config ``{"id": ..., **kwargs}``):

- :class:`LocalDPReward`, a ``gymnasium.RewardWrapper`` around any ``Env``;
- :class:`LocalDPBanditVectorEnv`, the project's vector bandits with privatized reward tapes
  (the experiment engine's fast paths, ``pull`` and ``reward_rows``, read the privatized tape;
  every arm's candidate reward of a step is privatized, one draw each, from the environment's
  generator after the tape's own draws);
- :class:`LocalDPVectorReward`, a vector wrapper around any other ``VectorEnv``.

The reports' randomness comes from the environment's generator (``reset(seed=...)``), so a
seeded run is reproducible; the single and vector forms draw in different orders.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.envs.registration import load_env_creator
from gymnasium.vector import VectorEnv, VectorWrapper

from dpbandits.accounting import local_dp_report as accounting_local_report
from dpbandits.core import checks
from dpbandits.core.checks import ParameterError
from dpbandits.trust.randomizers import LocalRandomizer
from envs.base import BanditVectorEnv, np_random_getter
from envs.core import BanditCore, Schedule

__all__ = [
    "LocalDPBanditVectorEnv",
    "LocalDPReward",
    "LocalDPVectorReward",
    "local_dp_report",
    "make_local_dp",
    "make_local_dp_vector",
    "randomizer_for",
]

MECHANISM_CHOICES = ("auto", "laplace", "response")


def _arm_bounds(env: Any) -> tuple[str | None, tuple[float, float] | None]:
    """The reward law and range the project's environments state (``arm``, ``lo``, ``hi``)."""
    u = getattr(env, "unwrapped", env)
    arm = getattr(u, "arm", None)
    if arm == "bernoulli":
        return "bernoulli", (0.0, 1.0)
    if arm == "gaussian":
        return "gaussian", (float(u.lo), float(u.hi))
    return None, None


def randomizer_for(env: Any, epsilon: float, mechanism: str = "auto",
                   bounds: Any = None, debias: bool = True) -> LocalRandomizer:  # fmt: skip
    """The randomizer for ``env``'s rewards (module docstring): its range from ``bounds`` or
    the environment, its mechanism from ``mechanism`` (``"auto"``: randomized response for
    Bernoulli arms, else Laplace). Raises before any work when the range is unknown."""
    checks.one_of(mechanism, MECHANISM_CHOICES, "mechanism")
    arm, known = _arm_bounds(env)
    if bounds is not None:
        if isinstance(bounds, (str, bytes)) or not hasattr(bounds, "__len__") or len(bounds) != 2:
            raise ParameterError(f"bounds must be a pair (lo, hi), got {bounds!r}", "bounds")
        lo, hi = bounds
    elif known is not None:
        lo, hi = known
    else:
        name = type(getattr(env, "unwrapped", env)).__name__
        raise ParameterError(
            f"the reward range of {name} is unknown: pass bounds=(lo, hi). The local randomizer "
            "needs both bounds: the Laplace mechanism's scale is (hi - lo)/eps, and randomized "
            "response maps [lo, hi] onto a coin",
            "bounds",
        )
    chosen = mechanism
    if mechanism == "auto":
        chosen = "response" if arm == "bernoulli" else "laplace"
    try:
        return LocalRandomizer(epsilon, chosen, lo, hi, debias)
    except ParameterError:
        raise
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"LocalDP: {exc}") from None


def local_dp_report(randomizer: LocalRandomizer) -> dict[str, Any]:
    """The privacy report of a run on an environment wrapped with ``randomizer``: eps-LDP, and
    eps-DP for the whole run (:func:`dpbandits.accounting.local_dp_report`)."""
    report = accounting_local_report("local randomizer at the user", randomizer.epsilon,
                                     randomizer.description)  # fmt: skip
    report.update(mechanism=randomizer.mechanism, debias=randomizer.debias,
                  bounds=[randomizer.lo, randomizer.hi])  # fmt: skip
    return report


def _inner_spec(env: Any, horizon: int | None = None) -> tuple[str, dict[str, Any]]:
    """The wrapped environment's id and arguments (``horizon`` added when given)."""
    if isinstance(env, str):
        return env, ({} if horizon is None else {"horizon": horizon})
    if isinstance(env, Mapping) and isinstance(env.get("id"), str):
        cfg = dict(env)
        env_id = cfg.pop("id")
        kwargs = dict(cfg.pop("kwargs", {}))
        kwargs.update(cfg)
        if horizon is not None:
            kwargs["horizon"] = horizon
        return env_id, kwargs
    raise ParameterError(
        f"env must be an environment id or a config {{'id': ..., **kwargs}}, got {env!r}", "env"
    )


class LocalDPReward(gym.RewardWrapper[Any, Any]):
    """Every reward of ``env`` replaced by its eps-LDP report (module docstring).

    Parameters
    ----------
    env:
        Any Gymnasium environment.
    epsilon:
        The local privacy parameter of every report (> 0).
    mechanism:
        ``"auto"`` (randomized response for Bernoulli arms, else Laplace), ``"laplace"`` or
        ``"response"``.
    bounds:
        The reward range ``(lo, hi)``; ``None`` reads it from the project's environments and
        refuses any other environment.
    debias:
        Unbiased reports (default) or, for randomized response, the raw bit.
    """

    def __init__(self, env: gym.Env[Any, Any], epsilon: float = 1.0, mechanism: str = "auto",
                 bounds: Any = None, debias: bool = True) -> None:  # fmt: skip
        self.randomizer = randomizer_for(env, epsilon, mechanism, bounds, debias)
        super().__init__(env)

    def reward(self, reward: Any) -> float:
        return float(self.randomizer.privatize(np.array([reward], dtype=float), self.np_random)[0])

    def privacy_report(self) -> dict[str, Any]:
        """eps-LDP, and eps-DP for the whole run (:func:`local_dp_report`)."""
        return local_dp_report(self.randomizer)


class LocalDPVectorReward(VectorWrapper):
    """Every reward of a ``VectorEnv`` replaced by its eps-LDP report (module docstring); the
    arguments of :class:`LocalDPReward`. The project's vector bandits have a faster twin,
    :class:`LocalDPBanditVectorEnv`."""

    def __init__(self, env: VectorEnv[Any, Any, Any], epsilon: float = 1.0,
                 mechanism: str = "auto", bounds: Any = None,
                 debias: bool = True) -> None:  # fmt: skip
        self.randomizer = randomizer_for(env, epsilon, mechanism, bounds, debias)
        super().__init__(env)

    def step(self, actions: Any) -> Any:
        obs, rewards, terminated, truncated, info = self.env.step(actions)
        private = self.randomizer.privatize(np.asarray(rewards, dtype=float), self.np_random)
        return obs, private, terminated, truncated, info

    def privacy_report(self) -> dict[str, Any]:
        """eps-LDP, and eps-DP for the whole run (:func:`local_dp_report`)."""
        return local_dp_report(self.randomizer)


class _PrivatizedCore(BanditCore):
    """The bandit core whose reward tape is privatized block by block, after it is drawn."""

    def __init__(self, schedule: Schedule, n_copies: int, rng: Any,
                 randomizer: LocalRandomizer) -> None:  # fmt: skip
        super().__init__(schedule, n_copies, rng)
        self.randomizer = randomizer

    def _refill(self) -> None:
        super()._refill()
        self._cand = self.randomizer.privatize(self._cand, self._rng())


class LocalDPBanditVectorEnv(BanditVectorEnv):
    """``num_envs`` copies of one of the project's bandits (``env``: its id or config) whose
    rewards are eps-LDP reports (module docstring); the other arguments are those of
    :class:`LocalDPReward`. Everything else -- the schedule, ``info``, the regret tables -- is
    the wrapped bandit's."""

    def __init__(self, num_envs: int = 1, env: Any = "dpbandits/KArmedBernoulli-v0",
                 epsilon: float = 1.0, mechanism: str = "auto", bounds: Any = None,
                 debias: bool = True, render_mode: str | None = None) -> None:  # fmt: skip
        env_id, kwargs = _inner_spec(env)
        inner = gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="vector_entry_point",
                             render_mode=render_mode, **kwargs)  # fmt: skip
        if not isinstance(inner, BanditVectorEnv):
            inner.close()
            raise ParameterError(
                f"LocalDPBanditVectorEnv wraps the project's bandits; {env_id} is "
                f"{type(inner).__name__}: use LocalDPVectorReward",
                "env",
            )
        self.randomizer = randomizer_for(inner, epsilon, mechanism, bounds, debias)
        self.num_envs = inner.num_envs
        self.schedule = inner.schedule
        self.render_mode = inner.render_mode
        self.single_action_space = inner.single_action_space
        self.action_space = inner.action_space
        self.single_observation_space = inner.single_observation_space
        self.observation_space = inner.observation_space
        self.wrapped_id = env_id
        inner.close()
        self._core = _PrivatizedCore(self.schedule, self.num_envs, np_random_getter(self),
                                     self.randomizer)  # fmt: skip
        self._prev_done = False

    def privacy_report(self) -> dict[str, Any]:
        """eps-LDP, and eps-DP for the whole run (:func:`local_dp_report`)."""
        return local_dp_report(self.randomizer)


def make_local_dp(env: Any = "dpbandits/KArmedBernoulli-v0", epsilon: float = 1.0,
                  mechanism: str = "auto", bounds: Any = None, debias: bool = True,
                  render_mode: str | None = None,
                  horizon: int | None = None) -> LocalDPReward:  # fmt: skip
    """``gymnasium.make("dpbandits/LocalDP-v0", env=..., epsilon=...)``: the single form;
    ``horizon``, when given, is passed to the wrapped environment."""
    env_id, kwargs = _inner_spec(env, horizon)
    if render_mode is not None:
        kwargs["render_mode"] = render_mode
    return LocalDPReward(gym.make(env_id, **kwargs), epsilon, mechanism, bounds, debias)


def make_local_dp_vector(num_envs: int = 1, env: Any = "dpbandits/KArmedBernoulli-v0",
                         epsilon: float = 1.0, mechanism: str = "auto", bounds: Any = None,
                         debias: bool = True, render_mode: str | None = None,
                         horizon: int | None = None) -> Any:  # fmt: skip
    """``gymnasium.make_vec("dpbandits/LocalDP-v0", ...)``: :class:`LocalDPBanditVectorEnv`
    around the project's bandits, :class:`LocalDPVectorReward` around any other environment."""
    env_id, kwargs = _inner_spec(env, horizon)
    declared = gym.spec(env_id).vector_entry_point
    entry: Any = load_env_creator(declared) if isinstance(declared, str) else declared
    if isinstance(entry, type) and issubclass(entry, BanditVectorEnv):
        # the project's bandits: their reward tape is privatized (the engine's fast paths)
        return LocalDPBanditVectorEnv(num_envs, {"id": env_id, **kwargs}, epsilon, mechanism,
                                      bounds, debias, render_mode)  # fmt: skip
    if render_mode is not None:
        kwargs["render_mode"] = render_mode
    inner = gym.make_vec(env_id, num_envs=num_envs, **kwargs)
    return LocalDPVectorReward(inner, epsilon, mechanism, bounds, debias)
