"""The private agent's compiled block loop (``PrivateAgent.play``): the same actions and rewards
as its step path for every built-in selector, a plug-in with a compiled kernel and every
mechanism option, and the step path for what has no kernel (plug-in selectors without one,
custom estimators, the exact quantile sampler)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pytest

import agents
from dpbandits.core.jit import kernel
from dpbandits.selectors import Selector
from dpbandits.selectors.compiled import CompiledKernel, compiled_kernel
from tests.agents.test_compiled import play_by_steps

ENVS = {
    "shift": ("dpbandits/TwoArmedShift-v0", {"horizon": 700, "t_shift": 300}),
    "bernoulli": ("dpbandits/KArmedBernoulli-v0", {"means": [0.2, 0.5, 0.45, 0.6], "horizon": 600}),
    # ten arms: noise blocks of 128 counts, refilled several times during the run
    "gaussian10": ("dpbandits/KArmedGaussian-v0", {
        "means": np.linspace(0.1, 0.9, 10).tolist(), "sds": 0.3, "horizon": 600}),
}
SELECTORS = {
    "rnm": {"selector": "rnm"},
    "rnm-gumbel": {"selector": "rnm", "noise": "gumbel"},
    "rnm-laplace": {"selector": "rnm", "noise": "laplace"},
    "em": {"selector": "exponential_mechanism"},
    "pf": {"selector": "permute_and_flip"},
    "rnmh": {"selector": "rnmh"},
    "gem": {"selector": "gem", "beta": 0.05},
    "mgem": {"selector": "mgem", "beta": 0.1, "noise": "gumbel"},
    "cgem": {"selector": "combined_gem"},
    "rs": {"selector": "rs", "gamma": 0.05},
    "rs_tnb": {"selector": "rs_tnb", "gamma": 0.1},
    "rs_tnb-eta2": {"selector": "rs_tnb", "gamma": 0.1, "eta": 2.0},
    "rs_tnb-table": {"selector": "rs_tnb", "gamma": 0.2, "eta": 0.5},
    "krr": {"selector": "krr", "epsilon_select": 2.0},
    "greedy": {"selector": "greedy"},
    "uniform": {"selector": "uniform"},
}


def private(**params):
    # Smith's quantile mechanism, as in App. H (the shift runs compile these loops too); the grid
    # method's loop is checked by test_mechanism_options_keep_the_bits
    params.setdefault("quantile_method", "smith")
    return agents.PrivateAgent(window=23, **params)


@pytest.mark.parametrize("name", sorted(SELECTORS))
@pytest.mark.parametrize("env", sorted(ENVS))
def test_play_is_bit_identical_to_the_step_protocol(name, env):
    env_id, kw = ENVS[env]
    params = SELECTORS[name]
    agent = private(**params)
    agent.reset(2, 3, horizon=10, rng=0)
    assert agent.block_player() is not None  # the block path below is the compiled loop
    by_step = play_by_steps(private(**params), env_id, kw, 5, 13, None)
    for blocks in (1, 61, 1000):
        agent = private(**params)
        by_block = play_by_steps(agent, env_id, kw, 5, 13, blocks)
        np.testing.assert_array_equal(by_block[0], by_step[0])
        np.testing.assert_array_equal(by_block[1], by_step[1])


@pytest.mark.parametrize(
    "options",
    [
        {"quantile_method": "smith"},
        {"quantile_method": "grid"},
        {"clip_means": True},
        {"means_noise": "discrete"},
        {"lo": -0.5, "hi": 1.5, "quantile_method": "smith"},
    ],
)
@pytest.mark.parametrize("R", [1, 4])
def test_mechanism_options_keep_the_bits(options, R):
    env_id, kw = ENVS["gaussian10"]
    by_step = play_by_steps(private(selector="mgem", **options), env_id, kw, R, 3, None)
    by_block = play_by_steps(private(selector="mgem", **options), env_id, kw, R, 3, 97)
    np.testing.assert_array_equal(by_block[0], by_step[0])
    np.testing.assert_array_equal(by_block[1], by_step[1])


def test_the_private_state_after_play_is_the_step_paths():
    """Means, sensitivities, estimate counts and the privacy report agree after a run."""
    env_id, kw = ENVS["bernoulli"]
    a, b = private(selector="gem"), private(selector="gem")
    play_by_steps(a, env_id, kw, 3, 4, None)
    play_by_steps(b, env_id, kw, 3, 4, 50)
    np.testing.assert_array_equal(a.private_means(), b.private_means())
    np.testing.assert_array_equal(a.sensitivities(), b.sensitivities())
    assert a.privacy_report() == b.privacy_report()


def test_what_has_no_kernel_is_played_step_by_step():
    class Plugin(Selector):
        name = "first_plugin"

        def select_batch(self, q, d, rng):
            return np.zeros(q.shape[0], dtype=np.int64)

    class SubRNM(type(agents.PrivateAgent(selector="rnm").selector_)):  # changes the step only
        def select_batch(self, q, d, rng):
            return np.zeros(q.shape[0], dtype=np.int64)

    env_id, kw = ENVS["bernoulli"]
    cases = [
        private(selector=Plugin()),
        private(selector=SubRNM()),
        private(selector="rnm", quantile_method="grid", quantile_sampler="exact"),
        private(selector="rnm", means=lambda r, k, rng: _ExactMeans(r, k)),
    ]
    for agent in cases:
        agent.reset(2, 4, horizon=100, rng=0)
        assert agent.block_player() is None, agent
    assert compiled_kernel(Plugin(), 4) is None
    assert compiled_kernel(SubRNM(), 4) is None
    assert compiled_kernel(agents.PrivateAgent(selector="rnm").selector_, 4) is not None
    # and a subclass of the agent that changes its step is played through its own methods
    class Stubborn(agents.PrivateAgent):
        def choose(self):
            return np.zeros(self.n_runs, dtype=np.int64)

    stubborn = Stubborn(selector="rnm")
    stubborn.reset(2, 4, horizon=100, rng=0)
    assert stubborn.block_player() is None


@kernel
def _noisy_argmax_kernel(params, q, d, rng, out):
    """argmax(q + Exp(scale 2 max d / eps)) row by row: RNM with exponential noise."""
    epsilon = params[0]
    for r in range(q.shape[0]):
        d_max = d[r, 0]
        for a in range(1, q.shape[1]):
            d_max = max(d_max, d[r, a])
        scale = 2.0 * d_max / epsilon
        best, best_a = -np.inf, 0
        for a in range(q.shape[1]):
            v = q[r, a] + scale * rng.standard_exponential()
            if v > best:
                best, best_a = v, a
        out[r] = best_a
    return True


class NoisyArgmax(Selector):
    """A plug-in with a compiled kernel (its select_batch calls it: the same draws)."""

    name = "noisy_argmax_for_tests"

    def select_batch(self, q, d, rng):
        out = np.empty(q.shape[0], dtype=np.int64)
        _noisy_argmax_kernel((float(self.epsilon),), q, d, rng, out)
        return out

    def compiled_kernel(self, n_candidates):
        return CompiledKernel(_noisy_argmax_kernel, (float(self.epsilon),))


@kernel
def _fussy_kernel(params, q, d, rng, out):
    """Refuses (drawing nothing) a batch where some row has q[0] > q[1] + params[0], else
    selects as :func:`_noisy_argmax_kernel` at eps = 1."""
    for r in range(q.shape[0]):
        if q[r, 0] > q[r, 1] + params[0]:
            return False
    return _noisy_argmax_kernel((1.0,), q, d, rng, out)


class Fussy(Selector):
    """A kernel that refuses some input: select_batch raises there (``strict``), or selects."""

    name = "fussy_for_tests"

    def __init__(self, epsilon: float = 1.0, strict: bool = True) -> None:
        super().__init__(epsilon)
        self.strict = strict

    def select_batch(self, q, d, rng):
        if self.strict and np.any(q[:, 0] > q[:, 1] - 0.1):
            raise ValueError("fussy: q[0] > q[1] - 0.1")
        out = np.empty(q.shape[0], dtype=np.int64)
        _noisy_argmax_kernel((1.0,), q, d, rng, out)
        return out

    def compiled_kernel(self, n_candidates):
        return CompiledKernel(_fussy_kernel, (-0.1 if self.strict else 0.05,))


def test_a_step_the_kernel_refuses_goes_through_select_batch():
    """In blocks, a refused step is played by act/update: select_batch's error, or its step
    (then the same bits as the step path, the kernel having drawn nothing)."""
    env_id, kw = ENVS["bernoulli"]
    errors = []
    for blocks in (None, 40):
        with pytest.raises(ValueError, match="fussy") as info:
            play_by_steps(private(selector=Fussy()), env_id, kw, 3, 2, blocks)
        errors.append(str(info.value))
    assert errors[0] == errors[1]
    by_step = play_by_steps(private(selector=Fussy(strict=False)), env_id, kw, 3, 7, None)
    agent, refused = private(selector=Fussy(strict=False)), []
    act = agent.act
    agent.act = lambda: refused.append(agent.t) or act()  # in blocks, only refused steps act
    by_block = play_by_steps(agent, env_id, kw, 3, 7, 40)
    assert len(refused) > 5, refused
    np.testing.assert_array_equal(by_block[0], by_step[0])
    np.testing.assert_array_equal(by_block[1], by_step[1])


@pytest.mark.parametrize("env", ["shift", "gaussian10"])
def test_a_plugin_with_a_kernel_is_played_in_the_compiled_loop_with_the_same_bits(env):
    env_id, kw = ENVS[env]
    agent = private(selector=NoisyArgmax(epsilon=0.5))
    agent.reset(2, 3, horizon=10, rng=0)
    assert agent.block_player() is not None
    by_step = play_by_steps(private(selector=NoisyArgmax(epsilon=0.5)), env_id, kw, 5, 13, None)
    by_block = play_by_steps(private(selector=NoisyArgmax(epsilon=0.5)), env_id, kw, 5, 13, 61)
    np.testing.assert_array_equal(by_block[0], by_step[0])
    np.testing.assert_array_equal(by_block[1], by_step[1])


class _ExactMeans:
    def __init__(self, r, k):
        self.s, self.n = np.zeros((r, k)), np.zeros((r, k))

    def update(self, actions, rewards):
        rows = np.arange(actions.shape[0])
        self.s[rows, actions] += rewards
        self.n[rows, actions] += 1

    def means(self):
        return self.s / np.maximum(self.n, 1)


def test_a_selection_that_refuses_its_input_raises_its_own_error_in_blocks_too():
    """GEM with an epsilon so small that t d overflows: the same ValueError either way."""
    env_id, kw = ENVS["bernoulli"]
    errors = []
    for blocks in (None, 40):
        with pytest.raises(ValueError) as info:
            play_by_steps(private(selector="gem", epsilon_select=1e-306), env_id, kw, 2, 1,
                          blocks)  # fmt: skip
        errors.append(str(info.value))
    assert errors[0] == errors[1]


def test_every_private_agent_plays_the_one_loop_compile_loop_compiles() -> None:
    # one compiled loop for every selector, quantile method and option: the one the warm-up's
    # shared part (agents.private_loop.compile_loop) compiles; nothing else is compiled into it
    from agents.private_loop import compile_loop, play_loop
    from dpbandits.experiments import run, shift_agents, shift_env
    from dpbandits.selectors.random_stopping import rs_kernel

    compile_loop()
    loops = set(play_loop.signatures)  # (a plug-in's by-value parameters add their own: below)
    general_rs = len(rs_kernel.signatures)  # (other tests of this process may have compiled it)
    agent_map = {**shift_agents(["RS", "GEM", "kRR", "RNM"]),
                 "RNM-grid": private(selector="rnm", quantile_method="grid"),
                 "PF-clipped": private(selector="permute_and_flip", clip_means=True),
                 "plug-in": private(selector=NoisyArgmax(epsilon=0.5))}  # fmt: skip
    run(shift_env(t_shift=30, horizon=60), agent_map, n_runs=2, seed=0, progress=False,
        n_jobs=1)  # fmt: skip
    assert set(play_loop.signatures) == loops
    # RS (Alg. 1's geometric rounds) compiles none of the other methods' samplers
    assert len(rs_kernel.signatures) == general_rs
    # agents share their own compiled code when their kernel and its parameters' types agree
    keys = {shift_agents([label])[label].compile_key(2) for label in ("GEM", "mGEM", "RNM")}
    assert len(keys) == 2
    assert private(selector="rnm").compile_key(2) == private(
        selector="rnm", quantile_method="grid").compile_key(2)  # fmt: skip


def test_the_selection_entry_is_compiled_per_parameter_types_not_per_selector() -> None:
    """The loop reaches a selector's kernel through an entry that reads its parameters from
    where they are stored (dpbandits.selectors.compiled.selection_args): one entry per parameter
    types, shared by kRR and permute-and-flip (a float each), another for RNM (a float, an
    int)."""
    from dpbandits.selectors.compiled import selection_args
    from dpbandits.selectors.noisy_max import permute_and_flip_kernel, rnm_kernel
    from dpbandits.selectors.simple import krr_kernel

    (krr_at, krr_entry, _, krr_fn, _), kept = selection_args(krr_kernel, (0.25,))
    (pf_at, pf_entry, _, pf_fn, _), _ = selection_args(permute_and_flip_kernel, (1.0,))
    (_, rnm_entry, _, _, _), _ = selection_args(rnm_kernel, (1.0, 0))
    assert krr_entry == pf_entry != rnm_entry and krr_fn != pf_fn and krr_at != pf_at
    assert kept[0].ctypes.data == krr_at and kept[1] == (0.25,)  # (kept alive by the caller)


class _Mode(NamedTuple):
    epsilon: float
    noise: str


@kernel
def _mode_kernel(params, q, d, rng, out):
    """:func:`_noisy_argmax_kernel` with parameters a named tuple holding a string."""
    mode = params[0]
    epsilon = mode.epsilon if mode.noise == "exponential" else 1.0
    return _noisy_argmax_kernel((epsilon,), q, d, rng, out)


class ModeArgmax(NoisyArgmax):
    """A plug-in whose kernel's parameters cannot be stored at an address (a string)."""

    name = "mode_argmax_for_tests"

    def compiled_kernel(self, n_candidates):
        return CompiledKernel(_mode_kernel, (_Mode(float(self.epsilon), "exponential"),))


