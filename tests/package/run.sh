#!/usr/bin/env bash
# Installs a clreorder build into a temporary prefix and builds and runs consumers against it, as a
# runtime would: C++ through find_package (tests/package/CMakeLists.txt), C through pkg-config, each linked
# against the shared and the static library; and the installed CLI, which must find its library.
#   tests/package/run.sh BUILD_DIR WORK_DIR
# Every consumer runs examples/model_load.{c,cpp}, which reorders weights on the default device and checks
# them. Exit 77 when there is no device (a failure under CI=true).
set -euo pipefail
build=$(realpath "$1")
work=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"
work=$(realpath "$work")
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(dirname "$(find "$prefix" -name libclreorder.a)")
export PKG_CONFIG_PATH=$libdir/pkgconfig
# One kernel cache for every consumer: the first run compiles, the rest load.
export CLREORDER_CACHE_DIR=$work/kernels

fail() { echo "package: $*" >&2; exit 1; }
# Runs one consumer; exit 2 from an example means no device.
run() {
  local status=0
  "$@" >"$work/out.txt" 2>&1 || status=$?
  if [ "$status" -eq 2 ] && [ "${CI:-}" != "true" ]; then echo "package: no OpenCL device, skipped"; exit 77; fi
  [ "$status" -eq 0 ] || { cat "$work/out.txt" >&2; fail "$* exited $status"; }
  echo "ran $(basename "$1")"
}
needs_shared() {
  readelf -d "$1" | grep -q "NEEDED.*libclreorder\.so\.0\.2" || fail "$1 does not link libclreorder.so.0.2"
}
needs_no_shared() {
  if readelf -d "$1" | grep -q "NEEDED.*libclreorder"; then fail "$1 links libclreorder dynamically"; fi
}

# The pc file and the library agree on the version, and the SONAME carries major.minor.
version=$("$prefix/bin/clreorder" --version | awk '{print $2}')
[ "$(pkg-config --modversion clreorder)" = "$version" ] || fail "clreorder.pc says $(pkg-config --modversion clreorder), the CLI $version"
readelf -d "$libdir/libclreorder.so" | grep -q "SONAME.*\[libclreorder\.so\.${version%.*}\]" || fail "no SONAME libclreorder.so.${version%.*}"

# The installed CLI finds the installed library, not the build tree's.
loaded=$(ldd "$prefix/bin/clreorder" | awk '/libclreorder/ {print $3}')
[ -n "$loaded" ] && [ "$(dirname "$(realpath "$loaded")")" = "$libdir" ] || fail "installed CLI loads '$loaded', not $libdir's library"
"$prefix/bin/clreorder" formats >/dev/null || fail "installed CLI"

# C++ with find_package.
cmake -S "$here" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/cmake" -j"$(nproc)" >"$work/cmake-build.txt" 2>&1 || { cat "$work/cmake-build.txt" >&2; fail "consumer build"; }
for kind in cpp c; do
  needs_shared "$work/cmake/${kind}_clreorder"
  needs_no_shared "$work/cmake/${kind}_clreorder_static"
  run "$work/cmake/${kind}_clreorder"
  run "$work/cmake/${kind}_clreorder_static"
done

# C with pkg-config: the shared library, then the static one with --static's private libraries.
cc=${CC:-cc}
src=$here/../../examples/model_load.c
flags=(-std=c99 -Wall -Wextra -Werror -pedantic)
# shellcheck disable=SC2046
"$cc" "${flags[@]}" $(pkg-config --cflags clreorder) "$src" -o "$work/c_pkgconfig" $(pkg-config --libs clreorder) \
  -Wl,-rpath,"$(pkg-config --variable=libdir clreorder)"
needs_shared "$work/c_pkgconfig"
run "$work/c_pkgconfig"
# shellcheck disable=SC2046
"$cc" "${flags[@]}" $(pkg-config --cflags clreorder) "$src" -o "$work/c_pkgconfig_static" \
  $(pkg-config --static --libs clreorder | sed 's/-lclreorder\b/-l:libclreorder.a/')
needs_no_shared "$work/c_pkgconfig_static"
run "$work/c_pkgconfig_static"
echo "package: installed into $prefix; 6 consumers built and ran"
