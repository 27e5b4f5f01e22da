#!/usr/bin/env bash
# Runs a command under Oclgrind (a simulated GPU that checks every memory access) and fails when the command
# fails or Oclgrind reports anything: an invalid access, a data race, an API misuse, an uninitialized value.
# Oclgrind itself exits 0 after such reports, so they are collected with --log and the log must stay empty.
#   oclgrind_check.sh [oclgrind options ...] -- command [args ...]
set -uo pipefail
opts=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do opts+=("$1"); shift; done
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || { echo "usage: oclgrind_check.sh [oclgrind options] -- command [args]" >&2; exit 2; }
command -v oclgrind >/dev/null || { echo "oclgrind is not installed (bash scripts/setup.sh installs it)" >&2; exit 2; }
log=$(mktemp "${TMPDIR:-/tmp}/oclgrind-log.XXXXXX")
trap 'rm -f "$log"' EXIT
# Line-buffered stdout: a process that aborts at exit would otherwise lose what it printed.
CLREORDER_EXPECT_OCLGRIND=1 stdbuf -oL oclgrind --log "$log" "${opts[@]}" "$@"
rc=$?
if [ -s "$log" ]; then
  echo "oclgrind_check: Oclgrind reported $(grep -c '^[A-Z]' "$log") diagnostic(s); the first ones:"
  head -n 60 "$log"
  exit 1
fi
if [ "$rc" -ne 0 ]; then
  echo "oclgrind_check: the command exited with status $rc under Oclgrind"
  exit "$rc"
fi
echo "oclgrind_check: no diagnostics, exit status 0"
