#!/bin/bash
# One call of the lent GPU machine (the device tool runs it in a copy of this checkout, with the archive
# `bash scripts/gpu_bundle.sh pack build .gpu/bundle.tar.xz` made here carried in .gpu): every implementation
# side by side in the device's own tuning first (what its ranks are read from), then the device-test slices;
# everything it wrote under $OUT packed into one archive, since the tool brings back at most 8 files. Each
# phase ends itself (BENCH_LIMIT, TEST_LIMIT seconds), so that the archive is made inside the call's limit.
# PHASES picks what runs (gpu_bundle.sh's phases, in order: tests impls suite fused fused-bits views batch
# batch-log ab bench; default: impls tests).
# TOTAL_LIMIT (seconds, default 540) ends the phases as a whole, so that the archive is made even when the
# phases together outrun the call.
#   OUT=DIR [PHASES="impls tests" RUNS=10 REPEAT=3 BENCH_LIMIT=220 TEST_LIMIT=200 TOTAL_LIMIT=540] bash scripts/gpu_run.sh [ARCHIVE]
set -u
archive=${1:-.gpu/bundle.tar.xz}
res=$OUT/r
mkdir -p "$res"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv > "$res/gpu.txt" 2>&1
# One unpack for both phases; each reads its own limit.
RUNS=${RUNS:-10} REPEAT=${REPEAT:-3} BENCH_LIMIT=${BENCH_LIMIT:-220} TEST_LIMIT=${TEST_LIMIT:-200} \
  timeout -s KILL "${TOTAL_LIMIT:-540}" bash scripts/gpu_bundle.sh run "$archive" "$res" ${PHASES:-impls tests} 2>&1 | tee "$res/run.txt"
tar czf "$OUT/results.tar.gz" -C "$OUT" r && rm -rf "$res"
