"""The dataset registry: downloadable human-judgment releases, pinned and checksummed.

Each :class:`Entry` names a public release, the exact files to fetch (URLs pinned
to a commit, with the size and sha256 of the bytes at that commit, computed from
the repository's own files), its license and citation, and a converter from the
release's own layout into a :class:`~metaeval.Dataset` (texts, raters, contexts)
or, for pairwise releases, :class:`~metaeval.preferences.PreferenceData`.

Kinds of release
----------------
``judge-bench``
    JUDGE-BENCH's JSON schema (Bavaresco et al. 2024, github.com/dmg-illc/JUDGE-BENCH,
    ``data/README.md``): ``annotations`` declares each human dimension
    (``graded``/``continuous`` with ``worst``/``best``, or ``categorical`` with a
    ``labels_list``); every instance has an ``id``, an ``instance`` (a text, or a
    dict of texts) and per dimension ``mean_human`` or ``majority_human`` plus
    ``individual_human_scores``.  An instance is an input of one system
    (``output``); the human column is the release's own aggregate (categorical
    labels mapped to numbers, higher = better, as the entry says); individual
    scores become a second column ``<dim>:raters`` whose raters are anonymous
    *slots* (``r1``, ``r2``...: the k-th score of an instance, not a person), so
    per-rater analyses are not meaningful on it, pooled ones (alpha) are.
    Several files of one entry are concatenated, the file's ``part`` kept as a
    context label.
``judge-bench-pairwise``
    The same schema with ``instance = {input, output_a, output_b}`` and a
    ``model_a``/``model_b`` label: pairwise preference data.
``mtme``
    mt-metrics-eval's file layout (sources, references, system outputs,
    ``human-scores/LP.NAME.seg.score``), read with :func:`metaeval.read_mtme`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from metaeval.errors import DataError

from ._download import RemoteFile, cache_root, fetch_files
from ._validate import fmt_items

JB_REPO = "dmg-illc/JUDGE-BENCH"
JB_COMMIT = "5a0bf500325029efb5dc8adff2c1e991996f0e78"
JB_CITATION = (
    "Bavaresco et al. 2024, LLMs instead of Human Judges? A Large Scale Empirical Study across "
    "20 NLP Evaluation Tasks (JUDGE-BENCH)"
)

#: sha256 and size of each file, computed with ``git cat-file blob`` on the JUDGE-BENCH
#: repository at commit JB_COMMIT (the bytes raw.githubusercontent.com serves for that commit).
_JB_FILES = {
    "data/cola/cola.json": ("0cc14120c2fb46ddc3b5541844772454f05b8831792f3c655c16f2c148cfc80d", 372885),
    "data/dices/dices_350_expert.json": ("687c75d1ffda680874b1ff73edace6916d39e265490dd69d8480a5f5fcf0ba55", 187997),
    "data/dices/dices_350_crowdsourced.json": ("9f9694948fc4f734220866fc6fdff397b5207058e0c4d4f9a49d5ab98702c2a4", 464916),
    "data/dices/dices_990.json": ("3f80b2cd66052bc2e6e348742ebb29d1048073908e881c2a60c94026e8647d2f", 1022374),
    "data/inferential-strategies/inferential_strategies.json": ("955bd97cb917e9bb8379ff2dc59a57b9d6cdc3723c085748fb9b2d0dcb7b5e8a", 1035538),
    "data/llmbar/data-natural.json": ("6b0bc161719a1b80dd2f5155cf39a28f8e9f89e222eb06b969e23b05b579cd60", 128846),
    "data/llmbar/data-adversarial.json": ("13aeccef64f46870a978322c68493508dd74cd1297ca38d04f41f692f6a1c4b5", 575841),
    "data/recipe_crowd_sourcing_data/meta_evaluation_recipes.json": ("f65832bb83d2969e9eb3156ff89c6c412eb650ed0cfde5e8a81b08dcad871eca", 266876),
    "data/roscoe/roscoe-cosmos-overall.json": ("d8d320c8198edbc42dfac451a6c53ee14d653773e7becb4ffa3a6a4be2ab11aa", 483412),
    "data/roscoe/roscoe-drop-overall.json": ("30fd07f5dc77425c82e4c15da98d2b5ef5fae02671e55fc4fa7e3d0933856496", 621090),
    "data/roscoe/roscoe-esnli-overall.json": ("a894de22df1d5e622d745060f93f9b5219697fc7f0fa11225616423bf3ffeb8a", 315413),
    "data/roscoe/roscoe-gsm8k-overall.json": ("6e4392f8998a39a0435116857914225885d7acf8fb21f4204b48c210a40e604b", 450679),
    "data/toxic_chat/toxic_chat_test.json": ("d1a09dbb772c83cbddd7466c3b68f7ec1bd1b4025238e4340799ed11422f2281", 1890649),
    "data/toxic_chat/toxic_chat_train.json": ("e63c72db381bdd808e0b5e744ede6192f225dafdde5b484049f3f766947990ff", 1879301),
    "data/newsroom/newsroom.json": ("353a7e4646bdbc2f3429e71461d11fe6ce351ee8c2d3e8b4a7ca4aace015a6b0", 2415164),
    "data/wmt-23/original_data/en-de_score.txt": ("55008f5efc288d17a45e2d7437e7dafb5a7bf6d0d202380190cd159f3556065e", 109253),
    "data/wmt-23/original_data/en-de_source.txt": ("097b5ccf5552f62c052bad7878caeeec2d3db431c02076fbfe1fd057fb272eef", 197749),
    "data/wmt-23/original_data/en-de_ref.txt": ("b02877fdc8050e73d18bdcb5a31779ccb51028b30bd33e5c59e813130c5508b2", 234302),
    "data/wmt-23/original_data/zh-en_score.txt": ("081db29e4c474fa86c5d314e94fc4d85ffdb693e4327a1661e416fea397b2493", 460117),
    "data/wmt-23/original_data/zh-en_source.txt": ("d91ce2717cdfbf63041289f9d31f07545a8d80c4a6fd4d0bf9a1126b0d6b063a", 219348),
    "data/wmt-23/original_data/zh-en_ref.txt": ("5dd09a10f2775a1d76fe51a28ec62309a0b8a26809f08a14c9d456821e3a1a4d", 296746),
    "data/wmt-23/original_data/en-de/AIRC.txt": ("f3edbb9117e25e94edfcfff9f61070871bacfa3d8feed31026f872cd49abe7af", 186081),
    "data/wmt-23/original_data/en-de/GPT4-5shot.txt": ("426a5e294296848671af529801264a5730dc2fc942b43d930ee019a7a816524e", 233250),
    "data/wmt-23/original_data/en-de/Lan-BridgeMT.txt": ("0420a9c4462f52ae99723d4282ba4c0f360e4da806b6ea12aade6d8c04ec23b8", 227285),
    "data/wmt-23/original_data/en-de/NLLB_Greedy.txt": ("c57f9452f5b7e081fd5d235cad470c4d27360d392da4ce2fdce18d70deba986a", 192151),
    "data/wmt-23/original_data/en-de/NLLB_MBR_BLEU.txt": ("c21f961f6f08c2117e345cb16c571ecc4d5aa9e7c2f314f8cffdd9f05dbdf0a1", 188351),
    "data/wmt-23/original_data/en-de/ONLINE-A.txt": ("0ccda29c7e09e092ecfcd205f499f894e009d4952060d1abc1d2e01cd1cb69c5", 234668),
    "data/wmt-23/original_data/en-de/ONLINE-B.txt": ("6b1e0a36a54f22c5ea97b1fcf86e6a5cb0a61789483858ca01c78e8d4fcd5164", 236636),
    "data/wmt-23/original_data/en-de/ONLINE-G.txt": ("34f82b2954aa613dc5c70826cf835569bf6361af103a71381c5447256c1996c9", 231497),
    "data/wmt-23/original_data/en-de/ONLINE-M.txt": ("0c9982a6c921d2662d6b7d9a2b9d7b9af3035366a977ffd64b395f64c282f1c4", 226676),
    "data/wmt-23/original_data/en-de/ONLINE-W.txt": ("1c47c7cf1528f6a0a144413350fc20988dac3de7e3f50ae016ea9ba16705c966", 234086),
    "data/wmt-23/original_data/en-de/ONLINE-Y.txt": ("1017ad82da4bdc6409050ec3225fb3a9d2567f016d7aa164abfc80119c5b5d4f", 235075),
    "data/wmt-23/original_data/en-de/ZengHuiMT.txt": ("0ac378c36ecb9e50bb0659b6694ef104dd0e43e0a94680af2a8efe11725ce41b", 249192),
    "data/wmt-23/original_data/en-de/refA.txt": ("b02877fdc8050e73d18bdcb5a31779ccb51028b30bd33e5c59e813130c5508b2", 234302),
    "data/wmt-23/original_data/en-de/synthetic_ref.txt": ("d0f9060503d6bd6f5a37fb82ee385b7ba31d4ef54728081d1d36234908eb2301", 232137),
    "data/wmt-23/original_data/zh-en/ANVITA.txt": ("8221bdd4fca7204243fc72e3bbbf5c04224ce84692697a6a323932af6767eb11", 267369),
    "data/wmt-23/original_data/zh-en/GPT4-5shot.txt": ("8313f171140ffd4d270e24d8a5b389490f36bd660c5f941c29c7cad9f4ff2834", 297830),
    "data/wmt-23/original_data/zh-en/HW-TSC.txt": ("297af610d67ad79ff8045cfc9aa57d31f3e02463137c800cdbcdb591ea5b75fa", 292668),
    "data/wmt-23/original_data/zh-en/IOL_Research.txt": ("92197997326d23d20cda6779519da13098c2c2e6f82f9b8a0340b86b213c5e5e", 281790),
    "data/wmt-23/original_data/zh-en/Lan-BridgeMT.txt": ("901af2c89e2981858cb835257bb0ca4078cb41ed0f6a339d5d29ad571ffbd989", 294150),
    "data/wmt-23/original_data/zh-en/NLLB_Greedy.txt": ("8777cb97d09c4697a4e1f4fab47d89e57d2f27f1cd479ae91ad136d3c7063d69", 279569),
    "data/wmt-23/original_data/zh-en/NLLB_MBR_BLEU.txt": ("552436f5fdce893f17014864b496ea06f8f2245e214198a016e44db1e123910d", 273308),
    "data/wmt-23/original_data/zh-en/ONLINE-A.txt": ("a26506c4577362a4b7114b92a9333899ea7f55e8d9efecefa9d00f0fc572e368", 289157),
    "data/wmt-23/original_data/zh-en/ONLINE-B.txt": ("162668a620897b51c1cd1b16512d146d1851a54edee6c0eec2a92ef341e0baab", 292223),
    "data/wmt-23/original_data/zh-en/ONLINE-G.txt": ("0bc7ea3377d0494d4294b5d0af001a91eff50530673bd1cdc23b85992c48889b", 304480),
    "data/wmt-23/original_data/zh-en/ONLINE-M.txt": ("cd235bdbe84a2eb5ba429c62f8236c40513f6a7922f04ca61b44c5c648b382b8", 276991),
    "data/wmt-23/original_data/zh-en/ONLINE-W.txt": ("2d2a043258918b0c1243b53c8937e04b78ceebec719e0b97ae3908537f623f96", 297982),
    "data/wmt-23/original_data/zh-en/ONLINE-Y.txt": ("2dd499d503c79160e954224e5e8295786eb6cc22fd7b4d9d33d794b773ef23cd", 298136),
    "data/wmt-23/original_data/zh-en/Yishu.txt": ("e6d279171846ab24ad7dcceb95078119e4ab5e00c0736a319c72eb5bfab53290", 292033),
    "data/wmt-23/original_data/zh-en/ZengHuiMT.txt": ("577416479fa291fa33db0cf3fb6a5c22b2f5e13e38bd4757774f20ea10160291", 309176),
    "data/wmt-23/original_data/zh-en/refA.txt": ("5dd09a10f2775a1d76fe51a28ec62309a0b8a26809f08a14c9d456821e3a1a4d", 296746),
    "data/wmt-23/original_data/zh-en/synthetic_ref.txt": ("2ec0e54d562ba02d75da2d25c2f9a55c2572405d942a8c359fdc65ed343d734f", 294921),
}


WEBNLG_REPO = "WebNLG/challenge-2020"
#: The human evaluation and the submissions at the repository's last commit; the test data with
#: references only at the commit before it removed its data folder.
WEBNLG_COMMITS = {"H": "328b4c252abd9ca36471f390f9fcbd2650798088", "R": "af4f18f01c718592b2358277bc52e955d0d49cf8"}
#: sha256 and size of each file, computed with ``git cat-file blob`` at those commits.
_WEBNLG_FILES = {
    ("H", "evaluation/human-evaluation/results/en/english_humeval_data_all_teams.json"): ("b60b2bb458b2bb3ece9c1a261add64f37bbf3f1279388f78be4090c77c59a424", 986291),
    ("H", "evaluation/human-evaluation/results/en/Amazon_AI_(Shanghai)/primary.json"): ("e2c0699640a98f59c9ff197365c87632e58dae841f99a6b83a15817cbc642ab4", 58610),
    ("H", "submissions/rdf2text/en/Amazon_AI_(Shanghai)/primary.en"): ("17a79bd190d4c73bb9b51c83cbd7065e1033237ac41c69c2143b8b377053547a", 213869),
    ("H", "evaluation/human-evaluation/results/en/Baseline-FORGE2017/primary.json"): ("d0e2be42e1bfde6f72348e5153e307c69a8aa79a057836ef6b1605c987e2e608", 54849),
    ("H", "submissions/rdf2text/en/Baseline-FORGE2017/primary.en"): ("3804bb015411b34bab63a5d1e9fdba7b76bf190b1fb4e792d2d1f4aba0128dde", 234449),
    ("H", "evaluation/human-evaluation/results/en/Baseline-FORGE2020/primary.json"): ("cf2edacfa5e15dea4ed84eca00f052496ac85468223b494b08bd3540e8f9f306", 57296),
    ("H", "submissions/rdf2text/en/Baseline-FORGE2020/primary.en"): ("53e48be61aa749708ea61d4938674f7e1cbf8c0c459416bd41618687fca62d2b", 223150),
    ("H", "evaluation/human-evaluation/results/en/CycleGT/primary.json"): ("602cb9fa7003c7113eb3715237af6abfb9a7b59a3509803e7ab232088573d3fd", 60402),
    ("H", "submissions/rdf2text/en/CycleGT/primary.en"): ("a93b122a28fd820b2cc1d1a38084d804d469639aa929b5b41bd49bde76eba9ee", 209967),
    ("H", "evaluation/human-evaluation/results/en/DANGNT-SGU/primary.json"): ("ccf387a7ae33258c528c7a5de05bc790310ff9f1c5750ea090e82a60e5500ef6", 59341),
    ("H", "submissions/rdf2text/en/DANGNT-SGU/primary.en"): ("f01d715b35389142c453871a86008d389cd631bdb57fd54f2aa270f61a0f7cec", 233201),
    ("H", "evaluation/human-evaluation/results/en/FBConvAI/primary.json"): ("458ae374155e928017e836ac1ae80828e671044407775df060010ce375ca0e02", 56680),
    ("H", "submissions/rdf2text/en/FBConvAI/primary.en"): ("71b9f02743e7f918f2e9b9ad6569e5048105a73e98e60a46788eb3d4277af200", 219919),
    ("H", "evaluation/human-evaluation/results/en/Huawei_Noahs_Ark_Lab/primary.json"): ("72d9b2bfb646575cc7afcab0772601442f4adb5041a99926429ed8b8befee954", 56304),
    ("H", "submissions/rdf2text/en/Huawei_Noahs_Ark_Lab/primary.en"): ("3936ee0d97b7889b54f82d4aaedd42cee04959519b39f7b0bf3cf505abcb6053", 220196),
    ("H", "evaluation/human-evaluation/results/en/NILC/primary.json"): ("092d03a4bd1b5ef9e9666ff81081fa067e52320121d4e9ad48feafea0a1e2f29", 59681),
    ("H", "submissions/rdf2text/en/NILC/primary.en"): ("514dc3afc74dd20220cc27f2165d473a2b2a6c86212098cc39d629cacd909609", 233644),
    ("H", "evaluation/human-evaluation/results/en/NUIG-DSI/primary.json"): ("7164ab6c229d11ac508be0fe42eecb9f69077d0e80b30f74fdd87e75ba06c319", 60106),
    ("H", "submissions/rdf2text/en/NUIG-DSI/primary.en"): ("ddfe8e953e857bf93ac083e3f89198529dab4460b47d46dda5298882a97620f2", 209289),
    ("H", "evaluation/human-evaluation/results/en/ORANGE-NLG/primary.json"): ("35dcf0c64be780d471a0b33ff2e90b38e4187eeb1873840f1f9224f6855b8428", 60470),
    ("H", "submissions/rdf2text/en/ORANGE-NLG/primary.en"): ("6a45e004b735589b364da42ee8198520b69a0f14d0c9c5fca3e1f2133b6e5dcc", 229580),
    ("H", "evaluation/human-evaluation/results/en/OSU_Neural_NLG/primary.json"): ("50d7019702342e6699f83fbbedff94ddbf0555d9624fad125b6af0920dd0d755", 57429),
    ("H", "submissions/rdf2text/en/OSU_Neural_NLG/primary.en"): ("9b918a3b09483e438209d1b941ccb9094f3867660b832a0da000edd6de90f944", 217767),
    ("H", "evaluation/human-evaluation/results/en/RALI/primary.json"): ("77226884c33edc6f2e6cdd6ac8f586b96c1b1bf7bef5570b2dc93abbff691d8f", 57309),
    ("H", "submissions/rdf2text/en/RALI/primary.en"): ("5d0809f4e6803cc07fed91b33da69fc4c8a0a7b025d7568c678f4a251b53d6d3", 221720),
    ("H", "evaluation/human-evaluation/results/en/TGen/primary.json"): ("d3590098a0345bb9bf8a05b8bfff66f9f7b78958c673bbdb581930c1765382fc", 58830),
    ("H", "submissions/rdf2text/en/TGen/primary.en"): ("564467d73f806c05e9b39b3e4e4774c3bf15d4a0963e2086dcd8ff9034bc08f1", 198525),
    ("H", "evaluation/human-evaluation/results/en/UPC-POE/primary.json"): ("303b840bf7d83f34a33fe8039f637cf11b90b6fc0f7aed2b80eec92fd9f0fee0", 60342),
    ("H", "submissions/rdf2text/en/UPC-POE/primary.en"): ("a1bae4408844772e77582bbcfe20349a5550029feed838d5436bf492ae6e8e32", 206512),
    ("H", "evaluation/human-evaluation/results/en/bt5/primary.json"): ("b6c20db83a950b3e01362ae6f27a7e8313d2433782ff748b9eca644db620e957", 57572),
    ("H", "submissions/rdf2text/en/bt5/primary.en"): ("760d72eb84ef25bc38162c74497b5938fc920783a3318692e2e4f755dafce254", 218973),
    ("H", "evaluation/human-evaluation/results/en/cuni-ufal/primary.json"): ("061283e1ba5d44c7e59a328e7611abe9c171ecd44dee01ba1f9cd10f82248e24", 59995),
    ("H", "submissions/rdf2text/en/cuni-ufal/primary.en"): ("5471d385a8047ef5ab72930aaa6b2b4682431e37cdebf47809f99574e708f60e", 212431),
    ("R", "data/en/test/rdf-to-text-generation-test-data-with-refs-en.xml"): ("90cc228266978ea55a4c09f7f8ea938d5b17fcf2b1daaa4204c1030af0c6bef8", 2211933),
}
WEBNLG_TEAMS = ("Amazon_AI_(Shanghai)", "Baseline-FORGE2017", "Baseline-FORGE2020", "CycleGT", "DANGNT-SGU",
                "FBConvAI", "Huawei_Noahs_Ark_Lab", "NILC", "NUIG-DSI", "ORANGE-NLG", "OSU_Neural_NLG", "RALI",
                "TGen", "UPC-POE", "bt5", "cuni-ufal")
WEBNLG_CRITERIA = ("Correctness", "DataCoverage", "Fluency", "Relevance", "TextStructure")


def _webnlg_file(which: str, path: str, name: str) -> RemoteFile:
    sha, size = _WEBNLG_FILES[(which, path)]
    url = f"https://raw.githubusercontent.com/{WEBNLG_REPO}/{WEBNLG_COMMITS[which]}/{path}"
    return RemoteFile(name=name, url=url, sha256=sha, size=size)


def _webnlg_entry() -> Entry:
    he = "evaluation/human-evaluation/results/en"
    files = [_webnlg_file("H", f"{he}/english_humeval_data_all_teams.json", "english_humeval_data_all_teams.json"),
             _webnlg_file("R", "data/en/test/rdf-to-text-generation-test-data-with-refs-en.xml",
                          "rdf-to-text-generation-test-data-with-refs-en.xml")]
    for t in WEBNLG_TEAMS:
        files.append(_webnlg_file("H", f"{he}/{t}/primary.json", f"ratings/{t}.json"))
        files.append(_webnlg_file("H", f"submissions/rdf2text/en/{t}/primary.en", f"outputs/{t}.en"))
    return Entry(
        name="webnlg2020-en", kind="webnlg2020", task="RDF-to-text generation, English (WebNLG 2020 challenge)",
        files=tuple(files), shape=(16, 178),
        human="Correctness, DataCoverage, Fluency, Relevance, TextStructure (0-100, mean of the workers)",
        raters="2-3 crowd workers per output (worker ids kept)",
        texts="source (the triples), references, hypothesis", license="CC-BY-NC-SA-4.0 (WebNLG data; "
        "non-commercial use only)",
        citation="Castro Ferreira et al. 2020, The 2020 Bilingual, Bi-Directional WebNLG+ Shared Task: Overview "
                 "and Evaluation Results (WebNLG+ 2020)",
        source=f"github.com/{WEBNLG_REPO}@{WEBNLG_COMMITS['H'][:12]} (human evaluation, submissions) and "
               f"@{WEBNLG_COMMITS['R'][:12]} (test data with references)",
        dims={c: None for c in WEBNLG_CRITERIA},
    )


def jb_file(path: str, name: str | None = None) -> RemoteFile:
    """A JUDGE-BENCH file at the pinned commit, under ``name`` in the cache folder."""
    sha, size = _JB_FILES[path]
    url = f"https://raw.githubusercontent.com/{JB_REPO}/{JB_COMMIT}/{path}"
    return RemoteFile(name=name or path.rsplit("/", 1)[-1], url=url, sha256=sha, size=size)


@dataclass(frozen=True)
class Entry:
    """A downloadable dataset: files, converter options and what ``metaeval datasets`` shows.

    ``parts`` maps a context label to the file name of each part (judge-bench
    kinds); ``dims`` maps each human dimension kept to ``None`` (graded or
    continuous: ``mean_human``) or a ``{label: value}`` mapping (categorical;
    unlisted labels are NaN); ``text_map`` maps keys of a dict ``instance`` to
    text columns (a str instance is the ``hypothesis``).
    """

    name: str
    kind: str
    task: str
    files: tuple[RemoteFile, ...]
    shape: tuple[int, int]
    human: str
    raters: str
    texts: str
    license: str
    citation: str
    source: str
    parts: dict = field(default_factory=dict)
    dims: dict = field(default_factory=dict)
    text_map: dict = field(default_factory=dict)
    options: dict = field(default_factory=dict)

    @property
    def form(self) -> str:
        return "preferences" if self.kind == "judge-bench-pairwise" else "dataset"

    @property
    def levels(self) -> tuple | None:
        """The levels that mean something on this release (None: every level its shape supports)."""
        return self.options.get("levels")

    def record(self) -> dict:
        n, m = self.shape
        return {"name": self.name, "task": self.task, "systems_x_inputs": f"{n} x {m}",
                "human": self.human, "raters": self.raters, "texts": self.texts,
                "license": self.license, "citation": self.citation, "source": self.source,
                "form": self.form, "bundled": False}


def _jb_source(paths) -> str:
    return f"github.com/{JB_REPO}@{JB_COMMIT[:12]}: " + ", ".join(paths)


def _jb_entry(name, task, paths, *, parts=None, **kw) -> Entry:
    files = tuple(jb_file(p) for p in paths)
    if parts is None:
        parts = {f.name.rsplit(".", 1)[0]: f.name for f in files}
    return Entry(name=name, kind=kw.pop("kind", "judge-bench"), task=task, files=files,
                 source=_jb_source(paths), parts=parts, **kw)


_YES_NO = {"Yes": 1.0, "No": 0.0}
_yes_no = {"yes": 1.0, "no": 0.0}
_no_yes = {"no": 1.0, "yes": 0.0}

_WMT_SYSTEMS = {
    "en-de": ("AIRC", "GPT4-5shot", "Lan-BridgeMT", "NLLB_Greedy", "NLLB_MBR_BLEU", "ONLINE-A", "ONLINE-B",
              "ONLINE-G", "ONLINE-M", "ONLINE-W", "ONLINE-Y", "ZengHuiMT", "refA", "synthetic_ref"),
    "zh-en": ("ANVITA", "GPT4-5shot", "HW-TSC", "IOL_Research", "Lan-BridgeMT", "NLLB_Greedy", "NLLB_MBR_BLEU",
              "ONLINE-A", "ONLINE-B", "ONLINE-G", "ONLINE-M", "ONLINE-W", "ONLINE-Y", "Yishu", "ZengHuiMT",
              "refA", "synthetic_ref"),
}


def _wmt_entry(lp: str, shape) -> Entry:
    o = "data/wmt-23/original_data"
    files = [jb_file(f"{o}/{lp}_source.txt", f"mtme/wmt23/sources/{lp}.txt"),
             jb_file(f"{o}/{lp}_ref.txt", f"mtme/wmt23/references/{lp}.refA.txt"),
             jb_file(f"{o}/{lp}_score.txt", f"mtme/wmt23/human-scores/{lp}.da-sqm.seg.score")]
    files += [jb_file(f"{o}/{lp}/{s}.txt", f"mtme/wmt23/system-outputs/{lp}/{s}.txt") for s in _WMT_SYSTEMS[lp]]
    return Entry(
        name=f"wmt23-{lp}", kind="mtme", task=f"machine translation {lp} (WMT23 general task)",
        files=tuple(files), shape=shape, human="da-sqm (DA+SQM, 0-100, one rating per segment)",
        raters="1 (averaged by the release)", texts="source, reference (refA), hypothesis",
        license="Apache-2.0 (mt-metrics-eval data)",
        citation="Kocmi et al. 2023, Findings of the 2023 Conference on Machine Translation (WMT23); "
                 "mt-metrics-eval (Freitag et al.); copy in " + JB_CITATION,
        source=f"mt-metrics-eval wmt23 {lp} seg-level da-sqm files as copied in github.com/{JB_REPO}"
               f"@{JB_COMMIT[:12]}:{o}/",
        options={"testset": "wmt23", "lp": lp, "human": "da-sqm", "refs": "refA"},
    )


#: Registry of downloadable datasets (name -> Entry).  Shapes were read from the files at
#: the pinned commit with these converters (tests/test_registry.py checks the converters on
#: fixtures in the same layout).
REGISTRY: dict[str, Entry] = {e.name: e for e in [
    _jb_entry("jb-cola", "acceptability (single sentences)", ["data/cola/cola.json"],
              shape=(1, 1043), human="grammaticality (Yes=1, No=0)", raters="1 (majority label)",
              texts="hypothesis (the sentence)", license="CC0-1.0",
              citation="Warstadt et al. 2019, Neural Network Acceptability Judgments, TACL (CoLA in-domain "
                       "and out-of-domain dev); " + JB_CITATION,
              dims={"grammaticality": _YES_NO}),
    *[_jb_entry(f"jb-dices-{tag}", "dialogue safety (response to an adversarial prompt)",
                [f"data/dices/{fn}.json"], shape=shape,
                human="safety (Yes = safe = 1, No = 0, Unsure = missing; majority label)",
                raters=raters, texts="source (the dialogue), hypothesis (the response)", license="CC-BY-4.0",
                citation="Aroyo et al. 2023, DICES Dataset: Diversity in Conversational AI Evaluation for "
                         "Safety, NeurIPS Datasets and Benchmarks; " + JB_CITATION,
                dims={"safety": _YES_NO}, text_map={"user_prompt": "source", "response": "hypothesis"})
      for tag, fn, shape, raters in [
          ("350-expert", "dices_350_expert", (1, 350), "1 expert label"),
          ("350-crowd", "dices_350_crowdsourced", (1, 350), "up to 123 crowd slots"),
          ("990", "dices_990", (1, 990), "up to 76 crowd slots")]],
    _jb_entry("jb-inferential-strategies", "deductive reasoning explanations (LLM responses)",
              ["data/inferential-strategies/inferential_strategies.json"], shape=(1, 300),
              human="Sound Reasoning (yes=1, no=0)", raters="2 expert slots",
              texts="hypothesis (problem and response)", license="CC-BY-4.0",
              citation="Mondorf and Plank 2024, Comparing Inferential Strategies of Humans and Large "
                       "Language Models in Deductive Reasoning, ACL; " + JB_CITATION,
              dims={"Sound Reasoning": _yes_no}),
    _jb_entry("jb-llmbar", "instruction following, pairwise (LLMBar Natural and Adversarial)",
              ["data/llmbar/data-natural.json", "data/llmbar/data-adversarial.json"],
              parts={"natural": "data-natural.json", "adversarial": "data-adversarial.json"},
              kind="judge-bench-pairwise", shape=(2, 419),
              human="preference (output_a better = 1, output_b better = 0)", raters="1 expert label",
              texts="source (instruction), hypothesis (each output)", license="MIT",
              citation="Zeng et al. 2024, Evaluating Large Language Models at Evaluating Instruction "
                       "Following, ICLR (LLMBar); " + JB_CITATION,
              dims={"quality_single_turn": {"model_a": 1.0, "model_b": 0.0}},
              text_map={"input": "source", "output_a": "output_a", "output_b": "output_b"}),
    _jb_entry("jb-recipes", "rewritten cooking recipes", [
        "data/recipe_crowd_sourcing_data/meta_evaluation_recipes.json"], shape=(1, 52),
        human="grammar, fluency, verbosity, structure, success, overall (1-6, mean)",
        raters="15-88 crowd slots", texts="hypothesis (the recipe)", license="Apache-2.0 / CC-BY-4.0",
        citation="Stein et al. 2024, rewritten cooking recipes, DMR workshop; " + JB_CITATION,
        dims={d: None for d in ("grammar", "fluency", "verbosity", "structure", "success", "overall")}),
    _jb_entry("jb-roscoe", "step-by-step reasoning chains (ROSCOE overall judgments)",
              [f"data/roscoe/roscoe-{p}-overall.json" for p in ("cosmos", "drop", "esnli", "gsm8k")],
              parts={p: f"roscoe-{p}-overall.json" for p in ("cosmos", "drop", "esnli", "gsm8k")},
              shape=(1, 756),
              human="Overall Quality, Coherency (1-5); Missing Steps, Contradiction (no=1, yes=0)",
              raters="1 expert label", texts="hypothesis (context and generated chain)", license="MIT",
              citation="Golovneva et al. 2023, ROSCOE: A Suite of Metrics for Scoring Step-by-Step "
                       "Reasoning, ICLR; " + JB_CITATION,
              dims={"Overall Quality": None, "Coherency": None, "Missing Steps": _no_yes,
                    "Contradiction": _no_yes}),
    _jb_entry("jb-toxic-chat", "toxicity of user prompts to a chatbot",
              ["data/toxic_chat/toxic_chat_test.json", "data/toxic_chat/toxic_chat_train.json"],
              parts={"test": "toxic_chat_test.json", "train": "toxic_chat_train.json"}, shape=(1, 5654),
              human="toxicity, jailbreaking (0 = not = 1, 1 = yes = 0: higher is better)",
              raters="1 (majority label)", texts="hypothesis (the user prompt)",
              license="CC-BY-NC-4.0 (non-commercial use only)",
              citation="Lin et al. 2023, ToxicChat: Unveiling Hidden Challenges of Toxicity Detection in "
                       "Real-World User-AI Conversation, Findings of EMNLP; " + JB_CITATION,
              dims={"toxicity": {"0": 1.0, "1": 0.0}, "jailbreaking": {"0": 1.0, "1": 0.0}}),
    _jb_entry("jb-newsroom", "news summarization (Newsroom human evaluation; systems anonymous)", ["data/newsroom/newsroom.json"],
              shape=(7, 60), human="Informativeness, Relevance, Fluency, Coherence (1-5, mean of 3)",
              raters="3 crowd slots", texts="source (title and article), hypothesis (the summary)",
              license="Apache-2.0",
              citation="Grusky et al. 2018, Newsroom: A Dataset of 1.3 Million Summaries with Diverse Extractive "
                       "Strategies, NAACL; " + JB_CITATION,
              dims={d: None for d in ("Informativeness", "Relevance", "Fluency", "Coherence")},
              text_map={"Generated Summary": "hypothesis", "Source Article": "source"},
              options={"sections": True, "group_by": "source", "levels": ("input", "global")}),
    _webnlg_entry(),
    _wmt_entry("en-de", (12, 549)),
    _wmt_entry("zh-en", (15, 884)),
]}


# ---------------------------------------------------------------------- converters
def _as_value(v, mapping, where):
    if mapping is None:
        if v is None or isinstance(v, bool) or not isinstance(v, (int, float)):
            raise DataError(f"{where}: expected a number, got {v!r}")
        return float(v)
    return float(mapping.get(str(v), np.nan))


def _read_json(path, entry):
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except (OSError, ValueError) as exc:
        raise DataError(f"dataset {entry.name!r}: cannot read {path} ({exc})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("instances"), list):
        raise DataError(f"dataset {entry.name!r}: {path} is not in JUDGE-BENCH's schema (no 'instances' list)")
    return doc


def _jb_rows(entry: Entry, folder):
    """(part, instance id, instance, annotations) over the entry's files, in file order."""
    for part, fname in entry.parts.items():
        doc = _read_json(folder / fname, entry)
        declared = {a.get("metric") for a in doc.get("annotations", [])}
        missing = sorted(set(entry.dims) - declared)
        if missing:
            raise DataError(f"dataset {entry.name!r}: {folder / fname} declares no annotation "
                            f"{fmt_items(missing)}; it declares {fmt_items(sorted(map(str, declared)))}")
        for inst in doc["instances"]:
            yield part, str(inst["id"]), inst["instance"], inst["annotations"]


