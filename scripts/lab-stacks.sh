#!/usr/bin/env bash
# The external programs the lab's emulator scenarios run beside covey (the protocols
# scenario, covey-cli's lab tests): Debian's Mosquitto broker, and Cyclone DDS's Python
# binding (PyPI; it ships the C library) in target/dds-venv (ignored by git), pinned.
# Idempotent: installs only what is missing. covey-emu only finds these programs, and names
# this script when one is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '\n== %s\n' "$*"; }

CYCLONEDDS_VERSION=11.0.1
DDS_VENV=target/dds-venv

need_debs=()
[ -x /usr/sbin/mosquitto ] || need_debs+=(mosquitto)
# The DDS virtual environment needs Python's venv module.
python3 -c 'import venv, ensurepip' 2>/dev/null || need_debs+=(python3-venv)
if [ ${#need_debs[@]} -gt 0 ]; then
  log "installing ${need_debs[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${need_debs[@]}" >/dev/null
fi

# grep reads all of pip's output: with -q it would exit early and pipefail would count pip's SIGPIPE.
if ! "$DDS_VENV/bin/pip" show cyclonedds 2>/dev/null | grep -x "Version: $CYCLONEDDS_VERSION" >/dev/null; then
  log "installing cyclonedds $CYCLONEDDS_VERSION into $DDS_VENV"
  mkdir -p target
  python3 -m venv "$DDS_VENV"
  "$DDS_VENV/bin/pip" install -q "cyclonedds==$CYCLONEDDS_VERSION"
fi
