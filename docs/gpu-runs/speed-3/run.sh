#!/bin/bash
# Third H200 run: global-to-local copies as float4 (LOAD4). Tunes d=128 and d=64 (fp32), then runs
# the fa2 benchmark preset (flash and standard, fp32) with the tuned entries.
# Run on the GPU machine from the repository root: bash docs/gpu-runs/speed-3/run.sh
source .gpu/gpu-env.sh >/dev/null
meson setup /tmp/b -Dbuildtype=release >/dev/null && ninja -C /tmp/b >/dev/null || exit 1
F=/tmp/b/tools/flashcl
R=${OUT:-/tmp}/speed-3
mkdir -p "$R"
export FLASHCL_DEVICE=NVIDIA
timeout 200 $F tune -d 128,64 --dtype f32 -n 4096 --iters 3 --db "$R/tune.db" > "$R/tune.txt" 2> "$R/tune.log"
echo "tune rc $?"
grep -h "winner\|class" "$R/tune.txt"
export FLASHCL_TUNING_DB="$R/tune.db"
timeout 330 $F bench --preset fa2 --algos flash,standard --iters 5 --max-seconds 2 --json "$R/bench-f32.json" \
  > "$R/bench-f32.txt" 2> "$R/bench-f32.log"
echo "bench rc $?"
cat "$R/bench-f32.txt" | tail -30
