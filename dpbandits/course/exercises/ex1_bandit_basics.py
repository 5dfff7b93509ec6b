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
# # Exercise 1 — Bandit basics: play a bandit, write epsilon-greedy, measure regret
#
# A *K-armed bandit* is a slot machine with K arms. Pulling arm `a` pays a random reward
# whose mean `mu_a` you do not know. Over `T` pulls you want as much reward as possible, so
# you must **explore** (try arms to learn their means) and **exploit** (pull the arm that
# looks best). The price of not knowing the means is the **regret**
#
#     R(T) = sum_{t=1..T} (mu* - mu_{a_t}),     mu* = max_a mu_a,
#
# the reward lost against someone who always pulls the best arm. A good learner has regret
# that grows much more slowly than `T`.
#
# We use `dpbandits/KArmedBernoulli-v0`: arm `a` pays 1 with probability `means[a]`, else 0.
# It is a Gymnasium environment: `env.reset(seed=...)` starts an episode, `env.step(a)`
# returns `(obs, reward, terminated, truncated, info)`. The `info` dict holds *evaluation
# data the learner must not use*: `info["expected_rewards"]` (all `mu_a`),
# `info["optimal_arm"]` and `info["regret"]` (`mu* - mu_{a_t}` of this step).
#
# **How to work.** Write the functions marked `TODO` (they raise `NotImplementedError`
# now). The cell after each one checks it: `check("pull_arm_repeatedly")` prints the task's
# points and `ok`, `not done yet`, or what is wrong and its likely cause;
# `check("pull_arm_repeatedly", hint=1)` adds a hint (`hint=2` the next one). From a
# terminal, grade the whole notebook (or the script, if you work in a `.py` file):
#
#     dpbandits course check 1 ex1_bandit_basics.ipynb
#
# Cells that run checks or experiments are inside `if __name__ == "__main__":`, so that the
# checker, which imports your code, does not run them; in Jupyter they run as usual, and an
# experiment waits (it says so) until the tasks it uses are done. Figures appear below their
# cell; run as a script (`python ex1_bandit_basics.py`), it saves them next to the file.

# %%
from __future__ import annotations

import gymnasium as gym
import numpy as np

import agents
import envs  # noqa: F401  (registers the dpbandits/... environments)
from dpbandits.course.helpers import Checker, show, skip_if_not_done

check = Checker(1, globals())  # check("task") grades one task, check() all of them

# %% tags=["parameters"]
# Sizes of the experiments: smaller numbers run faster while you try things out.
N_RUNS = 200  # independent runs of each learner
HORIZON = 5000  # steps per run

# %% [markdown]
# ## Task 1 — play the bandit
#
# Write `pull_arm_repeatedly(env, arm, n_steps, seed)`: reset the environment with
# `seed`, pull `arm` `n_steps` times, and return `(total_reward, total_regret)`, the sum
# of the rewards and the sum of `info["regret"]`.


# %%
def pull_arm_repeatedly(env: gym.Env, arm: int, n_steps: int, seed: int) -> tuple[float, float]:
    """Reset ``env`` with ``seed``, pull ``arm`` ``n_steps`` times; return (reward, regret)."""
    # TODO: write this (see the docstring), then run the checker.
    raise NotImplementedError("TODO")


# %%
if __name__ == "__main__":
    check("pull_arm_repeatedly")

# %%
if __name__ == "__main__":
    with skip_if_not_done():
        env = gym.make("dpbandits/KArmedBernoulli-v0", means=[0.2, 0.5, 0.7], horizon=1000)
        for a in range(3):
            print("arm", a, pull_arm_repeatedly(env, a, 1000, seed=0))

# %% [markdown]
# ## Task 2 — keep running means
#
# A learner estimates each `mu_a` by the average of the rewards it got from arm `a`. Keeping
# all rewards is wasteful: the average can be updated in place,
#
#     N_a <- N_a + 1,      Q_a <- Q_a + (r - Q_a) / N_a.
#
# Like every agent of this library, yours plays `R` independent runs at once (the *batch*):
# `counts` and `means` have shape `(R, K)`, `actions` and `rewards` shape `(R,)` (one pull
# per run). Write `update_estimates(counts, means, actions, rewards)` returning the new
# `(counts, means)`; only the pulled arm of each row changes.


