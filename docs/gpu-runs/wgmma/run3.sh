#!/bin/bash
# Issue 17, wgmma-5: the first flash_wgmma on the H200: validated runs of the real kernel (FLASHCL_PATH=wgmma)
# on several shapes, ptxas's report of the finished programs, then flashcl bench against flash_mma.
source .gpu/gpu-env.sh >/dev/null
R=/tmp/r; mkdir -p $R
[ -d build-gpu ] || meson setup build-gpu -Dbuildtype=release >/dev/null
ninja -C build-gpu > $R/build.log 2>&1 || { tail -30 $R/build.log; exit 1; }
B=build-gpu/tools/flashcl
export FLASHCL_CACHE=0
for args in "-d 128 --dtype f16 -n 1000 -H 4" "-d 64 --dtype bf16 --causal -n 777 -H 4 --heads-kv 2" "-d 128 --dtype f16 --causal --seq-q 300 --seq-kv 517 -H 2" "-d 256 --dtype f16 -n 600 -H 2" "-d 128 --dtype bf16 --seq-q 64 --seq-kv 4096 -H 8"; do
  echo "== $args"
  FLASHCL_PATH=wgmma FLASHCL_BUILD_LOG=1 FLASHCL_BUILD_OPTIONS=-cl-nv-verbose timeout 60 $B run --device NVIDIA $args > $R/run.txt 2>&1
  echo "rc $?"; grep -E "^kernel|^path|^validation|^time|rror|ptxas info    : Used|spill|C75" $R/run.txt | sort -u | cut -c1-220
done
for d in 128 64 256; do
  for p in wgmma auto; do
    FLASHCL_PATH=$p timeout 90 $B bench --device NVIDIA --algos flash --iters 10 -d $d --dtype f16 -n 4096,16384 > $R/bench_${p}_$d.txt 2>&1
    echo "== bench $p d=$d rc $?"; grep -E "^[0-9]" $R/bench_${p}_$d.txt | cut -c1-100
  done
done
