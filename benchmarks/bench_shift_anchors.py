"""The non-private anchors for piecewise-stationary bandits against SMPyBandits, and their speed.

1. **Cross-check of the regret** of ``m_ucb``, ``glr_klucb`` (local and global restarts) and
   ``cusum_ucb`` against SMPyBandits 0.9.7's implementations of the same policies
   (``Monitored_IndexPolicy`` over ``UCB``,
   ``BernoulliGLR_IndexPolicy_WithDeterministicExploration`` over ``klUCB_forGLR``,
   ``CUSUM_IndexPolicy`` over ``UCB``), with the parameters matched, on
   the same piecewise Bernoulli instances (``dpbandits/PiecewiseBandit-v0``, ``arm="bernoulli"``):

   - ``fig9``: the Bernoulli version of ``TwoArmedShift-v0``'s defaults, means (0.2, 0.8)
     swapped at step 30 000, T = 50 000;
   - ``k5``: K = 5, T = 100 000, change points at 20 000, 40 000, 60 000, 80 000, the means
     ``(0.8, 0.1, 0.3, 0.4, 0.6)`` rolled by one arm at each, so the best arm changes every time
     and the gap of the best arm is 0.2 in every segment.

   Printed: the mean total pseudo-regret +- its standard error over the runs for both
   libraries, and the two-sample z of the difference with the pooled standard deviation (the
   band of agreement: |z| < 3). Pooled, because the hypothesis under test is that both draw
   from one distribution, and because a handful of SMPyBandits runs (each takes minutes) gives
   a standard deviation too rough to divide by: GLR-klUCB's local variant on ``k5`` has a
   standard deviation of about 2 200 over 100 runs, two SMPyBandits runs once gave 287.
   SMPyBandits 0.9.7 has three bugs in exactly these policies, patched here in memory (never
   in the library; the numbers of SMPyBandits below are the *patched* ones):

   - M-UCB: ``Monitored_IndexPolicy.detect_change`` returns ``(has_detected, None)``, a tuple,
     which always counts as a change once the window is full: it restarts at every step;
     patched to return ``has_detected``;
   - GLR: ``smart_delta_from_T_UpsilonT`` replaces ``K Upsilon T`` (always > 1) by 0.1, so
     ``delta = 1 / sqrt(0.1) = 3.16`` instead of ``1 / sqrt(K Upsilon T)``; patched;
   - forced exploration: ``CD_IndexPolicy.choice`` draws ``randint(0, K - 1)``, arms 0 .. K-2,
     never the last; patched to ``randint(0, K)`` (CUSUM-UCB's uniform exploration).

   Two more patches change the speed only: GLR's and CUSUM's ``detect_change`` loop over the
   arm's whole history in Python at every test; they are replaced by numpy versions of the same
   computation (checked against the originals on random histories at start-up), without which
   one run of T = 100 000 takes hours.

   ``--smpy-schedule paper`` adds a fourth patch, which is not a bug fix but makes
   SMPyBandits' GLR follow the paper: its deterministic forced exploration counts the step
   from the latest restart of *any* arm, with period ``ceil(K / alpha)`` (M-UCB's schedule);
   Besson et al. 2022, Algorithm 1, count it from the start, ``t mod floor(K / alpha)``, as
   ours does. With local restarts this changes the regret on ``k5`` (docs/shift-anchors.md).

   Differences that remain (the paper's algorithm on our side, SMPyBandits' on theirs; each
   moves the regret by little, see docs/shift-anchors.md): ties of the index broken at random
   there, by the lowest arm here; after a detection SMPyBandits keeps the observation that
   triggered it in the restarted arm's history (the paper empties it); its CUSUM walks over
   the first ``M`` observations too and tests every 10th observation of an arm; its GLR scans
   splits after ``1, 11, 21, ..`` observations, ours (and the paper's ``s mod Delta s = 0``)
   after ``10, 20, ..``.
   Matched parameters: GLR-klUCB ``delta = 1/sqrt(K Upsilon T)`` (local) or ``1/sqrt(Upsilon
   T)`` (global), ``alpha = alpha0 sqrt(K Upsilon ln T / T)`` (local) or ``alpha0 sqrt(Upsilon
   ln T / T)`` with ``alpha0 = 0.05``, kl-UCB level ``ln(t - tau_a) / N_a`` (ours ``c = 0``,
   SMPyBandits ``klUCB_forGLR(c=1)``), ``Delta n = Delta s = 10``; M-UCB ``w = 150``, ``b =
   sqrt(w/2 ln(2 K T^2))``, ``gamma = sqrt(Upsilon K (2 b + 3 sqrt w) / (2 T))``; CUSUM-UCB
   ``M = 150``, ``eps = 0.1``, ``h = ln(T / Upsilon)``, ``alpha = sqrt(Upsilon ln(T / Upsilon)
   / T)``, UCB1 index with ``xi = 2``.

2. **Speed**: CPU nanoseconds per agent-step of each anchor at R = 1 and R = 100 on ``fig9``
   (``time.process_time`` inside each engine task, ``Results.timing``), next to UCB's measured
   in the same run. Timings on a busy machine are noisy: compare the ratios.

Run:  python benchmarks/bench_shift_anchors.py [--runs 100] [--smpy-runs 20] [--only fig9]
             [--smpy-seeds 0,1,3] [--smpy-schedule paper]
SMPyBandits is optional: without it (``pip install SMPyBandits``, in a scratch environment: it
is not a dependency) the cross-check prints a note and only our side runs. Its results are
cached in ``--cache`` (a JSON file) so that a second run does not recompute them; the runs of
every seed in ``--smpy-seeds`` found there are pooled (run ``i`` of seed ``s`` draws its rewards
from ``default_rng([s, i])``), and the first seed is computed when none is.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import json
import math
import os
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from dpbandits.experiments import run

BASE_K5 = (0.8, 0.1, 0.3, 0.4, 0.6)


def instances() -> dict[str, dict[str, Any]]:
    k5 = [(j * 20_000, tuple(float(v) for v in np.roll(BASE_K5, j))) for j in range(5)]
    return {
        "fig9": {"segments": [(0, (0.2, 0.8)), (30_000, (0.8, 0.2))], "horizon": 50_000},
        "k5": {"segments": k5, "horizon": 100_000},
    }


def means_table(inst: dict[str, Any]) -> np.ndarray:
    """The (T, K) expected rewards of an instance."""
    segs, horizon = inst["segments"], inst["horizon"]
    starts = [s for s, _ in segs] + [horizon]
    return np.concatenate(
        [
            np.tile(np.asarray(m, float), (starts[j + 1] - starts[j], 1))
            for j, (_, m) in enumerate(segs)
        ]
    )


def matched(inst: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The parameters of each policy for an instance (module docstring), as numbers."""
    horizon = inst["horizon"]
    k = len(inst["segments"][0][1])
    ups = len(inst["segments"]) - 1
    log_t = math.log(horizon)
    w = 150
    b = math.sqrt(w / 2 * math.log(2 * k * horizon**2))
    return {
        "m_ucb": {
            "w": w,
            "b": b,
            "gamma": math.sqrt(ups * k * (2 * b + 3 * math.sqrt(w)) / (2 * horizon)),
        },
        "glr_klucb_local": {
            "delta": 1 / math.sqrt(k * ups * horizon),
            "alpha": 0.05 * math.sqrt(k * ups * log_t / horizon),
        },
        "glr_klucb_global": {
            "delta": 1 / math.sqrt(ups * horizon),
            "alpha": 0.05 * math.sqrt(ups * log_t / horizon),
        },
        "cusum_ucb": {
            "m": 150,
            "drift": 0.1,
            "h": math.log(horizon / ups),
            "alpha": math.sqrt(ups * math.log(horizon / ups) / horizon),
        },
    }


