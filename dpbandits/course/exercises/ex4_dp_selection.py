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
# # Exercise 4 — Private selection: randomized response and report noisy max
#
# A bandit agent that learns from people's data leaks it through its choices: someone who
# sees which arm it picks learns something about the rewards it got. **Differential
# privacy** (DP) bounds that leak. A randomized *selector* `M` that picks one of `K`
# candidates from scores `q` is **eps-DP** if for all *neighbouring* score vectors `q, q'`
# (one person's data changed: `|q_a - q'_a| <= d_a`, the *sensitivity* of candidate `a`)
# and every candidate `a`,
#
#     P[M(q) = a] <= e^eps * P[M(q') = a].
#
# Equivalently the **privacy loss** `max_a |ln P[M(q) = a] - ln P[M(q') = a]|` is at most
# `eps`. Small `eps` = strong privacy = noisy choices.
#
# Two classic selectors (Section III-B of the paper "Private Selection with Heterogeneous
# Sensitivities"):
#
# * **k-ary randomized response** (kRR, Warner 1965): pick the best candidate (the argmax
#   of `q`) with probability `e^eps / (e^eps + K - 1)`, else one of the other `K - 1`
#   uniformly. It uses only *which* candidate is best.
# * **Report noisy max** (RNM): add independent noise to every score and report the
#   argmax. With Gumbel noise of scale `2 D / eps`, `D = max_a d_a`, this is the
#   *exponential mechanism*: `P[a] ∝ exp(eps q_a / (2 D))`.
#
# You will write both, measure their privacy loss with the library's **auditor**
# (`dpbandits.audit`), and see the utility/privacy trade-off.
#
# Check each task with the cell after it: `check("name")` prints its points and `ok`,
# `not done yet`, or what is wrong and its likely cause (`check("name", hint=1)` adds a
# hint). From a terminal, grade the whole notebook (or script):
# `dpbandits course check 4 ex4_dp_selection.ipynb`.

# %%
from __future__ import annotations

import numpy as np

from dpbandits.course.helpers import Checker, show, skip_if_not_done

check = Checker(4, globals())  # check("task") grades one task, check() all of them

# %% tags=["parameters"]
# Sizes of the experiments: smaller numbers run faster while you try things out.
AUDIT_DRAWS = 100_000  # draws of a selector per input of a neighbouring pair

# %% [markdown]
# ## Task 1 — k-ary randomized response
#
# `q` has shape `(R, K)`: one selection problem per row (no ties). Return one index per row.


