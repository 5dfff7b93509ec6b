"""The compiled-kernel checks of the kit: a selector's kernel selects as its ``select`` does.

A selector may provide a compiled row kernel (``compiled_kernel``, the protocol of
:mod:`dpbandits.selectors.compiled`, docs/selectors.md) that the private agent's compiled loop
calls instead of ``select_batch``: an agent's actions then come from the kernel, the other
checks and the privacy audit from ``select``. These checks tie the two together, so that what
the kit says of ``select`` holds for the kernel too:

``compiled.kernel``
    ``compiled_kernel(K)`` returns ``None`` or a valid ``CompiledKernel`` (a compiled function
    and a tuple of parameters) for ``K = 2, 4, 7``.
``compiled.same_law``
    On random batches (``K = 2`` and ``7``, 2 000 rows of random scores and sensitivities),
    the kernel and ``select`` with the same seed give the same indices -- what the built-ins
    do, and what a ``select_batch`` that calls its own kernel gives. Otherwise (a kernel that
    draws differently) both draw :data:`~dpbandits.testing.problems.N_ROWS` times on two fixed
    rows and a chi-square two-sample test compares the laws at
    :data:`~dpbandits.testing.harness.P_MIN`. Either way the kernel must accept these valid
    inputs, return indices in ``[0, K)`` and leave ``q`` and ``d`` unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpbandits.selectors.compiled import CompiledKernel, call_kernel, compiled_kernel
from dpbandits.testing.chisquare import two_sample_p
from dpbandits.testing.harness import Context, Failure, describe_exc, draw, indices, verdict
from dpbandits.testing.problems import D_A, D_B, N_ROWS, Q_A, Q_B

__all__ = ["CHECKS"]

#: Rows of the random batches of the same-seed comparison.
N_RANDOM_ROWS = 2_000


def _spec(ctx: Context, k: int) -> CompiledKernel | None:
    try:
        return compiled_kernel(ctx.sel, k)
    except Exception as exc:
        raise Failure(f"compiled_kernel({k}) raised {describe_exc(exc)}") from exc


def _kernel(ctx: Context) -> str:
    specs = {k: _spec(ctx, k) for k in (2, 4, 7)}
    if all(s is None for s in specs.values()):
        return "no compiled kernel: agents call select_batch step by step"
    missing = [k for k, s in specs.items() if s is None]
    names = {getattr(s.kernel, "__name__", repr(s.kernel)) for s in specs.values() if s}
    return f"kernel {', '.join(sorted(names))} for K = 2, 4, 7" + (
        f" (none for K = {missing})" if missing else ""
    )


def _run(spec: CompiledKernel, q: NDArray[np.float64], d: NDArray[np.float64], seed: Any,
         what: str) -> NDArray[np.int64]:  # fmt: skip
    """The kernel's indices on a valid ``(R, K)`` batch, checked (accepted, in range, inputs
    unchanged)."""
    q0, d0 = q.copy(), d.copy()
    try:
        out = call_kernel(spec, q, d, np.random.default_rng(seed))
    except Exception as exc:
        raise Failure(f"{what}: the kernel raised {describe_exc(exc)} on valid input") from exc
    if out is None:
        raise Failure(f"{what}: the kernel refused valid input (returned False)")
    if not (np.array_equal(q, q0) and np.array_equal(d, d0)):
        raise Failure(f"{what}: the kernel wrote into q or d (they are the agent's state)")
    return indices(out, (q.shape[0],), q.shape[1], what)


def _same_law(ctx: Context) -> str:
    if all(_spec(ctx, k) is None for k in (2, 4, 7)):
        return "no compiled kernel: nothing to compare"
    gen = ctx.rng("compiled.same_law")
    same = []
    for k in (2, 7):
        spec = _spec(ctx, k)
        if spec is None:
            continue
        q = gen.standard_normal((N_RANDOM_ROWS, k)) * ctx.scale()
        d = gen.uniform(0.1, 2.0, (N_RANDOM_ROWS, k))
        seed = ctx.seed("compiled.same_law", k)
        kernel_out = _run(spec, q, d, seed, f"kernel, K = {k}")
        select_out = draw(ctx.sel, q, d, seed, f"select, K = {k}")
        same.append(bool(np.array_equal(kernel_out, select_out)))
    if same and all(same):
        return (f"the kernel and select draw the same indices from the same seed ({N_RANDOM_ROWS} "
                "random rows, K = 2 and 7)")  # fmt: skip
    spec = _spec(ctx, 4)
    if spec is None:
        raise Failure("the kernel and select draw different indices from the same seed, and "
                      "there is no kernel for K = 4 to compare their laws")  # fmt: skip
    s = ctx.scale()
    p = []
    for i, (q, d) in enumerate(((Q_A * s, D_A), (Q_B * s, D_B))):
        qq, dd = np.tile(q, (N_ROWS, 1)), np.tile(d, (N_ROWS, 1))
        kernel_out = _run(spec, qq, dd, ctx.seed("compiled.law", i), "kernel, K = 4")
        select_out = draw(ctx.sel, qq, dd, ctx.seed("compiled.law", 10 + i), "select, K = 4")
        p.append(two_sample_p(kernel_out, select_out, 4))
    return verdict(
        min(p),
        "the compiled kernel and select have different laws: an agent playing the kernel does "
        "not run the selector that select, the other checks and the privacy audit describe",
        f"the kernel draws differently from select but with the same law ({N_ROWS} rows of two "
        f"problems; p = {p[0]:.2g}, {p[1]:.2g})",
    )


CHECKS: list[tuple[str, Callable[[Context], str]]] = [
    ("compiled.kernel", _kernel),
    ("compiled.same_law", _same_law),
]
