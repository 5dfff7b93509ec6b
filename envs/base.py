"""The Gymnasium ``Env`` and native ``VectorEnv`` shared by every bandit schedule (App. H-1).

Each environment module (``two_armed_shift``, ``piecewise``, ``drifting``) only turns its
constructor arguments into a :class:`~envs.core.Schedule`; stepping, seeding, ``info``,
rendering and autoreset live here, once. Both classes wrap the same batched
:class:`~envs.core.BanditCore`: the ``Env`` with one copy, the ``VectorEnv`` with ``num_envs``
copies held in numpy arrays, following Gymnasium's ``CartPoleEnv`` / ``CartPoleVectorEnv`` pair.

Episode (both classes): action ``Discrete(K)``; observation ``Discrete(1)``, always ``0`` (a
bandit has no state); the reward of step ``t`` (0-based) is drawn from the arms' distributions at
``t``; ``terminated`` is always ``False``; ``truncated`` is ``True`` on step ``horizon - 1``, the
last one. ``info`` holds *evaluation data an agent must not read*: ``"t"`` (the 0-based step just
taken), ``"expected_rewards"`` (the exact expected reward of every arm at ``t``),
``"optimal_arm"`` and ``"regret"`` (``max_a mu_a(t) - mu_{a_t}(t)``, the step's dynamic
pseudo-regret). ``reset`` returns ``(0, {})``.
"""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Callable
from typing import Any, ClassVar, Generic, TypeVar, cast, overload

import gymnasium as gym
import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from gymnasium.error import ResetNeeded
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from dpbandits.core import checks
from dpbandits.core.checks import ParameterError
from envs.core import (
    BanditCore,
    FloatArray,
    IntArray,
    Schedule,
    as_steps,
    check_action,
    check_actions,
    check_int,
    check_seed,
    format_means,
)

RENDER_MODES = ["ansi"]

T = TypeVar("T")


def np_random_getter(env: Any) -> Callable[[], np.random.Generator]:
    """A getter of ``env.np_random`` for the env's :class:`BanditCore` that does not keep the env
    alive. The core is the env's own attribute: a strong reference back (``lambda:
    env.np_random``) would make a reference cycle, and the env's ``(T, K)`` tables would wait
    for the garbage collector -- gigabytes held for nothing in a sweep of many-armed cells."""
    ref = weakref.ref(env)

    def get() -> np.random.Generator:
        e = ref()
        if e is None:  # the core outlived its env (only a caller holding the core alone)
            raise ReferenceError("the environment of this BanditCore no longer exists")
        return cast(np.random.Generator, e.np_random)

    return get


class _FromSchedule(Generic[T]):
    """A read-only attribute of the environment: the schedule's attribute of the same name."""

    def __init__(self, doc: str) -> None:
        self.__doc__ = doc

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> _FromSchedule[T]: ...
    @overload
    def __get__(self, obj: object, owner: type | None = None) -> T: ...
    def __get__(self, obj: object | None, owner: type | None = None) -> T | _FromSchedule[T]:
        if obj is None:
            return self
        value: T = getattr(obj.schedule, self.name)  # type: ignore[attr-defined]
        return value

    def __set__(self, obj: object, value: object) -> None:
        raise AttributeError(f"{self.name} is read-only (it is the schedule's)")


