"""The compiled play loop of the private agent of App. H (`agents.private`).

One loop, :func:`_play`, written once as a kernel template and specialised per selector kernel
and quantile method (:func:`play_loop`): per step and for all replications it updates the
private means (the hybrid mechanism's kernels), the windows of the sensitivity estimates (the
quantile method's update) and selects (the selector's kernel), until the private means' noise
block runs out. The loop calls its selection and its window update by address
(:func:`selection_call`, :func:`windows_call`), so that compiling a loop does not optimise their
code again inside it; :func:`compile_windows` compiles the window update that the loops of all
selectors share, once (``dpbandits.experiments.warmup``). The agent, its checks and its
privacy report stay in :mod:`agents.private`; this module is its compiled inner loop only.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from dpbandits.continual.kernels import means_clipped, means_update
from dpbandits.core.jit import (
    generator_at,
    kernel,
    kernel_template,
    specialise,
)
from dpbandits.core.numba_compat import (
    GENERATOR_TYPE,
    call_bool_at,
    call_none_at,
    compiled_address,
)
from dpbandits.quantiles import WindowedSensitivity
from dpbandits.quantiles.kernels import window_update_grid, window_update_smith

__all__ = ["NO_WINDOWS", "compile_windows", "play_loop", "selection_call", "windows_call"]

#: The window state of a selector that reads no sensitivities (never used; the same types as
#: ``WindowedSensitivity.kernel_args``), passed to the loop in its place.
NO_WINDOWS = (np.empty((0, 0)), np.empty(0, dtype=np.int64), np.empty(0),
              np.empty(0, dtype=np.int64), False, np.empty(0), 1.0, 1, 0.0, 1.0,
              np.empty((0, 0)), np.empty((0, 0)))  # fmt: skip


def _select(params: Any, q: Any, d: Any, rng: Any, out: Any) -> bool:
    """The selector's kernel (``dpbandits.selectors.compiled``), bound in :func:`_selection`."""
    raise NotImplementedError("bound by dpbandits.core.jit.specialise")


@kernel_template
def _selection(params: Any, q: Any, d: Any, rng: Any, out: Any) -> bool:
    """The selector's kernel ``_select``, an ``inline_kernel`` (a plug-in's), inlined here, as
    a kernel that the loop (:func:`_play`) calls by address once per step for all
    replications (:func:`selection_call`); the built-in kernels are plain kernels, called by
    address themselves."""
    return _select(params, q, d, rng, out)


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
def _windows_none(buf: Any, fill: Any, values: Any, n_est: Any, flat: Any, x: Any, levels: Any,
                  eps_level: float, grid_size: int, endpoint_mass: float, floor: float,
                  util: Any, exp_util: Any, lo: float, hi: float, rng: Any,
                  full: Any) -> None:  # fmt: skip
    """No sensitivities to estimate (a selector that reads none)."""


