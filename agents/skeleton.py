"""The compiled play skeleton: one block loop for every compiled agent (docs/agents.md, "Writing
an agent on the skeleton").

A compiled agent is its state and three small compiled functions; the loop around them -- read
the environment's reward tape, check the rewards, write the actions and rewards, learn -- is
written once, here, in :func:`_play` (the engine's block path, ``Agent.play``), :func:`_choose`
and :func:`_observe` (the step protocol, ``act``/``update``). Both paths run the agent's same
compiled functions with the same ``numpy.random.Generator`` in the same order -- at each step
every replication chooses, then every replication learns -- so they give identical results.

**State, one layout with names.** Every compiled agent keeps

- ``arms`` ``(R, K, len(ARM))`` float64: one record per (replication, arm);
- ``runs`` ``(R, len(RUN))`` float64: one record per replication;
- ``par`` a tuple of ``len(PAR)`` floats: the parameters the kernels read (a tuple is passed in
  registers, for free); a ``PAR`` value may also be an array that a mechanism of the agent owns
  and the kernels update in place (DP-UCB's hybrid mechanism, :mod:`agents.dp_ucb`);

where ``ARM``, ``RUN`` and ``PAR`` are the agent's :func:`fields` declarations, e.g.
``ARM = fields("sum", "count")``: kernels read ``arms[r, a, ARM.sum]`` (numba folds the field to
a constant), Python reads :meth:`CompiledAgent.arm_field`. Integers (counts, arm numbers) are
stored exactly as floats (below ``2**53``).

**The agent's kernels**, bound into the loop by :func:`dpbandits.core.jit.specialise` (one
compiled loop per agent class, cached on disk under its own name):

- ``round_kernel(par, t) -> float``: a value shared by every replication at step ``t``
  (0-based, ``t >= K``), e.g. ``ln t``, computed once per step (or a tuple of floats);
- ``arm_kernel(arms, runs, par, r, t, f, bits) -> int``: the arm replication ``r`` plays at step
  ``t >= K`` (``f`` from ``round_kernel``, ``bits`` the Generator's bit generator for draws);
- optional, ``prepare_kernel(arms, runs, par, t, f, bits)``: once per step ``t >= K``, before
  every replication's ``arm_kernel`` (a plain :func:`~dpbandits.core.jit.kernel` that loops
  over the replications itself): the choice of a whole step made of loops over each
  replication's arms, which cost less in one kernel than inlined per replication (Exp3 draws
  every replication's arm here, from its distribution, and its ``arm_kernel`` reads it back);
- ``learn_kernel(arms, runs, par, r, t, a, x, bits)``: replication ``r`` played arm ``a`` at step
  ``t`` (any ``t``: the first ``K`` steps pull each arm once, App. H) and got reward ``x``;
- optional, ``settle_kernel(arms, runs, par, t, actions, x, bits)``: after every replication
  has learnt step ``t`` (``actions`` and ``x`` the step's ``(R,)`` arms and rewards), once per
  step (a plain :func:`~dpbandits.core.jit.kernel`, not inlined, that loops over the
  replications itself): the place for work that is rare or large -- the end of an epoch, a
  mechanism's release -- or that learns a whole step across the replications (SW-UCB writes
  one slot of every replication's window at a time). An agent that draws in
  ``settle_kernel`` draws after the step's learning of every replication.

:class:`IndexAgent` writes ``arm_kernel`` for an index policy from the agent's
``index_kernel(arms, runs, par, r, a, f, bits) -> float``: the arm of largest index
(``numpy.argmax``'s rule: ties to the lowest arm), with optional ``held_kernel`` (an arm the
replication is committed to -- an episode's -- or ``-1``) and ``chosen_kernel`` (what choosing an
arm starts, e.g. an episode). Small kernels are best declared with
:func:`~dpbandits.core.jit.inline_kernel` (inlined into the loop: no call per replication).

Rewards are checked as the agent's traits say (:class:`dpbandits.core.traits.AgentTraits`
``rewards``: ``"real"``, ``"unit"`` for ``[0, 1]``, ``"bernoulli"`` for ``{0, 1}``), at each step,
before anything is learnt from it.

**The state is lent to the per-replication kernels.** The loops give ``arm_kernel`` and
``learn_kernel`` (and the kernels an :class:`IndexAgent` builds its ``arm_kernel`` from)
``arms``, ``runs`` and the arrays of ``par`` through :func:`dpbandits.core.jit.borrowed`: the
same arrays without their reference, valid while the loop runs. numba counts a reference to an
array at each kernel it is passed to and removes the counts again only where the inlined code is
simple -- not around loops that read the state or calls (``math.log``, a sampler's, the bit
generator's): atomic increments and decrements per replication and step, which cost CUSUM-UCB
1.45x its time per step (DP-SE 2-3x, DP-UCB 1.3-2.4x, before their work moved to
``settle_kernel``). Of a borrowed array numba counts nothing. The kernels called once per step
(``round_kernel``, ``prepare_kernel``, ``settle_kernel``) get the arrays as they are: borrowed
copies made DP-UCB's loop 1.2-1.4x slower at R = 1 (the time went to copying the settle call's
arguments; docs/performance.md, "The play skeleton's loop").
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any, ClassVar, NamedTuple

import numpy as np
from numpy.typing import NDArray

from agents.base import (
    Agent,
    bernoulli_error,
    bernoulli_reward,
    in_bernoulli,
    in_unit_interval,
    unit_interval_error,
    unit_reward,
)
from dpbandits.core.arms import read_only
from dpbandits.core.jit import (
    beats,
    borrowed,
    generator_address,
    generator_at,
    inline_kernel,
    kernel_template,
    specialise,
)
from dpbandits.core.traits import AgentTraits

__all__ = ["CompiledAgent", "IndexAgent", "fields", "no_learn", "one_based_round"]


def fields(*names: str) -> Any:
    """A record's field names, numbered: ``ARM = fields("sum", "count")`` gives ``ARM.sum == 0``,
    ``ARM.count == 1`` and ``len(ARM) == 2`` (a named tuple, which compiled code reads as
    constants)."""
    if not names or len(set(names)) != len(names):
        raise ValueError(f"fields need distinct names, got {names!r}")
    return namedtuple("Fields", names)(*range(len(names)))  # noqa: PYI024 (made at run time)


NO_FIELDS = fields("none")


# -- the kernels the loop binds when an agent leaves them out ------------------------------------
@inline_kernel
def no_round(par: Any, t: int) -> float:
    """No per-step value."""
    return 0.0


@inline_kernel
def one_based_round(par: Any, t: int) -> float:
    """The 1-based round ``t + 1`` of the step (the ``t`` of the papers' ``ln t``)."""
    return float(t + 1)


@inline_kernel
def any_reward(v: float) -> bool:
    """Every real reward is accepted (the engine's tape and ``update`` give finite ones)."""
    return True


@inline_kernel
def not_held(arms: Any, runs: Any, par: Any, r: int) -> int:
    """No commitment: the index chooses at every step."""
    return -1


@inline_kernel
def nothing_chosen(arms: Any, runs: Any, par: Any, r: int, a: int) -> None:
    """Choosing an arm starts nothing."""


@inline_kernel
def no_learn(arms: Any, runs: Any, par: Any, r: int, t: int, a: int, x: float, bits: Any) -> None:
    """Nothing learnt per replication (an agent that learns the whole step in its
    ``settle_kernel``)."""


@inline_kernel
def no_prepare(arms: Any, runs: Any, par: Any, t: int, f: float, bits: Any) -> None:
    """Nothing to prepare before the replications choose."""


@inline_kernel
def no_settle(arms: Any, runs: Any, par: Any, t: int, actions: Any, x: Any, bits: Any) -> None:
    """Nothing to settle after a step."""


#: The check of one reward, by reward domain (``AgentTraits.rewards``), bound into the loop, and
#: of a step's rewards in the step protocol (every real reward passes)
_CHECKS = {"real": any_reward, "unit": unit_reward, "bernoulli": bernoulli_reward}
_STEP_CHECKS = {"unit": in_unit_interval, "bernoulli": in_bernoulli}


# -- the loop, written once ----------------------------------------------------------------------
def _arm(arms: Any, runs: Any, par: Any, r: int, t: int, f: float, bits: Any) -> int:
    raise NotImplementedError("bound by dpbandits.core.jit.specialise")


def _round(par: Any, t: int) -> float:
    raise NotImplementedError("bound by dpbandits.core.jit.specialise")


def _learn(arms: Any, runs: Any, par: Any, r: int, t: int, a: int, x: float, bits: Any) -> None:
    raise NotImplementedError("bound by dpbandits.core.jit.specialise")


def _settle(arms: Any, runs: Any, par: Any, t: int, actions: Any, x: Any, bits: Any) -> None:
    raise NotImplementedError("bound by dpbandits.core.jit.specialise")


# bound only for an agent that declares a prepare_kernel: the other loops keep their names (and
# their cache files' names, which must stay under the file system's 255 bytes)
_prepare = no_prepare


def _valid(v: float) -> bool:
    raise NotImplementedError("bound by dpbandits.core.jit.specialise")


def _index(arms: Any, runs: Any, par: Any, r: int, a: int, f: float, bits: Any) -> float:
    raise NotImplementedError("bound by dpbandits.core.jit.specialise")


def _held(arms: Any, runs: Any, par: Any, r: int) -> int:
    raise NotImplementedError("bound by dpbandits.core.jit.specialise")


def _chosen(arms: Any, runs: Any, par: Any, r: int, a: int) -> None:
    raise NotImplementedError("bound by dpbandits.core.jit.specialise")


@kernel_template
def _play(arms: Any, runs: Any, par: Any, address: int, t0: int, rows: Any, actions: Any,
          rewards: Any, chosen: Any, x: Any) -> int:  # fmt: skip
    """Steps ``t0 .. t0 + len(rows) - 1`` of every replication against the reward rows
    (``Agent.play``): every replication chooses, the step's rewards are checked, then every
    replication reads its reward, writes its action and reward and learns. Returns the number
    of steps played: fewer than ``len(rows)`` when a step's rewards were refused (its actions
    are written, its rewards left in ``x``, nothing is learnt from it)."""
    bits = generator_at(address).bit_generator
    # borrowed, for the kernels run per replication (module docstring)
    b_arms, b_runs, b_par = borrowed(arms), borrowed(runs), borrowed(par)
    n_runs, n_arms = arms.shape[0], arms.shape[1]
    for i in range(rows.shape[0]):
        t = t0 + i
        if t < n_arms:
            chosen[:] = t
        else:
            f = _round(par, t)
            _prepare(arms, runs, par, t, f, bits)
            for r in range(n_runs):
                chosen[r] = _arm(b_arms, b_runs, b_par, r, t, f, bits)
        # the check reads the rewards from the rows and writes nothing, so that for real rewards
        # (a check that is always true) it compiles to no code at all; the reading and writing
        # are part of the learning's pass over the replications, not a pass of their own: in
        # the learning's shadow (its divisions and square roots) they cost nothing, in a pass
        # of their own about 1 ns per agent-step (UCB's loop 1.15-1.3x its time before the
        # skeleton at R = 100, docs/performance.md "The play skeleton's loop")
        for r in range(n_runs):
            if not _valid(rows[i, chosen[r] * n_runs + r]):
                for s in range(n_runs):
                    actions[i, s] = chosen[s]
                    x[s] = rows[i, chosen[s] * n_runs + s]
                return i
        for r in range(n_runs):
            a = chosen[r]
            v = rows[i, a * n_runs + r]
            actions[i, r] = a
            rewards[i, r] = v
            x[r] = v
            _learn(b_arms, b_runs, b_par, r, t, a, v, bits)
        _settle(arms, runs, par, t, chosen, x, bits)
    return rows.shape[0]


@kernel_template
def _choose(arms: Any, runs: Any, par: Any, address: int, t: int, out: Any) -> None:
    """Step ``t >= K`` of the step protocol: every replication's arm."""
    bits = generator_at(address).bit_generator
    b_arms, b_runs, b_par = borrowed(arms), borrowed(runs), borrowed(par)
    f = _round(par, t)
    _prepare(arms, runs, par, t, f, bits)
    for r in range(out.shape[0]):
        out[r] = _arm(b_arms, b_runs, b_par, r, t, f, bits)


@kernel_template
def _observe(arms: Any, runs: Any, par: Any, address: int, t: int, actions: Any,
             x: Any) -> None:  # fmt: skip
    """Step ``t`` of the step protocol: every replication learns (rewards already checked)."""
    bits = generator_at(address).bit_generator
    b_arms, b_runs, b_par = borrowed(arms), borrowed(runs), borrowed(par)
    for r in range(x.shape[0]):
        _learn(b_arms, b_runs, b_par, r, t, actions[r], x[r], bits)
    _settle(arms, runs, par, t, actions, x, bits)


@kernel_template
def _best_arm(arms: Any, runs: Any, par: Any, r: int, t: int, f: float, bits: Any) -> int:
    """An index policy's arm: the held one, else the largest index (``numpy.argmax``'s rule;
    the indices are computed arm by arm, so draws come in arm order)."""
    held = _held(arms, runs, par, r)
    if held >= 0:
        return held
    best_a = 0
    best = _index(arms, runs, par, r, 0, f, bits)
    for a in range(1, arms.shape[1]):
        v = _index(arms, runs, par, r, a, f, bits)
        if beats(v, best):
            best_a, best = a, v
    _chosen(arms, runs, par, r, best_a)
    return best_a


def _parameter(value: Any) -> Any:
    """A ``PAR`` value as the kernels get it: a float, or an array a mechanism of the agent owns
    (kept as it is: the kernels update it in place)."""
    return value if isinstance(value, np.ndarray) else float(value)


class _Loop(NamedTuple):
    """An agent class's compiled loop: the block path and the two halves of a step."""

    play: Any
    choose: Any
    observe: Any


_LOOPS: dict[tuple[type, str], _Loop] = {}


class CompiledAgent(Agent):
    """Base of the agents whose step is compiled on the skeleton (module docstring).

    A subclass declares ``ARM``, ``RUN`` and ``PAR`` (:func:`fields`), the kernels
    ``arm_kernel`` and ``learn_kernel`` (``round_kernel``, ``prepare_kernel`` and
    ``settle_kernel`` optional), its
    :attr:`~agents.base.Agent.traits`, the fields that do not start at 0 (:attr:`ARM_START`,
    :attr:`RUN_START`), and writes :meth:`parameters` (the ``PAR`` values, by name; a field
    named after a parameter may be left to it) and, when
    a field's start depends on the sizes or parameters, :meth:`init_state`. It may override
    :meth:`check_step` (a check of ``update``'s actions). Everything else -- ``choose``,
    ``observe``, ``play``, the reward checks -- is this class's.
    """

    traits = AgentTraits(compiled=True)
    ARM: ClassVar[Any] = NO_FIELDS
    RUN: ClassVar[Any] = NO_FIELDS
    PAR: ClassVar[Any] = NO_FIELDS
    #: Fields that do not start at 0, by name: ``{"root": nan}`` (the others start at 0).
    ARM_START: ClassVar[Mapping[str, float]] = {}
    RUN_START: ClassVar[Mapping[str, float]] = {}
    round_kernel: ClassVar[Any] = no_round
    arm_kernel: ClassVar[Any] = None
    prepare_kernel: ClassVar[Any] = no_prepare
    learn_kernel: ClassVar[Any] = None
    settle_kernel: ClassVar[Any] = no_settle

    arms: NDArray[np.float64]
    runs: NDArray[np.float64]
    par: tuple[float, ...]

    # -- what a subclass writes -----------------------------------------------------------
    def parameters(self) -> Mapping[str, float]:
        """The values of the ``PAR`` fields, by name (after the parameter checks). A field it
        leaves out that names a declared parameter (:attr:`~agents.base.Agent.
        parameter_constraints`) gets the parameter's value, as a float."""
        return {}

    def init_state(self) -> None:
        """Set the fields of :attr:`arms`/:attr:`runs` whose start depends on the sizes or the
        parameters (after :attr:`ARM_START` and :attr:`RUN_START`)."""

    def check_step(self, actions: NDArray[np.int64]) -> None:
        """Refuse ``update``'s ``actions`` the algorithm cannot learn from (default: none)."""

    def reward_domain(self) -> str:
        """The rewards this agent accepts (default: its traits' ``rewards``; an agent whose
        parameters change it, e.g. Thompson sampling's model, says so here)."""
        return self.traits.rewards

    # -- the skeleton ---------------------------------------------------------------------
    @classmethod
    def arm_chooser(cls) -> Any:
        """The compiled ``arm_kernel`` the loop binds (an :class:`IndexAgent` builds its own)."""
        if cls.arm_kernel is None:
            raise TypeError(f"{cls.__name__} declares no arm_kernel")
        return cls.arm_kernel

    @classmethod
    def compiled_loop(cls, rewards: str | None = None) -> _Loop:
        """The class's loop checking ``rewards`` (default: its traits'), compiled (or loaded
        from the disk cache) once per process."""
        domain = cls.traits.rewards if rewards is None else rewards
        loop = _LOOPS.get((cls, domain))
        if loop is None:
            if cls.learn_kernel is None:
                raise TypeError(f"{cls.__name__} declares no learn_kernel")
            learn = {"_learn": cls.learn_kernel, "_settle": cls.settle_kernel}
            choose = {"_arm": cls.arm_chooser(), "_round": cls.round_kernel}
            if cls.prepare_kernel is not no_prepare:
                choose["_prepare"] = cls.prepare_kernel
            loop = _Loop(
                specialise(_play, _valid=_CHECKS[domain], **choose, **learn),
                specialise(_choose, **choose),
                specialise(_observe, **learn),
            )
            _LOOPS[cls, domain] = loop
        return loop

    def setup(self) -> None:
        R, K = self.n_runs, self.n_arms
        values = dict(self.parameters())
        for name in set(self.PAR._fields) - set(values):
            if name in type(self).parameter_constraints:  # a parameter the kernels read as given
                values[name] = float(getattr(self, name))
        missing = set(self.PAR._fields) - set(values) if self.PAR is not NO_FIELDS else set()
        if missing:
            raise TypeError(f"{type(self).__name__}.parameters() misses {sorted(missing)}")
        self.par = tuple(_parameter(values[name]) for name in self.PAR._fields)
        self.arms = np.zeros((R, K, len(self.ARM)))
        self.runs = np.zeros((R, len(self.RUN)))
        self._chosen = np.empty(R, dtype=np.int64)  # work space of play
        self._x = np.empty(R)
        self._address = generator_address(self.rng)
        self._rewards = self.reward_domain()
        self._loop = type(self).compiled_loop(self._rewards)
        for name, value in self.ARM_START.items():
            self.arm_field(name)[:] = value
        for name, value in self.RUN_START.items():
            self.run_field(name)[:] = value
        self.init_state()

    def arm_field(self, name: str) -> NDArray[np.float64]:
        """The ``(R, K)`` field ``name`` of :attr:`arms` (a view)."""
        return self.arms[:, :, getattr(self.ARM, name)]

    @property
    def stats(self) -> SimpleNamespace:
        """The ``(R, K)`` pull ``counts`` and reward ``sums`` (views of the fields ``count``
        and ``sum``, for an agent that keeps them)."""
        return SimpleNamespace(counts=self.arm_field("count"), sums=self.arm_field("sum"))

    def run_field(self, name: str) -> NDArray[np.float64]:
        """The ``(R,)`` field ``name`` of :attr:`runs` (a view)."""
        return self.runs[:, getattr(self.RUN, name)]

    def reward_error(self, x: NDArray[np.float64]) -> ValueError:
        """The refusal of rewards ``x`` the algorithm is not defined for."""
        label = getattr(self, "algorithm", "") or type(self).__name__
        if self._rewards == "bernoulli":
            return bernoulli_error(label, x)
        return unit_interval_error(label, x)

    def choose(self) -> NDArray[np.int64]:
        out = np.empty(self.n_runs, dtype=np.int64)
        self._loop.choose(self.arms, self.runs, self.par, self._address, self.t, out)
        return out

    def observe(self, actions: NDArray[np.int64], rewards: NDArray[np.float64]) -> None:
        x = np.asarray(rewards, dtype=np.float64)
        check = _STEP_CHECKS.get(self._rewards)
        if check is not None and not check(x):
            raise self.reward_error(x)
        self.check_step(actions)
        self._loop.observe(self.arms, self.runs, self.par, self._address, self.t,
                           np.asarray(actions, dtype=np.int64), x)  # fmt: skip

    def play(self, rows: Any, actions: Any, rewards: Any) -> None:
        """Play ``len(rows)`` steps against reward rows (see ``agents.base``)."""
        rows = read_only(rows)  # the one compiled loop for the engine's tape and any other rows
        done = int(self._loop.play(self.arms, self.runs, self.par, self._address, self.t, rows,
                                   actions, rewards, self._chosen, self._x))  # fmt: skip
        self.played(done)
        if done < rows.shape[0]:
            raise self.reward_error(self._x)


class IndexAgent(CompiledAgent):
    """Base of the index policies: the arm of largest ``index_kernel`` (module docstring), with
    the optional commitment kernels ``held_kernel`` and ``chosen_kernel``. An agent with its own
    way of finding the argmax (KL-UCB's candidate test) declares ``arm_kernel`` instead."""

    index_kernel: ClassVar[Any] = None
    held_kernel: ClassVar[Any] = not_held
    chosen_kernel: ClassVar[Any] = nothing_chosen

    @classmethod
    def arm_chooser(cls) -> Any:
        if cls.arm_kernel is not None:
            return cls.arm_kernel
        if cls.index_kernel is None:
            raise TypeError(f"{cls.__name__} declares neither index_kernel nor arm_kernel")
        return specialise(_best_arm, _index=cls.index_kernel, _held=cls.held_kernel,
                          _chosen=cls.chosen_kernel, inline=True)  # fmt: skip