class _ScheduleMixin:
    """Read-only views of the schedule shared by the ``Env`` and the ``VectorEnv``."""

    schedule: Schedule

    n_arms: _FromSchedule[int] = _FromSchedule("Number of arms ``K``.")
    horizon: _FromSchedule[int] = _FromSchedule(
        "Episode length: the episode is truncated on step ``horizon - 1``."
    )
    change_points: _FromSchedule[tuple[int, ...]] = _FromSchedule(
        "0-based steps where a new segment starts: the first step with the new parameters."
    )
    arm: _FromSchedule[str] = _FromSchedule(
        '``"gaussian"`` (clipped to ``[lo, hi]``) or ``"bernoulli"``.'
    )
    lo: _FromSchedule[float] = _FromSchedule(
        "Lower reward bound (clipping bound of Gaussian arms)."
    )
    hi: _FromSchedule[float] = _FromSchedule(
        "Upper reward bound (clipping bound of Gaussian arms)."
    )

    def expected_rewards(self, t: int) -> FloatArray:
        """Exact expected reward of every arm at 0-based step ``t``, shape ``(K,)`` (App. H-1)."""
        return self.schedule.expected[as_steps("t", t, self.horizon)].copy()

    def means(self, t: int) -> FloatArray:
        """Means ``m_a(t)`` before clipping (Bernoulli: success probabilities), shape ``(K,)``."""
        return self.schedule.means[as_steps("t", t, self.horizon)].copy()

    def expected_reward_table(self) -> FloatArray:
        """Expected reward of every arm at every step, read-only ``(horizon, K)``."""
        return self.schedule.expected

    def optimal_arms(self) -> IntArray:
        """Arm of highest expected reward at every step (ties: lowest index), ``(horizon,)``."""
        return self.schedule.optimal

    def regret_table(self) -> FloatArray:
        """``regret[t, a] = max_b mu_b(t) - mu_a(t)``, read-only ``(horizon, K)``."""
        return self.schedule.regret

    def quantile_range_table(
        self, steps: npt.ArrayLike, levels: tuple[float, float] = (0.1, 0.9)
    ) -> FloatArray:
        """``Q(levels[1]) - Q(levels[0])`` of each arm's reward law at the 0-based ``steps``,
        shape ``(len(steps), K)``: the true value the windowed sensitivities estimate (Fig. 9c/d).

        Clipped Gaussian arms: ``Q(p) = clip(m + s Phi^-1(p), lo, hi)``; Bernoulli arms:
        ``Q(p) = 1[p > 1 - m]``.
        """
        from scipy.special import ndtri

        idx = np.asarray(steps, dtype=np.int64)
        m = self.schedule.means[idx]
        if self.arm == "gaussian":
            s = np.asarray(self.sds_table())[idx]
            q_lo = np.clip(m + s * ndtri(levels[0]), self.lo, self.hi)
            q_hi = np.clip(m + s * ndtri(levels[1]), self.lo, self.hi)
        else:
            q_lo = (levels[0] > 1.0 - m).astype(float)
            q_hi = (levels[1] > 1.0 - m).astype(float)
        return np.asarray(q_hi - q_lo, dtype=np.float64)

    def means_table(self) -> FloatArray:
        """``m_a(t)`` at every step, read-only ``(horizon, K)``."""
        return self.schedule.means

    def sds_table(self) -> FloatArray | None:
        """``s_a(t)`` at every step, read-only ``(horizon, K)``; ``None`` for Bernoulli arms."""
        return self.schedule.sds

    def _render_line(self, core: BanditCore, copy: int) -> str:
        t_show = max(core.t, 0)
        head = f"t={core.t}" if core.t >= 0 else "t=- (no step yet)"
        parts = [head, f"means={format_means(self.schedule.means[t_show])}"]
        if self.schedule.sds is not None:
            parts.append(f"sds={format_means(self.schedule.sds[t_show])}")
        if core.last_actions is not None and core.last_rewards is not None:
            parts.append(f"last action={int(core.last_actions[copy])}")
            parts.append(f"reward={float(core.last_rewards[copy]):.3f}")
        else:
            parts.append("last action=-")
        return "  ".join(parts)


def env_signature(build_schedule: Callable[..., Any]) -> inspect.Signature:
    """The signature of an environment built by ``build_schedule``: its arguments, then
    ``render_mode`` (what ``help()`` and ``inspect.signature`` show for the class)."""
    render_mode = inspect.Parameter(
        "render_mode",
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        default=None,
        annotation="str | None",
    )
    params = inspect.signature(build_schedule).parameters.values()
    return inspect.Signature([*params, render_mode])


def vector_signature(env_class: type) -> inspect.Signature:
    """The signature of a vector environment that takes ``env_class``'s arguments after
    ``num_envs``."""
    num_envs = inspect.Parameter(
        "num_envs", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=1, annotation="int"
    )
    return inspect.Signature([num_envs, *inspect.signature(env_class).parameters.values()])


