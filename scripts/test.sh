#!/usr/bin/env bash
# The whole test suite: installs what it needs when missing, then checks formatting, lints,
# runs every test (unit, property, interop with libcoap, aiocoap and Wireshark) and a short
# fuzz pass.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '\n== [%ss] %s\n' "$SECONDS" "$*"; }

# The fuzz step at the end needs a nightly toolchain (cargo fuzz's libFuzzer instrumentation)
# and installs cargo-fuzz into ~/.cargo/bin: say so now, not after twenty minutes of tests.
if ! rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
  echo "scripts/test.sh needs a nightly Rust toolchain for its fuzz step: rustup toolchain install nightly" >&2
  exit 1
fi

# Debian packages the interop tests run: libcoap's client/server and Wireshark's dissector.
need_debs=()
command -v coap-client-notls >/dev/null || need_debs+=(libcoap3-bin)
command -v tshark >/dev/null || need_debs+=(tshark)
# The coaps interop tests make their certificates with the openssl command.
command -v openssl >/dev/null || need_debs+=(openssl)
# The web console's browser tests: chromium driven through chromedriver.
command -v chromium >/dev/null || need_debs+=(chromium)
command -v chromedriver >/dev/null || need_debs+=(chromium-driver)
# The root-only tests build network namespaces with ip (and lab_interrupt signals with kill).
command -v ip >/dev/null || need_debs+=(iproute2)
[ -x /bin/kill ] || [ -x /usr/bin/kill ] || need_debs+=(procps)
# The mote's firmware runs under QEMU's lm3s6965evb (tests/mote.rs).
command -v qemu-system-arm >/dev/null || need_debs+=(qemu-system-arm)
# aiocoap runs in a virtual environment, which needs Python's venv module.
python3 -c 'import venv, ensurepip' 2>/dev/null || need_debs+=(python3-venv)
if [ ${#need_debs[@]} -gt 0 ]; then
  log "installing ${need_debs[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  echo "wireshark-common wireshark-common/install-setuid boolean false" | $sudo_cmd debconf-set-selections
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${need_debs[@]}" >/dev/null
fi

mkdir -p target
# A one-off build gains nothing from incremental state, which took 11 GB of disk.
export CARGO_INCREMENTAL=0

# aiocoap (PyPI) for the interop tests, in target/venv (ignored by git); pinned, with its
# oscore extra for tests/interop_oscore.rs.
AIOCOAP_VERSION=0.4.17
# grep reads all of pip's output: with -q it would exit early and pipefail would count pip's SIGPIPE.
installed() { "$1" show "$2" 2>/dev/null | grep -x "Version: $3" >/dev/null; }
# aiocoap's own list of what OSCORE lacks (it also checks OpenSSL's AES-CCM), and the server
# side's import: a venv made before the extra was asked for gets it added.
oscore_ready() {
  target/venv/bin/python -c 'import sys, aiocoap.defaults as d, aiocoap.oscore_sitewrapper
sys.exit(bool(d.oscore_missing_modules()))' 2>/dev/null
}
if ! installed target/venv/bin/pip aiocoap "$AIOCOAP_VERSION" || ! oscore_ready; then
  log "installing aiocoap[oscore] $AIOCOAP_VERSION into target/venv"
  python3 -m venv target/venv
  target/venv/bin/pip install -q "aiocoap[oscore]==$AIOCOAP_VERSION"
fi
# lakers-python, aiocoap's EDHOC, for tests/interop_edhoc.rs; pinned to what 0.4.17 speaks.
LAKERS_PYTHON_VERSION=0.6.2
if ! installed target/venv/bin/pip lakers-python "$LAKERS_PYTHON_VERSION"; then
  log "installing lakers-python $LAKERS_PYTHON_VERSION into target/venv"
  target/venv/bin/pip install -q "lakers-python==$LAKERS_PYTHON_VERSION"
fi

# The emulator's external programs (Mosquitto, Cyclone DDS in target/dds-venv).
scripts/lab-stacks.sh

log "format"
cargo fmt --all -- --check

log "lint"
cargo clippy --workspace --all-targets --quiet -- -D warnings
# The engine as a node's server builds it (firmware/covey-mote): none of its default features.
cargo clippy -p covey-proto --no-default-features --quiet -- -D warnings
# Its unit tests in that build, linted and run, with and without address validation (the
# mote's full build has it, its server build not).
for features in testing testing,address-validation; do
  cargo clippy -p covey-proto --no-default-features --features "$features" --lib \
    --profile test --quiet -- -D warnings
  cargo test -p covey-proto --no-default-features --features "$features" --lib --quiet
done

# The mote's firmware (firmware/covey-mote, its own workspace) for Cortex-M3; the mote tests
# boot it under QEMU and read its ELF.
log "mote firmware (thumbv7m-none-eabi)"
rustup target list --installed | grep -qx thumbv7m-none-eabi || rustup target add thumbv7m-none-eabi
(
  cd firmware/covey-mote
  cargo fmt -- --check
  cargo clippy --release --quiet -- -D warnings
  cargo build --release --quiet
  # The 6LoWPAN build is measured (tests/mote.rs), not run.
  cargo clippy --release --quiet --features sixlowpan --target-dir target/sixlowpan -- -D warnings
  cargo build --release --quiet --features sixlowpan --target-dir target/sixlowpan
  # The server build (no multicast groups, no address validation) is measured and flooded.
  cargo clippy --release --quiet --no-default-features --target-dir target/server -- -D warnings
  cargo build --release --quiet --no-default-features --target-dir target/server
)
export COVEY_MOTE_ELF="$PWD/firmware/covey-mote/target/thumbv7m-none-eabi/release/covey-mote"
export COVEY_MOTE_SIXLOWPAN_ELF="$PWD/firmware/covey-mote/target/sixlowpan/thumbv7m-none-eabi/release/covey-mote"
export COVEY_MOTE_SERVER_ELF="$PWD/firmware/covey-mote/target/server/thumbv7m-none-eabi/release/covey-mote"
# The no_std crates a node can use, OSCORE's included, build for it on their own.
CARGO_TARGET_DIR=target/thumbv7m cargo build --quiet --target thumbv7m-none-eabi \
  -p covey-core -p covey-proto -p covey-slip -p covey-ipv6-udp -p covey-oscore

# The engine on a 16-bit CPU (TelosB's MSP430): it compiles for msp430-none-elf with core and
# alloc built from source (nightly's rust-src); there is no MSP430 linker here to go further.
log "16-bit build (msp430-none-elf)"
rustup component list --toolchain nightly --installed | grep -q '^rust-src' \
  || rustup component add rust-src --toolchain nightly
CARGO_TARGET_DIR=target/msp430 cargo +nightly build --quiet -Z build-std=core,alloc \
  --target msp430-none-elf -p covey-core -p covey-proto -p covey-slip

log "the Entity Manager without SQLite and the driver"
cargo check -p covey-group --no-default-features --quiet

# The workspace builds the engine with OSCORE (the driver asks for it); the mote builds it
# without, where a request with the OSCORE option gets 4.02: test that build too.
log "the engine without its oscore feature"
cargo test -p covey-proto --quiet

# Tests that need root (network namespaces, the emulator's TUN devices) or an external stack
# installed above (libcoap, aiocoap, tshark, openssl, chromium, Mosquitto, Cyclone DDS) are
# #[ignore = "needs ..."]: a plain `cargo test` lists them as ignored. As root everything they
# need is here, so they run too.
log "tests"
ignored=()
if [ "$(id -u)" -eq 0 ]; then
  ignored=(--include-ignored)
else
  echo "not root: the ignored tests (root, network namespaces, external stacks) are not run"
fi
cargo test --workspace --quiet --no-run
# Test binaries that spend their minutes waiting on the wall clock run beside the others,
# which need the CPU: a minute of spoofed traffic each, counted byte by byte, and the
# protocols scenario's emulated links carrying each stack in turn (its medians differ by
# 50 ms or more, far beyond what a busy CPU adds). Cargo holds no lock while tests run. The
# others skip them by exact name.
waiting=(--test robustness_amplification --test robustness_amplification_budget --test lab_protocols)
mapfile -t waiting_names < <(cargo test -p covey-cli "${waiting[@]}" --quiet -- --list "${ignored[@]}" 2>/dev/null | sed -n 's/: test$//p')
[ ${#waiting_names[@]} -gt 0 ] || { echo "no waiting tests listed"; exit 1; }
# A test elsewhere of the same name would be skipped and run nowhere: refuse that.
dups=$(cargo test --workspace --lib --bins --tests --quiet -- --list "${ignored[@]}" 2>/dev/null \
  | sed -n 's/: test$//p' | sort | uniq -d | grep -Fxf <(printf '%s\n' "${waiting_names[@]}") || true)
[ -z "$dups" ] || { echo "test names also used outside the waiting tests: $dups"; exit 1; }
skip=()
for name in "${waiting_names[@]}"; do skip+=(--skip "$name"); done
cargo test -p covey-cli "${waiting[@]}" --quiet -- "${ignored[@]}" >target/test-output-waiting.txt 2>&1 &
waiting_pid=$!
status=0
# --no-fail-fast: one failing binary does not hide what the others would say.
cargo test --workspace --quiet --no-fail-fast -- "${ignored[@]}" --exact "${skip[@]}" 2>&1 | tee target/test-output.txt || status=1
wait "$waiting_pid" || status=1
cat target/test-output-waiting.txt >>target/test-output.txt
[ "$status" -eq 0 ] || { cat target/test-output-waiting.txt; echo "tests failed"; exit 1; }
# Fail loudly if the harness ran nothing (a broken filter or an empty suite).
grep -q "test result: ok. [1-9]" target/test-output.txt

log "fuzz smoke (${FUZZ_SECONDS:=10} s per target)"
# cargo fuzz needs nightly (checked at the start); cargo-fuzz goes into ~/.cargo/bin.
command -v cargo-fuzz >/dev/null || cargo install --quiet --locked cargo-fuzz
for target in message uri link_format slip ipv6_udp oscore; do
  scratch=$(mktemp -d)
  # New inputs go to the scratch corpus; the committed seeds are only read.
  if ! cargo +nightly fuzz run "$target" "$scratch" "fuzz/corpus/$target" -- \
      -max_total_time="$FUZZ_SECONDS" >"target/fuzz-$target.log" 2>&1; then
    tail -n 40 "target/fuzz-$target.log"
    echo "fuzz target $target failed (see fuzz/artifacts/$target)"
    exit 1
  fi
  printf '%s: %s\n' "$target" "$(grep -Eo 'Done [0-9]+ runs in [0-9]+ second' "target/fuzz-$target.log" | tail -n 1)"
  rm -rf "$scratch"
done

log "all tests passed"
