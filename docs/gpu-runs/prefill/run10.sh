#!/bin/bash
# Issue 15, prefill-10: prefill-9's flashcl bench put the new d=128 default (128 x 64 in two stages, O
# staged) 4.7% below prefill-5's old default at N=16384, where mma_tiles (prefill-7/8) had it 4% above.
# The two tools differ in their data (mma_tiles: one array of values 0.5 to 1 for Q, K and V; bench:
# independent normal values). Here each tile choice under both, in one call (MMA_DATA=normal as bench).
source .gpu/gpu-env.sh >/dev/null
R=/tmp/r; mkdir -p $R
t0=$(date +%s)
[ -d build-gpu ] || meson setup build-gpu -Dbuildtype=release >/dev/null
ninja -C build-gpu > $R/build.log 2>&1 || { tail -30 $R/build.log; exit 1; }
gcc -O2 -Iinclude docs/gpu-runs/mma-tiles/mma_tiles.c -o /tmp/mma_tiles -Lbuild-gpu -lflashcl -lOpenCL -lm -w
export LD_LIBRARY_PATH=$PWD/build-gpu:$LD_LIBRARY_PATH
for data in normal same; do
  for n in 16384 4096 1024; do
    MMA_DATA=$data MMA_N=$n MMA_TILES="128x32/4,128x64/4/2,128x32/4/2,128x64/4" timeout 100 /tmp/mma_tiles 128 > $R/sweep_${data}_$n.txt 2> $R/sweep_${data}_$n.log
    echo "== $data N=$n rc $?"; cut -c1-150 $R/sweep_${data}_$n.txt
  done
done
B=build-gpu/tools/flashcl
timeout 60 $B bench --device NVIDIA --algos flash --iters 10 -d 128 --dtype f16 -n 4096,16384 > $R/bench.txt 2>&1
echo "== bench"; grep -E "^[0-9]" $R/bench.txt | cut -c1-100
tar czf $OUT/run.tgz -C $R .
echo "total $(( $(date +%s) - t0 )) s"
