"""The privacy check of the kit: the empirical audit on hard neighbouring inputs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpbandits.audit import selector as audit
from dpbandits.testing.harness import Context, Failure, indices

__all__ = ["CHECKS"]


class _Guarded:
    """The selector with its outputs checked, for the audit (an index out of range says so)."""

    def __init__(self, sel: Any) -> None:
        self.sel = sel
        self.name = getattr(sel, "name", type(sel).__name__)
        self.epsilon = sel.epsilon
        self.private = bool(getattr(sel, "private", True))

    def select(self, q: ArrayLike, d: ArrayLike | None, rng: Any) -> NDArray[np.int64]:
        qa = np.asarray(q)
        return indices(self.sel.select(q, d, rng), qa.shape[:-1], qa.shape[-1], "audit")


def _privacy(ctx: Context) -> str:
    guarded: Any = _Guarded(ctx.sel)  # duck-typed selector: audit accepts it like make() does
    results = audit.audit(
        guarded, ctx.pairs, draws=ctx.draws, alpha=ctx.alpha, rng=ctx.rng("privacy")
    )
    ctx.audit = results
    failed = [r for r in results if not r.passed]
    worst = max(results, key=lambda r: r.loss_lower)
    head = f"{len(results)} hard neighbouring pairs, {ctx.draws} draws per input"
    if failed:
        lines = "; ".join(
            f"{r.pair}: loss {r.loss:.3g}, lower bound {r.loss_lower:.3g} > eps {r.epsilon:g}"
            for r in failed
        )
        if ctx.private:
            # the lower bound divided by eps bounds how many times eps the selector spends
            note = (
                f" -- the loss is at least {worst.loss_lower / ctx.epsilon:.2g} eps: too little "
                "noise (a scale of D/eps where the mechanism needs 2D/eps, eps spent on two "
                "draws, the wrong sensitivity?)"
            )
        else:
            note = " (the selector declares private = False)"
        raise Failure(f"privacy loss above eps on {len(failed)} of {head}: {lines}{note}")
    return (
        f"{head}: every lower bound <= eps {ctx.epsilon:g} (worst {worst.pair}: loss "
        f"{worst.loss:.3g}, lower bound {worst.loss_lower:.3g})"
    )


CHECKS: list[tuple[str, Callable[[Context], str]]] = [("privacy", _privacy)]