def our_agents(inst: dict[str, Any]) -> dict[str, dict[str, Any]]:
    p = matched(inst)
    ups = len(inst["segments"]) - 1
    return {
        "m_ucb": {"kind": "m_ucb", **p["m_ucb"], "n_changes": ups},
        "glr_klucb_local": {
            "kind": "glr_klucb",
            "restart": "local",
            "c": 0.0,
            **p["glr_klucb_local"],
        },
        "glr_klucb_global": {
            "kind": "glr_klucb",
            "restart": "global",
            "c": 0.0,
            **p["glr_klucb_global"],
        },
        "cusum_ucb": {"kind": "cusum_ucb", **p["cusum_ucb"]},
    }


def run_ours(inst: dict[str, Any], runs: int, seed: int) -> dict[str, np.ndarray]:
    env = {
        "id": "dpbandits/PiecewiseBandit-v0",
        "segments": inst["segments"],
        "horizon": inst["horizon"],
        "arm": "bernoulli",
    }
    res = run(env, our_agents(inst), n_runs=runs, seed=seed, progress=False, trace=False)
    return {label: np.asarray(res.data[label]["total_regret"]) for label in res.labels}


def reward_table(inst: dict[str, Any], seed: int, i: int) -> np.ndarray:
    """The ``(T, K)`` 0/1 rewards of SMPyBandits' run ``i`` with ``seed`` (:func:`run_smpy`)."""
    table = means_table(inst)
    return (np.random.default_rng([seed, i]).random(table.shape) < table).astype(float)


