"""Run one example script for the gallery: ``python run_example.py SCRIPT OUTDIR``.

The script runs as ``__main__`` in the current directory (the gallery gives it a fresh one, so
the files it writes go nowhere). Its standard output is the caller's to capture. Every figure
it saves (any ``Figure.savefig``) or leaves open in pyplot is written to ``OUTDIR/fig<N>.png``,
in the order it was first saved or made.
"""

from __future__ import annotations

import resource
import runpy
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

DPI = 90  # small files; the figures are sized for the page by the scripts themselves


def main(script: str, outdir: str) -> None:
    seen: list[Figure] = []
    savefig = Figure.savefig

    def recording_savefig(self: Figure, *args: object, **kwargs: object) -> None:
        if self not in seen:
            seen.append(self)
        savefig(self, *args, **kwargs)  # type: ignore[arg-type]

    Figure.savefig = recording_savefig  # type: ignore[method-assign]
    sys.argv = [script]
    try:
        runpy.run_path(script, run_name="__main__")
    finally:
        Figure.savefig = savefig  # type: ignore[method-assign]
        sys.stdout.flush()
    seen += [f for f in map(plt.figure, plt.get_fignums()) if f not in seen]
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    for i, fig in enumerate(seen, 1):
        fig.savefig(out / f"fig{i}.png", dpi=DPI, bbox_inches="tight")
    # CPU seconds of the script and of the worker processes it ran: the gallery's cost on an
    # idle machine, whatever else the machine was doing during the build
    cpu = sum(getattr(resource.getrusage(who), f) for who in (resource.RUSAGE_SELF,
              resource.RUSAGE_CHILDREN) for f in ("ru_utime", "ru_stime"))  # fmt: skip
    (out / "cpu_seconds.txt").write_text(f"{cpu:.2f}\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
