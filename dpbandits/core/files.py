"""Writing files safely: atomic writes, the one CSV and JSON writer, JSON-able copies of values.

Every file the library writes goes through :func:`atomic_write`: the bytes go to a temporary file
in the destination's directory, which is then renamed over the destination (``os.replace`` is
atomic on POSIX and Windows). An interrupted write therefore leaves either the old file or the new
one, never a truncated one. The temporary file is named ``.<name>.<pid>.<random>.tmp`` after the
process that writes it: a process killed mid-write (``kill -9``, a power cut) leaves it behind, and
:func:`remove_stale_temporaries` removes it when the command runs again.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import os
import re
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np

from dpbandits.core.signals import deferred_termination

__all__ = [
    "INCOMPLETE_MARKER",
    "atomic_open",
    "atomic_write",
    "is_stale_temporary",
    "jsonable",
    "mark_incomplete",
    "remove_stale_temporaries",
    "save_figure",
    "strict_json",
    "write_csv",
    "write_json",
]


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "wb") -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path``; on success rename it to ``path``, else delete it.

    ``mode`` is ``"wb"`` or ``"w"`` (text, UTF-8). The parent directory is created if missing.
    """
    if mode not in ("wb", "w"):
        raise ValueError(f"mode must be 'wb' or 'w', got {mode!r}")
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    # a SIGTERM waits for the end of the write (it is raised when the block ends)
    with deferred_termination():
        yield from _atomic_open(p, mode)


def _atomic_open(p: Path, mode: str) -> Iterator[IO[Any]]:
    # the writer's pid in the name tells a stale file (its writer is gone) from a live one
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.{os.getpid()}.", suffix=".tmp", dir=p.parent)
    try:
        # mkstemp makes the file owner-only; give it the permissions a new file gets normally
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)
        f: IO[Any]
        if mode == "wb":
            f = os.fdopen(fd, "wb")
        else:
            f = os.fdopen(fd, "w", encoding="utf-8", newline="")
        with f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, p)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def atomic_write(path: str | os.PathLike[str], data: bytes | str) -> Path:
    """Write ``data`` (bytes, or text as UTF-8) to ``path`` atomically; returns the path."""
    with atomic_open(path, "wb") as f:
        f.write(data.encode("utf-8") if isinstance(data, str) else data)
    return Path(path)


#: The temporary file of :func:`atomic_open`: ``.<name>.<pid>.<8 random characters>.tmp``.
_TEMPORARY = re.compile(r"\.(?P<name>.+)\.(?P<pid>[0-9]+)\.[A-Za-z0-9_]{8}\.tmp")


def _process_runs(pid: int) -> bool:
    """Whether a process with id ``pid`` runs on this machine (one of another user counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):  # another user's, or cannot tell: keep it
        return True
    return True


def is_stale_temporary(path: str | os.PathLike[str], older_than: float | None = None) -> bool:
    """Whether ``path`` is the temporary file of an interrupted atomic write (:func:`atomic_open`):
    a hidden ``.<name>.<pid>.<random>.tmp`` whose writer process no longer runs on this machine,
    or any hidden ``.*.tmp`` (written by an older version, without a pid) last modified more
    than ``older_than`` seconds ago, when ``older_than`` is given."""
    p = Path(path)
    if not (p.name.startswith(".") and p.name.endswith(".tmp")) or not p.is_file():
        return False
    m = _TEMPORARY.fullmatch(p.name)
    if m is not None and int(m["pid"]) != os.getpid() and not _process_runs(int(m["pid"])):
        return True
    if older_than is None:
        return False
    try:
        return time.time() - p.stat().st_mtime > older_than
    except OSError:  # gone meanwhile
        return False


def remove_stale_temporaries(
    directory: str | os.PathLike[str], older_than: float | None = None
) -> list[Path]:
    """Delete the temporary files that interrupted atomic writes left in ``directory`` (not in
    its subdirectories), as :func:`is_stale_temporary` tells them; returns their paths.

    A command killed while writing a file (``kill -9``, a power cut) leaves such a file; a run
    of the same command in the same output directory removes it. The temporary files of writes
    going on now, in this or another process of this machine, are left alone.
    """
    d = Path(directory)
    if not d.is_dir():
        return []
    removed = []
    for p in sorted(d.glob(".*.tmp")):
        if is_stale_temporary(p, older_than):
            try:
                p.unlink()
            except OSError:  # gone already (another run cleaned it)
                continue
            removed.append(p)
    return removed


#: Present in an output directory while a command is writing it (and after an interruption).
INCOMPLETE_MARKER = "INCOMPLETE.txt"


def mark_incomplete(directory: str | os.PathLike[str], what: str) -> Path:
    """Write the marker file :data:`INCOMPLETE_MARKER` into ``directory``; returns its path.

    The writer deletes it once every output is written, so a directory left by an interrupted
    or failed run says so and never looks complete.
    """
    return atomic_write(
        Path(directory) / INCOMPLETE_MARKER,
        f"{what} is writing this directory, or was interrupted or failed while writing it: "
        "the files here are partial. Run it again.\n",
    )


def jsonable(x: Any) -> Any:
    """A JSON round-trippable copy of ``x`` (tuples become lists, unknown objects their repr)."""
    if isinstance(x, Mapping):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return float(x)
    if isinstance(x, np.ndarray):
        return jsonable(x.tolist())
    if x is None or isinstance(x, str):
        return x
    return repr(x)


def strict_json(x: Any) -> Any:
    """``x`` with every non-finite float replaced by ``None`` (strict JSON has no NaN)."""
    if isinstance(x, Mapping):
        return {k: strict_json(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [strict_json(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def write_json(path: str | os.PathLike[str], obj: Any) -> Path:
    """Write ``obj`` as indented strict JSON (NaN and inf become ``null``), atomically."""
    text = json.dumps(strict_json(jsonable(obj)), indent=2, allow_nan=False) + "\n"
    return atomic_write(path, text)


def write_csv(
    path: str | os.PathLike[str],
    rows: Sequence[Mapping[str, Any]],
    columns: Sequence[str] | None = None,
) -> Path:
    """Write ``rows`` (dicts) as CSV with a header, atomically.

    ``columns`` defaults to the keys of all rows in first-seen order; a missing value is an empty
    cell. Floats are written with ``repr`` precision, so values read back are bit-identical.
    """
    if columns is None:
        seen: dict[str, None] = {}
        for r in rows:
            seen.update(dict.fromkeys(r))
        columns = list(seen)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(columns), extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: _cell(v) for k, v in r.items()})
    return atomic_write(path, buf.getvalue())


def _cell(v: Any) -> Any:
    if isinstance(v, (np.floating, float)):
        return repr(float(v))
    if isinstance(v, np.integer):
        return int(v)
    return v


def save_figure(fig: Any, path: str | os.PathLike[str], *, dpi: int = 120) -> Path:
    """Save a matplotlib figure atomically; the format is the file's suffix (png, svg, pdf)."""
    p = Path(path)
    with atomic_open(p, "wb") as f:
        fig.savefig(f, format=p.suffix.lstrip(".") or "png", dpi=dpi)
    return p
