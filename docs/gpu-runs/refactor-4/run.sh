#!/bin/bash
# Final H200 run of the architecture change (issue 13): 32-bit key positions (the causal fix, chosen
# by docs/gpu-runs/refactor-3), before (d611790, build-base-src/) and after side by side with PyTorch
# in the same session; ptxas registers; the device suites on NVIDIA. From the repository root.
R=/tmp/refactor-4
mkdir -p "$R"
trap 'tar czf "$OUT/refactor-4.tgz" -C /tmp refactor-4' EXIT
source .gpu/gpu-env.sh >/dev/null
s() { echo "$(date +%T) $*"; }
(meson setup /tmp/new -Dbuildtype=release >/dev/null && ninja -C /tmp/new > "$R/build-new.log" 2>&1) &
(cd build-base-src && meson setup /tmp/base -Dbuildtype=release -Dtests=false >/dev/null && ninja -C /tmp/base >/dev/null) &
wait
s "built: $(ls /tmp/new/tools/flashcl /tmp/base/tools/flashcl /tmp/new/tests/test_flash 2>&1 | tr '\n' ' ')"
export FLASHCL_DEVICE=NVIDIA
regs() { grep -A3 "properties for $2" "$1" | grep -oE "[0-9]+ bytes spill stores|Used [0-9]+ registers" | tr '\n' ' '; }
for v in base new; do
  F=/tmp/$v/tools/flashcl
  for c in "-d 64 --causal" "-d 128 --causal" "-d 128" "-d 64 --dtype f16" "-d 128 --dtype f16"; do
    tag=$(echo "$c" | tr -d ' -')
    FLASHCL_CACHE=0 FLASHCL_BUILD_OPTIONS=-cl-nv-verbose FLASHCL_BUILD_LOG=1 timeout 30 $F run -b 1 -H 16 -n 4096 $c --iters 2 > "$R/regs-$v-$tag.txt" 2>&1
    s "$v $c: $(regs "$R/regs-$v-$tag.txt" flash_fwd)$(regs "$R/regs-$v-$tag.txt" flash_mma)"
  done
done
B="--algos flash --iters 7 --warmup 2 --max-seconds 2"
for v in base new; do
  F=/tmp/$v/tools/flashcl
  timeout 60 $F bench -n 4096,16384 -d 64,128 --both --dtype f32 $B --json "$R/f32-$v.json" > "$R/f32-$v.txt" 2> "$R/f32-$v.log"
  s "$v f32 rc $?"
  timeout 50 $F bench -n 4096,16384 -d 64,128 --both --dtype f16 $B --json "$R/f16-$v.json" > "$R/f16-$v.txt" 2> "$R/f16-$v.log"
  s "$v f16 rc $?"
done
timeout 120 /opt/torch/.venv/bin/python bench/anchors/sdpa_prefill.py > "$R/sdpa.jsonl" 2> "$R/sdpa.log"
s "sdpa rc $?"
for t in kernels plan mma edges threads; do
  FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no FLASHCL_TOOL=/tmp/new/tools/flashcl timeout 120 /tmp/new/tests/test_$t > "$R/test_$t.log" 2>&1
  s "test_$t rc $? $(grep -E '^[0-9]+%' "$R/test_$t.log" | tail -1)"
done
FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no timeout 170 /tmp/new/tests/test_flash > "$R/test_flash.log" 2>&1
s "test_flash rc $? $(grep -E '^[0-9]+%' "$R/test_flash.log" | tail -1)"
echo "== summary (shape, median ms, TFLOP/s)"
for f in "$R"/f32-*.txt "$R"/f16-*.txt; do echo "-- $(basename $f)"; grep -E "\| flash" "$f" | awk '{print $1,$3,$4,$5,$8,$10}'; done