# %%
def randomized_response(q: np.ndarray, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    """kRR: the argmax of each row with probability ``e^eps / (e^eps + K - 1)``, else a
    uniformly chosen *other* candidate. Int array of shape ``(R,)``."""
    # TODO: write this (see the docstring), then run the checker.
    raise NotImplementedError("TODO")


# %%
if __name__ == "__main__":
    check("randomized_response")


# %% [markdown]
# ## Task 2 — report noisy max with Gumbel noise
#
# `q` and `d` have shape `(R, K)`. For each row, `D` is the **largest** sensitivity of the
# row; add independent Gumbel noise of scale `2 D / eps` to each score (`rng.gumbel`) and
# return the argmax.


# %%
def report_noisy_max(
    q: np.ndarray, d: np.ndarray, epsilon: float, rng: np.random.Generator
) -> np.ndarray:
    """``argmax_a (q_a + Gumbel(scale = 2 D / eps))`` per row, ``D = max_a d_a``."""
    # TODO: write this (see the docstring), then run the checker.
    raise NotImplementedError("TODO")


# %%
if __name__ == "__main__":
    check("report_noisy_max")


# %% [markdown]
# ## Task 3 — the privacy loss of two output distributions
#
# Given the output probabilities `p` (on `q`) and `p_prime` (on a neighbour `q'`), return
# `max_a |ln p_a - ln p'_a|`. An outcome possible under one input and impossible under the
# other has infinite loss (`np.inf`); outcomes impossible under both do not count.


# %%
def privacy_loss(p: np.ndarray, p_prime: np.ndarray) -> float:
    """``max_a |ln p_a - ln p'_a|`` over outcomes with ``p_a + p'_a > 0``."""
    # TODO: write this (see the docstring), then run the checker.
    raise NotImplementedError("TODO")


# %%
if __name__ == "__main__":
    check("privacy_loss")


# %% [markdown]
# ## Task 4 — utility of randomized response
#
# For one score vector `q` (shape `(K,)`, no ties), the *utility* of a selector is the
# expected score of the candidate it picks. Write it for kRR in closed form.


# %%
def expected_utility_krr(q: np.ndarray, epsilon: float) -> float:
    """``E[q_{M(q)}]`` for kRR at ``epsilon``."""
    # TODO: write this (see the docstring), then run the checker.
    raise NotImplementedError("TODO")


# %%
if __name__ == "__main__":
    check("expected_utility_krr")


# %% [markdown]
# ## Experiments: audit your selectors, then trade utility for privacy
#
# `dpbandits.selectors.from_function(fn, epsilon=...)` turns a function
# `fn(q, d, epsilon, rng)` into a selector of the library, and
# `dpbandits.audit.estimate_privacy_loss(selector, pair)` draws it many times on the two
# inputs of a neighbouring pair (`dpbandits.audit.HARD_PAIRS`) and returns the estimated
# loss with a lower confidence bound. The selector passes when the lower bound is `<= eps`.

# %%
if __name__ == "__main__":
    import matplotlib.pyplot as plt

    from dpbandits import selectors
    from dpbandits.audit import HARD_PAIRS, estimate_privacy_loss

    eps = 1.0
    with skip_if_not_done():
        my_krr = selectors.from_function(
            lambda q, d, e, rng: randomized_response(q, e, rng), name="my_krr", epsilon=eps
        )
        my_rnm = selectors.from_function(report_noisy_max, name="my_rnm", epsilon=eps)
        for sel in (my_krr, my_rnm):
            for pair in ("swap", "shift2", "one_up_het"):
                print(estimate_privacy_loss(sel, pair, draws=AUDIT_DRAWS, rng=0))
        print(HARD_PAIRS["shift2"])
        check("audit")  # the checker's own audit of both selectors

    with skip_if_not_done():
        # Utility against eps on one score vector: kRR (your closed form) and the
        # exponential mechanism (softmax in closed form).
        q = np.array([0.9, 0.8, 0.5, 0.2, 0.1])
        grid = np.geomspace(0.05, 20, 60)
        krr = [expected_utility_krr(q, e) for e in grid]
        em = [float(np.sum(q * np.exp(e * q / 2) / np.exp(e * q / 2).sum())) for e in grid]
        fig, ax = plt.subplots()
        ax.plot(grid, krr, label="kRR")
        ax.plot(grid, em, label="RNM (Gumbel) = exponential mechanism, d = 1")
        ax.axhline(q.max(), color="k", ls=":", label="best score")
        ax.set_xscale("log")
        ax.set_xlabel("epsilon")
        ax.set_ylabel("expected score of the pick")
        ax.legend()
        show(fig, "utility")

# %% [markdown]
# ## Questions
#
# 1. Does your kRR reach the loss `eps` on the pair `swap`? Why is that the worst case for
#    kRR?
# 2. On `q = [0.9, 0.8, 0.5, 0.2, 0.1]`, which selector has the higher utility at eps = 1?
#    At eps = 10? Why can kRR be better although it ignores the score values?
# 3. Change `report_noisy_max` to use each candidate's own sensitivity `d_a` instead of
#    `D` (the "RNMH" of the paper, §IV-A) and audit it on the pair `sec4a` and on
#    `NeighbouringPair("one_sided", np.array([0.0, 3.0]), np.array([0.0, 2.0]),
#    np.array([1e-3, 1.0]))` (from `dpbandits.audit`). What happens, and why?

# %%
# Your answer:

# %% [markdown]
# ## Your score

# %%
if __name__ == "__main__":
    check()
