"""``dpbandits cache [info|clear]``: the compiled-kernel cache, shown or emptied.

The library's kernels are compiled by numba at their first use and cached on disk, so that only
the first run on a machine pays the compilation: in ``NUMBA_CACHE_DIR`` when it is set, else in
the platform's per-user cache directory (``~/.cache/dpbandits`` on Linux), one folder per
library version and CPU; never inside the installed package (docs/performance.md).

Examples::

    dpbandits cache              # where the cache is, its size, other versions' folders
    dpbandits cache clear        # empty this version's folder (the next run compiles again)
    dpbandits cache clear --all  # also remove the folders of other versions and CPUs
"""

from __future__ import annotations

import argparse

from dpbandits.cli import options

HELP = "the compiled-kernel cache: where it is and how big (info), or empty it (clear)"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = options.add_command(subparsers, "cache", HELP, __doc__)
    parser.add_argument("action", nargs="?", choices=["info", "clear"], default="info",
                        help="show the cache (the default) or delete it")  # fmt: skip
    parser.add_argument("--all", action="store_true", dest="everything",
                        help="with clear: also the folders of other versions and CPUs")  # fmt: skip
    parser.set_defaults(func=run)


def _mb(n_bytes: int) -> str:
    return f"{n_bytes / 1e6:.1f} MB"


def run(args: argparse.Namespace) -> int:
    from dpbandits.core import kernel_cache

    if args.action == "clear":
        removed = kernel_cache.clear_cache(everything=args.everything)
        info = kernel_cache.cache_info()
        print(f"removed {len(removed)} {'entry' if len(removed) == 1 else 'entries'} from "
              f"the kernel cache ({info.directory}); the next run compiles again")  # fmt: skip
        return 0
    if args.everything:
        raise ValueError("--all: only with 'dpbandits cache clear'")
    info = kernel_cache.cache_info()
    source = "NUMBA_CACHE_DIR" if info.from_env else "per-user cache, this version and CPU"
    print(f"kernel cache: {info.directory}  ({source})")
    print(f"  {info.n_files} files, {_mb(info.n_bytes)}")
    if info.others:
        print(f"other folders under {kernel_cache.user_cache_root()} (other versions or CPUs; "
              "'dpbandits cache clear --all' removes them):")  # fmt: skip
        for path, size in info.others:
            print(f"  {path.name}  {_mb(size)}")
    return 0
