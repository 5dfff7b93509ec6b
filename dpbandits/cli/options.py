"""The options every subcommand shares, so that the CLI speaks one dialect (docs/cli.md).

- List-valued options have a singular name, are repeatable, and one occurrence may hold a
  comma-separated list: ``--selector rnm --selector gem`` == ``--selector rnm,gem``.
- ``--out DIR``, ``--format png|svg|pdf``, ``--no-plots``, ``--json PATH``, ``--seed``,
  ``--runs``, ``--jobs``, ``--no-progress``, ``--plugin FILE.py|MODULE``.
- Outputs and plug-ins are checked before any work; an output directory carries the marker file
  ``INCOMPLETE.txt`` until the command has written everything (see :func:`output_directory`);
  :class:`Outputs` writes the files into it.
- Every subcommand's parser comes from :func:`add_command` (its module docstring is the
  description), and :func:`add_common_options` adds the options most commands share.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import re
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpbandits.core import checks
from dpbandits.core.docs import docs_reference, link_docs_paths
from dpbandits.core.files import INCOMPLETE_MARKER, mark_incomplete, remove_stale_temporaries

__all__ = [
    "INCOMPLETE_MARKER",
    "DefaultsHelpFormatter",
    "Outputs",
    "add_bounds_options",
    "add_command",
    "add_common_options",
    "add_epsilon_option",
    "add_json_option",
    "add_list_option",
    "add_list_options",
    "add_output_options",
    "add_plugin_argument",
    "check_at_least_one",
    "check_writable_file",
    "count",
    "output_directory",
    "parse_bounds_epsilons",
    "parse_epsilons",
    "parse_float_grid",
    "parse_ints",
    "notice",
    "progress_printer",
    "slug",
    "split_list",
]


class DefaultsHelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Help that ends each option's text with its default, ``(default: 100)``, unless the text
    already says what the default is (argparse's ``ArgumentDefaultsHelpFormatter`` adds it to
    every option, ``(default: None)`` after a "default: all cores" too), or the option has no
    value to show (``None``, a flag's ``False``, an empty list). The description is shown as
    written."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        if ("default" in text or not action.option_strings or default is None
                or default is argparse.SUPPRESS or isinstance(default, bool)
                or default in ([], ())):  # fmt: skip
            return text
        return f"{text} (default: %(default)s)"


def add_command(
    subparsers: argparse._SubParsersAction,
    name: str,
    help: str,
    doc: str | None,
    *,
    aliases: Sequence[str] = (),
    formatter_class: type[argparse.HelpFormatter] = argparse.RawDescriptionHelpFormatter,
) -> argparse.ArgumentParser:
    """The parser of subcommand ``name``: ``help`` is its line in ``dpbandits --help``, ``doc``
    (the command module's docstring) its description, shown as written except that each
    ``docs/<page>.md`` becomes the page's address and offline command (:func:`link_docs_paths`)."""
    description = None if doc is None else link_docs_paths(doc)
    return subparsers.add_parser(
        name, aliases=list(aliases), help=help, description=description,
        formatter_class=formatter_class,
    )


def add_common_options(
    parser: argparse.ArgumentParser, command: str, *, progress: bool = True, **outputs: bool
) -> None:
    """``--seed`` (default 0), the output options (:func:`add_output_options`, which takes
    ``outputs``, e.g. ``json=True``), ``--no-progress`` (unless ``progress=False``) and
    ``--plugin``."""
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    add_output_options(parser, command, **outputs)
    if progress:
        parser.add_argument(
            "--no-progress", action="store_true", help="no progress output on stderr"
        )
    add_plugin_argument(parser)


def check_at_least_one(args: argparse.Namespace, *dests: str) -> None:
    """Each ``args.<dest>`` that is set must be an int >= 1 (named ``--dest-with-dashes``)."""
    for dest in dests:
        value = getattr(args, dest)
        if value is not None and value < 1:
            raise ValueError(f"--{dest.replace('_', '-')} must be >= 1, got {value}")


def count(text: str) -> int:
    """An argparse ``type`` for sizes: an integer, also written ``2e8`` or ``200_000_000``
    (``2.5`` and ``1e-3`` are refused: not whole numbers)."""
    t = text.strip().replace("_", "")
    try:
        return int(t)
    except ValueError:
        pass
    try:
        value = float(t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if not math.isfinite(value) or value != int(value) or abs(value) > 2**63:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}")
    return int(value)


def positive_count(text: str) -> int:
    """An argparse ``type`` for a count that must be at least 1 (runs, jobs, horizons), checked
    by :func:`dpbandits.core.checks.positive_int` as the engine and the configs check it: the
    same words everywhere (argparse puts the option's name in front)."""
    try:
        return checks.positive_int(count(text), "")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).lstrip()) from None


