"""Datasets shipped with metaeval, with their provenance.

A registry maps each name to its description, shape, human columns,
provenance line and loader, so :func:`list_datasets`, the error message of
:func:`load_dataset` and the docs all read the same source.
"""

from __future__ import annotations

import functools
import gzip
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from metaeval.errors import DataError

from ._dataset import Dataset
from ._validate import fmt_items

BUNDLED_DIR = Path(__file__).resolve().parent / "bundled"


def read_provenance(folder: Path) -> str:
    """The provenance paragraph of a bundled dataset's ``PROVENANCE.md``.

    Returns the lines between the title and the first ``##`` heading, so
    the Dataset and the shipped file can never disagree.
    """
    lines = (folder / "PROVENANCE.md").read_text(encoding="utf-8").splitlines()
    body = []
    for line in lines[1:]:
        if line.startswith("## "):
            break
        body.append(line)
    return "\n".join(body).strip()


# ---------------------------------------------------------------------- summeval
SUMMEVAL_DIMENSIONS = ("coherence", "consistency", "fluency", "relevance")
SUMMEVAL_EXPERTS = ("expert1", "expert2", "expert3")
SUMMEVAL_RUNS = ("original", "rerun")


def _summeval_texts(
    folder: Path, systems: tuple[str, ...], inputs: tuple[str, ...]
) -> pd.DataFrame:
    """Texts of SummEval, one row per system x document (dataset order).

    Columns ``system``, ``input`` (the ``doc_id``), ``source``,
    ``references`` (a tuple of the 11 references) and ``hypothesis``
    (missing for ``M23_dynamicmix``, which has no released text).
    """
    with gzip.open(folder / "texts.jsonl.gz", "rt", encoding="utf-8") as handle:
        docs = {rec["doc_id"]: rec for rec in map(json.loads, handle)}
    rows = []
    for system in systems:
        for doc_id in inputs:
            doc = docs[doc_id]
            rows.append(
                (
                    system,
                    doc_id,
                    doc["source"],
                    tuple(doc["references"]),
                    doc["hypotheses"].get(system),
                )
            )
    frame = pd.DataFrame.from_records(
        rows, columns=["system", "input", "source", "references", "hypothesis"]
    )
    return frame


def _load_summeval(*, runs: bool = False) -> Dataset:
    folder = BUNDLED_DIR / "summeval"
    scores = pd.read_parquet(folder / "scores.parquet")
    keys = ["system", "doc_id"]
    experts = [f"{e}_{d}" for e in SUMMEVAL_EXPERTS for d in SUMMEVAL_DIMENSIONS]
    metrics = [c for c in scores.columns if c not in set(keys) | set(experts)]
    if runs:
        # Both runs in one long table with a run column; the rerun rows carry no human scores.
        rerun = pd.read_parquet(folder / "scores_rerun.parquet")
        long = pd.concat(
            [scores.assign(run=SUMMEVAL_RUNS[0]), rerun.assign(run=SUMMEVAL_RUNS[1])],
            ignore_index=True,
        )
    else:
        long = scores
    raters = {d: {e: f"{e}_{d}" for e in SUMMEVAL_EXPERTS} for d in SUMMEVAL_DIMENSIONS}
    dataset = Dataset.from_frame(
        long,
        system="system",
        input="doc_id",
        human=[*SUMMEVAL_DIMENSIONS, *experts],
        metrics=metrics,
        run="run" if runs else None,
        raters=raters,
        name="summeval",
        provenance=read_provenance(folder),
    )
    return dataset._attach_texts_loader(
        functools.partial(_summeval_texts, folder, dataset.systems, dataset.inputs)
    )


# ---------------------------------------------------------------------- registry
@dataclass(frozen=True)
class _Bundled:
    description: str
    shape: tuple[int, int]
    human: tuple[str, ...]
    n_metrics: int
    provenance: str
    loader: Callable[..., Dataset]


#: Registry of bundled datasets (name -> metadata and loader).
BUNDLED: dict[str, _Bundled] = {
    "summeval": _Bundled(
        description=(
            "CNN/DailyMail summarization: 17 systems x 100 documents; 3 expert ratings (1-5) "
            "of coherence, consistency, fluency, relevance (averaged, and per expert); 43 "
            "z-standardized metrics (2 runs with runs=True); source, 11 references and outputs as texts"
        ),
        shape=(17, 100),
        human=(
            *SUMMEVAL_DIMENSIONS,
            *(f"{e}_{d}" for e in SUMMEVAL_EXPERTS for d in SUMMEVAL_DIMENSIONS),
        ),
        n_metrics=43,
        provenance=(
            "SummEval (Fabbri et al. 2021, annotations MIT); metric scores from the MetricEval "
            "case study (Xiao et al. 2023); texts from the BARTScore release (Yuan et al. 2021, "
            "Apache-2.0)"
        ),
        loader=_load_summeval,
    ),
}


