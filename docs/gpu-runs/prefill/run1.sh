#!/bin/bash
# Issue 15, first H200 run of this session: the device suites on the kernels edited after the last run
# (flash_mma restructured for MT, MT=2, Q_LOCAL, SWIZZLE, flash_fwd REG_UNROLL, the plan's local-memory
# check, the 115696-byte budget), then mma-tiles/run3's sweep (MT=2 against 4/8 warps x 16 rows at d=64,
# 128, 192, 256, with NVIDIA's register report), the swizzle variant, today's defaults through flashcl
# bench, and PyTorch SDPA in the same session. Everything lands in one archive.
source .gpu/gpu-env.sh >/dev/null
R=/tmp/r; mkdir -p $R
t0=$(date +%s)
[ -d build-gpu ] || meson setup build-gpu -Dbuildtype=release >/dev/null
ninja -C build-gpu > $R/build.log 2>&1 || { tail -30 $R/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
for t in test_mma test_plan test_kernels test_flash; do
  s=$(date +%s)
  FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no timeout 200 build-gpu/tests/$t > $R/$t.log 2>&1
  echo "$t rc $? $(( $(date +%s) - s )) s: $(grep -E '^[0-9]+%' $R/$t.log | tail -1)"; grep -E ':[EF]:' $R/$t.log | head -5
done
gcc -O2 -Iinclude docs/gpu-runs/mma-tiles/mma_tiles.c -o /tmp/mma_tiles -Lbuild-gpu -lflashcl -lOpenCL -w
LD_LIBRARY_PATH=build-gpu FLASHCL_BUILD_OPTIONS=-cl-nv-verbose FLASHCL_BUILD_LOG=1 FLASHCL_CACHE=0 timeout 150 /tmp/mma_tiles 64 128 192 256 > $R/mma_tiles.txt 2> $R/mma_tiles.log
echo "mma_tiles rc $?"
sed -E 's/ \(.*private [0-9]+ B\)//' $R/mma_tiles.txt | cut -c1-150
grep -E "Used [0-9]+ registers|spill" $R/mma_tiles.log | sort | uniq -c | head -30 > $R/regs.txt
LD_LIBRARY_PATH=build-gpu FLASHCL_BUILD_OPTIONS=-DSWIZZLE=1 timeout 60 /tmp/mma_tiles 64 128 > $R/mma_tiles_swizzle.txt 2>&1
echo "swizzle:"; head -4 $R/mma_tiles_swizzle.txt | cut -c1-150
for d in 64 128 256; do
  timeout 60 build-gpu/tools/flashcl bench --device NVIDIA -d $d --dtype f16 -n 4096,16384 --both --algos flash --iters 10 --json $R/bench_f16_d$d.json > $R/bench_f16_d$d.txt 2>&1
done
timeout 60 build-gpu/tools/flashcl bench --device NVIDIA -d 128 --dtype bf16 -n 4096,16384 --algos flash --iters 10 --json $R/bench_bf16_d128.json > $R/bench_bf16_d128.txt 2>&1
grep -h "flash" $R/bench_*.txt | cut -c1-140
timeout 170 /opt/torch/.venv/bin/python bench/anchors/sdpa_prefill.py > $R/sdpa.jsonl 2> $R/sdpa.log
echo "sdpa rc $?"
python3 -c "
import json
for l in open('$R/sdpa.jsonl'):
    r=json.loads(l)
    if 'tflops' in r: print(r['backend'],r['dtype'],r['d'],r['n'],r['causal'],round(r['tflops'],1))
"
cat $R/regs.txt
tar czf $OUT/run.tgz -C $R .
echo "total $(( $(date +%s) - t0 )) s"
