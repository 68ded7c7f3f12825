#!/bin/bash
# Issue 18, engine-4: head_dim_v on flash_mma (the dimv list with its forced matrix-unit cases, the mma
# list, test_mma, test_plan, test_kernels on the real PTX); MLA's prefill (192 over 128) and the default
# d=64/128/256 shapes against engine-3 and PyTorch; where a B=8 decode step's time goes (enqueue_cost.c,
# this tree against decode-mma-5's, staged in .gpu/old). Predictions: docs/NOTES.md. One archive.
source .gpu/gpu-env.sh >/dev/null
R=/tmp/r; mkdir -p $R
t0=$(date +%s)
[ -d build-gpu ] || meson setup build-gpu -Dbuildtype=release >/dev/null
ninja -C build-gpu > $R/build.log 2>&1 || { tail -30 $R/build.log; exit 1; }
(cd .gpu/old && meson setup /tmp/oldb -Dbuildtype=release >/dev/null && ninja -C /tmp/oldb) > $R/build_old.log 2>&1 || { tail -20 $R/build_old.log; exit 1; }
E=docs/gpu-runs/engine/enqueue_cost.c
gcc -O2 -Iinclude $E -o /tmp/ec_new -Lbuild-gpu -lflashcl -lOpenCL -Wl,-rpath,$PWD/build-gpu &&
gcc -O2 -I.gpu/old/include $E -o /tmp/ec_old -L/tmp/oldb -lflashcl -lOpenCL -Wl,-rpath,/tmp/oldb || exit 1
echo "builds $(( $(date +%s) - t0 )) s"
export FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no
for t in test_mma test_plan test_kernels; do
  s=$(date +%s); timeout 100 build-gpu/tests/$t > $R/$t.log 2>&1
  echo "$t rc $? $(( $(date +%s) - s )) s: $(grep -E '^[0-9]+%' $R/$t.log | tail -1)"; grep -E ':[EF]:' $R/$t.log | head -5
done
for l in dimv mma; do
  s=$(date +%s); FLASHCL_TEST_FEATURES=$l timeout 150 build-gpu/tests/test_flash > $R/test_flash_$l.log 2>&1
  echo "test_flash $l rc $? $(( $(date +%s) - s )) s: $(grep -E '^[0-9]+%' $R/test_flash_$l.log | tail -1)"; grep -E ':[EF]:' $R/test_flash_$l.log | head -5
done
unset FLASHCL_TEST_PLATFORM CK_FORK
tar czf $OUT/run.tgz -C $R .
for r in 1 2; do for w in old new; do
  ENQ_N=8192 timeout 60 /tmp/ec_$w > $R/ec_${w}_$r.txt 2>&1; echo "== enqueue_cost $w $r: $(cat $R/ec_${w}_$r.txt)"
done; done
B=build-gpu/tools/flashcl
timeout 120 $B bench --device NVIDIA --algos flash --iters 10 -d 192 --dim-v 128 -H 16 --dtype f16 -n 4096 --both --json $R/dimv.json > $R/dimv.txt 2>&1
echo "== dimv rc $?"; grep -E "^[0-9]|FAIL|ERROR" $R/dimv.txt | cut -c1-110
for d in 128 64 256; do
  timeout 90 $B bench --device NVIDIA --algos flash --iters 10 -d $d --dtype f16 -n 4096,16384 --json $R/d$d.json > $R/d$d.txt 2>&1
  echo "== d$d rc $?"; grep -E "^[0-9]" $R/d$d.txt | cut -c1-110
done
timeout 60 $B bench --device NVIDIA --algos flash --iters 10 -d 192 -H 16 --dtype f16 -n 4096 --both --json $R/d192.json > $R/d192.txt 2>&1
echo "== d192 rc $?"; grep -E "^[0-9]" $R/d192.txt | cut -c1-110
timeout 100 /opt/torch/.venv/bin/python bench/anchors/sdpa_dimv.py > $R/sdpa_dimv.jsonl 2> $R/sdpa_dimv.log
echo "sdpa_dimv rc $?"; cut -c1-200 $R/sdpa_dimv.jsonl
tar czf $OUT/run.tgz -C $R .
echo "total $(( $(date +%s) - t0 )) s"
