#!/usr/bin/env bash
# A multicast entity from start to end, on real sockets in network namespaces: a gateway
# (`covey gateway`), three members (`covey serve --mc`) and a client on one bridge. The client
# creates a multicast entity, queries it (lst and avg, in SenML) through the gateway and
# directly at its group address, and deletes it; the members' /mc shows them join and leave.
# Everything is removed at the end (also on failure or Ctrl-C). Needs root and iproute2.
#
#   sudo ./scripts/entity-demo.sh            # COVEY=path/to/covey to use another binary
set -euo pipefail
cd "$(dirname "$0")/.."

COVEY=${COVEY:-target/release/covey}
if [ ! -x "$COVEY" ]; then
  cargo build --release -q -p covey-cli
fi
COVEY=$(realpath "$COVEY")

P="covey-demo-$$"
GW=1; MEMBERS=(2 3 4); CLIENT=5
addr() { printf 'fd00:de::%x' "$1"; }
DB=$(mktemp -d)/entities.db
PIDS=()

cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  for n in $CLIENT "${MEMBERS[@]}" $GW; do ip netns del "$P-h$n" 2>/dev/null || true; done
  ip netns del "$P-br" 2>/dev/null || true
  rm -rf "$(dirname "$DB")"
}
trap cleanup EXIT INT TERM

# The bridge in a namespace of its own; each host has eth0 on it with fd00:de::N/64 (no DAD)
# and a route for ff00::/8 (the groups are global scope: ff1e::89:N).
ip netns add "$P-br"
ip -n "$P-br" link add br0 type bridge mcast_snooping 0
ip -n "$P-br" link set br0 up
for n in $GW "${MEMBERS[@]}" $CLIENT; do
  ns="$P-h$n"
  ip netns add "$ns"
  ip -n "$ns" link set lo up
  ip link add "v$n" netns "$P-br" type veth peer name eth0 netns "$ns"
  ip -n "$P-br" link set "v$n" master br0 up
  ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=0
  ip -n "$ns" addr add "$(addr "$n")/64" dev eth0 nodad
  ip -n "$ns" link set eth0 up
  ip -n "$ns" -6 route add multicast ff00::/8 dev eth0 table local 2>/dev/null || true
done

in_ns() { local n=$1; shift; ip netns exec "$P-h$n" "$@"; }
# `ip netns exec` execs covey, so $! is covey's own PID.
ip netns exec "$P-h$GW" "$COVEY" gateway --bind '[::]:5683' --db "$DB" --open-management >/dev/null 2>&1 &
PIDS+=($!)
for n in "${MEMBERS[@]}"; do
  ip netns exec "$P-h$n" "$COVEY" serve --bind '[::]:5683' --mc --open-management >/dev/null 2>&1 &
  PIDS+=($!)
done
for n in $GW "${MEMBERS[@]}"; do
  for _ in $(seq 100); do
    in_ns $CLIENT "$COVEY" get -B 0.2 "coap://[$(addr "$n")]/.well-known/core" >/dev/null 2>&1 && break
    sleep 0.1
  done
done

# Runs a command in the client's namespace on a pseudo-terminal (so covey prints for people),
# showing it first as typed.
show() {
  printf '\n$ %s\n' "$*"
  local cmd
  cmd=$(printf '%q ' "$@")
  in_ns $CLIENT script -qec "$COVEY ${cmd#covey }" /dev/null | tr -d '\r' || true
}

gw="coap://[$(addr $GW)]"
m() { echo "coap://[$(addr "$1")]/sensors/temp"; }

echo "# gateway $(addr $GW), members $(addr 2) $(addr 3) $(addr 4), client $(addr $CLIENT)"
show covey entity create "$gw" cold --ect multicast --eo avg,lst \
  --member "$(m 2)" --member "$(m 3)" --member "$(m 4)"
show covey entity list "$gw"
show covey entity show "$gw" cold
show covey get "coap://[$(addr 2)]/mc"
show covey entity query "$gw" cold --eo lst --accept senml+json
show covey entity query "$gw" cold --eo avg --accept senml+json
show covey entity query "$gw" cold --eo avg
show covey get coap://[ff1e::89:1]/sensors/temp
show covey entity delete "$gw" cold
show covey get "coap://[$(addr 2)]/mc"
show covey entity list "$gw"
