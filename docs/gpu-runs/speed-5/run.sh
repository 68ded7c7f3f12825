#!/bin/bash
# Fifth H200 run: sizes past 2^31 elements (Q/O and K/V, validated), head dims 80/96/128/256 at
# N = 1024 and 4096 (tuned entries of speed-4), and the fa2 preset with fp16 and bf16 storage.
# Run on the GPU machine from the repository root: bash docs/gpu-runs/speed-5/run.sh
source .gpu/gpu-env.sh >/dev/null
meson setup /tmp/b -Dbuildtype=release >/dev/null && ninja -C /tmp/b >/dev/null || exit 1
F=/tmp/b/tools/flashcl
R=${OUT:-/tmp}/speed-5
mkdir -p "$R"
export FLASHCL_DEVICE=NVIDIA
export FLASHCL_TUNING_DB=docs/gpu-runs/speed-4/tune.db
# 16 heads x 1.1 M rows x d 128 = 2.25e9 elements in Q and O (K/V: 64 keys); then the reverse.
timeout 110 $F run -b 1 -H 16 --seq-q 1100000 --seq-kv 64 -d 128 --dtype f16 --iters 2 > "$R/huge-q.txt" 2>&1
echo "huge-q rc $?"; tail -3 "$R/huge-q.txt"
timeout 110 $F run -b 1 -H 16 --seq-q 64 --seq-kv 1100000 -d 128 --dtype f16 --iters 2 > "$R/huge-kv.txt" 2>&1
echo "huge-kv rc $?"; tail -3 "$R/huge-kv.txt"
timeout 120 $F bench -n 1024,4096 -d 80,96,128,256 --both --algos flash --iters 5 --max-seconds 2 \
  --json "$R/bench-dims-f32.json" > "$R/bench-dims-f32.txt" 2> "$R/bench-dims-f32.log"
echo "dims rc $?"; cat "$R/bench-dims-f32.txt"
for t in f16 bf16; do
  timeout 80 $F bench --preset fa2 --dtype $t --algos flash --iters 5 --max-seconds 2 --json "$R/bench-$t.json" \
    > "$R/bench-$t.txt" 2> "$R/bench-$t.log"
  echo "$t rc $?"; awk 'NR>2' "$R/bench-$t.txt"
done
