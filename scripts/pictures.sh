#!/usr/bin/env bash
# Redraws README's memory map figures (docs/pictures/*.svg) with the CLI; tests/test_picture.cpp checks that
# the committed files are what these lines draw today.  Usage: scripts/pictures.sh [BUILD_DIR]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cli="${1:-$root/build}/clreorder"
draw() {
  local name="$1"
  shift
  "$cli" explain "$@" --svg "$root/docs/pictures/$name.svg" >/dev/null
}
draw bfyx bfyx --shape 1,3,4,4
draw b_fs_yx_fsv16_tail b_fs_yx_fsv16 --shape 1,20,2,2
draw os_is_yx_isv16_osv16 os_is_yx_isv16_osv16 --shape 16,20,1,1
draw strided_view bfyx --shape 1,2,3,3 --strides 40,12,4,1 --offset 5
draw tpu_aligned 'tpu_aligned(npus=4,npu_bytes=1024,addr=0)' --shape 2,3,4,5
draw tpu_compact_4n 'tpu_compact(npus=4,npu_bytes=1024,addr=0,mode=4n)' --shape 6,5,4,5 --dtype i8
