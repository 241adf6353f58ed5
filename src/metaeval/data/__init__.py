"""The data model: :class:`Dataset`, readers and bundled datasets.

A :class:`Dataset` holds, for each score column (human dimension or
metric), an array of shape systems x inputs (with a rater or run axis where
there is one), the labels, which columns are human and which are metrics,
optional texts and provenance.  It is validated once, at construction.

Public names
------------
Dataset
    The in-memory form every analysis takes.
read_dataset
    Read a CSV, TSV, JSONL or Parquet file.
load_dataset, list_datasets
    Bundled datasets (``"summeval"``) with provenance.
read_mtme, mtme_info
    mt-metrics-eval's WMT data layout (test set / language pair folders).
PreferenceData, read_preferences
    Pairwise preferences of human raters and judges (the input of :mod:`metaeval.preferences`).
LocalPairs
    Ordered pairs of outputs of one input with their contexts (the input of the local
    analyses, built by :func:`metaeval.local.local_pairs`).
read_summeval
    SummEval's released annotation JSONL (``model_annotations.aligned.jsonl``)
    with expert and crowd raters; ``Dataset.from_hf`` reads a Hugging Face
    ``datasets.Dataset`` split.
read_transcripts, read_kaldi_transcripts, read_kaldi_text
    Speech-recognition transcripts (tables, Kaldi/sclite files), scored with
    WER, MER, WIL, WIP, CER into a metric-only dataset with contexts
    (``read_transcripts`` scores texts, so it lives in :mod:`metaeval.textmetrics`; this
    package names it lazily, the one name it keeps for a higher layer:
    ``tests/test_architecture.py``, ``KEPT_NAMES``).

For the rest of the package
---------------------------
accepts_frames, dataset_from
    Accept a long DataFrame, or a mapping of score arrays, wherever a Dataset is taken.
sysscores
    Given system-level scores (corpus BLEU, ``.sys`` tables) and the ``system_scores``
    option of the analyses.
read_transcript_table, open_text
    The reading half of ``read_transcripts``; a text file opener that reads ``.gz`` too.
READERS, infer_format, read_bytes, decode, read_delimited, read_jsonl
    The table readers by format, and their building blocks (size-capped reads, decoding
    with the file named in errors, delimited and JSONL tables).
select_rows, option_names, column_notes, warn_undeclared, fmt_items
    Row filters (``--where``), the API-to-CLI spelling of layout options, notes on columns
    that look like the other kind, the undeclared-scale warning, and the list of culprits
    in a message.
read_scores_table, SCORES_COLUMNS
    The scores file of ``metaeval bench`` (scores computed elsewhere: dataset, system, input,
    score), read with the table readers above.
read_error_spans, read_rating_spans, SPAN_COLUMNS
    Error-span annotations (mt-metrics-eval's MQM ratings, ``.rating`` files).
HUMAN, MT_BENCH_WINNERS, PREFERENCE_FORMATS, fmt_labels
    The preference readers' names (the human annotator, MT-Bench's verdicts, the formats) and
    their list of culprits in a message.
BUNDLED, SUMMEVAL_DIMENSIONS
    The bundled datasets and SummEval's human dimensions.
REGISTRY, get_entry, fetch, listing, load_registry_dataset, cache_root
    The registry of downloadable datasets (``metaeval datasets``, ``metaeval bench``), loaded
    on first use.
"""

from ._asr import read_kaldi_text, read_kaldi_transcripts
from ._bundled import list_datasets, load_dataset
from ._dataset import Dataset
from ._io import read_dataset
from ._mtme import MtmeInfo, mtme_info, read_mtme
from ._preferences import PreferenceData, read_preferences
from ._localpairs import LocalPairs

# for the rest of the package (see the docstring), not in __all__
from ._bundled import BUNDLED, SUMMEVAL_DIMENSIONS  # noqa: F401
from ._accept import accepts_frames, dataset_from  # noqa: F401
from ._asr import open_text, read_transcript_table  # noqa: F401
from ._columns import column_notes, human_dimensions  # noqa: F401
from ._frames import select_rows  # noqa: F401
from ._io import FORMATS as READERS  # noqa: F401
from ._io import decode, infer_format, read_bytes, read_delimited, read_jsonl  # noqa: F401
from ._mtme import SPAN_COLUMNS, read_error_spans, read_rating_spans  # noqa: F401
from ._preferences import FORMATS as PREFERENCE_FORMATS  # noqa: F401
from ._preferences import HUMAN, MT_BENCH_WINNERS, fmt_labels  # noqa: F401
from ._scale import warn_undeclared  # noqa: F401
from ._scores import SCORES_COLUMNS, read_scores_table  # noqa: F401
from ._validate import fmt_items, option_names  # noqa: F401
from ._readers_ext import read_summeval

__all__ = [
    "Dataset",
    "load_dataset",
    "list_datasets",
    "read_dataset",
    "read_mtme",
    "mtme_info",
    "MtmeInfo",
    "read_transcripts",
    "read_kaldi_transcripts",
    "read_kaldi_text",
    "read_summeval",
    "PreferenceData",
    "read_preferences",
    "LocalPairs",
]


#: The registry's names, imported from data._registry when first asked for.
_REGISTRY_NAMES = ("REGISTRY", "get_entry", "fetch", "listing", "load_registry_dataset")


def __getattr__(name):
    if name in _REGISTRY_NAMES:
        from . import _registry

        return getattr(_registry, name)
    if name == "cache_root":
        from ._download import cache_root

        return cache_root
    # read_transcripts scores texts, so it lives one layer up, in textmetrics; it stays
    # importable here, where docs and users have it (imported when first asked for)
    if name == "read_transcripts":
        from ..textmetrics import read_transcripts

        return read_transcripts
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