@kernel_template
def _play(t0: int, n_ready: int, block: Any, bounds: Any, means_state: Any, windows: Any,
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
    - ``means_state``: the private means' (``PrivateMeans.kernel_args``);
    - ``windows = (uses_d, quantiles generator address, update address, update token,
      *WindowedSensitivity.kernel_args)``, placeholders of the same types when the selector
      reads no sensitivities; the update is the quantile method's ``_windows_*`` kernel, by
      address (:func:`windows_call`);
    - ``selection = (params, selection generator address, kernel address, kernel token)``:
      the selector's ``CompiledKernel.params`` and its kernel by address
      (:func:`selection_call`).

    Its compiled versions are made per selector kernel and quantile method (:func:`play_loop`),
    with the same code: they call those by address, not by name, so that compiling a loop does
    not link and optimise their code again (docs/performance.md, "Cold start").
    """
    rows, actions, rewards, flat, x = block
    lo, hi, clip_means = bounds
    counts, sums, means, noise, shift, mask, gamma = means_state
    (uses_d, quantiles_address, windows_fn, windows_token, buf, fill, values, n_est, _smith,
     levels, eps_level, grid_size, endpoint_mass, floor, util, exp_util) = windows  # fmt: skip
    params, select_address, select_fn, select_token = selection
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
            chosen = call_bool_at(
                select_fn, select_token, (params, q_clipped if clip_means else q, d, rng_s, out)
            )
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
        call_none_at(windows_fn, windows_token,
                     (buf, fill, values, n_est, flat, x, levels, eps_level, grid_size,
                      endpoint_mass, floor, util, exp_util, lo, hi, rng_q, full))  # fmt: skip
        if i == n_ready:  # its noise block is not drawn yet: the caller updates the means
            return i + 1
        means_update(counts, sums, means, noise, shift, mask, gamma, flat, x)
    return rows.shape[0]


_WINDOWS = {None: _windows_none, "smith": _windows_smith, "grid": _windows_grid}


def play_loop(selector_kernel: Any, quantile_method: str | None) -> Any:
    """The private agent's fused loop (:func:`_play`) for ``selector_kernel`` and the window
    update of ``quantile_method`` (``None``: no sensitivities): one compiled function per pair,
    made on first use and cached on disk under a name of its own
    (:func:`dpbandits.core.jit.specialise`), so that the loops of a run's selectors are
    compiled (and written to the cache) independently. The loop calls both by address
    (:func:`selection_call`, :func:`windows_call`)."""
    return specialise(_play, _select=_callee(selector_kernel),
                      _update_windows=_WINDOWS[quantile_method])  # fmt: skip


def _callee(selector_kernel: Any) -> Any:
    # a kernel compiled to be inlined into its callers (an inline_kernel) is called through
    # _selection, compiled once per kernel; any other is called itself
    forceinline = getattr(selector_kernel, "targetoptions", {}).get("forceinline", False)
    return specialise(_selection, _select=selector_kernel) if forceinline else selector_kernel


_F2 = numba.types.Array(numba.types.float64, 2, "C")
_I1 = numba.types.Array(numba.types.int64, 1, "C")


def selection_call(selector_kernel: Any, params: Any) -> tuple[int, int]:
    """``(address, token)`` of ``selector_kernel`` compiled (or loaded) for the arguments
    :func:`_play` passes it, ``(params, q, d, rng, out)``
    (:func:`dpbandits.core.numba_compat.compiled_address`)."""
    argtypes = (numba.typeof(params), _F2, _F2, GENERATOR_TYPE, _I1)
    return compiled_address(_callee(selector_kernel), argtypes)


def windows_call(method: str | None, windows_args: tuple[Any, ...], flat: Any, x: Any,
                 lo: float, hi: float) -> tuple[int, int]:  # fmt: skip
    """``(address, token)`` of the window update of ``method`` compiled (or loaded) for the
    arguments :func:`_play` passes it: ``windows_args`` (``WindowedSensitivity.kernel_args``, or
    :data:`NO_WINDOWS`), the step's ``flat`` and ``x``, the reward range."""
    buf, fill, values, n_est, _smith, *rest = windows_args
    args = (buf, fill, values, n_est, flat, x, *rest, float(lo), float(hi))
    argtypes = (*(numba.typeof(a) for a in args), GENERATOR_TYPE, _I1)
    return compiled_address(_WINDOWS[method], argtypes)


def compile_windows(method: str) -> None:
    """Compile (or load from the disk cache) the window update of ``method`` with the argument
    types of every private loop (:func:`play_loop`), those of a throw-away two-stream
    :class:`WindowedSensitivity`. The loops of all selectors call the same compiled update:
    ``dpbandits.experiments.warmup`` runs this once, in one of its compiling processes,
    instead of once in each process compiling a loop
    (:meth:`agents.private.PrivateAgent.shared_parts`)."""
    sens = WindowedSensitivity(2, 2, 1.0, window=2, method=method, rng=0)
    args = sens.kernel_args()
    assert args is not None  # (the float sampler: compiled)
    windows_call(method, args, np.empty(2, dtype=np.int64), np.empty(2), 0.0, 1.0)
