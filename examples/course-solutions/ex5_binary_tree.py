# Reference solution of exercise 5: the solved parts only.
#
# The rest of the notebook is the exercise file, dpbandits/course/exercises/ex5_binary_tree.py
# (examples/course/ex5_binary_tree.py): each function
# below is the solved body of the task of the same name there (which has its types,
# defaults and docstring), and the lines between BEGIN ANSWER and END ANSWER replace
# its "# Your answer:".
#   dpbandits course start 5 DIR --solution   writes the complete, runnable notebook;
#   dpbandits course check 5 examples/course-solutions/ex5_binary_tree.py   grades it.

from __future__ import annotations

import numpy as np


def dyadic_decomposition(n):
    return [(level, (n >> level) - 1) for level in range(n.bit_length()) if (n >> level) & 1]


def binary_mechanism(x, epsilon, rng):
    x = np.asarray(x, dtype=float)
    horizon = x.size
    levels = horizon.bit_length()  # floor(log2 T) + 1
    prefix = np.concatenate([[0.0], np.cumsum(x)])
    noise: dict[tuple[int, int], float] = {}
    out = np.empty(horizon)
    for n in range(1, horizon + 1):
        total = 0.0
        for level, index in dyadic_decomposition(n):
            if (level, index) not in noise:
                noise[(level, index)] = rng.laplace(scale=levels / epsilon)
            start, end = index << level, (index + 1) << level
            total += prefix[end] - prefix[start] + noise[(level, index)]
        out[n - 1] = total
    return out


def naive_prefix_sums(x, epsilon, rng):
    x = np.asarray(x, dtype=float)
    return np.cumsum(x + rng.laplace(scale=1.0 / epsilon, size=x.size))


# BEGIN ANSWER
# 1. 2^k - 1 has all k bits set: its release adds k = L noisy nodes, the worst case.
# 2. Naive: variance 2T/eps^2. Tree: 2 k L^2/eps^2 with L = k: equal when T = k^3, i.e.
#    around T ~ 2^10 (k = 10: T = 1023 vs k^3 = 1000): the tree wins from T ~ 1000 on,
#    and by a growing factor after.
# 3. For T = 2^k, n = T needs the node of level k, the (k+1)-th level; with ceil(log2 T) = k
#    levels the tree has no such node (and a noise scale computed from too few levels
#    would break the privacy guarantee).
# END ANSWER
