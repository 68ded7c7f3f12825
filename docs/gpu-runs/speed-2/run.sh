#!/bin/bash
# Second H200 run: red in its own memory, V loaded without a barrier pair of its own, Q unpadded
# when 8+ work-items share its rows. Same measurements as speed-1.
# Run on the GPU machine from the repository root: bash docs/gpu-runs/speed-2/run.sh
source .gpu/gpu-env.sh >/dev/null
meson setup /tmp/b -Dbuildtype=release >/dev/null && ninja -C /tmp/b >/dev/null || exit 1
F=/tmp/b/tools/flashcl
R=${OUT:-/tmp}/speed-2
mkdir -p "$R"
export FLASHCL_DEVICE=NVIDIA
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$R/gpu.txt"
for d in 128 64; do
  H=$((2048 / d))
  FLASHCL_BUILD_OPTIONS=-cl-nv-verbose FLASHCL_BUILD_LOG=1 \
    $F run -b 4 -H $H -n 4096 -d $d --iters 10 > "$R/run-d$d-f32.txt" 2> "$R/run-d$d-f32.log"
  grep -h "ptxas info\|registers\|spill" "$R/run-d$d-f32.log" | head -6
  tail -4 "$R/run-d$d-f32.txt"
done
timeout 420 $F tune -d 128,64 --dtype f32 -n 4096 --iters 3 --db "$R/tune.db" > "$R/tune.txt" 2> "$R/tune.log"
echo "tune rc $?"
grep -h "winner\|class" "$R/tune.txt"
sort -t'|' -k1 "$R/tune.txt" | head -0
