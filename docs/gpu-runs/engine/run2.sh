#!/bin/bash
# Issue 18, engine-2: the device suites after the kernel signatures changed (workspace offsets,
# cache_batch_idx, cache_leftpad, kv_dtype): test_mma, test_plan, test_kernels, test_edges, test_cache
# and test_flash whole (its sinks, kvopts and mixed lists among them); then `flashcl bench` on the
# plain prefill and decode shapes of BENCHMARKS.md (predicted unchanged: the new arguments are offsets
# and macros that are 0 without the options) and decode with fp32 queries over an fp16 cache. One archive.
source .gpu/gpu-env.sh >/dev/null
R=/tmp/r; mkdir -p $R
t0=$(date +%s)
[ -d build-gpu ] || meson setup build-gpu -Dbuildtype=release >/dev/null
ninja -C build-gpu > $R/build.log 2>&1 || { tail -30 $R/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
export FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no
for t in test_mma test_plan test_kernels test_edges test_cache test_flash; do
  s=$(date +%s); timeout 240 build-gpu/tests/$t > $R/$t.log 2>&1
  echo "$t rc $? $(( $(date +%s) - s )) s: $(grep -E '^[0-9]+%' $R/$t.log | tail -1)"; grep -E ':[EF]:' $R/$t.log | head -5
done
unset FLASHCL_TEST_PLATFORM CK_FORK
tar czf $OUT/run.tgz -C $R .
B=build-gpu/tools/flashcl
timeout 60 $B bench --device NVIDIA --algos flash --iters 10 -d 128 --dtype f16 -n 4096 --both --json $R/prefill.json > $R/prefill.txt 2>&1
echo "== prefill rc $?"; grep -E "^[0-9]" $R/prefill.txt | cut -c1-110
D="--decode -H 32 --heads-kv 8 -d 128 --algos flash --iters 20 --warmup 3 --max-seconds 1 -n 8192,32768,131072 -b 8"
timeout 60 $B bench --device NVIDIA $D --dtype f16 --json $R/decode.json > $R/decode.txt 2>&1
echo "== decode f16 rc $?"; grep -E "^[0-9]" $R/decode.txt | cut -c1-110
timeout 60 $B bench --device NVIDIA $D --dtype f32 --kv-dtype f16 --json $R/decode_mixed.json > $R/decode_mixed.txt 2>&1
echo "== decode f32 over f16 rc $?"; grep -E "^[0-9]" $R/decode_mixed.txt | cut -c1-110
tar czf $OUT/run.tgz -C $R .
echo "total $(( $(date +%s) - t0 )) s"