def _input_label(entry, part, iid):
    return iid if len(entry.parts) == 1 else f"{part}:{iid}"


def _sections(text: str) -> dict:
    """A JUDGE-BENCH instance written as ``### Heading`` sections (Newsroom): heading -> text."""
    out, head, buf = {}, None, []
    for line in text.split("\n"):
        if line.startswith("### "):
            if head is not None:
                out[head] = "\n".join(buf).strip()
            head, buf = line[4:].strip(), []
        else:
            buf.append(line)
    if head is not None:
        out[head] = "\n".join(buf).strip()
    return out


def _convert_judge_bench(entry: Entry, folder):
    """JUDGE-BENCH's schema into a Dataset.  With ``options["group_by"] = "source"`` (Newsroom,
    where the file lost the systems' names), the instances that share a source text are one input
    (``a1``, ``a2``... in order of first appearance) and its outputs are anonymous systems
    ``summary1``, ``summary2``... in file order: only the ``input`` and ``global`` levels mean
    anything there (``options["levels"]``)."""
    from ._dataset import Dataset

    rows, texts = [], []
    rater_cols: dict[str, int] = {}
    by_source: dict[str, list] = {}
    for part, iid, inst, ann in _jb_rows(entry, folder):
        inp, system = _input_label(entry, part, iid), "output"
        if entry.options.get("sections") and isinstance(inst, str):
            inst = _sections(inst)
        if entry.options.get("group_by") == "source":
            key = inst.get("Source Article") if isinstance(inst, dict) else None
            if key is None:
                raise DataError(f"dataset {entry.name!r}: instance {iid!r} has no source section")
            slot = by_source.setdefault(key, [f"a{len(by_source) + 1}", 0])
            slot[1] += 1
            inp, system = slot[0], f"summary{slot[1]}"
        row = {"system": system, "input": inp, "part": part}
        for dim, mapping in entry.dims.items():
            a = ann.get(dim, {})
            where = f"dataset {entry.name!r}, instance {iid!r}, {dim!r}"
            agg = a.get("mean_human") if mapping is None else a.get("majority_human")
            row[dim] = np.nan if agg is None else _as_value(agg, mapping, where)
            indiv = a.get("individual_human_scores") or []
            for k, v in enumerate(indiv, 1):
                row[f"{dim}\x00r{k}"] = _as_value(v, mapping, where)
            if indiv:
                rater_cols[dim] = max(rater_cols.get(dim, 0), len(indiv))
        rows.append(row)
        t = {"system": system, "input": inp}
        if isinstance(inst, str):
            t["hypothesis"] = inst
        else:
            for key, col in entry.text_map.items():
                t[col] = inst.get(key)
        texts.append(t)
    frame = pd.DataFrame(rows)
    dup = frame["input"][frame[["system", "input"]].duplicated()]
    if len(dup):
        raise DataError(f"dataset {entry.name!r}: duplicate instance id(s) {fmt_items(sorted(set(dup)))}")
    # raters only where some instance has more than one individual score
    raters = {}
    for dim, k in rater_cols.items():
        if k > 1:
            cols = {f"r{j}": f"{dim}\x00r{j}" for j in range(1, k + 1)}
            for c in cols.values():
                if c not in frame:
                    frame[c] = np.nan
            raters[f"{dim}:raters"] = cols
    frame = frame.drop(columns=[c for c in frame.columns
                                if "\x00" in c and not any(c in r.values() for r in raters.values())])
    return Dataset.from_frame(
        frame, system="system", input="input", human=list(entry.dims), metrics=[],
        raters=raters or None, name=entry.name, texts=pd.DataFrame(texts),
        contexts=["part"] if len(entry.parts) > 1 else None, provenance=_provenance(entry),
    )


