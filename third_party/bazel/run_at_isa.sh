#!/usr/bin/env bash
# run_at_isa.sh CPU TEST [ARGS...]: runs a test binary on this CPU ("native", the level set by
# the caller's GPT_SFT_CPU_ISA) or on a CPU model that QEMU's user mode emulates (Haswell-v4:
# AVX2 and FMA, no AVX-512; qemu64: SSE2 to SSE3, no AVX). Under emulation CPUID reports that
# CPU, so base/cpu_isa.h decides that level on its own, and any instruction above it, reached
# by a kernel that bypassed the decision, ends the test with SIGILL (exit 132). Used by
# isa_levels.bzl.
set -euo pipefail
cpu="$1"
shift
if [[ "$cpu" == native ]]; then
  exec "$@"
fi
if ! command -v qemu-x86_64 >/dev/null; then
  echo "run_at_isa.sh: qemu-x86_64 is missing; ./bazelw installs it (qemu-user in third_party/debian_packages.lock)" >&2
  exit 1
fi
case "$cpu" in
  # The host-virtualisation bits TCG cannot emulate, off so QEMU does not warn about each.
  Haswell-v4) cpu="Haswell-v4,-pcid,-x2apic,-tsc-deadline,-invpcid,-spec-ctrl" ;;
esac
exec qemu-x86_64 -cpu "$cpu" "$@"
