"""Install Princeton WordNet 3.0 from Debian's packages where NLTK reads it.

METEOR (:class:`metaeval.textmetrics.METEOR`) matches synonyms through NLTK's
WordNet corpus reader, and no PyPI package ships WordNet.  Debian does:
``wordnet-base`` (the WordNet 3.0 database, the same data as NLTK's
``wordnet`` corpus) and ``wordnet-sense-index`` (``index.sense``).  NLTK
also wants a ``lexnames`` file, which Debian leaves out (its content is the
``lexnames(5WN)`` man page), and refuses symbolic links that leave its data
folder, so the files are copied (35 MB).  Run once, as root for ``apt-get``::

    apt-get update && apt-get install -y --no-install-recommends wordnet-base wordnet-sense-index
    python -m metaeval.textmetrics.wordnet            # into $NLTK_DATA or ~/nltk_data

or, from Python, :func:`install_wordnet`.  Afterwards
``nltk.corpus.wordnet.get_version()`` is ``"3.0"``.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from ..errors import ParameterError

#: Where Debian's ``wordnet-base`` puts the database.
DEBIAN_WORDNET = Path("/usr/share/wordnet")

_FILES = (
    "data.adj", "data.adv", "data.noun", "data.verb",
    "index.adj", "index.adv", "index.noun", "index.verb",
    "adj.exc", "adv.exc", "noun.exc", "verb.exc",
    "cntlist.rev", "index.sense",
)

# The lexicographer files of WordNet 3.0 (lexnames(5WN)): number, name, syntactic category
# (1 noun, 2 verb, 3 adjective, 4 adverb).
_LEXNAMES = (
    "adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute "
    "noun.body noun.cognition noun.communication noun.event noun.feeling noun.food noun.group "
    "noun.location noun.motive noun.object noun.person noun.phenomenon noun.plant "
    "noun.possession noun.process noun.quantity noun.relation noun.shape noun.state "
    "noun.substance noun.time verb.body verb.change verb.cognition verb.communication "
    "verb.competition verb.consumption verb.contact verb.creation verb.emotion verb.motion "
    "verb.perception verb.possession verb.social verb.stative verb.weather adj.ppl"
).split()
_CATEGORY = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}


def lexnames_text() -> str:
    """The 45-line ``lexnames`` file NLTK reads (``"00\\tadj.all\\t3"`` ...)."""
    return "".join(
        f"{i:02d}\t{name}\t{_CATEGORY[name.split('.')[0]]}\n" for i, name in enumerate(_LEXNAMES)
    )


def default_nltk_data() -> Path:
    """The first folder of ``$NLTK_DATA``, else ``~/nltk_data`` (NLTK searches both)."""
    env = os.environ.get("NLTK_DATA", "")
    first = next((p for p in env.split(os.pathsep) if p), None)
    return Path(first).expanduser() if first else Path.home() / "nltk_data"


def install_wordnet(target=None, *, source=DEBIAN_WORDNET, force: bool = False) -> Path:
    """Copy Debian's WordNet 3.0 into an NLTK data folder.

    Parameters
    ----------
    target : str or Path, optional
        An NLTK data folder (a folder searched by ``nltk.data.path``); the
        corpus goes to ``target/corpora/wordnet``.  Default:
        :func:`default_nltk_data`.
    source : str or Path
        Debian's WordNet folder (``/usr/share/wordnet``).
    force : bool
        Copy again even when the corpus folder is complete.

    Returns
    -------
    Path
        The corpus folder (``.../corpora/wordnet``): pass it as
        ``METEOR(wordnet=...)`` or let NLTK find it through its data path.

    Raises
    ------
    ParameterError
        If ``source`` lacks a WordNet file (the message names the Debian
        package to install).
    """
    source = Path(source)
    missing = [f for f in _FILES if not (source / f).is_file()]
    if missing:
        pkg = "wordnet-sense-index" if missing == ["index.sense"] else "wordnet-base wordnet-sense-index"
        raise ParameterError(
            f"no WordNet database in {source} (missing {', '.join(missing)}); install it with "
            f"apt-get install -y --no-install-recommends {pkg}"
        )
    dest = Path(default_nltk_data() if target is None else target).expanduser() / "corpora" / "wordnet"
    if not force and all((dest / f).is_file() for f in (*_FILES, "lexnames")):
        return dest
    dest.mkdir(parents=True, exist_ok=True)
    for f in _FILES:
        shutil.copyfile(source / f, dest / f)  # NLTK rejects links that leave its root
    (dest / "lexnames").write_text(lexnames_text())
    return dest


def wordnet_version(folder) -> str:
    """The WordNet version in ``data.adj``'s license header, without loading the corpus."""
    with open(Path(folder) / "data.adj", encoding="utf8", errors="replace") as f:
        for _, line in zip(range(40), f):
            m = re.search(r"Word[nN]et (\d+|\d+\.\d+) Copyright", line)
            if m:
                return m.group(1)
    return "unknown"
