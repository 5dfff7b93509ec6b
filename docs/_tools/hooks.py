"""MkDocs hooks of the documentation site (``mkdocs.yml``: ``hooks``).

The pages of ``docs/`` are the site's source as they are. These hooks add the generated pages:

- ``getting-started.md`` and ``changelog.md`` (links to the repository's README.md and
  CHANGELOG.md, so that the package ships them too): their ``docs/<page>.md`` links pointed at
  the site's pages;
- ``reference/``: the API reference, one page per room (``reference.py``);
- ``gallery/``: every example script and paper-figure script, run, with its output and figures
  (``gallery.py``);
- ``course/``: the course exercises rendered from their jupytext sources, without solutions
  (``course_pages.py``).

Each ``nav`` entry of ``mkdocs.yml`` that names one of the generated index pages
(``reference/index.md``, ``gallery/index.md``, ``course/index.md``) becomes a section holding
all the pages generated for it, so that a new module, example or exercise appears in the
navigation by itself. The site's address comes from :data:`dpbandits.core.docs.DOCS_URL`.

The math (``pymdownx.arithmatex``) is typeset by MathJax, bundled with the site so that it
renders offline (a site read from disk, or served without a network): the MathJax team's npm
package (:data:`MATHJAX`), fetched once with ``npm pack`` into the user's cache and copied into
``site/javascripts/mathjax/`` (:func:`on_post_build`): the combined TeX/CHTML component, its
fonts and the components it loads on demand (extensions, menu, assistive MathML).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

sys.path.insert(0, str(Path(__file__).resolve().parent))

import course_pages  # noqa: E402 (the folder of this file is on sys.path from here on)
import gallery  # noqa: E402
import reference  # noqa: E402

from dpbandits.core.docs import DOCS_URL  # noqa: E402

ROOT = reference.repository_root()

# A link from a repository file to a page: ``](docs/experiments.md)``, ``](docs/x.md#anchor)``.
_DOCS_LINK = re.compile(r"\]\(docs/")



#: Pages of docs/ that are links to the repository's top-level files (shipped with the package
#: too, so that ``dpbandits docs getting-started`` prints the README): their links into docs/
#: are made site-relative.
FROM_REPOSITORY = {"getting-started.md": "README.md", "changelog.md": "CHANGELOG.md"}


def on_page_markdown(markdown: str, page: Any, config: MkDocsConfig, files: Files) -> str:
    if page.file.src_uri in FROM_REPOSITORY:
        return _DOCS_LINK.sub("](", markdown)
    return markdown


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    if not config.site_url:
        config.site_url = DOCS_URL
    sections: dict[str, list[Any]] = {
        "reference/index.md": reference.nav(),
        "gallery/index.md": gallery.nav(),
        "course/index.md": course_pages.nav(),
    }
    config.nav = _expand(config.nav or [], sections)
    return config


def _expand(nav: list[Any], sections: dict[str, list[Any]]) -> list[Any]:
    """``nav`` with each entry ``{title: index}`` of ``sections`` made a section of its pages."""
    out = []
    for entry in nav:
        if isinstance(entry, dict):
            (title, value), = entry.items()
            if isinstance(value, list):
                out.append({title: _expand(value, sections)})
            elif value in sections:
                out.append({title: sections[value]})
            else:
                out.append(entry)
        else:
            out.append(entry)
    return out


def on_files(files: Files, config: MkDocsConfig) -> Files:
    generated: dict[str, str | bytes] = {}
    generated.update(reference.pages())
    generated.update(course_pages.pages())
    generated.update(gallery.pages())
    for path, content in generated.items():
        files.append(File.generated(config, path, content=content))
    return files


#: The npm package of MathJax bundled with the site (pinned: the site is the same every build).
MATHJAX = "mathjax@3.2.2"
#: What the site needs of it (``es5/``): the combined component the pages load, its fonts, the
#: TeX extensions it autoloads, and the menu and assistive-MathML components it loads on demand.
_MATHJAX_PARTS = ("tex-mml-chtml.js", "output/chtml/fonts/woff-v2", "input", "ui", "a11y")


def mathjax_dir() -> Path:
    """The ``es5/`` folder of :data:`MATHJAX`, fetched by ``npm pack`` into the user's cache
    (``$XDG_CACHE_HOME/dpbandits-docs``) the first time."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    es5 = base / "dpbandits-docs" / MATHJAX / "es5"
    if (es5 / "tex-mml-chtml.js").is_file():
        return es5
    if shutil.which("npm") is None:
        raise RuntimeError(f"the site bundles MathJax from npm ({MATHJAX}): install npm "
                           "(Node.js) to build it")  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["npm", "pack", MATHJAX, "--silent", "--pack-destination", tmp],
                       check=True, stdout=subprocess.DEVNULL)  # fmt: skip
        (tgz,) = Path(tmp).glob("*.tgz")
        with tarfile.open(tgz) as tar:
            members = [m for m in tar.getmembers()
                       if m.name.startswith("package/es5/") and m.isfile()]  # fmt: skip
            safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
            tar.extractall(tmp, members=members, **safe)
        staging = es5.with_name("es5.partial")
        shutil.rmtree(staging, ignore_errors=True)
        shutil.copytree(Path(tmp) / "package" / "es5", staging)
        staging.rename(es5)
    return es5


def on_post_build(config: MkDocsConfig) -> None:
    """Copy MathJax into the site (``javascripts/mathjax/``, loaded by ``mkdocs.yml``)."""
    source = mathjax_dir()
    target = Path(config.site_dir) / "javascripts" / "mathjax"
    for part in _MATHJAX_PARTS:
        if (source / part).is_dir():
            shutil.copytree(source / part, target / part, dirs_exist_ok=True)
        else:
            (target / part).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source / part, target / part)
