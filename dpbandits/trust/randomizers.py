"""The user's randomizers of local differential privacy: each reward is privatized where it is
produced, before any learner sees it (Ren, Zhou, Liu & Shroff 2020, "Multi-armed bandits with
local differential privacy", Sec. 3, the *curators* CTL and CTB).

A randomizer maps one reward ``x`` in a known range ``[lo, hi]`` to a report ``y``; it is
``eps``-LDP when, for any two rewards ``x, x'`` of the range and any set ``S`` of reports,
``P[y in S | x] <= e^eps P[y in S | x']``. Two are given, both one draw per reward:

- ``"laplace"`` (Ren et al.'s CTL(eps), the Laplace mechanism): ``y = x + Lap((hi - lo) / eps)``.
  The sensitivity of one reward is the width ``hi - lo``, so ``y`` is eps-LDP (Dwork & Roth 2014,
  Theorem 3.6). ``E[y] = x``: the report is already unbiased; its variance is
  ``2 (hi - lo)^2 / eps^2`` more than the reward's.
- ``"response"`` (Ren et al.'s CTB(eps), randomized response on a Bernoulli coin): with
  ``u = (x - lo) / (hi - lo)``, ``p = e^eps / (1 + e^eps)`` and ``q = 1 - p``, the report is the
  bit ``y = 1`` with probability ``q + (p - q) u``. For Bernoulli rewards (``u`` 0 or 1) this is
  Warner's randomized response: the true bit kept with probability ``p``; for a reward inside
  the range it is the response to a coin ``Bernoulli(u)`` (Ren et al., CTB). ``P[y = 1 | x]``
  lies in ``[q, p]`` and ``p / q = e^eps``, so ``y`` is eps-LDP. ``E[y] = q + (p - q) E[u]``:
  the *debiased* report ``lo + (hi - lo) (y - q) / (p - q)`` has expectation ``E[x]``.

The raw report of randomized response (``debias=False``) stays a bit, ordered like the reward
(``E[y]`` increases with ``E[x]``): this is what Ren et al.'s LDP-UCB-B and LDP-KLUCB-B learn
from, and what lets a Bernoulli-only learner (Thompson sampling, KL-UCB) run on it. Both forms
are post-processing of the same report, so both are eps-LDP.

A reward outside ``[lo, hi]`` is refused (``ValueError``): clipping it silently would change
the data, and privatizing it as it is would break the guarantee.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpbandits.core import checks
from dpbandits.core.jit import generator_address, generator_at, inline_kernel, kernel
from dpbandits.core.numba_compat import next_double
from dpbandits.core.samplers import standard_laplace

__all__ = ["LAPLACE", "MECHANISMS", "RESPONSE", "LocalRandomizer", "report", "response_bias"]

#: The kernels' codes of the two randomizers.
LAPLACE, RESPONSE = 0, 1
#: Names (as users write them) -> codes.
MECHANISMS = {"laplace": LAPLACE, "response": RESPONSE}


def response_bias(epsilon: float) -> tuple[float, float]:
    """``(p, q)`` of randomized response at ``epsilon``: ``p = e^eps / (1 + e^eps)`` (the true
    bit is kept), ``q = 1 - p``; computed as ``1 / (1 + e^-eps)`` so that a large eps gives
    ``p -> 1`` without overflow."""
    p = 1.0 / (1.0 + math.exp(-epsilon))
    return p, 1.0 - p


@inline_kernel
def report(kind: int, x: float, lo: float, width: float, scale: float, p: float, q: float,
           debias: bool, bits: Any) -> float:  # fmt: skip
    """One report of reward ``x`` in ``[lo, lo + width]`` (module docstring): ``scale`` is the
    Laplace scale ``width / eps``, ``(p, q)`` those of randomized response."""
    if kind == LAPLACE:
        return x + scale * standard_laplace(bits)
    u = (x - lo) / width
    y = 1.0 if next_double(bits) < q + (p - q) * u else 0.0
    if debias:
        return lo + width * (y - q) / (p - q)
    return y


@kernel
def _report_all(kind: int, x: Any, lo: float, width: float, scale: float, p: float, q: float,
                debias: bool, address: int, out: Any) -> None:  # fmt: skip
    bits = generator_at(address).bit_generator
    for i in range(x.shape[0]):
        out[i] = report(kind, x[i], lo, width, scale, p, q, debias, bits)


class LocalRandomizer:
    """An eps-LDP randomizer of rewards in ``[lo, hi]`` (module docstring).

    Parameters
    ----------
    epsilon:
        The local privacy parameter of every report (> 0).
    mechanism:
        ``"laplace"`` (CTL) or ``"response"`` (CTB, randomized response).
    lo, hi:
        The reward range, ``lo < hi``, both finite: the sensitivity of a reward.
    debias:
        Whether :meth:`privatize` returns unbiased reports (``E[report] = E[reward]``;
        randomized response rescaled) or the raw ones (randomized response: a bit).
    """

    def __init__(self, epsilon: float, mechanism: str = "laplace", lo: float = 0.0,
                 hi: float = 1.0, debias: bool = True) -> None:  # fmt: skip
        self.epsilon = checks.positive_number(epsilon, "epsilon")
        self.mechanism = checks.one_of(mechanism, MECHANISMS, "mechanism")
        self.lo = checks.number(lo, "lo")
        self.hi = checks.number(hi, "hi")
        if not self.hi > self.lo:
            raise ValueError(f"the reward range needs lo < hi, got lo={lo!r}, hi={hi!r}")
        self.debias = checks.flag(debias, "debias")
        self.kind = MECHANISMS[mechanism]
        self.width = self.hi - self.lo
        self.scale = checks.noise_scale(self.width, self.epsilon, "the Laplace randomizer")
        self.p, self.q = response_bias(self.epsilon)
        if self.kind == RESPONSE and not self.p > self.q:
            raise ValueError(f"epsilon={epsilon!r} is too small for randomized response")

    def __repr__(self) -> str:
        return (f"LocalRandomizer(epsilon={self.epsilon!r}, mechanism={self.mechanism!r}, "
                f"lo={self.lo!r}, hi={self.hi!r}, debias={self.debias!r})")  # fmt: skip

    @property
    def description(self) -> str:
        """What each report is, for privacy reports."""
        if self.kind == LAPLACE:
            return (f"each reward in [{self.lo:g}, {self.hi:g}] reported as reward + "
                    f"Lap({self.width:g}/eps) (Laplace mechanism, Ren et al. 2020 "
                    "CTL)")  # fmt: skip
        form = "debiased" if self.debias else "raw bit"
        return (f"each reward in [{self.lo:g}, {self.hi:g}] reported by randomized response on "
                f"a Bernoulli((x - lo)/(hi - lo)) coin, the bit kept with probability "
                f"e^eps/(1+e^eps) (Ren et al. 2020 CTB; {form})")  # fmt: skip

    def check_rewards(self, x: NDArray[np.float64]) -> None:
        """``ValueError`` for a reward outside ``[lo, hi]`` (or NaN), naming the first."""
        bad = ~((x >= self.lo) & (x <= self.hi))
        if bad.any():
            raise ValueError(
                f"reward {float(x[bad][0])!r} is outside the reward range [{self.lo:g}, "
                f"{self.hi:g}] the local randomizer was given (its sensitivity): give the "
                "environment's true range as bounds=(lo, hi)"
            )

    def privatize(self, rewards: ArrayLike, rng: np.random.Generator | int | None) -> Any:
        """The reports of ``rewards`` (any shape), one independent draw each, from ``rng``."""
        x = np.asarray(rewards, dtype=np.float64)
        self.check_rewards(x)
        gen = checks.generator(rng)
        flat = np.ascontiguousarray(x).reshape(-1)
        out = np.empty_like(flat)
        _report_all(self.kind, flat, self.lo, self.width, self.scale, self.p, self.q,
                    self.debias, generator_address(gen), out)  # fmt: skip
        return out.reshape(x.shape)

    def expected_report(self, mean: ArrayLike) -> NDArray[np.float64]:
        """``E[report]`` for rewards of expectation ``mean``: ``mean`` itself when debiased or
        Laplace; ``q + (p - q) (mean - lo) / (hi - lo)`` for the raw bit."""
        m = np.asarray(mean, dtype=np.float64)
        if self.kind == LAPLACE or self.debias:
            return m.copy()
        return self.q + (self.p - self.q) * (m - self.lo) / self.width

    def privacy_loss_bound(self) -> float:
        """The eps of every report (the largest log-ratio of its law under two rewards)."""
        return self.epsilon
