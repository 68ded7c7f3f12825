#!/bin/bash
# Why the causal fp32 path is 1-3% behind the kernel before the change (the edge-only range did not
# recover it): ptxas registers of the causal d=64 and d=128 kernels, and the causal rows with three
# ways of masking (FCL_MASK_VARIANT 0: the range on edge tiles only, 64-bit; 1: the same in 32-bit
# ints; 2: the bounds on every tile in ints, as before), beside the kernel before (build-base-src/).
R=/tmp/refactor-3
mkdir -p "$R"
trap 'tar czf "$OUT/refactor-3.tgz" -C /tmp refactor-3' EXIT
source .gpu/gpu-env.sh >/dev/null
s() { echo "$(date +%T) $*"; }
(meson setup /tmp/new -Dbuildtype=release >/dev/null && ninja -C /tmp/new > "$R/build-new.log" 2>&1) &
(cd build-base-src && meson setup /tmp/base -Dbuildtype=release -Dtests=false >/dev/null && ninja -C /tmp/base >/dev/null) &
wait
export FLASHCL_CACHE=0 FLASHCL_DEVICE=NVIDIA
regs() { grep -A3 "properties for flash_fwd" "$1" | grep -oE "[0-9]+ bytes spill stores|Used [0-9]+ registers" | tr '\n' ' '; }
B="--algos flash --iters 7 --warmup 2 --max-seconds 2"
for v in base new0 new1 new2; do
  case $v in base) F=/tmp/base/tools/flashcl; O=;; *) F=/tmp/new/tools/flashcl; O="-DFCL_MASK_VARIANT=${v#new}";; esac
  for d in 64 128; do
    FLASHCL_BUILD_OPTIONS="-cl-nv-verbose $O" FLASHCL_BUILD_LOG=1 timeout 30 $F run -b 1 -H 16 -n 4096 -d $d --causal --iters 2 > "$R/regs-$v-d$d.txt" 2>&1
    s "$v d=$d causal: $(regs "$R/regs-$v-d$d.txt")"
  done
  FLASHCL_BUILD_OPTIONS="$O" timeout 60 $F bench -n 4096,16384 -d 64,128 --causal --dtype f32 $B --json "$R/causal-$v.json" > "$R/causal-$v.txt" 2> "$R/causal-$v.log"
  s "$v bench rc $?"
done
FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no FLASHCL_TOOL=/tmp/new/tools/flashcl timeout 120 /tmp/new/tests/test_threads > "$R/test_threads.log" 2>&1
s "test_threads rc $? $(grep -E '^[0-9]+%' "$R/test_threads.log" | tail -1)"
echo "== summary (shape, median ms, TFLOP/s)"
for f in "$R"/causal-*.txt; do echo "-- $(basename $f)"; grep -E "\| flash" "$f" | awk '{print $1,$3,$4,$5,$8,$10}'; done
