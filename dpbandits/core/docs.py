"""Where the documentation lives: the pages shipped with the package, and the site built from them.

The pages of the repository's ``docs/`` folder are the source of the documentation site (MkDocs,
``mkdocs.yml``: ``pip install -e ".[docs]" && mkdocs build`` in a clone writes it to ``site/``,
readable from disk, math included) and ship inside the package as ``dpbandits/pages`` (a link
to ``docs/`` in the repository, copied into the wheel), so that ``dpbandits docs TOPIC`` prints
a page without a network. The README and the changelog are pages too (``getting-started``,
``changelog``). The site has no published address: :data:`DOCS_URL` is ``None``, and messages
and ``--help`` texts point to a page with :func:`docs_reference`, the offline command. Setting
:data:`DOCS_URL` (the one place that says where the site is) makes them name the page's address
too, and the site build (``docs/_tools/hooks.py``) takes its ``site_url`` from it.
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

#: The address of the published documentation site (ends with ``/``; every page is ``DOCS_URL
#: + NAME.html``, the site being built with ``use_directory_urls: false``), or ``None`` while
#: the site is not published (now: build it with mkdocs, or read ``dpbandits docs``).
DOCS_URL: str | None = None

#: Titles of the pages whose first heading is not one (the README's is the project's name).
_TITLES = {"getting-started": "Install and quickstart (the README)"}

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
    """Where page ``page`` (``"experiments"`` or ``"docs/experiments.md"``) is read: its address
    on the published site when there is one (:data:`DOCS_URL`), else its file in a site built
    by ``mkdocs build`` in a clone (``site/experiments.html``); with ``#anchor`` if given.
    ``ValueError`` for a page that does not exist."""
    name = _topic(page)
    file = "index.html" if name == "index" else f"{name}.html"
    url = (DOCS_URL if DOCS_URL is not None else "site/") + file
    return url if anchor is None else f"{url}#{anchor.removeprefix('#')}"


def docs_text(topic: str) -> str:
    """The markdown text of page ``topic``, as shipped with the package (``dpbandits docs``)."""
    return (_pages() / f"{_topic(topic)}.md").read_text(encoding="utf-8")


def docs_title(topic: str) -> str:
    """The title of page ``topic``: its first ``# `` heading (the page name if it has none)."""
    if _topic(topic) in _TITLES:
        return _TITLES[_topic(topic)]
    for line in docs_text(topic).splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return _topic(topic)


def docs_reference(page: str, anchor: str | None = None) -> str:
    """How a message points to a page: the command that prints it offline,
    ``"dpbandits docs experiments"`` (``", section results"`` for an anchor), after its address
    when the site is published (``"https://.../experiments.html (offline: dpbandits docs
    experiments)"``)."""
    name = _topic(page)
    if DOCS_URL is None:
        section = f", section {anchor.removeprefix('#')}" if anchor else ""
        return f"`dpbandits docs {name}`{section}"
    return f"{docs_url(page, anchor)} (offline: dpbandits docs {name})"


def link_docs_paths(text: str) -> str:
    """``text`` with every ``docs/<name>.md`` replaced by :func:`docs_reference` of the page, for
    texts written with repository paths (a command module's docstring shown by ``--help``).
    ``ValueError`` names a path to a page that does not exist, so no text points nowhere."""
    return _DOCS_PATH.sub(
        lambda m: docs_reference(m.group(1), m.group(2)[1:] if m.group(2) else None), text
    )
