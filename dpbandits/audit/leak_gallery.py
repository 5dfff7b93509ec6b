"""Planted leaks: honest eps-DP agents wrapped so that they leak, still claiming eps = 1 (the
agent audit's gallery, docs/selectors.md, "What the search catches").

Each class here is written only against the public agent protocol (``reset``, ``act``,
``update``, ``privacy_report``; :mod:`agents.base`), as a user's plug-in would be: it wraps an
honest agent (by default DP-IMED at eps = 1, :data:`INNER`: it settles on the best arm within
the audit's 500 steps, so a rare leak stands out), passes its decisions through, and breaks
privacy in one way that the audit must find at its defaults:

- :class:`CopyReward` -- the reward observed at one step is copied into the action of a later
  step (a value leaked through the action sequence long after it was seen);
- :class:`TimingLeak` -- a run of pulls of one arm is lengthened by one pull when a raw
  statistic (the left arm's raw reward sum) hits one value (a leak through timing alone);
- :class:`LastStepBestRawMean` -- the arm of the best raw (non-private) mean is played at the
  last step;
- :class:`RandomStepLeak` -- at a random 1% of the steps (the agent's own coins, per run) the
  next action copies the reward just seen;
- :class:`HalfNoise` -- the inner agent runs at eps = 2 (its Laplace scales halved) while its
  report claims 1;
- :class:`SwitchParity` -- a probe pull at a random step of every block when the raw total
  reward is odd (a leak through the number of switches);
- :class:`RawSumThreshold` -- one arm's probability multiplied by a modest factor once the raw
  total reward crosses a threshold (one action moves, at a step that differs per run);
- :class:`FirstRewardThompson` -- an agent that already randomises, its Thompson draws from a
  posterior holding each arm's first raw reward;
- :class:`AfterChange` -- a raw change detector that starts a leak after a change point (no
  leak on a stationary table).

Every one claims ``privacy_report()["epsilon_total"] == 1``. None is private at that eps.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

import agents as agents_pkg

__all__ = [
    "GALLERY",
    "INNER",
    "CopyReward",
    "HalfNoise",
    "LastStepBestRawMean",
    "PlantedLeak",
    "RandomStepLeak",
    "TimingLeak",
]

#: The honest eps-DP agent every planted leak wraps by default (a registered name).
INNER = "dp_imed"


class PlantedLeak:
    """An honest agent passed through (the agent protocol), claiming eps = 1.

    Subclasses change the arms played in :meth:`plant` (given the inner agent's choice), set up
    their own state for a run in :meth:`start`, or watch :meth:`update` (the raw rewards); the
    raw statistics they keep (pulls and reward sums per replication and arm, the last reward)
    are those a buggy plug-in would read by mistake."""

    name = "planted_leak"

    def __init__(self, inner: str | Any = INNER, **inner_params: Any) -> None:
        self.inner = agents_pkg.make(inner, **inner_params) if isinstance(inner, str) else inner
        self.label = f"{type(self).__name__}({getattr(self.inner, 'name', self.inner)})"

    def reset(self, n_runs: int, n_arms: int, *, horizon: int | None = None,
              rng: Any = None) -> None:  # fmt: skip
        # the leak's own coins and the inner agent's are independent streams of one seed
        gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        self.rng, inner_rng = gen.spawn(2)
        self.inner.reset(n_runs, n_arms, horizon=horizon, rng=inner_rng)
        self.n_runs, self.n_arms, self.horizon = n_runs, n_arms, horizon
        self.t = 0
        self.pulls = np.zeros((n_runs, n_arms), dtype=np.int64)
        self.sums = np.zeros((n_runs, n_arms))
        self.last_reward = np.zeros(n_runs)
        self.last_action = np.zeros(n_runs, dtype=np.int64)
        self.start()

    def start(self) -> None:
        """The leak's own state for a new run (called by :meth:`reset`, after the raw
        statistics); none here."""

    def act(self) -> NDArray[np.int64]:
        return self.plant(np.asarray(self.inner.act(), dtype=np.int64))

    def plant(self, a: NDArray[np.int64]) -> NDArray[np.int64]:
        """The arms played at step ``t`` when the inner agent chose ``a``: the leak (none here:
        ``a`` itself)."""
        return a

    def update(self, actions: ArrayLike, rewards: ArrayLike) -> None:
        a = np.asarray(actions, dtype=np.int64)
        r = np.asarray(rewards, dtype=np.float64)
        self.inner.update(a, r)
        rows = np.arange(self.n_runs)
        self.pulls[rows, a] += 1
        self.sums[rows, a] += r
        self.last_reward, self.last_action = r, a
        self.t += 1

    def reward_arm(self, r: NDArray[np.float64]) -> NDArray[np.int64]:
        """The arm a reward in [0, 1] names: ``round(r (K - 1))`` (0 -> arm 0, 1 -> the last)."""
        return np.clip(np.rint(r * (self.n_arms - 1)), 0, self.n_arms - 1).astype(np.int64)

    def privacy_report(self) -> dict[str, Any]:
        report = dict(self.inner.privacy_report())
        report["epsilon_total"] = 1.0  # the claim the leak breaks
        return report


class CopyReward(PlantedLeak):
    """The reward seen at step ``source`` decides the action at step ``target`` (fractions of
    the horizon, default 0.37 and 0.81: steps 185 and 405 of 500): one reward, one action,
    a deterministic leak far from the step it came from."""

    name = "copy_reward"

    def __init__(self, inner: str | Any = INNER, source: float = 0.37, target: float = 0.81,
                 **inner_params: Any) -> None:  # fmt: skip
        super().__init__(inner, **inner_params)
        self.source, self.target = source, target

    def _steps(self) -> tuple[int, int]:
        horizon = self.horizon or 100
        return int(self.source * horizon), int(self.target * horizon)

    def plant(self, a: NDArray[np.int64]) -> NDArray[np.int64]:
        if self.t == self._steps()[1]:
            return self.reward_arm(self.copied)
        return a

    def update(self, actions: ArrayLike, rewards: ArrayLike) -> None:
        if self.t == self._steps()[0]:
            self.copied = np.array(rewards, dtype=np.float64)
        super().update(actions, rewards)


class TimingLeak(PlantedLeak):
    """When the inner agent switches arms and the raw reward sum of the arm it leaves is
    exactly ``value``, the old arm is pulled once more before the switch: the run of pulls
    (an episode) is one pull longer, and nothing else changes."""

    name = "timing_leak"

    def __init__(self, inner: str | Any = INNER, value: float = 2.0,
                 **inner_params: Any) -> None:  # fmt: skip
        super().__init__(inner, **inner_params)
        self.value = value

    def start(self) -> None:
        self.extended = np.zeros(self.n_runs, dtype=bool)  # the run of pulls was lengthened

    def plant(self, a: NDArray[np.int64]) -> NDArray[np.int64]:
        if self.t == 0:
            return a
        prev = self.last_action
        switch = a != prev
        hits = self.sums[np.arange(self.n_runs), prev] == self.value
        extend = switch & hits & ~self.extended  # once per run of pulls
        self.extended = extend
        return np.where(extend, prev, a)


class LastStepBestRawMean(PlantedLeak):
    """At the last step (``horizon - 1``), the arm with the best raw mean (ties: the lowest
    index) is played instead of the inner agent's choice."""

    name = "last_step_best_raw_mean"

    def plant(self, a: NDArray[np.int64]) -> NDArray[np.int64]:
        if self.horizon is not None and self.t == self.horizon - 1:
            means = self.sums / np.maximum(self.pulls, 1)
            return np.argmax(means, axis=1).astype(np.int64)
        return a


