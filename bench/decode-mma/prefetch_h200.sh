#!/bin/bash
# SPDX-License-Identifier: MIT
# prefetch_h200.sh: one decode step (Hq 32, Hkv 8, d 128, 131072 keys) with flash_decode_mma's K loads
# issued a step ahead (cl/flash_decode_mma.cl's KV_PREFETCH, a build option) against the default, at batch
# 8 and 1, over the fp16, int8 and E4M3 caches, interleaved in REPS rounds (3 by default) through
# bench/options_h200.sh (docs/design/decode_mma.md, decode-mma-11; issue 34's item 3). Run on the GPU
# machine from the repository root after `source .gpu/gpu-env.sh`; writes $OUT/prefetch/*/ and prints
# each variant's median GB/s with its range.
set -uo pipefail
out=${OUT:-/tmp}/prefetch
mkdir -p "$out"
for batch in 8 1; do
  for f in plain int8 fp8e4m3; do
    OUT=/tmp bash bench/options_h200.sh "${REPS:-3}" "--device NVIDIA --decode -n 131072 -H 32 --heads-kv 8 -d 128 \
--dtype f16 --iters 20 --warmup 3 -b $batch --kv-dtype $f" base= prefetch=-DKV_PREFETCH=1 | sed "s/^/b=$batch $f: /"
    rm -rf "${out:?}/b${batch}_$f" && mv /tmp/options "$out/b${batch}_$f"
  done
done
