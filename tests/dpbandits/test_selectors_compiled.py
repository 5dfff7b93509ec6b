"""The compiled-selector protocol (dpbandits.selectors.compiled): every built-in selector declares
its kernel, which draws what its select_batch draws; subclasses and plug-ins follow the rules of
compiled_kernel; a bad kernel is refused with a message naming the selector."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from dpbandits import selectors
from dpbandits.core.arms import read_only
from dpbandits.core.jit import kernel
from dpbandits.selectors.compiled import (
    CompiledKernel,
    KernelBacked,
    call_kernel,
    compiled_kernel,
    selection_args,
)
from dpbandits.selectors.noisy_max import RNM
from tests.marks import slow_except

BUILTIN = [
    ("rnm", {}), ("rnm", {"noise": "gumbel"}), ("rnm", {"noise": "laplace"}),
    ("exponential_mechanism", {}), ("permute_and_flip", {}), ("rnmh", {}), ("gem", {}),
    ("mgem", {"beta": 0.1}), ("combined_gem", {}), ("rs", {}), ("rs_tnb", {}),
    ("rs_tnb", {"eta": 2.0}), ("rs_tnb", {"gamma": 0.2, "eta": 0.5}), ("krr", {}),
    ("greedy", {}), ("uniform", {}),
]  # fmt: skip


@pytest.mark.parametrize("k", [2, 3, 9])
@pytest.mark.parametrize(
    ("name", "params"),
    # the kernels that compile fast run every day; the rest (minutes of compiling) in CI's slow step
    slow_except(BUILTIN, fast=[("rnm", {}), ("krr", {}), ("greedy", {}), ("uniform", {})]),
)
def test_every_builtin_selection_draws_what_its_kernel_called_by_numba_draws(name, params, k):
    """``select`` (read-only rows), ``select_batch`` (writable and strided rows) and
    ``call_kernel`` reach the kernel through the library's own plumbing (parameters stored at an
    address, the call values read from memory, calls by address, the Generator by address,
    ``selectors.compiled._run_at``); the reference calls the same kernel through numba's own
    dispatcher (parameters typed and passed by value, numpy's Generator object unboxed by
    numba): the same indices and the same Generator state after, or the plumbing passes
    something else. The kernel's law itself is checked against closed forms by each
    selector's tests (test_selectors_noisy_max, _gem, _random_stopping, _simple)."""
    sel = selectors.make(name, epsilon=0.8, **params)
    spec = compiled_kernel(sel, k)
    assert isinstance(spec, CompiledKernel) and isinstance(spec.params, tuple)
    # read-only arrays: one compiled version of a caller for every selector of a kind
    assert all(not p.flags.writeable for p in spec.params if isinstance(p, np.ndarray))
    gen = np.random.default_rng(k)
    q = gen.standard_normal((300, k)) * 3.0
    q[::7, 0] = q[::7, 1]  # ties
    d = gen.uniform(0.1, 2.0, (300, k))
    reference, rng = np.empty(300, dtype=np.int64), np.random.default_rng(11)
    assert spec.kernel(spec.params, q, d, rng, reference)
    after = rng.random()
    assert len(np.unique(reference)) > 1  # (a selection that says something)
    wide_q, wide_d = np.repeat(q, 2, axis=1), np.repeat(d, 2, axis=1)
    for how, draw in [
        ("select", lambda rng: sel.select(read_only(q), read_only(d), rng)),
        ("select_batch", lambda rng: sel.select_batch(q.copy(), d.copy(), rng)),
        ("strided", lambda rng: sel.select_batch(wide_q[:, ::2], wide_d[:, ::2], rng)),
        ("call_kernel", lambda rng: call_kernel(spec, q, d, rng)),
    ]:
        rng = np.random.default_rng(11)
        np.testing.assert_array_equal(draw(rng), reference, err_msg=how)
        assert rng.random() == after, how


def test_a_kernel_refuses_what_select_batch_refuses_and_draws_nothing() -> None:
    sel = selectors.make("gem", epsilon=0.05)  # t ~ 2 ln(2 / 0.05) / 0.05 ~ 150: t d overflows
    q, d = np.zeros((3, 2)), np.full((3, 2), 1e307)
    with pytest.raises(ValueError, match="epsilon is too small"):  # read-only, as select hands them
        sel.select_batch(read_only(q), read_only(d), np.random.default_rng(0))
    spec = compiled_kernel(sel, 2)
    assert spec is not None
    gen = np.random.default_rng(0)
    assert call_kernel(spec, q, d, gen) is None
    assert gen.random() == np.random.default_rng(0).random()  # nothing drawn


@kernel
def _first_kernel(params, q, d, rng, out):
    for r in range(q.shape[0]):
        out[r] = params[0]
    return True


class First(selectors.Selector):
    """Always candidate ``index`` (a plug-in with a kernel; not private)."""

    name = "first_for_tests"
    private = False

    def __init__(self, epsilon: float = 1.0, index: int = 0) -> None:
        super().__init__(epsilon)
        self.index = index

    def select_batch(self, q, d, rng):
        return np.full(q.shape[0], self.index, dtype=np.int64)

    def compiled_kernel(self, n_candidates):
        return CompiledKernel(_first_kernel, (self.index,))


class FirstBacked(KernelBacked, First):
    """:class:`First` whose ``select_batch`` runs its kernel (docs/selectors.md)."""

    name = "first_backed_for_tests"

    def kernel_for(self, n_candidates):
        return CompiledKernel(_first_kernel, (self.index,))

    compiled_kernel = kernel_for


