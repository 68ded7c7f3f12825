#!/bin/bash
# Issue 15, prefill-12: the defaults from prefill-10/11 (d 65-128: 128 x 64, two K/V stages for key
# ranges up to 2048, one above; the rescale skip on causal and windowed blocks) through the matrix-unit
# suites (test_mma, test_plan, test_edges, test_flash's mma cases; every other kernel is as prefill-9
# ran it whole), then the d=128 rows of BENCHMARKS' prefill table: flashcl bench fp16 and bf16 and PyTorch
# SDPA at d=128 in the same call. One archive; bench JSON under bench/prefill/.
source .gpu/gpu-env.sh >/dev/null
R=/tmp/r; mkdir -p $R
t0=$(date +%s)
[ -d build-gpu ] || meson setup build-gpu -Dbuildtype=release >/dev/null
ninja -C build-gpu > $R/build.log 2>&1 || { tail -30 $R/build.log; exit 1; }
export FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no
for t in test_mma test_plan test_edges; do
  s=$(date +%s); timeout 100 build-gpu/tests/$t > $R/$t.log 2>&1
  echo "$t rc $? $(( $(date +%s) - s )) s: $(grep -E '^[0-9]+%' $R/$t.log | tail -1)"; grep -E ':[EF]:' $R/$t.log | head -5
done
s=$(date +%s); FLASHCL_TEST_FEATURES=mma timeout 120 build-gpu/tests/test_flash > $R/test_flash_mma.log 2>&1
echo "test_flash mma rc $? $(( $(date +%s) - s )) s: $(grep -E '^[0-9]+%' $R/test_flash_mma.log | tail -1)"; grep -E ':[EF]:' $R/test_flash_mma.log | head -5
unset FLASHCL_TEST_PLATFORM CK_FORK
B=build-gpu/tools/flashcl
b() { # name, args
  timeout 90 $B bench --device NVIDIA --algos flash --iters 10 $2 --json $R/h200_$1.json > $R/h200_$1.txt 2>&1
  echo "== $1 rc $?"; grep -E "^[0-9]" $R/h200_$1.txt | cut -c1-100
}
b f16_d128 "-d 128 --dtype f16 -n 1024,4096,16384 --both"
b bf16_d128 "-d 128 --dtype bf16 -n 1024,4096,16384 --both"
tar czf $OUT/run.tgz -C $R .
timeout 150 /opt/torch/.venv/bin/python bench/anchors/sdpa_prefill.py flash,cudnn,efficient 128 > $R/h200_sdpa_d128.jsonl 2> $R/sdpa.log
echo "sdpa rc $?"
python3 -c "
import json
for l in open('$R/h200_sdpa_d128.jsonl'):
    r=json.loads(l)
    if 'tflops' in r: print(r['backend'],r['dtype'],r['d'],r['n'],r['causal'],round(r['tflops'],1))
"
tar czf $OUT/run.tgz -C $R .
echo "total $(( $(date +%s) - t0 )) s"
