#!/bin/bash
# Issue 15, prefill-14: prefill-13's sweeps that did not run (the fp32 tile sweep with the row shuffles:
# mma_tiles divided by zero on the chooser's entry; d=256 on 8 warps: overrides were held to the
# chooser's budget, now to the work-group's whole local memory). One archive.
source .gpu/gpu-env.sh >/dev/null
R=/tmp/r; mkdir -p $R
t0=$(date +%s)
[ -d build-gpu ] || meson setup build-gpu -Dbuildtype=release >/dev/null
ninja -C build-gpu > $R/build.log 2>&1 || { tail -30 $R/build.log; exit 1; }
gcc -O2 -Iinclude docs/gpu-runs/mma-tiles/mma_tiles.c -o /tmp/mma_tiles -Lbuild-gpu -lflashcl -lOpenCL -lm -w
export LD_LIBRARY_PATH=$PWD/build-gpu:$LD_LIBRARY_PATH
for d in 128 64; do
  MMA_DTYPE=f32 MMA_N=4096 MMA_TILES="0x0/0/0,128x64/4/8,128x32/4/16,64x32/4/8,128x32/8/8,64x64/4/8,128x64/8/8,64x32/2/8" timeout 100 /tmp/mma_tiles $d > $R/f32_sweep_$d.txt 2> $R/f32_sweep_$d.log
  echo "== fp32 sweep d=$d rc $?"; cut -c1-175 $R/f32_sweep_$d.txt
done
tar czf $OUT/run.tgz -C $R .
for n in 4096 16384; do
  MMA_DATA=normal MMA_N=$n MMA_TILES="0x0/0,128x64/2,128x32/2,128x32/2/2,64x64/2/2,128x64/2/2" timeout 100 /tmp/mma_tiles 256 > $R/d256_$n.txt 2> $R/d256_$n.log
  echo "== d=256 N=$n rc $?"; cut -c1-175 $R/d256_$n.txt
done
MMA_DATA=normal MMA_N=4096 MMA_TILES="0x0/0,128x64/2,128x32/2/2" timeout 100 /tmp/mma_tiles 192 > $R/d192_4096.txt 2> $R/d192_4096.log
echo "== d=192 N=4096 rc $?"; cut -c1-175 $R/d192_4096.txt
tar czf $OUT/run.tgz -C $R .
echo "total $(( $(date +%s) - t0 )) s"
