#!/bin/bash
# Seventh H200 run: (1) probe.c: why the static local memory probe found 231424 B and not 232448 (the
# build logs of both probe kernels near 227 KiB: ptxas's limit is on the array plus the compiler's own 4
# bytes); (2) after the probe learnt that (a 4-byte search, the kernel's reported size): flashcl devices
# twice (the probe, then the disk cache), test_kernels and test_plan, and portable fp32 plans past 48 KiB
# validated. From the repository root; results in $OUT.
source .gpu/gpu-env.sh >/dev/null
s() { echo "$(date +%T) $*" | tee -a "$OUT/summary.txt"; }
gcc -O1 -w -o /tmp/probe docs/gpu-runs/h200-7/probe.c -lOpenCL && /tmp/probe > "$OUT/probe.txt" 2>&1
[ -d build-gpu ] || meson setup build-gpu -Dbuildtype=release >/dev/null
ninja -C build-gpu > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
s built
F=build-gpu/tools/flashcl
export FLASHCL_DEVICE=NVIDIA FLASHCL_CACHE_DIR=/tmp/h200-7-cache
for i in 1 2; do
  a=$(date +%s%N); $F devices --json > "$OUT/devices_$i.json" 2>&1; b=$(date +%s%N)
  s "devices $i: $(( (b - a) / 1000000 )) ms; $(grep -o '"local_mem_[a-z_]*": [0-9]*' "$OUT/devices_$i.json" | tail -4 | tr '\n' ' ')"
done
$F devices > "$OUT/devices.txt" 2>&1
for t in kernels plan; do
  FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no timeout 120 build-gpu/tests/test_$t > "$OUT/test_$t.log" 2>&1
  s "test_$t rc $? $(grep -E '^[0-9]+%|F:' "$OUT/test_$t.log" | tail -3)"
done
for d in 32 192; do
  $F tiles -d $d > "$OUT/tiles_d$d.txt" 2>&1
  timeout 60 $F run -b 4 -H 8 -d $d --dtype f32 -n 2048 > "$OUT/run_d$d.txt" 2>&1
  s "f32 d=$d rc $? $(grep -E '^ *[0-9]+ +f32' "$OUT/tiles_d$d.txt" | awk '{print $3, $4, $5, $12}') $(grep -E '^time|^validation' "$OUT/run_d$d.txt" | cut -c1-90 | tr '\n' ' ')"
done
