"""check_agent: the conformance kit for authors of agents (as check_selector is for selectors).

.. code-block:: python

    from dpbandits.testing import check_agent
    report = check_agent(MyAgent(alpha=2.0))   # raises AgentCheckError on failure
    print(report)

It plays the agent against one fixed table of Bernoulli rewards (``horizon x n_arms``, the
same in every replication's row of the reward tape) and checks, in this order:

``protocol``
    ``act`` before ``reset`` raises ``RuntimeError``; after ``reset(R, K, horizon=T, rng=s)``
    every ``act`` returns ``R`` integer arms in ``[0, K)``; ``update`` accepts them; the step
    counter ``t`` advances by one per step (for :class:`agents.Agent` subclasses).
``determinism``
    the same seed gives the same actions; a second ``reset`` starts afresh (the same actions
    as a new agent); numpy's global random state is neither used nor changed.
``blocks``
    for an agent with a block path (``Agent.block_player``), playing the tape in blocks of
    1, 7 and the rest gives exactly the actions and rewards of the step path, and so do blocks
    mixed with single steps.
``params``
    ``get_params`` names every constructor argument; ``type(agent)(**agent.get_params())``
    plays the same actions; the agent pickles (before and after ``reset``) and the copy plays
    the same actions.
``validation``
    for each entry of the class's ``parameter_constraints`` (:mod:`dpbandits.core.params`),
    values that break it (wrong type, out of range, NaN, an unknown option) are accepted by the
    constructor and refused by ``reset`` with a ``ValueError``/``TypeError`` whose message names
    the parameter (the one place an agent checks its parameters); a numeric constructor
    argument missing from the table must still refuse a string and NaN at ``reset``.

Each check is exact (no statistics): the agent's own randomness comes from the ``rng`` given
to ``reset``, so the same seed must give the same numbers.
"""

from __future__ import annotations

import inspect
import math
import pickle
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpbandits.core import checks
from dpbandits.core.arms import action_dtype
from dpbandits.core.params import Param
from envs.core import reward_tape

__all__ = ["AGENT_CHECK_NAMES", "AgentCheckError", "AgentReport", "check_agent"]


class AgentCheckError(AssertionError):
    """Raised by :func:`check_agent` when a check fails; ``report`` has every result."""

    def __init__(self, report: AgentReport) -> None:
        super().__init__(str(report))
        self.report = report


