#!/bin/bash
# Issue 17, wgmma-16: the 128-byte swizzled layouts (SWIZZLE=1: whole-line copies without bank conflicts),
# validated by mma_tiles, with the transposed V descriptor's two offsets as written and swapped (a wrong
# one fails validation); the copy pipeline alone with and without it; flashcl bench under auto with it.
source docs/gpu-runs/wgmma/setup.sh
export FLASHCL_CACHE=1 FLASHCL_CACHE_DIR=$R/cache
gcc -O2 -Iinclude docs/gpu-runs/mma-tiles/mma_tiles.c -o /tmp/mma_tiles -Lbuild-gpu -lflashcl -lOpenCL -lm -w
export LD_LIBRARY_PATH=$PWD/build-gpu:$LD_LIBRARY_PATH
for d in 128 64 256; do
  tl=128x128/2/2p; sw="-DV_LBO=1024 -DV_SBO=16384"; [ $d = 256 ] && tl=128x64/2/2n,128x64/2/2p && sw="-DV_LBO=1024 -DV_SBO=8192"
  for opt in "" "-DSWIZZLE=1" "-DSWIZZLE=1 $sw"; do
    FLASHCL_BUILD_OPTIONS="$opt" MMA_WGMMA=1 MMA_DATA=normal MMA_N=4096 MMA_TILES=$tl timeout 60 /tmp/mma_tiles $d > $R/t.txt 2>&1
    echo "== '$opt' d=$d rc $?"; cut -c1-200 $R/t.txt | sed 's/rows\/item 2 tpr 4 //'
  done
done
sweep() { # label, options, bench args
  FLASHCL_BUILD_OPTIONS="$2" timeout 60 $B bench --device NVIDIA --algos flash --iters 10 $3 > $R/b.txt 2>&1
  printf "%-40s %s\n" "$1" "$(grep -E '^[0-9]' $R/b.txt | awk '{print $3, $4, $8, $9, $10, $11}' | tr '\n' ';')"
}
for sw in "" "-DSWIZZLE=1"; do
  sweep "'$sw' copy pipeline alone d=128" "$sw -DFLASHCL_DEBUG_ABLATE=5" "-d 128 --dtype f16 -n 4096"
  sweep "'$sw' d=128" "$sw" "-d 128 --dtype f16 -n 4096,16384"
  sweep "'$sw' d=64" "$sw" "-d 64 --dtype f16 -n 4096,16384"
done
rm -rf $R/cache
tar czf $OUT/run.tgz -C $R .
