#!/bin/bash
# Sizes past 2^31 elements on the H200, validated against the naive kernel: 16 heads x 1.1 M rows x
# d 128 = 2.25e9 elements in Q and O (64 keys), then the same in K and V (64 queries).
# Run on the GPU machine from the repository root: bash docs/gpu-runs/huge/run.sh
source .gpu/gpu-env.sh >/dev/null
meson setup /tmp/b -Dbuildtype=release >/dev/null && ninja -C /tmp/b >/dev/null || exit 1
F=/tmp/b/tools/flashcl
R=${OUT:-/tmp}/huge
mkdir -p "$R"
export FLASHCL_DEVICE=NVIDIA
date +%T
timeout 140 $F run -b 1 -H 16 --seq-q 1100000 --seq-kv 64 -d 128 --dtype f16 --iters 2 > "$R/huge-q.txt" 2>&1
echo "huge-q rc $?"; date +%T; cat "$R/huge-q.txt"
timeout 140 $F run -b 1 -H 16 --seq-q 64 --seq-kv 1100000 -d 128 --dtype f16 --iters 2 > "$R/huge-kv.txt" 2>&1
echo "huge-kv rc $?"; date +%T; cat "$R/huge-kv.txt"
