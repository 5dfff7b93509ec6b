"""The randomness checks of the kit: one independent draw per row, rng the only randomness."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpbandits.testing.chisquare import independence_p, two_sample_p
from dpbandits.testing.harness import Context, Failure, draw, verdict
from dpbandits.testing.problems import D_A, D_B, N_ROWS, N_SINGLE, Q_A, Q_B

__all__ = ["CHECKS"]


# ----------------------------------------------------------------------------------------------
# batch: one independent draw per row
# ----------------------------------------------------------------------------------------------
def _batch_identical_rows(ctx: Context) -> str:
    # scores in units of 2D/eps (D = max d): a single-call path spending 2 eps on these
    # log-weight gaps (0, 1, 1, 1/2) changes the law enough (chi-square noncentrality ~120 for
    # 1 000 single calls) to be caught with probability 1 - 1e-8
    q = Q_A * ctx.scale() * D_A.max()
    batch = draw(ctx.sel, np.tile(q, (N_ROWS, 1)), D_A, ctx.seed("batch.law"), "batch")
    gen = ctx.rng("batch.law", 1)
    single = np.array(
        [int(draw(ctx.sel, q, D_A, gen, "single row")) for _ in range(N_SINGLE)],
        dtype=np.int64,
    )
    counts = f"batch {np.bincount(batch, minlength=4)}, single {np.bincount(single, minlength=4)}"
    return verdict(
        two_sample_p(batch, single, q.size),
        f"{N_SINGLE} single calls and a batch of {N_ROWS} identical rows have different laws "
        f"({counts}): select(q) for one row must draw like one row of a batch",
        f"single calls have the law of a batch of identical rows ({counts})",
    )


def _batch_rows_independent(ctx: Context) -> str:
    q = np.tile(Q_A * ctx.scale(), (N_ROWS, 1))
    out = draw(ctx.sel, q, D_A, ctx.seed("batch.independent"), "batch")
    return verdict(
        independence_p(out[0::2], out[1::2], 4),
        f"consecutive rows of a batch are dependent ({N_ROWS // 2} pairs): each row needs its "
        "own noise",
        f"consecutive rows independent ({N_ROWS // 2} pairs)",
    )


def _batch_rows_separate(ctx: Context) -> str:
    s = ctx.scale()
    qa, qb = Q_A * s, Q_B * s
    n = N_ROWS
    mixed_q = np.empty((2 * n, 4))
    mixed_d = np.empty((2 * n, 4))
    mixed_q[0::2], mixed_q[1::2] = qa, qb
    mixed_d[0::2], mixed_d[1::2] = D_A, D_B
    mixed = draw(ctx.sel, mixed_q, mixed_d, ctx.seed("batch.separate"), "mixed batch")
    only_a = draw(ctx.sel, np.tile(qa, (n, 1)), D_A, ctx.seed("batch.separate", 1), "A rows")
    only_b = draw(ctx.sel, np.tile(qb, (n, 1)), D_B, ctx.seed("batch.separate", 2), "B rows")
    p_a = two_sample_p(mixed[0::2], only_a, 4)
    p_b = two_sample_p(mixed[1::2], only_b, 4)
    return verdict(
        min(p_a, p_b),
        f"the law of rows {'A' if p_a < p_b else 'B'} changes when rows with other scores and "
        "sensitivities share the batch: the selection of a row must depend on that row only "
        "(e.g. D = max d per row, not over the batch)",
        f"a row's law does not depend on the other rows (p = {p_a:.2g}, {p_b:.2g})",
    )


# ----------------------------------------------------------------------------------------------
# seeding: rng is the only source of randomness
# ----------------------------------------------------------------------------------------------
def _seeding_inputs(ctx: Context) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    q = np.vstack([np.tile(Q_A * ctx.scale(), (32, 1)), np.zeros((32, 4))])
    return q, np.tile(D_A, (64, 1))


def _two_calls(ctx: Context, first: Any, second: Any, *, same: bool, failure: str) -> None:
    """Call the selector on the seeding inputs with ``first`` and ``second`` as ``rng``; fail
    with ``failure`` unless the indices are equal (``same``) or differ (not ``same``)."""
    q, d = _seeding_inputs(ctx)
    a = draw(ctx.sel, q, d, first, "first call")
    b = draw(ctx.sel, q, d, second, "second call")
    if np.array_equal(a, b) != same:
        raise Failure(failure)


def _seeding_same_seed(ctx: Context) -> str:
    seed = ctx.seed("seeding.same_seed")
    _two_calls(
        ctx,
        seed,
        seed,
        same=True,
        failure="two calls with the same seed gave different indices: the selector draws "
        "from a source other than rng (np.random, an unseeded default_rng(), ...)",
    )
    _two_calls(
        ctx,
        seed,
        np.random.default_rng(seed),
        same=True,
        failure="rng=seed and rng=numpy.random.default_rng(seed) gave different indices",
    )
    return "same seed, same indices (an int seed and default_rng(seed) alike)"


def _seeding_different_seeds(ctx: Context) -> str:
    _two_calls(
        ctx,
        ctx.seed("seeding.different", 1),
        ctx.seed("seeding.different", 2),
        same=False,
        failure="two different seeds gave identical indices on 64 rows with ties: the "
        "selector ignores rng (a fixed internal seed?)",
    )
    return "different seeds, different indices"


def _seeding_generator_advances(ctx: Context) -> str:
    gen = np.random.default_rng(ctx.seed("seeding.advances"))
    _two_calls(
        ctx,
        gen,
        gen,
        same=False,
        failure="two calls with the same Generator gave identical indices: the selector must "
        "draw from the generator it is given (not a copy or a re-seeded one)",
    )
    return "a Generator passed twice gives fresh draws"


def _seeding_global_state(ctx: Context) -> str:
    q, d = _seeding_inputs(ctx)
    # the legacy global streams are exactly what this check watches (hence noqa NPY002)
    saved_numpy, saved_python = np.random.get_state(), random.getstate()  # noqa: NPY002
    try:
        draw(ctx.sel, q, d, ctx.seed("seeding.global_state"), "call")
        after = np.random.get_state()  # noqa: NPY002
        numpy_changed = not all(
            np.array_equal(a, b) for a, b in zip(saved_numpy, after, strict=True)
        )
        python_changed = random.getstate() != saved_python
    finally:  # leave the caller's global streams as they were
        np.random.set_state(saved_numpy)  # noqa: NPY002
        random.setstate(saved_python)
    changed = [
        name
        for name, hit in (
            ("numpy's (np.random.*)", numpy_changed),
            ("Python's (random.*)", python_changed),
        )
        if hit
    ]
    if changed:
        raise Failure(
            f"select used or reseeded {' and '.join(changed)} global random state: draw every "
            "random number from the rng argument (same seed -> same indices, and the caller's "
            "own global stream left alone)"
        )
    return "numpy's and Python's global random states untouched"


CHECKS: list[tuple[str, Callable[[Context], str]]] = [
    ("batch.identical_rows", _batch_identical_rows),
    ("batch.rows_independent", _batch_rows_independent),
    ("batch.rows_separate", _batch_rows_separate),
    ("seeding.same_seed", _seeding_same_seed),
    ("seeding.different_seeds", _seeding_different_seeds),
    ("seeding.generator_advances", _seeding_generator_advances),
    ("seeding.global_state", _seeding_global_state),
]
