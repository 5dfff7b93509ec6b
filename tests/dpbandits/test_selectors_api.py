"""Public API of dpbandits.selectors: make/available/register, plug-ins, validation, shapes."""

import textwrap
import warnings

import numpy as np
import pytest

from dpbandits import selectors
from dpbandits.selectors import Selector

BUILTIN = [
    "uniform",
    "greedy",
    "krr",
    "rnm",
    "exponential_mechanism",
    "permute_and_flip",
    "rnmh",
    "rs",
    "rs_tnb",
    "gem",
    "mgem",
    "combined_gem",
]
NOT_PRIVATE = {"greedy", "rnmh"}
NO_SENSITIVITIES = {"uniform", "greedy", "krr"}


def test_available_lists_builtins():
    assert set(BUILTIN) <= set(selectors.available())


@pytest.mark.parametrize("name", BUILTIN)
def test_attributes_repr_and_with_epsilon(name):
    sel = selectors.make(name, epsilon=0.7)
    assert sel.name == name
    assert sel.epsilon == 0.7
    assert sel.private is (name not in NOT_PRIVATE)
    assert sel.uses_sensitivities is (name not in NO_SENSITIVITIES)
    assert isinstance(sel.guarantee, str) and sel.guarantee
    assert repr(sel).startswith(type(sel).__name__ + "(") and "epsilon=0.7" in repr(sel)
    other = sel.with_epsilon(2.5)
    assert type(other) is type(sel) and other.epsilon == 2.5 and sel.epsilon == 0.7
    params = sel.get_params()
    params.pop("epsilon")
    assert {k: v for k, v in other.get_params().items() if k != "epsilon"} == params
    assert selectors.make(sel) is sel


def test_make_with_parameters_shows_them_in_repr():
    sel = selectors.make("mgem", epsilon=1.0, beta=0.1)
    assert repr(sel) == "MGEM(epsilon=1.0, beta=0.1, noise='exponential')"
    assert selectors.make("rnm", noise="laplace").noise == "laplace"
    assert selectors.make("rs_tnb", eta=-0.5, gamma=0.2).get_params() == {
        "epsilon": 1.0,
        "gamma": 0.2,
        "eta": -0.5,
    }


def test_make_errors():
    with pytest.raises(ValueError, match="unknown selector 'nope'; available: .*mgem"):
        selectors.make("nope")
    with pytest.raises(TypeError, match="unknown parameter.*'betta'.*accepted"):
        selectors.make("mgem", betta=0.1)
    with pytest.raises(TypeError, match="cannot be combined"):
        selectors.make(selectors.make("rnm"), epsilon=2.0)
    with pytest.raises(TypeError):
        selectors.make(3.0)
    with pytest.raises(ValueError, match="noise"):
        selectors.make("rnm", noise="cauchy")
    for bad in (0.0, 1.0, -0.1, float("nan")):
        with pytest.raises(ValueError, match="gamma"):
            selectors.make("rs", gamma=bad)
    with pytest.raises(ValueError, match="eta"):
        selectors.make("rs_tnb", eta=-1.0)
    with pytest.raises(ValueError, match="beta"):
        selectors.make("gem", beta=1.5)
    with pytest.raises(ValueError, match="c must"):
        selectors.make("combined_gem", c=1.0)


@pytest.mark.parametrize("name", BUILTIN)
@pytest.mark.parametrize("eps", [0.0, -1.0, float("nan"), float("inf")])
def test_bad_epsilon(name, eps):
    with pytest.raises(ValueError, match="epsilon must be finite and > 0"):
        selectors.make(name, epsilon=eps)


def test_epsilon_type_error():
    with pytest.raises(TypeError, match="epsilon"):
        selectors.make("rnm", epsilon="1")
    with pytest.raises(TypeError, match="epsilon"):
        selectors.make("rnm", epsilon=True)