def _pairwise_rows(entry: Entry, folder):
    (dim, mapping), = entry.dims.items()
    for part, iid, inst, ann in _jb_rows(entry, folder):
        a = ann.get(dim, {})
        where = f"dataset {entry.name!r}, instance {iid!r}, {dim!r}"
        pref = _as_value(a.get("majority_human"), mapping, where)
        indiv = [_as_value(v, mapping, where) for v in (a.get("individual_human_scores") or [])]
        t = {col: inst.get(key) for key, col in entry.text_map.items()}
        yield part, _input_label(entry, part, iid), pref, indiv, t


def _convert_pairwise_dataset(entry: Entry, folder):
    """A pairwise release as a 2 x M Dataset: systems ``output_a`` and ``output_b``; the human
    score of A is the preference (1 A better, 0 B better) and of B its complement, so the
    ``input`` level agrees with the preference pair by pair."""
    from ._dataset import Dataset

    rows, texts = [], []
    for part, inp, pref, _, t in _pairwise_rows(entry, folder):
        for sys_, val in (("output_a", pref), ("output_b", 1.0 - pref)):
            rows.append({"system": sys_, "input": inp, "preference": val, "part": part})
            texts.append({"system": sys_, "input": inp, "source": t.get("source"), "hypothesis": t.get(sys_)})
    return Dataset.from_frame(
        pd.DataFrame(rows), human=["preference"], metrics=[], name=entry.name,
        texts=pd.DataFrame(texts), contexts=["part"] if len(entry.parts) > 1 else None,
        provenance=_provenance(entry),
    )


