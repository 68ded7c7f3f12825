#!/bin/bash
# Issue 15, prefill-15: the session's library (row shuffles in the portable kernel, the fp32 d=128 entry
# with 8 rows a work-item, overrides up to the work-group's whole local memory) through the device
# suites it reaches (test_plan, test_tiles, test_mma, test_flash's grid), then BENCHMARKS' prefill table:
# flashcl bench on the target shapes (fp16, bf16, fp32) and PyTorch SDPA (FlashAttention-2, cuDNN, fp32
# memory-efficient) in the same call. One archive; bench JSON under bench/prefill/.
source .gpu/gpu-env.sh >/dev/null
R=/tmp/r; mkdir -p $R
t0=$(date +%s)
[ -d build-gpu ] || meson setup build-gpu -Dbuildtype=release >/dev/null
ninja -C build-gpu > $R/build.log 2>&1 || { tail -30 $R/build.log; exit 1; }
export FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no
for t in test_plan test_tiles test_mma; do
  s=$(date +%s); timeout 100 build-gpu/tests/$t > $R/$t.log 2>&1
  echo "$t rc $? $(( $(date +%s) - s )) s: $(grep -E '^[0-9]+%' $R/$t.log | tail -1)"; grep -E ':[EF]:' $R/$t.log | head -5
done
s=$(date +%s); FLASHCL_TEST_FEATURES=grid timeout 150 build-gpu/tests/test_flash > $R/test_flash_grid.log 2>&1
echo "test_flash grid rc $? $(( $(date +%s) - s )) s: $(grep -E '^[0-9]+%' $R/test_flash_grid.log | tail -1)"; grep -E ':[EF]:' $R/test_flash_grid.log | head -5
unset FLASHCL_TEST_PLATFORM CK_FORK
tar czf $OUT/run.tgz -C $R .
B=build-gpu/tools/flashcl
b() { # name, args
  timeout 90 $B bench --device NVIDIA --algos flash --iters 10 $2 --json $R/h200_$1.json > $R/h200_$1.txt 2>&1
  echo "== $1 rc $?"; grep -E "^[0-9]" $R/h200_$1.txt | cut -c1-100
}
b f16_d128 "-d 128 --dtype f16 -n 1024,4096,16384 --both"
b bf16_d128 "-d 128 --dtype bf16 -n 1024,4096,16384 --both"
b f16_d64 "-d 64 --dtype f16 -n 4096,16384 --both"
b bf16_d64 "-d 64 --dtype bf16 -n 4096,16384"
b f16_d256 "-d 256 --dtype f16 -n 4096,16384 --both"
b bf16_d256 "-d 256 --dtype bf16 -n 4096,16384"
b f32_d128 "-d 128 --dtype f32 -n 4096,16384 --both"
b f32_d64 "-d 64 --dtype f32 -n 4096,16384"
$B tiles --device NVIDIA -d 128 --dtype f32 -n 4096 2>&1 | cut -c1-170 | tail -2
tar czf $OUT/run.tgz -C $R .
timeout 220 /opt/torch/.venv/bin/python bench/anchors/sdpa_prefill.py > $R/h200_sdpa.jsonl 2> $R/sdpa.log
echo "sdpa rc $?"
python3 -c "
import json
for l in open('$R/h200_sdpa.jsonl'):
    r=json.loads(l)
    if 'tflops' in r: print(r['backend'],r['dtype'],r['d'],r['n'],r['causal'],round(r['tflops'],1))
"
tar czf $OUT/run.tgz -C $R .
echo "total $(( $(date +%s) - t0 )) s"