class RandomStepLeak(PlantedLeak):
    """At each step, with probability ``rate`` (default 1%; the agent's own coins, drawn
    independently for every run), the next action is the arm the reward just seen names."""

    name = "random_step_leak"

    def __init__(self, inner: str | Any = INNER, rate: float = 0.01,
                 **inner_params: Any) -> None:  # fmt: skip
        super().__init__(inner, **inner_params)
        self.rate = rate

    def plant(self, a: NDArray[np.int64]) -> NDArray[np.int64]:
        if self.t == 0:
            return a
        leak = self.coins < self.rate
        return np.where(leak, self.reward_arm(self.last_reward), a)

    def update(self, actions: ArrayLike, rewards: ArrayLike) -> None:
        super().update(actions, rewards)
        self.coins = self.rng.random(self.n_runs)


class HalfNoise(PlantedLeak):
    """The inner agent built with ``epsilon = 2`` (every Laplace scale halved), reporting 1."""

    name = "half_noise"

    def __init__(self, inner: str = INNER, parameter: str = "epsilon", factor: float = 2.0,
                 **inner_params: Any) -> None:  # fmt: skip
        super().__init__(inner, **{parameter: factor, **inner_params})


class SwitchParity(PlantedLeak):
    """In every block of ``block`` steps, at one step drawn from the agent's own coins, when
    the raw total reward so far is odd, one pull of the next arm (a probe and back): the action
    at a fixed step moves with probability ``1 / block``, the number of switches in a window
    by 2 with certainty (a leak through the switch counts)."""

    name = "switch_parity"

    def __init__(self, inner: str | Any = INNER, block: int = 50,
                 **inner_params: Any) -> None:  # fmt: skip
        super().__init__(inner, **inner_params)
        self.block = block

    def plant(self, a: NDArray[np.int64]) -> NDArray[np.int64]:
        if self.t % self.block == 0:  # this block's probe step
            self.probe_at = self.rng.integers(self.block, size=self.n_runs)
        if self.t < self.n_arms:
            return a
        odd = np.rint(self.sums.sum(axis=1)).astype(np.int64) % 2 == 1
        probe = odd & (self.t % self.block == self.probe_at)
        return np.where(probe, (self.last_action + 1) % self.n_arms, a)