def test_a_plugin_backed_by_its_kernel_selects_with_it() -> None:
    sel = FirstBacked(index=1)
    np.testing.assert_array_equal(sel.select(np.zeros((2, 3, 4)), None, 0), np.ones((2, 3)))
    assert compiled_kernel(sel, 4).kernel is _first_kernel  # (select_batch: the mixin's)
    sel.index = 3
    np.testing.assert_array_equal(sel.select(np.zeros((5, 4)), 2.0, 0), np.full(5, 3))


def test_subclasses_keep_the_kernel_unless_they_change_select_batch() -> None:
    class Same(RNM):
        pass

    class OwnStep(RNM):
        def select_batch(self, q, d, rng):
            return np.zeros(q.shape[0], dtype=np.int64)

    class OwnBoth(OwnStep):
        def compiled_kernel(self, n_candidates):
            return CompiledKernel(_first_kernel, (0,))

    class Plain(selectors.Selector):
        def select_batch(self, q, d, rng):
            return np.zeros(q.shape[0], dtype=np.int64)

    assert compiled_kernel(Same(), 4).kernel is compiled_kernel(RNM(), 4).kernel
    assert compiled_kernel(OwnStep(), 4) is None  # its own step, the parent's kernel: neither
    assert compiled_kernel(OwnBoth(), 4).kernel is _first_kernel
    assert compiled_kernel(Plain(), 4) is None  # Selector's default: no kernel
    assert compiled_kernel(object(), 4) is None  # a duck-typed selector without the method
    out = call_kernel(compiled_kernel(First(index=2), 3), np.zeros((4, 3)), np.ones((4, 3)),
                      np.random.default_rng(0))  # fmt: skip
    np.testing.assert_array_equal(out, [2, 2, 2, 2])


@pytest.mark.parametrize(
    ("returned", "fragment"),
    [
        ((_first_kernel, (0,)), "must return a CompiledKernel or None, got tuple"),
        (CompiledKernel(lambda *a: True, (0,)), "must be a compiled function"),
        (CompiledKernel(_first_kernel, [0]), "params must be a tuple, got list"),
    ],
)
def test_a_bad_compiled_kernel_is_refused_naming_the_selector(returned, fragment) -> None:
    class Bad(First):
        name = "bad_kernel_for_tests"

        def compiled_kernel(self, n_candidates):
            return returned

    with pytest.raises(TypeError, match="bad_kernel_for_tests") as info:
        compiled_kernel(Bad(), 3)
    assert fragment in str(info.value)


@pytest.mark.parametrize("name", ["krr", "rnm"])
def test_every_entry_point_runs_the_one_kernel_the_private_loop_calls(name) -> None:
    """``select`` (read-only arrays, as the private agent's steps hand them), ``select_batch``
    with writable or strided arrays and ``call_kernel`` with a broadcast ``d`` all run the kernel
    compiled for the private agent's loop's argument types (``selection_args``: writable
    C-contiguous arrays): one compiled version per kernel and type of ``params``, where each
    entry point compiled its own before. (Loading from a warm disk cache adds versions as
    compiling does: the check holds either way.)"""
    import numba

    from dpbandits.core.numba_compat import GENERATOR_TYPE

    sel = selectors.make(name, epsilon=0.8)
    spec = compiled_kernel(sel, 3)
    assert spec is not None
    gen = np.random.default_rng(0)
    q = gen.standard_normal((4, 6))
    d = gen.uniform(0.5, 2.0, (4, 6))
    frozen = q[:, :3].copy()
    frozen.flags.writeable = False
    for qq, dd in [(q[:, :3], d[:, :3]), (q[:, ::2], 0.5), (frozen, None)]:
        sel.select(qq, dd, gen)
    sel.select_batch(q[:, :3].copy(), d[:, 3:].copy(), gen)
    sel.select_batch(q[:, ::2], d[:, 1::2], gen)
    assert call_kernel(spec, q[:, :3], np.ones(3), gen) is not None
    params = numba.typeof(spec.params)
    f2 = numba.types.Array(numba.types.float64, 2, "C")
    i1 = numba.types.Array(numba.types.int64, 1, "C")
    assert [s for s in spec.kernel.signatures if s[0] == params] == [
        (params, f2, f2, GENERATOR_TYPE, i1)
    ]
    # the very function (and entry) the private agent's loop calls: the addresses it holds
    (_, *calls), _kept = selection_args(spec.kernel, spec.params)
    (carrier, head_at, _) = sel._kernel_calls[3]
    np.testing.assert_array_equal(np.ctypeslib.as_array((ctypes.c_int64 * 4).from_address(
        head_at)), calls)  # fmt: skip
    assert isinstance(carrier, int)  # (the parameters, stored at an address)


def test_a_parameter_set_after_selecting_is_used_and_copies_select_alike() -> None:
    """The stored parameters and addresses (``KernelBacked``) are dropped when an attribute is
    set, and left out of copies and pickles (they are this process's)."""
    import copy
    import pickle

    q = np.random.default_rng(0).standard_normal((500, 4))
    sel = selectors.make("rnm", epsilon=0.1)
    sel.select(q, None, 0)  # (stores epsilon = 0.1)
    sel.epsilon = 50.0
    fresh = selectors.make("rnm", epsilon=50.0)
    np.testing.assert_array_equal(sel.select(q, None, 1), fresh.select(q, None, 1))
    for twin in (copy.copy(sel), copy.deepcopy(sel), pickle.loads(pickle.dumps(sel))):
        assert "_kernel_calls" not in vars(twin) and "_generator" not in vars(twin)
        np.testing.assert_array_equal(twin.select(q, None, 2), sel.select(q, None, 2))


