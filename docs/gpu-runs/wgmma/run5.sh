#!/bin/bash
# Issue 17, wgmma-7: the pipelined loop with the copies issued after the products (and the copy loops
# unrolled); where a tile's time goes (FLASHCL_DEBUG_ABLATE: timing only, wrong results); test_mma and
# test_flash's wgmma list on the real kernel; the finished PTX of the default d=128 program.
source docs/gpu-runs/wgmma/setup.sh
FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no timeout 120 build-gpu/tests/test_mma > $R/test_mma.log 2>&1
echo "test_mma rc $?: $(grep -E '^[0-9]+%' $R/test_mma.log | tail -1)"; grep -E ':[EF]:' $R/test_mma.log | head -5
FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no FLASHCL_TEST_FEATURES=wgmma timeout 150 build-gpu/tests/test_flash > $R/test_flash.log 2>&1
echo "test_flash wgmma rc $?: $(grep -E '^[0-9]+%' $R/test_flash.log | tail -1)"; grep -E ':[EF]:' $R/test_flash.log | head -5
mkdir -p $R/cache
for args in "-d 128 --dtype f16 -n 2048 -H 4" "-d 256 --dtype f16 -n 600 -H 2"; do
  FLASHCL_CACHE=1 FLASHCL_CACHE_DIR=$R/cache FLASHCL_PATH=wgmma FLASHCL_BUILD_LOG=1 FLASHCL_BUILD_OPTIONS=-cl-nv-verbose \
    timeout 60 $B run --device NVIDIA $args > $R/run.txt 2>&1
  echo "== $args rc $?"; grep -E "^validation|ptxas info    : Used|spill stores|C75" $R/run.txt | grep -v " 0 bytes spill" | sort | uniq -c | cut -c1-160
done
bench() { # label, options, bench args
  FLASHCL_BUILD_OPTIONS="$2" FLASHCL_PATH=wgmma timeout 60 $B bench --device NVIDIA --algos flash --iters 10 $3 > $R/b.txt 2>&1
  printf "%-28s %s\n" "$1" "$(grep -E '^[0-9]' $R/b.txt | awk '{print $3, $4, $5, $8, $9, $10, $11}' | tr '\n' ';')"
}
S="-d 128 --dtype f16 -n 4096"
bench "default (pipelined)" "" "$S"
bench "not pipelined" "-DWG_PIPELINE=0" "$S"
for a in 1 2 4 8 3 6 5 9 10 11; do bench "ablate $a" "-DFLASHCL_DEBUG_ABLATE=$a" "$S"; done
for d in 128 64 256; do for p in wgmma auto; do
  FLASHCL_PATH=$p timeout 90 $B bench --device NVIDIA --algos flash --iters 10 -d $d --dtype f16 -n 4096,16384 > $R/bench_${p}_$d.txt 2>&1
  echo "== bench $p d=$d: $(grep -E '^[0-9]' $R/bench_${p}_$d.txt | awk '{print $3, $8, $9, $10, $11}' | tr '\n' ';')"
done; done
tar czf $OUT/run.tgz -C $R .