def _convert_pairwise_preferences(entry: Entry, folder):
    from ._preferences import PreferenceData

    rows = []
    for _, inp, pref, indiv, t in _pairwise_rows(entry, folder):
        for k, v in enumerate(indiv or [pref], 1):
            rows.append({"input": inp, "system_a": "output_a", "system_b": "output_b", "rater": f"r{k}",
                         "preference": v, "output_a": t.get("output_a"), "output_b": t.get("output_b")})
    return PreferenceData.from_frames(pd.DataFrame(rows), name=entry.name)


def _convert_mtme(entry: Entry, folder):
    from ._mtme import read_mtme

    o = entry.options
    from ._dataset import Dataset

    ds = read_mtme(folder / "mtme", o["testset"], o["lp"], human=o["human"], refs=o["refs"])
    # the same scores, labels, texts and contexts, named after the entry, with its provenance
    return Dataset.from_arrays({c: ds.scores(c) for c in ds.columns}, human=list(ds.human),
                               systems=ds.systems, inputs=ds.inputs, name=entry.name, texts=ds.texts,
                               contexts=ds.contexts,
                               provenance=f"{_provenance(entry)}\n{ds.provenance}")


def _provenance(entry: Entry) -> str:
    return f"{entry.citation}. License: {entry.license}. Source: {entry.source}"