@dataclass
class AgentReport:
    """The results of :func:`check_agent`: ``(check, passed, detail)`` per check."""

    agent: str
    results: list[tuple[str, bool, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(passed for _, passed, _ in self.results)

    @property
    def failures(self) -> list[tuple[str, str]]:
        return [(name, detail) for name, passed, detail in self.results if not passed]

    def __str__(self) -> str:
        passed = sum(p for _, p, _ in self.results)
        lines = [f"check_agent({self.agent}): {passed}/{len(self.results)} checks passed"]
        lines += [f"  {'ok  ' if p else 'FAIL'} {name}: {detail}"
                  for name, p, detail in self.results]  # fmt: skip
        return "\n".join(lines)


class _Failure(Exception):
    pass


@dataclass
class _Setup:
    agent: Any
    n_runs: int
    n_arms: int
    horizon: int
    seed: int
    tape: NDArray[np.float64]  # (T, K * R): replication r playing arm a at step t gets
    #                             tape[t, a * R + r]


def _fresh(setup: _Setup) -> Any:
    return pickle.loads(pickle.dumps(setup.agent))


def _play_steps(agent: Any, s: _Setup, steps: int | None = None, reset: bool = True) -> Any:
    """The step protocol on the tape: ``(T, R)`` actions and rewards."""
    if reset:
        agent.reset(s.n_runs, s.n_arms, horizon=s.horizon, rng=s.seed)
    steps = s.horizon if steps is None else steps
    runs = np.arange(s.n_runs)
    actions = np.empty((steps, s.n_runs), dtype=np.int64)
    rewards = np.empty((steps, s.n_runs))
    for t in range(steps):
        a = agent.act()
        arr = np.asarray(a)
        if arr.shape != (s.n_runs,) or arr.dtype.kind not in "iu":
            raise _Failure(f"act() at step {t} returned {arr.dtype} of shape {arr.shape}, "
                           f"expected ({s.n_runs},) integers")  # fmt: skip
        if arr.size and (arr.min() < 0 or arr.max() >= s.n_arms):
            raise _Failure(f"act() at step {t} returned arms outside [0, {s.n_arms}): {arr}")
        r = s.tape[t, arr * s.n_runs + runs]
        agent.update(arr.copy(), r.copy())
        actions[t], rewards[t] = arr, r
    return actions, rewards


def _check_protocol(s: _Setup) -> str:
    agent = _fresh(s)
    if callable(getattr(agent, "block_player", None)):  # an agents.Agent: act needs reset
        try:
            agent.act()
        except RuntimeError:
            pass
        else:
            raise _Failure("act() before reset() did not raise RuntimeError")
    _play_steps(agent, s)
    t = getattr(agent, "t", None)
    if t is not None and t != s.horizon:
        raise _Failure(f"after {s.horizon} steps, t = {t}")
    return f"{s.horizon} steps of {s.n_runs} replications, actions in [0, {s.n_arms})"


def _check_determinism(s: _Setup) -> str:
    # numpy's legacy global state: an agent must neither draw from it nor reseed it. It is
    # set to two different states around two runs of the same seed, and restored after.
    saved = np.random.get_state()  # noqa: NPY002
    try:
        np.random.set_state(np.random.RandomState(12345).get_state())  # noqa: NPY002
        before = np.random.get_state()[1].copy()  # type: ignore[index]  # noqa: NPY002
        a1, _ = _play_steps(_fresh(s), s)
        after = np.random.get_state()[1]  # type: ignore[index]  # noqa: NPY002
        if not np.array_equal(before, after):
            raise _Failure("numpy's global random state was used or reseeded")
        np.random.set_state(np.random.RandomState(54321).get_state())  # noqa: NPY002
        a2, _ = _play_steps(_fresh(s), s)
    finally:
        np.random.set_state(saved)  # noqa: NPY002
    if not np.array_equal(a1, a2):
        raise _Failure("the same seed gave different actions (a global random state, or state "
                       "kept outside reset?)")  # fmt: skip
    agent = _fresh(s)
    _play_steps(agent, s, steps=max(1, s.horizon // 2))
    a3, _ = _play_steps(agent, s)  # reset again: afresh
    if not np.array_equal(a1, a3):
        first = int(np.argmax((a1 != a3).any(axis=1)))
        raise _Failure(f"a second reset() did not start afresh: actions differ from step {first}")
    return "same seed, same actions; reset starts afresh; no global random state"


def _check_blocks(s: _Setup) -> str:
    agent = _fresh(s)
    block_player = getattr(agent, "block_player", None)
    agent.reset(s.n_runs, s.n_arms, horizon=s.horizon, rng=s.seed)
    play = block_player() if callable(block_player) else None
    if play is None:
        return "no block path (the step protocol is the only path)"
    ref_a, ref_r = _play_steps(_fresh(s), s)
    for name, sizes in (("blocks of 1, 7 and the rest", [1, 7]), ("one block", [])):
        agent = _fresh(s)
        agent.reset(s.n_runs, s.n_arms, horizon=s.horizon, rng=s.seed)
        play = agent.block_player()
        # the engine's action dtype: the loop the engine runs (dpbandits.core.arms.action_dtype)
        acts = np.empty((s.horizon, s.n_runs), dtype=action_dtype(s.n_arms))
        rews = np.empty((s.horizon, s.n_runs))
        t = 0
        for m in [*sizes, s.horizon]:
            m = min(m, s.horizon - t)
            if m <= 0:
                break
            play(np.ascontiguousarray(s.tape[t:t + m]), acts[t:t + m], rews[t:t + m])
            t += m
        _compare(name, acts, rews, ref_a, ref_r)
    # blocks mixed with single steps through act/update
    agent = _fresh(s)
    agent.reset(s.n_runs, s.n_arms, horizon=s.horizon, rng=s.seed)
    play = agent.block_player()
    acts = np.empty((s.horizon, s.n_runs), dtype=action_dtype(s.n_arms))
    rews = np.empty((s.horizon, s.n_runs))
    runs = np.arange(s.n_runs)
    t, k = 0, 0
    while t < s.horizon:
        if k % 2 == 0:
            m = min(5, s.horizon - t)
            play(np.ascontiguousarray(s.tape[t:t + m]), acts[t:t + m], rews[t:t + m])
            t += m
        else:
            a = np.asarray(agent.act())
            r = s.tape[t, a * s.n_runs + runs]
            agent.update(a.copy(), r.copy())
            acts[t], rews[t] = a, r
            t += 1
        k += 1
    _compare("blocks of 5 mixed with single steps", acts, rews, ref_a, ref_r)
    return "blocks (1, 7, the rest; one block; mixed with steps) = the step path"


def _compare(name: str, acts: Any, rews: Any, ref_a: Any, ref_r: Any) -> None:
    if not np.array_equal(acts, ref_a):
        first = int(np.argmax((acts != ref_a).any(axis=1)))
        raise _Failure(f"{name}: actions differ from the step path from step {first}")
    if not np.array_equal(rews, ref_r):
        raise _Failure(f"{name}: rewards differ from the step path")


def _check_params(s: _Setup) -> str:
    agent = _fresh(s)
    get_params = getattr(agent, "get_params", None)
    if not callable(get_params):
        raise _Failure("no get_params()")
    params = dict(get_params())
    sig = inspect.signature(type(agent))
    named = (p for p in sig.parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD))
    missing = [p.name for p in named if p.name not in params]
    if missing:
        raise _Failure(f"get_params() misses constructor arguments {missing}")
    try:
        rebuilt = type(agent)(**params)
    except Exception as exc:  # noqa: BLE001 (any failure is the finding)
        raise _Failure(f"type(agent)(**get_params()) failed: {type(exc).__name__}: {exc}") from None
    if dict(rebuilt.get_params()).keys() != params.keys():
        raise _Failure("the rebuilt agent's get_params() has other keys")
    ref, _ = _play_steps(_fresh(s), s)
    a_rebuilt, _ = _play_steps(rebuilt, s)
    if not np.array_equal(ref, a_rebuilt):
        raise _Failure("type(agent)(**get_params()) plays other actions (a parameter not "
                       "stored, or stored under another name?)")  # fmt: skip
    started = _fresh(s)
    _play_steps(started, s, steps=max(1, s.horizon // 3))
    try:
        copy_started = pickle.loads(pickle.dumps(started))
    except Exception as exc:  # noqa: BLE001
        raise _Failure(f"a reset agent does not pickle: {type(exc).__name__}: {exc}") from None
    a_copy, _ = _play_steps(copy_started, s)
    if not np.array_equal(ref, a_copy):
        raise _Failure("an unpickled agent plays other actions")
    return f"get_params() rebuilds it ({len(params)} parameters); it pickles"


def _bad_values(rule: Param) -> list[Any]:
    """Values that break ``rule``."""
    if rule.kind == "bool":
        return ["yes", 1]
    if rule.kind == "str":
        return [3] + (["no-such-option"] if rule.options else [])
    if rule.kind == "any":
        return []
    out: list[Any] = ["1", True, math.nan]
    if rule.kind == "int":
        out.append(1.5)
    if rule.low is not None:
        out.append(rule.low if rule.low_open else rule.low - 1)
    if rule.high is not None and rule.high != math.inf:
        out.append(rule.high if rule.high_open else rule.high + 1)
    if rule.high is None or rule.high != math.inf:
        out.append(math.inf)
    return out


def _undeclared_rules(agent: Any, constraints: Any, params: dict[str, Any]) -> dict[str, Param]:
    """Constraints implied for the numeric parameters the table does not declare: whatever
    their range, a string or NaN is never a number."""
    out = {}
    for p in inspect.signature(type(agent)).parameters.values():
        default = p.default
        if p.name in constraints or p.name not in params or isinstance(default, bool):
            continue
        if isinstance(default, (int, float)) and not isinstance(default, bool):
            out[p.name] = Param("any")
    return out


def _refused_at_reset(s: _Setup, agent: Any, params: dict[str, Any], name: str, bad: Any,
                      rule: str) -> None:
    """``type(agent)(**params, name=bad)`` must build, and its ``reset`` must refuse it with a
    ``ValueError``/``TypeError`` naming ``name``; ``rule`` says what ``bad`` breaks."""
    try:
        candidate = type(agent)(**{**params, name: bad})
    except (ValueError, TypeError) as exc:
        raise _Failure(f"{name}={bad!r} is refused by the constructor ({exc}); parameters "
                       "are checked at reset") from None  # fmt: skip
    try:
        candidate.reset(s.n_runs, s.n_arms, horizon=s.horizon, rng=s.seed)
    except (ValueError, TypeError) as exc:
        if name not in str(exc):
            raise _Failure(f"{name}={bad!r}: the error does not name {name!r}: {exc}") from None
        return
    raise _Failure(f"{name}={bad!r} breaks {rule} but reset() accepted it")


def _check_validation(s: _Setup) -> str:
    agent = _fresh(s)
    constraints = dict(getattr(type(agent), "parameter_constraints", None) or {})
    params = dict(agent.get_params())
    cases = [(name, bad, f"'a number' (declare {name!r} in parameter_constraints)")
             for name in _undeclared_rules(agent, constraints, params)
             for bad in ("x", math.nan)]  # fmt: skip
    for name, rule in constraints.items():
        if name not in params:
            raise _Failure(f"parameter_constraints names {name!r}, not a parameter")
        cases += [(name, bad, f"its constraint ({rule.describe()})") for bad in _bad_values(rule)]
    for name, bad, rule in cases:
        _refused_at_reset(s, agent, params, name, bad, rule)
    if not cases:
        return "no parameters to check"
    return f"{len(cases)} bad values refused at reset, each naming its parameter"


_CHECKS: list[tuple[str, Callable[[_Setup], str]]] = [
    ("protocol", _check_protocol),
    ("determinism", _check_determinism),
    ("blocks", _check_blocks),
    ("params", _check_params),
    ("validation", _check_validation),
]
#: The checks, in order.
AGENT_CHECK_NAMES: tuple[str, ...] = tuple(name for name, _ in _CHECKS)


def check_agent(
    agent: Any,
    *,
    n_arms: int = 3,
    horizon: int = 300,
    n_runs: int = 4,
    seed: int = 0,
    skip: Iterable[str] = (),
    raise_on_failure: bool = True,
) -> AgentReport:
    """Run the checks of the module docstring on ``agent`` (an agent object, not reset; it is
    never modified: every check plays a copy).

    ``horizon`` must cover the agent's warm-up (e.g. a first epoch) for the checks to reach
    its decisions. ``skip`` names checks to leave out. Raises :class:`AgentCheckError` on
    failure (``raise_on_failure=False`` returns the report instead).
    """
    if isinstance(agent, type):
        raise TypeError(f"agent must be an agent object, got the class {agent.__name__}; pass "
                        f"an instance, e.g. {agent.__name__}()")  # fmt: skip
    for method in ("reset", "act", "update"):
        if not callable(getattr(agent, method, None)):
            raise TypeError(f"agent has no {method}() method (the protocol of agents.Agent)")
    n_arms = checks.integer(n_arms, "n_arms", minimum=2)
    horizon = checks.integer(horizon, "horizon", minimum=n_arms + 1)
    n_runs = checks.positive_int(n_runs, "n_runs")
    seed = checks.integer(seed, "seed", minimum=0)
    skip = set(skip)
    unknown = skip - set(AGENT_CHECK_NAMES)
    if unknown:
        raise ValueError(f"skip names unknown checks {sorted(unknown)}; checks: "
                         f"{list(AGENT_CHECK_NAMES)}")  # fmt: skip
    try:
        frozen = pickle.loads(pickle.dumps(agent))
    except Exception as exc:  # noqa: BLE001
        report = AgentReport(repr(agent), [("params", False, f"the agent does not pickle: {exc}")])
        if raise_on_failure:
            raise AgentCheckError(report) from None
        return report
    rng = np.random.default_rng(seed)
    means = np.linspace(0.2, 0.8, n_arms)
    table = (rng.random((horizon, n_arms)) < means).astype(np.float64)  # Bernoulli rewards
    tape = reward_tape(table, n_runs)  # column a * R + r: arm a, replication r
    s = _Setup(frozen, n_runs, n_arms, horizon, seed, tape)
    report = AgentReport(repr(agent))
    for name, check in _CHECKS:
        if name in skip:
            continue
        try:
            report.results.append((name, True, check(s)))
        except _Failure as exc:
            report.results.append((name, False, str(exc)))
        except Exception as exc:  # noqa: BLE001 (an agent's crash is a failed check)
            report.results.append((name, False, f"raised {type(exc).__name__}: {exc}"))
    if raise_on_failure and not report.ok:
        raise AgentCheckError(report)
    return report
