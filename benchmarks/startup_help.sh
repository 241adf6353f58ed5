#!/bin/bash
# usage: help.sh SRC LABEL: import / --help / correlate --help timings (5 each), wall and CPU
export PYTHONPATH=$1
export NUMBA_CACHE_DIR=${TMPDIR:-/tmp}/startup_bench/cache_help
M=${METAEVAL:-$(command -v metaeval)}
{ echo "== $2 $1"; date -u; uptime
python -c "import metaeval; print(metaeval.__file__)"
for i in 1 2 3 4 5; do /usr/bin/time -f "import metaeval %e s (cpu %U+%S)" python -c "import metaeval"; done
for i in 1 2 3 4 5; do /usr/bin/time -f "metaeval --help %e s (cpu %U+%S)" $M --help >/dev/null; done
for i in 1 2 3 4 5; do /usr/bin/time -f "metaeval correlate --help %e s (cpu %U+%S)" $M correlate --help >/dev/null; done
for i in 1 2 3; do /usr/bin/time -f "python -c pass %e s (cpu %U+%S)" python -c pass; done
uptime; } 2>&1