def add_env_options(parser: argparse.ArgumentParser, env_help: str) -> None:
    """``--env ID`` (``env_help`` says what it is for) and ``--env-arg KEY=VALUE``, the
    environment's arguments (``args.env_args``; read them with ``parse_assignments``)."""
    parser.add_argument("--env", default=None, metavar="ID", help=env_help)
    parser.add_argument("--env-arg", dest="env_args", action="append", default=[],
                        metavar="KEY=VALUE",
                        help="an environment argument (value in TOML syntax: 2, 0.5, "
                        "[0.2, 0.8], true; other text is a string); repeatable, or "
                        "comma-separated")  # fmt: skip


def missing_name(
    args: argparse.Namespace, kinds: str, names: Callable[[], Sequence[str]], message: str
) -> ValueError:
    """A command run without the NAME it needs (``dpbandits audit``): its help and the
    available ``kinds`` (``names()``) are printed, and the ``ValueError`` to raise returned."""
    args.print_help()
    print(f"\n{kinds}: {', '.join(names())}", flush=True)
    return ValueError(message)


def positive_float(text: str) -> float:
    """An argparse ``type`` for an epsilon: a finite number > 0 (argparse names the option)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be finite and > 0, got {text!r}")
    return value


def progress_printer(enabled: bool) -> Callable[[str], None]:
    """``say(message)``: one progress line on stderr, or nothing with ``--no-progress``."""

    def say(message: str) -> None:
        if enabled:
            print(message, file=sys.stderr, flush=True)

    return say


def notice(message: str) -> None:
    """A line the user must see whatever ``--no-progress`` says (what was loaded, a model's
    quality, a choice made for them): on stderr, so that stdout stays the command's output."""
    print(message, file=sys.stderr, flush=True)


def add_list_option(
    parser: argparse.ArgumentParser, name: str, *aliases: str, metavar: str, help: str
) -> None:
    """``--name A [B ...]``, repeatable; values are split on commas later by :func:`split_list`."""
    dest = name.lstrip("-").replace("-", "_") + "s"
    parser.add_argument(
        name, *aliases, dest=dest, action="extend", nargs="+", default=None, metavar=metavar,
        help=help + " (repeatable; commas also separate values)",
    )  # fmt: skip


def add_list_options(
    parser: argparse.ArgumentParser, table: Sequence[tuple[str, str, str]]
) -> None:
    """One :func:`add_list_option` per ``(flag, metavar, help)`` of ``table``, in its order."""
    for name, metavar, text in table:
        add_list_option(parser, name, metavar=metavar, help=text)


def add_output_options(
    parser: argparse.ArgumentParser,
    command: str,
    *,
    plots: bool = True,
    json: bool = False,
) -> None:
    """``--out DIR`` (default ``dpbandits-<command>``); ``--format``, ``--no-plots``, ``--json``."""
    parser.add_argument(
        "--out", default=f"dpbandits-{command}", metavar="DIR",
        help="output directory (default ./%(default)s)",
    )  # fmt: skip
    if plots:
        parser.add_argument(
            "--format", default="png", choices=("png", "svg", "pdf"), help="figure file format"
        )
        parser.add_argument(
            "--no-plots", "--no-figures", dest="no_plots", action="store_true",
            help="write tables only, no figures",
        )  # fmt: skip
    if json:
        add_json_option(parser)


def add_json_option(parser: argparse.ArgumentParser) -> None:
    """``--json PATH`` (``args.json_path``): the summary as JSON too; check the path before any
    work with :func:`check_writable_file`, write it with :meth:`Outputs.json`."""
    parser.add_argument(
        "--json", dest="json_path", default=None, metavar="PATH",
        help="also write the summary as JSON to PATH",
    )  # fmt: skip


def add_plugin_argument(parser: argparse.ArgumentParser) -> None:
    """``--plugin FILE.py|MODULE`` (repeatable): code to import before the command runs, e.g. a
    module that registers a selector (:func:`dpbandits.core.plugins.load_plugins` imports it)."""
    parser.add_argument(
        "--plugin",
        dest="plugins",
        action="append",
        default=[],
        metavar="FILE.py|MODULE",
        help="import a Python file or module first, e.g. one that registers a selector with "
        "dpbandits.selectors.register(name, ...); repeatable",
    )