def _convert_webnlg(entry: Entry, folder):
    """WebNLG 2020 (English): the release's per-output averages (``english_humeval_data_all_teams.json``:
    ``submission_id``, ``sample_id``, ``size``, ``domain``, ``category`` and the five criteria), each
    team's worker ratings (``<team>/primary.json``: sample id -> worker -> criterion -> score) as
    ``<criterion>:raters``, its outputs (``primary.en``, line ``sample_id`` counting from 1) and the
    test set's triples and references (entry ``eid="Id<sample_id>"``).  The human references
    (``WebNLG-2020-reference``) were rated too, but their text is not in the submissions: not a system."""
    import xml.etree.ElementTree as ET

    from ._dataset import Dataset

    teams = [f.name[len("ratings/"):-len(".json")] for f in entry.files if f.name.startswith("ratings/")]
    crit = list(entry.dims)
    try:
        with open(folder / "english_humeval_data_all_teams.json", encoding="utf-8") as fh:
            avg = json.load(fh)
        root = ET.parse(folder / "rdf-to-text-generation-test-data-with-refs-en.xml").getroot()
    except (OSError, ValueError, ET.ParseError) as exc:
        raise DataError(f"dataset {entry.name!r}: cannot read the release ({exc})") from None
    tests = {}
    for e in root.iter("entry"):
        triples = [t.text or "" for t in e.iter("mtriple")]
        refs = [x.text or "" for x in e.iter("lex")]
        tests[e.get("eid")] = ("\n".join(triples), refs)
    outputs = {}
    for t in teams:
        with open(folder / "outputs" / f"{t}.en", encoding="utf-8") as fh:
            outputs[t] = fh.read().split("\n")
    rows, texts, ctx = [], [], {}
    workers: dict[str, None] = {}
    per_team = {}
    for t in teams:
        with open(folder / "ratings" / f"{t}.json", encoding="utf-8") as fh:
            per_team[t] = json.load(fh)
    for r in avg:
        t, sid = r["submission_id"], str(r["sample_id"])
        if t not in outputs:
            continue
        row = {"system": t, "input": sid, **{c: float(r[c]) for c in crit}}
        for w, scores in per_team[t].get(sid, {}).items():
            workers.setdefault(w, None)
            for c in crit:
                row[f"{c}\x00{w}"] = float(scores[c])
        rows.append(row)
        ctx[sid] = {"input": sid, "size": str(r["size"]), "domain": r["domain"], "category": r["category"]}
        k = int(sid)
        hyp = outputs[t][k - 1] if 0 < k <= len(outputs[t]) else None
        src, refs = tests.get(f"Id{sid}", (None, None))
        texts.append({"system": t, "input": sid, "source": src, "references": tuple(refs or ()), "hypothesis": hyp})
    frame = pd.DataFrame(rows)
    for c in crit:
        for w in workers:
            if f"{c}\x00{w}" not in frame:
                frame[f"{c}\x00{w}"] = np.nan
    raters = {f"{c}:raters": {w: f"{c}\x00{w}" for w in workers} for c in crit}
    return Dataset.from_frame(frame, human=crit, metrics=[], raters=raters, name=entry.name,
                              texts=pd.DataFrame(texts), contexts=pd.DataFrame(list(ctx.values())),
                              provenance=_provenance(entry))


