"""Writing files safely: atomic writes, the one CSV and JSON writer, JSON-able copies of values.

Every file the library writes goes through :func:`atomic_write`: the bytes go to a temporary file
in the destination's directory, which is then renamed over the destination (``os.replace`` is
atomic on POSIX and Windows). An interrupted write therefore leaves either the old file or the new
one, never a truncated one.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import os
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np

__all__ = [
    "INCOMPLETE_MARKER",
    "atomic_open",
    "atomic_write",
    "jsonable",
    "mark_incomplete",
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
    from dpbandits.experiments.parallel import deferred_termination

    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    # a SIGTERM waits for the end of the write (it is raised when the block ends)
    with deferred_termination():
        yield from _atomic_open(p, mode)


def _atomic_open(p: Path, mode: str) -> Iterator[IO[Any]]:
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
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