def test_parameters_that_cannot_be_stored_go_by_value_with_the_same_bits() -> None:
    from agents.private_loop import play_loop

    env_id, kw = ENVS["bernoulli"]
    by_step = play_by_steps(private(selector=ModeArgmax(epsilon=0.5)), env_id, kw, 3, 7, None)
    by_block = play_by_steps(private(selector=ModeArgmax(epsilon=0.5)), env_id, kw, 3, 7, 61)
    np.testing.assert_array_equal(by_block[0], by_step[0])
    np.testing.assert_array_equal(by_block[1], by_step[1])
    # a loop of its own: the parameters' type is one of its argument types
    assert any("_Mode" in str(sig[-1]) for sig in play_loop.signatures)


def test_compile_windows_compiles_the_update_the_loops_call() -> None:
    # the warm-up's shared part (agents.private_loop.compile_windows) must compile the window
    # update for the argument types of the loops, or each loop would compile it again
    from agents.private_loop import _WINDOWS, compile_loop, compile_windows
    from dpbandits.core.numba_compat import on_compile
    from dpbandits.experiments import run, shift_agents, shift_env

    agent = shift_agents(["RNM"])["RNM"]
    assert agent.shared_parts(2) == [(compile_loop, ()), (compile_windows, ("smith",))]
    assert shift_agents(["kRR"])["kRR"].shared_parts(2) == [(compile_loop, ())]
    compiled: list[object] = []
    with on_compile(compiled.append):
        run(shift_env(t_shift=30, horizon=60), {"RNM": agent}, n_runs=2, seed=0, progress=False,
            n_jobs=1)  # fmt: skip
        for method in ("smith", "grid"):
            compile_windows(method)
    # at most one signature, shared by the loop and the warm-up, compiled at most once here: none
    # when another process (a second run of the suite, another pytest-xdist worker) had written
    # the kernels that link it to the disk cache, as they then load without touching its dispatcher
    smith = _WINDOWS["smith"]
    here = [f for f in compiled if f is smith.py_func]
    assert len(smith.signatures) <= 1 and len(here) <= 1
