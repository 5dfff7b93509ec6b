# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Exercise 3 — When the world changes: bandits under distribution shift
#
# UCB and Thompson sampling assume the arms never change. Real systems drift: a
# recommendation that was best last month may not be today. Here we use the two-armed
# bandit of the paper's App. H (`dpbandits/TwoArmedShift-v0`): arm 0 pays about 0.2 and
# arm 1 about 0.8 (Gaussian rewards clipped to `[0, 1]`) until step `t_shift`; then the
# two arms **swap**. Regret is measured against the best arm *at each step* (dynamic
# regret), so after the shift a learner must notice the change and move.
#
# A learner built to forget is **sliding-window UCB** (Garivier & Moulines 2011): it only
# counts the last `window` steps. With `N_a`, `S_a` the pulls and reward sum of arm `a`
# inside the window, its index is
#
#     index_a = S_a / N_a + B * sqrt(xi * ln(min(t, window)) / N_a)
#
# (`+inf` for an arm not pulled inside the window, so it is tried), with `B` a bound on the
# rewards and `xi = 0.6`.
#
# But do the classic learners really get stuck? The project's own experiment
# (`docs/shift.md`, Fig. 9 of the paper) found: **UCB with ln t adapts within a few hundred
# steps, while Thompson sampling gets stuck for thousands of steps.** Task 3 shows why.
#
# Check each task with the cell after it: `check("name")` prints its points and `ok`,
# `not done yet`, or what is wrong and its likely cause (`check("name", hint=1)` adds a
# hint). From a terminal, grade the whole notebook (or script):
# `dpbandits course check 3 ex3_shift.ipynb`.

# %%
from __future__ import annotations

import numpy as np
from scipy import stats  # noqa: F401  (for Task 3)

import agents
import envs  # noqa: F401  (registers the dpbandits/... environments)
from dpbandits.course.helpers import Checker, show, skip_if_not_done

check = Checker(3, globals())  # check("task") grades one task, check() all of them

# %% tags=["parameters"]
# Sizes of the experiments: smaller numbers run faster while you try things out.
N_RUNS = 50  # independent runs of each learner
HORIZON = 6000  # steps per run; the arms swap halfway

# %% [markdown]
# ## Task 1 — what is inside the window?
#
# `actions` and `rewards` have shape `(R, t)`: the whole history of `R` runs (column `s`
# is step `s`). Return `(counts, sums)`, both `(R, K)`: per run, the number of pulls and
# the reward sum of each arm over the **last `window` steps** (the whole history when it is
# shorter than the window).


# %%
def window_counts_sums(
    actions: np.ndarray, rewards: np.ndarray, n_arms: int, window: int
) -> tuple[np.ndarray, np.ndarray]:
    """Pulls and reward sums of each arm over the last ``window`` steps, shape ``(R, K)``."""
    # TODO: write this (see the docstring), then run the checker.
    raise NotImplementedError("TODO")


# %%
if __name__ == "__main__":
    check("window_counts_sums")


# %% [markdown]
# ## Task 2 — the sliding-window UCB index
#
# `counts`, `sums` of shape `(R, K)` (from Task 1), `t` the number of steps so far.


# %%
def sw_ucb_index(
    counts: np.ndarray,
    sums: np.ndarray,
    t: int,
    window: int,
    xi: float = 0.6,
    bound: float = 1.0,
) -> np.ndarray:
    """``S/N + bound * sqrt(xi * ln(min(t, window)) / N)``; ``+inf`` where ``N == 0``."""
    # TODO: write this (see the docstring), then run the checker.
    raise NotImplementedError("TODO")


# %%
if __name__ == "__main__":
    check("sw_ucb_index")


# %% [markdown]
# ## Task 3 — why Thompson sampling gets stuck
#
# The library's Gaussian Thompson sampling (`agents.ThompsonSampling()`) has, for an arm
# with `N` pulls and reward sum `S`, the posterior `Normal(S / (N + 1), 1 / (N + 1))`
# (mean, **variance**). Before the shift the bad arm was pulled only a few dozen times.
# Write `ts_stale_probability(stale_sum, stale_pulls, threshold)`: the probability that a
# posterior sample of that arm exceeds `threshold` (think: the current estimate of the
# other arm). Use `scipy.stats.norm`.


