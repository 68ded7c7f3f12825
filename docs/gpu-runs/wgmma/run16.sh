#!/bin/bash
# Issue 17, wgmma-17 (the session's last device time): auto with the 128-byte swizzled tiles (d=128, 256)
# and the producer at every head dim: flashcl bench and PyTorch SDPA in the same call (BENCHMARKS.md), the
# device suites in parallel processes, then flash_mma's column. Results go to $OUT as they come (a call cut
# by the time limit still returns them).
source docs/gpu-runs/wgmma/setup.sh
export FLASHCL_CACHE=1 FLASHCL_CACHE_DIR=$R/cache
mkdir -p $OUT/bench
cfgs=("128 f16 " "128 bf16 " "64 f16 " "256 f16 " "128 f16 --causal")
bench() { # variant, path
  for cfg in "${cfgs[@]}"; do
    set -- $cfg
    FLASHCL_PATH=$P timeout 60 $B bench --device NVIDIA --algos flash --iters 10 -d $1 --dtype $2 $3 -n 4096,16384 --json $OUT/bench/h200_${V}_$1_$2${3:+_causal}.json > $R/b.txt 2>&1
    echo "== $V d=$1 $2 $3 rc $?: $(grep -E '^[0-9]' $R/b.txt | awk '{print $3, $8, $9, $10, $11}' | tr '\n' ';')"
  done
}
V=wgmma P=auto bench
timeout 100 /opt/torch/.venv/bin/python bench/anchors/sdpa_prefill.py flash,cudnn 128,64,256 > $OUT/bench/h200_sdpa.jsonl 2> $R/sdpa.log
python3 -c "
import json
for l in open('$OUT/bench/h200_sdpa.jsonl'):
    r=json.loads(l)
    if 'tflops' in r and r['n']>1024: print(r['backend'][:2],r['dtype'][:2],r['d'],r['n'],'c' if r['causal'] else '',round(r['tflops'],1))
" | tr '\n' ';'; echo
export FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no
T=build-gpu/tests
for t in test_mma test_plan test_kernels test_edges test_validate; do
  (timeout 150 $T/$t > $OUT/$t.log 2>&1; echo "$t rc $?: $(grep -E '^[0-9]+%' $OUT/$t.log | tail -1)" > $R/$t.rc) &
done
i=0
for f in grid window,bias,varlen,split,wgmma cache,mma,offsets,align decode,decode_mma,quant masks,sinks,kvopts,mixed,dimv; do
  i=$((i+1))
  (FLASHCL_TEST_FEATURES=$f timeout 150 $T/test_flash > $OUT/test_flash_$i.log 2>&1; echo "test_flash $f rc $?: $(grep -E '^[0-9]+%' $OUT/test_flash_$i.log | tail -1)" > $R/test_flash_$i.rc) &
done
wait
cat $R/*.rc; grep -hE ':[EF]:' $OUT/test_*.log | head -6 | cut -c1-250
V=mma P=mma bench