def run_ours_on_tables(label: str, inst: dict[str, Any], seed: int, runs: int) -> np.ndarray:
    """Our agent ``label``'s total pseudo-regret on the very reward tables of SMPyBandits' runs
    ``0 .. runs - 1`` with ``seed``, one replication per table: the paired comparison, in
    which the two libraries differ only by their algorithms."""
    import agents

    table = means_table(inst)
    horizon, k = table.shape
    spec = dict(our_agents(inst)[label])
    agent = agents.make(spec.pop("kind"), **spec)
    agent.reset(runs, k, horizon=horizon, rng=seed)
    u = np.stack([reward_table(inst, seed, i) for i in range(runs)], axis=2)  # (T, K, R)
    actions = np.empty((horizon, runs), dtype=np.int64)
    agent.play(u.reshape(horizon, k * runs), actions, np.empty((horizon, runs)))
    best = table.max(axis=1)
    return (best[:, None] - np.take_along_axis(table, actions, axis=1)).sum(axis=0)


# -- SMPyBandits, patched in memory -------------------------------------------------------------
def _glr_detect_numpy(self: Any, arm: int, verbose: bool = False) -> tuple[bool, Any]:
    """GLR_IndexPolicy.detect_change, the same computation with numpy (see _check_patches)."""
    from SMPyBandits.Policies.GLR_UCB import eps as clip

    y = np.asarray(self.all_rewards[arm], dtype=float)
    t = y.size - 1
    if t < 1:
        return False, None
    threshold = self.compute_threshold_h(t + 1)
    cs = np.cumsum(y)
    mean_all = cs[t] / (t + 1)
    s = np.arange(0, t, self.lazy_try_value_s_only_x_steps)
    before = cs[s] / (s + 1)
    after = (cs[t] - cs[s]) / (t - s)

    def kl(x: np.ndarray, m: float) -> np.ndarray:
        x = np.clip(x, clip, 1 - clip)
        m = min(max(m, clip), 1 - clip)
        return x * np.log(x / m) + (1 - x) * np.log((1 - x) / (1 - m))

    glr = (s + 1) * kl(before, mean_all) + (t - s) * kl(after, mean_all)
    skip = np.isclose(before, mean_all) & np.isclose(after, mean_all)
    hit = np.flatnonzero((glr >= threshold) & ~skip)
    if hit.size == 0:
        return False, None
    return True, (int(s[hit[0]]) + 1 if self.use_localization else None)


def _cusum_detect_numpy(self: Any, arm: int, verbose: bool = False) -> tuple[bool, Any]:
    """CUSUM_IndexPolicy.detect_change with numpy: g_k = S_k - min(0, min_j<=k S_j) solves
    g_k = max(0, g_k-1 + s_k) (same walk, over the whole history as SMPyBandits does)."""
    y = np.asarray(self.all_rewards[arm], dtype=float)
    if y.size <= self.M:
        return False, None
    u0 = np.mean(y[: self.M])
    first = y.size
    for steps in (u0 - y - self.epsilon, y - u0 - self.epsilon):
        walk = np.cumsum(steps)
        g = walk - np.minimum(np.minimum.accumulate(walk), 0.0)
        hit = np.flatnonzero(g >= self.threshold_h)
        if hit.size:
            first = min(first, int(hit[0]))
    if first == y.size:
        return False, None
    return True, (first + 2 * self.M + 2 if self.use_localization else None)