_CONVERTERS: dict[tuple[str, str], Callable] = {
    ("webnlg2020", "dataset"): _convert_webnlg,
    ("judge-bench", "dataset"): _convert_judge_bench,
    ("judge-bench-pairwise", "dataset"): _convert_pairwise_dataset,
    ("judge-bench-pairwise", "preferences"): _convert_pairwise_preferences,
    ("mtme", "dataset"): _convert_mtme,
}


# ---------------------------------------------------------------------- public API
def get_entry(name: str) -> Entry:
    entry = REGISTRY.get(name) if isinstance(name, str) else None
    if entry is None:
        raise DataError(f"unknown downloadable dataset {name!r}; registry: {fmt_items(REGISTRY, limit=50)} "
                        "(metaeval datasets lists them)")
    return entry


#: What ``metaeval datasets`` shows for the bundled datasets (same keys as Entry.record()).
BUNDLED_LISTING = {
    "summeval": {
        "task": "summarization (CNN/DailyMail)", "systems_x_inputs": "17 x 100",
        "human": "coherence, consistency, fluency, relevance (1-5; mean and each expert)",
        "raters": "3 experts", "texts": "source, 11 references, hypothesis (16 of 17 systems)",
        "license": "MIT (annotations), Apache-2.0 (texts)",
        "citation": "Fabbri et al. 2021, SummEval (TACL); metric scores Xiao et al. 2023; texts Yuan et al. "
                    "2021 (BARTScore)",
        "source": "bundled with metaeval", "form": "dataset", "bundled": True,
    },
}


