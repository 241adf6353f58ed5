"""The registry of rater-agreement coefficients and rating designs.

Kept apart from :mod:`metaeval.reliability` (which imports scipy) so that the
command line can build its ``--agreement`` help and check the option without
importing the statistics; :mod:`metaeval.reliability` re-exports every name.
"""

from __future__ import annotations

#: Intraclass correlations (Shrout and Fleiss 1979; McGraw and Wong 1996).
ICC_FORMS = {
    "icc1": "ICC(1,1): one-way random, single rater",
    "icc2": "ICC(2,1) = ICC(A,1): two-way random, absolute agreement, single rater",
    "icc3": "ICC(3,1) = ICC(C,1): two-way mixed, consistency, single rater",
    "icc1k": "ICC(1,k): one-way random, mean of the k raters",
    "icc2k": "ICC(2,k) = ICC(A,k): two-way random, absolute agreement, mean of the k raters",
    "icc3k": "ICC(3,k) = ICC(C,k): two-way mixed, consistency, mean of the k raters",
}

#: Krippendorff's alpha per difference function (Krippendorff 2011).
KRIPPENDORFF_METRICS = {
    "krippendorff_interval": "delta^2(c, k) = (c - k)^2",
    "krippendorff_ordinal": "delta(c, k) = sum_{g=c..k} n_g - (n_c + n_k) / 2",
    "krippendorff_nominal": "delta^2(c, k) = [c != k]",
    "krippendorff_ratio": "delta^2(c, k) = ((c - k) / (c + k))^2",
}

#: Every method of :func:`agreement`.
AGREEMENT_METHODS = {**KRIPPENDORFF_METRICS, **ICC_FORMS}
DEFAULT_AGREEMENT = (
    "krippendorff_interval",
    "krippendorff_ordinal",
    "icc1",
    "icc2",
    "icc3",
    "icc1k",
    "icc2k",
    "icc3k",
)

#: ICC forms that treat a rater as the same person in every cell (a rater effect,
#: MSC); with rotating raters or rater slots only ICC(1) and ICC(1,k) apply.
SAME_RATER_FORMS = ("icc2", "icc3", "icc2k", "icc3k")

#: Rating designs of :func:`agreement` (its ``raters`` option).
RATER_DESIGNS = {
    "same": "the R raters are the same people in every cell (rotating raters are detected: "
    "no two cells rated by all R)",
    "slots": "rater1..raterK are slots, different people in different cells: one-way forms only",
}
