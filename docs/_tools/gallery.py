"""The gallery: every example script and every paper-figure script, run when the site is built.

The scripts are ``examples/*.py`` and ``examples/paper/*.py`` (one short script per reproduced
figure of the papers). Each runs in a fresh process and a fresh directory
(``run_example.py``), two at a time; its page shows its docstring, its source, what it printed
and every figure it saved or left open. A script that fails fails the build.

A script that is long at full size reads ``DPBANDITS_EXAMPLES``: the gallery sets it to
``small``, the script then runs at a reduced size, and its page says so. Results are cached in
``build/docs-gallery/`` under a hash of the script and of the library's source, so that
``mkdocs serve`` re-runs only what changed; ``DPBANDITS_GALLERY_CACHE=0`` turns the cache off
(CI starts without one anyway).
"""

from __future__ import annotations

import ast
import concurrent.futures as cf
import functools
import hashlib
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from reference import repository_root

from dpbandits.core.docs import docs_title

log = logging.getLogger("mkdocs.plugins.dpbandits.gallery")

ROOT = repository_root()
SECTIONS = {  # folder -> section title in the gallery's index
    "examples": "Examples",
    "examples/paper": "The papers' figures",
}
SIZE_VARIABLE = "DPBANDITS_EXAMPLES"
WORKERS = 2  # the reference machine's cores
TIMEOUT = 300  # seconds, per script
MAX_OUTPUT_LINES = 150
RUNNER = Path(__file__).resolve().parent / "run_example.py"
CACHE = ROOT / "build" / "docs-gallery"


@dataclass(frozen=True)
class Script:
    path: Path  # absolute

    @property
    def relative(self) -> str:
        return self.path.relative_to(ROOT).as_posix()

    @property
    def stem(self) -> str:
        """Unique within the gallery: ``quickstart``, ``paper_fig09_shift``."""
        parent = self.path.parent.relative_to(ROOT / "examples").as_posix()
        return self.path.stem if parent == "." else f"{parent.replace('/', '_')}_{self.path.stem}"

    @property
    def page(self) -> str:
        return f"gallery/{self.stem}.md"

    @functools.cached_property
    def source(self) -> str:
        return self.path.read_text(encoding="utf-8")

    @functools.cached_property
    def docstring(self) -> str:
        doc = ast.get_docstring(ast.parse(self.source))
        if not doc:
            raise ValueError(f"{self.relative}: a gallery script needs a docstring (its title)")
        return doc

    @property
    def title(self) -> str:
        return self.docstring.splitlines()[0].rstrip(".")

    @property
    def reduced(self) -> bool:
        return SIZE_VARIABLE in self.source


@dataclass(frozen=True)
class Run:
    output: str
    figures: tuple[bytes, ...]
    seconds: float  # wall time
    cpu_seconds: float  # of the script and its worker processes


def scripts() -> dict[str, list[Script]]:
    """The gallery's scripts by section, sorted by file name."""
    return {
        title: [Script(p) for p in sorted((ROOT / folder).glob("*.py"))]
        for folder, title in SECTIONS.items()
    }


def _library_hash() -> str:
    digest = hashlib.sha256()
    for package in ("dpbandits", "agents", "envs"):
        for path in sorted((ROOT / package).rglob("*.py")):
            digest.update(path.read_bytes())
    return digest.hexdigest()


def _key(script: Script, library: str) -> str:
    text = f"{script.relative}\n{script.source}\n{library}"
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def _load(directory: Path) -> Run | None:
    meta = directory / "run.json"
    if not meta.is_file():
        return None
    info = json.loads(meta.read_text())
    figures = tuple((directory / f"fig{i}.png").read_bytes() for i in range(1, info["figures"] + 1))
    output = (directory / "output.txt").read_text(encoding="utf-8")
    return Run(output, figures, info["seconds"], info["cpu_seconds"])


def _run(script: Script, directory: Path) -> Run:
    """Run ``script`` for the gallery; its output and figures go to ``directory``."""
    env = dict(os.environ, MPLBACKEND="Agg", TQDM_DISABLE="1", PYTHONWARNINGS="ignore")
    env[SIZE_VARIABLE] = "small"
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="dpbandits-gallery-") as cwd:
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, str(RUNNER), str(script.path), str(directory)],
            cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False,
        )  # fmt: skip
        seconds = time.perf_counter() - start
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-25:])
        raise RuntimeError(f"gallery: {script.relative} failed (exit {done.returncode}):\n{tail}")
    n_figures = len(list(directory.glob("fig*.png")))
    (directory / "output.txt").write_text(done.stdout, encoding="utf-8")
    cpu = float((directory / "cpu_seconds.txt").read_text())
    info = {"figures": n_figures, "seconds": seconds, "cpu_seconds": cpu}
    (directory / "run.json").write_text(json.dumps(info))
    run = _load(directory)
    assert run is not None
    return run


