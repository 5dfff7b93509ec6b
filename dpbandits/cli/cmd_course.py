"""``dpbandits course list | start N DIR | check N FILE``: the RL-course exercises.

Six graded exercises from a first bandit to a private agent under shift. ``list`` shows them,
``start N DIR`` writes exercise N into DIR as a Jupyter notebook (``--format py``: the jupytext
script), ``check N FILE`` grades your notebook or script: per task its points, ``ok``, ``not done
yet`` or what is wrong and its likely cause, then the total; ``--hint`` adds a hint per
unfinished task (``--hint 2`` the next one), ``--json PATH`` writes the Gradescope results.json.
Exit status 0 only when every task is ok. See docs/course.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from dpbandits.cli import options

HELP = "RL-course exercises: list them, start one, check your solution"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = options.add_command(subparsers, "course", HELP, __doc__)
    sub = parser.add_subparsers(title="actions", metavar="ACTION")
    p_list = sub.add_parser("list", help="the exercises, their tasks, points and time")
    p_list.set_defaults(func=run_list)

    p_start = sub.add_parser("start", help="write exercise N into DIR (a notebook by default)")
    p_start.add_argument("exercise", help="exercise number (1-6)")
    p_start.add_argument("directory", help="directory to write the file into (created if needed)")
    p_start.add_argument(
        "--format", dest="fmt", choices=("ipynb", "py"), default="ipynb",
        help="ipynb: a Jupyter notebook (default; needs jupytext: pip install jupytext); "
        "py: the jupytext percent script",
    )  # fmt: skip
    p_start.add_argument(
        "--solution", action="store_true",
        help="write the complete reference notebook instead (teachers; needs the solutions)",
    )  # fmt: skip
    p_start.add_argument(
        "--solutions", metavar="DIR", default=None,
        help="the reference solutions' folder (default: the repository's examples/"
        "course-solutions, when run from a clone)",
    )  # fmt: skip
    p_start.add_argument("--force", action="store_true", help="overwrite an existing file")
    p_start.set_defaults(func=run_start)

    p_check = sub.add_parser("check", help="grade FILE (.ipynb or .py) against exercise N")
    p_check.add_argument("exercise", help="exercise number (1-6)")
    p_check.add_argument("file", help="your exercise file, a notebook (.ipynb) or script (.py)")
    p_check.add_argument("--seed", type=int, default=0, help="seed of the checker's draws (0)")
    options.add_list_option(p_check, "--task", metavar="NAME", help="check only these tasks")
    p_check.add_argument(
        "--hint", type=int, nargs="?", const=1, default=0, metavar="K",
        help="add hint K (default 1) to every task that is not ok; each task has a few, from "
        "a nudge to the steps spelled out",
    )  # fmt: skip
    p_check.add_argument(
        "--json", dest="json_path", default=None, metavar="PATH",
        help="also write the results in Gradescope's results.json format",
    )  # fmt: skip
    p_check.set_defaults(func=run_check)
    parser.set_defaults(func=lambda args: _help(parser))


def _help(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    sys.stdout.flush()
    raise ValueError("give an ACTION: list, start N DIR or check N FILE")


def run_list(args: argparse.Namespace) -> int:
    from dpbandits.course import exercises

    for ex in exercises():
        print(f"{ex.number}. {ex.title}  (~{ex.minutes} min, {ex.max_points} points, "
              f"{ex.filename})")  # fmt: skip
        for task in ex.tasks:
            print(f"     - {task.name} ({task.points} points): {task.title}")
    print("\nStart:  dpbandits course start N DIR      Check:  dpbandits course check N FILE")
    return 0


def run_start(args: argparse.Namespace) -> int:
    from dpbandits.course import exercise, start

    ex = exercise(args.exercise)
    try:
        path = start(
            ex.number, args.directory, solution=args.solution, force=args.force, fmt=args.fmt,
            solutions=args.solutions,
        )  # fmt: skip
    except ImportError as exc:  # jupytext missing: say what to install, in one line
        raise ValueError(str(exc)) from None
    what = "solution of exercise" if args.solution else "exercise"
    print(f"wrote {path} ({what} {ex.number}: {ex.title})")
    if not args.solution:
        print(f"check it with:  dpbandits course check {ex.number} {path}")
    return 0


def run_check(args: argparse.Namespace) -> int:
    # A student's top-level plt.show() must not open a window and block the checker; the
    # setting is undone afterwards (``main`` may run in a longer-lived process).
    before = os.environ.get("MPLBACKEND")
    os.environ["MPLBACKEND"] = "Agg"
    try:
        return _run_check(args)
    finally:
        if before is None:
            os.environ.pop("MPLBACKEND", None)
        else:
            os.environ["MPLBACKEND"] = before


def _run_check(args: argparse.Namespace) -> int:
    from dpbandits.core.files import write_json
    from dpbandits.course import check, exercise
    from dpbandits.course.checker import FAILED, TaskResult
    from dpbandits.course.report import gradescope_results, report_lines

    ex = exercise(args.exercise)
    options.check_writable_file(args.json_path, "--json")
    if args.seed < 0:
        raise ValueError(f"--seed must be >= 0, got {args.seed}")
    if args.hint < 0:
        raise ValueError(f"--hint must be >= 1, got {args.hint}")
    tasks = options.split_list(args.tasks, "--task") or None
    for t in tasks or ():
        ex.task(t)  # ValueError naming the exercise's tasks
    if not Path(args.file).is_file():
        if args.json_path is not None:
            # An autograder shows the student why there is no grade.
            missing = [TaskResult(ex.number, t.name, FAILED, f"no such file: {args.file!r}", 0.0,
                                  max_points=t.points) for t in ex.tasks]  # fmt: skip
            write_json(args.json_path, gradescope_results(ex, missing, args.file, 0.0))
        raise ValueError(f"no such file: {args.file!r}")
    print(f"Exercise {ex.number}: {ex.title}  ({args.file})", flush=True)
    started = time.perf_counter()
    try:
        results = check(ex.number, args.file, seed=args.seed, tasks=tasks)
    except KeyboardInterrupt:
        # A student's endless loop is stopped with Ctrl-C: one line, no traceback.
        print("interrupted (Ctrl-C): no verdict", file=sys.stderr)
        return 130
    print("\n".join(report_lines(ex, results, args.hint)), flush=True)
    if args.json_path is not None:
        seconds = time.perf_counter() - started
        write_json(args.json_path, gradescope_results(ex, results, args.file, seconds))
    return 0 if all(r.ok for r in results) else 1
