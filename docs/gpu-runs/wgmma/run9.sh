#!/bin/bash
# Issue 17, wgmma-11 (the next device session's first call): the device suites with auto on flash_wgmma,
# with limits that allow the driver's compiles (every flash_wgmma program is built from source and
# finished for sm_90a); three K/V stages against two (mma_tiles, validated), beside flash_mma.
source docs/gpu-runs/wgmma/setup.sh
export FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no
export FLASHCL_CACHE=1 FLASHCL_CACHE_DIR=$R/cache # (the suites share compiled programs)
gcc -O2 -Iinclude docs/gpu-runs/mma-tiles/mma_tiles.c -o /tmp/mma_tiles -Lbuild-gpu -lflashcl -lOpenCL -lm -w
export LD_LIBRARY_PATH=$PWD/build-gpu:$LD_LIBRARY_PATH
for d in 128 64 256; do
  tl="128x128/2/2,128x128/2/3,128x64/2/2,128x64/2/3"; [ $d = 256 ] && tl="128x64/2/2"
  MMA_WGMMA=1 MMA_DATA=normal MMA_N=4096 MMA_TILES=$tl timeout 120 /tmp/mma_tiles $d > $R/wg_tiles_$d.txt 2>&1
  echo "== wgmma tiles d=$d rc $?"; cut -c1-170 $R/wg_tiles_$d.txt
done
for t in test_mma test_plan test_kernels test_edges test_validate; do
  timeout 200 build-gpu/tests/$t > $R/$t.log 2>&1
  echo "$t rc $?: $(grep -E '^[0-9]+%' $R/$t.log | tail -1)"; grep -E ':[EF]:' $R/$t.log | head -3 | cut -c1-200
done
timeout 300 build-gpu/tests/test_flash > $R/test_flash.log 2>&1
echo "test_flash rc $?: $(grep -E '^[0-9]+%' $R/test_flash.log | tail -1)"; grep -E ':[EF]:' $R/test_flash.log | head -5 | cut -c1-200
tar czf $OUT/run.tgz -C $R .
