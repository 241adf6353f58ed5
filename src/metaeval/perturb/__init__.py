"""Text perturbations: named, seeded transforms that degrade one quality.

Each perturbation is registered in :data:`PERTURBATIONS` with the quality it
is meant to lower and where it comes from (``describe()`` gives the table):

=============================  ==============================================
``sentence_reorder``           coherence (Sai et al. 2021; seed paper 001 3.4)
``subject_verb_disagreement``  fluency (Sai et al. 2021; seed paper 001 3.4)
``drop_words``                 adequacy and fluency (seed paper 004 4.2: 20%)
``word_swap``                  fluency (word order)
``negation_removal``           consistency (the meaning is inverted)
``repetition``                 fluency (non-redundancy)
``truncation``                 relevance and coherence (content cut off)
=============================  ==============================================

:func:`perturb` applies one to a list of texts, :func:`perturb_dataset` to a
dataset's hypotheses, and :func:`score_perturbed` scores the originals and
their perturbed versions with text metrics (the pairs of a perturbation
test); a text that cannot be perturbed (one sentence to
reorder, no verb form to change, no negation, ...) is *skipped* with a
reason, never returned unchanged.  Randomness comes from ``rng``: each text
gets a stream derived from the seed, the perturbation and the text's id.
Texts are handled as whitespace tokens with a rule-based sentence splitter
(no model download); see :mod:`metaeval.perturb._text`.
"""

from ._api import MISSING, PerturbationResult, perturb, perturb_dataset
from ._scored import PerturbedScores, score_perturbed
from ._text import ABBREVIATIONS, ROUNDINGS, round_count, sentences
from ._transforms import (
    NEGATION_WORDS,
    NOT_VERBS,
    NUMBER_PAIRS,
    PERTURBATIONS,
    Perturbation,
    Skip,
    describe,
    get_perturbation,
)

__all__ = [
    "perturb",
    "perturb_dataset",
    "PerturbationResult",
    "score_perturbed",
    "PerturbedScores",
    "PERTURBATIONS",
    "Perturbation",
    "Skip",
    "describe",
    "get_perturbation",
    "sentences",
    "round_count",
    "ABBREVIATIONS",
    "NEGATION_WORDS",
    "NOT_VERBS",
    "NUMBER_PAIRS",
    "ROUNDINGS",
    "MISSING",
]
