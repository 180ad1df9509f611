#!/usr/bin/env bash
# Full benchmark run; regenerates docs/performance.md and its figures
# (docs/perf_vs_ort.png, docs/perf_vs_numpy.png, docs/perf_<family>.png)
# from ONE interleaved run.
#
#   bash bench/run_all.sh                 # every case, 1 and 2 threads (~20 min on 2 cores)
#   bash bench/run_all.sh --case Layer    # extra options go to `python -m normops bench`
#
# What it measures, in one command:
# - every case interleaved (normops exact/fast, ONNX Runtime, NumPy, SciPy,
#   torch if installed, normops.run against the named functions) in one
#   process per thread count, spinning off on both sides;
# - the busy-core cases again with one core kept busy (--busy-core);
# - the operator cases one runtime per process (--separate), the page's
#   second table; memory bandwidth; map_batch throughput;
# - 1 thread against 2 per case, back to back and after idle gaps, under
#   both OpenMP wait policies (--scaling).
#
# Environment: PYTHON (default python), OUT (raw results, default bench/results).
# Run it on a quiet machine: anything else running disturbs the timings, the
# 2-thread ones most (the page records the load average at start and end).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python}"
OUT="${OUT:-bench/results}"

"$PYTHON" -c "import normops, normops_tools.benchmark" || {
    echo "run_all.sh: normops does not import (build the extension first)" >&2
    exit 1
}
# the page's comparisons and figures: checked before the old figures go
"$PYTHON" -c "import onnx, onnxruntime, scipy, matplotlib" || {
    echo "run_all.sh: $PYTHON lacks onnx, onnxruntime, scipy or matplotlib:" \
         "pip install -e '.[ort,plot]' scipy (or '.[test]')" >&2
    exit 1
}
"$PYTHON" -m normops bench \
    --interleave \
    --busy-core \
    --separate \
    --bandwidth \
    --batch \
    --scaling \
    --threads 1,2 \
    --out "$OUT" \
    "$@"
# the figures of an earlier run (a family may have gone), and the retired
# one-image plot
rm -f docs/perf_*.png docs/performance.png
"$PYTHON" -m normops_tools.benchmark.report "$OUT/results.json" --page docs/performance.md --figures docs
echo "run_all.sh: done in $((SECONDS / 60)) min $((SECONDS % 60)) s"
