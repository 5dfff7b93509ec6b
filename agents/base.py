"""The agent protocol: batched bandit learners (docs/architecture.md).

An agent plays ``R`` independent replications of a ``K``-armed bandit in lockstep. The
experiment engine (:func:`dpbandits.experiments.run`) drives it::

    agent.reset(n_runs=R, n_arms=K, horizon=T, rng=rng)
    for t in range(T):
        actions = agent.act()              # (R,) int64, one arm per replication
        rewards = env.step(actions)        # (R,) float
        agent.update(actions, rewards)

Optional hooks, used for plots and reports when present: ``private_means() -> (R, K)``,
``sensitivities() -> (R, K)``, ``privacy_report() -> dict``. A private agent's report holds
``"epsilon_total"``: the eps of global DP of its whole run (reward sequences that differ in one
step are neighbours), the claim ``dpbandits.testing.audit_agent`` checks end to end.

:class:`Agent` implements the protocol and the part every agent shares: the first ``K`` steps
pull each arm once, in order (App. H: data independent, no privacy cost). A subclass writes
three small methods:

- :meth:`Agent.setup` -- allocate per-replication state (called by :meth:`Agent.reset`);
- :meth:`Agent.choose` -- return the ``(R,)`` actions after the initial round;
- :meth:`Agent.observe` -- learn from ``(actions, rewards)`` (called for every step, including
  the initial round).

An agent whose step is compiled (``dpbandits.core.jit``) also implements
``play(rows, actions, rewards)``: it plays ``m = len(rows)`` steps in one call against the
environment's reward tape (``rows`` ``(m, K * R)`` from ``BanditVectorEnv.reward_rows``:
replication ``r`` playing arm ``a`` at the ``i``-th step gets ``rows[i, a * R + r]``), writes
the arms it played into ``actions`` ``(m, R)`` and the rewards it got into ``rewards``
``(m, R)``, and advances ``t`` by ``m`` (:meth:`Agent.played`). It uses the same compiled
functions as its ``choose``/``observe``, so the two paths give identical results. The engine
uses it when :meth:`Agent.block_player` allows. The agents of the compiled skeleton
(:mod:`agents.skeleton`, docs/agents.md) get ``choose``, ``observe`` and ``play`` written once
around their own compiled kernels.

Nothing inside a step loops over replications or arms in Python; :class:`ArmStatistics` is the
batched bookkeeping of pull counts and reward sums that most agents need (its home is
:mod:`dpbandits.core.arms`, the per-(replication, arm) layout shared with the private parts).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Hashable, Mapping
from typing import Any, ClassVar, TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpbandits.core import checks
from dpbandits.core.arms import ArmStatistics
from dpbandits.core.checks import positive_int
from dpbandits.core.jit import inline_kernel, kernel
from dpbandits.core.params import Param, check_params
from dpbandits.core.traits import AgentTraits

__all__ = [
    "Agent",
    "ArmStatistics",
    "variant",
    "bernoulli_error",
    "bernoulli_reward",
    "in_bernoulli",
    "in_unit_interval",
    "unit_interval_error",
    "unit_reward",
]


@inline_kernel
def unit_reward(v: float) -> bool:
    """Whether the reward ``v`` is in ``[0, 1]`` (NaN is not)."""
    return v >= 0.0 and v <= 1.0


@inline_kernel
def bernoulli_reward(v: float) -> bool:
    """Whether the reward ``v`` is 0 or 1."""
    return v == 0.0 or v == 1.0


@kernel
def in_unit_interval(x: Any) -> bool:
    """Whether every reward of ``x`` is in ``[0, 1]`` (NaN is not): the agents built for such
    rewards (Bernoulli Thompson sampling, Exp3) check each step with it, compiled or not."""
    for v in x:
        if not unit_reward(v):
            return False
    return True


def unit_interval_error(agent: str, x: NDArray[np.float64]) -> ValueError:
    """The refusal of rewards ``x`` outside ``[0, 1]`` by ``agent`` (:func:`in_unit_interval`)."""
    return ValueError(f"{agent} needs rewards in [0, 1], got min {x.min()}, max {x.max()}")


@kernel
def in_bernoulli(x: Any) -> bool:
    """Whether every reward of ``x`` is 0 or 1: the agents built for Bernoulli bandits only
    (DP-KLUCB, DP-IMED) check each step with it, compiled or not."""
    for v in x:
        if not bernoulli_reward(v):
            return False
    return True


def bernoulli_error(agent: str, x: NDArray[np.float64]) -> ValueError:
    """The refusal of rewards ``x`` that are not all 0 or 1 by ``agent`` (:func:`in_bernoulli`),
    naming the first such reward."""
    bad = x[(x != 0.0) & (x != 1.0)]
    return ValueError(
        f"{agent} is for Bernoulli bandits and needs rewards in {{0, 1}}, got {float(bad[0])!r}"
    )


class Agent:
    """Base class of batched bandit agents (the protocol in docs/architecture.md).

    Constructor arguments are stored unchanged and shown in ``repr`` (scikit-learn style);
    per-run state is created by :meth:`reset`. After ``reset``, ``n_runs``, ``n_arms``,
    ``horizon`` (may be ``None``), ``rng`` (a ``numpy.random.Generator``) and ``t`` (the number of
    completed steps) are available to subclasses.
    """

    #: Short name used in tables and by :func:`agents.make`.
    name: str = "agent"
    #: The constraint of each constructor argument (:class:`dpbandits.core.params.Param`),
    #: declared once: :meth:`reset` checks them before :meth:`setup`, and experiment configs,
    #: ``agents.describe`` and ``dpbandits list`` read the same table.
    parameter_constraints: ClassVar[Mapping[str, Param]] = {}
    #: What the agent is (:class:`dpbandits.core.traits.AgentTraits`): the rewards it accepts,
    #: whether it is private, compiled, needs the horizon. Read by the engine, experiment
    #: configs, the command line and the audits (:func:`dpbandits.core.traits.traits_of`)
    #: instead of probing the agent; a class that declares none (``None``, e.g. a course
    #: exercise) gets the traits its hooks show.
    traits: ClassVar[AgentTraits | None] = None

    n_runs: int
    n_arms: int
    horizon: int | None
    rng: np.random.Generator
    t: int

    # -- the protocol ---------------------------------------------------------------------
    def reset(
        self,
        n_runs: int,
        n_arms: int,
        *,
        horizon: int | None = None,
        rng: np.random.Generator | int | None = None,
    ) -> None:
        """Start ``n_runs`` fresh replications of a ``n_arms``-armed bandit.

        The one place where an agent checks its parameters: the table
        :attr:`parameter_constraints` first, then :meth:`setup` (the checks that need the
        sizes or the horizon). A bad value raises here, naming the parameter."""
        self.n_runs = positive_int(n_runs, "n_runs")
        self.n_arms = positive_int(n_arms, "n_arms")
        self.horizon = None if horizon is None else positive_int(horizon, "horizon")
        # every agent keeps a few (R, K) float arrays: refuse sizes that cannot fit, up-front
        checks.memory(4 * self.n_runs * self.n_arms, f"n_runs * n_arms = {n_runs} * {n_arms}")
        self.rng = checks.generator(rng)
        self.t = 0
        self._acted: Any = None
        self._initial = [np.full(self.n_runs, a, dtype=np.int64) for a in range(self.n_arms)]
        check_params(self, type(self).parameter_constraints)
        self.setup()

    def needed_horizon(self, why: str) -> int:
        """The horizon given to :meth:`reset`, for a :meth:`setup` whose algorithm needs it
        (``why`` says what for, e.g. ``"DPSE(beta=None) takes beta = 1/T"``); without it, a
        one-line :class:`~dpbandits.core.checks.ParameterError` naming ``horizon``, raised in
        ``reset`` before any work (docs/private-bandits.md, "Bad parameters")."""
        if self.horizon is None:
            raise checks.ParameterError(
                f"horizon must be given, reset(..., horizon=T): {why}", "horizon"
            )
        return self.horizon

    def act(self) -> NDArray[np.int64]:
        """The ``(R,)`` actions of this step: arm ``t`` during the first ``K`` steps (App. H).

        Raises ``RuntimeError`` before :meth:`reset`."""
        try:
            t = self.t
        except AttributeError:
            raise RuntimeError(
                f"{type(self).__name__}: call reset(n_runs, n_arms, ...) before act()"
            ) from None
        out = self._initial[t].copy() if t < self.n_arms else self.choose()
        self._acted = out
        return out

    def update(self, actions: ArrayLike, rewards: ArrayLike) -> None:
        """Feed back the ``(R,)`` actions taken and the ``(R,)`` rewards observed.

        ``actions`` must be integers in ``[0, K)`` and ``rewards`` real and finite, both of shape
        ``(R,)`` (``TypeError``/``ValueError`` otherwise, before any state changes). The array
        :meth:`act` returned is trusted as it is (the engine's per-step path)."""
        try:
            acted = self._acted
        except AttributeError:
            raise RuntimeError(
                f"{type(self).__name__}: call reset(n_runs, n_arms, ...) before update()"
            ) from None
        r = checks.step_rewards(rewards, self.n_runs)
        if actions is not acted:
            actions = checks.step_actions(actions, self.n_runs, self.n_arms)
        self.observe(actions, r)
        self.t += 1

    def block_player(self) -> Callable[[Any, Any, Any], None] | None:
        """The agent's ``play`` if it may stand for the step-by-step protocol, else ``None``.

        It may when the class that defines ``play`` also gives the agent its ``act``,
        ``update``, ``choose`` and ``observe``: a subclass that overrides any of them (a course
        exercise, a variant) is played step by step, through its own methods."""
        cls = type(self)
        owner = next((c for c in cls.__mro__ if "play" in c.__dict__), None)
        if owner is None:
            return None
        for method in ("act", "update", "choose", "observe"):
            if getattr(cls, method) is not getattr(owner, method):
                return None
        return getattr(self, "play")  # noqa: B009 (not every agent has it)

    @property
    def cost_hint(self) -> float:
        """Relative CPU cost of a step (UCB ~ 1), for the engine's scheduling: the slowest tasks
        run first (docs/performance.md). A subclass overrides it with a class attribute, or a
        property when it depends on the parameters (the private agent's selector)."""
        return 1.0

    def compile_key(self, n_arms: int) -> Hashable:
        """What this agent's compiled code depends on, for ``n_arms`` arms: agents with equal
        keys share their compiled loops (the engine's warm-up,
        ``dpbandits.experiments.warmup``, compiles them once). Default: the class and the
        parameters (``repr``); an agent whose loop depends on less says so."""
        return (type(self), repr(self))

    def played(self, n: int) -> None:
        """Record that ``play`` has just played ``n`` steps (``t`` advances; the next ``update``
        validates its actions, as none came from ``act``)."""
        self.t += n
        self._acted = None

    # -- what a subclass writes -----------------------------------------------------------
    def setup(self) -> None:
        """Allocate per-replication state (``self.n_runs``, ``self.n_arms`` are set, and the
        parameters of :attr:`parameter_constraints` are checked)."""

    def choose(self) -> NDArray[np.int64]:
        """Return the ``(R,)`` int64 actions for step ``self.t`` (``t >= n_arms``)."""
        raise NotImplementedError(f"{type(self).__name__} must implement choose()")

    def observe(self, actions: NDArray[np.int64], rewards: NDArray[np.float64]) -> None:
        """Learn from one step; called before ``self.t`` is incremented."""

    # -- conveniences ---------------------------------------------------------------------
    def keep_parameters(self, arguments: Mapping[str, Any]) -> None:
        """Store a constructor's arguments unchanged under their names (:meth:`reset` checks
        them): ``arguments`` is the ``locals()`` of the ``__init__``, taken first thing, so
        every name in it (``self`` and the ``__class__`` cell of ``super()`` aside) is a
        parameter, declared in :attr:`parameter_constraints` (``TypeError`` otherwise). The
        class annotates the parameters (``m: int``) for type checkers."""
        declared = type(self).parameter_constraints
        for name, value in arguments.items():
            if name in ("self", "__class__"):
                continue
            if name not in declared:
                raise TypeError(f"{type(self).__name__}: {name!r} is not a parameter declared "
                                "in its parameter_constraints")  # fmt: skip
            setattr(self, name, value)

    def get_params(self) -> dict[str, Any]:
        """Constructor arguments (by name) as stored on the instance."""
        params: dict[str, Any] = {}
        for p in inspect.signature(type(self).__init__).parameters.values():
            if p.name == "self" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                continue
            if hasattr(self, p.name):
                params[p.name] = getattr(self, p.name)
        extra = getattr(self, "extra_params", None)
        if isinstance(extra, dict):
            params.update(extra)
        return params

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"


_A = TypeVar("_A", bound=type)


def variant(*, before: str | None = None, **defaults: Any) -> Callable[[_A], _A]:
    """A class decorator for an agent that is its base class with other constructor defaults
    (e.g. DP-UCB-BOUND: DP-UCB with ``mechanism="hybrid"``) and, optionally, parameters of its
    own: a name the base's constructor does not take is a new parameter with that default,
    declared in the class's :attr:`~Agent.parameter_constraints` (its annotation is the
    rule's, :attr:`~dpbandits.core.params.Param.annotation`) and placed before the base's
    parameter ``before`` (default: after the last positional one); the class's ``__init__``
    stores it and passes the others on. The class gets an ``__init__`` with this signature,
    read by ``inspect.signature``, ``agents.describe``, ``get_params`` and ``repr`` as a
    written one would be."""

    def decorate(cls: _A) -> _A:
        base_init: Callable[..., None] = cls.__mro__[1].__init__  # type: ignore[misc]
        signature = inspect.signature(base_init)
        declared = getattr(cls, "parameter_constraints", {})
        added = [name for name in defaults if name not in signature.parameters]
        undeclared = sorted(set(added) - set(declared))
        if undeclared:
            raise TypeError(f"{cls.__name__}: {undeclared} are neither parameters of its base "
                            "class nor declared in its parameter_constraints")  # fmt: skip
        kept = [
            p.replace(default=defaults[p.name]) if p.name in defaults else p
            for p in signature.parameters.values()
        ]
        names = [p.name for p in kept]
        if before is not None and before not in names:
            raise TypeError(f"{cls.__name__}: before={before!r} is not a parameter of its base "
                            f"class {names[1:]}")  # fmt: skip
        positional = [p for p in kept if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        at = len(positional) if before is None else names.index(before)
        kept[at:at] = [
            inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                              default=defaults[name], annotation=declared[name].annotation)
            for name in added
        ]  # fmt: skip
        new = signature.replace(parameters=kept)

        def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
            # (refused as a written __init__ is, naming the class)
            bound = checks.bind(new, (self, *args), kwargs, __init__.__qualname__)
            bound.apply_defaults()
            for name in added:  # (the base's parameters after it then go by keyword)
                setattr(self, name, bound.arguments.pop(name))
            base_init(*bound.args, **bound.kwargs)

        __init__.__signature__ = new  # type: ignore[attr-defined]
        __init__.__qualname__ = f"{cls.__qualname__}.__init__"
        __init__.__module__ = cls.__module__  # (where the docs' reference finds it)
        cls.__init__ = __init__  # type: ignore[misc]
        return cls

    return decorate
