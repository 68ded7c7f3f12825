#!/bin/bash
# Issue 15, prefill-5: O's rescale skipped where a warp's maxima did not move, causal blocks longest
# first, padded rows (swizzled at d=64); validated (test_mma, test_edges, test_flash whole); flashcl
# bench on the target shapes (fp16, bf16) and each change against its switch; PyTorch SDPA in the same
# call. Prediction: docs/NOTES.md. One archive.
source .gpu/gpu-env.sh >/dev/null
R=/tmp/r; mkdir -p $R
t0=$(date +%s)
[ -d build-gpu ] || meson setup build-gpu -Dbuildtype=release >/dev/null
ninja -C build-gpu > $R/build.log 2>&1 || { tail -30 $R/build.log; exit 1; }
export FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no
for t in test_mma test_edges test_flash; do
  s=$(date +%s); timeout 200 build-gpu/tests/$t > $R/$t.log 2>&1
  echo "$t rc $? $(( $(date +%s) - s )) s: $(grep -E '^[0-9]+%' $R/$t.log | tail -1)"; grep -E ':[EF]:' $R/$t.log | head -5
done
unset FLASHCL_TEST_PLATFORM CK_FORK
B=build-gpu/tools/flashcl
run() { # file tag, env, bench args
  env $2 timeout 60 $B bench --device NVIDIA --algos flash --iters 10 $3 --json $R/bench_$1.json > $R/bench_$1.txt 2>&1
  echo "== $1 ($2)"; grep -E "^[0-9]" $R/bench_$1.txt | cut -c1-100
}
run f16_d128 "" "-d 128 --dtype f16 -n 1024,4096,16384 --both"
run bf16_d128 "" "-d 128 --dtype bf16 -n 1024,4096,16384 --both"
run f16_d64 "" "-d 64 --dtype f16 -n 1024,4096,16384 --both"
run f16_d256 "" "-d 256 --dtype f16 -n 1024,4096,16384 --both"
run rescale_always "FLASHCL_BUILD_OPTIONS=-DRESCALE_ALWAYS=1" "-d 64,128,256 --dtype f16 -n 4096"
run heavy_last "FLASHCL_BUILD_OPTIONS=-DHEAVY_FIRST=0" "-d 128 --dtype f16 -n 4096,16384 --causal"
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
