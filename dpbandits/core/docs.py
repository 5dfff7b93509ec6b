"""Where the documentation lives: the site's address, and the pages shipped with the package.

The pages of the repository's ``docs/`` folder are the source of the documentation site (MkDocs,
``mkdocs.yml``) and ship inside the package as ``dpbandits/pages`` (a link to ``docs/`` in the
repository, copied into the wheel), so that ``dpbandits docs TOPIC`` prints a page without a
network. :data:`DOCS_URL` is the one place that says where the site is: messages and ``--help``
texts point to a page with :func:`docs_reference`, which gives its address and the offline
command, and the site build (``docs/_tools/hooks.py``) takes its ``site_url`` from here.
"""

from __future__ import annotations

import re
from importlib import resources
from importlib.abc import Traversable

__all__ = [
    "DOCS_URL",
    "docs_reference",
    "docs_text",
    "docs_title",
    "docs_topics",
    "docs_url",
    "link_docs_paths",
    "shipped_names",
]

#: The address of the documentation site (ends with ``/``); every page is ``DOCS_URL + NAME.html``
#: (the site is built with ``use_directory_urls: false``, so that it also reads from disk).
DOCS_URL = "https://dpbandits.readthedocs.io/en/latest/"

# A mention of a page as a repository path: ``docs/experiments.md`` (an anchor may follow).
_DOCS_PATH = re.compile(r"\bdocs/([A-Za-z0-9_-]+)\.md(#[A-Za-z0-9_-]+)?")


def _pages() -> Traversable:
    return resources.files("dpbandits") / "pages"


def shipped_names(folder: Traversable, suffix: str, what: str) -> list[str]:
    """The names, without ``suffix``, of the files ending in ``suffix`` in ``folder``, a folder
    shipped with the package (pages, example configs), sorted. ``FileNotFoundError`` naming
    ``what`` when the folder is missing: a broken install says so rather than list nothing."""
    if not folder.is_dir():
        raise FileNotFoundError(f"{what} are missing from this install ({folder})")
    return sorted(p.name[: -len(suffix)] for p in folder.iterdir() if p.name.endswith(suffix))


def docs_topics() -> list[str]:
    """The names of the shipped pages (``docs/<name>.md``), sorted: ``["architecture", ...]``."""
    return shipped_names(_pages(), ".md", "the documentation pages")


def _topic(topic: str) -> str:
    """``topic`` as a page name; accepts ``docs/<name>.md``, ``<name>.md`` and ``_`` for ``-``."""
    if not isinstance(topic, str):
        raise TypeError(f"topic must be a page name (str), got {type(topic).__name__}")
    name = topic.strip().removeprefix("docs/").removesuffix(".md").replace("_", "-").lower()
    topics = docs_topics()
    if name not in topics:
        raise ValueError(f"topic {topic!r} is not a documentation page; the pages: "
                         f"{', '.join(topics)}")  # fmt: skip
    return name


def docs_url(page: str, anchor: str | None = None) -> str:
    """The address of page ``page`` (``"experiments"`` or ``"docs/experiments.md"``) on the
    documentation site, with ``#anchor`` if given. ``ValueError`` for a page that does not exist."""
    name = _topic(page)
    url = DOCS_URL + ("index.html" if name == "index" else f"{name}.html")
    return url if anchor is None else f"{url}#{anchor.removeprefix('#')}"


def docs_text(topic: str) -> str:
    """The markdown text of page ``topic``, as shipped with the package (``dpbandits docs``)."""
    return (_pages() / f"{_topic(topic)}.md").read_text(encoding="utf-8")


def docs_title(topic: str) -> str:
    """The title of page ``topic``: its first ``# `` heading (the page name if it has none)."""
    for line in docs_text(topic).splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return _topic(topic)


def docs_reference(page: str, anchor: str | None = None) -> str:
    """How a message points to a page: its address and the command that prints it offline,
    ``"https://.../experiments.html (offline: dpbandits docs experiments)"``."""
    return f"{docs_url(page, anchor)} (offline: dpbandits docs {_topic(page)})"


def link_docs_paths(text: str) -> str:
    """``text`` with every ``docs/<name>.md`` replaced by :func:`docs_reference` of the page, for
    texts written with repository paths (a command module's docstring shown by ``--help``).
    ``ValueError`` names a path to a page that does not exist, so no text points nowhere."""
    return _DOCS_PATH.sub(
        lambda m: docs_reference(m.group(1), m.group(2)[1:] if m.group(2) else None), text
    )
