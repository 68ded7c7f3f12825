#!/bin/bash
# Issue 18, engine-3: the test_flash lists engine-2 did not reach (quant, offsets, align, masks, sinks,
# kvopts, mixed) and the new dimv list, test_cache and test_plan; the B=8 decode regression checked by
# building decode-mma-5's commit (17895a6, staged in .gpu/old) beside this one and timing both
# alternately; head_dim_v on MLA's prefill shape against PyTorch SDPA in the same call. One archive.
source .gpu/gpu-env.sh >/dev/null
R=/tmp/r; mkdir -p $R
t0=$(date +%s)
[ -d build-gpu ] || meson setup build-gpu -Dbuildtype=release >/dev/null
ninja -C build-gpu > $R/build.log 2>&1 || { tail -30 $R/build.log; exit 1; }
(cd .gpu/old && meson setup /tmp/oldb -Dbuildtype=release >/dev/null && ninja -C /tmp/oldb tools/flashcl) > $R/build_old.log 2>&1 || { tail -20 $R/build_old.log; exit 1; }
echo "builds $(( $(date +%s) - t0 )) s"
export FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no
for t in test_cache test_plan; do
  s=$(date +%s); timeout 100 build-gpu/tests/$t > $R/$t.log 2>&1
  echo "$t rc $? $(( $(date +%s) - s )) s: $(grep -E '^[0-9]+%' $R/$t.log | tail -1)"; grep -E ':[EF]:' $R/$t.log | head -5
done
for l in dimv quant offsets align masks sinks kvopts mixed; do
  s=$(date +%s); FLASHCL_TEST_FEATURES=$l timeout 100 build-gpu/tests/test_flash > $R/test_flash_$l.log 2>&1
  echo "test_flash $l rc $? $(( $(date +%s) - s )) s: $(grep -E '^[0-9]+%' $R/test_flash_$l.log | tail -1)"; grep -E ':[EF]:' $R/test_flash_$l.log | head -5
done
unset FLASHCL_TEST_PLATFORM CK_FORK
tar czf $OUT/run.tgz -C $R .
D="--decode -H 32 --heads-kv 8 -d 128 --dtype f16 --algos flash --iters 50 --warmup 5 --max-seconds 2 -n 8192,32768 -b 8"
for r in 1 2; do
  for which in old new; do
    B=build-gpu/tools/flashcl; [ $which = old ] && B=/tmp/oldb/tools/flashcl
    FLASHCL_CACHE_DIR=/tmp/cache-$which timeout 60 $B bench --device NVIDIA $D --json $R/decode_${which}_$r.json > $R/decode_${which}_$r.txt 2>&1
    echo "== decode $which $r rc $?"; grep -E "^[0-9]" $R/decode_${which}_$r.txt | cut -c1-100
  done
done
B=build-gpu/tools/flashcl
timeout 120 $B bench --device NVIDIA --algos flash --iters 10 -d 192 --dim-v 128 -H 16 --dtype f16 -n 4096 --both --json $R/dimv.json > $R/dimv.txt 2>&1
echo "== dimv rc $?"; grep -E "^[0-9]|FAIL|ERROR" $R/dimv.txt | cut -c1-110
timeout 60 $B bench --device NVIDIA --algos flash --iters 10 -d 192 -H 16 --dtype f16 -n 4096 --both --json $R/d192.json > $R/d192.txt 2>&1
echo "== d192 (dv = d) rc $?"; grep -E "^[0-9]" $R/d192.txt | cut -c1-110
timeout 100 /opt/torch/.venv/bin/python bench/anchors/sdpa_dimv.py > $R/sdpa_dimv.jsonl 2> $R/sdpa_dimv.log
echo "sdpa_dimv rc $?"; cut -c1-200 $R/sdpa_dimv.jsonl
tar czf $OUT/run.tgz -C $R .
echo "total $(( $(date +%s) - t0 )) s"
