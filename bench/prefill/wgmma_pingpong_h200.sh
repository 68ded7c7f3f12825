#!/bin/bash
# SPDX-License-Identifier: MIT
# wgmma_pingpong_h200.sh: flash_wgmma with its consumer warpgroups issuing their products in turns
# (WG_PINGPONG: the default with the producer on 16-bit operands up to d_v = 128 since 2026-12-05) against
# the same kernel without the turns, in one device call (docs/design/wgmma.md, wgmma-pingpong). First the
# test lists that exercise flash_wgmma (wgmma, wgmma_features, wgmma_persist: keyless blocks, windows,
# pages, packed sequences, three warpgroups, persistent work-groups) with the turns forced on everywhere
# the producer runs (d=256 and fp8 included), under a time limit (a turn that never comes hangs); then
# fp16 at d=64, 128 and 256, N=1024 and 16384, causal and not, and fp8 at d=128: the default (base), the
# turns off (-DWG_PINGPONG=0) and on (-DWG_PINGPONG=1), interleaved in REPS rounds (2 by default;
# bench/options_h200.sh, every run validated). Run on the GPU machine from the repository root after
# `source .gpu/gpu-env.sh`, with a build (BUILD, default /tmp/b, tests enabled); TESTS=0 skips the lists;
# writes $OUT/pingpong/.
set -uo pipefail
b=${BUILD:-/tmp/b}
out=${OUT:-/tmp}/pingpong
mkdir -p "$out"
[ -f "$b/build.ninja" ] || meson setup "$b" . --buildtype=release >/dev/null || exit 1
ninja -C "$b" >/dev/null || exit 1
if [ "${TESTS:-1}" = 1 ]; then
  FLASHCL_BUILD_OPTIONS=-DWG_PINGPONG=1 FLASHCL_TEST_PLATFORM=NVIDIA FLASHCL_TEST_FEATURES=wgmma,wgmma_features,wgmma_persist \
    CK_FORK=no timeout 300 "$b/tests/test_flash" > "$out/tests.log" 2>&1
  echo "test_flash wgmma,wgmma_features,wgmma_persist with WG_PINGPONG=1: exit $?, $(grep -h 'Checks:' "$out/tests.log" | tail -n 1)"
fi
for c in "" "--causal"; do
  # shellcheck disable=SC2086
  BUILD=$b OUT=/tmp bash bench/options_h200.sh "${REPS:-2}" "--device NVIDIA -d 64,128,256 -n 1024,16384 --dtype f16 \
    --iters 10 $c" base= off=-DWG_PINGPONG=0 on=-DWG_PINGPONG=1
  rm -rf "$out/options${c:+-causal}" && mv /tmp/options "$out/options${c:+-causal}"
done
# fp8 (E4M3, per-head descale) at d=128 N=16384: the turns, and the turns with the producer at 88 registers
BUILD=$b OUT=/tmp bash bench/options_h200.sh "${REPS:-2}" "--device NVIDIA -d 128 -n 16384 --dtype f16 --iters 10 \
  --fp8 e4m3 --descale head" base= on=-DWG_PINGPONG=1 on88=-DWG_PINGPONG=1,-DFP8_PRODUCER_REGS=88
rm -rf "$out/options-fp8" && mv /tmp/options "$out/options-fp8"
