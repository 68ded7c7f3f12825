#!/bin/bash
# SPDX-License-Identifier: MIT
# wgmma_ablate_h200.sh: where flash_wgmma's fp16 step spends its time at d=64 against d=128 (docs/design/
# wgmma.md, wgmma-ablate; issue 34's item 1: d=64 is furthest behind cuDNN). fp16, non-causal, N=1024 and
# 16384 (B·N = 16384, hidden 2048), timed under build-option variants interleaved in REPS rounds (2 by
# default) through bench/options_h200.sh: the default and the ablations (WG_ABLATE: 2 drops the softmax's
# exponentials, 4 the P·V products, 8 the Q·K^T products, 12 both products, 14 both and the exponentials:
# the copies, the barriers and the rest of the softmax alone; wrong results, timing only). Run on the GPU
# machine from the repository root after `source .gpu/gpu-env.sh`; writes $OUT/wgmma_ablate/d*/ and prints
# each variant's median TFLOP/s with its range.
set -uo pipefail
out=${OUT:-/tmp}/wgmma_ablate
mkdir -p "$out"
for d in 64 128; do
  OUT=/tmp bash bench/options_h200.sh "${REPS:-2}" "--device NVIDIA -d $d -n 1024,16384 --dtype f16 --iters 10" \
    base= exp=-DWG_ABLATE=2 pv=-DWG_ABLATE=4 s=-DWG_ABLATE=8 mma=-DWG_ABLATE=12 copies=-DWG_ABLATE=14 |
    sed "s/^/d=$d: /"
  rm -rf "${out:?}/d$d" && mv /tmp/options "$out/d$d"
done