def run_all() -> dict[Script, Run]:
    """Every script's run, from the cache or fresh (``WORKERS`` at a time)."""
    use_cache = os.environ.get("DPBANDITS_GALLERY_CACHE", "1") != "0"
    library = _library_hash()
    todo, runs = [], {}
    for script in (s for section in scripts().values() for s in section):
        cached = _load(CACHE / _key(script, library)) if use_cache else None
        if cached is None:
            todo.append(script)
        else:
            runs[script] = cached
    start = time.perf_counter()
    with cf.ThreadPoolExecutor(WORKERS) as pool:
        futures = {pool.submit(_run, s, CACHE / _key(s, library)): s for s in todo}
        for future in cf.as_completed(futures):
            runs[futures[future]] = future.result()
    if todo:
        cpu = sum(runs[s].cpu_seconds for s in todo)
        log.info(f"gallery: ran {len(todo)} scripts in {time.perf_counter() - start:.1f} s, "
                 f"{WORKERS} at a time, {cpu:.1f} s of CPU")  # fmt: skip
    return runs


_DOCS_PAGE = re.compile(r"(``)?\bdocs/([A-Za-z0-9_-]+)\.md(#[A-Za-z0-9_-]+)?(``)?")


def _markdown(text: str) -> str:
    """A script docstring as markdown: page paths become links titled by the page."""
    return _DOCS_PAGE.sub(
        lambda m: f"[{docs_title(m.group(2))}](../{m.group(2)}.md{m.group(3) or ''})", text
    )


def _without_docstring(source: str) -> str:
    tree = ast.parse(source)
    first = tree.body[0] if tree.body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
        lines = source.splitlines()
        return "\n".join(lines[first.end_lineno :]).strip("\n")
    return source.strip("\n")


def page(script: Script, run: Run) -> str:
    """The markdown page of one script."""
    rest = script.docstring.split("\n", 1)[1].strip() if "\n" in script.docstring else ""
    out = [f"# {script.title}", ""]
    if rest:
        out += [_markdown(rest), ""]
    if script.reduced:
        out += ['!!! note "Run here at a reduced size"',
                f"    The site ran this script with `{SIZE_VARIABLE}=small`, at the reduced "
                "size the script states; run it as below for the full size.", ""]  # fmt: skip
    out += [f"Run it: `python {script.relative}` (for this page it took {run.seconds:.1f} s, "
            f"{run.cpu_seconds:.1f} s of CPU).", "", "```python",
            _without_docstring(script.source), "```", ""]  # fmt: skip
    lines = run.output.rstrip().splitlines()
    if lines:
        if len(lines) > MAX_OUTPUT_LINES:
            cut = len(lines) - MAX_OUTPUT_LINES
            lines = [*lines[:MAX_OUTPUT_LINES], f"... ({cut} more lines)"]
        out += ["**Output**", "", "```text", *lines, "```", ""]
    for i in range(1, len(run.figures) + 1):
        out += [f"![Figure {i} of {script.relative}](img/{script.stem}_{i}.png)", ""]
    return "\n".join(out)


def pages() -> dict[str, str | bytes]:
    """The gallery's pages and figures: path (relative to the docs folder) -> content."""
    runs = run_all()
    result: dict[str, str | bytes] = {}
    index = ["# Gallery", "",
             "Every example script, and one short script per figure of the papers that the "
             "project reproduces, run when this site was built: the page of each shows its "
             "source, what it printed and its figures. The long ones run at a reduced size "
             "here (their pages say so); each page says how to run it at full size. Where the "
             "results differ from the papers' is on the experiments' pages: "
             "[the bandit under shift](../shift.md), [the scenarios](../scenarios.md), "
             "[top-k](../topk.md) and [recommendation](../recommendation.md).", ""]  # fmt: skip
    total = 0.0
    for section, items in scripts().items():
        index += [f"## {section}", "", "| script | what it shows | figure |", "| --- | --- | --- |"]
        for script in items:
            run = runs[script]
            total += run.seconds
            result[script.page] = page(script, run)
            for i, png in enumerate(run.figures, 1):
                result[f"gallery/img/{script.stem}_{i}.png"] = png
            thumb = (f"![]({'img/' + script.stem}_1.png){{ width=\"180\" }}"
                     if run.figures else "")  # fmt: skip
            index.append(f"| [`{script.path.name}`]({script.stem}.md) | {script.title} | {thumb} |")
        index.append("")
    index.append(f"The scripts' run times add up to {total:.0f} s ({WORKERS} ran at a time).")
    result["gallery/index.md"] = "\n".join(index) + "\n"
    return result


def nav() -> list[dict[str, str | list[dict[str, str]]] | str]:
    """The gallery section of the navigation: the index, then one entry per section."""
    entries: list[dict[str, str | list[dict[str, str]]] | str] = ["gallery/index.md"]
    for section, items in scripts().items():
        entries.append({section: [{s.title: s.page} for s in items]})
    return entries
