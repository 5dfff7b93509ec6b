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
# # Exercise 6 — Putting it together: a private bandit agent under shift
#
# The private agent of the paper (App. H) combines everything so far. At every step, for
# each arm `a`:
#
# 1. its **private mean** `q_a` comes from a continual-release mechanism (exercise 5; the
#    library uses the hybrid mechanism, `dpbandits.continual.PrivateMeans`);
# 2. its **sensitivity** `d_a` is a DP estimate of the spread of its recent rewards
#    (`dpbandits.quantiles.WindowedSensitivity`);
# 3. the action is a **DP selection** `M(q, d)` (exercise 4).
#
# `agents.PrivateAgent` assembles these parts; you only bring the selector. Yours is
# **permute-and-flip** (McKenna & Sheldon 2020): go through the candidates in a uniformly
# random order and *accept* candidate `a` with probability
#
#     p_a = exp(eps * (q_a - max q) / (2 D)),      D = max_a d_a,
#
# returning the first accepted one. The best candidate has `p = 1`, so one pass always
# ends. It is eps-DP and never worse than the exponential mechanism.
#
# Then you will run your agent against UCB and Thompson sampling on the two-armed shift of
# exercise 3, for several eps, with `dpbandits.experiments.run`.
#
# Check each task with the cell after it: `check("name")` prints its points and `ok`,
# `not done yet`, or what is wrong and its likely cause (`check("name", hint=1)` adds a
# hint). From a terminal, grade the whole notebook (or script):
# `dpbandits course check 6 ex6_private_agent.ipynb`.

# %%
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import agents
from dpbandits import selectors  # noqa: F401  (for Task 2)
from dpbandits.course.helpers import Checker, show, skip_if_not_done

check = Checker(6, globals())  # check("task") grades one task, check() all of them

# %% tags=["parameters"]
# Sizes of the experiment: smaller numbers run faster while you try things out.
GRID = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)  # eps_S of the private agents
N_RUNS = 20  # independent runs of each agent
HORIZON = 10_000  # steps per run; the arms swap at 3/5 of it

# %% [markdown]
# ## Task 1 — permute-and-flip
#
# `q`, `d` of shape `(R, K)`; one independent random order per row. Return `(R,)` indices.


# %%
def permute_and_flip(
    q: np.ndarray, d: np.ndarray, epsilon: float, rng: np.random.Generator
) -> np.ndarray:
    """Permute-and-flip selection, one index per row of ``q``."""
    # TODO: write this (see the docstring), then run the checker.
    raise NotImplementedError("TODO")


# %%
if __name__ == "__main__":
    check("permute_and_flip")


# %% [markdown]
# ## Task 2 — a private agent with your selector
#
# Return an `agents.PrivateAgent` whose selector is your `permute_and_flip` with
# `eps_S = epsilon` per action (wrap it with `selectors.from_function(...)`; keep the
# agent's other defaults: `eps_M = 1` for the means, `eps_p = 1` per pair of quantiles).


# %%
def make_agent(epsilon: float) -> agents.PrivateAgent:
    """``PrivateAgent`` selecting with your permute-and-flip at ``eps_S = epsilon``."""
    # TODO: write this (see the docstring), then run the checker.
    raise NotImplementedError("TODO")


# %%
if __name__ == "__main__":
    check("make_agent")


# %% [markdown]
# ## Task 3 — the comparison
#
# Write `compare(epsilons, n_runs, horizon, seed)`: run, with
# `dpbandits.experiments.run(env, players, n_runs=n_runs, seed=seed, n_jobs=1,
# progress=False)`,
#
# * the environment `{"id": "dpbandits/TwoArmedShift-v0", "t_shift": 3 * horizon // 5,
#   "horizon": horizon}`,
# * the players `"UCB"`: `agents.UCB(log="t")`, `"TS"`: `agents.ThompsonSampling()`, and
#   one private agent per eps labelled `f"PF eps={eps:g}"` (your `make_agent(eps)`),
#
# and return the `Results`.


# %%
def compare(epsilons: Sequence[float], n_runs: int, horizon: int, seed: int = 0) -> Any:
    """Results of UCB, TS and your private agent at every eps on the two-armed shift."""
    # TODO: write this (see the docstring), then run the checker.
    raise NotImplementedError("TODO")


# %%
if __name__ == "__main__":
    check("compare")


# %% [markdown]
# ## The experiment
#
# A few minutes on a laptop: 20 runs of 10 000 steps, the shift at step 6 000 (the sizes
# are set at the top of the notebook).

# %%
if __name__ == "__main__":
    import matplotlib.pyplot as plt

    with skip_if_not_done():
        res = compare(GRID, n_runs=N_RUNS, horizon=HORIZON, seed=0)
        print(res.summary())
        print(res.privacy_text())
        rows = {row["agent"]: row for row in res.summary()}
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
        for label in res.labels:
            ax1.plot(res.steps, res.mean(label), label=label)
        ax1.axvline(3 * HORIZON // 5, color="k", ls=":")
        ax1.set_xlabel("step t")
        ax1.set_ylabel("mean dynamic regret")
        ax1.legend(fontsize=7)
        ax2.plot(GRID, [rows[f"PF eps={e:g}"]["regret_mean"] for e in GRID], "o-", label="PF")
        for label in ("UCB", "TS"):
            ax2.axhline(rows[label]["regret_mean"], ls="--", label=label)
        ax2.set_xscale("log")
        ax2.set_xlabel("eps_S per action")
        ax2.set_ylabel("total regret")
        ax2.legend()
        show(fig, "regret")

# %% [markdown]
# ## Questions
#
# 1. How does your agent's total regret change with eps? Where does it stop improving, and
#    what limits it then (hint: `eps_M` and the sensitivities)?
# 2. Compare pre-change and post-change regret with UCB and TS. Does privacy noise help the
#    agent adapt after the shift, as the paper claims? Compare with `docs/shift.md`.
# 3. Read `res.privacy_text()`. What is the total privacy spent by one agent over the run,
#    with basic composition? Why does the paper count eps per action instead?

# %%
# Your answer:

# %% [markdown]
# ## Your score

# %%
if __name__ == "__main__":
    check()