def import_smpybandits() -> dict[str, Any]:
    """SMPyBandits' policies with the patches of the module docstring applied."""
    import scipy.special

    if not hasattr(scipy.special, "btdtri"):  # removed in SciPy 1.12; the same function
        scipy.special.btdtri = scipy.special.betaincinv
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mods = {
            name: importlib.import_module(f"SMPyBandits.Policies.{name}")
            for name in ("CD_UCB", "CUSUM_UCB", "GLR_UCB", "Monitored_UCB", "UCB", "klUCB_forGLR")
        }
    CD_UCB, CUSUM_UCB, GLR_UCB = mods["CD_UCB"], mods["CUSUM_UCB"], mods["GLR_UCB"]
    Monitored_UCB, UCB, klUCB_forGLR = mods["Monitored_UCB"], mods["UCB"], mods["klUCB_forGLR"]
    mon = Monitored_UCB.Monitored_IndexPolicy
    if not getattr(mon, "_patched", False):
        original_glr = GLR_UCB.GLR_IndexPolicy.detect_change
        original_cusum = CUSUM_UCB.CUSUM_IndexPolicy.detect_change
        original_mucb = mon.detect_change

        def mucb_detect(self: Any, arm: int) -> bool:  # bug 1: a tuple is always true
            return (
                bool(original_mucb(self, arm)[0])
                if len(self.last_w_rewards[arm]) >= self.window_size
                else False
            )

        def smart_delta(
            horizon: float = 1,
            max_nb_random_events: float = 1,
            scaleFactor: float = 1.0,
            per_arm_restart: bool = True,
            nbArms: int = 1,
        ) -> float:  # bug 2
            product = (
                (max_nb_random_events or 1) * float(horizon) * (nbArms if per_arm_restart else 1)
            )
            return scaleFactor / math.sqrt(product)

        def choice(self: Any) -> int:  # bug 3: randint(0, K - 1) never draws the last arm
            # SMPyBandits draws from numpy's global state, so does its patch
            if np.random.random() < self.proba_random_exploration:  # noqa: NPY002
                return int(np.random.randint(0, self.nbArms))  # noqa: NPY002
            return self.policy.choice()

        mon.detect_change = mucb_detect
        GLR_UCB.smart_delta_from_T_UpsilonT = smart_delta
        CD_UCB.CD_IndexPolicy.choice = choice
        GLR_UCB.GLR_IndexPolicy.detect_change = _glr_detect_numpy
        CUSUM_UCB.CUSUM_IndexPolicy.detect_change = _cusum_detect_numpy
        mon._patched = True
        _check_patches(original_glr, original_cusum, GLR_UCB, CUSUM_UCB)

    glr_paper = GLR_UCB.BernoulliGLR_IndexPolicy_WithDeterministicExploration
    if not hasattr(mods["GLR_UCB"], "PaperSchedule"):

        class PaperSchedule(glr_paper):  # type: ignore[misc, valid-type]
            """The forced exploration of Besson et al. 2022, Algorithm 1: the step ``t`` (its
            ``self.t`` steps done, the 0-based index of this step) explores arm ``t mod
            floor(K / alpha)`` when that is below ``K``, whatever the restarts."""

            def choice(self: Any) -> int:
                period = math.floor(self.nbArms / self.proba_random_exploration)
                a = self.t % period
                return int(a) if a < self.nbArms else int(self.policy.choice())

        mods["GLR_UCB"].PaperSchedule = PaperSchedule

    class KLUCBLevelLogT(klUCB_forGLR.klUCB_forGLR):
        """klUCB_forGLR with c = 1: the level ln(t - tau_a) / N_a."""

        def __init__(self, nbArms: int, **kwargs: Any) -> None:
            super().__init__(nbArms, c=1, **kwargs)

    return {
        "UCB": UCB.UCB,
        "klUCB": KLUCBLevelLogT,
        "Monitored": mon,
        "GLR": glr_paper,
        "GLR_paper": mods["GLR_UCB"].PaperSchedule,
        "CUSUM": CUSUM_UCB.CUSUM_IndexPolicy,
    }


