#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz, clang with ASan and UBSan) in build-fuzz/ (or --build-dir) and
# runs each for a bounded time, starting from its seed corpus in tests/fuzz/corpus/<target>/ (read, never
# written: new inputs go to a scratch directory). Fails if any target finds a crash, a leak, undefined
# behaviour or a timeout; the input that did it is left in the build directory and its path printed.
#   bash scripts/fuzz.sh                 20 s per target, all at once (what .ci/run does: about 20 s)
#   bash scripts/fuzz.sh --seconds 3600  an hour per target
#   bash scripts/fuzz.sh --seconds 600 --only cli_args
#   bash scripts/fuzz.sh --build-dir build-asan   the targets of a clang build configured with -DCLREORDER_FUZZ=ON
#                                                 (.ci/run's sanitizer build), instead of build-fuzz/
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
seconds=20
only=""
build=""
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    --build-dir) build="$2"; shift 2 ;;
    *) echo "fuzz.sh: unknown option '$1' (use --seconds N, --only TARGET, --build-dir DIR)" >&2; exit 2 ;;
  esac
done
command -v clang++ >/dev/null || { echo "fuzz.sh: clang++ is missing (bash scripts/setup.sh installs it)" >&2; exit 2; }
if [ -z "$build" ]; then
  build=build-fuzz
  # -O1 -g1: line tables for the reports, at a shorter build than -O2 -g (CI's budget); coverage is the same.
  CXX=clang++ cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" \
    -DCLREORDER_FUZZ=ON -DCLREORDER_WERROR=ON \
    -DCLREORDER_BUILD_TESTS=OFF -DCLREORDER_BUILD_PERF=OFF -DCLREORDER_BUILD_EXAMPLES=OFF >/dev/null
elif ! grep -q '^CLREORDER_FUZZ:BOOL=ON$' "$build/CMakeCache.txt" 2>/dev/null; then
  echo "fuzz.sh: '$build' is not a build configured with -DCLREORDER_FUZZ=ON" >&2
  exit 2
fi
cmake --build "$build" -j"$(nproc)" --target fuzz_format_name fuzz_layout_text fuzz_cli_args >/dev/null
# The targets run at once (each is one process on one core; CI's budget counts wall time), then each log is read.
targets=()
for target in format_name layout_text cli_args; do
  [ -n "$only" ] && [ "$only" != "$target" ] && continue
  targets+=("$target")
done
pids=()
scratches=()
for target in "${targets[@]}"; do
  scratch=$(mktemp -d "${TMPDIR:-/tmp}/clreorder-fuzz-$target.XXXXXX")
  scratches+=("$scratch")
  # -timeout: one input may take 10 s at most (a hang is a failure); -rss_limit_mb: a leak or a runaway
  # allocation is one too.
  (cd "$build" && "tests/fuzz/fuzz_$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 \
     -max_len=1024 -print_final_stats=1 "$scratch" "$root/tests/fuzz/corpus/$target") >"$build/fuzz_$target.log" 2>&1 &
  pids+=($!)
done
total=0
failed=0
for i in "${!targets[@]}"; do
  target=${targets[$i]}
  log="$build/fuzz_$target.log"
  if ! wait "${pids[$i]}"; then
    echo "fuzz.sh: fuzz_$target failed; the end of $log:"
    tail -n 40 "$log"
    failed=1
    continue
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  echo "fuzz.sh: fuzz_$target: ${runs:-?} executions in ${seconds} s, no crash, leak or undefined behaviour"
  total=$((total + ${runs:-0}))
done
rm -rf "${scratches[@]}"
[ "$failed" -eq 0 ] || exit 1
echo "fuzz.sh: $total executions in all"
