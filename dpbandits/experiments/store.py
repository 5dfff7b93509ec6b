"""A content-addressed store of experiment results: one file per sweep cell, found by its key.

The key of a cell is the SHA-256 of its fully resolved config (every ``[experiment]`` key with
its default filled in, the agents, the cell's swept values), its seed and the dpbandits version.
A result is written once, atomically (:meth:`dpbandits.experiments.results.Results.save` writes a
temporary
file and renames it), so after a crash -- even ``kill -9`` -- the store holds only complete
results; re-running a sweep reads them instead of recomputing them. Another version of dpbandits
computes other keys: it never reuses results it might compute differently.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dpbandits.core import checks
from dpbandits.core.files import remove_stale_temporaries
from dpbandits.core.version import __version__
from dpbandits.experiments.config import canonical_json
from dpbandits.experiments.results import Results, ResultsFileError

__all__ = ["Store", "cell_key"]


def cell_key(config: Mapping[str, Any], seed: int, version: str | None = None) -> str:
    """The hex SHA-256 key of a resolved cell config, its seed and the package version."""
    if version is None:
        version = __version__
    blob = canonical_json({"config": config, "seed": int(seed), "dpbandits": version})
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class Store:
    """Results files under ``root``, as ``root/<key[:2]>/<key>.npz``."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    def path(self, key: str) -> Path:
        """Where the result of ``key`` is (or will be) stored."""
        if len(key) < 3 or not all(c in "0123456789abcdef" for c in key):
            raise ValueError(f"a store key is a lower-case hex digest, got {key!r}")
        return self.root / key[:2] / f"{key}.npz"

    def __contains__(self, key: str) -> bool:
        return self.path(key).is_file()

    def get(self, key: str) -> Results | None:
        """The stored result of ``key``, or ``None`` when there is none (or only an unreadable
        file, which is then recomputed and replaced)."""
        p = self.path(key)
        if p.is_dir():
            raise ValueError(f"the store entry {str(p)!r} is a directory, not a results file: "
                             "remove it")  # fmt: skip
        if not p.is_file():
            return None
        try:
            return Results.load(p)
        except ResultsFileError:
            return None

    def put(self, key: str, results: Results) -> Path:
        """Store ``results`` under ``key`` atomically; returns the file's path."""
        return results.save(self.path(key))

    def remove_partial(self, older_than: float = 3600.0) -> list[Path]:
        """Delete temporary files of writes interrupted by a crash (``kill -9`` during a save):
        those whose writer process no longer runs on this machine, and any older than
        ``older_than`` seconds (a younger one of a process still running may belong to a sweep
        running now). See :func:`dpbandits.core.files.is_stale_temporary`."""
        older_than = checks.number(older_than, "older_than")
        if older_than < 0:
            raise ValueError(f"older_than must be >= 0 seconds, got {older_than!r}")
        if not self.root.is_dir():
            return []
        removed: list[Path] = []
        for sub in sorted(p for p in self.root.glob("??") if p.is_dir()):
            removed += remove_stale_temporaries(sub, older_than)
        return removed

    def keys(self) -> list[str]:
        """Keys of every stored result."""
        if not self.root.is_dir():
            return []
        return sorted(p.stem for p in self.root.glob("??/*.npz"))
