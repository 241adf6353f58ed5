"""A generated rated file of the shape of a story-generation study: 11 systems x 96 inputs,
4 human columns rated by 3 raters each (1-5), 12 metrics (issue 26.3's second calibration case).

usage: python benchmarks/rated_file.py OUT.csv [--systems 11] [--inputs 96] [--humans 4] [--raters 3]
                                                [--metrics 12] [--seed 0]

Long form, one row per system x input x rater (``--rater-col rater``): each human column holds
that rater's integer rating; each metric is repeated on the three rater rows of its cell (a metric
scores the output, not the rater).  The scores follow a small latent model so that the analyses
have something to find: a per-system quality, a per-output quality, the raters' noise and
leniency, and metrics that read the output's quality with their own noise (two of them ties-heavy,
rounded to tenths, as BLEU-like metrics often are).

Run the report on it with::

    metaeval report OUT.csv --human h1,h2,h3,h4 --rater-col rater --quick --out DIR
"""

from __future__ import annotations

import argparse

import numpy as np


def generate(path, *, systems=11, inputs=96, humans=4, raters=3, metrics=12, seed=0):
    g = np.random.default_rng(seed)
    sys_q = g.normal(0.0, 0.6, systems)
    out_q = sys_q[:, None] + g.normal(0.0, 0.8, (systems, inputs))
    loading = g.uniform(0.4, 1.0, humans)
    lenient = g.normal(0.0, 0.3, (humans, raters))
    noise = g.uniform(0.15, 1.2, metrics)
    cols = [f"h{i + 1}" for i in range(humans)]
    mets = [f"m{j + 1}" for j in range(metrics)]
    with open(path, "w") as f:
        f.write(",".join(["system", "input", "rater", *cols, *mets]) + "\n")
        for s in range(systems):
            for i in range(inputs):
                m = out_q[s, i] + g.normal(0.0, noise)
                m[:2] = np.round(m[:2], 1)
                mtxt = [repr(float(v)) for v in m]
                for r in range(raters):
                    h = np.clip(np.rint(3 + loading * out_q[s, i] + lenient[:, r] + g.normal(0, 0.7, humans)), 1, 5)
                    f.write(",".join([f"sys{s}", f"story{i}", f"r{r + 1}", *(str(int(v)) for v in h), *mtxt])
                            + "\n")
    return cols, mets


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    for name, default in (("systems", 11), ("inputs", 96), ("humans", 4), ("raters", 3), ("metrics", 12),
                          ("seed", 0)):
        ap.add_argument(f"--{name}", type=int, default=default)
    a = ap.parse_args(argv)
    cols, _ = generate(a.out, systems=a.systems, inputs=a.inputs, humans=a.humans, raters=a.raters,
                       metrics=a.metrics, seed=a.seed)
    print(f"{a.out}: --human {','.join(cols)} --rater-col rater")


if __name__ == "__main__":
    main()
