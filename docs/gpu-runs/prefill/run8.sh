#!/bin/bash
# Issue 15, prefill-8: flash_mma's output through local memory in 16-byte chunks (O_STAGED, the default
# where O's rows are 16-byte aligned) against the two 16-bit stores a lane (-DO_STAGED=0), on the
# chooser's tiles and on 128 x 64 in two stages; validated (test_mma, test_plan, the mma cases of
# test_flash); the portable kernel's fp32 programs (NVIDIA's PTX kept in a disk cache, -cl-nv-verbose)
# with and without PREFETCH, for the SASS on this machine; flashcl tune at d=64 fp32. One archive.
source .gpu/gpu-env.sh >/dev/null
R=/tmp/r; mkdir -p $R
t0=$(date +%s)
[ -d build-gpu ] || meson setup build-gpu -Dbuildtype=release >/dev/null
ninja -C build-gpu > $R/build.log 2>&1 || { tail -30 $R/build.log; exit 1; }
export FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no
for t in test_mma test_plan; do
  s=$(date +%s); timeout 100 build-gpu/tests/$t > $R/$t.log 2>&1
  echo "$t rc $? $(( $(date +%s) - s )) s: $(grep -E '^[0-9]+%' $R/$t.log | tail -1)"; grep -E ':[EF]:' $R/$t.log | head -5
done
s=$(date +%s); FLASHCL_TEST_FEATURES=mma timeout 120 build-gpu/tests/test_flash > $R/test_flash_mma.log 2>&1
echo "test_flash mma rc $? $(( $(date +%s) - s )) s: $(grep -E '^[0-9]+%' $R/test_flash_mma.log | tail -1)"; grep -E ':[EF]:' $R/test_flash_mma.log | head -5
unset FLASHCL_TEST_PLATFORM CK_FORK
gcc -O2 -Iinclude docs/gpu-runs/mma-tiles/mma_tiles.c -o /tmp/mma_tiles -Lbuild-gpu -lflashcl -lOpenCL -w
export LD_LIBRARY_PATH=$PWD/build-gpu:$LD_LIBRARY_PATH
sweep() { # tag, tiles, N, head dims, build options
  FLASHCL_BUILD_OPTIONS="$5" MMA_N=$3 MMA_TILES="$2" timeout 100 /tmp/mma_tiles $4 > $R/sweep_$1.txt 2> $R/sweep_$1.log
  echo "== $1 ($5) rc $?"; cut -c1-150 $R/sweep_$1.txt
}
for st in 1 0; do
  for n in 1024 4096 16384; do sweep d128_${n}_st$st "128x32/4,128x64/4/2" $n 128 "-DO_STAGED=$st"; done
  sweep d64_4096_st$st "128x64/4" 4096 64 "-DO_STAGED=$st"
  sweep d256_4096_st$st "64x64/2" 4096 256 "-DO_STAGED=$st"
done
tar czf $OUT/run.tgz -C $R .
B=build-gpu/tools/flashcl
for pf in 0 1; do
  for d in 64 128; do
    FLASHCL_CACHE_DIR=$R/cache_f32_pf$pf FLASHCL_BUILD_LOG=1 FLASHCL_BUILD_OPTIONS="-cl-nv-verbose -DPREFETCH=$pf" timeout 60 $B run --device NVIDIA -d $d --dtype f32 -n 4096 --heads $((2048 / d)) --batch 4 > $R/f32_d${d}_pf$pf.txt 2>&1
    echo "== f32 d=$d PREFETCH=$pf"; grep -E "Compiling|Used|spill|^time" $R/f32_d${d}_pf$pf.txt | cut -c1-160 | head -12
  done
done
tar czf $OUT/run.tgz -C $R .
export XDG_CONFIG_HOME=$R/config
s=$(date +%s); timeout 200 $B tune --device NVIDIA -d 64 --dtype f32 -n 4096 --iters 3 > $R/tune_d64.txt 2>&1
echo "tune d=64 rc $? $(( $(date +%s) - s )) s"; tail -4 $R/tune_d64.txt | cut -c1-200; grep -v "^#" $R/config/flashcl/tuning.db 2>/dev/null | cut -c1-250
tar czf $OUT/run.tgz -C $R .
echo "total $(( $(date +%s) - t0 )) s"
