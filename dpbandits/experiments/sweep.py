"""Parameter sweeps: every cell of an experiment's grid, run once, stored, resumable.

A *cell* is one point of the grid of an :class:`~dpbandits.experiments.config.Experiment`'s
``[sweep]``
table: all its agents and runs. :func:`sweep` runs every cell that the store under ``out`` does
not hold yet, each as one task (on a local process pool, a Dask cluster or in this process), and
writes

- ``out/store/<key[:2]>/<key>.npz`` -- each cell's :class:`~dpbandits.experiments.results.Results`,
  written
  atomically as soon as the cell finishes (:mod:`dpbandits.experiments.store`);
- ``out/summary.csv`` -- one row per (cell, agent): the swept values (one column per key path),
  ``agent``, ``n_runs``, ``regret_mean``, ``regret_sd``, ``regret_se``, ``regret_segment_<j>``
  (regret in each segment between the environment's change points) and ``result`` (the cell's
  file, relative to ``out``);
- ``out/cells.csv`` -- one row per cell: index, swept values, seed, key, status, result file,
  curves figure;
- ``out/sweep.toml`` -- the config that was run; ``out/failed_cells.txt`` when cells failed;
- ``out/INCOMPLETE.txt`` -- while the sweep runs, and after an interruption (the other files are
  then partial; re-running resumes from the store);
- ``out/plots/`` -- final regret against each swept numeric key (``regret_vs_<key>``), regret
  curves of every cell (``curves/<key[:16]>``, kept across re-runs).

Seeds: a cell's seed is derived from the root seed and the cell's swept values
(:func:`dpbandits.experiments.config.cell_seed`), and each cell runs the engine with that seed,
whose results
do not depend on the number of workers. So the numbers are the same on every scheduler, and a
sweep killed part-way and re-run gives files identical to an uninterrupted one.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpbandits.core import checks
from dpbandits.core.extras import install_hint
from dpbandits.core.files import (
    atomic_write,
    mark_incomplete,
    remove_stale_temporaries,
    write_csv,
)
from dpbandits.core.plugins import load_plugins
from dpbandits.core.signals import handle_termination
from dpbandits.experiments.config import Cell, Experiment
from dpbandits.experiments.parallel import exit_with_parent, run_tasks
from dpbandits.experiments.store import Store, cell_key

if TYPE_CHECKING:
    from dpbandits.experiments.results import Results

__all__ = ["SweepResult", "check_scheduler", "summary_rows", "sweep"]

SCHEDULERS = ("processes", "local", "serial", "tcp://HOST:PORT")
DASK_HINT = install_hint("dask")

_loaded_plugins: set[str] = set()  # per process: a plug-in registers its names once


def _ensure_plugins(items: Sequence[str]) -> None:
    """Import each plug-in once per process (in workers too: a Dask worker starts empty)."""
    todo = [p for p in items if p not in _loaded_plugins]
    if todo:
        load_plugins(todo)
        _loaded_plugins.update(todo)


def mark_plugins_loaded(items: Sequence[str]) -> None:
    """Record plug-ins this process has already imported (the CLI loads them first)."""
    _loaded_plugins.update(items)


# ----------------------------------------------------------------------------------------------
# One cell
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CellTask:
    """What a worker needs to run one cell: plain data (picklable, sent to any worker)."""

    index: int
    params: dict[str, Any]
    config: dict[str, Any]
    seed: int
    key: str
    plugins: tuple[str, ...] = ()


def run_cell(task: CellTask) -> dict[str, Any]:
    """Run one cell; never raises: ``{"ok": True, "results": ...}`` or ``{"ok": False,
    "error": one line, "traceback": text}`` so that a failing cell does not stop the others."""
    exit_with_parent()  # Dask workers too: a killed sweep leaves no process behind
    try:
        _ensure_plugins(task.plugins)
        exp = Experiment.from_dict(task.config, check=False)
        results = exp.run(seed=task.seed, n_jobs=1, progress=False)
        results.config["cell"] = {"index": task.index, "params": task.params, "key": task.key}
        return {"ok": True, "results": results, "pid": os.getpid()}
    except Exception as exc:  # noqa: BLE001 (reported with the cell's parameters)
        return {
            "ok": False,
            "error": f"{type(exc).__name__}: {exc}",
            "traceback": traceback.format_exc(),
        }


# ----------------------------------------------------------------------------------------------
# Schedulers
# ----------------------------------------------------------------------------------------------
def _has_dask() -> bool:
    try:
        import distributed  # noqa: F401
    except ImportError:
        return False
    return True


def check_scheduler(scheduler: str | None) -> str:
    """The scheduler's name, checked (``None``: ``local`` with Dask installed, else
    ``processes``)."""
    if scheduler is None:
        return "local" if _has_dask() else "processes"
    if not isinstance(scheduler, str):
        raise TypeError(f"scheduler must be a str, got {type(scheduler).__name__}")
    if scheduler in ("processes", "serial"):
        return scheduler
    if scheduler == "local" or scheduler.startswith("tcp://"):
        if scheduler.startswith("tcp://") and ":" not in scheduler[len("tcp://") :]:
            raise ValueError(f"scheduler: expected tcp://HOST:PORT, got {scheduler!r}")
        if not _has_dask():
            raise ImportError(
                f"scheduler {scheduler!r} needs Dask (dask.distributed): {DASK_HINT}, or use "
                "--scheduler processes"
            )
        return scheduler
    raise ValueError(
        f"scheduler must be one of {', '.join(SCHEDULERS)}, got {scheduler!r}"
    )


@contextlib.contextmanager
def _executor(scheduler: str, n_jobs: int) -> Iterator[Any]:
    """The executor of a Dask scheduler (``None`` for processes/serial), closed on exit."""
    if scheduler in ("processes", "serial"):
        yield None
        return
    import distributed

    cluster = None
    try:
        if scheduler == "local":
            cluster = distributed.LocalCluster(
                n_workers=n_jobs, threads_per_worker=1, processes=True,
                dashboard_address=":0", silence_logs=logging.ERROR,
            )  # fmt: skip
            client = distributed.Client(cluster)
        else:
            try:
                client = distributed.Client(scheduler, timeout="10s")
            except (OSError, TimeoutError) as exc:
                raise ValueError(f"scheduler: cannot connect to {scheduler} ({exc})") from None
        try:
            yield client.get_executor()
        finally:
            client.close()
    finally:
        if cluster is not None:
            cluster.close()


# ----------------------------------------------------------------------------------------------
# Summary rows
# ----------------------------------------------------------------------------------------------
def summary_rows(
    results: Results, params: dict[str, Any], result_path: str | None = None
) -> list[dict[str, Any]]:
    """The ``summary.csv`` rows of one cell: swept values, agent, n_runs, regret mean/SD/SE and
    per-segment regret (and the result file when given)."""
    rows = []
    for r in results.summary():
        row: dict[str, Any] = dict(params)
        row.update({k: r[k] for k in ("agent", "n_runs", "regret_mean", "regret_sd", "regret_se")})
        row.update({k: v for k, v in r.items() if k.startswith("regret_segment_")})
        if result_path is not None:
            row["result"] = result_path
        rows.append(row)
    return rows


def _columns(keys: list[str], rows: list[dict[str, Any]]) -> list[str]:
    n_seg = 0
    for r in rows:
        while f"regret_segment_{n_seg}" in r:
            n_seg += 1
    return (
        keys
        + ["agent", "n_runs", "regret_mean", "regret_sd", "regret_se"]
        + [f"regret_segment_{j}" for j in range(n_seg)]
        + ["result"]
    )


def _describe(params: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in params.items()) or "(no swept values)"


# ----------------------------------------------------------------------------------------------
# The sweep
# ----------------------------------------------------------------------------------------------
@dataclass
class SweepResult:
    """What :func:`sweep` did: cells computed, reused from the store and failed, files written."""

    out: Path
    cells: list[Cell]
    keys: list[str]
    computed: list[int] = field(default_factory=list)
    reused: list[int] = field(default_factory=list)
    failed: dict[int, str] = field(default_factory=dict)
    rows: list[dict[str, Any]] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    wall_seconds: float = 0.0
    scheduler: str = ""

    @property
    def ok(self) -> bool:
        return not self.failed

    def result_path(self, index: int) -> Path:
        """The results file of cell ``index`` (load it with ``Results.load``)."""
        return Store(self.out / "store").path(self.keys[index])


def sweep(
    experiment: Experiment,
    out: str | os.PathLike[str],
    *,
    scheduler: str | None = None,
    n_jobs: int | None = None,
    progress: bool = True,
    plots: bool = True,
    fmt: str = "png",
    plugins: Sequence[str] = (),
    log: Callable[[str], None] | None = None,
) -> SweepResult:
    """Run every cell of ``experiment``'s grid not yet in ``out``'s store; write the outputs.

    ``scheduler``: ``"processes"`` (a local process pool of ``n_jobs`` workers, default
    ``os.cpu_count()``), ``"local"`` (a ``dask.distributed.LocalCluster`` of ``n_jobs``
    single-threaded workers), ``"tcp://HOST:PORT"`` (an existing Dask scheduler) or
    ``"serial"`` (this process). ``None``: ``"local"`` when Dask is installed, else
    ``"processes"``. The numbers do not depend on it.

    A cell that raises is reported (``log``, with its swept values) and the others continue;
    ``SweepResult.failed`` lists the failures. ``plugins`` (files or modules) are imported in
    every worker before its first cell.

    The steps: :func:`_check_arguments`, :func:`_prepare_output` (the directory, marked
    incomplete until the end), :func:`_plan_cells` (stored cells reused, the others to run),
    :func:`_run_cells`, :func:`_write_tables` (``summary.csv``, ``cells.csv``, the failures)
    and the figures.
    """
    scheduler, n_jobs, out = _check_arguments(experiment, out, scheduler, n_jobs, fmt)
    if log is None:
        def log(msg: str) -> None:
            print(msg, file=sys.stderr)

    plugin_paths = tuple(
        str(Path(p).resolve()) if p.endswith(".py") or Path(p).exists() else p for p in plugins
    )
    cells = experiment.cells()
    store = Store(out / "store")
    keys = [cell_key(_identity(c.experiment), c.seed) for c in cells]
    res = SweepResult(out=out, cells=cells, keys=keys, scheduler=scheduler)
    marker = _prepare_output(out, experiment, store)
    rows_by_cell, todo = _plan_cells(res, store, plugin_paths)
    failures = _run_cells(res, todo, store, rows_by_cell, scheduler, n_jobs, progress, log)
    for i in sorted(rows_by_cell):
        res.rows.extend(rows_by_cell[i])
    _write_tables(res, list(experiment.sweep), store, failures, plots, fmt)
    if plots and res.rows:
        # matplotlib's import (~0.3 s) only when figures are written
        from dpbandits.experiments.sweep_plots import write_sweep_plots

        res.files += write_sweep_plots(res, fmt)
    marker.unlink(missing_ok=True)
    return res


def _check_arguments(
    experiment: Any, out: Any, scheduler: Any, n_jobs: Any, fmt: Any
) -> tuple[str, int, Path]:
    """:func:`sweep`'s arguments, checked before any work: the scheduler, the number of
    workers (default: the cores) and the output directory."""
    if not isinstance(experiment, Experiment):
        raise TypeError(f"experiment must be an Experiment, got {type(experiment).__name__}")
    scheduler = check_scheduler(scheduler)
    n_jobs = (os.cpu_count() or 1) if n_jobs is None else checks.positive_int(n_jobs, "n_jobs")
    if fmt not in ("png", "svg", "pdf"):
        raise ValueError(f"fmt must be png, svg or pdf, got {fmt!r}")
    if not str(out).strip():
        raise ValueError("out must not be empty")
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"out: {str(out)!r} exists and is not a directory")
    return scheduler, n_jobs, out


def _prepare_output(out: Path, experiment: Experiment, store: Store) -> Path:
    """Create ``out``, mark it incomplete (the marker, returned, is removed only once every
    output is written: an interrupted sweep never looks complete), write ``sweep.toml``, and
    remove what a killed run left half-written."""
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"out: cannot create the directory {str(out)!r} ({exc})") from None
    marker = mark_incomplete(out, "'dpbandits sweep'")
    atomic_write(out / "sweep.toml", experiment.to_toml())
    # what a killed run left half-written: in the store, and beside the tables and the plots
    store.remove_partial()
    for directory in (out, out / "plots", out / "plots" / "curves"):
        remove_stale_temporaries(directory)
    return marker


def _plan_cells(
    res: SweepResult, store: Store, plugin_paths: tuple[str, ...]
) -> tuple[dict[int, list[dict[str, Any]]], list[CellTask]]:
    """The summary rows of the cells already in the store (reused, listed in ``res.reused``)
    and the tasks of the others."""
    rows_by_cell: dict[int, list[dict[str, Any]]] = {}
    todo: list[CellTask] = []
    for cell, key in zip(res.cells, res.keys, strict=True):
        stored = store.get(key)
        if stored is not None and _is_result_of(stored, cell):
            res.reused.append(cell.index)
            rows_by_cell[cell.index] = summary_rows(stored, cell.params, _rel(store, key, res.out))
        else:
            todo.append(CellTask(cell.index, cell.params, cell.experiment.to_dict(), cell.seed,
                                 key, plugin_paths))  # fmt: skip
    return rows_by_cell, todo


def _run_cells(
    res: SweepResult,
    todo: list[CellTask],
    store: Store,
    rows_by_cell: dict[int, list[dict[str, Any]]],
    scheduler: str,
    n_jobs: int,
    progress: bool,
    log: Callable[[str], None],
) -> dict[int, str]:
    """Run ``todo`` on the scheduler; store each result as it arrives and add its summary rows
    to ``rows_by_cell``; report a failed cell and go on. Returns the failures' tracebacks."""
    bar = None
    if progress and todo:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(res.cells), initial=len(res.reused), unit="cell",
                   desc="dpbandits sweep")  # fmt: skip

    def done(j: int, outcome: dict[str, Any]) -> None:
        task = todo[j]
        if outcome["ok"]:
            store.put(task.key, outcome["results"])
            res.computed.append(task.index)
            rows_by_cell[task.index] = summary_rows(
                outcome["results"], task.params, _rel(store, task.key, res.out)
            )
        else:
            res.failed[task.index] = outcome["error"]
            failures[task.index] = outcome["traceback"]
            msg = f"cell {task.index} failed ({_describe(task.params)}): {outcome['error']}"
            if bar is not None:
                bar.write(msg, file=sys.stderr)
            else:
                log(msg)
        if bar is not None:
            bar.update(1)

    failures: dict[int, str] = {}
    t0 = time.perf_counter()
    try:
        if todo:
            workers = 1 if scheduler == "serial" else min(n_jobs, len(todo))
            with handle_termination(), _executor(scheduler, workers) as executor:
                if scheduler == "serial":
                    _ensure_plugins(todo[0].plugins)  # every task carries the same
                run_tasks(run_cell, todo, n_jobs=workers, executor=executor, on_done=done,
                          serial_progress=False)  # fmt: skip
    finally:
        if bar is not None:
            bar.close()
    res.wall_seconds = time.perf_counter() - t0
    return failures


