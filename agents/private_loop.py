"""The compiled play loop of the private agent of App. H (`agents.private`).

One loop, :func:`play_loop`, compiled once for every selector and quantile method: per step and
for all replications it updates the private means (the hybrid mechanism's kernels), the windows
of the sensitivity estimates (the quantile method's update) and selects (the selector's
kernel), until the private means' noise block runs out. It calls its selection and its window
update by address (``dpbandits.selectors.compiled.selection_args``, :func:`windows_call`), and
receives the selector's parameters (``CompiledKernel.params``, whose types differ from selector
to selector) stored at an address, read back by a small entry kernel per parameter types: so
none of its argument types depends on the selector, and it is compiled once, not once per
selector and quantile method (docs/performance.md, "Cold start"). :func:`compile_loop` and
:func:`compile_windows` compile the loop and the window update that all private agents share
(``dpbandits.experiments.warmup``). The agent, its checks and its privacy report stay in
:mod:`agents.private`; this module is its compiled inner loop only.
"""

from __future__ import annotations

from typing import Any, cast

import numba
import numpy as np

from dpbandits.continual.kernels import means_clipped, means_update
from dpbandits.core.arms import read_only
from dpbandits.core.jit import generator_at, kernel
from dpbandits.core.numba_compat import (
    GENERATOR_TYPE,
    call_bool_at,
    call_none_at,
    compiled_address,
)
from dpbandits.quantiles import WindowedSensitivity
from dpbandits.quantiles.kernels import window_update_grid, window_update_smith

__all__ = [
    "NO_WINDOWS",
    "compile_loop",
    "compile_windows",
    "means_call",
    "play_loop",
    "windows_call",
]

#: The window state of a selector that reads no sensitivities (never used; the same types as
#: ``WindowedSensitivity.kernel_args``), passed to the loop in its place.
NO_WINDOWS = (np.empty((0, 0)), np.empty(0, dtype=np.int64), np.empty(0),
              np.empty(0, dtype=np.int64), False, np.empty(0), 1.0, 1, 0.0, 1.0,
              np.empty((0, 0)), np.empty((0, 0)))  # fmt: skip


# -- the window update of each quantile method, one signature: called by address by _play
# (windows_call), so that a run compiles the method it uses only, and once for all loops
@kernel
def _windows_smith(buf: Any, fill: Any, values: Any, n_est: Any, flat: Any, x: Any, levels: Any,
                   eps_level: float, grid_size: int, endpoint_mass: float, floor: float,
                   util: Any, exp_util: Any, lo: float, hi: float, rng: Any,
                   full: Any) -> None:  # fmt: skip
    window_update_smith(buf, fill, values, n_est, flat, x, util, exp_util, lo, hi, floor, rng,
                        full)  # fmt: skip


@kernel
def _windows_grid(buf: Any, fill: Any, values: Any, n_est: Any, flat: Any, x: Any, levels: Any,
                  eps_level: float, grid_size: int, endpoint_mass: float, floor: float,
                  util: Any, exp_util: Any, lo: float, hi: float, rng: Any,
                  full: Any) -> None:  # fmt: skip
    window_update_grid(buf, fill, values, n_est, flat, x, levels, eps_level, lo, hi, grid_size,
                       endpoint_mass, floor, rng, full)  # fmt: skip


@kernel
def play_loop(t0: int, n_ready: int, block: Any, bounds: Any, means_state: Any, windows: Any,
              selection: Any) -> int:  # fmt: skip
    """Steps ``t0, t0 + 1, ...`` of :class:`agents.private.PrivateAgent` against the reward
    rows of ``block`` (see ``Agent.play``): each one as
    :meth:`agents.private.PrivateAgent.choose` and :meth:`agents.private.PrivateAgent.observe`
    do it, with the same kernels and the same Generators.

    The first ``n_ready`` steps are played whole (their private-means noise is drawn,
    ``PrivateMeans.ready_steps``); the next one, if there are more rows, all but its
    private-means update, which needs the next noise block: the caller makes it
    (``PrivateMeans.update_flat`` with the step's ``flat`` and ``x``). Returns the number of
    steps played: ``n_ready + 1`` when that last step waits for its means update; fewer than
    ``min(len(rows), n_ready + 1)`` only when the selection refuses its input (the kernel
    returns False), before drawing anything for that step.

    The arguments come in groups:

    - ``block = (rows, actions, rewards, flat, x)``: the reward rows and the actions and
      rewards to fill, and the last step's streams ``r K + a`` and clipped rewards;
    - ``bounds = (lo, hi, clip_means)``: the reward range, and whether released means are
      clipped to it;
    - ``means_state = (update address, update token, *PrivateMeans.kernel_args)``: the private
      means' state and their update (``means_update``), by address (:func:`means_call`);
    - ``windows = (uses_d, quantiles generator address, update address, update token,
      *WindowedSensitivity.kernel_args)``: the update is the quantile method's ``_windows_*``
      kernel, by address (:func:`windows_call`); when the selector reads no sensitivities,
      placeholders of the same types (:data:`NO_WINDOWS`), and no update is called;
    - ``selection = (params, selection generator address, entry address, entry token, kernel
      address, kernel token)``: the selector's ``CompiledKernel.params`` (the address where
      they are stored, for parameters of numbers and arrays) and the entry that passes them to
      the selector's kernel, both by address (``dpbandits.selectors.compiled.selection_args``:
      the selection every caller of a selector's kernel calls).

    It calls those by address, not by name, so that compiling it does not link and optimise
    their code again, and none of its argument types depends on the selector or the quantile
    method: one compiled loop serves every private agent (docs/performance.md, "Cold start").
    """
    rows, actions, rewards, flat, x = block
    lo, hi, clip_means = bounds
    means_fn, means_token, counts, sums, means, noise, shift, mask, gamma = means_state
    (uses_d, quantiles_address, windows_fn, windows_token, buf, fill, values, n_est, _smith,
     levels, eps_level, grid_size, endpoint_mass, floor, util, exp_util) = windows  # fmt: skip
    params, select_address, entry_fn, entry_token, select_fn, select_token = selection
    n_runs = actions.shape[1]
    n_arms = rows.shape[1] // n_runs
    rng_q = generator_at(quantiles_address)
    rng_s = generator_at(select_address)
    q = means.reshape((n_runs, n_arms))
    q_clipped = np.empty((n_runs, n_arms))
    d = values.reshape((n_runs, n_arms)) if uses_d else np.ones((n_runs, n_arms))
    out = np.empty(n_runs, dtype=np.int64)
    full = np.empty(n_runs, dtype=np.int64)
    for i in range(rows.shape[0]):
        t = t0 + i
        if t < n_arms:  # the initial round: arm t, nothing drawn (App. H)
            out[:] = t
        else:
            if clip_means:
                means_clipped(means, lo, hi, q_clipped.reshape(-1))
            chosen = call_bool_at(entry_fn, entry_token,
                                  (params, select_fn, select_token,
                                   q_clipped if clip_means else q, d, rng_s, out))  # fmt: skip
            if not chosen:
                return i
        for r in range(n_runs):
            a = out[r]
            reward = rows[i, a * n_runs + r]
            actions[i, r] = a
            rewards[i, r] = reward
            v = reward if reward >= lo else lo  # numpy.maximum, then numpy.minimum
            x[r] = v if v <= hi else hi
            flat[r] = r * n_arms + a
        if uses_d:  # (else no window update: a selector that reads no sensitivities)
            call_none_at(windows_fn, windows_token,
                         (buf, fill, values, n_est, flat, x, levels, eps_level, grid_size,
                          endpoint_mass, floor, util, exp_util, lo, hi, rng_q, full))  # fmt: skip
        if i == n_ready:  # its noise block is not drawn yet: the caller updates the means
            return i + 1
        call_none_at(means_fn, means_token,
                     (counts, sums, means, noise, shift, mask, gamma, flat, x))  # fmt: skip
    return rows.shape[0]


