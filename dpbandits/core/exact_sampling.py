"""Exact random coins from integer randomness: Bernoulli(p), p rational, and Bernoulli(exp(-gamma)).

A floating-point sampler draws a 53-bit uniform and compares it with a rounded probability, so
a probability below about ``2**-53`` (or the last bits of any probability) is not what the
mechanism's proof assumes; for the exponential mechanism this breaks the exact ratio bound in
the tails (Ilvento 2020, "Implementing the exponential mechanism with base-2 differential
privacy"). The coins here use only uniform integers from a ``numpy.random.Generator``
(``Generator.integers``, which is exact) and Python integer arithmetic, so their probabilities
are exactly the ones asked for:

- :func:`bernoulli` / :func:`bernoulli_array`: ``P(True) = p`` for a rational ``p`` (a
  ``fractions.Fraction``; every float is one), by comparing 64 uniform bits at a time with the
  binary expansion of ``p`` (a tie, probability ``2**-64``, looks at the next 64 bits);
- :func:`bernoulli_exp`: ``P(True) = exp(-gamma)`` for a rational ``gamma >= 0``, Algorithms 1
  and 2 of Canonne, Kamath and Steinke (2020, "The discrete Gaussian for differential privacy");
- :func:`bernoulli_exp_int` and :func:`bernoulli_exp_fractions`: the same, vectorised, for
  arrays of integers ``gamma`` (``gamma`` successes of the coin ``exp(-1)``) and of rationals in
  ``[0, 1)``.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "bernoulli",
    "bernoulli_array",
    "bernoulli_exp",
    "bernoulli_exp_fractions",
    "bernoulli_exp_int",
    "exp_minus_one",
]

_WORD = 64  # uniform bits compared with p per step
_TOP = 2**_WORD


def _word(rng: np.random.Generator) -> int:
    return int(rng.integers(0, _TOP, dtype=np.uint64))


def bernoulli(p: Fraction, rng: np.random.Generator) -> bool:
    """``True`` with probability exactly ``p`` (clipped to ``[0, 1]``).

    ``p 2**64 = d + r`` (``d`` an integer, ``0 <= r < 1``): a uniform 64-bit ``u`` gives ``True``
    when ``u < d``, ``False`` when ``u > d``, and on ``u = d`` the coin ``Bernoulli(r)``, so
    ``P(True) = (d + r) / 2**64 = p``.  Expected cost: one draw.
    """
    return _bernoulli(p.numerator, p.denominator, rng)


def _bernoulli(num: int, den: int, rng: np.random.Generator) -> bool:
    """:func:`bernoulli` of ``num / den`` (``den > 0``), in Python integers."""
    if num <= 0:
        return False
    if num >= den:
        return True
    while num:
        d, num = divmod(num << _WORD, den)
        u = _word(rng)
        if u != d:
            return u < d
    return False  # p's expansion ended: the remaining probability is 0


def bernoulli_array(p: Fraction, size: int, rng: np.random.Generator) -> NDArray[np.bool_]:
    """``size`` independent :func:`bernoulli` coins of probability ``p``, vectorised."""
    num, den = p.numerator, p.denominator
    if num <= 0 or num >= den:
        return np.full(size, num > 0)
    d, rem = divmod(num << _WORD, den)
    u = rng.integers(0, _TOP, size=size, dtype=np.uint64)
    out = u < np.uint64(d)
    rest = Fraction(rem, den)
    for i in np.flatnonzero(u == np.uint64(d)).tolist():  # probability 2**-64 each
        out[i] = bernoulli(rest, rng)
    return out


def bernoulli_exp(gamma: Fraction, rng: np.random.Generator) -> bool:
    """``True`` with probability exactly ``exp(-gamma)``, ``gamma`` a rational ``>= 0``.

    Canonne, Kamath and Steinke (2020), Algorithm 1 for ``gamma <= 1``: draw
    ``A_k ~ Bernoulli(gamma / k)`` for ``k = 1, 2, ...`` until the first ``A_K = 0``; return
    ``K`` odd (``P = sum_k (-gamma)^k / k! = exp(-gamma)``).  Algorithm 2 for ``gamma > 1``:
    ``floor(gamma)`` coins ``exp(-1)``, stopping at the first failure, then the coin
    ``exp(-(gamma - floor(gamma)))``.  Expected cost: at most ``e (1 + 1 / (1 - 1/e))``, about
    7, rational coins, whatever ``gamma``.
    """
    if gamma < 0:
        raise ValueError(f"gamma must be >= 0, got {gamma!r}")
    num, den = gamma.numerator, gamma.denominator
    whole, num = divmod(num, den)
    if whole and not num:  # an integer: whole - 1 coins exp(-1), then exp(-1) itself below
        whole, num = whole - 1, den
    while whole:
        if not _exp_fraction(1, 1, rng):
            return False
        whole -= 1
    return _exp_fraction(num, den, rng)


def _exp_fraction(num: int, den: int, rng: np.random.Generator) -> bool:
    """Algorithm 1: ``exp(-num / den)`` for ``0 <= num <= den``."""
    k = 1
    while _bernoulli(num, den * k, rng):
        k += 1
    return k % 2 == 1


#: ``13! / k!`` for ``k = 13, 12, ..., 2`` (increasing): with ``U`` uniform on ``[0, 13!)``, the
#: coins ``A_2 .. A_k ~ Bernoulli(1/j)`` all succeed with probability ``1/k!`` exactly, the
#: probability of ``U < 13! / k!`` (``k!`` divides ``13!``).
_SURVIVE = np.array([math.factorial(13) // math.factorial(k) for k in range(13, 1, -1)])


def exp_minus_one(size: int, rng: np.random.Generator) -> NDArray[np.bool_]:
    """``size`` independent coins of probability exactly ``exp(-1)``: Algorithm 1 above with
    ``gamma = 1`` (``A_1 ~ Bernoulli(1)`` always succeeds), vectorised.  The first failing
    ``K`` of the coins ``A_k ~ Bernoulli(1/k)``, ``k = 2..13``, comes from one uniform integer
    ``U < 13!``: ``A_2 .. A_k`` all succeed iff ``U < 13!/k!``; the rare rows where all twelve
    succeed (``U = 0``, probability ``1/13!``) continue one coin at a time."""
    u = rng.integers(0, math.factorial(13), size=size)
    k = 2 + (_SURVIVE.size - np.searchsorted(_SURVIVE, u, side="right"))
    for i in np.flatnonzero(u == 0).tolist():
        kk = 14
        while rng.integers(0, kk) == 0:
            kk += 1
        k[i] = kk
    return k % 2 == 1


def bernoulli_exp_int(gamma: NDArray[np.int64], rng: np.random.Generator) -> NDArray[np.bool_]:
    """Independent coins of probability exactly ``exp(-gamma[i])`` for integers ``gamma >= 0``.

    Coin ``i`` succeeds when ``gamma[i]`` coins ``exp(-1)`` all succeed; each round flips one
    coin for every coin still undecided, so the number of rounds is about the logarithm of the
    array size (a survivor needs ``gamma`` successes in a row, each of probability ``1/e``).
    """
    left = np.array(gamma, dtype=np.int64).reshape(-1)
    if left.size and left.min() < 0:
        raise ValueError("gamma must be >= 0")
    ok = np.ones(left.size, dtype=bool)
    alive = np.flatnonzero(left > 0)
    while alive.size:
        heads = exp_minus_one(alive.size, rng)
        ok[alive[~heads]] = False
        alive = alive[heads]
        left[alive] -= 1
        alive = alive[left[alive] > 0]
    return ok.reshape(np.shape(gamma))


def bernoulli_exp_fractions(
    num: list[int], den: list[int], rng: np.random.Generator
) -> NDArray[np.bool_]:
    """Independent coins of probability exactly ``exp(-num[i] / den[i])``, for rationals
    ``0 <= num[i] / den[i] < 1`` (Python ints of any size): Algorithm 1 of :func:`bernoulli_exp`,
    vectorised.  Each round flips ``Bernoulli(gamma_i / k_i)`` for every coin still going, by
    comparing 64 uniform bits with ``floor(2**64 gamma_i / k_i)`` (the integer part computed in
    Python integers; a tie, probability ``2**-64``, goes to :func:`bernoulli`)."""
    size = len(num)
    if size != len(den) or any(not 0 <= a < b for a, b in zip(num, den, strict=True)):
        raise ValueError("bernoulli_exp_fractions needs 0 <= num[i] < den[i]")
    k = np.ones(size, dtype=np.int64)
    active = np.arange(size)
    while active.size:
        pairs = [
            divmod(num[i] << _WORD, den[i] * kk)
            for i, kk in zip(active.tolist(), k[active].tolist(), strict=True)
        ]
        threshold = np.array([t for t, _ in pairs], dtype=np.uint64)  # < 2**64: gamma / k < 1
        u = rng.integers(0, _TOP, size=active.size, dtype=np.uint64)
        go_on = u < threshold
        for t in np.flatnonzero(u == threshold).tolist():
            i = int(active[t])
            go_on[t] = bernoulli(Fraction(pairs[t][1], den[i] * int(k[i])), rng)
        active = active[go_on]
        k[active] += 1
    return k % 2 == 1
