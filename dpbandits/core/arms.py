"""Per-(replication, arm) state: the one layout shared by agents, private means and sensitivities.

Everything that keeps one value per arm of every replication -- pull counts and reward sums
(:class:`ArmStatistics`), the hybrid mechanism of each arm
(:class:`dpbandits.continual.PrivateMeans`), the reward windows of the sensitivity estimates
(:class:`dpbandits.quantiles.WindowedSensitivity`) -- stores it as a flat array of ``R * K``
*streams*, stream ``r * K + a`` being arm ``a`` of replication ``r``. One step of a bandit
touches exactly one stream per replication, so a step is a handful of fancy-indexed numpy calls
on ``R`` distinct flat indices, or one compiled call (:func:`add_pulls`), never a Python loop.
:class:`RunArms` is that layout: the sizes,
the flat index of a step's pulls, and the validation of a step given by a user.
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpbandits.core import checks
from dpbandits.core.jit import kernel

__all__ = [
    "ArmStatistics",
    "HoldsViews",
    "RunArms",
    "action_dtype",
    "add_pull",
    "add_pulls",
    "matrix_property",
    "read_only",
]

_T = TypeVar("_T", bound=np.generic)


def action_dtype(n_arms: int) -> type[np.signedinteger[Any]]:
    """The smallest integer dtype that holds the arms ``0 .. n_arms - 1``: the dtype of the
    engine's ``(T, R)`` action arrays (int8 up to 127 arms). A compiled agent's ``play`` loop is
    compiled once per dtype of its ``actions`` argument, so a caller that plays blocks itself
    passes arrays of this dtype to run the loop the engine runs (any other integer dtype works,
    at the price of one more compilation)."""
    return np.int8 if n_arms <= 127 else (np.int16 if n_arms <= 32767 else np.int64)


def read_only(rows: NDArray[Any]) -> NDArray[Any]:
    """``rows`` as a read-only array (itself, or a read-only view of it): a compiled agent's
    ``play`` hands its reward rows to its loop this way, as the environments' tapes are, so
    that writable rows from a test or a user's tape run the loop the engine runs instead of
    compiling it once more (numba compiles a function once per argument type, and a
    read-only array is another type)."""
    if not rows.flags.writeable:
        return rows
    view = rows.view()
    view.flags.writeable = False
    return view


class RunArms:
    """The flat ``(R * K)`` layout of per-(replication, arm) streams.

    ``n_runs`` (R) replications of a bandit with ``n_arms`` (K) arms; ``size = R * K`` streams.
    """

    def __init__(self, n_runs: int, n_arms: int) -> None:
        self.n_runs = checks.positive_int(n_runs, "n_runs")
        self.n_arms = checks.positive_int(n_arms, "n_arms")
        self.size = self.n_runs * self.n_arms
        checks.memory(4 * self.size, f"n_runs * n_arms = {self.n_runs} * {self.n_arms}")
        #: first stream of each replication: ``base[r] = r * K``
        self.base = np.arange(self.n_runs, dtype=np.intp) * self.n_arms

    def flat(self, actions: NDArray[np.int64]) -> NDArray[np.intp]:
        """Stream ``r * K + actions[r]`` pulled by each replication (``actions`` trusted)."""
        return self.base + actions

    def pulls(
        self, actions: ArrayLike, rewards: ArrayLike, lo: float, hi: float
    ) -> tuple[NDArray[np.intp], NDArray[np.float64]]:
        """Validate one step given by a user -- ``actions`` (R,) arms in ``[0, K)``, ``rewards``
        (R,) not NaN -- and return the pulled streams and the rewards clipped to ``[lo, hi]``
        (the clipping of App. H; infinite rewards clip to the bounds)."""
        a, x = checks.pulls(actions, rewards, self.n_runs, self.n_arms, lo, hi)
        return self.base + a, x

    def matrix(self, values: NDArray[_T]) -> NDArray[_T]:
        """A per-stream array seen as ``(R, K)`` (a view, no copy)."""
        return values.reshape(self.n_runs, self.n_arms)


def matrix_property(attribute: str, doc: str) -> property:
    """A read-only property: the flat per-stream array ``self.<attribute>`` as an ``(R, K)``
    copy (``self.layout`` is the :class:`RunArms`), so that no caller can change the state."""

    def get(self: Any) -> Any:
        return self.layout.matrix(getattr(self, attribute)).copy()

    return property(get, doc=doc)


class HoldsViews:
    """Base of a class whose instance keeps numpy views of its own arrays (a flat or ``(R, K)``
    face of one buffer, for compiled callers or cheap reads).

    ``pickle`` and ``copy.deepcopy`` would copy such a view as an array of its own, so the copy's
    view would stop seeing the copy's buffer. The attributes named in :attr:`_views` are left out
    of the state and rebuilt by :meth:`_make_views` -- the method the constructor calls too, so
    that a view is made in one place."""

    _views: ClassVar[tuple[str, ...]] = ()

    def _make_views(self) -> None:
        raise NotImplementedError

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        for name in self._views:
            del state[name]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._make_views()


@kernel
def add_pull(counts: Any, sums: Any, r: int, a: int, x: float) -> None:
    """Replication ``r`` pulled arm ``a`` and got reward ``x``: the bookkeeping of
    :class:`ArmStatistics`, compiled (``dpbandits.core.jit``) so that the agents' compiled steps
    call this same function."""
    counts[r, a] += 1.0
    sums[r, a] += x


@kernel
def add_pulls(counts: Any, sums: Any, actions: Any, rewards: Any) -> None:
    """:func:`add_pull` for every replication ``r``: arm ``actions[r]``, reward ``rewards[r]``."""
    for r in range(actions.shape[0]):
        add_pull(counts, sums, r, actions[r], rewards[r])


class ArmStatistics:
    """Pull counts and reward sums of every arm in every replication.

    ``counts`` and ``sums`` are ``(R, K)`` float arrays, views of the flat per-stream arrays
    ``counts_flat`` and ``sums_flat`` (:class:`RunArms` layout; agents that also *remove* pulls,
    such as the sliding-window UCB, update those directly). :meth:`update` adds one pull per
    replication (:func:`add_pulls`).
    """

    def __init__(self, n_runs: int, n_arms: int) -> None:
        self.layout = RunArms(n_runs, n_arms)
        self.n_runs = self.layout.n_runs
        self.n_arms = self.layout.n_arms
        s = self.layout.size
        self.counts_flat = np.zeros(s)
        self.sums_flat = np.zeros(s)
        self.counts = self.layout.matrix(self.counts_flat)
        self.sums = self.layout.matrix(self.sums_flat)

    def flat_index(self, actions: NDArray[np.int64]) -> NDArray[np.intp]:
        """Index of ``(r, actions[r])`` in the flat arrays (:meth:`RunArms.flat`)."""
        return self.layout.flat(actions)

    def update(self, actions: NDArray[np.int64], rewards: NDArray[Any]) -> None:
        """One pull per replication: arm ``actions[r]`` gave ``rewards[r]`` (trusted input:
        ``(R,)`` arms in ``[0, K)`` and ``(R,)`` real rewards)."""
        a = np.asarray(actions)
        if a.dtype != np.int64:
            a = a.astype(np.int64)
        x = np.asarray(rewards)
        if x.dtype != np.float64:
            x = x.astype(np.float64)
        add_pulls(self.counts, self.sums, a, x)

    def means(self) -> NDArray[np.float64]:
        """Empirical means; an arm never pulled has mean 0 (agents pull every arm first)."""
        return self.sums / np.maximum(self.counts, 1.0)
