#!/usr/bin/env bash
# Full benchmark run; regenerates docs/performance.md and docs/performance.png.
#
#   bash bench/run_all.sh                 # every case, 1 and 2 threads (~15-20 min)
#   bash bench/run_all.sh --case Layer    # extra options go to `python -m normops bench`
#
# Environment: PYTHON (default python), OUT (raw results, default bench/results).
# Run it on a quiet machine: anything else running disturbs the timings, the
# 2-thread ones most (the page records the load average at start and end).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python}"
OUT="${OUT:-bench/results}"

"$PYTHON" -c "import normops, normops.benchmark" || {
    echo "run_all.sh: normops does not import (build the extension first)" >&2
    exit 1
}
"$PYTHON" -m normops bench \
    --bandwidth \
    --batch \
    --threads 1,2 \
    --runtimes normops-exact,normops-fast,onnxruntime,onnxruntime-iobinding,numpy,torch \
    --out "$OUT" \
    "$@"
"$PYTHON" -m normops.benchmark.report "$OUT/results.json" \
    --page docs/performance.md --plot docs/performance.png