def listing() -> list[dict]:
    """Bundled, then downloadable datasets, one uniform record each."""
    return [{"name": n, **r} for n, r in BUNDLED_LISTING.items()] + registry_records()


def registry_records() -> list[dict]:
    """One record per downloadable dataset (what ``metaeval datasets`` shows)."""
    return [e.record() for e in REGISTRY.values()]


def fetch(name: str, *, cache_dir=None, base_url=None, timeout: float = 60.0, quiet: bool = False):
    """Download a registry dataset's files (once) and return its cache folder.

    Every file is checked against its pinned size and sha256 before it is
    renamed into place; files already in the cache that verify are not
    fetched again.  Prints the license and citation to stderr unless ``quiet``.
    """
    entry = get_entry(name)
    folder, _ = fetch_files(entry.name, entry.files, cache_dir=cache_dir, base_url=base_url, timeout=timeout)
    if not quiet:
        print(f"{entry.name}: license {entry.license}; cite: {entry.citation}", file=sys.stderr)
    return folder


def load_registry_dataset(name: str, *, form: str | None = None, cache_dir=None, base_url=None,
                          timeout: float = 60.0, quiet: bool = False):
    """Fetch (if needed) and convert a registry dataset.

    ``form``: ``"dataset"`` (a :class:`~metaeval.Dataset`; pairwise releases
    as 2 x M) or ``"preferences"`` (pairwise releases only); default: the
    entry's natural form.
    """
    entry = get_entry(name)
    form = entry.form if form is None else form
    conv = _CONVERTERS.get((entry.kind, form))
    if conv is None:
        forms = sorted(f for k, f in _CONVERTERS if k == entry.kind)
        raise DataError(f"dataset {name!r} has no form {form!r}; forms: {', '.join(forms)}")
    folder = fetch(name, cache_dir=cache_dir, base_url=base_url, timeout=timeout, quiet=quiet)
    return conv(entry, folder)


def cache_folder(name: str, cache_dir=None):
    return cache_root(cache_dir) / get_entry(name).name
