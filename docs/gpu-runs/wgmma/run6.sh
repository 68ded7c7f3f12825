#!/bin/bash
# Issue 17, wgmma-8: the copies' pattern (COPY_SEG: 64-byte pieces of 8 rows, whole 128-byte lines of 4
# rows, 256 bytes of 2 rows per warp instruction) with the whole kernel, copies and step sync only
# (FLASHCL_DEBUG_ABLATE=5) and copies without waits (=9); test_mma on the default.
source docs/gpu-runs/wgmma/setup.sh
FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no timeout 120 build-gpu/tests/test_mma > $R/test_mma.log 2>&1
echo "test_mma rc $?: $(grep -E '^[0-9]+%' $R/test_mma.log | tail -1)"; grep -E ':[EF]:' $R/test_mma.log | head -5
bench() { # label, options, bench args
  FLASHCL_BUILD_OPTIONS="$2" FLASHCL_PATH=wgmma timeout 60 $B bench --device NVIDIA --algos flash --iters 10 $3 > $R/b.txt 2>&1
  printf "%-24s %s\n" "$1" "$(grep -E '^[0-9]' $R/b.txt | awk '{print $3, $4, $8, $9, $10}' | tr '\n' ';') $(grep -iE 'FAIL|error' $R/b.txt | head -1 | cut -c1-80)"
}
for seg in 4 8 16; do
  for a in 0 5 9; do bench "d=128 seg $seg ablate $a" "-DCOPY_SEG=$seg -DFLASHCL_DEBUG_ABLATE=$a" "-d 128 --dtype f16 -n 4096"; done
  bench "d=128 seg $seg nopipe" "-DCOPY_SEG=$seg -DWG_PIPELINE=0" "-d 128 --dtype f16 -n 4096"
done
for seg in 4 8; do bench "d=64 seg $seg" "-DCOPY_SEG=$seg" "-d 64 --dtype f16 -n 4096"; done
for seg in 4 8 16; do bench "d=128 seg $seg ca" "-DCOPY_SEG=$seg -DCOPY_CA=1" "-d 128 --dtype f16 -n 4096"; done
for seg in 4 8 16; do bench "d=256 seg $seg" "-DCOPY_SEG=$seg" "-d 256 --dtype f16 -n 4096"; done
for seg in 8 16; do for v in "-DCOPY_SEG=$seg" "-DCOPY_SEG=$seg -DWG_PIPELINE=0"; do
  FLASHCL_BUILD_OPTIONS="$v" FLASHCL_PATH=wgmma timeout 60 $B run --device NVIDIA -d 128 --dtype bf16 --causal --seq-q 300 --seq-kv 517 -H 2 > $R/v.txt 2>&1
  echo "validated $v: $(grep -E '^validation' $R/v.txt | cut -c1-60)"
done; done
tar czf $OUT/run.tgz -C $R .
