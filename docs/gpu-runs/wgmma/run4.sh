#!/bin/bash
# Issue 17, wgmma-6: flash_wgmma's pipelined loop (S(j+1) and P(j)*V(j) issued together, the softmax of
# S(j+1) beside P(j)*V(j), P pinned before the batch's fence) against the first version, on the H200:
# test_mma's real-kernel cases and test_flash's wgmma list on the real kernel, ptxas's report and the
# finished PTX of each variant (for ptxas/nvdisasm here), the tile/stage sweep, flashcl bench against
# flash_mma, and PyTorch SDPA in the same call.
source docs/gpu-runs/wgmma/setup.sh
FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no timeout 120 build-gpu/tests/test_mma > $R/test_mma.log 2>&1
echo "test_mma rc $?: $(grep -E '^[0-9]+%' $R/test_mma.log | tail -1)"; grep -E ':[EF]:' $R/test_mma.log | head -5
FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no FLASHCL_TEST_FEATURES=wgmma timeout 150 build-gpu/tests/test_flash > $R/test_flash.log 2>&1
echo "test_flash wgmma rc $?: $(grep -E '^[0-9]+%' $R/test_flash.log | tail -1)"; grep -E ':[EF]:' $R/test_flash.log | head -5
# ptxas's report and the finished PTX (the disk cache's entries) of each variant, one validated run each
for v in "pipe:" "nopipe:-DWG_PIPELINE=0"; do
  name=${v%%:*}; opt=${v#*:}
  for args in "-d 128 --dtype f16 -n 2048 -H 4" "-d 64 --dtype bf16 --causal -n 777 -H 4 --heads-kv 2" "-d 256 --dtype f16 -n 600 -H 2"; do
    mkdir -p $R/cache-$name
    FLASHCL_CACHE=1 FLASHCL_CACHE_DIR=$R/cache-$name FLASHCL_PATH=wgmma FLASHCL_BUILD_LOG=1 \
      FLASHCL_BUILD_OPTIONS="-cl-nv-verbose $opt" timeout 60 $B run --device NVIDIA $args > $R/run.txt 2>&1
    echo "== $name $args rc $?"; grep -E "^kernel|^validation|ptxas info    : Used|spill stores|C75" $R/run.txt | grep -v " 0 bytes spill" | sort | uniq -c | cut -c1-200
  done
done
gcc -O2 -Iinclude docs/gpu-runs/mma-tiles/mma_tiles.c -o /tmp/mma_tiles -Lbuild-gpu -lflashcl -lOpenCL -lm -w
export LD_LIBRARY_PATH=$PWD/build-gpu:$LD_LIBRARY_PATH
for d in 128 64 256; do  # stages 1: the first version's loop; 2: the pipelined loop
  tl="128x128/2/1,128x128/2/2,128x64/2/2,64x128/2/2"; [ $d = 256 ] && tl="128x64/2/1,128x64/2/2,64x64/2/2"
  MMA_WGMMA=1 MMA_DATA=normal MMA_N=4096 MMA_TILES=$tl timeout 100 /tmp/mma_tiles $d > $R/wg_tiles_$d.txt 2>&1
  echo "== wgmma tiles d=$d rc $?"; cut -c1-160 $R/wg_tiles_$d.txt
done
FLASHCL_BUILD_OPTIONS=-DWG_PIPELINE=0 MMA_WGMMA=1 MMA_DATA=normal MMA_N=4096 MMA_TILES=128x128/2/2,128x64/2/2 timeout 60 /tmp/mma_tiles 128 > $R/wg_nopipe.txt 2>&1
echo "== two stages, not pipelined, d=128"; cut -c1-160 $R/wg_nopipe.txt
for cfg in "128 f16 " "128 bf16 " "64 f16 " "256 f16 " "128 f16 --causal"; do
  set -- $cfg
  for p in wgmma auto; do
    FLASHCL_PATH=$p timeout 90 $B bench --device NVIDIA --algos flash --iters 10 -d $1 --dtype $2 $3 -n 4096,16384 > $R/bench_${p}_$1_$2$3.txt 2>&1
    echo "== bench $p d=$1 $2 $3 rc $?"; grep -E "^[0-9]" $R/bench_${p}_$1_$2$3.txt | cut -c1-100
  done
done
timeout 200 /opt/torch/.venv/bin/python bench/anchors/sdpa_prefill.py flash,cudnn 128,64,256 > $R/sdpa.jsonl 2> $R/sdpa.log
python3 -c "
import json
for l in open('$R/sdpa.jsonl'):
    r=json.loads(l)
    if 'tflops' in r: print(r['backend'],r['dtype'],r['d'],r['n'],'causal' if r['causal'] else '',round(r['tflops'],1))
"
tar czf $OUT/run.tgz -C $R .
