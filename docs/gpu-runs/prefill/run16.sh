#!/bin/bash
# Issue 17 part 1 and issue 15's last suites: the sm_90a probe at profile query (test_kernels'
# test_ptx_finish_sm90a, test_mma's level 2, flashcl devices), the test_flash lists that run the portable
# kernel and prefill-13/14 did not (cache, offsets, align, kvopts, mixed, decode, quant), and what fp32 FMA
# work reaches through NVIDIA's OpenCL compiler: CLBlast's SGEMM 8192^3 beside PyTorch's (cuBLAS, TF32
# off) in the same call. One archive.
source .gpu/gpu-env.sh >/dev/null
R=/tmp/r; mkdir -p $R
t0=$(date +%s)
[ -d build-gpu ] || meson setup build-gpu -Dbuildtype=release >/dev/null
ninja -C build-gpu > $R/build.log 2>&1 || { tail -30 $R/build.log; exit 1; }
FLASHCL_BUILD_LOG=1 build-gpu/tools/flashcl devices 2>&1 | grep -v "^flashcl: build log" | head -30 | cut -c1-220
export FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no
for t in test_kernels test_mma; do
  s=$(date +%s); timeout 100 build-gpu/tests/$t > $R/$t.log 2>&1
  echo "$t rc $? $(( $(date +%s) - s )) s: $(grep -E '^[0-9]+%' $R/$t.log | tail -1)"; grep -E ':[EF]:' $R/$t.log | head -5
done
for l in cache offsets align kvopts mixed decode quant; do
  s=$(date +%s); FLASHCL_TEST_FEATURES=$l timeout 60 build-gpu/tests/test_flash > $R/test_flash_$l.log 2>&1
  echo "test_flash $l rc $? $(( $(date +%s) - s )) s: $(grep -E '^[0-9]+%' $R/test_flash_$l.log | tail -1)"; grep -E ':[EF]:' $R/test_flash_$l.log | head -5
done
unset FLASHCL_TEST_PLATFORM CK_FORK
tar czf $OUT/run.tgz -C $R .
gcc -O2 docs/gpu-runs/prefill/sgemm.c -o /tmp/sgemm -lclblast -lOpenCL -w && timeout 120 /tmp/sgemm | tee $R/sgemm.txt
PYTHONPATH=bench/anchors timeout 120 /opt/torch/.venv/bin/python docs/gpu-runs/prefill/sgemm_torch.py | tee $R/sgemm_torch.txt
tar czf $OUT/run.tgz -C $R .
echo "total $(( $(date +%s) - t0 )) s"
