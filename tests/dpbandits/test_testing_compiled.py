"""The kit's compiled-kernel checks (dpbandits.testing.compiled): a kernel with select's draws or
select's law passes; one with another law, one that refuses valid input, writes into q or
returns an index out of range fails, with the check named."""

from __future__ import annotations

import numpy as np
import pytest

from dpbandits import selectors
from dpbandits.core.jit import kernel
from dpbandits.selectors.compiled import CompiledKernel
from dpbandits.testing import GROUPS, check_selector

ONLY_COMPILED = tuple(g for g in GROUPS if g != "compiled")


@kernel
def _inverse_cdf_kernel(params, q, d, rng, out):
    """The exponential mechanism by inverse CDF (one uniform a row); mode 1: the argmax (a
    different law), 2: refuses every input, 3: writes into q, 4: index K."""
    epsilon, mode = params
    if mode == 2:
        return False
    k = q.shape[1]
    w = np.empty(k)
    for r in range(q.shape[0]):
        m, arg = q[r, 0], 0
        dm = d[r, 0]
        for a in range(1, k):
            if q[r, a] > m:
                m, arg = q[r, a], a
            dm = max(dm, d[r, a])
        if mode == 1:
            out[r] = arg
            continue
        total = 0.0
        for a in range(k):
            total += np.exp((q[r, a] - m) * epsilon / (2.0 * dm))
            w[a] = total
        u = rng.random() * total
        j = 0
        for a in range(k):
            j += w[a] <= u
        out[r] = k if mode == 4 else j
        if mode == 3:
            q[r, 0] = 0.0
    return True


class GumbelEM(selectors.Selector):
    """The exponential mechanism by Gumbel-max in numpy; its kernel by inverse CDF: the same
    law, other draws (``mode`` 0) or a broken kernel (``mode`` 1-4)."""

    name = "gumbel_em_for_tests"

    def __init__(self, epsilon: float = 1.0, mode: int = 0) -> None:
        super().__init__(epsilon)
        self.mode = mode

    def select_batch(self, q, d, rng):
        lam = self.epsilon / (2.0 * d.max(axis=1, keepdims=True))
        return np.argmax((q - q.max(axis=1, keepdims=True)) * lam + rng.gumbel(size=q.shape),
                         axis=1)  # fmt: skip

    def compiled_kernel(self, n_candidates):
        return CompiledKernel(_inverse_cdf_kernel, (float(self.epsilon), self.mode))


def test_a_kernel_with_the_law_of_select_but_other_draws_passes() -> None:
    report = check_selector(GumbelEM(), skip=ONLY_COMPILED)
    assert report.passed
    assert "draws differently from select but with the same law" in report[
        "compiled.same_law"].message  # fmt: skip
    assert "_inverse_cdf_kernel" in report["compiled.kernel"].message


def test_builtin_kernels_draw_what_select_draws() -> None:
    report = check_selector("rnm", skip=ONLY_COMPILED)
    assert "draw the same indices from the same seed" in report["compiled.same_law"].message


def test_no_kernel_nothing_to_check() -> None:
    class Plain(GumbelEM):
        def compiled_kernel(self, n_candidates):
            return None

    report = check_selector(Plain(), skip=ONLY_COMPILED)
    assert report.passed and "no compiled kernel" in report["compiled.kernel"].message


@pytest.mark.parametrize(
    ("mode", "fragment"),
    [
        (1, "the compiled kernel and select have different laws"),
        (2, "the kernel refused valid input"),
        (3, "the kernel wrote into q or d"),
        (4, "outside [0, 2)"),
    ],
)
def test_a_broken_kernel_fails_compiled_same_law(mode, fragment) -> None:
    report = check_selector(GumbelEM(mode=mode), skip=ONLY_COMPILED, raise_on_failure=False)
    assert [c.name for c in report.failures] == ["compiled.same_law"]
    assert fragment in report["compiled.same_law"].message
