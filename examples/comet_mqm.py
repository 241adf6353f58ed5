"""From a folder of sources, references and system outputs with MQM scores to the table.

    python examples/comet_mqm.py --model Unbabel/wmt22-comet-da [--root ROOT --testset T --lp L]

Reads one language pair of a folder in mt-metrics-eval's layout (``sources/LP.txt``,
``references/LP.refA.txt``, ``system-outputs/LP/SYS.txt``, ``documents/LP.docs``,
``human-scores/LP.mqm.seg.score``), scores every output with COMET (the source and the
reference) and sentence BLEU, and prints the system- and segment-level correlations
with MQM, each with its 95% bootstrap interval and its signature.

Without ``--root`` it writes a small synthetic folder first (5 systems x 40 segments:
each system drops a share of the reference's words, and its MQM score counts the drops
with noise), so the whole path runs anywhere COMET runs; docs/textmetrics.md shows a run
and .ci/run runs it in the COMET side environment with a tiny random COMET model.
COMET runs in this process when unbabel-comet imports here, else through the
``comet-score`` of another environment ($METAEVAL_COMET_SCORE or the PATH).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np

import metaeval
from metaeval import textmetrics as tm

PAIRS = [
    ("der Hund lief im Park", "the dog ran in the park"),
    ("die Katze sass auf der Matte", "the cat sat on the mat"),
    ("das Wetter ist heute schoen", "the weather is nice today"),
    ("ein rotes Auto fuhr schnell", "a red car drove fast"),
    ("wir essen heute Abend Fisch", "we are having fish for dinner tonight"),
    ("der Zug hat zehn Minuten Verspaetung", "the train is ten minutes late"),
    ("sie liest jeden Morgen die Zeitung", "she reads the newspaper every morning"),
    ("das Museum ist montags geschlossen", "the museum is closed on mondays"),
]


def write_synthetic(root: Path, *, testset="toy24", lp="de-en", n_segments=40, seed=0) -> Path:
    """A folder in mt-metrics-eval's layout with MQM scores that track word drops."""
    rng = np.random.default_rng(seed)
    d = root / testset
    for sub in ("sources", "references", f"system-outputs/{lp}", "documents", "human-scores"):
        (d / sub).mkdir(parents=True, exist_ok=True)
    pairs = [PAIRS[j % len(PAIRS)] for j in range(n_segments)]
    (d / "sources" / f"{lp}.txt").write_text("".join(s + "\n" for s, _ in pairs))
    (d / "references" / f"{lp}.refA.txt").write_text("".join(r + "\n" for _, r in pairs))
    (d / "documents" / f"{lp}.docs").write_text(
        "".join(f"news doc{j // 10}\n" for j in range(n_segments)))
    seg, sys_lines = [], []
    for k, (system, drop) in enumerate([("sysA", 0.05), ("sysB", 0.15), ("sysC", 0.25),
                                        ("sysD", 0.35), ("sysE", 0.5)]):
        outputs, mqm = [], []
        for _, ref in pairs:
            words = ref.split()
            keep = rng.random(len(words)) >= drop
            keep[0] = True
            outputs.append(" ".join(w for w, x in zip(words, keep) if x))
            # MQM: minus 5 per dropped word (a major error), plus rater noise, 0 at best
            mqm.append(min(0.0, -5.0 * int((~keep).sum()) + float(rng.normal(0, 2))))
        (d / "system-outputs" / lp / f"{system}.txt").write_text("".join(o + "\n" for o in outputs))
        seg += [f"{system}\t{v!r}\n" for v in mqm]
        sys_lines.append(f"{system}\t{float(np.mean(mqm))!r}\n")
    (d / "human-scores" / f"{lp}.mqm.seg.score").write_text("".join(seg))
    (d / "human-scores" / f"{lp}.mqm.sys.score").write_text("".join(sys_lines))
    return root


def read_folder(root, testset, lp, *, ref="refA", human="mqm") -> metaeval.Dataset:
    """One language pair of an mt-metrics-eval folder as a Dataset with texts and MQM.

    ``metaeval.read_mtme`` reads the same folder when it also has metric scores (WMT's
    folders do); this reads only the texts and the human scores, the case of new data.
    """
    import pandas as pd

    d = Path(root) / testset
    lines = lambda p: p.read_text(encoding="utf-8").split("\n")[:-1]  # noqa: E731
    sources = lines(d / "sources" / f"{lp}.txt")
    refs = lines(d / "references" / f"{lp}.{ref}.txt")
    scores = pd.read_csv(d / "human-scores" / f"{lp}.{human}.seg.score", sep="\t",
                         names=["system", human], na_values=["None"], keep_default_na=False)
    scores["input"] = scores.groupby("system").cumcount().astype(str)  # segment index per system
    texts = []
    for path in sorted((d / "system-outputs" / lp).glob("*.txt")):
        for j, hyp in enumerate(lines(path)):
            texts.append({"system": path.stem, "input": str(j), "source": sources[j],
                          "reference": refs[j], "hypothesis": hyp})
    return metaeval.Dataset.from_frame(scores, human=human, metrics=[], texts=pd.DataFrame(texts))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True, help="COMET model: a local folder/.ckpt or a name")
    ap.add_argument("--root", default=None, help="mt-metrics-eval folder (default: synthetic)")
    ap.add_argument("--testset", default="toy24")
    ap.add_argument("--lp", default="de-en")
    ap.add_argument("--cache", default=None, help="score cache folder")
    ap.add_argument("--n-resamples", type=int, default=1000)
    args = ap.parse_args(argv)
    tmp = None
    root = args.root
    if root is None:
        tmp = tempfile.TemporaryDirectory(prefix="metaeval-comet-mqm-")
        root = write_synthetic(Path(tmp.name), testset=args.testset, lp=args.lp)
    # 1. the folder -> a Dataset: MQM per system x segment, and the texts
    ds = read_folder(root, args.testset, args.lp)
    # 2. COMET and sentence BLEU for every output, as metric columns
    comet = tm.COMET(args.model)
    scores = tm.score(ds, [comet, "bleu"], cache_dir=args.cache)
    ds = scores.attach(ds)
    # 3. system level (Pearson of the system means) and segment level (Pearson over all
    #    segments, mt-metrics-eval's "no grouping"; and grouped by segment), 95% intervals
    res = metaeval.correlate(ds, "mqm", metrics=["comet", "bleu"],
                             level=["system", "global", "input"], method="pearson",
                             ci="boot-both", n_resamples=args.n_resamples, rng=0)
    table = res.to_frame()[["level", "metric", "statistic", "ci_low", "ci_high", "n"]]
    print(f"{ds.shape[0]} systems x {ds.shape[1]} segments; COMET backend: {comet.backend}")
    print(table.round(3).to_string(index=False))
    for column in scores.columns:
        print(scores.signatures[column])
    print(res.to_frame()["signature"].iloc[0])
    if tmp is not None:
        tmp.cleanup()
    return table


if __name__ == "__main__":
    main()
