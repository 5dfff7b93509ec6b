"""``dpbandits course list | start N DIR | check N FILE.py``: the RL-course exercises.

Six graded exercises from a first bandit to a private agent under shift. ``list`` shows them,
``start N DIR`` copies exercise N's starter file into DIR, ``check N FILE.py`` grades your file:
one line per task (ok / not done yet / what is wrong); exit status 0 only when every task is
ok. See docs/course.md.
"""

from __future__ import annotations

import argparse
import sys

from dpbandits.cli import options

HELP = "RL-course exercises: list them, start one, check your solution"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = options.add_command(subparsers, "course", HELP, __doc__)
    sub = parser.add_subparsers(title="actions", metavar="ACTION")
    p_list = sub.add_parser("list", help="the exercises, their tasks and time")
    p_list.set_defaults(func=run_list)

    p_start = sub.add_parser("start", help="copy exercise N's starter file into DIR")
    p_start.add_argument("exercise", help="exercise number (1-6)")
    p_start.add_argument("directory", help="directory to copy the file into (created if needed)")
    p_start.add_argument(
        "--solution", action="store_true", help="copy the reference solution instead (teachers)"
    )
    p_start.add_argument("--force", action="store_true", help="overwrite an existing file")
    p_start.set_defaults(func=run_start)

    p_check = sub.add_parser("check", help="grade FILE.py against exercise N")
    p_check.add_argument("exercise", help="exercise number (1-6)")
    p_check.add_argument("file", help="your exercise file")
    p_check.add_argument("--seed", type=int, default=0, help="seed of the checker's draws (0)")
    options.add_list_option(p_check, "--task", metavar="NAME", help="check only these tasks")
    p_check.add_argument(
        "--json", dest="json_path", default=None, metavar="PATH", help="also write the results"
    )
    p_check.set_defaults(func=run_check)
    parser.set_defaults(func=lambda args: _help(parser))


def _help(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    sys.stdout.flush()
    raise ValueError("give an ACTION: list, start N DIR or check N FILE.py")


def run_list(args: argparse.Namespace) -> int:
    from dpbandits.course import exercises

    for ex in exercises():
        print(f"{ex.number}. {ex.title}  (~{ex.minutes} min, {ex.filename})")
        for task in ex.tasks:
            print(f"     - {task.name}: {task.title}")
    print("\nStart:  dpbandits course start N DIR      Check:  dpbandits course check N FILE.py")
    return 0


def run_start(args: argparse.Namespace) -> int:
    from dpbandits.course import exercise, start

    ex = exercise(args.exercise)
    path = start(ex.number, args.directory, solution=args.solution, force=args.force)
    what = "solution of exercise" if args.solution else "exercise"
    print(f"wrote {path} ({what} {ex.number}: {ex.title})")
    if not args.solution:
        print(f"check it with:  dpbandits course check {ex.number} {path}")
    return 0


def run_check(args: argparse.Namespace) -> int:
    import os
    from pathlib import Path

    # A student's top-level plt.show() must not open a window and block the checker.
    os.environ["MPLBACKEND"] = "Agg"
    from dpbandits.course import check, exercise

    ex = exercise(args.exercise)
    options.check_writable_file(args.json_path, "--json")
    if args.seed < 0:
        raise ValueError(f"--seed must be >= 0, got {args.seed}")
    tasks = options.split_list(args.tasks, "--task") or None
    if tasks:
        names = [t.name for t in ex.tasks]
        for t in tasks:
            if t not in names:
                raise ValueError(
                    f"exercise {ex.number} has no task {t!r}; its tasks: {', '.join(names)}"
                )
    if not Path(args.file).is_file():
        raise ValueError(f"no such file: {args.file!r}")
    print(f"Exercise {ex.number}: {ex.title}  ({args.file})", flush=True)
    try:
        results = check(ex.number, args.file, seed=args.seed, tasks=tasks)
    except KeyboardInterrupt:
        # A student's endless loop is stopped with Ctrl-C: one line, no traceback.
        print("interrupted (Ctrl-C): no verdict", file=sys.stderr)
        return 130
    for r in results:
        print(r.line(), flush=True)
    n_ok = sum(r.ok for r in results)
    print(f"{n_ok} of {len(results)} tasks ok." + (" Well done!" if n_ok == len(results) else ""))
    if args.json_path is not None:
        from dpbandits.core.files import write_json

        write_json(
            args.json_path,
            {"exercise": ex.number, "file": str(args.file), "seed": args.seed,
             "tasks": [r.to_dict() for r in results]},
        )  # fmt: skip
    return 0 if n_ok == len(results) else 1