class RawSumThreshold(PlantedLeak):
    """Arm 0 is explored at every step with probability ``q`` (2%), and with ``q`` times
    ``factor`` (a modest e^2) once the raw total reward reaches ``threshold`` (a fraction of the
    horizon, 0.274: 137 of 500): one changed reward moves the step it crosses at by one, so
    only the action at that step moves, by the factor, at a step that differs from run to
    run."""

    name = "raw_sum_threshold"

    def __init__(self, inner: str | Any = INNER, q: float = 0.02, factor: float = 7.389,
                 threshold: float = 0.274, **inner_params: Any) -> None:  # fmt: skip
        super().__init__(inner, **inner_params)
        self.q, self.factor, self.threshold = q, factor, threshold

    def plant(self, a: NDArray[np.int64]) -> NDArray[np.int64]:
        crossed = self.sums.sum(axis=1) >= round(self.threshold * (self.horizon or 100))
        q = np.where(crossed, self.q * self.factor, self.q)
        return np.where(self.rng.random(self.n_runs) < q, 0, a)


class FirstRewardThompson(PlantedLeak):
    """An agent that already randomises: at every step, with probability ``mix`` (30%), a
    Thompson draw whose posterior for arm ``a`` is ``Beta(1 + x_a, 2 - x_a)``, ``x_a`` the
    arm's FIRST raw reward (unnoised), else the inner agent's action. Each action moves by a
    modest factor, but at every step."""

    name = "first_reward_thompson"

    def __init__(self, inner: str | Any = INNER, mix: float = 0.3,
                 **inner_params: Any) -> None:  # fmt: skip
        super().__init__(inner, **inner_params)
        self.mix = mix

    def start(self) -> None:
        self.first = np.full((self.n_runs, self.n_arms), 0.5)  # each arm's first raw reward

    def plant(self, a: NDArray[np.int64]) -> NDArray[np.int64]:
        if self.t < self.n_arms:
            return a
        first = np.clip(self.first, 0.0, 1.0)
        ts = np.argmax(self.rng.beta(1 + first, 2 - first), axis=1)
        return np.where(self.rng.random(self.n_runs) < self.mix, ts, a)

    def update(self, actions: ArrayLike, rewards: ArrayLike) -> None:
        a = np.asarray(actions, dtype=np.int64)
        rows = np.arange(self.n_runs)
        new = self.pulls[rows, a] == 0
        self.first[rows[new], a[new]] = np.asarray(rewards, dtype=np.float64)[new]
        super().update(actions, rewards)


class AfterChange(PlantedLeak):
    """A raw change detector on the arm just played (its last ``window`` raw rewards against
    its earlier ones, a difference above half the range); once it fires, every later action
    is, with probability ``p`` (20%), the arm of the best raw mean over its last ``window``
    pulls. On a stationary table it never fires: a leak only after a change point."""

    name = "after_change"

    def __init__(self, inner: str | Any = INNER, window: int = 20, p: float = 0.2,
                 **inner_params: Any) -> None:  # fmt: skip
        super().__init__(inner, **inner_params)
        self.window, self.p = window, p

    def start(self) -> None:
        self.recent = np.zeros((self.n_runs, self.n_arms, self.window))  # last raw rewards
        self.fired = np.zeros(self.n_runs, dtype=bool)

    def plant(self, a: NDArray[np.int64]) -> NDArray[np.int64]:
        if self.t == 0:
            return a
        n = np.minimum(self.pulls, self.window)
        means = np.where(n >= 1, self.recent.sum(axis=2) / np.maximum(n, 1), -1.0)
        leak = self.fired & (self.rng.random(self.n_runs) < self.p)
        return np.where(leak, np.argmax(means, axis=1), a)

    def update(self, actions: ArrayLike, rewards: ArrayLike) -> None:
        a = np.asarray(actions, dtype=np.int64)
        rows = np.arange(self.n_runs)
        self.recent[rows, a, self.pulls[rows, a] % self.window] = rewards
        super().update(actions, rewards)
        w = self.window
        n = self.pulls[rows, a]
        last = self.recent[rows, a].sum(axis=1)
        early = (self.sums[rows, a] - last) / np.maximum(n - w, 1)
        self.fired |= (n - w >= w) & (np.abs(last / w - early) > 0.5)


#: The gallery, by the name the docs' power table uses.
GALLERY: dict[str, type[PlantedLeak]] = {
    "copy_reward": CopyReward,
    "timing": TimingLeak,
    "last_step_best_raw_mean": LastStepBestRawMean,
    "random_1pct_steps": RandomStepLeak,
    "half_noise": HalfNoise,
    "switch_parity": SwitchParity,
    "raw_sum_threshold": RawSumThreshold,
    "first_reward_thompson": FirstRewardThompson,
    "after_change": AfterChange,
}
