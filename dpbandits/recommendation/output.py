"""Atomic writing of the experiments' CSV, JSON, Markdown and figure files."""

from __future__ import annotations

import csv
import io
import json
import math
import os
import tempfile
from collections.abc import Sequence
from typing import Any

__all__ = ["save_figure", "write_csv", "write_json", "write_text"]


def _temp(directory: str, suffix: str = "") -> tuple[int, str]:
    """A temp file in ``directory`` with the permissions an ordinary new file would get
    (``mkstemp`` makes it owner-only)."""
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=suffix, dir=directory)
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(tmp, 0o666 & ~mask)
    return fd, tmp


def write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` atomically (temp file in the same directory, then replace)."""
    p = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(p))
    fd, tmp = _temp(directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        os.replace(tmp, p)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_csv(path: str | os.PathLike[str], rows: Sequence[dict[str, Any]]) -> None:
    """Rows of dicts as CSV (the union of keys, in first-seen order)."""
    keys: list[str] = []
    for r in rows:
        keys.extend(k for k in r if k not in keys)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=keys, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: _plain(v) for k, v in r.items()})
    write_text(path, buf.getvalue())


def write_json(path: str | os.PathLike[str], obj: Any) -> None:
    write_text(path, json.dumps(_jsonable(obj), indent=2) + "\n")


def _plain(v: Any) -> Any:
    if hasattr(v, "item"):
        v = v.item()
    return v


def _jsonable(obj: Any) -> Any:
    obj = _plain(obj)
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def save_figure(fig: Any, path: str | os.PathLike[str], fmt: str = "png") -> None:
    """``fig.savefig`` to a temp file in the target directory, then replace ``path``."""
    p = os.fspath(path)
    fd, tmp = _temp(os.path.dirname(os.path.abspath(p)), f".{fmt}")
    os.close(fd)
    try:
        fig.savefig(tmp, format=fmt, dpi=130)
        os.replace(tmp, p)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
