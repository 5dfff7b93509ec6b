"""dpbandits.jit: a Generator handed to compiled code by address, and numpy's integer draw."""

import numpy as np
import pytest

from dpbandits.jit import generator_address, generator_at, integers_below, kernel


@kernel
def _draw(address, ks, out):  # type: ignore[no-untyped-def]
    rng = generator_at(address)
    for i in range(ks.shape[0]):
        out[3 * i] = integers_below(ks[i], rng)
        out[3 * i + 1] = rng.random()
        out[3 * i + 2] = rng.standard_exponential()


@pytest.mark.parametrize("bit_generator", [np.random.PCG64, np.random.MT19937, np.random.Philox])
def test_compiled_draws_are_numpys_and_share_the_state(bit_generator):
    # integers_below is rng.integers(0, k), for k = 1 (no draw), small, near and at 2**32 and
    # above; the compiled draws interleave with numpy's on the same state
    ks = np.random.default_rng(0).integers(1, 6, size=3000)
    ks = np.concatenate([ks, [1, 2, 2**31 + 1, 2**32 - 1, 2**32, 2**32 + 1, 2**50]])
    a, b = np.random.Generator(bit_generator(5)), np.random.Generator(bit_generator(5))
    for _ in range(2):
        got = np.empty(3 * ks.size)
        _draw(generator_address(a), ks, got)
        want = np.array(
            [x for k in ks for x in (b.integers(0, k), b.random(), b.standard_exponential())]
        )
        np.testing.assert_array_equal(got, want)
        assert a.integers(0, 10**6) == b.integers(0, 10**6)


def test_addresses_are_per_generator():
    a, b = np.random.default_rng(1), np.random.default_rng(1)
    assert generator_address(a) == generator_address(a) != generator_address(b)
