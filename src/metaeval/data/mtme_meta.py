"""What mt-metrics-eval keeps about its test sets outside the data folders.

mt-metrics-eval (github.com/google-research/mt-metrics-eval) ``meta_info.py`` names, per test set
and language pair, the *outlier systems* that its task sets leave out unless asked
(``tasks.Task(use_outliers=False)``, ``data.GetCorrelations(include_outliers=...)``, which
removes them from the systems before any correlation), the standard reference and the standard
human score per level (:data:`STD_REF`, :data:`WMT20_STD_GOLD`).  Those facts are not in the
downloaded folders, so they are listed here, as of commit 68a481aea1a787392d55af8f76ac8ef40c5f4664 (``meta_info.DATA``).
"""

from __future__ import annotations

#: ``meta_info.DATA[testset][lp].outlier_systems`` (the non-empty ones), commit 68a481a.
OUTLIER_SYSTEMS: dict[str, dict[str, frozenset]] = {
    "wmt24": {lp: frozenset({"MSLC"}) for lp in ("en-de", "en-es", "ja-zh")},
    "wmt23": {lp: frozenset({"synthetic_ref"}) for lp in ("en-de", "zh-en")},
    "wmt22": {"en-de": frozenset({"M2M100_1.2B-B4"})},
    "wmt20": {
        "cs-en": frozenset({"CUNI-DocTransformer.1457", "zlabs-nlp.1149"}),
        "de-en": frozenset({"WMTBiomedBaseline.387", "yolo.1052", "zlabs-nlp.1153"}),
        "en-cs": frozenset({"Online-G.1555", "zlabs-nlp.1151"}),
        "en-de": frozenset({"Online-G.1556", "WMTBiomedBaseline.388", "zlabs-nlp.179"}),
        "en-iu": frozenset({"OPPO.722", "UEDIN.1281", "UQAM_TanLe.521"}),
        "en-ja": frozenset({"Online-G.1557", "SJTU-NICT.370"}),
        "en-pl": frozenset({"Online-A.1576", "Online-Z.1634", "zlabs-nlp.180"}),
        "en-ta": frozenset({"Online-G.1561", "SJTU-NICT.386", "TALP_UPC.1049"}),
        "iu-en": frozenset({"Facebook_AI.729", "NiuTrans.1206"}),
        "ja-en": frozenset({"Online-G.1564", "Online-Z.1640", "zlabs-nlp.66"}),
        "pl-en": frozenset({"zlabs-nlp.1162"}),
        "ru-en": frozenset({"zlabs-nlp.1164"}),
        "ta-en": frozenset({"Online-G.1568", "TALP_UPC.192"}),
        "zh-en": frozenset({"WMTBiomedBaseline.183"}),
    },
}

#: WMT20's language pairs and standards (``meta_info.WMT20``: reference ``ref``; human scores
#: ``wmt-z`` at system level, ``wmt-raw`` at document and segment level), commit 68a481a.
WMT20_LPS = ("cs-en", "de-en", "en-cs", "en-de", "en-iu", "en-ja", "en-pl", "en-ru", "en-ta",
             "en-zh", "iu-en", "ja-en", "km-en", "pl-en", "ps-en", "ru-en", "ta-en", "zh-en")
WMT20_STD_REF = "ref"
WMT20_STD_GOLD = {"sys": "wmt-z", "doc": "wmt-raw", "seg": "wmt-raw"}

#: ``meta_info.DATA[testset][lp].std_ref`` for the test sets of metaeval's WMT presets (wmt20,
#: wmt23, wmt24), commit 68a481a: the reference mt-metrics-eval's tasks use by default
#: (``tasks.Task._StdRefs``), so metrics using another reference are left out and that other
#: reference's human translation can be a system.
STD_REF: dict[str, dict[str, str]] = {
    "wmt20": dict.fromkeys(WMT20_LPS, WMT20_STD_REF),
    "wmt23": {**dict.fromkeys(("cs-uk", "de-en", "en-cs", "en-de", "en-ja", "en-ru", "en-uk", "en-zh",
                               "ja-en", "ru-en", "uk-en", "zh-en"), "refA"),
              "en-he": "refB", "he-en": "refB"},
    "wmt24": {**dict.fromkeys(("cs-uk", "en-cs", "en-es", "en-hi", "en-is", "en-ja", "en-ru", "en-uk",
                               "en-zh", "ja-zh"), "refA"),
              "en-de": "refB"},
}


def std_ref(testset: str, lp: str) -> str | None:
    """mt-metrics-eval's standard reference for ``(testset, lp)`` (None if not listed)."""
    return STD_REF.get(str(testset), {}).get(str(lp))


def outlier_systems(testset: str, lp: str) -> frozenset:
    """The systems mt-metrics-eval marks as outliers for ``(testset, lp)`` (empty if none or
    the test set is not one of its standard ones)."""
    return OUTLIER_SYSTEMS.get(str(testset), {}).get(str(lp), frozenset())
