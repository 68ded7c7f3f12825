#!/bin/bash
# Issue 15, prefill-7: the device suites on every kernel edited since the last device run (offsets,
# top-left alignment, mask dtypes, flash_mma's two K/V stages); flash_mma with two K/V stages against
# one (override tiles, N = 1024/4096/16384); the portable kernel with its loads a phase ahead
# (-DPREFETCH=1) against without, fp32 d=64/128; PyTorch SDPA (FlashAttention-2, fp32
# memory-efficient) in the same call. Predictions: docs/NOTES.md. One archive.
source .gpu/gpu-env.sh >/dev/null
R=/tmp/r; mkdir -p $R
t0=$(date +%s)
[ -d build-gpu ] || meson setup build-gpu -Dbuildtype=release >/dev/null
ninja -C build-gpu > $R/build.log 2>&1 || { tail -30 $R/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
export FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no
for t in test_mma test_plan test_kernels test_edges test_flash; do
  s=$(date +%s); timeout 240 build-gpu/tests/$t > $R/$t.log 2>&1
  echo "$t rc $? $(( $(date +%s) - s )) s: $(grep -E '^[0-9]+%' $R/$t.log | tail -1)"; grep -E ':[EF]:' $R/$t.log | head -5
done
unset FLASHCL_TEST_PLATFORM CK_FORK
tar czf $OUT/run.tgz -C $R .
gcc -O2 -Iinclude docs/gpu-runs/mma-tiles/mma_tiles.c -o /tmp/mma_tiles -Lbuild-gpu -lflashcl -lOpenCL -w
export LD_LIBRARY_PATH=$PWD/build-gpu:$LD_LIBRARY_PATH
sweep() { # tag, tiles, N, head dims
  MMA_N=$3 MMA_TILES="$2" timeout 150 /tmp/mma_tiles $4 > $R/sweep_$1.txt 2> $R/sweep_$1.log
  echo "== $1 rc $?"; cut -c1-150 $R/sweep_$1.txt
}
for n in 1024 4096 16384; do sweep d128_$n "128x32/4,128x32/4/2,128x64/4/2,64x64/2/2" $n 128; done
for n in 4096 16384; do sweep d64_$n "128x64/4,128x64/4/2,128x32/4/2" $n 64; done
sweep d256_4096 "64x64/2,64x32/2/2,64x64/2/2,64x32/2" 4096 256
tar czf $OUT/run.tgz -C $R .
B=build-gpu/tools/flashcl
for pf in 0 1; do
  FLASHCL_BUILD_OPTIONS=-DPREFETCH=$pf timeout 90 $B bench --device NVIDIA --algos flash --iters 10 -d 64,128 --dtype f32 -n 4096,16384 --json $R/bench_f32_pf$pf.json > $R/bench_f32_pf$pf.txt 2>&1
  echo "== f32 PREFETCH=$pf rc $?"; grep -E "^[0-9]" $R/bench_f32_pf$pf.txt | cut -c1-110
done
timeout 150 /opt/torch/.venv/bin/python bench/anchors/sdpa_prefill.py flash,efficient > $R/sdpa.jsonl 2> $R/sdpa.log
echo "sdpa rc $?"
python3 -c "
import json
for l in open('$R/sdpa.jsonl'):
    r=json.loads(l)
    if 'tflops' in r: print(r['backend'],r['dtype'],r['d'],r['n'],r['causal'],round(r['tflops'],1))
"
tar czf $OUT/run.tgz -C $R .
echo "total $(( $(date +%s) - t0 )) s"
