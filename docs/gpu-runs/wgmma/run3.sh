#!/bin/bash
# Issue 17, wgmma-5: the first flash_wgmma on the H200: validated runs of the real kernel (FLASHCL_PATH=wgmma)
# on several shapes (and test_mma's nine cases), ptxas's report of the finished programs, then flashcl bench
# against flash_mma and PyTorch SDPA in the same call.
source docs/gpu-runs/wgmma/setup.sh
$B devices --device NVIDIA 2>&1 | grep -E "sm_90a|matrix" | cut -c1-200
for t in test_kernels test_mma; do
  FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no timeout 200 build-gpu/tests/$t > $R/$t.log 2>&1
  echo "$t rc $?: $(grep -E '^[0-9]+%' $R/$t.log | tail -1)"; grep -E ':[EF]:|flash_wgmma' $R/$t.log | head -12
done
for args in "-d 128 --dtype f16 -n 1000 -H 4" "-d 64 --dtype bf16 --causal -n 777 -H 4 --heads-kv 2" "-d 128 --dtype f16 --causal --seq-q 300 --seq-kv 517 -H 2" "-d 256 --dtype f16 -n 600 -H 2" "-d 128 --dtype bf16 --seq-q 64 --seq-kv 4096 -H 8"; do
  echo "== $args"
  FLASHCL_PATH=wgmma FLASHCL_BUILD_LOG=1 FLASHCL_BUILD_OPTIONS=-cl-nv-verbose timeout 60 $B run --device NVIDIA $args > $R/run.txt 2>&1
  echo "rc $?"; grep -E "^kernel|^path|^validation|^time|rror|ptxas info    : Used|spill|C75" $R/run.txt | sort -u | cut -c1-220
done
for d in 128 64 256; do
  for p in wgmma auto; do
    FLASHCL_PATH=$p timeout 90 $B bench --device NVIDIA --algos flash --iters 10 -d $d --dtype f16 -n 4096,16384 > $R/bench_${p}_$d.txt 2>&1
    echo "== bench $p d=$d rc $?"; grep -E "^[0-9]" $R/bench_${p}_$d.txt | cut -c1-100
  done
done
gcc -O2 -Iinclude docs/gpu-runs/mma-tiles/mma_tiles.c -o /tmp/mma_tiles -Lbuild-gpu -lflashcl -lOpenCL -lm -w
export LD_LIBRARY_PATH=$PWD/build-gpu:$LD_LIBRARY_PATH
for d in 128 64 256; do  # flash_wgmma's tiles and K/V stages (overrides), normal data, N=4096
  MMA_WGMMA=1 MMA_DATA=normal MMA_N=4096 MMA_TILES="128x128/2/1,128x128/2/2,128x64/2/1,128x64/2/2,64x128/2/1,64x128/2/2" \
    timeout 100 /tmp/mma_tiles $d > $R/wg_tiles_$d.txt 2>&1
  echo "== wgmma tiles d=$d rc $?"; cut -c1-170 $R/wg_tiles_$d.txt
done
timeout 150 /opt/torch/.venv/bin/python bench/anchors/sdpa_prefill.py flash,cudnn 128,64,256 > $R/sdpa.jsonl 2> $R/sdpa.log
python3 -c "
import json
for l in open('$R/sdpa.jsonl'):
    r=json.loads(l)
    if 'tflops' in r and not r['causal']: print(r['backend'],r['dtype'],r['d'],r['n'],round(r['tflops'],1))
"
tar czf $OUT/run.tgz -C $R .
