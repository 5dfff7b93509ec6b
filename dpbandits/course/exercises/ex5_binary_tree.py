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
# # Exercise 5 — Private running sums: the binary tree mechanism
#
# A private bandit agent needs the mean reward of each arm **after every pull**: a stream
# of prefix sums `S_1, S_2, ..., S_T` with `S_n = x_1 + ... + x_n`, each `x_i` in `[0, 1]`
# coming from one person. Releasing all of them privately is *continual release*.
#
# **Naive way.** Add `Laplace(1/eps)` noise to every item and release the running sum of
# the noisy items. Each item is used once, so this is eps-DP, but the noise of `S_n` is a
# sum of `n` Laplace variables: its standard deviation grows like `sqrt(n) / eps`.
#
# **Binary tree mechanism** (Dwork et al. 2010; Chan, Shi & Song 2011). Cut `[1, n]` into
# *dyadic blocks*: node `(l, i)` of level `l` covers items `i 2^l + 1 ... (i + 1) 2^l`.
# Every `n` is a sum of at most `L` blocks, one per set bit `l` of `n` (the node
# `(l, (n >> l) - 1)`), e.g. `13 = 8 + 4 + 1`: items 1–8, 9–12, 13. Each node gets its own
# Laplace noise, drawn once; the release `S_n` adds the noisy nodes of `n`. With horizon
# `T` there are `L = floor(log2 T) + 1` levels and each item lies in exactly one node per
# level, so node noise `Laplace(L / eps)` makes the whole stream eps-DP — and every
# release has at most `L` noise terms: error `O(log(T)^1.5 / eps)` instead of `sqrt(T)`.
#
# The library uses these mechanisms in `dpbandits.continual` (its agents use the *hybrid*
# variant, which does not need `T`).
#
# Check each task with the cell after it: `check("name")` prints its points and `ok`,
# `not done yet`, or what is wrong and its likely cause (`check("name", hint=1)` adds a
# hint). From a terminal, grade the whole notebook (or script):
# `dpbandits course check 5 ex5_binary_tree.ipynb`.

# %%
from __future__ import annotations

import numpy as np

from dpbandits.course.helpers import Checker, show, skip_if_not_done

check = Checker(5, globals())  # check("task") grades one task, check() all of them

# %% tags=["parameters"]
# Sizes of the experiments: smaller numbers run faster while you try things out.
MAX_LOG2_T = 11  # horizons T = 2^k - 1 for k = 3 .. MAX_LOG2_T
REPEATS = 200  # runs of each mechanism per horizon

# %% [markdown]
# ## Task 1 — the dyadic decomposition
#
# Return the list of nodes `(level, index)` whose blocks make up `[1, n]` (any order).
# Example: `dyadic_decomposition(13) == [(3, 0), (2, 2), (0, 12)]`.


# %%
def dyadic_decomposition(n: int) -> list[tuple[int, int]]:
    """Nodes ``(l, (n >> l) - 1)`` for every set bit ``l`` of ``n``."""
    # TODO: write this (see the docstring), then run the checker.
    raise NotImplementedError("TODO")


# %%
if __name__ == "__main__":
    check("dyadic_decomposition")


# %% [markdown]
# ## Task 2 — the binary tree mechanism
#
# `x` has shape `(T,)` with entries in `[0, 1]`. Return the `T` private prefix sums (entry
# `n - 1` is the release of `S_n`). Use `L = floor(log2 T) + 1` levels and draw **one**
# `Laplace(L / eps)` noise per node (`rng.laplace`), shared by all releases that use it.


# %%
def binary_mechanism(x: np.ndarray, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    """Private prefix sums of ``x`` by the binary tree mechanism, shape ``(T,)``."""
    # TODO: write this (see the docstring), then run the checker.
    raise NotImplementedError("TODO")


# %%
if __name__ == "__main__":
    check("binary_mechanism")


# %% [markdown]
# ## Task 3 — the naive mechanism, for comparison
#
# Add independent `Laplace(1 / eps)` noise to every item, and return the running sums of
# the noisy items, shape `(T,)`.


# %%
def naive_prefix_sums(x: np.ndarray, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    """Running sums of ``x_i + Laplace(1/eps)``, shape ``(T,)``."""
    # TODO: write this (see the docstring), then run the checker.
    raise NotImplementedError("TODO")


# %%
if __name__ == "__main__":
    check("naive_prefix_sums")


# %% [markdown]
# ## Experiments: error against T
#
# The error of a release is `release - true prefix sum`. Measure its standard deviation at
# the last step `n = T` for both mechanisms, for several `T`, and compare with the library
# (`dpbandits.continual.binary_noise`, the same noise drawn all at once).

# %%
if __name__ == "__main__":
    import matplotlib.pyplot as plt

    from dpbandits.continual import binary_noise

    with skip_if_not_done():
        rng = np.random.default_rng(0)
        eps = 1.0
        horizons = [2**k - 1 for k in range(3, MAX_LOG2_T + 1)]
        tree_sd, naive_sd, library_sd = [], [], []
        for T in horizons:
            x = rng.random(T)
            exact = x.sum()
            tree = [binary_mechanism(x, eps, rng)[-1] - exact for _ in range(REPEATS)]
            naive = [naive_prefix_sums(x, eps, rng)[-1] - exact for _ in range(REPEATS)]
            tree_sd.append(np.std(tree))
            naive_sd.append(np.std(naive))
            library_sd.append(np.std(binary_noise(T, eps, size=2000, rng=rng)[:, -1]))
        fig, ax = plt.subplots()
        ax.plot(horizons, tree_sd, "o-", label="your binary tree")
        ax.plot(horizons, library_sd, "x--", label="library binary_noise")
        ax.plot(horizons, naive_sd, "s-", label="naive per-item Laplace")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("T")
        ax.set_ylabel("sd of the error at n = T")
        ax.legend()
        show(fig, "error")

# %% [markdown]
# ## Questions
#
# 1. Why `2^k - 1` in the plot? Which `n <= T` has the largest error for the tree?
# 2. From which `T` on is the tree better than the naive mechanism at `n = T`?
#    (The variance of the tree's `S_T` with `T = 2^k - 1` is `2 k (L/eps)^2`.)
# 3. Why would `L = ceil(log2 T)` levels be a bug when `T` is a power of two?

# %%
# Your answer:

# %% [markdown]
# ## Your score

# %%
if __name__ == "__main__":
    check()