def _check_patches(original_glr: Any, original_cusum: Any, glr_mod: Any, cusum_mod: Any) -> None:
    """The numpy detect_change give the originals' answers on random histories."""
    rng = np.random.default_rng(0)
    with contextlib.redirect_stdout(io.StringIO()):
        glr = glr_mod.BernoulliGLR_IndexPolicy(2, horizon=2000, max_nb_random_events=1)
        cusum = cusum_mod.CUSUM_IndexPolicy(
            2,
            horizon=2000,
            max_nb_random_events=1,
            min_number_of_observation_between_change_point=20,
        )
    for policy, original, new in (
        (glr, original_glr, _glr_detect_numpy),
        (cusum, original_cusum, _cusum_detect_numpy),
    ):
        for _ in range(200):
            n = int(rng.integers(2, 400))
            c = int(rng.integers(1, n))
            y = np.where(
                np.arange(n) < c, rng.random(n) < rng.random(), rng.random(n) < rng.random()
            )
            policy.all_rewards = [list(y.astype(float)), []]
            a, b = original(policy, 0), new(policy, 0)
            if a[0] != b[0] or a[1] != b[1]:
                raise AssertionError(f"patched detect_change differs: {a} != {b} on {y.tolist()}")


def smpy_policy(
    name: str,
    classes: dict[str, Any],
    k: int,
    horizon: int,
    ups: int,
    p: dict[str, Any],
    schedule: str = "smpy",
) -> Any:
    if name == "m_ucb":
        return classes["Monitored"](
            k,
            policy=classes["UCB"],
            horizon=horizon,
            w=p["w"],
            b=p["b"],
            gamma=p["gamma"],
            max_nb_random_events=ups,
            per_arm_restart=False,
            full_restart_when_refresh=True,
        )
    if name.startswith("glr_klucb"):
        local = name.endswith("local")
        return classes["GLR_paper" if schedule == "paper" else "GLR"](
            k,
            policy=classes["klUCB"],
            horizon=horizon,
            max_nb_random_events=ups,
            alpha0=0.05 / 0.1,
            per_arm_restart=local,
            use_localization=False,
        )
    return classes["CUSUM"](
        k,
        policy=classes["UCB"],
        horizon=horizon,
        max_nb_random_events=ups,
        epsilon=p["drift"],
        min_number_of_observation_between_change_point=p["m"],
        use_localization=False,
    )


def run_smpy(name: str, inst: dict[str, Any], runs: int, seed: int,
             partial: Any = None, schedule: str = "smpy") -> np.ndarray:  # fmt: skip
    """The total pseudo-regret of ``runs`` runs of SMPyBandits' policy ``name``; ``partial``,
    if given, is called with the regrets done so far after each run (a long job on a busy
    machine keeps what it has computed). ``schedule="paper"``: GLR's forced exploration of
    the paper (module docstring)."""
    classes = import_smpybandits()
    table = means_table(inst)
    horizon, k = table.shape
    ups = len(inst["segments"]) - 1
    p = matched(inst)[name]
    best = table.max(axis=1)
    regrets = np.empty(runs)
    for i in range(runs):
        rng = np.random.default_rng([seed, i])
        np.random.seed(seed * 100_003 + i)  # noqa: NPY002 (SMPyBandits draws from it)
        with contextlib.redirect_stdout(io.StringIO()):
            policy = smpy_policy(name, classes, k, horizon, ups, p, schedule)
            policy.startGame()
        if name.startswith("glr_klucb"):  # the matched delta and alpha, as computed above
            assert abs(policy.delta - p["delta"]) < 1e-12 * p["delta"], (policy.delta, p["delta"])
            assert abs(policy.proba_random_exploration - p["alpha"]) < 1e-12, (
                policy.proba_random_exploration
            )
        u = rng.random((horizon, k)) < table  # = reward_table(inst, seed, i)
        chosen = np.empty(horizon, dtype=np.int64)
        for t in range(horizon):
            a = int(policy.choice())
            policy.getReward(a, float(u[t, a]))
            chosen[t] = a
        regrets[i] = float((best - table[np.arange(horizon), chosen]).sum())
        if partial is not None:
            partial(regrets[: i + 1])
    return regrets


