#!/bin/bash
# First H200 run of the matrix-unit kernel (cl/flash_mma.cl): its path and registers, validated runs
# over the semantics (GQA, causal, windows, LSE, rows with no key, odd lengths, d = 32 ... 128), the
# fp16 fa2 preset and bf16, the device test suite; then the decode figures with the revised chooser.
# Run on the GPU machine from the repository root: bash docs/gpu-runs/mma-1/run.sh
R=/tmp/mma-1
mkdir -p "$R"
trap 'tar czf "$OUT/mma-1.tgz" -C /tmp mma-1' EXIT
source .gpu/gpu-env.sh >/dev/null
meson setup /tmp/b -Dbuildtype=release >/dev/null && ninja -C /tmp/b >/dev/null || exit 1
F=/tmp/b/tools/flashcl
export FLASHCL_DEVICE=NVIDIA
s() { echo "$(date +%T) $*"; }
$F tiles -d 128 --dtype f16 2>&1 | tail -2 | cut -c1-160
FLASHCL_BUILD_OPTIONS=-cl-nv-verbose FLASHCL_BUILD_LOG=1 timeout 30 $F run -b 1 -H 16 -n 1024 -d 128 --dtype f16 --iters 3 > "$R/regs.txt" 2>&1
s "regs rc $?"; grep -iE "registers|spill|valid|path" "$R/regs.txt" | head -8
i=0
while read -r args; do
  i=$((i+1)); timeout 30 $F run $args --iters 3 > "$R/run$i.txt" 2>&1
  s "run$i rc $? [$args] $(grep -E '^kernel' "$R/run$i.txt" | cut -c13-22) $(grep -E '^validation' "$R/run$i.txt" | cut -c13-120)"
done <<'LIST'
-b 2 -H 8 --heads-kv 2 --seq-q 333 --seq-kv 517 -d 64 --dtype bf16 --causal --lse
-b 1 -H 4 -n 1000 -d 128 --dtype f16 --window 100,20
-b 1 -H 4 --seq-q 100 --seq-kv 50 -d 96 --causal --dtype f16 --lse
-b 3 -H 2 --seq-q 17 --seq-kv 1 -d 32 --dtype f16
-b 1 -H 2 --seq-q 4100 --seq-kv 4097 -d 128 --dtype bf16 --causal
-b 2 -H 32 -n 2048 -d 64 --dtype f16
LIST
timeout 150 $F bench --preset fa2 --dtype f16 --algos flash --iters 5 --max-seconds 1 --json "$R/fa2-f16.json" > "$R/fa2-f16.txt" 2> "$R/fa2-f16.log"
s "fa2 f16 rc $?"; grep -E "flash" "$R/fa2-f16.txt" | awk '{print $1, $2, $3, $4, $5, $7, $8, $10}'
timeout 60 $F bench -n 4096,16384 -d 64,128 --dtype bf16 --both --algos flash --iters 5 --max-seconds 1 --json "$R/bf16.json" > "$R/bf16.txt" 2> "$R/bf16.log"
s "bf16 rc $?"; grep -E "flash" "$R/bf16.txt" | awk '{print $1, $2, $3, $4, $5, $7, $8, $10}'
FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no timeout 120 /tmp/b/tests/test_flash > "$R/test_flash.log" 2>&1
s "test_flash rc $? $(grep -E '^[0-9]+%' "$R/test_flash.log" | tail -1)"
D="--decode -n 8192,32768,131072 -H 32 --heads-kv 8 -d 128 --dtype f16 --iters 20 --warmup 2 --max-seconds 1 --algos flash"
for b in 1 8; do
  for v in auto paged256; do
    X=""; [ $v = paged256 ] && X="--paged 256"
    timeout 45 $F bench $D -b $b $X --json "$R/dec-b$b-$v.json" > "$R/dec-b$b-$v.txt" 2> "$R/dec-b$b-$v.log"
    s "decode b=$b $v rc $? $(grep flash "$R/dec-b$b-$v.txt" | awk '{printf "%s: %s ms %s GB/s  ", $3, $8, $11}')"
  done
done
timeout 30 $F bench --decode -n 131072 -H 32 --heads-kv 8 -d 128 --dtype f16 -b 1 --kv-splits 1 --iters 3 --warmup 1 --max-seconds 1 --algos flash --json "$R/dec-b1-split1.json" > "$R/dec-b1-split1.txt" 2>&1
s "decode b=1 unsplit rc $? $(grep flash "$R/dec-b1-split1.txt" | awk '{printf "%s: %s ms %s GB/s  ", $3, $8, $11}')"
