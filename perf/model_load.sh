#!/usr/bin/env bash
# Time to results in a new process: the first reorder, and a 50-reorder model load one by one and batched
# (prepare), under the default policy (background: the shape-agnostic kernel at once) and under wait (compile
# each specialised kernel first), each with every cache cold (empty PoCL and clreorder cache directories) and
# warm (after two processes ran the same load, the first until its background compiles and stores ended, as a
# runtime that keeps running would; PoCL compiles a kernel's work-group function at its first launch, and
# keeps it in its own cache from then on). Each figure is the median of RUNS fresh processes.
#   Usage: perf/model_load.sh [BUILD_DIR] [RUNS]
set -euo pipefail
build="${1:-build}"
runs="${2:-3}"
bin="$build/perf/clreorder_model_load"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
field() { sed -E "s/.*\"$1\": ?([0-9.]+).*/\1/"; }
echo "| what | policy | caches | ms (median of $runs processes) | programs compiled / loaded | results by the agnostic kernel |"
echo "|---|---|---|---:|---:|---:|"
for what in "first background" "first wait" "one-by-one background" "one-by-one wait" "batched wait"; do
  read -r mode policy <<<"$what"
  for state in cold warm; do
    times=()
    line=""
    for r in $(seq "$runs"); do
      dir="$work/$mode-$policy-$r"
      if [ "$state" = cold ]; then rm -rf "$dir"; fi
      mkdir -p "$dir/pocl" "$dir/clreorder"
      if [ "$state" = warm ] && [ ! -e "$dir/.warmed" ]; then
        POCL_CACHE_DIR="$dir/pocl" CLREORDER_CACHE_DIR="$dir/clreorder" "$bin" "$mode" "$policy" --settle >/dev/null
        POCL_CACHE_DIR="$dir/pocl" CLREORDER_CACHE_DIR="$dir/clreorder" "$bin" "$mode" "$policy" >/dev/null
        touch "$dir/.warmed"
      fi
      line=$(POCL_CACHE_DIR="$dir/pocl" CLREORDER_CACHE_DIR="$dir/clreorder" "$bin" "$mode" "$policy")
      times+=("$(echo "$line" | field ms)")
    done
    ms=$(printf '%s\n' "${times[@]}" | median)
    echo "| $mode ($(echo "$line" | field reorders) reorders) | $policy | $state | $ms | $(echo "$line" | field programs_compiled) / $(echo "$line" | field programs_loaded) | $(echo "$line" | field agnostic_runs) |"
  done
done
