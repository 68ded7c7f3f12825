#!/bin/bash
# Issue 15, prefill-11: prefill-10 found the d=128 tiles of prefill-5 (128 x 32, one stage) 7% slower at
# N=16384 than prefill-5 measured them (304 against 331 TFLOP/s), with d=64 and d=256 unchanged; the
# kernel change between those runs that touches only the key loop is the rescale skip's removal, measured
# then at N=4096 alone (+0.3%). Here the skip (-DRESCALE_SKIP=1) against without, on 128 x 64 in one and
# in two stages, N = 1024/4096/16384 (mma_tiles, normal data), and flashcl bench causal. One archive.
source .gpu/gpu-env.sh >/dev/null
R=/tmp/r; mkdir -p $R
t0=$(date +%s)
[ -d build-gpu ] || meson setup build-gpu -Dbuildtype=release >/dev/null
ninja -C build-gpu > $R/build.log 2>&1 || { tail -30 $R/build.log; exit 1; }
gcc -O2 -Iinclude docs/gpu-runs/mma-tiles/mma_tiles.c -o /tmp/mma_tiles -Lbuild-gpu -lflashcl -lOpenCL -lm -w
export LD_LIBRARY_PATH=$PWD/build-gpu:$LD_LIBRARY_PATH
for sk in 1 0; do
  for n in 16384 4096 1024; do
    FLASHCL_BUILD_OPTIONS="-DRESCALE_SKIP=$sk" MMA_DATA=normal MMA_N=$n MMA_TILES="128x64/4,128x64/4/2,128x32/4" timeout 100 /tmp/mma_tiles 128 > $R/sweep_sk${sk}_$n.txt 2> $R/sweep_sk${sk}_$n.log
    echo "== RESCALE_SKIP=$sk N=$n rc $?"; cut -c1-150 $R/sweep_sk${sk}_$n.txt
  done
done
B=build-gpu/tools/flashcl
for sk in 1 0; do
  FLASHCL_BUILD_OPTIONS="-DRESCALE_SKIP=$sk" timeout 60 $B bench --device NVIDIA --algos flash --iters 10 -d 128 --dtype f16 -n 4096,16384 --causal > $R/bench_causal_sk$sk.txt 2>&1
  echo "== bench causal RESCALE_SKIP=$sk"; grep -E "^[0-9]" $R/bench_causal_sk$sk.txt | cut -c1-100
done
tar czf $OUT/run.tgz -C $R .
echo "total $(( $(date +%s) - t0 )) s"
