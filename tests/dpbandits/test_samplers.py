"""dpbandits.core.samplers: numpy's normal, exponential and gamma draws, to the last bit."""

import numpy as np
import pytest

from dpbandits.core.jit import generator_address, generator_at, kernel
from dpbandits.core.samplers import (
    fill_standard_normal,
    gamma_constants,
    gamma_with,
    standard_exponential,
    standard_gamma,
    standard_normal,
)

GENERATORS = [np.random.PCG64, np.random.MT19937, np.random.Philox]


@kernel
def _draw(address, which, shapes, out):  # type: ignore[no-untyped-def]
    bits = generator_at(address).bit_generator
    for i in range(out.shape[0]):
        if which == 0:
            out[i] = standard_normal(bits)
        elif which == 1:
            out[i] = standard_exponential(bits)
        elif which == 2:
            out[i] = standard_gamma(bits, shapes[i])
        else:
            b, c = gamma_constants(shapes[i])
            out[i] = gamma_with(bits, b, c)


def _numpy(rng, which, shapes):  # type: ignore[no-untyped-def]
    n = shapes.size
    if which == 0:
        return rng.standard_normal(n)
    if which == 1:
        return rng.standard_exponential(n)
    return rng.standard_gamma(shapes)


@pytest.mark.parametrize("bit_generator", GENERATORS)
@pytest.mark.parametrize("which", [0, 1, 2, 3])
def test_draws_are_numpys_and_leave_the_same_state(bit_generator, which):
    # 200 000 draws take every branch of the ziggurats (about 1 % of the draws leave the fast
    # path: the tail, the wedges, the rejections) and of the gamma method (shape 1: an
    # exponential; below 1: the other method; above: Marsaglia-Tsang's squeeze and log tests)
    n = 200_000
    if which == 2:
        shapes = np.random.default_rng(1).choice([0.0, 0.3, 1.0, 1.5, 2.0, 7.0, 300.0], n)
    else:
        shapes = np.random.default_rng(1).choice([1.0 + 1e-9, 1.5, 2.0, 7.0, 300.0], n)
    a, b = np.random.Generator(bit_generator(5)), np.random.Generator(bit_generator(5))
    got = np.empty(n)
    _draw(generator_address(a), which, shapes, got)
    want = _numpy(b, which, shapes)
    np.testing.assert_array_equal(got, want)
    assert a.random() == b.random()  # the same words consumed


def test_the_rare_paths_are_taken():
    # the claim above: the draws leave the ziggurat's fast path often enough to test it
    z = np.random.default_rng(5).standard_normal(200_000)
    assert (np.abs(z) > 3.6541528853610088).sum() > 10  # the tail of layer 0


@pytest.mark.parametrize("shape", [(0,), (1,), (3, 7), (50, 1, 2)])
def test_fill_standard_normal_is_numpys_array(shape):
    a, b = np.random.default_rng(9), np.random.default_rng(9)
    out = np.empty(shape)
    fill_standard_normal(generator_address(a), out)
    np.testing.assert_array_equal(out, b.standard_normal(shape))
    assert a.random() == b.random()
