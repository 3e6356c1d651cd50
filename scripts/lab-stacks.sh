#!/usr/bin/env bash
# The external programs the lab's emulator scenarios run beside covey (the protocols
# scenario, covey-cli's lab tests): Debian's Mosquitto broker, and Cyclone DDS's Python
# binding (PyPI; it ships the C library) in target/dds-venv (ignored by git), pinned.
# For DDS over TCP (the protocols scenario's dds-tcp), target/dds-tcp-venv: the PyPI wheels'
# C library has no TCP transport, so the binding's 0.10 source is built against Debian's
# Cyclone DDS 0.10 (cyclonedds-dev), which has.
# Idempotent: installs only what is missing. covey-emu only finds these programs, and names
# this script when one is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '\n== %s\n' "$*"; }

CYCLONEDDS_VERSION=11.0.1
DDS_VENV=target/dds-venv
# The binding release that matches Debian bookworm's libddsc 0.10.2.
CYCLONEDDS_TCP_VERSION=0.10.5
DDS_TCP_VENV=target/dds-tcp-venv

need_debs=()
[ -x /usr/sbin/mosquitto ] || need_debs+=(mosquitto)
# The DDS virtual environment needs Python's venv module.
python3 -c 'import venv, ensurepip' 2>/dev/null || need_debs+=(python3-venv)
# DDS over TCP: Debian's Cyclone DDS and what building the binding against it takes.
[ -e /usr/include/dds/dds.h ] || need_debs+=(cyclonedds-dev)
[ -x /usr/bin/idlc ] || need_debs+=(cyclonedds-tools)
command -v gcc >/dev/null || need_debs+=(gcc)
python3 -c 'import sysconfig, os, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' 2>/dev/null || need_debs+=(python3-dev)
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

if ! "$DDS_TCP_VENV/bin/pip" show cyclonedds 2>/dev/null | grep -x "Version: $CYCLONEDDS_TCP_VERSION" >/dev/null; then
  log "building cyclonedds $CYCLONEDDS_TCP_VERSION against Debian's libddsc into $DDS_TCP_VENV"
  # The binding's build looks for CYCLONEDDS_HOME/{include,lib,bin}; Debian spreads them
  # over /usr/include, the multiarch library folder and /usr/bin.
  home=target/cdds-home
  multiarch=$(gcc -print-multiarch)
  mkdir -p "$home/lib" "$home/bin"
  ln -sfn /usr/include "$home/include"
  ln -sfn "/usr/lib/$multiarch/cmake" "$home/lib/cmake"
  ln -sf /usr/lib/"$multiarch"/libddsc.so* /usr/lib/"$multiarch"/libcycloneddsidl.so* "$home/lib/"
  ln -sf /usr/bin/idlc "$home/bin/"
  python3 -m venv "$DDS_TCP_VENV"
  CYCLONEDDS_HOME="$PWD/$home" "$DDS_TCP_VENV/bin/pip" install -q \
    --no-binary cyclonedds "cyclonedds==$CYCLONEDDS_TCP_VERSION"
fi
