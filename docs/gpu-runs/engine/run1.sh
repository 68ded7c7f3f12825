#!/bin/bash
# Issue 18, engine-1: attention sinks on the real-PTX kernels (flash_mma, flash_decode_mma) and the
# others on NVIDIA's compiler: test_flash's sinks and mma lists, test_kernels (the new arguments against
# the compiled kernels), test_plan, test_mma; and one prefill shape with and without sinks (predicted:
# the same time, the sink is applied once a row). One archive.
source .gpu/gpu-env.sh >/dev/null
R=/tmp/r; mkdir -p $R
t0=$(date +%s)
[ -d build-gpu ] || meson setup build-gpu -Dbuildtype=release >/dev/null
ninja -C build-gpu > $R/build.log 2>&1 || { tail -30 $R/build.log; exit 1; }
export FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no
for t in test_mma test_kernels test_plan; do
  s=$(date +%s); timeout 100 build-gpu/tests/$t > $R/$t.log 2>&1
  echo "$t rc $? $(( $(date +%s) - s )) s: $(grep -E '^[0-9]+%' $R/$t.log | tail -1)"; grep -E ':[EF]:' $R/$t.log | head -5
done
for l in sinks mma decode_mma; do
  s=$(date +%s); FLASHCL_TEST_FEATURES=$l timeout 120 build-gpu/tests/test_flash > $R/test_flash_$l.log 2>&1
  echo "test_flash $l rc $? $(( $(date +%s) - s )) s: $(grep -E '^[0-9]+%' $R/test_flash_$l.log | tail -1)"; grep -E ':[EF]:' $R/test_flash_$l.log | head -5
done
unset FLASHCL_TEST_PLATFORM CK_FORK
B=build-gpu/tools/flashcl
for s in "" "--sinks 2"; do
  timeout 60 $B bench --device NVIDIA --algos flash --iters 10 -d 128 --dtype f16 -n 4096 --both $s > $R/bench.txt 2>&1
  echo "== bench $s"; grep -E "^[0-9]" $R/bench.txt | cut -c1-100
done
tar czf $OUT/run.tgz -C $R .
echo "total $(( $(date +%s) - t0 )) s"
