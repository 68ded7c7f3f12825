#!/bin/bash
# Issue 15, prefill-2: flash_mma with the softmax in one instruction a step (max.NaN, ex2.approx.ftz, the
# scale in the exponent, the mask its own branch) and Q*K^T k step outer; validated by the mma cases of
# test_flash, test_mma and test_edges; the tile sweep with k outer (default), j outer (-DQK_J_OUTER=1)
# and a register cap for three work-groups an SM; NVIDIA's PTX of the default kernels kept for ptxas and
# nvdisasm on the build machine. Prediction: docs/NOTES.md. One archive.
source .gpu/gpu-env.sh >/dev/null
R=/tmp/r; mkdir -p $R
t0=$(date +%s)
[ -d build-gpu ] || meson setup build-gpu -Dbuildtype=release >/dev/null
ninja -C build-gpu > $R/build.log 2>&1 || { tail -30 $R/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
export FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no
for t in test_mma test_edges; do
  s=$(date +%s); timeout 120 build-gpu/tests/$t > $R/$t.log 2>&1
  echo "$t rc $? $(( $(date +%s) - s )) s: $(grep -E '^[0-9]+%' $R/$t.log | tail -1)"; grep -E ':[EF]:' $R/$t.log | head -5
done
s=$(date +%s); FLASHCL_TEST_FEATURES=mma timeout 120 build-gpu/tests/test_flash > $R/test_flash_mma.log 2>&1
echo "test_flash mma rc $? $(( $(date +%s) - s )) s: $(grep -E '^[0-9]+%' $R/test_flash_mma.log | tail -1)"; grep -E ':[EF]:' $R/test_flash_mma.log | head -5
unset FLASHCL_TEST_PLATFORM CK_FORK
gcc -O2 -Iinclude docs/gpu-runs/mma-tiles/mma_tiles.c -o /tmp/mma_tiles -Lbuild-gpu -lflashcl -lOpenCL -w
export LD_LIBRARY_PATH=build-gpu
T="0x0/0,64x128/2,128x32/4,128x64/4,128x128/2"
sweep() { # name, options, dims
  FLASHCL_BUILD_OPTIONS="$2 -cl-nv-verbose" FLASHCL_BUILD_LOG=1 FLASHCL_CACHE=0 MMA_TILES="$T" timeout 100 /tmp/mma_tiles $3 > $R/sweep_$1.txt 2> $R/sweep_$1.log
  echo "== $1 ($2): rc $?"
  grep -oE "^d=[0-9]+ [a-z_]+ [0-9x]+ rows/item [0-9]|[0-9.]+ TFLOP/s|validation [a-zA-Z]+" $R/sweep_$1.txt | paste -d' ' - - -
  grep -E "Used [0-9]+ registers|spill stores" $R/sweep_$1.log | grep -v "0 bytes spill" | sed -E 's/ptxas info *: //' | tr '\n' ';' | cut -c1-600; echo
}
sweep kouter "" "64 128 256"
sweep jouter "-DQK_J_OUTER=1" "64 128"
sweep cap168 "-cl-nv-maxrregcount=168" "128"
# NVIDIA's PTX of the default kernels (the disk cache holds the program binaries: PTX text)
FLASHCL_CACHE_DIR=$R/cache MMA_TILES="0x0/0" timeout 60 /tmp/mma_tiles 64 128 > $R/ptx_run.txt 2>&1
ls -la $R/cache | head
tar czf $OUT/run.tgz -C $R .
echo "total $(( $(date +%s) - t0 )) s"
