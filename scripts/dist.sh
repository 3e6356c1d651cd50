#!/usr/bin/env bash
# Release artifacts: the four programs stripped, each with its debug information split into
# NAME.debug beside it and linked by .gnu_debuglink (gdb and perf find it there), as Debian
# packages ship theirs.
#   scripts/dist.sh             build release and write target/dist/
#   scripts/dist.sh FROM OUT    split already built programs in FROM into OUT
#
# The full build lays out first the functions a server runs to start and to idle, so it
# pages in that code and not every page the kernel's fault-around maps beside scattered
# functions. The functions are read off the programs themselves: `covey serve`, `covey
# gateway` and `covey get` run once under valgrind's callgrind, and the programs are linked
# again with that list (crates/covey-cli/build.rs, COVEY_SYMBOL_ORDER). Without valgrind the
# second link is skipped, with a warning. (Linking glibc statically saved another 0.7 MiB of
# idle RSS but cost 15-20 % requests/s, so the programs stay dynamic: docs/performance.md.)
set -euo pipefail
cd "$(dirname "$0")/.."

programs=(covey covey-gateway covey-lab covey-bench)

# Runs "$@" under callgrind, asks the server it starts for PATH once, stops it, and prints
# the functions it ran, one symbol a line.
profile_server() {
  local work=$1 name=$2 path=$3
  shift 3
  valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/$name.out" "$@" \
    >"$work/$name.log" 2>&1 &
  local pid=$! port=""
  for _ in $(seq 600); do
    port=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$work/$name.log" | head -1 | cut -d: -f2 || true)
    [ -n "$port" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if [ -z "$port" ]; then
    echo "dist.sh: $name did not start under valgrind:" >&2
    cat "$work/$name.log" >&2
    kill "$pid" 2>/dev/null || true
    return 1
  fi
  valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/get.out" \
    "$from/covey" get "coap://127.0.0.1:$port$path" >"$work/get.log" 2>&1 || true
  sleep 1
  kill -TERM "$pid"
  wait "$pid" || true
  for out in "$work/$name.out" "$work/get.out"; do
    # Callgrind names a function once, as "fn=(ID) NAME" or "cfn=(ID) NAME"; addresses
    # without a symbol and its own pseudo-functions are no use to the linker.
    grep -ohE '^c?fn=\([0-9]+\) .*' "$out" | sed -E 's/^c?fn=\([0-9]+\) //' \
      | grep -vE '^(0x|\(below main\))' || true
  done
}

if [ $# -eq 0 ]; then
  out=target/dist
  from=${CARGO_TARGET_DIR:-target}/release
  mkdir -p "$out"
  build() {
    cargo build --release -p covey-cli
  }
  export COVEY_SYMBOL_ORDER=""
  build
  if command -v valgrind >/dev/null; then
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    {
      # With -v, so the request log's code is laid out with the rest.
      profile_server "$work" serve /time "$from/covey" serve --bind 127.0.0.1:0 -v
      profile_server "$work" gateway /e "$from/covey-gateway" --bind 127.0.0.1:0 \
        --db "$work/entities.db" --http 127.0.0.1:0 -v
    } | awk '!seen[$0]++' >"$out/symbol-order.txt"
    echo "dist.sh: $(wc -l <"$out/symbol-order.txt") functions laid out first"
    COVEY_SYMBOL_ORDER=$(realpath "$out/symbol-order.txt") build
  else
    echo "dist.sh: no valgrind, so the start-up functions are not laid out first" >&2
  fi
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
