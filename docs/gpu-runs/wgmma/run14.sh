#!/bin/bash
# Issue 17, wgmma-15: BENCHMARKS.md's flash_wgmma section (auto on the H200: the producer warpgroup at d=64
# and d=128, the consumers alone at d=256), flash_mma and PyTorch SDPA (FlashAttention-2, cuDNN) in the same
# call; then the consumers at 240 registers (the producer at 24) against 232 (mma_tiles, validated).
source docs/gpu-runs/wgmma/setup.sh
export FLASHCL_CACHE=1 FLASHCL_CACHE_DIR=$R/cache
mkdir -p $R/bench
for cfg in "128 f16 " "128 bf16 " "64 f16 " "256 f16 " "128 f16 --causal"; do
  set -- $cfg
  for v in wgmma:auto mma:mma; do
    f=$R/bench/h200_${v%%:*}_$1_$2${3:+_causal}.json
    FLASHCL_PATH=${v#*:} timeout 60 $B bench --device NVIDIA --algos flash --iters 10 -d $1 --dtype $2 $3 -n 4096,16384 --json $f > $R/b.txt 2>&1
    echo "== ${v%%:*} d=$1 $2 $3 rc $?: $(grep -E '^[0-9]' $R/b.txt | awk '{print $3, $8, $9, $10, $11}' | tr '\n' ';')"
  done
done
timeout 120 /opt/torch/.venv/bin/python bench/anchors/sdpa_prefill.py flash,cudnn 128,64,256 > $R/bench/h200_sdpa.jsonl 2> $R/sdpa.log
python3 -c "
import json
for l in open('$R/bench/h200_sdpa.jsonl'):
    r=json.loads(l)
    if 'tflops' in r and r['n']>1024: print(r['backend'][:2],r['dtype'][:2],r['d'],r['n'],'c' if r['causal'] else '',round(r['tflops'],1))
" | tr '\n' ';'; echo
gcc -O2 -Iinclude docs/gpu-runs/mma-tiles/mma_tiles.c -o /tmp/mma_tiles -Lbuild-gpu -lflashcl -lOpenCL -lm -w
export LD_LIBRARY_PATH=$PWD/build-gpu:$LD_LIBRARY_PATH
for opt in "" "-DCONSUMER_REG_COUNT=240"; do
  for d in 128 64 256; do
    tl=128x128/2/2p; [ $d = 256 ] && tl=128x64/2/2n,128x64/2/2p
    FLASHCL_BUILD_OPTIONS="$opt" MMA_WGMMA=1 MMA_DATA=normal MMA_N=4096 MMA_TILES=$tl timeout 60 /tmp/mma_tiles $d > $R/t.txt 2>&1
    echo "== '$opt' d=$d rc $?"; cut -c1-200 $R/t.txt | sed 's/rows\/item 2 tpr 4 //'
  done
done
rm -rf $R/cache
tar czf $OUT/run.tgz -C $R .