def split_list(values: list[str] | None, name: str = "a list option") -> list[str] | None:
    """Flatten ``["a,b", "c"]`` into ``["a", "b", "c"]`` (commas inside ``name:k=v,k2=v`` specs
    are kept when the next item contains ``=`` but no ``:``).

    ``None`` (the option was not given) stays ``None``; an option given with nothing in it
    (``--k ""``) is refused, naming the option ``name``, rather than read as "the default".
    """
    if values is None:
        return None
    out: list[str] = []
    for v in values:
        for part in v.split(","):
            part = part.strip()
            if not part:
                continue
            if out and "=" in part and ":" not in part and ":" in out[-1]:
                out[-1] += "," + part  # another keyword of the previous spec
            else:
                out.append(part)
    if not out:
        raise ValueError(f"{name} must not be empty, got {' '.join(map(repr, values))}")
    return out


def parse_ints(values: list[str] | None, name: str, default: Sequence[int]) -> list[int]:
    """The integers of a list option (:func:`split_list`), each >= 1; ``default`` if not given."""
    items = split_list(values, name)
    if items is None:
        return list(default)
    try:
        ints = [int(v) for v in items]
    except ValueError:
        given = " ".join(values or [])
        raise ValueError(f"{name} values must be integers, got {given!r}") from None
    if any(k < 1 for k in ints):
        raise ValueError(f"{name} values must be >= 1, got {ints}")
    return ints


def parse_float_grid(text: str, name: str) -> NDArray[np.float64]:
    """``"0.1,1,3"`` or ``"geom:LO:HI:N"`` / ``"lin:LO:HI:N"`` -> 1-d array (``"paper"`` too)."""
    from dpbandits.scenarios import PAPER_EPSILONS

    t = text.strip().lower()
    if t == "paper":
        return PAPER_EPSILONS.copy()
    m = re.fullmatch(r"(geom|lin):([^:]+):([^:]+):(\d+)", t)
    try:
        if m:
            lo, hi, n = float(m[2]), float(m[3]), int(m[4])
            if n < 1:
                raise ValueError
            return np.geomspace(lo, hi, n) if m[1] == "geom" else np.linspace(lo, hi, n)
        values = [float(v) for v in t.replace(" ", ",").split(",") if v]
    except ValueError:
        raise ValueError(
            f"{name}: expected numbers 'a,b,c', 'geom:LO:HI:N' or 'lin:LO:HI:N', got {text!r}"
        ) from None
    if not values:
        raise ValueError(f"{name} must not be empty")
    return np.asarray(values, dtype=np.float64)


def add_epsilon_option(
    parser: argparse.ArgumentParser, default: str | None, *aliases: str, paper: str, shown: str = ""
) -> None:
    """``--epsilon GRID``: one eps value or a grid (:func:`parse_epsilons`); ``paper`` says
    what ``--epsilon paper`` means, ``shown`` the default when it is not ``default`` itself."""
    parser.add_argument(
        "--epsilon", *aliases, dest="epsilon", default=default, metavar="GRID",
        help=f"eps value or grid: 'a,b,c', 'geom:LO:HI:N', 'lin:LO:HI:N' or 'paper' ({paper}); "
        f"default {shown or default}",
    )  # fmt: skip


def parse_epsilons(
    text: str, name: str = "--epsilon", paper: NDArray[np.float64] | None = None
) -> list[float]:
    """The eps grid of :func:`parse_float_grid` (``paper``: that grid instead of the main
    paper's), every value finite and > 0."""
    if paper is not None and text.strip().lower() == "paper":
        values = np.asarray(paper, dtype=np.float64)
    else:
        values = parse_float_grid(text, name)
    if not all(math.isfinite(v) and v > 0 for v in values):
        raise ValueError(f"{name} values must be finite and > 0, got {text!r}")
    return [float(v) for v in values]


def add_bounds_options(parser: argparse.ArgumentParser) -> None:
    """``--bounds`` (draw the regret lower bounds on the regret figure) and ``--bounds-eps``
    (the eps of the eps-global-DP bounds, :func:`parse_bounds_epsilons`)."""
    parser.add_argument(
        "--bounds", action="store_true",
        help="draw the regret lower bounds on the regret figure: Lai-Robbins and the "
        f"eps-global-DP bounds at --bounds-eps ({docs_reference('private-bandits')})",
    )  # fmt: skip
    parser.add_argument(
        "--bounds-eps", dest="bounds_eps", default="1", metavar="EPS[,EPS...]",
        help="eps of the eps-global-DP lower bounds drawn with --bounds ('inf' allowed; "
        "default %(default)s)",
    )  # fmt: skip


