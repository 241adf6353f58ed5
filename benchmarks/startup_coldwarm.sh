#!/bin/bash
# usage: coldwarm.sh SRC LABEL
export PYTHONPATH=$1
M=${METAEVAL:-$(command -v metaeval)}
C=${TMPDIR:-/tmp}/startup_bench/cw_cache_$2; rm -rf $C; mkdir -p $C; export NUMBA_CACHE_DIR=$C
{ echo "== $2 $1"; date -u; uptime
/usr/bin/time -f "report --quick COLD %e s wall (cpu user %U sys %S)" $M report --quick --out ${TMPDIR:-/tmp}/startup_bench/cw_$2_1 --seed 0 >/dev/null
uptime
/usr/bin/time -f "report --quick WARM %e s wall (cpu user %U sys %S)" $M report --quick --out ${TMPDIR:-/tmp}/startup_bench/cw_$2_2 --seed 0 >/dev/null
uptime
/usr/bin/time -f "report --quick WARM %e s wall (cpu user %U sys %S)" $M report --quick --out ${TMPDIR:-/tmp}/startup_bench/cw_$2_3 --seed 0 >/dev/null
uptime; } 2>&1