def stored_runs(stored: dict[str, Any], inst: str, label: str, seed: int) -> list[float] | None:
    """The cached SMPyBandits regrets of ``label`` on ``inst`` with ``seed``: the key with the
    most runs (``inst/label/n/seed``, or ``inst/label/partial/seed`` for a job cut short)."""
    found = [v for key, v in stored.items()
             if key.startswith(f"{inst}/{label}/") and key.endswith(f"/{seed}")]  # fmt: skip
    return max(found, key=len) if found else None


def pooled_z(ours: np.ndarray, theirs: np.ndarray) -> float:
    """The two-sample z of the difference of the means with the pooled standard deviation
    (module docstring: the null is one distribution for both)."""
    n, m = ours.size, theirs.size
    ss = (n - 1) * ours.var(ddof=1) + ((m - 1) * theirs.var(ddof=1) if m > 1 else 0.0)
    sd = math.sqrt(ss / (n + m - 2))
    return float((ours.mean() - theirs.mean()) / (sd * math.sqrt(1 / n + 1 / m)))


def cross_check(
    labels: list[str] | None,
    names: list[str],
    runs: int,
    smpy_runs: dict[str, int],
    cache: Path,
    seed: int,
    smpy_only: bool = False,
    smpy_seeds: list[int] | None = None,
    schedule: str = "smpy",
) -> None:
    try:
        import_smpybandits()
        have_smpy = True
    except ImportError as exc:
        print(
            f"SMPyBandits is not installed ({exc}); only our side runs. "
            "pip install SMPyBandits in a scratch environment for the cross-check."
        )
        have_smpy = False
    seeds = smpy_seeds or [seed]
    stored = json.loads(cache.read_text()) if cache.exists() else {}
    for inst_name in names:
        inst = instances()[inst_name]
        n_smpy = smpy_runs.get(inst_name, smpy_runs.get("", 20))
        t0 = time.process_time()
        ours_key = f"ours/{inst_name}/{runs}/{seed}"
        if smpy_only:
            ours = {lab: np.zeros(2) for lab in our_agents(inst)}
        elif ours_key in stored:  # (a cache written by an earlier run: --cache)
            ours = {lab: np.asarray(v) for lab, v in stored[ours_key].items()}
        else:
            ours = run_ours(inst, runs, seed)
            if cache.exists():
                stored = {**json.loads(cache.read_text()), **stored}
            stored[ours_key] = {lab: r.tolist() for lab, r in ours.items()}
            cache.write_text(json.dumps(stored))
        print(
            f"\n{inst_name}: T = {inst['horizon']}, K = {len(inst['segments'][0][1])}, "
            f"{len(inst['segments']) - 1} change points; ours {runs} runs "
            f"({time.process_time() - t0:.0f} s CPU), SMPyBandits (patched"
            f"{', GLR with the paper schedule' if schedule == 'paper' else ''}) seeds {seeds}"
        )
        print(
            f"  {'policy':18s} {'dpbandits':>16s} {'SMPyBandits':>16s} {'runs':>4s} {'z':>6s}"
            f"  {'paired: ours - SMPyBandits':>27s} {'z':>6s}"
        )
        for label, r in ours.items():
            line = f"  {label:18s} {r.mean():9.1f} +- {r.std(ddof=1) / math.sqrt(r.size):5.1f}"
            if have_smpy and (labels is None or label in labels):
                key_label = label + ("+paper" if schedule == "paper" and "glr" in label else "")
                pooled = [stored_runs(stored, inst_name, key_label, s) for s in seeds]
                if not any(pooled):
                    t1 = time.process_time()
                    partial_key = f"{inst_name}/{key_label}/partial/{seeds[0]}"

                    def keep(done: np.ndarray, where: str = partial_key) -> None:
                        on_disk = json.loads(cache.read_text()) if cache.exists() else {}
                        cache.write_text(json.dumps({**on_disk, where: done.tolist()}))

                    got = run_smpy(label, inst, n_smpy, seeds[0], keep, schedule).tolist()
                    if cache.exists():  # another process may have added other keys meanwhile
                        stored = {**json.loads(cache.read_text()), **stored}
                    stored.pop(partial_key, None)
                    stored[f"{inst_name}/{key_label}/{n_smpy}/{seeds[0]}"] = got
                    cache.write_text(json.dumps(stored))
                    pooled = [got]
                    print(
                        f"    (SMPyBandits {label}: {time.process_time() - t1:.0f} s CPU)",
                        flush=True,
                    )
                s = np.asarray([x for runs_s in pooled if runs_s for x in runs_s])
                se_s = s.std(ddof=1) / math.sqrt(s.size) if s.size > 1 else math.nan
                line += f" {s.mean():9.1f} +- {se_s:5.1f} {s.size:4d} {pooled_z(r, s):+6.2f}"
                if not smpy_only:  # ours on SMPyBandits' own reward tables, run by run
                    d = np.concatenate([
                        run_ours_on_tables(label, inst, sd, len(runs_s)) - np.asarray(runs_s)
                        for sd, runs_s in zip(seeds, pooled, strict=True) if runs_s
                    ])  # fmt: skip
                    se_d = d.std(ddof=1) / math.sqrt(d.size) if d.size > 1 else math.nan
                    line += f"  {d.mean():+18.1f} +- {se_d:5.1f} {d.mean() / se_d:+6.2f}"
            print(line)