def parse_bounds_epsilons(args: argparse.Namespace) -> list[float]:
    """The eps values of ``--bounds-eps`` (each > 0, ``inf`` allowed), checked before any work;
    ``--bounds`` with ``--no-plots`` is refused (there would be no figure to draw on)."""
    if args.bounds and getattr(args, "no_plots", False):
        raise ValueError("--bounds draws on the regret figure: drop --no-plots")
    values = parse_float_grid(args.bounds_eps, "--bounds-eps")
    if not all(v > 0 for v in values):  # NaN fails too
        raise ValueError(f"--bounds-eps values must be > 0, got {args.bounds_eps!r}")
    return [float(v) for v in values]


def check_writable_file(path: str | None, option: str) -> None:
    """Fail now, not after the run, if ``path`` cannot be written (its directory is created).

    The directory is tested by creating (and removing) a temporary file in it, the way the
    file will be written (:mod:`dpbandits.core.files`): permission bits alone do not tell, e.g. on
    a read-only file system or for the super-user.
    """
    if path is None:
        return
    if not path.strip():
        raise ValueError(f"{option} must not be empty")
    p = Path(path)
    if p.exists() and p.is_dir():
        raise ValueError(f"{option}: {path!r} is a directory, expected a file path")
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"{option}: cannot create the directory of {path!r}: {exc}") from None
    try:
        with tempfile.TemporaryFile(dir=p.parent):
            pass
    except OSError as exc:
        raise ValueError(f"{option}: cannot write in the directory of {path!r}: {exc}") from None


@contextlib.contextmanager
def output_directory(path: str, command: str) -> Iterator[Path]:
    """Create and check ``path`` before any work; mark it incomplete while the block runs.

    The marker :data:`INCOMPLETE_MARKER` is written first and removed only when the block
    finishes without an error, so a directory left by an interrupted or failed command says so
    (the files beside it are partial) and never looks complete. Temporary files that a
    command killed mid-write left in ``path`` are removed
    (:func:`dpbandits.core.files.remove_stale_temporaries`).
    """
    if not path.strip():
        raise ValueError("--out must not be empty")
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out: {path!r} exists and is not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
        marker = mark_incomplete(out, f"'dpbandits {command}'")
    except OSError as exc:
        raise ValueError(f"--out: cannot write to {path!r}: {exc}") from None
    remove_stale_temporaries(out)  # left by a run of a command killed while writing a file
    yield out
    marker.unlink(missing_ok=True)


class Outputs:
    """The files a command writes into its ``--out`` directory, recorded in order.

    ``written`` lists them as ``DIR/name`` (or ``name`` alone with ``relative=True``), for the
    command's closing message. Figures honour ``--no-plots`` and ``--format``, the JSON file
    ``--json``; every file is written atomically (:mod:`dpbandits.core.files`).
    """

    def __init__(self, args: argparse.Namespace, *, relative: bool = False) -> None:
        self.args = args
        self.relative = relative
        self.written: list[str] = []

    def _path(self, name: str) -> str:
        path = os.path.join(self.args.out, name)
        self.written.append(name if self.relative else path)
        return path

    def csv(self, name: str, rows: list[dict[str, Any]]) -> None:
        from dpbandits.core.files import write_csv

        write_csv(self._path(name), rows)

    def text(self, name: str, text: str) -> None:
        from dpbandits.core.files import atomic_write

        atomic_write(self._path(name), text)

    def figure(self, stem: str, plot: Callable[[], Any]) -> None:
        """``stem.<format>`` from ``plot()`` (not even drawn with ``--no-plots``)."""
        if not self.args.no_plots:
            from dpbandits.core.files import save_figure

            save_figure(plot(), self._path(f"{stem}.{self.args.format}"))

    def json(self, payload: Any) -> None:
        """``payload`` to the ``--json`` path, if one was given."""
        if self.args.json_path:
            from dpbandits.core.files import write_json

            write_json(self.args.json_path, payload)
            self.written.append(self.args.json_path)


def slug(name: str) -> str:
    """A file-name friendly version of a scenario or figure name."""
    return re.sub(r"[^A-Za-z0-9.+-]+", "_", name).strip("_")
