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
# # Exercise 2 — Optimism and sampling: UCB and Thompson sampling
#
# Epsilon-greedy explores blindly: it keeps trying arms it already knows are bad. Two
# better ideas:
#
# * **UCB** (*optimism in the face of uncertainty*, Auer et al. 2002): play the arm with
#   the highest *upper confidence bound*
#
#       index_a = S_a / N_a + alpha * sqrt(ln t / N_a),
#
#   with `N_a` the pulls of arm `a`, `S_a` the sum of its rewards and `t` the total number
#   of pulls so far. A rarely pulled arm has a large bonus and gets tried; the bonus grows
#   only like `sqrt(ln t)`, so bad arms are tried less and less often.
# * **Thompson sampling** (Thompson 1933): keep a posterior over each arm's mean and play
#   the arm whose *sampled* mean is highest. For 0/1 rewards and a uniform prior, the
#   posterior of arm `a` after `s_a` successes and `f_a` failures is
#   `Beta(1 + s_a, 1 + f_a)`.
#
# Both have regret of order `ln T`, and no algorithm can do better on every bandit: Lai and
# Robbins (1985) showed that for Bernoulli arms
#
#     liminf R(T) / ln T >= sum_{a: mu_a < mu*} (mu* - mu_a) / kl(mu_a, mu*),
#
# with `kl(p, q) = p ln(p/q) + (1-p) ln((1-p)/(1-q))`.
#
# Check each task with the cell after it: `check("name")` prints its points and `ok`,
# `not done yet`, or what is wrong and its likely cause (`check("name", hint=1)` adds a
# hint). From a terminal, grade the whole notebook (or script):
# `dpbandits course check 2 ex2_ucb_thompson.ipynb`.

# %%
from __future__ import annotations

import numpy as np

import agents
import envs  # noqa: F401  (registers the dpbandits/... environments)
from dpbandits.course.helpers import Checker, show, skip_if_not_done

check = Checker(2, globals())  # check("task") grades one task, check() all of them

# %% tags=["parameters"]
# Sizes of the experiments: smaller numbers run faster while you try things out.
N_RUNS = 100  # independent runs of each learner
HORIZON = 5000  # steps per run

# %% [markdown]
# ## Task 1 — the UCB index
#
# `counts` and `sums` have shape `(R, K)` (one row per run, every arm pulled at least once);
# `t` is the number of pulls made so far. Return the `(R, K)` array of indices.


# %%
def ucb_index(counts: np.ndarray, sums: np.ndarray, t: int, alpha: float) -> np.ndarray:
    """UCB indices ``S_a / N_a + alpha * sqrt(ln t / N_a)``, shape ``(R, K)``."""
    # TODO: write this (see the docstring), then run the checker.
    raise NotImplementedError("TODO")


# %%
if __name__ == "__main__":
    check("ucb_index")


# %% [markdown]
# ## Task 2 — Thompson sampling for 0/1 rewards
#
# For each row, draw one sample `theta_a ~ Beta(1 + successes_a, 1 + failures_a)` per arm
# (use `rng.beta`) and return the arm with the largest sample.


# %%
def thompson_choose(
    successes: np.ndarray, failures: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """One arm per row: the argmax of posterior samples. Int array of shape ``(R,)``."""
    # TODO: write this (see the docstring), then run the checker.
    raise NotImplementedError("TODO")


# %%
if __name__ == "__main__":
    check("thompson_choose")


# %% [markdown]
# ## Task 3 — the Lai–Robbins constant
#
# Write `lai_robbins_constant(means)`: the constant `c` of the lower bound
# `R(T) >= c ln T` above, for Bernoulli arms with the given means (all in `(0, 1)`).


# %%
def lai_robbins_constant(means: np.ndarray) -> float:
    """``sum over arms a with mu_a < mu* of (mu* - mu_a) / kl(mu_a, mu*)``."""
    # TODO: write this (see the docstring), then run the checker.
    raise NotImplementedError("TODO")


# %%
if __name__ == "__main__":
    check("lai_robbins_constant")


# %% [markdown]
# ## The agents, and experiments
#
# Your functions inside two agents of the library. The library's own `agents.UCB(log="t")`
# and `agents.ThompsonSampling(model="bernoulli")` are the same algorithms: your curves
# should match theirs.


# %%
class MyUCB(agents.Agent):
    """UCB1 with your index; ``t`` is the number of pulls so far."""

    name = "my_ucb"

    def __init__(self, alpha: float = np.sqrt(2.0)) -> None:
        self.alpha = alpha

    def setup(self) -> None:
        self.stats = agents.ArmStatistics(self.n_runs, self.n_arms)

    def choose(self) -> np.ndarray:
        return np.argmax(ucb_index(self.stats.counts, self.stats.sums, self.t, self.alpha), axis=1)

    def observe(self, actions: np.ndarray, rewards: np.ndarray) -> None:
        self.stats.update(actions, rewards)


class MyThompson(agents.Agent):
    """Beta-Bernoulli Thompson sampling with your sampler (rewards must be 0 or 1)."""

    name = "my_thompson"

    def setup(self) -> None:
        self.stats = agents.ArmStatistics(self.n_runs, self.n_arms)

    def choose(self) -> np.ndarray:
        successes = self.stats.sums
        return thompson_choose(successes, self.stats.counts - successes, self.rng)

    def observe(self, actions: np.ndarray, rewards: np.ndarray) -> None:
        self.stats.update(actions, rewards)


# %%
if __name__ == "__main__":
    import matplotlib.pyplot as plt

    from dpbandits.experiments import run

    with skip_if_not_done():
        means = [0.2, 0.4, 0.5, 0.6, 0.7]
        bandit = {"id": "dpbandits/KArmedBernoulli-v0", "means": means, "horizon": HORIZON}
        players = {
            "my UCB": MyUCB(),
            "my TS": MyThompson(),
            "library UCB1": agents.UCB(log="t"),
            "library TS": agents.ThompsonSampling(model="bernoulli"),
        }
        res = run(bandit, players, n_runs=N_RUNS, seed=0, n_jobs=1, progress=False)
        print(res.summary())
        c = lai_robbins_constant(np.array(means))
        fig, ax = plt.subplots()
        for label in res.labels:
            ax.plot(res.steps, res.mean(label), label=label)
        ax.plot(res.steps, c * np.log(res.steps), "k--", label="Lai-Robbins c ln t")
        ax.set_xscale("log")
        ax.set_xlabel("step t (log scale)")
        ax.set_ylabel("mean regret")
        ax.legend()
        show(fig, "regret")

# %% [markdown]
# ## Questions
#
# 1. On the log-scale plot, which curves become straight lines? What is their slope,
#    compared with the Lai–Robbins constant?
# 2. Change `alpha` of `MyUCB` to 0.5 and to 3. What happens to the regret, and why?
# 3. Thompson sampling usually beats UCB here. Where does UCB spend its extra regret?
#    (Look at `res.data[label]["action_counts"]`.)

# %%
# Your answer:

# %% [markdown]
# ## Your score

# %%
if __name__ == "__main__":
    check()
