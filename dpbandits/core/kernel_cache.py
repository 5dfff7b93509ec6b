"""Where the compiled kernels are cached on disk: a per-user cache directory, never the package.

numba's default for a ``cache=True`` function is a ``__pycache__`` folder next to its source
file. For an installed package that is ``site-packages``, where pip does not know the files:
they survive ``pip uninstall`` and an editable re-install, and the folders left behind then
shadow the real package (``import dpbandits`` finds a namespace package with no
``__version__``). So every kernel of the library (:mod:`dpbandits.core.jit`) is cached here
instead, in this order:

1. ``NUMBA_CACHE_DIR`` when it is set (numba's own setting, which wins, as for every numba
   function);
2. else the platform's per-user cache directory: ``$XDG_CACHE_HOME/dpbandits`` (default
   ``~/.cache/dpbandits``) on Linux and other Unix systems, ``~/Library/Caches/dpbandits`` on
   macOS, ``%LOCALAPPDATA%\\dpbandits\\Cache`` on Windows; inside it one folder per library
   version and CPU (:func:`cache_key`), so that an upgrade or a home directory shared by
   different machines never loads another's machine code.

``dpbandits cache`` shows the folder in use and its size; ``dpbandits cache clear`` empties it
(docs/performance.md, "The kernel cache").
"""

from __future__ import annotations

import functools
import hashlib
import os
import platform
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from dpbandits.core.version import __version__

__all__ = [
    "CacheInfo",
    "cache_info",
    "cache_key",
    "clear_cache",
    "kernel_cache_dir",
    "user_cache_root",
]

#: numba's own setting of its cache directory: when set, it wins (numba reads it at import).
NUMBA_ENV = "NUMBA_CACHE_DIR"
#: The files numba writes for a cached function: its index and one file per compiled signature.
CACHE_SUFFIXES = (".nbi", ".nbc")


def user_cache_root(environ: dict[str, str] | None = None, system: str | None = None) -> Path:
    """The platform's per-user cache directory for dpbandits (module docstring), without the
    version and CPU folder. ``environ`` and ``system`` (``platform.system()``'s answer) default
    to this process's; they are parameters for the tests."""
    env = os.environ if environ is None else environ
    system = platform.system() if system is None else system
    home = Path(env.get("HOME") or env.get("USERPROFILE") or Path.home())
    if system == "Windows":
        base = env.get("LOCALAPPDATA") or str(home / "AppData" / "Local")
        return Path(base) / "dpbandits" / "Cache"
    if system == "Darwin":
        return home / "Library" / "Caches" / "dpbandits"
    xdg = env.get("XDG_CACHE_HOME", "")
    # the XDG specification: a relative value is invalid and must be ignored
    base_dir = Path(xdg) if xdg and os.path.isabs(xdg) else home / ".cache"
    return base_dir / "dpbandits"


@functools.cache
def _cpu() -> str:
    """The CPU's name as LLVM sees it (what numba compiles for) and a hash of its features."""
    from dpbandits.core.numba_compat import host_cpu  # numba's internals live there only

    name, features = os.environ.get("NUMBA_CPU_NAME"), os.environ.get("NUMBA_CPU_FEATURES")
    if not (name and features):
        host_name, host_features = host_cpu()
        name, features = name or host_name, features or host_features
    digest = hashlib.sha256(f"{platform.machine()}|{name}|{features}".encode()).hexdigest()
    return f"{re.sub(r'[^A-Za-z0-9_.-]+', '_', name)}-{digest[:8]}"


def cache_key() -> str:
    """The folder of this library version and CPU inside :func:`user_cache_root`, e.g.
    ``0.2.0-py3.12-skylake-1a2b3c4d`` (Python's version too: numba's cache files are per
    Python version)."""
    python = f"py{sys.version_info[0]}.{sys.version_info[1]}"
    return f"{__version__}-{python}-{_cpu()}"


def kernel_cache_dir() -> Path:
    """The directory the library's kernels are cached in: ``NUMBA_CACHE_DIR`` if set, else
    :func:`user_cache_root` / :func:`cache_key`."""
    user = os.environ.get(NUMBA_ENV, "")
    if user:
        return Path(user).expanduser().resolve()
    return user_cache_root() / cache_key()


@dataclass(frozen=True)
class CacheInfo:
    """What :func:`cache_info` reports."""

    #: The directory in use (:func:`kernel_cache_dir`).
    directory: Path
    #: Whether it comes from ``NUMBA_CACHE_DIR``.
    from_env: bool
    #: numba's cache files (``.nbi``, ``.nbc``) in it, and their total size in bytes.
    n_files: int
    n_bytes: int
    #: The other folders under :func:`user_cache_root` (other versions or CPUs) and their size.
    others: tuple[tuple[Path, int], ...]


def _cache_files(directory: Path) -> list[Path]:
    if not directory.is_dir():
        return []
    return [p for p in directory.rglob("*") if p.suffix in CACHE_SUFFIXES and p.is_file()]


def _size(directory: Path) -> int:
    return sum(p.stat().st_size for p in directory.rglob("*") if p.is_file())


def cache_info() -> CacheInfo:
    """The kernel cache in use: where, how many files and bytes, and what else is stored for
    other library versions or CPUs."""
    directory = kernel_cache_dir()
    files = _cache_files(directory)
    root = user_cache_root()
    others = tuple(
        (p, _size(p))
        for p in (sorted(root.iterdir()) if root.is_dir() else [])
        if p.is_dir() and p.resolve() != directory
    )
    return CacheInfo(directory, bool(os.environ.get(NUMBA_ENV)), len(files),
                     sum(p.stat().st_size for p in files), others)  # fmt: skip


def clear_cache(everything: bool = False) -> list[Path]:
    """Delete the compiled kernels of :func:`kernel_cache_dir` (numba's ``.nbi``/``.nbc``
    files only when it is ``NUMBA_CACHE_DIR``, which may hold other programs' files too; the
    whole folder otherwise); with ``everything``, also every other version's and CPU's folder
    under :func:`user_cache_root`. Returns what was removed. The next run compiles again."""
    removed: list[Path] = []
    info = cache_info()
    if info.from_env:
        for path in _cache_files(info.directory):
            path.unlink(missing_ok=True)
            removed.append(path)
    elif info.directory.is_dir():
        shutil.rmtree(info.directory)
        removed.append(info.directory)
    if everything:
        for path, _ in info.others:
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed
