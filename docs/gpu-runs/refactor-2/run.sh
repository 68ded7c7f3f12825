#!/bin/bash
# Second H200 run of the architecture change (issue 13): the device suites on NVIDIA (the kernel table
# against -cl-kernel-arg-info, the public chooser against plans, the real matrix-unit kernel, edges,
# validation, threads, caches, the flash grid), then the causal fp32 fix (the visible range only on
# edge tiles) and flash_mma, before (d611790, build-base-src/) and after, with PyTorch in the same
# session. Run on the GPU machine from the repository root.
R=/tmp/refactor-2
mkdir -p "$R"
trap 'tar czf "$OUT/refactor-2.tgz" -C /tmp refactor-2' EXIT
source .gpu/gpu-env.sh >/dev/null
s() { echo "$(date +%T) $*"; }
(meson setup /tmp/new -Dbuildtype=release >/dev/null && ninja -C /tmp/new > "$R/build-new.log" 2>&1) &
(cd build-base-src && meson setup /tmp/base -Dbuildtype=release -Dtests=false >/dev/null && ninja -C /tmp/base >/dev/null) &
wait
s "built: $(ls /tmp/new/tools/flashcl /tmp/base/tools/flashcl /tmp/new/tests/test_kernels 2>&1 | tr '\n' ' ')"
export FLASHCL_CACHE=0
/tmp/new/tools/flashcl devices > "$R/devices.txt" 2>&1
/tmp/new/tools/flashcl tiles --device NVIDIA --dtype f16 -d 128 -n 4096 > "$R/tiles-f16.txt" 2>&1
/tmp/new/tools/flashcl tiles --device NVIDIA --dtype f32 -d 128 -n 4096 > "$R/tiles-f32.txt" 2>&1
grep -iE "matrix|budget" "$R/devices.txt" | head -4; grep -E "path|flash" "$R/tiles-f16.txt" | head -4
for t in kernels plan mma edges validate threads cache; do
  FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no timeout 120 /tmp/new/tests/test_$t > "$R/test_$t.log" 2>&1
  s "test_$t rc $? $(grep -E '^[0-9]+%' "$R/test_$t.log" | tail -1)"
done
export FLASHCL_DEVICE=NVIDIA
B="--algos flash --iters 7 --warmup 2 --max-seconds 2"
for v in base new; do
  F=/tmp/$v/tools/flashcl
  timeout 60 $F bench -n 4096,16384 -d 64,128 --both --dtype f32 $B --json "$R/f32-$v.json" > "$R/f32-$v.txt" 2> "$R/f32-$v.log"
  s "$v f32 rc $?"
  timeout 40 $F bench -n 4096,16384 -d 64,128 --dtype f16 $B --json "$R/f16-$v.json" > "$R/f16-$v.txt" 2> "$R/f16-$v.log"
  s "$v f16 rc $?"
done
timeout 120 /opt/torch/.venv/bin/python bench/anchors/sdpa_prefill.py > "$R/sdpa.jsonl" 2> "$R/sdpa.log"
s "sdpa rc $?"
FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no timeout 170 /tmp/new/tests/test_flash > "$R/test_flash.log" 2>&1
s "test_flash rc $? $(grep -E '^[0-9]+%' "$R/test_flash.log" | tail -1)"
echo "== summary (shape, median ms, TFLOP/s)"
for f in "$R"/f32-*.txt "$R"/f16-*.txt; do echo "-- $(basename $f)"; grep -E "\| flash" "$f" | awk '{print $1,$3,$4,$5,$8,$10}'; done