def speed(horizon: int) -> None:
    """CPU ns per agent-step at R = 1 and R = 100 on fig9 (``Results.timing``, in this
    process), and the ratio to UCB's in the same run."""
    inst = {"segments": [(0, (0.2, 0.8)), (3 * horizon // 5, (0.8, 0.2))], "horizon": horizon}
    env = {
        "id": "dpbandits/PiecewiseBandit-v0",
        "segments": inst["segments"],
        "horizon": horizon,
        "arm": "bernoulli",
    }
    agent_map = {"ucb": "ucb", **our_agents(inst)}
    print(
        f"\nspeed on fig9 shortened (T = {horizon}, the swap at 0.6 T): CPU ns per "
        "agent-step (x UCB's in the same run); "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    for runs in (1, 100):
        res = run(env, agent_map, n_runs=runs, seed=1, progress=False, trace=False, n_jobs=1)
        cpu = res.timing["cpu_seconds"]
        line = ", ".join(
            f"{lab} {1e9 * c / (runs * horizon):.0f} ({c / cpu['ucb']:.1f}x)"
            for lab, c in cpu.items()
        )
        print(f"  R = {runs}: {line}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=100, help="our runs per instance")
    ap.add_argument(
        "--smpy-runs",
        default="fig9:20,k5:10",
        help="SMPyBandits runs per instance, e.g. 'fig9:20,k5:10' (or one number)",
    )
    ap.add_argument("--smpy-only", action="store_true", help="only fill the SMPyBandits cache")
    ap.add_argument("--policies", default="", help="SMPyBandits policies to run (default: all)")
    ap.add_argument("--only", default="fig9,k5", help="instances, comma-separated")
    ap.add_argument("--cache", type=Path, default=Path("bench_shift_anchors_smpy.json"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--smpy-seeds", default="", help="SMPyBandits seeds to pool (default: --seed)")
    ap.add_argument(
        "--smpy-schedule",
        choices=("smpy", "paper"),
        default="smpy",
        help="GLR's forced exploration in SMPyBandits: its own or the paper's",
    )
    ap.add_argument("--speed-horizon", type=int, default=50_000)
    ap.add_argument("--no-speed", action="store_true")
    args = ap.parse_args()
    smpy_runs = {k: int(v) for k, _, v in (p.rpartition(":") for p in args.smpy_runs.split(","))}
    labels = args.policies.split(",") if args.policies else None
    seeds = [int(x) for x in args.smpy_seeds.split(",")] if args.smpy_seeds else None
    cross_check(
        labels,
        args.only.split(","),
        args.runs,
        smpy_runs,
        args.cache,
        args.seed,
        args.smpy_only,
        seeds,
        args.smpy_schedule,
    )
    if not args.no_speed and not args.smpy_only:
        speed(args.speed_horizon)


if __name__ == "__main__":
    main()
