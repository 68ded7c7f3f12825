#!/bin/bash
# Issue 15, prefill-3: flash_mma's tile copies without per-chunk index arithmetic; validated (test_mma,
# the mma cases of test_flash); the tile sweep at d=64, 128, 192, 256 in fp16 and at d=128 in bf16, with
# NVIDIA's register report; the PTX of the 128 x 64 MT=2 kernel kept. Prediction: docs/NOTES.md.
source .gpu/gpu-env.sh >/dev/null
R=/tmp/r; mkdir -p $R
t0=$(date +%s)
[ -d build-gpu ] || meson setup build-gpu -Dbuildtype=release >/dev/null
ninja -C build-gpu > $R/build.log 2>&1 || { tail -30 $R/build.log; exit 1; }
export FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no
timeout 60 build-gpu/tests/test_mma > $R/test_mma.log 2>&1; echo "test_mma rc $?: $(grep -E '^[0-9]+%' $R/test_mma.log)"
FLASHCL_TEST_FEATURES=mma timeout 120 build-gpu/tests/test_flash > $R/test_flash_mma.log 2>&1
echo "test_flash mma rc $?: $(grep -E '^[0-9]+%' $R/test_flash_mma.log | tail -1)"; grep -E ':[EF]:' $R/test_flash_mma.log | head -5
unset FLASHCL_TEST_PLATFORM CK_FORK
gcc -O2 -Iinclude docs/gpu-runs/mma-tiles/mma_tiles.c -o /tmp/mma_tiles -Lbuild-gpu -lflashcl -lOpenCL -w
export LD_LIBRARY_PATH=build-gpu
sweep() { # name, tiles, dims [dtype]
  MMA_DTYPE=$4 FLASHCL_BUILD_OPTIONS="-cl-nv-verbose" FLASHCL_BUILD_LOG=1 FLASHCL_CACHE=0 MMA_TILES="$2" timeout 120 /tmp/mma_tiles $3 > $R/sweep_$1.txt 2> $R/sweep_$1.log
  echo "== $1: rc $?"
  grep -oE "^b?f16 d=[0-9]+ [a-z_]+ [0-9x]+ rows/item [0-9]|[0-9.]+ TFLOP/s|validation [a-zA-Z]+" $R/sweep_$1.txt | paste -d' ' - - -
  grep -E "Used [0-9]+ registers|spill stores" $R/sweep_$1.log | grep -v "0 bytes spill" | grep -v "0 barriers" | sed -E 's/ptxas info *: Used //; s/ registers, used 1 barriers,/r/; s/ptxas *\. *//' | tr '\n' ';' | cut -c1-700; echo
}
sweep d64 "0x0/0,64x64/2,64x128/2,128x32/4,128x64/4,128x128/4" 64
sweep d128 "0x0/0,64x64/2,64x128/2,128x32/4,128x64/4,128x128/4" 128
sweep d192 "64x32/2,64x64/2,128x64/2,128x32/4" 192
sweep d256 "64x32/2,64x64/2,128x32/4" 256
sweep bf16 "64x64/2,128x64/4" 128 bf16
FLASHCL_CACHE_DIR=$R/cache MMA_TILES="128x64/4" timeout 60 /tmp/mma_tiles 128 > $R/ptx_run.txt 2>&1
tar czf $OUT/run.tgz -C $R .
echo "total $(( $(date +%s) - t0 )) s"
