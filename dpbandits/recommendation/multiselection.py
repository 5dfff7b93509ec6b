"""Multi-selection under geographic DP: the server algorithms and Tables 1-2 of paper 004.

A user with features ``f_a`` sends the signal ``f_a + Laplace(eta)`` (:mod:`.geo`); the server
returns ``k`` items chosen by one of the algorithms below and, for the frugal variant, a local
PCA model (:mod:`.frugal`); the user picks one item locally. Algorithms (§3, §6.1, App. A):

- ``sat_realuser`` -- ``A_sat-realuser``: ``q1`` samples of ``L_eta^realuser``, greedy ``k``-set
  for ``u^{t=1, r}`` (Algorithm 1);
- ``sat`` -- ``A_sat``: the same on the capped posterior ``L_eta^cap``;
- ``avg_realuser`` / ``avg`` -- the same two posteriors with the additive ``u^{avg, r}``
  (Eq. 5);
- ``ig_sig`` -- ``A_ig-sig``: ignores the signal, ``q1`` uniform training users, ``u^{t=1, r}``;
- ``nopost`` -- ``A_nopost``: the top ``k`` items of the model applied to the signal itself;
- ``nopost_realuser`` -- ``A_nopost-realuser``: the top ``k`` items of the training user nearest
  to the signal.

Dis-utilities (§2.3): ``d_i = max_b u_M(f_a, b) - max_{b in B} u_M(f_a, b)`` (Eq. 1, the user
evaluates the results with the true model) and ``d_f = max_b u_M(f_a, b) - u_M(f_a, b_f)``
(Eq. 2, the user picks ``b_f`` with the frugal model). ``ratio_i``/``ratio_f`` are the mean
utility obtained over the mean optimal utility (the "97% of optimal" of the abstract).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from dpbandits.core import checks
from dpbandits.core.arrays import FloatArray
from dpbandits.recommendation.frugal import fit_frugal_model, frugal_choice
from dpbandits.recommendation.geo import check_eta, perturb
from dpbandits.recommendation.posterior import (
    capped_samples,
    nearest_user,
    realuser_indices,
)
from dpbandits.recommendation.submodular import greedy_k_set, saturated_values
from dpbandits.selectors.base import RNGLike

__all__ = [
    "ALGORITHMS",
    "ServerSettings",
    "World",
    "disutility_table",
    "server_results",
]


ALGORITHMS = ("nopost", "nopost_realuser", "sat_realuser", "sat", "avg_realuser", "avg", "ig_sig")


class World(Protocol):
    """What the algorithms need: public training users and the ground-truth utility."""

    @property
    def train(self) -> FloatArray: ...

    def utility(self, f: FloatArray) -> FloatArray: ...


@dataclass(frozen=True)
class ServerSettings:
    """Sampling sizes: ``q1`` posterior samples for the greedy set, ``q2`` for the frugal
    model, ``r`` top items per sample (Eq. 4), ``p`` PCA components (§3.3; paper: 25, -, 100,
    20)."""

    q1: int = 25
    q2: int = 100
    r: int | None = 100
    p: int = 20

    def __post_init__(self) -> None:
        for name in ("q1", "q2", "p"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        if self.r is not None and (
            isinstance(self.r, bool) or not isinstance(self.r, (int, np.integer)) or self.r < 1
        ):
            raise ValueError(f"r must be None or an integer >= 1, got {self.r!r}")


class _Server:
    """One world's precomputed training utilities, shared by all requests."""

    def __init__(self, world: World, settings: ServerSettings) -> None:
        self.world = world
        self.s = settings
        self.train = np.asarray(world.train, dtype=np.float64)
        self.train_util = world.utility(self.train)  # (n_train, m)
        self.train_values = saturated_values(self.train_util, settings.r)

    def samples(
        self, algorithm: str, signal: FloatArray, eta: float, size: int, rng: np.random.Generator
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Posterior features, their utilities and saturated values for ``algorithm``."""
        if algorithm in ("sat", "avg", "nopost"):
            f = capped_samples(signal, eta, size, rng)
            u = self.world.utility(f)
            return f, u, saturated_values(u, self.s.r)
        if algorithm == "ig_sig":
            idx = rng.integers(0, self.train.shape[0], size=size)
        else:
            idx = realuser_indices(signal, self.train, eta, size, rng)[0]
        return self.train[idx], self.train_util[idx], self.train_values[idx]

    def results(
        self, algorithm: str, signal: FloatArray, eta: float, k: int, rng: np.random.Generator
    ) -> list[int]:
        if algorithm == "nopost":
            u = self.world.utility(signal[None, :])[0]
            return [int(i) for i in np.argsort(-u, kind="stable")[:k]]
        if algorithm == "nopost_realuser":
            a = int(nearest_user(signal[None, :], self.train)[0])
            return [int(i) for i in np.argsort(-self.train_util[a], kind="stable")[:k]]
        _, _, values = self.samples(algorithm, signal, eta, self.s.q1, rng)
        t = None if algorithm.startswith("avg") else 1
        return greedy_k_set(values, k, t)


def server_results(
    world: World,
    signal: FloatArray,
    *,
    algorithm: str = "sat_realuser",
    k: int = 3,
    eta: float = 0.1,
    settings: ServerSettings | None = None,
    rng: RNGLike = None,
) -> list[int]:
    """The ``k`` items the server returns for one signal (in the order chosen)."""
    srv = _Server(world, settings or ServerSettings())
    return srv.results(
        checks.one_of(algorithm, ALGORITHMS, "algorithm"),
        np.asarray(signal, float),
        check_eta(eta),
        k,
        np.random.default_rng(rng),
    )


def disutility_table(
    world: World,
    users: FloatArray,
    *,
    etas: Sequence[float],
    ks: Sequence[int] = (1, 2, 3, 5),
    algorithms: Sequence[str] = ALGORITHMS,
    settings: ServerSettings | None = None,
    frugal: bool = True,
    rng: RNGLike = None,
) -> list[dict[str, Any]]:
    """Mean ``d_i`` and ``d_f`` (with standard errors) per algorithm, ``eta`` and ``k``.

    Each user sends one signal per ``eta``; every algorithm answers that same signal (common
    random numbers). Greedy sets are built once for ``max(ks)`` and cut to each ``k`` (the
    greedy ``j``-set is the first ``j`` items chosen).
    """
    s = settings or ServerSettings()
    algos = [checks.one_of(a, ALGORITHMS, "algorithm") for a in algorithms]
    e_list = [check_eta(e) for e in etas]
    if not ks or any(
        isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1 for k in ks
    ):
        raise ValueError(f"ks must be integers >= 1, got {list(ks)!r}")
    k_list = sorted({int(k) for k in ks})
    f_users = np.atleast_2d(np.asarray(users, dtype=np.float64))
    gen = np.random.default_rng(rng)
    srv = _Server(world, s)
    true_u = world.utility(f_users)  # (n, m)
    opt = true_u.max(axis=1)
    kmax = k_list[-1]
    if kmax > true_u.shape[1]:
        raise ValueError(f"k = {kmax} exceeds the number of items {true_u.shape[1]}")
    di = {(a, e, k): [] for a in algos for e in e_list for k in k_list}  # type: ignore[var-annotated]
    df = {(a, e, k): [] for a in algos for e in e_list for k in k_list}  # type: ignore[var-annotated]
    for e in e_list:
        signals = perturb(f_users, e, gen)
        for j in range(f_users.shape[0]):
            for a in algos:
                items = srv.results(a, signals[j], e, kmax, gen)
                post = (
                    srv.samples(
                        a if a != "nopost_realuser" else "sat_realuser", signals[j], e, s.q2, gen
                    )
                    if frugal
                    else None
                )
                for k in k_list:
                    b = items[:k]
                    got = true_u[j, b]
                    di[(a, e, k)].append(opt[j] - got.max())
                    if post is None:
                        continue
                    if k == 1:
                        pick = 0
                    else:
                        model = fit_frugal_model(post[0], post[1][:, b], s.p)
                        pick = frugal_choice(model, f_users[j])
                    df[(a, e, k)].append(opt[j] - got[pick])
    mean_opt = float(opt.mean())
    rows = []
    for (a, e, k), vals in di.items():
        v = np.asarray(vals)
        w = np.asarray(df[(a, e, k)]) if frugal else np.full(v.shape, np.nan)
        rows.append(
            {
                "algorithm": a,
                "eta": e,
                "k": k,
                "d_i": float(v.mean()),
                "d_i_se": _se(v),
                "d_f": float(w.mean()),
                "d_f_se": _se(w),
                "ratio_i": 1.0 - float(v.mean()) / mean_opt,
                "ratio_f": 1.0 - float(w.mean()) / mean_opt,
                "optimum": mean_opt,
                "users": int(v.size),
            }
        )
    return rows


def _se(v: NDArray[np.float64]) -> float:
    return float(v.std(ddof=1) / math.sqrt(v.size)) if v.size > 1 else float("nan")
