#!/bin/bash
# Issue 15, prefill-6: flash_mma without the rescale skip (prefill-5: no gain), validated (test_mma, the
# mma cases of test_flash); the portable kernel (fp32) re-tuned at d=128 under the static local-memory
# budget (flashcl tune, into a database of this run) and benched with the shipped entry and the new
# one, beside PyTorch's fp32 memory-efficient kernel in the same call. One archive.
source .gpu/gpu-env.sh >/dev/null
R=/tmp/r; mkdir -p $R
t0=$(date +%s)
[ -d build-gpu ] || meson setup build-gpu -Dbuildtype=release >/dev/null
ninja -C build-gpu > $R/build.log 2>&1 || { tail -30 $R/build.log; exit 1; }
export FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no
timeout 60 build-gpu/tests/test_mma > $R/test_mma.log 2>&1; echo "test_mma rc $?: $(grep -E '^[0-9]+%' $R/test_mma.log)"
FLASHCL_TEST_FEATURES=mma timeout 120 build-gpu/tests/test_flash > $R/test_flash_mma.log 2>&1
echo "test_flash mma rc $?: $(grep -E '^[0-9]+%' $R/test_flash_mma.log | tail -1)"; grep -E ':[EF]:' $R/test_flash_mma.log | head -5
unset FLASHCL_TEST_PLATFORM CK_FORK
B=build-gpu/tools/flashcl
export XDG_CONFIG_HOME=$R/config
$B bench --device NVIDIA --algos flash --iters 5 -d 128 --dtype f32 -n 4096,16384 --json $R/bench_f32_shipped.json > $R/bench_f32_shipped.txt 2>&1
echo "== shipped"; grep -E "^[0-9]" $R/bench_f32_shipped.txt | cut -c1-100
tar czf $OUT/run.tgz -C $R .
s=$(date +%s); timeout 200 $B tune --device NVIDIA -d 128 --dtype f32 -n 4096 --iters 3 > $R/tune.txt 2>&1
echo "tune rc $? $(( $(date +%s) - s )) s"; tail -4 $R/tune.txt | cut -c1-200; cat $R/config/flashcl/tuning.db 2>/dev/null | grep -v "^#" | cut -c1-250
$B bench --device NVIDIA --algos flash --iters 5 -d 128 --dtype f32 -n 4096,16384 --json $R/bench_f32_tuned.json > $R/bench_f32_tuned.txt 2>&1
tar czf $OUT/run.tgz -C $R .
echo "== tuned"; grep -E "^[0-9]" $R/bench_f32_tuned.txt | cut -c1-100
timeout 60 /opt/torch/.venv/bin/python bench/anchors/sdpa_prefill.py efficient 128 > $R/sdpa.jsonl 2> $R/sdpa.log
echo "sdpa rc $?"; grep -v torch $R/sdpa.jsonl | cut -c1-200
tar czf $OUT/run.tgz -C $R .
echo "total $(( $(date +%s) - t0 )) s"
