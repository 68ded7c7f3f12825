#!/bin/bash
# Issue 15, prefill-9: the chooser's new defaults (d 65-128: 128 x 64 in two K/V stages; O staged through
# local memory for d 65-192; the fp32 d=64 entry from prefill-8's tune) through every device suite, then
# the BENCHMARKS prefill table: flashcl bench on the target shapes (fp16, bf16, fp32) and PyTorch SDPA
# (FlashAttention-2, cuDNN, fp32 memory-efficient) in the same call; one decode shape against
# BENCHMARKS (predicted unchanged). One archive; bench JSON under bench/prefill/.
source .gpu/gpu-env.sh >/dev/null
R=/tmp/r; mkdir -p $R
t0=$(date +%s)
[ -d build-gpu ] || meson setup build-gpu -Dbuildtype=release >/dev/null
ninja -C build-gpu > $R/build.log 2>&1 || { tail -30 $R/build.log; exit 1; }
export FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no
for t in test_mma test_plan test_kernels test_edges test_flash; do
  s=$(date +%s); timeout 240 build-gpu/tests/$t > $R/$t.log 2>&1
  echo "$t rc $? $(( $(date +%s) - s )) s: $(grep -E '^[0-9]+%' $R/$t.log | tail -1)"; grep -E ':[EF]:' $R/$t.log | head -5
done
unset FLASHCL_TEST_PLATFORM CK_FORK
tar czf $OUT/run.tgz -C $R .
B=build-gpu/tools/flashcl
b() { # name, args
  timeout 90 $B bench --device NVIDIA --algos flash --iters 10 $2 --json $R/h200_$1.json > $R/h200_$1.txt 2>&1
  echo "== $1 rc $?"; grep -E "^[0-9]" $R/h200_$1.txt | cut -c1-100
}
b f16_d128 "-d 128 --dtype f16 -n 1024,4096,16384 --both"
b bf16_d128 "-d 128 --dtype bf16 -n 1024,4096,16384 --both"
b f16_d64 "-d 64 --dtype f16 -n 1024,4096,16384 --both"
b f16_d256 "-d 256 --dtype f16 -n 1024,4096,16384 --both"
b f32_d128 "-d 128 --dtype f32 -n 4096,16384"
b f32_d64 "-d 64 --dtype f32 -n 4096,16384"
for d in 64 128 256; do $B tiles --device NVIDIA -d $d --dtype f16 -n 4096 2>&1 | cut -c1-170 | tail -2; done
timeout 60 $B bench --device NVIDIA --decode -H 32 --heads-kv 8 -d 128 --dtype f16 --algos flash --iters 20 --warmup 3 --max-seconds 1 -n 8192,32768,131072 -b 8 > $R/decode_b8.txt 2>&1
echo "== decode b8"; grep -E "^[0-9]" $R/decode_b8.txt | cut -c1-100
tar czf $OUT/run.tgz -C $R .
timeout 200 /opt/torch/.venv/bin/python bench/anchors/sdpa_prefill.py > $R/h200_sdpa.jsonl 2> $R/sdpa.log
echo "sdpa rc $?"
python3 -c "
import json
for l in open('$R/h200_sdpa.jsonl'):
    r=json.loads(l)
    if 'tflops' in r: print(r['backend'],r['dtype'],r['d'],r['n'],r['causal'],round(r['tflops'],1))
"
tar czf $OUT/run.tgz -C $R .
echo "total $(( $(date +%s) - t0 )) s"