_WINDOWS = {"smith": _windows_smith, "grid": _windows_grid}


_I1 = numba.types.Array(numba.types.int64, 1, "C")


def means_call(means_args: tuple[Any, ...], flat: Any, x: Any) -> tuple[int, int]:
    """``(address, token)`` of the private means' update (``means_update``) compiled (or loaded:
    ``PrivateMeans.update`` compiles it for the same types) for the arguments :func:`play_loop`
    passes it: ``means_args`` (``PrivateMeans.kernel_args``), the step's ``flat`` and ``x``."""
    return compiled_address(means_update, tuple(numba.typeof(a) for a in (*means_args, flat, x)))


def windows_call(method: str | None, windows_args: tuple[Any, ...], flat: Any, x: Any,
                 lo: float, hi: float) -> tuple[int, int]:  # fmt: skip
    """``(address, token)`` of the window update of ``method`` compiled (or loaded) for the
    arguments :func:`play_loop` passes it: ``windows_args``
    (``WindowedSensitivity.kernel_args``), the step's ``flat`` and ``x``, the reward range;
    ``(0, 0)`` for ``None`` (no sensitivities: the loop calls no update)."""
    if method is None:  # no window update (the loop does not call it): nothing to compile
        return 0, 0
    buf, fill, values, n_est, _smith, *rest = windows_args
    args = (buf, fill, values, n_est, flat, x, *rest, float(lo), float(hi))
    argtypes = (*(numba.typeof(a) for a in args), GENERATOR_TYPE, _I1)
    return compiled_address(_WINDOWS[method], argtypes)


def compile_windows(method: str) -> None:
    """Compile (or load from the disk cache) the window update of ``method`` with the argument
    types of the loop (:func:`play_loop`), those of a throw-away two-stream
    :class:`WindowedSensitivity`. The private agents with that method all call the same
    compiled update: ``dpbandits.experiments.warmup`` runs this once, in one of its compiling
    processes, beside :func:`compile_loop` (:meth:`agents.private.PrivateAgent.shared_parts`)."""
    sens = WindowedSensitivity(2, 2, 1.0, window=2, method=method, rng=0)
    args = sens.kernel_args()
    assert args is not None  # (the float sampler: compiled)
    windows_call(method, args, np.empty(2, dtype=np.int64), np.empty(2), 0.0, 1.0)


def compile_loop() -> None:
    """Compile (or load from the disk cache) :func:`play_loop` for the argument types the
    private agents pass it (``agents.private.PrivateAgent.play``: the engine's read-only reward
    rows, the built-in estimators' state, parameters stored at an address), from placeholders
    of those types: the loop that every private agent with a compiled selector shares, which
    ``dpbandits.experiments.warmup`` compiles once, in one of its compiling processes, beside
    the agents' own kernels (:meth:`agents.private.PrivateAgent.shared_parts`)."""
    ints, floats = np.empty(0, dtype=np.int64), np.empty(0)
    block = (read_only(np.empty((0, 0))), np.empty((0, 0), dtype=np.int64), np.empty((0, 0)),
             ints, floats)  # fmt: skip
    bounds = (0.0, 1.0, False)
    means_state = (0, 0, ints, floats, floats, floats, 0, 0, 0.0)  # (PrivateMeans.kernel_args)
    windows = (False, 0, 0, 0, *NO_WINDOWS)
    selection = (0, 0, 0, 0, 0, 0)
    args = (0, 0, block, bounds, means_state, windows, selection)
    cast(Any, play_loop).compile(tuple(numba.typeof(a) for a in args))
