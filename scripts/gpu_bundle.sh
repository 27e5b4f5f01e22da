#!/bin/bash
# The tests and benchmarks of a build made here, run on another x86-64 machine that has a GPU's OpenCL
# driver but no compiler, CMake or Debian packages (a lent GPU machine): `pack` gathers the binaries and the
# shared libraries they need beyond glibc and libstdc++ into one archive; `run` on the other machine unpacks
# it, points ocl-icd at the vendor's ICD library and runs the device-test slices in parallel (as ctest
# does), then the four benchmark tables (the suite, fused, views, every implementation side by side).
#
#   bash scripts/gpu_bundle.sh pack [BUILD_DIR] [ARCHIVE]         (here; defaults: build, .gpu/bundle.tar.xz)
#   bash scripts/gpu_bundle.sh run ARCHIVE OUT [tests] [bench]     (there, in a checkout of the same commit)
#
# `bench` runs the four tables; suite, fused, views and impls each run one of them (impls first: the
# implementations side by side are what a device's ranks are read from); batch times perf/batches' lists
# one launch each against batched launches (LAUNCH_ITEMS), with the kernels' profiled times and the host's,
# and brings back the kernel cache it filled; batch-log the driver's build logs of two lists' programs; ab
# runs perf/gpu_ab.txt's interleaved A/B timings; fused-bits the fused table with f16 in bit operations
# (CLREORDER_BUILD_OPTIONS=-DCR_SOFTWARE_F16), the builtins' alternative.
#
# The tests find the CLI at the build directory's absolute path compiled into them: `run` links that path to
# the unpacked build when nothing is there. Environment on `run`: CLREORDER_DEVICE (default nvidia),
# ICD_LIBRARY (default: the first libnvidia-opencl.so.1 found), TEST_LIMIT (seconds per slice, default 420),
# RUNS and REPEAT (the benchmarks', default 25 and 3), BENCH_LIMIT (seconds per table, default 300), SLICES
# (a file of test slices run instead of ctest's, with WHOLE's whole binaries, default the C API's, beside them).
set -u
mode=${1:-}
case $mode in
pack)
  build=$(cd "${2:-build}" && pwd) || exit 1
  archive=${3:-.gpu/bundle.tar.xz}
  stage=$(mktemp -d)
  trap 'rm -rf "$stage"' EXIT
  mkdir -p "$stage/build/tests" "$stage/build/perf" "$stage/lib"
  cp -a "$build"/clreorder "$build"/libclreorder.so* "$stage/build/" || exit 1
  for t in test_device test_c_api test_cli test_property test_oclgrind; do cp "$build/tests/$t" "$stage/build/tests/" || exit 1; done
  for p in clreorder_suite clreorder_ab clreorder_host_cost; do [ -e "$build/perf/$p" ] && cp "$build/perf/$p" "$stage/build/perf/"; done
  # Every library the binaries load from the system, but the C and C++ runtimes (the other machine's are
  # as new or newer) and the OpenCL driver itself.
  for f in "$stage"/build/clreorder "$stage"/build/tests/* "$stage"/build/perf/*; do ldd "$f"; done |
    awk '/=> \//{print $3}' | sort -u | grep -v -e "$build" -e '/libc\.so' -e '/libm\.so' -e '/libstdc++' -e '/libgcc_s' |
    while read -r lib; do cp -L "$lib" "$stage/lib/"; done
  echo "$build" > "$stage/build_dir"
  # The device-test slices as ctest runs them (tests/CMakeLists.txt, CLREORDER_DEVICE_GROUPS): name|filter.
  sed -n 's/^add_test(device\.\([a-z0-9_]*\) "[^"]*\/test_device" "--gtest_filter=\([^"]*\)")$/\1|\2/p' \
    "$build/tests/CTestTestfile.cmake" > "$stage/slices"
  [ -s "$stage/slices" ] || { echo "no device-test slices in $build/tests/CTestTestfile.cmake"; exit 1; }
  mkdir -p "$(dirname "$archive")"
  tar cJf "$archive" -C "$stage" . && echo "packed $(du -h "$archive" | cut -f1) into $archive (built in $build)"
  ;;
run)
  archive=${2:?archive}
  out=${3:?output directory}
  shift 3
  root=$(mktemp -d)
  tar xJf "$archive" -C "$root" || exit 1
  echo "unpacked into $root (left there: the build path may link to it)"
  mkdir -p "$out"
  build_dir=$(cat "$root/build_dir")
  if [ ! -e "$build_dir" ]; then
    mkdir -p "$(dirname "$build_dir")" && ln -s "$root/build" "$build_dir"
  elif [ "$(readlink -f "$build_dir")" != "$(readlink -f "$root/build")" ]; then
    echo "note: $build_dir exists; the tests that start the CLI run the one there"
  fi
  lib=${ICD_LIBRARY:-}
  if [ -z "$lib" ]; then
    for cand in $(ldconfig -p | awk '/libnvidia-opencl\.so\.1/{print $NF}') /usr/local/nvidia/lib64/libnvidia-opencl.so.1; do
      [ -e "$cand" ] && { lib=$cand; break; }
    done
  fi
  [ -n "$lib" ] || { echo "no ICD library: set ICD_LIBRARY"; exit 1; }
  mkdir -p "$root/icd" && echo "$lib" > "$root/icd/vendor.icd"
  export OCL_ICD_VENDORS=$root/icd LD_LIBRARY_PATH=$root/lib:$root/build CLREORDER_DEVICE=${CLREORDER_DEVICE:-nvidia} CI=true
  bin=$root/build
  "$bin/clreorder" devices && "$bin/clreorder" demo | tail -3 || exit 1
  status=0
  for phase in "$@"; do
    case $phase in
    tests)
      # The slices pack read from ctest's test list, each its own process; SLICES=FILE (a path in the
      # checkout, e.g. perf/gpu_slices_tail.txt) runs its lines instead, name|filter for test_device or
      # name|binary|filter for another test binary (the tests a call before left unrun at the limit, split finer).
      mapfile -t slices < <(grep -v -e '^#' -e '^[[:space:]]*$' "${SLICES:-$root/slices}")
      mkdir -p "$out/logs"
      export CLREORDER_CACHE_DIR=off CLREORDER_CONTEXT_CYCLES=${CLREORDER_CONTEXT_CYCLES:-100}
      limit=${TEST_LIMIT:-420}
      for s in "${slices[@]}"; do
        name=${s%%|*} filter=${s##*|} binary=test_device
        [ "${s#*|}" != "$filter" ] && { binary=${s#*|}; binary=${binary%%|*}; }
        (timeout -s KILL "$limit" "$bin/tests/$binary" --gtest_filter="$filter" > "$out/logs/device.$name.log" 2>&1
         echo "exit $?" >> "$out/logs/device.$name.log") &
      done
      [ -n "${SLICES:-}" ] && whole="${WHOLE:-c_api:test_c_api}" || whole="property:test_property sweep:test_oclgrind c_api:test_c_api cli:test_cli"
      for t in $whole; do
        (timeout -s KILL "$limit" "$bin/tests/${t#*:}" > "$out/logs/${t%%:*}.log" 2>&1; echo "exit $?" >> "$out/logs/${t%%:*}.log") &
      done
      wait
      for f in "$out"/logs/*.log; do
        printf '%-24s %s\n' "$(basename "$f" .log)" "$(tail -1 "$f")"
        grep -E '^\[  FAILED  \]' "$f" | sort -u
        [ "$(tail -1 "$f")" = "exit 0" ] || status=1
      done
      ;;
    bench|suite|fused|views|impls|fused-bits)
      export CLREORDER_CACHE_DIR=$root/kernel-cache
      kinds=$phase
      [ "$phase" = bench ] && kinds="suite fused views impls"
      for kind in $kinds; do
        flag=--${kind%-bits}
        [ $kind = suite ] && flag=
        # fused-bits: the fused table with f16 in bit operations rather than vstore_half (CLREORDER_BUILD_OPTIONS).
        opts=
        [ $kind = fused-bits ] && opts=-DCR_SOFTWARE_F16
        mkdir -p "$out/$kind"
        # Each row as it is measured into log.txt, so a table cut off by the limit still brings its rows back.
        CLREORDER_BUILD_OPTIONS=$opts timeout -s KILL "${BENCH_LIMIT:-300}" "$bin/perf/clreorder_suite" $flag --runs "${RUNS:-25}" \
          --repeat "${REPEAT:-3}" --out "$out/$kind" 2>&1 | tee "$out/$kind/log.txt" |
          grep -E '^geometric|^fused over|^view over|^the selector|^fastest:|^the choice' || status=1
      done
      ;;
    batch)
      # Issue 15's many small reorders: each list of perf/batches one launch each against batched launches of
      # at most each of LAUNCH_ITEMS items (default 64, one launch per list; e.g. "64 16 4").
      mkdir -p "$out/batch"
      # Its own kernel cache, brought back: the stored binaries are PTX on NVIDIA (calls, local frames, size).
      export CLREORDER_CACHE_DIR=$out/batch/cache
      for f in perf/batches/*.txt; do
        for li in ${LAUNCH_ITEMS:-64}; do
          n=$(basename "$f" .txt).$li
          timeout -s KILL "${BENCH_LIMIT:-300}" "$bin/clreorder" bench --batch "$f" --launch-items "$li" --runs "${RUNS:-25}" --json \
            > "$out/batch/$n.json" 2> "$out/batch/$n.err" || status=1
          printf '%-24s %s\n' "$n" "$(grep -E '"(launches|one_by_one_ms|batched_ms|speedup|batched_kernel_ms|one_by_one_kernel_ms|batched_enqueue_ms|exact)"' "$out/batch/$n.json" | tr -d ' \n')"
        done
      done
      ;;
    batch-log)
      # The driver's build log of every program a list's bench compiles, its items' own kernels and the batch's
      # (CLREORDER_BUILD_LOG=1: registers and spills on NVIDIA), compiled afresh (kernel cache off).
      mkdir -p "$out/batch-log"
      for f in ${BATCH_LOG_LISTS:-perf/batches/resnet50_f32.txt perf/batches/mobilenet_v2_f16.txt}; do
        n=$(basename "$f" .txt)
        CLREORDER_CACHE_DIR=off CLREORDER_BUILD_LOG=1 timeout -s KILL "${BENCH_LIMIT:-300}" "$bin/clreorder" bench --batch "$f" \
          --runs 3 > "$out/batch-log/$n.txt" 2> "$out/batch-log/$n.log" || status=1
        printf '%-24s %s programs logged\n' "$n" "$(grep -c '^clreorder: build log' "$out/batch-log/$n.log")"
      done
      ;;
    ab)
      # Code-generation questions a GPU answers (perf/gpu_ab.txt: clreorder_ab's arguments, a line each).
      mkdir -p "$out/ab"
      grep -v -e '^#' -e '^[[:space:]]*$' perf/gpu_ab.txt | while read -r line; do
        echo "== clreorder_ab $line" | tee -a "$out/ab/ab.txt"
        # shellcheck disable=SC2086  # a line is its words
        timeout -s KILL "${BENCH_LIMIT:-300}" "$bin/perf/clreorder_ab" $line 2>&1 | tee -a "$out/ab/ab.txt" | grep -E '^variant|error'
      done
      ;;
    *) echo "unknown phase '$phase' (tests, bench, suite, fused, fused-bits, views, impls, batch, batch-log, ab)"; status=2 ;;
    esac
  done
  exit $status
  ;;
*)
  sed -n '2,16p' "$0"
  exit 2
  ;;
esac
