#!/bin/bash
# SPDX-License-Identifier: MIT
# quant_ablate_h200.sh: what a quantized decode step's instructions cost (docs/design/decode_mma.md,
# decode-mma-18): batch 8 x 131072 (Hq 32, Hkv 8, d 128, fp16 queries) over int8 (fp32 scales) and E4M3
# caches under DEC_ABLATE's bits 8 (no conversion of the bytes) and 16 (no int8 scales), interleaved
# (bench/options_h200.sh), with the fp16 step of the same call for the ratios. The ablations' results are
# wrong by design: only their time is read. Run on the GPU machine from the repository root after
# `source .gpu/gpu-env.sh`; writes $OUT/quant/.
set -uo pipefail
b=${BUILD:-/tmp/b}
out=${OUT:-/tmp}/quant
mkdir -p "$out"
args="--device ${FLASHCL_DEVICE:-NVIDIA} --decode -b 8 -H 32 --heads-kv 8 -d 128 --dtype f16 -n 131072 --iters 20 --warmup 3"
for kv in f16 int8 fp8e4m3; do
  case $kv in
  f16) v=(base=) ;;
  int8) v=(base= noconv=-DDEC_ABLATE=8 noscale=-DDEC_ABLATE=16 neither=-DDEC_ABLATE=24) ;;
  *) v=(base= noconv=-DDEC_ABLATE=8) ;;
  esac
  BUILD=$b OUT=$out/$kv RUN_LIMIT=${RUN_LIMIT:-60} bash bench/options_h200.sh "${ROUNDS:-2}" "$args --kv-dtype $kv" "${v[@]}" |
    sed "s/^/$kv: /"
done
