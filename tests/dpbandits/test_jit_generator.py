"""dpbandits.core.jit: a Generator handed to compiled code by address, and numpy's integer draw."""

import numpy as np
import pytest

from dpbandits.core.jit import generator_address, generator_at, integers_below, kernel


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


@kernel
def _integers(address, ks, out):  # type: ignore[no-untyped-def]
    rng = generator_at(address)
    for i in range(ks.shape[0]):
        out[i] = integers_below(ks[i], rng)


@pytest.mark.parametrize(
    "bit_generator",
    [np.random.PCG64, np.random.PCG64DXSM, np.random.MT19937, np.random.Philox, np.random.SFC64],
)
def test_integers_below_is_numpys_draw_above_2_to_the_32(bit_generator):
    # numpy's 64-bit Lemire draw: the high word of a 128-bit product, a rejection when the low
    # word falls below 2**64 mod k (frequent for 3 * 2**61 + 5 and 2**62 + 3: ~1/8 and ~1/4)
    big = [2**32 + 1, 2**33 - 1, 2**40 + 7, 2**62, 2**62 + 3, 3 * 2**61 + 5, 2**63 - 1]
    ks = np.array((big + [1, 2, 3, 2**32 - 1, 2**32]) * 400, dtype=np.int64)
    a, b = np.random.Generator(bit_generator(7)), np.random.Generator(bit_generator(7))
    got = np.empty(ks.size, dtype=np.int64)
    _integers(generator_address(a), ks, got)
    np.testing.assert_array_equal(got, [b.integers(0, k) for k in ks])
    assert a.integers(0, 2**62) == b.integers(0, 2**62)  # the same words consumed