@pytest.mark.parametrize("name", BUILTIN)
def test_bad_inputs_name_the_problem(name):
    sel = selectors.make(name)
    q = np.array([[0.0, 1.0, 2.0], [1.0, 0.5, 0.0]])
    with pytest.raises(ValueError, match=r"q must be finite; q\[1, 2\] = nan"):
        sel.select(np.array([[0.0, 1.0, 2.0], [1.0, 0.5, np.nan]]), 1.0)
    with pytest.raises(ValueError, match=r"q must be finite; q\[0, 1\] = inf"):
        sel.select(np.array([[0.0, np.inf, 2.0], [1.0, 0.5, 0.0]]), 1.0)
    with pytest.raises(ValueError, match="zero candidates"):
        sel.select(np.zeros((4, 0)))
    with pytest.raises(ValueError, match="scalar"):
        sel.select(1.0)
    with pytest.raises(ValueError, match=r"d with shape \(4,\) is not broadcastable"):
        sel.select(q, np.ones(4))
    with pytest.raises(ValueError, match=r"d\[2\] \(candidate 2\) = 0.0"):
        sel.select(q, np.array([1.0, 1.0, 0.0]))
    with pytest.raises(ValueError, match=r"d\[1, 0\] \(candidate 0\) = -1.0"):
        sel.select(q, np.array([[1.0, 1.0, 1.0], [-1.0, 1.0, 1.0]]))
    with pytest.raises(ValueError, match=r"d\[1\] \(candidate 1\) = nan"):
        sel.select(q, np.array([1.0, np.nan, 1.0]))
    with pytest.raises(ValueError, match=r"d\[0\] \(candidate 0\) = inf"):
        sel.select(q, np.array([np.inf, 1.0, 1.0]))
    with pytest.raises(ValueError, match=r"got d = 0.0"):
        sel.select(q, 0.0)
    with pytest.raises(TypeError, match="q must be an array of real numbers"):
        sel.select([["a", "b"]])


@pytest.mark.parametrize("name", BUILTIN)
def test_shapes_k1_and_determinism(name):
    sel = selectors.make(name)
    rng = np.random.default_rng(0)
    q = rng.normal(size=(2, 3, 5))
    d = rng.uniform(0.5, 1.5, size=5)
    out = sel.select(q, d, rng=1)
    assert out.shape == (2, 3) and out.dtype == np.int64
    assert np.all((out >= 0) & (out < 5))
    np.testing.assert_array_equal(out, sel.select(q, d, rng=1))
    np.testing.assert_array_equal(out, sel.select(q, d, rng=np.random.default_rng(1)))
    single = sel.select(q[0, 0], d, rng=2)
    assert single.shape == () and 0 <= int(single) < 5
    assert sel.select(np.ones((7, 1)), rng=3).tolist() == [0] * 7
    assert sel.select(np.ones((0, 4))).shape == (0,)
    assert sel(q, 1.0, rng=4).shape == (2, 3)


