#!/bin/bash
# SPDX-License-Identifier: MIT
# tf32_h200.sh: fp32 prefill on flash_mma's TF32 paths (problem.precision tf32x3 and tf32) beside the
# portable kernel's fp32 and PyTorch's fp32 memory-efficient SDPA, in one call (docs/design/mma.md,
# tf32-1 to tf32-3), then every path's error against float64 beside PyTorch's (tf32_accuracy.py). Run on
# the GPU machine from the repository root after `source .gpu/gpu-env.sh`; writes $OUT/tf32/*.json and
# prints the tables. VARIANTS="name=BUILD_OPTIONS ..." also times and checks tf32x3 built with each
# FLASHCL_BUILD_OPTIONS, options within a variant separated by commas (e.g. "acc1=-DTF32_ACC=1
# kv=-DQ_SPLIT=0,-DKV_SPLIT=1").
set -uo pipefail
out=${OUT:-/tmp}/tf32
mkdir -p "$out"
b=${BUILD:-/tmp/bt}
py=${PYTHON:-/opt/torch/.venv/bin/python}
[ -x "$b/tools/flashcl" ] || { meson setup "$b" . --buildtype=release -Dtests=disabled >/dev/null && ninja -C "$b" tools/flashcl >/dev/null; } || exit 1
bench() { # d, precision, file, build options
  local h=$((2048 / $1))
  FLASHCL_BUILD_OPTIONS=$4 "$b/tools/flashcl" bench --device NVIDIA -b 4 -n 4096 -H $h -d $1 --dtype f32 --algos flash \
    --iters 10 --warmup 2 --precision $2 --json "$out/$3.json" 2>&1 | tail -1
}
for d in 128 64; do
  for prec in tf32x3 tf32 fp32; do
    bench $d $prec d${d}_$prec ""
  done
  for v in ${VARIANTS:-}; do
    opts=${v#*=}
    bench $d tf32x3 "d${d}_tf32x3_${v%%=*}" "${opts//,/ }"
  done
done
(cd bench/anchors && "$py" sdpa_prefill.py efficient 128,64) > "$out/sdpa.jsonl" 2>&1
grep -v '"torch"' "$out/sdpa.jsonl" | grep '"n": 4096' || tail -3 "$out/sdpa.jsonl"
# shellcheck disable=SC2086
"$py" bench/prefill/tf32_accuracy.py "$b/tools/flashcl" ${VARIANTS:-} | tee "$out/accuracy.jsonl"
