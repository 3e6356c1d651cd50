#!/usr/bin/env bash
# Release artifacts: the four programs stripped, each with its debug information split into
# NAME.debug beside it and linked by .gnu_debuglink (gdb and perf find it there), as Debian
# packages ship theirs.
#   scripts/dist.sh             build release and write target/dist/
#   scripts/dist.sh FROM OUT    split already built programs in FROM into OUT
set -euo pipefail
cd "$(dirname "$0")/.."

programs=(covey covey-gateway covey-lab covey-bench)
if [ $# -eq 0 ]; then
  cargo build --release -p covey-cli
  from=target/release
  out=target/dist
elif [ $# -eq 2 ]; then
  from=$1
  out=$2
else
  echo "usage: scripts/dist.sh [FROM OUT]" >&2
  exit 2
fi
command -v objcopy >/dev/null || { echo "dist.sh needs objcopy (binutils)" >&2; exit 1; }

mkdir -p "$out"
for p in "${programs[@]}"; do
  [ -f "$from/$p" ] || { echo "no $from/$p: build it first (cargo build --release -p covey-cli)" >&2; exit 1; }
  objcopy --only-keep-debug "$from/$p" "$out/$p.debug"
  objcopy --strip-debug --strip-unneeded "$from/$p" "$out/$p"
  # The link names the file only; gdb looks for it beside the program.
  (cd "$out" && objcopy --add-gnu-debuglink="$p.debug" "$p")
  printf '%-14s %9d bytes (debug information: %d bytes in %s.debug)\n' \
    "$p" "$(stat -c %s "$out/$p")" "$(stat -c %s "$out/$p.debug")" "$p"
done
