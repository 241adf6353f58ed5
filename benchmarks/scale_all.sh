#!/bin/sh
# Every issue-15 scale figure in one command (about 45 min on an idle 2-core machine, longer when
# it is shared): per-replicate cost, the 10^6-cell correlate and compare targets, growth with size, Dask and
# --jobs. Each step prints `uptime` before it; peak memory from GNU time.
#   sh benchmarks/scale_all.sh            (from the repository root; measures this checkout's src/)
set -e
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
step() { echo; echo "== $*"; uptime; }
step "per replicate, materialised vs from the draws (one thread)"
NUMBA_NUM_THREADS=1 python benchmarks/cellboot.py
step "10^6-cell target: 4 levels x 3 methods x 5 metrics, 1000 boot-both resamples"
/usr/bin/time -v python benchmarks/scale.py --target
step "10^6-cell compare target: Perm-Both 1000 at input and global, pearson/spearman/kendall_b"
/usr/bin/time -v python benchmarks/scale.py --compare
step "growth with size (correlate and Perm-Both, 10^4 .. 10^6 cells)"
python benchmarks/growth.py --case correlate --case perm --sizes 10000,30000,100000,300000,1000000 --max-seconds 400
step "Dask vs local at 10^6 cells, 100 resamples (identical numbers)"
SCALE_TARGET_OUT=/tmp/scale_local.csv python benchmarks/scale.py --target --n-resamples 100
SCALE_TARGET_OUT=/tmp/scale_dask.csv python benchmarks/scale.py --target --n-resamples 100 --dask 2
cmp /tmp/scale_local.csv /tmp/scale_dask.csv && echo "Dask and local results identical"
step "one interval at 10^6 cells (global kendall_b, 1000 resamples): local, Dask and --jobs 2 run it as blocks of resamples"
SCALE_TARGET_OUT=/tmp/one_local.csv python benchmarks/scale.py --target --n-metrics 1 --level global --method kendall_b
SCALE_TARGET_OUT=/tmp/one_dask.csv python benchmarks/scale.py --target --n-metrics 1 --level global --method kendall_b --dask 2
SCALE_TARGET_OUT=/tmp/one_jobs.csv python benchmarks/scale.py --target --n-metrics 1 --level global --method kendall_b --jobs 2
cmp /tmp/one_local.csv /tmp/one_dask.csv && cmp /tmp/one_local.csv /tmp/one_jobs.csv && echo "blocks: identical"
step "--jobs 1 vs 2"
python benchmarks/jobs_speedup.py
python benchmarks/jobs_speedup_measures.py
uptime
