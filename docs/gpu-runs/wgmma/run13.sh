#!/bin/bash
# Issue 17, wgmma-14: measurements beside the producer (the copies through L2 only; without the consumers'
# proxy fence; 64-key tiles in two and three stages), each validated by mma_tiles; then the device suites
# with auto on flash_wgmma and its producer, in parallel processes sharing one disk cache (the driver's
# compiles of every flash_wgmma program are most of their time), test_flash in five parts.
source docs/gpu-runs/wgmma/setup.sh
export FLASHCL_CACHE=1 FLASHCL_CACHE_DIR=$R/cache
gcc -O2 -Iinclude docs/gpu-runs/mma-tiles/mma_tiles.c -o /tmp/mma_tiles -Lbuild-gpu -lflashcl -lOpenCL -lm -w
export LD_LIBRARY_PATH=$PWD/build-gpu:$LD_LIBRARY_PATH
for opt in "" "-DCOPY_CA=0" "-DPRODUCER_FENCE=0"; do
  for d in 128 64; do
    FLASHCL_BUILD_OPTIONS="$opt" MMA_WGMMA=1 MMA_DATA=normal MMA_N=4096 MMA_TILES=128x128/2/2p timeout 60 /tmp/mma_tiles $d > $R/t.txt 2>&1
    echo "== '$opt' d=$d rc $?: $(cut -c1-200 $R/t.txt | sed 's/rows\/item 2 tpr 4 //')"
  done
done
MMA_WGMMA=1 MMA_DATA=normal MMA_N=4096 MMA_TILES=128x64/2/2p,128x64/2/3p timeout 60 /tmp/mma_tiles 128 > $R/t.txt 2>&1
echo "== 64-key tiles d=128 rc $?"; cut -c1-200 $R/t.txt | sed 's/rows\/item 2 tpr 4 //'
export FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no
T=build-gpu/tests
for t in test_mma test_plan test_kernels test_edges test_validate; do
  (timeout 330 $T/$t > $R/$t.log 2>&1; echo "$t rc $?: $(grep -E '^[0-9]+%' $R/$t.log | tail -1)" > $R/$t.rc) &
done
i=0
for f in grid window,bias,varlen,split,wgmma cache,mma,offsets,align decode,decode_mma,quant masks,sinks,kvopts,mixed,dimv; do
  i=$((i+1))
  (FLASHCL_TEST_FEATURES=$f timeout 380 $T/test_flash > $R/test_flash_$i.log 2>&1; echo "test_flash $f rc $?: $(grep -E '^[0-9]+%' $R/test_flash_$i.log | tail -1)" > $R/test_flash_$i.rc) &
done
wait
cat $R/*.rc
grep -hE ':[EF]:' $R/test_*.log | head -8 | cut -c1-250
rm -rf $R/cache
tar czf $OUT/run.tgz -C $R .
