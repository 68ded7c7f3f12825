#!/bin/bash
# H200 run for the decode figures: flashcl's decode step (seq_q = 1, Hq = 32, Hkv = 8, d = 128, fp16
# K/V, cache 8192 ... 131072, batch 1 and 8) split and unsplit, paged (pages of 16 and 256) and
# contiguous, PyTorch SDPA on the same shapes; then the device test suites on the H200, the plain
# path after the inference features, and the tensor-core probe.
# Run on the GPU machine from the repository root: bash docs/gpu-runs/decode/run.sh
source .gpu/gpu-env.sh >/dev/null
meson setup /tmp/b -Dbuildtype=release >/dev/null && ninja -C /tmp/b >/dev/null || exit 1
F=/tmp/b/tools/flashcl
R=${OUT:-/tmp}/decode
mkdir -p "$R"
export FLASHCL_DEVICE=NVIDIA
gcc -O2 docs/gpu-runs/tc-probe/probe.c -o /tmp/probe -lOpenCL -lm && (cd docs/gpu-runs/tc-probe && timeout 60 /tmp/probe) > "$R/probe.txt" 2>&1
echo "probe rc $?"; grep -v "^$" "$R/probe.txt" | grep -v "^ *$" | tail -8
D="--decode -n 8192,16384,32768,65536,131072 -H 32 --heads-kv 8 -d 128 --dtype f16 --iters 30 --max-seconds 1"
for b in 1 8; do
  for v in auto split1 paged16 paged256; do
    case $v in auto) X="";; split1) X="--kv-splits 1";; paged16) X="--paged 16";; paged256) X="--paged 256";; esac
    A=flash; [ $v = auto ] && A=flash,standard
    timeout 60 $F bench $D -b $b $X --algos $A --json "$R/b$b-$v.json" > "$R/b$b-$v.txt" 2> "$R/b$b-$v.log"
    echo "b=$b $v rc $?"
  done
done
F_TABLE() { for f in "$R"/b*.txt; do echo "== $(basename $f)"; grep -E "flash|standard" "$f" | awk '{print $3, $8, $9, $11, $12, $14}'; done; }
F_TABLE > "$R/summary.txt"
timeout 120 python3 bench/anchors/sdpa_decode.py > "$R/sdpa.jsonl" 2> "$R/sdpa.log"; echo "sdpa rc $?"
for t in test_flash test_plan test_edges test_validate test_problem test_tiles; do
  FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no FLASHCL_TOOL=$F timeout 120 /tmp/b/tests/$t > "$R/$t.log" 2>&1
  echo "$t rc $? $(grep -E '^[0-9]+%' "$R/$t.log" | tail -1)"
done
timeout 90 $F bench -n 4096,16384 -d 64,128 --algos flash --dtype f32 --iters 5 --max-seconds 2 \
  --json "$R/plain-f32.json" > "$R/plain-f32.txt" 2> "$R/plain-f32.log"; echo "plain rc $?"
timeout 60 $F bench -n 4096,16384 -d 128 --algos flash --dtype f16 --both --iters 5 --max-seconds 2 \
  --json "$R/plain-f16.json" > "$R/plain-f16.txt" 2> "$R/plain-f16.log"; echo "plain f16 rc $?"
timeout 60 $F bench -n 16384 -d 128 --window 1024,0 --algos flash --dtype f16 --iters 5 --max-seconds 2 \
  --json "$R/window.json" > "$R/window.txt" 2> "$R/window.log"; echo "window rc $?"
cat "$R/summary.txt"; grep -v '^{"torch' "$R/sdpa.jsonl" | grep -v error | python3 -c '
import sys, json
for l in sys.stdin:
    d = json.loads(l); print(d["backend"], d["batch"], d["cache"], round(d["median_ms"], 4), round(d["gb_per_s"]))'
grep -E "flash" "$R"/plain-*.txt "$R/window.txt" | awk '{print $1, $2, $4, $5, $6, $9, $10}'