# %%
def ts_stale_probability(stale_sum: float, stale_pulls: int, threshold: float) -> float:
    """``P(theta > threshold)`` for ``theta ~ Normal(S / (N + 1), 1 / (N + 1))``."""
    # TODO: write this (see the docstring), then run the checker.
    raise NotImplementedError("TODO")


# %%
if __name__ == "__main__":
    check("ts_stale_probability")


# %% [markdown]
# ## The agent, and experiments


# %%
class MySlidingWindowUCB(agents.Agent):
    """Sliding-window UCB with your Tasks 1 and 2 (it keeps the whole history: simple, slow)."""

    name = "my_sw_ucb"

    def __init__(self, window: int = 500, xi: float = 0.6, bound: float = 1.0) -> None:
        self.window = window
        self.xi = xi
        self.bound = bound

    def setup(self) -> None:
        size = self.horizon or 100_000
        self.actions = np.zeros((self.n_runs, size), dtype=np.int64)
        self.rewards = np.zeros((self.n_runs, size))

    def choose(self) -> np.ndarray:
        counts, sums = window_counts_sums(
            self.actions[:, : self.t], self.rewards[:, : self.t], self.n_arms, self.window
        )
        index = sw_ucb_index(counts, sums, self.t, self.window, self.xi, self.bound)
        return np.argmax(index, axis=1)

    def observe(self, actions: np.ndarray, rewards: np.ndarray) -> None:
        self.actions[:, self.t] = actions
        self.rewards[:, self.t] = rewards


# %%
if __name__ == "__main__":
    import matplotlib.pyplot as plt

    from dpbandits.experiments import run

    with skip_if_not_done():
        shift = {"id": "dpbandits/TwoArmedShift-v0", "t_shift": HORIZON // 2, "horizon": HORIZON}
        players = {
            "UCB (ln t)": agents.UCB(log="t"),
            "TS": agents.ThompsonSampling(),
            "my SW-UCB": MySlidingWindowUCB(window=500),
        }
        res = run(shift, players, n_runs=N_RUNS, seed=0, n_jobs=1, progress=False)
        print(res.summary())
        fig, ax = plt.subplots()
        for label in res.labels:
            ax.plot(res.steps, res.mean(label), label=label)
        ax.axvline(HORIZON // 2, color="k", ls=":")
        ax.set_xlabel("step t")
        ax.set_ylabel("mean dynamic regret")
        ax.legend()
        show(fig, "regret")
    with skip_if_not_done():
        # Why TS waits: the stale arm had ~40 pulls with mean 0.2 when the shift happened.
        for threshold in (0.8, 0.6, 0.4):
            print(threshold, ts_stale_probability(0.2 * 40, 40, threshold))

# %% [markdown]
# ## Questions
#
# 1. Which learner has the smallest post-change regret (`post-change` column)? Which the
#    smallest pre-change regret? What does the window cost before the shift?
# 2. At the shift, the stale arm has about 40 pulls with mean 0.2. With your Task 3, how
#    likely is TS to try it while the other arm's estimate is still 0.8? 0.6? How many steps
#    does the other arm's running mean (30 000 rewards of 0.8, then rewards of 0.2) need to
#    drop to 0.6 in the paper's setting (`t_shift = 30_000`)?
# 3. Before the shift UCB's bonus `sqrt(2 ln t / N)` keeps the stale arm's index level with
#    the good arm's (that is why the stale arm has only a few dozen pulls, not zero). What
#    happens as soon as the good arm's running mean drops a little after the shift?
# 4. Try `window = 100` and `window = 2000`. What is the trade-off?

# %%
# Your answer:

# %% [markdown]
# ## Your score

# %%
if __name__ == "__main__":
    check()
