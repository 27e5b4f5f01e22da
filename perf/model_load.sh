#!/usr/bin/env bash
# Time to results in a new process: the first reorder, and a 50-reorder model load batched (prepare) and one by
# one, each with every cache cold (empty PoCL and clreorder cache directories) and warm (the same process run
# just before). Each figure is the median of RUNS fresh processes.  Usage: perf/model_load.sh [BUILD_DIR] [RUNS]
set -euo pipefail
build="${1:-build}"
runs="${2:-3}"
bin="$build/perf/clreorder_model_load"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
field() { sed -E "s/.*\"$1\": ([0-9.]+).*/\1/"; }
echo "| what | caches | ms (median of $runs processes) | programs compiled / loaded |"
echo "|---|---|---:|---:|"
for mode in first batched one-by-one; do
  for state in cold warm; do
    times=()
    line=""
    for r in $(seq "$runs"); do
      dir="$work/$mode-$r"
      if [ "$state" = cold ]; then rm -rf "$dir"; fi
      mkdir -p "$dir/pocl" "$dir/clreorder"
      if [ "$state" = warm ] && [ ! -e "$dir/.warmed" ]; then
        POCL_CACHE_DIR="$dir/pocl" CLREORDER_CACHE_DIR="$dir/clreorder" "$bin" "$mode" >/dev/null
        touch "$dir/.warmed"
      fi
      line=$(POCL_CACHE_DIR="$dir/pocl" CLREORDER_CACHE_DIR="$dir/clreorder" "$bin" "$mode")
      times+=("$(echo "$line" | field ms)")
    done
    ms=$(printf '%s\n' "${times[@]}" | median)
    echo "| $mode ($(echo "$line" | field reorders) reorders) | $state | $ms | $(echo "$line" | field programs_compiled) / $(echo "$line" | field programs_loaded) |"
  done
done