class BanditEnv(_ScheduleMixin, gym.Env[Any, Any]):
    """One replication of a bandit schedule.

    A subclass sets :attr:`build_schedule`; it takes that function's arguments, then
    ``render_mode``.
    """

    metadata: dict[str, Any] = {"render_modes": RENDER_MODES, "render_fps": 4}

    #: The function that turns the environment's arguments into its :class:`Schedule`.
    build_schedule: ClassVar[Callable[..., Schedule]]
    #: Its arguments, then ``render_mode``: what :meth:`__init__` takes.
    arguments: ClassVar[inspect.Signature]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "build_schedule" in cls.__dict__:
            cls.arguments = env_signature(cls.build_schedule)
        # help() and inspect.signature show the arguments, unless a subclass has its own __init__
        own_init = "__init__" in cls.__dict__
        signature = None if own_init else getattr(cls, "arguments", None)
        cls.__signature__ = signature  # type: ignore[attr-defined]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """The arguments of :attr:`build_schedule`, then ``render_mode`` (None or "ansi")."""
        arguments = checks.bind(self.arguments, args, kwargs, type(self).__name__).arguments
        render_mode = arguments.pop("render_mode", None)
        schedule = self.build_schedule(**arguments)
        checks.one_of(render_mode, (None, *RENDER_MODES), "render_mode")
        self.schedule = schedule
        self.render_mode = render_mode
        self.action_space = spaces.Discrete(schedule.n_arms)
        self.observation_space = spaces.Discrete(1)
        self._core = BanditCore(schedule, 1, np_random_getter(self))

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[int, dict[str, Any]]:
        """Start an episode at step 0; ``seed`` reseeds ``np_random`` (Gymnasium convention)."""
        super().reset(seed=check_seed(seed))
        self._core.reset()
        return 0, {}

    def step(self, action: int) -> tuple[int, float, bool, bool, dict[str, Any]]:
        """Pull arm ``action``; returns ``(0, reward, False, truncated, info)``."""
        a = check_action(action, self.schedule.n_arms)
        core = self._core
        if not core.started or core.done:
            raise ResetNeeded(
                "call reset() before step(): "
                + (
                    "the environment was never reset"
                    if not core.started
                    else f"the episode ended at the horizon ({self.horizon} steps)"
                )
            )
        acts = np.array((a,), dtype=np.int64)
        rewards, expected, steps, optimal, regret = core.step(acts)
        info = {
            "t": int(steps[0]),
            "expected_rewards": expected[0],
            "optimal_arm": int(optimal[0]),
            "regret": float(regret[0]),
        }
        return 0, float(rewards[0]), False, core.done, info

    def render(self) -> str | None:
        """``"ansi"``: one line with ``t``, the current means (and sds) and the last action."""
        if self.render_mode is None:
            gym.logger.warn(
                "You are calling render method without specifying any render mode, "
                'e.g. gymnasium.make(..., render_mode="ansi")'
            )
            return None
        return self._render_line(self._core, 0)


