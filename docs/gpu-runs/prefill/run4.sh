#!/bin/bash
# Issue 15, prefill-4: the chooser's new matrix-unit tiles (32 rows a warp up to d=192, d>128 on the
# matrix units by default) through the device suites; padded against swizzled rows on the 32-rows-a-warp
# kernels (-DSWIZZLE=0); flashcl bench on the target shapes, default and padded, beside PyTorch
# SDPA in the same call. Prediction: docs/NOTES.md. One archive.
source .gpu/gpu-env.sh >/dev/null
R=/tmp/r; mkdir -p $R
t0=$(date +%s)
[ -d build-gpu ] || meson setup build-gpu -Dbuildtype=release >/dev/null
ninja -C build-gpu > $R/build.log 2>&1 || { tail -30 $R/build.log; exit 1; }
export FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no
for t in test_mma test_plan test_kernels test_edges test_flash; do
  s=$(date +%s); timeout 200 build-gpu/tests/$t > $R/$t.log 2>&1
  echo "$t rc $? $(( $(date +%s) - s )) s: $(grep -E '^[0-9]+%' $R/$t.log | tail -1)"; grep -E ':[EF]:' $R/$t.log | head -5
done
unset FLASHCL_TEST_PLATFORM CK_FORK
B=build-gpu/tools/flashcl
bench() { # tag, extra env
  for d in 64 128 256; do
    env $2 timeout 60 $B bench --device NVIDIA -d $d --dtype f16 -n 1024,4096,16384 --both --algos flash --iters 10 --json $R/bench_$1_f16_d$d.json > $R/bench_$1_f16_d$d.txt 2>&1
  done
  env $2 timeout 60 $B bench --device NVIDIA -d 128 --dtype bf16 -n 4096,16384 --both --algos flash --iters 10 --json $R/bench_$1_bf16_d128.json > $R/bench_$1_bf16_d128.txt 2>&1
  echo "== bench $1"; grep -h "flash" $R/bench_$1_*.txt | grep -E "^[0-9]" | cut -c1-110
}
bench default ""
bench padded "FLASHCL_BUILD_OPTIONS=-DSWIZZLE=0"
$B tiles --device NVIDIA -d 128 --dtype f16 -n 4096 > $R/tiles.txt 2>&1; head -20 $R/tiles.txt
timeout 170 /opt/torch/.venv/bin/python bench/anchors/sdpa_prefill.py > $R/sdpa.jsonl 2> $R/sdpa.log
echo "sdpa rc $?"
python3 -c "
import json
for l in open('$R/sdpa.jsonl'):
    r=json.loads(l)
    if 'tflops' in r and r['backend']!='efficient': print(r['backend'],r['dtype'],r['d'],r['n'],r['causal'],round(r['tflops'],1))
"
tar czf $OUT/run.tgz -C $R .
echo "total $(( $(date +%s) - t0 )) s"