# %%
def update_estimates(
    counts: np.ndarray, means: np.ndarray, actions: np.ndarray, rewards: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """One incremental-mean update per row: row ``i`` pulled ``actions[i]`` and got
    ``rewards[i]``. Returns new ``(counts, means)`` arrays of shape ``(R, K)``."""
    # TODO: write this (see the docstring), then run the checker.
    raise NotImplementedError("TODO")


# %%
if __name__ == "__main__":
    check("update_estimates")


# %% [markdown]
# ## Task 3 — epsilon-greedy
#
# With probability `epsilon` explore: pick an arm uniformly at random among **all** `K`
# arms; otherwise exploit: pick the arm with the highest estimate. Each row of the batch
# decides independently. Use the generator `rng` (a `numpy.random.Generator`) for every
# random draw, so that results are reproducible.


# %%
def epsilon_greedy(estimates: np.ndarray, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    """One arm per row of ``estimates`` (shape ``(R, K)``): uniform with probability
    ``epsilon``, else the argmax. Returns an int array of shape ``(R,)``."""
    # TODO: write this (see the docstring), then run the checker.
    raise NotImplementedError("TODO")


# %%
if __name__ == "__main__":
    check("epsilon_greedy")


# %% [markdown]
# ## Task 4 — the regret of epsilon-greedy in the long run
#
# Once the estimates rank the best arm first, epsilon-greedy still explores in a fraction
# `epsilon` of the steps, uniformly over all arms. Write `greedy_regret_rate(means, epsilon)`:
# the expected regret **per step** in that regime.


# %%
def greedy_regret_rate(means: np.ndarray, epsilon: float) -> float:
    """Expected regret per step of epsilon-greedy whose estimates rank the best arm first."""
    # TODO: write this (see the docstring), then run the checker.
    raise NotImplementedError("TODO")


# %%
if __name__ == "__main__":
    check("greedy_regret_rate")


# %% [markdown]
# ## The agent, and experiments
#
# The class below turns your two functions into an agent of the library (see
# `agents/base.py`: `setup` allocates the state, `choose` returns the actions of a step,
# `observe` learns from them; every arm is pulled once first). `dpbandits.experiments.run`
# plays it for many runs at once and measures the regret.


# %%
class EpsilonGreedy(agents.Agent):
    """Epsilon-greedy on running means (your Tasks 2 and 3)."""

    name = "eps_greedy"

    def __init__(self, epsilon: float = 0.1) -> None:
        self.epsilon = epsilon

    def setup(self) -> None:
        self.counts = np.zeros((self.n_runs, self.n_arms))
        self.estimates = np.zeros((self.n_runs, self.n_arms))

    def choose(self) -> np.ndarray:
        return epsilon_greedy(self.estimates, self.epsilon, self.rng)

    def observe(self, actions: np.ndarray, rewards: np.ndarray) -> None:
        self.counts, self.estimates = update_estimates(
            self.counts, self.estimates, actions, rewards
        )


# %%
if __name__ == "__main__":
    import matplotlib.pyplot as plt

    from dpbandits.experiments import run

    with skip_if_not_done():
        means = [0.2, 0.3, 0.4, 0.5, 0.6, 0.7]
        bandit = {"id": "dpbandits/KArmedBernoulli-v0", "means": means, "horizon": HORIZON}
        players = {f"eps={e}": EpsilonGreedy(e) for e in (0.0, 0.01, 0.1, 0.3)}
        res = run(bandit, players, n_runs=N_RUNS, seed=0, n_jobs=1, progress=False)
        print(res.summary())
        fig, ax = plt.subplots()
        for label in res.labels:
            ax.plot(res.steps, res.mean(label), label=label)
        ax.set_xlabel("step t")
        ax.set_ylabel("mean regret R(t)")
        ax.legend()
        show(fig, "regret")

# %% [markdown]
# ## Questions
#
# 1. Why is the regret of `eps=0` (pure greedy) a straight line, with a large standard
#    error? Look at how often it gets stuck on a bad arm after the first round
#    (`res.data["eps=0.0"]["action_counts"]`).
# 2. Compare the slope of the `eps=0.1` curve over the last 2 500 steps with
#    `greedy_regret_rate(means, 0.1)`.
# 3. Which epsilon is best at `T = 5000`? Would the answer change at `T = 100_000`? What
#    does this say about any fixed epsilon?

# %%
# Your answer:

# %% [markdown]
# ## Your score

# %%
if __name__ == "__main__":
    check()