class BanditVectorEnv(_ScheduleMixin, VectorEnv[IntArray, IntArray, npt.NDArray[Any]]):
    """``num_envs`` replications of a bandit schedule in numpy arrays (``CartPoleVectorEnv``).

    Autoreset follows ``AutoresetMode.NEXT_STEP``: on the step after the one that returned
    ``truncated`` (the horizon), every copy is reset; that step ignores ``actions`` and returns
    observations ``0``, rewards ``0.0``, ``terminated = truncated = False`` and ``info == {}``
    (the reset info), and the following step is step ``t = 0`` of a new episode whose draws
    continue the generator's stream. All copies share the step index, so they are truncated and
    reset together; partial resets (``options["reset_mask"]``) are not supported.

    Step ``info`` (every copy has every key, so no ``_key`` masks): ``"t"`` (R,) int64,
    ``"expected_rewards"`` (R, K), ``"optimal_arm"`` (R,) int64, ``"regret"`` (R,) float64.
    """

    metadata: dict[str, Any] = {
        "render_modes": RENDER_MODES,
        "render_fps": 4,
        "autoreset_mode": AutoresetMode.NEXT_STEP,
    }

    #: The one-copy environment: a subclass takes its arguments, after ``num_envs``.
    env_class: ClassVar[type[BanditEnv]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # help() and inspect.signature show num_envs and the arguments of env_class, unless a
        # subclass has its own __init__
        own_init = "__init__" in cls.__dict__ or not hasattr(cls, "env_class")
        signature = None if own_init else vector_signature(cls.env_class)
        cls.__signature__ = signature  # type: ignore[attr-defined]

    def __init__(self, num_envs: int = 1, *args: Any, **kwargs: Any) -> None:
        """``num_envs`` copies of ``env_class(*args, **kwargs)``, which checks the arguments
        and builds the schedule the copies share."""
        single = self.env_class(*args, **kwargs)
        schedule = single.schedule
        self.num_envs = check_int("num_envs", num_envs, minimum=1)
        self.schedule = schedule
        self.render_mode = single.render_mode
        self.single_action_space = spaces.Discrete(schedule.n_arms)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.single_observation_space = spaces.Discrete(1)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self._core = BanditCore(schedule, self.num_envs, np_random_getter(self))
        self._prev_done = False

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[IntArray, dict[str, Any]]:
        """Reset every copy to step 0; ``seed`` reseeds ``np_random``."""
        if options and "reset_mask" in options:
            raise ValueError(
                "options['reset_mask'] is not supported: all copies share the step index "
                "(AutoresetMode.NEXT_STEP resets them together)"
            )
        super().reset(seed=check_seed(seed))
        self._core.reset()
        self._prev_done = False
        return np.zeros(self.num_envs, dtype=np.int64), {}

    def step(
        self, actions: npt.ArrayLike
    ) -> tuple[IntArray, FloatArray, npt.NDArray[np.bool_], npt.NDArray[np.bool_], dict[str, Any]]:
        """Pull ``actions[i]`` in copy ``i``; returns batched ``(obs, rew, term, trunc, info)``."""
        acts = check_actions(actions, self.num_envs, self.schedule.n_arms)
        core = self._core
        if not core.started:
            raise ResetNeeded("call reset() before step()")
        R = self.num_envs
        if self._prev_done:
            # NEXT_STEP autoreset: this step only resets (the actions are ignored).
            core.reset()
            self._prev_done = False
            return (
                np.zeros(R, dtype=np.int64),
                np.zeros(R, dtype=np.float64),
                np.zeros(R, dtype=np.bool_),
                np.zeros(R, dtype=np.bool_),
                {},
            )
        rewards, expected, steps, optimal, regret = core.step(acts)
        done = core.done
        self._prev_done = done
        info = {"t": steps, "expected_rewards": expected, "optimal_arm": optimal, "regret": regret}
        truncated = np.ones(R, dtype=np.bool_) if done else np.zeros(R, dtype=np.bool_)
        return np.zeros(R, dtype=np.int64), rewards, np.zeros(R, dtype=np.bool_), truncated, info

    def pull(self, actions: IntArray) -> FloatArray:
        """Rewards only: one step of every copy without ``obs``, flags or ``info``.

        The batched engine's hot path (``dpbandits.experiments.engine``): ``actions`` must be an
        int64
        array of shape ``(num_envs,)``, and the episode must not be over. Validity is not
        checked, except that an action ``>= K`` or ``< -K`` falls outside the reward tape and
        raises ``IndexError``; the caller must reject actions in ``[-K, -1]`` itself (the engine
        checks the actions it stores). Same draws and same state change as :meth:`step`, so the
        two can be mixed.
        """
        core = self._core
        if self._prev_done or not core.started:
            raise ResetNeeded("pull() needs a running episode: call reset() first")
        rewards = core.pull(actions)
        self._prev_done = core.t >= core.schedule.horizon - 1
        return rewards

    def reward_rows(self, max_steps: int) -> FloatArray:
        """The rewards of the next ``m <= max_steps`` steps of every copy for every arm, for a
        caller that plays those steps itself (the engine's compiled agents, ``Agent.play``).

        A read-only ``(m, K * R)`` array, ``1 <= m <= max_steps`` (fewer at the end of a block
        of the reward tape: call again for the rest): copy ``r`` playing arm ``a`` at the
        ``i``-th step gets ``rows[i, a * R + r]``. The episode advances by ``m`` steps, with the
        same draws as ``m`` calls of :meth:`pull`. ``max_steps`` must be at least 1 and at most
        the steps left before the horizon.
        """
        core = self._core
        if self._prev_done or not core.started:
            raise ResetNeeded("reward_rows() needs a running episode: call reset() first")
        left = core.schedule.horizon - 1 - core.t
        if not (1 <= max_steps <= left):
            raise ParameterError(
                f"max_steps must be in [1, {left}] (steps left), got {max_steps}", "max_steps"
            )
        rows = core.rows(max_steps)
        self._prev_done = core.t >= core.schedule.horizon - 1
        return rows

    def render(self) -> tuple[str, ...] | None:
        """``"ansi"``: one line per copy with ``t``, the current means and its last action."""
        if self.render_mode is None:
            gym.logger.warn(
                "You are calling render method without specifying any render mode, "
                'e.g. gymnasium.make_vec(..., render_mode="ansi")'
            )
            return None
        return tuple(self._render_line(self._core, i) for i in range(self.num_envs))
