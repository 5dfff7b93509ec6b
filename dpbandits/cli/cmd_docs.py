"""``dpbandits docs [TOPIC]``: the documentation pages, offline.

Without a topic, lists the pages with their titles. ``dpbandits docs TOPIC`` prints page TOPIC
(its markdown source, as shipped with the package); ``--url`` prints where the page is read as
a web page: in a clone, ``pip install -e ".[docs]" && mkdocs build`` builds the site from the
same pages into ``site/`` (the math rendered offline); it has no published address. A topic is
a page name, e.g. ``experiments``, ``selectors``, ``course``, ``getting-started``,
``changelog`` (``docs/experiments.md`` works too).
"""

from __future__ import annotations

import argparse
import sys

from dpbandits.cli import options
from dpbandits.core import docs

HELP = "the documentation pages, offline: list them, or print one"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = options.add_command(subparsers, "docs", HELP, __doc__)
    parser.add_argument("topic", nargs="?", default=None, metavar="TOPIC",
                        help="the page to print (default: list the pages)")  # fmt: skip
    parser.add_argument("--url", action="store_true",
                        help="print where the page is as a web page (in a site built by mkdocs)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.topic is None:
        topics = docs.docs_topics()
        width = max(len(t) for t in topics)
        for topic in topics:
            print(f"{topic.ljust(width)}  {docs.docs_title(topic)}")
        site = docs.DOCS_URL or "no published address; in a clone: mkdocs build (site/)"
        print(f"\nPrint one:  dpbandits docs TOPIC    The site: {site}")
        return 0
    if args.url:
        print(docs.docs_url(args.topic))
        return 0
    text = docs.docs_text(args.topic)  # ValueError (exit 2) names the pages for a wrong topic
    if docs.DOCS_URL is not None:
        print(f"<!-- {docs.docs_url(args.topic)} -->\n")
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0
