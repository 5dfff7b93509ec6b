"""MkDocs hooks of the documentation site (``mkdocs.yml``: ``hooks``).

The pages of ``docs/`` are the site's source as they are. These hooks add the generated pages:

- ``getting-started.md`` and ``changelog.md``: the repository's README.md and CHANGELOG.md,
  their ``docs/<page>.md`` links pointed at the site's pages;
- ``reference/``: the API reference, one page per room (``reference.py``);
- ``gallery/``: every example script and paper-figure script, run, with its output and figures
  (``gallery.py``);
- ``course/``: the course exercises rendered from their jupytext sources, without solutions
  (``course_pages.py``).

Each ``nav`` entry of ``mkdocs.yml`` that names one of the generated index pages
(``reference/index.md``, ``gallery/index.md``, ``course/index.md``) becomes a section holding
all the pages generated for it, so that a new module, example or exercise appears in the
navigation by itself. The site's address comes from :data:`dpbandits.core.docs.DOCS_URL`.
"""

from __future__ import annotations

import re
import sys
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



def _from_repository(name: str) -> str:
    """A top-level markdown file of the repository, its links into docs/ made site-relative."""
    text = (ROOT / name).read_text(encoding="utf-8")
    return _DOCS_LINK.sub("](", text)


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
    generated: dict[str, str | bytes] = {
        "getting-started.md": _from_repository("README.md"),
        "changelog.md": _from_repository("CHANGELOG.md"),
    }
    generated.update(reference.pages())
    generated.update(course_pages.pages())
    generated.update(gallery.pages())
    for path, content in generated.items():
        files.append(File.generated(config, path, content=content))
    return files
