#!/bin/bash
# SPDX-License-Identifier: MIT
# tf32_h200.sh: fp32 prefill on flash_mma's TF32 paths (problem.precision tf32x3 and tf32) beside the
# portable kernel's fp32 and PyTorch's fp32 memory-efficient SDPA, in one call (docs/design/mma.md,
# tf32-1). Run on the GPU machine from the repository root after `source .gpu/gpu-env.sh`; writes
# $OUT/tf32/*.json and prints the tables.
set -uo pipefail
out=${OUT:-/tmp}/tf32
mkdir -p "$out"
b=${BUILD:-/tmp/bt}
[ -x "$b/tools/flashcl" ] || { meson setup "$b" . --buildtype=release -Dtests=disabled >/dev/null && ninja -C "$b" tools/flashcl >/dev/null; } || exit 1
for d in 128 64; do
  h=$((2048 / d))
  for prec in tf32x3 tf32 fp32; do
    "$b/tools/flashcl" bench --device NVIDIA -b 4 -n 4096 -H $h -d $d --dtype f32 --algos flash --iters 10 --warmup 2 \
      --precision $prec --json "$out/d${d}_$prec.json" 2>&1 | tail -1
  done
done
(cd bench/anchors && /opt/torch/.venv/bin/python sdpa_prefill.py efficient 128,64) > "$out/sdpa.jsonl" 2>&1
grep -v '"torch"' "$out/sdpa.jsonl" | grep '"n": 4096' || tail -3 "$out/sdpa.jsonl"
