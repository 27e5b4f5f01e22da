#!/usr/bin/env bash
# Installs clreorder's build and test dependencies from Debian, only what is missing.
# Idempotent and quiet when everything is already present. oclgrind is the second OpenCL implementation the
# tests run on (a simulated GPU that checks every access); clang and libclang-rt build the libFuzzer targets.
# CLI11 and nlohmann-json (header-only) parse the CLI's arguments and write its JSON; pkgconf checks clreorder.pc.
#   --perf  also installs oneDNN (libdnnl-dev), which perf/ then times beside clreorder.
set -euo pipefail

pkgs=(cmake g++ make ocl-icd-opencl-dev opencl-headers opencl-clhpp-headers pocl-opencl-icd clinfo oclgrind
      googletest libgtest-dev libbenchmark-dev clang libclang-rt-14-dev libpng-dev librsvg2-bin
      libxxhash-dev libcli11-dev nlohmann-json3-dev pkgconf)
for arg in "$@"; do
  case "$arg" in
    --perf) pkgs+=(libdnnl-dev) ;;
    *) echo "setup.sh: unknown option '$arg' (use --perf)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "setup: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
