#!/bin/bash
# Issue 15, prefill-13: the portable kernel's row reductions by warp shuffles (ROW_SHFL, fp32) against
# -DROW_SHFL=0 in the same call, a tile sweep of the fp32 kernel with them, d=256 on 8-warp blocks and
# d=128 on 256-row blocks (overrides through mma_tiles), the device suites the change reaches, and
# PyTorch SDPA in the same call. One archive.
source .gpu/gpu-env.sh >/dev/null
R=/tmp/r; mkdir -p $R
t0=$(date +%s)
[ -d build-gpu ] || meson setup build-gpu -Dbuildtype=release >/dev/null
ninja -C build-gpu > $R/build.log 2>&1 || { tail -30 $R/build.log; exit 1; }
gcc -O2 -Iinclude docs/gpu-runs/mma-tiles/mma_tiles.c -o /tmp/mma_tiles -Lbuild-gpu -lflashcl -lOpenCL -lm -w
export LD_LIBRARY_PATH=$PWD/build-gpu:$LD_LIBRARY_PATH
echo "build $(( $(date +%s) - t0 )) s"
export FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no
for t in test_kernels test_edges; do
  s=$(date +%s); timeout 100 build-gpu/tests/$t > $R/$t.log 2>&1
  echo "$t rc $? $(( $(date +%s) - s )) s: $(grep -E '^[0-9]+%' $R/$t.log | tail -1)"; grep -E ':[EF]:' $R/$t.log | head -5
done
for l in window bias masks split varlen sinks dimv; do
  s=$(date +%s); FLASHCL_TEST_FEATURES=$l timeout 60 build-gpu/tests/test_flash > $R/test_flash_$l.log 2>&1
  echo "test_flash $l rc $? $(( $(date +%s) - s )) s: $(grep -E '^[0-9]+%' $R/test_flash_$l.log | tail -1)"; grep -E ':[EF]:' $R/test_flash_$l.log | head -5
done
unset FLASHCL_TEST_PLATFORM CK_FORK
tar czf $OUT/run.tgz -C $R .
B=build-gpu/tools/flashcl
for rs in 1 0; do
  FLASHCL_BUILD_OPTIONS="-DROW_SHFL=$rs" timeout 90 $B bench --device NVIDIA --algos flash --iters 10 -d 128,64 --dtype f32 -n 4096,16384 --json $R/f32_rs$rs.json > $R/f32_rs$rs.txt 2>&1
  echo "== fp32 bench ROW_SHFL=$rs rc $?"; grep -E "^[0-9]" $R/f32_rs$rs.txt | cut -c1-100
done
FLASHCL_BUILD_OPTIONS="-DROW_SHFL=1" timeout 60 $B bench --device NVIDIA --algos flash --iters 10 -d 128 --dtype f32 -n 16384 --causal > $R/f32_causal.txt 2>&1
echo "== fp32 causal"; grep -E "^[0-9]" $R/f32_causal.txt | cut -c1-100
for d in 128 64; do
  MMA_DTYPE=f32 MMA_N=4096 MMA_TILES="0x0/0/0,128x64/4/8,128x32/4/16,64x32/4/8,128x32/8/8,256x32/8/8,64x64/4/8" timeout 100 /tmp/mma_tiles $d > $R/f32_sweep_$d.txt 2> $R/f32_sweep_$d.log
  echo "== fp32 sweep d=$d rc $?"; cut -c1-170 $R/f32_sweep_$d.txt
done
tar czf $OUT/run.tgz -C $R .
for n in 4096 16384; do
  MMA_DATA=normal MMA_N=$n MMA_TILES="0x0/0,128x64/2,128x32/2/2,128x64/2/2,64x32/2/2" timeout 100 /tmp/mma_tiles 256 > $R/d256_$n.txt 2> $R/d256_$n.log
  echo "== d=256 N=$n rc $?"; cut -c1-170 $R/d256_$n.txt
  MMA_DATA=normal MMA_N=$n MMA_TILES="0x0/0,256x64/4,256x64/4/2" timeout 100 /tmp/mma_tiles 128 > $R/d128_$n.txt 2> $R/d128_$n.log
  echo "== d=128 N=$n rc $?"; cut -c1-170 $R/d128_$n.txt
done
MMA_DATA=normal MMA_N=4096 MMA_TILES="0x0/0,256x64/4" timeout 100 /tmp/mma_tiles 64 > $R/d64_4096.txt 2> $R/d64_4096.log
echo "== d=64 N=4096 rc $?"; cut -c1-170 $R/d64_4096.txt
tar czf $OUT/run.tgz -C $R .
timeout 200 /opt/torch/.venv/bin/python bench/anchors/sdpa_prefill.py flash,efficient > $R/h200_sdpa.jsonl 2> $R/sdpa.log
echo "sdpa rc $?"
python3 -c "
import json
for l in open('$R/h200_sdpa.jsonl'):
    r=json.loads(l)
    if 'tflops' in r: print(r['backend'],r['dtype'],r['d'],r['n'],r['causal'],round(r['tflops'],1))
"
tar czf $OUT/run.tgz -C $R .
echo "total $(( $(date +%s) - t0 )) s"
