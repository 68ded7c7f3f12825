#!/bin/bash
# Second H200 run of the matrix-unit kernel: cp.async (MMA_PIPELINE, the default on aligned rows)
# against synchronous copies (-DMMA_PIPELINE=0), fp16 and bf16; the batch-8 paged decode again (the
# bench sized its pool for one sequence before); test_flash with the pipelined kernel last.
# Run on the GPU machine from the repository root: bash docs/gpu-runs/mma-2/run.sh
R=/tmp/mma-2
mkdir -p "$R"
trap 'tar czf "$OUT/mma-2.tgz" -C /tmp mma-2' EXIT
source .gpu/gpu-env.sh >/dev/null
meson setup /tmp/b -Dbuildtype=release >/dev/null && ninja -C /tmp/b >/dev/null || exit 1
F=/tmp/b/tools/flashcl
export FLASHCL_DEVICE=NVIDIA
s() { echo "$(date +%T) $*"; }
B="--algos flash --iters 5 --warmup 2 --max-seconds 1"
row() { grep -E "flash" "$1" | awk '{printf "%s %s %s %s %s %s %s\n", $1, $2, $3, $4, $5, $8, $10}'; }
FLASHCL_BUILD_OPTIONS=-cl-nv-verbose FLASHCL_BUILD_LOG=1 timeout 30 $F run -b 1 -H 16 -n 1024 -d 128 --dtype f16 --iters 3 > "$R/regs.txt" 2>&1
s "regs rc $?"; grep -iE "Used|valid" "$R/regs.txt" | head -3
timeout 60 $F bench -n 1024,4096,16384 -d 64,128 --both --dtype f16 $B --json "$R/f16.json" > "$R/f16.txt" 2> "$R/f16.log"
s "f16 pipelined rc $?"; row "$R/f16.txt"
FLASHCL_BUILD_OPTIONS=-DMMA_PIPELINE=0 timeout 40 $F bench -n 4096,16384 -d 64,128 --dtype f16 $B --json "$R/f16-sync.json" > "$R/f16-sync.txt" 2> "$R/f16-sync.log"
s "f16 synchronous rc $?"; row "$R/f16-sync.txt"
timeout 30 $F bench -n 4096,16384 -d 128 --both --dtype bf16 $B --json "$R/bf16.json" > "$R/bf16.txt" 2> "$R/bf16.log"
s "bf16 pipelined rc $?"; row "$R/bf16.txt"
D="--decode -n 131072 -H 32 --heads-kv 8 -d 128 --dtype f16 -b 8 --iters 20 --warmup 2 --max-seconds 1 --algos flash"
timeout 30 $F bench $D --json "$R/dec-b8.json" > "$R/dec-b8.txt" 2>&1; s "decode b=8 rc $? $(grep flash "$R/dec-b8.txt" | awk '{print $8, $11}')"
timeout 30 $F bench $D --paged 256 --json "$R/dec-b8-paged256.json" > "$R/dec-b8-paged256.txt" 2>&1; s "decode b=8 paged rc $? $(grep flash "$R/dec-b8-paged256.txt" | awk '{print $8, $11}')"
FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no timeout 80 /tmp/b/tests/test_flash > "$R/test_flash.log" 2>&1
s "test_flash rc $? $(grep -E '^[0-9]+%' "$R/test_flash.log" | tail -1)"
