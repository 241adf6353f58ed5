"""Command line: copy Debian's WordNet 3.0 where NLTK (METEOR) reads it.

Usage::

    apt-get update && apt-get install -y --no-install-recommends wordnet-base wordnet-sense-index
    python -m metaeval.textmetrics.wordnet [FOLDER] [--source /usr/share/wordnet] [--force]
                                           [--if-available]

``FOLDER`` is an NLTK data folder (default: the first folder of
``$NLTK_DATA``, else ``~/nltk_data``); the corpus goes to
``FOLDER/corpora/wordnet``.  ``--if-available`` exits 0 with a note when
Debian's WordNet is not installed (for scripts where METEOR is optional, such
as CI: the METEOR tests then skip).  See :func:`install_wordnet` and
docs/textmetrics.md.  (This module is not imported by the package, so that
``python -m`` runs it cleanly; the functions live in ``_wordnet``.)
"""

from __future__ import annotations

import sys

from ..errors import ParameterError
from ._wordnet import (
    DEBIAN_WORDNET,
    default_nltk_data,
    install_wordnet,
    lexnames_text,
    wordnet_version,
)

__all__ = [
    "DEBIAN_WORDNET",
    "default_nltk_data",
    "install_wordnet",
    "lexnames_text",
    "wordnet_version",
    "main",
]


def main(argv=None) -> int:
    import argparse

    p = argparse.ArgumentParser(
        prog="python -m metaeval.textmetrics.wordnet",
        description="Copy Debian's WordNet 3.0 (apt-get install wordnet-base "
        "wordnet-sense-index) into an NLTK data folder, for METEOR.",
    )
    p.add_argument("target", nargs="?", help="NLTK data folder (default: $NLTK_DATA or ~/nltk_data)")
    p.add_argument("--source", default=str(DEBIAN_WORDNET), help="Debian's WordNet folder")
    p.add_argument("--force", action="store_true", help="copy even if already installed")
    p.add_argument("--if-available", action="store_true",
                   help="exit 0 with a note when the source folder is missing")
    args = p.parse_args(argv)
    from pathlib import Path

    if args.if_available and not (Path(args.source) / "data.noun").is_file():
        print(f"note: no WordNet in {args.source} (apt-get install wordnet-base "
              "wordnet-sense-index); METEOR will not be available", file=sys.stderr)
        return 0
    try:
        dest = install_wordnet(args.target, source=args.source, force=args.force)
    except ParameterError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(dest)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