@pytest.mark.parametrize("name", BUILTIN)
def test_extreme_epsilon_valid_without_warnings(name):
    q = 1e6 + np.array([[0.0, 1.0, 2.0, 3.0]] * 1000)
    d = np.array([1.0, 0.5, 2.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        big = selectors.make(name, epsilon=1e3).select(q, d, rng=0)
        small = selectors.make(name, epsilon=1e-4).select(q, d, rng=1)
    for out in (big, small):
        assert out.dtype == np.int64 and np.all((out >= 0) & (out < 4))
    if name in {"greedy", "krr", "rnm", "exponential_mechanism", "permute_and_flip", "rnmh"}:
        assert np.all(big == 3)  # eps = 1e3: the best candidate, not index 0 by overflow
    if name in {"uniform", "krr", "rnm", "exponential_mechanism", "permute_and_flip"}:
        counts = np.bincount(small, minlength=4)
        assert counts.min() > 150  # eps = 1e-4: (close to) uniform


def test_register_at_run_time_and_function_wrapper():
    def noisy_first(q, d, epsilon, rng):
        return np.zeros(q.shape[0], dtype=np.int64)

    selectors.register(
        "always_first",
        lambda epsilon=1.0: selectors.from_function(
            noisy_first, name="always_first", epsilon=epsilon, private=False, guarantee="none"
        ),
    )
    try:
        assert "always_first" in selectors.available()
        sel = selectors.make("always_first", epsilon=2.0)
        assert sel.name == "always_first" and sel.epsilon == 2.0 and not sel.private
        assert sel.select(np.ones((3, 4))).tolist() == [0, 0, 0]
        assert sel.with_epsilon(0.5).epsilon == 0.5
        assert "FunctionSelector(fn=" in repr(sel)
        with pytest.raises(ValueError, match="already registered"):
            selectors.register("always_first", lambda: sel)
        selectors.register("always_first", selectors.RNM, overwrite=True)
        assert isinstance(selectors.make("always_first"), selectors.RNM)
    finally:
        selectors.unregister("always_first")
    assert "always_first" not in selectors.available()
    with pytest.raises(ValueError, match="built-in"):
        selectors.register("rnm", selectors.RNM)


def test_register_selector_subclass():
    class Lowest(Selector):
        name = "lowest"
        private = False
        guarantee = "not private"

        def select_batch(self, q, d, rng):
            return np.argmin(q, axis=1)

    selectors.register("lowest", Lowest)
    try:
        assert selectors.make("lowest").select([[3.0, 1.0, 2.0]]).tolist() == [1]
    finally:
        selectors.unregister("lowest")


def test_from_function_checks_output():
    bad_shape = selectors.from_function(lambda q, d, e, r: np.zeros(2, dtype=int), name="b1")
    with pytest.raises(ValueError, match="must return 3 integer indices"):
        bad_shape.select(np.ones((3, 4)))
    out_of_range = selectors.from_function(lambda q, d, e, r: np.full(3, 4), name="b2")
    with pytest.raises(ValueError, match="outside"):
        out_of_range.select(np.ones((3, 4)))
    floats = selectors.from_function(lambda q, d, e, r: np.zeros(3), name="b3")
    with pytest.raises(ValueError, match="integer"):
        floats.select(np.ones((3, 4)))


def test_entry_point_plugin(tmp_path, monkeypatch):
    """A fake installed distribution declaring entry points in the group dpbandits.selectors."""
    (tmp_path / "fake_dp_plugin.py").write_text(
        textwrap.dedent(
            """
            import numpy as np
            from dpbandits.selectors import Selector

            class Last(Selector):
                name = "plugin_last"
                private = False
                guarantee = "not private"
                uses_sensitivities = False

                def __init__(self, epsilon=1.0, offset=0):
                    super().__init__(epsilon)
                    self.offset = offset

                def select_batch(self, q, d, rng):
                    return np.full(q.shape[0], q.shape[1] - 1 - self.offset)
            """
        )
    )
    dist = tmp_path / "fake_dp_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-dp-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        "[dpbandits.selectors]\n"
        "plugin_last = fake_dp_plugin:Last\n"
        "plugin_broken = fake_dp_plugin:DoesNotExist\n"
    )
    assert "plugin_last" not in selectors.available()
    monkeypatch.syspath_prepend(str(tmp_path))
    selectors.refresh_plugins()
    try:
        assert {"plugin_last", "plugin_broken"} <= set(selectors.available())
        sel = selectors.make("plugin_last", epsilon=0.5, offset=1)
        assert sel.epsilon == 0.5 and repr(sel) == "Last(epsilon=0.5, offset=1)"
        assert sel.select(np.zeros((2, 5))).tolist() == [3, 3]
        with pytest.raises(ValueError, match="plug-in 'plugin_broken'.*failed to load"):
            selectors.make("plugin_broken")
    finally:
        monkeypatch.undo()
        selectors.refresh_plugins()
    assert "plugin_last" not in selectors.available()


def test_select_hands_select_batch_read_only_contiguous_arrays():
    """numba compiles a row kernel once per array type (layout and writability included), so
    ``select`` gives ``select_batch`` one type of ``q`` and ``d`` -- read-only, C-contiguous --
    whatever the caller passes (a broadcast ``d`` included); the caller's arrays stay writable
    and equal."""
    seen = []

    class Recorder(Selector):
        name = "recorder"

        def select_batch(self, q, d, rng):
            seen.append((q.flags.c_contiguous, q.flags.writeable, d.flags.c_contiguous,
                         d.flags.writeable, q.copy(), d.copy()))  # fmt: skip
            return np.zeros(q.shape[0], dtype=np.int64)

    base = np.arange(24.0).reshape(4, 6)
    d_full = np.full((4, 3), 2.0)
    cases = [(base[:, ::2], None), (base[:, :3].copy(), d_full), (base[:, 1::2], 0.5)]
    frozen = base[:, :3].copy()
    frozen.flags.writeable = False
    cases.append((frozen, d_full[0]))
    for q, d in cases:
        Recorder().select(q, d, rng=0)
    assert [s[:4] for s in seen] == [(True, False, True, False)] * len(cases)
    for (q, d), s in zip(cases, seen, strict=True):
        np.testing.assert_array_equal(s[4], q)
        np.testing.assert_array_equal(s[5], np.broadcast_to(1.0 if d is None else d, q.shape))
    assert base.flags.writeable and d_full.flags.writeable


@pytest.mark.parametrize("clip_means", [False, True])
def test_private_agent_steps_hand_select_batch_the_type_select_hands(clip_means):
    """The private agent's step protocol (``choose``) hands its selector read-only C-contiguous
    ``q`` and ``d``, as ``select`` does: the row kernels compile for one array type whichever
    path calls them."""
    from agents import PrivateAgent

    seen = []

    class Recorder(Selector):
        name = "recorder"

        def select_batch(self, q, d, rng):
            seen.append((q.flags.c_contiguous, q.flags.writeable, d.flags.c_contiguous,
                         d.flags.writeable))  # fmt: skip
            return np.zeros(q.shape[0], dtype=np.int64)

    agent = PrivateAgent(Recorder(), window=4, clip_means=clip_means)
    agent.reset(n_runs=3, n_arms=2, horizon=30, rng=0)
    for _ in range(10):
        agent.update(agent.act(), np.full(3, 0.5))
    assert seen and set(seen) == {(True, False, True, False)}