def _write_tables(
    res: SweepResult,
    swept: list[str],
    store: Store,
    failures: dict[int, str],
    plots: bool,
    fmt: str,
) -> None:
    """``summary.csv`` (the rows of every cell), ``cells.csv`` (each cell's values, seed, key,
    status and files) and ``failed_cells.txt`` (the failures' tracebacks; removed when none)."""
    out, cells, keys = res.out, res.cells, res.keys
    res.files.append(write_csv(out / "summary.csv", res.rows, _columns(swept, res.rows)))
    status = {i: "computed" for i in res.computed} | {i: "reused" for i in res.reused}
    status |= {i: "failed" for i in res.failed}
    cell_rows = [
        {**c.params, "cell": c.index, "seed": c.seed, "key": k, "status": status[c.index],
         "result": _rel(store, k, out) if status[c.index] != "failed" else "",
         "curves": f"plots/curves/{k[:16]}.{fmt}" if plots and status[c.index] != "failed"
         else ""}
        for c, k in zip(cells, keys, strict=True)
    ]  # fmt: skip
    res.files.append(
        write_csv(out / "cells.csv", cell_rows,
                  ["cell", *swept, "seed", "key", "status", "result", "curves"])  # fmt: skip
    )
    failed_file = out / "failed_cells.txt"
    if res.failed:
        text = "\n".join(
            f"cell {i} ({_describe(cells[i].params)}):\n{failures[i]}" for i in sorted(failures)
        )
        res.files.append(atomic_write(failed_file, text))
    elif failed_file.exists():
        failed_file.unlink()


def _is_result_of(stored: Results, cell: Cell) -> bool:
    """Whether a stored result was computed for ``cell`` (same seed, runs and agents): a file
    copied or renamed into the store under another cell's key is recomputed, not reused."""
    cfg = stored.config
    return (
        cfg.get("seed") == cell.seed
        and cfg.get("n_runs") == cell.experiment.n_runs
        and list(stored.labels) == list(cell.experiment.agents)
    )


def _identity(exp: Experiment) -> dict[str, Any]:
    """What a cell's result depends on: its config without the free-text keys."""
    cfg = exp.to_dict()
    for key in ("name", "description"):
        cfg["experiment"].pop(key, None)
    return cfg


def _rel(store: Store, key: str, out: Path) -> str:
    return store.path(key).relative_to(out).as_posix()
