#!/bin/bash
# Issue 17, wgmma-13: the producer's copies walked by row blocks. mma_tiles with and without the producer
# (validated), its ablations (the copy pipeline alone, no softmax), flashcl bench under auto beside
# PyTorch SDPA in the same call, test_mma and test_flash's wgmma list; ptxas's report of the d=128 program.
source docs/gpu-runs/wgmma/setup.sh
export FLASHCL_CACHE=1 FLASHCL_CACHE_DIR=$R/cache
FLASHCL_BUILD_LOG=1 FLASHCL_BUILD_OPTIONS=-cl-nv-verbose timeout 60 $B run --device NVIDIA -d 128 --dtype f16 -n 1000 -H 4 > $R/run.txt 2>&1
echo "run rc $?"; grep -E "^kernel|^validation|rror|Used 168|C75" $R/run.txt | sort -u | cut -c1-200
gcc -O2 -Iinclude docs/gpu-runs/mma-tiles/mma_tiles.c -o /tmp/mma_tiles -Lbuild-gpu -lflashcl -lOpenCL -lm -w
export LD_LIBRARY_PATH=$PWD/build-gpu:$LD_LIBRARY_PATH
for d in 128 64 256; do
  tl="128x128/2/2n,128x128/2/2p,128x128/2/3p"; [ $d = 64 ] && tl="128x128/2/2n,128x128/2/2p,128x128/2/3p"; [ $d = 256 ] && tl="128x64/2/2n,128x64/2/2p"
  MMA_WGMMA=1 MMA_DATA=normal MMA_N=4096 MMA_TILES=$tl timeout 100 /tmp/mma_tiles $d > $R/wg_tiles_$d.txt 2>&1
  echo "== mma_tiles d=$d rc $?"; sed 's/rows\/item 2 tpr 4 //' $R/wg_tiles_$d.txt | cut -c1-190
done
sweep() { # label, options
  FLASHCL_BUILD_OPTIONS="$2" timeout 60 $B bench --device NVIDIA --algos flash --iters 10 -d 128 --dtype f16 -n 4096 > $R/b.txt 2>&1
  printf "%-34s %s\n" "$1" "$(grep -E '^[0-9]' $R/b.txt | awk '{print $3, $4, $8, $9, $10}' | tr '\n' ';')"
}
sweep "producer, ablate 5 (copies+sync)" "-DFLASHCL_DEBUG_ABLATE=5"
sweep "producer, ablate 1 (no softmax)" "-DFLASHCL_DEBUG_ABLATE=1"
sweep "producer, ablate 4 (no products)" "-DFLASHCL_DEBUG_ABLATE=4"
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
