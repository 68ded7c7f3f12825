#!/bin/bash
# Issue 18, engine-5: the enqueue's scalar-argument memo. enqueue_cost.c against the build before it
# (.gpu/prev) and decode-mma-5's (.gpu/old), auto splits and one split, twice; flashcl bench's B=8 decode
# shape on this build and decode-mma-5's, alternating; test_plan (test_enqueue_rebinds) and the
# test_flash lists that enqueue plans over and over (offsets, split, cache, decode_mma) on NVIDIA's
# driver. Issue 15 in the same call: d=256 against FlashAttention-2 (sdpa_prefill.py flash 256).
source .gpu/gpu-env.sh >/dev/null
R=/tmp/r; mkdir -p $R
t0=$(date +%s)
[ -d build-gpu ] || meson setup build-gpu -Dbuildtype=release >/dev/null
ninja -C build-gpu > $R/build.log 2>&1 || { tail -30 $R/build.log; exit 1; }
for w in old prev; do
  (cd .gpu/$w && meson setup /tmp/${w}b -Dbuildtype=release >/dev/null && ninja -C /tmp/${w}b) > $R/build_$w.log 2>&1 || { tail -20 $R/build_$w.log; exit 1; }
done
E=docs/gpu-runs/engine/enqueue_cost.c
gcc -O2 -Iinclude $E -o /tmp/ec_new -Lbuild-gpu -lflashcl -lOpenCL -Wl,-rpath,$PWD/build-gpu || exit 1
for w in old prev; do gcc -O2 -I.gpu/$w/include $E -o /tmp/ec_$w -L/tmp/${w}b -lflashcl -lOpenCL -Wl,-rpath,/tmp/${w}b || exit 1; done
echo "builds $(( $(date +%s) - t0 )) s"
export FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no
s=$(date +%s); timeout 100 build-gpu/tests/test_plan > $R/test_plan.log 2>&1
echo "test_plan rc $? $(( $(date +%s) - s )) s: $(grep -E '^[0-9]+%' $R/test_plan.log | tail -1)"; grep -E ':[EF]:' $R/test_plan.log | head -5
for l in offsets split cache decode_mma; do
  s=$(date +%s); FLASHCL_TEST_FEATURES=$l timeout 100 build-gpu/tests/test_flash > $R/test_flash_$l.log 2>&1
  echo "test_flash $l rc $? $(( $(date +%s) - s )) s: $(grep -E '^[0-9]+%' $R/test_flash_$l.log | tail -1)"; grep -E ':[EF]:' $R/test_flash_$l.log | head -5
done
unset FLASHCL_TEST_PLATFORM CK_FORK
tar czf $OUT/run.tgz -C $R .
for r in 1 2; do for sp in 0 1; do for w in old prev new; do
  ENQ_N=8192 ENQ_SPLITS=$sp timeout 60 /tmp/ec_$w > $R/ec_${w}_s${sp}_$r.txt 2>&1; echo "== $w splits=$sp $r: $(cat $R/ec_${w}_s${sp}_$r.txt)"
done; done; done
D="--decode -H 32 --heads-kv 8 -d 128 --dtype f16 --algos flash --iters 50 --warmup 5 --max-seconds 2 -n 8192,32768 -b 8"
for r in 1 2; do for w in old new; do
  B=build-gpu/tools/flashcl; [ $w = old ] && B=/tmp/oldb/tools/flashcl
  timeout 60 $B bench --device NVIDIA $D --json $R/decode_${w}_$r.json > $R/decode_${w}_$r.txt 2>&1
  echo "== decode $w $r rc $?"; grep -E "^[0-9]" $R/decode_${w}_$r.txt | cut -c1-100
done; done
B=build-gpu/tools/flashcl
timeout 90 $B bench --device NVIDIA --algos flash --iters 10 -d 256 --dtype f16 -n 4096,16384 --json $R/d256.json > $R/d256.txt 2>&1
echo "== d256 rc $?"; grep -E "^[0-9]" $R/d256.txt | cut -c1-110
timeout 120 /opt/torch/.venv/bin/python bench/anchors/sdpa_prefill.py flash 256 > $R/sdpa_d256.jsonl 2> $R/sdpa_d256.log
echo "sdpa d256 rc $?"; cut -c1-200 $R/sdpa_d256.jsonl
tar czf $OUT/run.tgz -C $R .
echo "total $(( $(date +%s) - t0 )) s"
