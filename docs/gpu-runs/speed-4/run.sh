#!/bin/bash
# Fourth H200 run: the shipped tuning table and the revised heuristic. Tunes the head dims of the
# no-cliff target (80, 96, 256; fp32), then the fa2 preset (flash and standard, fp32) and N = 1024 and
# 4096 at d = 80, 96, 256 with those entries.
# Run on the GPU machine from the repository root: bash docs/gpu-runs/speed-4/run.sh
source .gpu/gpu-env.sh >/dev/null
meson setup /tmp/b -Dbuildtype=release >/dev/null && ninja -C /tmp/b >/dev/null || exit 1
F=/tmp/b/tools/flashcl
R=${OUT:-/tmp}/speed-4
mkdir -p "$R"
export FLASHCL_DEVICE=NVIDIA
$F tiles --build -d 128 > "$R/tiles-d128.txt" 2>&1; tail -3 "$R/tiles-d128.txt"
timeout 120 $F tune -d 80,96,256 --dtype f32 -n 4096 --iters 3 --db "$R/tune.db" > "$R/tune.txt" 2> "$R/tune.log"
echo "tune rc $?"
grep -h "winner\|class" "$R/tune.txt"
export FLASHCL_TUNING_DB="$R/tune.db"
timeout 300 $F bench --preset fa2 --algos flash,standard --iters 5 --max-seconds 2 --json "$R/bench-f32.json" \
  > "$R/bench-f32.txt" 2> "$R/bench-f32.log"
echo "bench rc $?"
timeout 60 $F bench -n 1024,4096 -d 80,96,128,256 --both --algos flash --iters 5 --max-seconds 2 \
  --json "$R/bench-dims-f32.json" > "$R/bench-dims-f32.txt" 2> "$R/bench-dims-f32.log"
echo "dims rc $?"
cat "$R/bench-f32.txt" | awk '$7=="flash" || NR<3' ; cat "$R/bench-dims-f32.txt"