def list_datasets(*, downloadable: bool = False) -> list[dict]:
    """Describe the bundled datasets (and, with ``downloadable``, the registry's).

    Returns
    -------
    list of dict
        One dict per dataset with keys ``name``, ``description``, ``shape``
        (``(N, M)``), ``human`` (tuple of human column names), ``n_metrics``
        and ``provenance`` (one short line; the full text is
        :attr:`Dataset.provenance`).  Nothing is loaded.  With
        ``downloadable=True`` the records of the downloadable registry
        (:mod:`metaeval.data._registry`: name, task, systems_x_inputs, human,
        raters, texts, license, citation, source, form) follow.

    Examples
    --------
    >>> from metaeval.data import list_datasets
    >>> [d["name"] for d in list_datasets()]
    ['summeval']
    """
    out = [
        {
            "name": name,
            "description": spec.description,
            "shape": spec.shape,
            "human": spec.human,
            "n_metrics": spec.n_metrics,
            "provenance": spec.provenance,
        }
        for name, spec in BUNDLED.items()
    ]
    if downloadable:
        from ._registry import registry_records

        out += registry_records()
    return out


def load_dataset(name: str, *, runs: bool = False, form: str | None = None, cache_dir=None,
                 base_url: str | None = None, quiet: bool = False):
    """Load a bundled dataset, or download (once) and load a registry dataset, by name.

    Parameters
    ----------
    name : str
        One of the names of :func:`list_datasets` (``"summeval"``), or of
        ``list_datasets(downloadable=True)``: those are fetched into the user
        cache (``METAEVAL_DATA``, see :mod:`metaeval.data._download`), each
        file checked against its pinned sha256, converted from the release's
        own layout, and their license and citation printed to stderr (unless
        ``quiet``).  docs/bench.md lists them.
    form : {"dataset", "preferences"}, optional
        Registry datasets only: pairwise releases load as
        :class:`~metaeval.preferences.PreferenceData` by default, or as a 2 x M
        Dataset with ``form="dataset"``.
    cache_dir, base_url : optional
        Registry datasets only: the cache folder (default ``METAEVAL_DATA`` or
        the user cache) and a mirror replacing the URLs' host
        (``METAEVAL_DATA_URL``).
    runs : bool
        Attach the repeated runs of the metrics, where the dataset has them
        (SummEval: the release's ``scores.csv`` as run ``original`` and
        ``scores_rerun.csv`` as run ``rerun``, for test-retest reliability).
        Default False: each metric is its released single run, so
        correlations reproduce published numbers; with ``runs=True``,
        :meth:`Dataset.scores` averages the runs and :meth:`Dataset.ratings`
        gives each.

    Returns
    -------
    Dataset
        With :attr:`Dataset.provenance` set; texts are loaded on first
        access of :attr:`Dataset.texts`.

    Raises
    ------
    DataError
        If ``name`` is not a bundled dataset (the message lists them).

    Examples
    --------
    >>> from metaeval.data import load_dataset
    >>> ds = load_dataset("summeval")
    >>> ds
    Dataset(name='summeval', 17 systems x 100 inputs, 16 human, 43 metrics)
    >>> ds.ratings("coherence").shape, ds.rater_labels("coherence")
    ((3, 17, 100), ('expert1', 'expert2', 'expert3'))
    >>> ds.ratings("BLEU").shape
    (1, 17, 100)
    >>> load_dataset("summeval", runs=True).rater_labels("BLEU")
    ('original', 'rerun')
    """
    spec = BUNDLED.get(name) if isinstance(name, str) else None
    if spec is None:
        from ._registry import REGISTRY, load_registry_dataset

        if isinstance(name, str) and name in REGISTRY:
            return load_registry_dataset(name, form=form, cache_dir=cache_dir, base_url=base_url,
                                         quiet=quiet)
        raise DataError(
            f"unknown dataset {name!r}; bundled datasets: {fmt_items(BUNDLED, limit=50)}; "
            f"downloadable: {fmt_items(REGISTRY, limit=50)} "
            "(see metaeval.data.list_datasets(downloadable=True))"
        )
    return spec.loader(runs=runs)
