#!/bin/bash
# Issue 17, wgmma-12: why NVIDIA's driver reported the producer kernel at 256 work-items (wgmma-11), and
# whether it launches at 384 (producer_probe.c); then the producer kernel itself (src/plan.c trusting the
# kernel's compile size): validated runs, mma_tiles with and without it (validated), flashcl bench under
# auto beside PyTorch SDPA, test_mma and test_flash's wgmma list.
source docs/gpu-runs/wgmma/setup.sh
export FLASHCL_CACHE=1 FLASHCL_CACHE_DIR=$R/cache
gcc -O2 docs/gpu-runs/wgmma/producer_probe.c -o /tmp/pp -lOpenCL -w && timeout 60 /tmp/pp | cut -c1-400
$B tiles --device NVIDIA -d 128 --dtype f16 -n 4096 2>&1 | grep -E "^128|reason" | head -3 | cut -c1-220
for args in "-d 128 --dtype f16 -n 1000 -H 4" "-d 128 --dtype f16 --causal --seq-q 300 --seq-kv 517 -H 2" "-d 64 --dtype bf16 --causal -n 777 -H 4 --heads-kv 2" "-d 256 --dtype f16 -n 600 -H 2"; do
  echo "== $args"
  timeout 45 $B run --device NVIDIA $args > $R/run.txt 2>&1
  echo "rc $?"; grep -E "^kernel|^validation|^time|rror" $R/run.txt | cut -c1-200
done
gcc -O2 -Iinclude docs/gpu-runs/mma-tiles/mma_tiles.c -o /tmp/mma_tiles -Lbuild-gpu -lflashcl -lOpenCL -lm -w
export LD_LIBRARY_PATH=$PWD/build-gpu:$LD_LIBRARY_PATH
for d in 128 64 256; do
  tl="128x128/2/2n,128x128/2/2p,128x128/2/3p"; [ $d = 64 ] && tl="128x128/2/2n,128x128/2/2p,128x64/2/2p,128x128/2/3p"; [ $d = 256 ] && tl="128x64/2/2n,128x64/2/2p"
  MMA_WGMMA=1 MMA_DATA=normal MMA_N=4096 MMA_TILES=$tl timeout 100 /tmp/mma_tiles $d > $R/wg_tiles_$d.txt 2>&1
  echo "== mma_tiles d=$d rc $?"; sed 's/rows\/item 2 tpr 4 //' $R/wg_tiles_$d.txt | cut -c1-190
done
mkdir -p $R/bench
for cfg in "128 f16 " "128 bf16 " "64 f16 " "256 f16 " "128 f16 --causal"; do
  set -- $cfg
  f=$R/bench/auto_$1_$2$3.json
  timeout 60 $B bench --device NVIDIA --algos flash --iters 10 -d $1 --dtype $2 $3 -n 4096,16384 --json $f > $R/b.txt 2>&1
  echo "== auto d=$1 $2 $3 rc $?: $(grep -E '^[0-9]' $R/b.txt | awk '{print $3, $8, $9, $10, $11}' | tr '\n' ';')"
done
timeout 120 /opt/torch/.venv/bin/python bench/anchors/sdpa_prefill.py flash,cudnn 128,64,256 > $R/bench/sdpa.jsonl 2> $R/sdpa.log
python3 -c "
import json
for l in open('$R/bench/sdpa.jsonl'):
    r=json.loads(l)
    if 'tflops' in r and r['n']>1024: print(r['backend'][:2],r['dtype'][:2],r['d'],r['n'],'c' if r['causal'] else '',round(r['tflops'],1))
" | tr '\n' ';'; echo
export FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no
timeout 100 build-gpu/tests/test_mma > $R/test_mma.log 2>&1
echo "test_mma rc $?: $(grep -E '^[0-9]+%' $R/test_mma.log | tail -1)"; grep -E ':[EF]:' $R/test_mma.log | head -3 | cut -c1-300
FLASHCL_TEST_FEATURES=wgmma timeout 150 build-gpu/tests/test_flash > $R/test_flash.log 2>&1
echo "test_flash wgmma rc $?: $(grep -E '^[0-9]+%' $R/test_flash.log | tail -1)"; grep -E ':[EF]:' $R/test_flash.log | head -3 | cut -c1-300
tar czf $OUT/run.tgz -C $R .
