#!/bin/bash
# The architecture change on the H200 (issue 13): the kernels before it (d611790, carried as
# build-base-src/) and after it, side by side in one session, with PyTorch's SDPA on the same shapes.
# fp32 preset fa2 (the portable kernel), fp16 d=128/64 (the matrix-unit kernel), ptxas's registers
# of the d=128 fp32 and fp16 kernels of both. Run on the GPU machine from the repository root.
R=/tmp/refactor-1
mkdir -p "$R"
trap 'tar czf "$OUT/refactor-1.tgz" -C /tmp refactor-1' EXIT
source .gpu/gpu-env.sh >/dev/null
s() { echo "$(date +%T) $*"; }
(meson setup /tmp/new -Dbuildtype=release -Dtests=false >/dev/null && ninja -C /tmp/new >/dev/null) &
(cd build-base-src && meson setup /tmp/base -Dbuildtype=release -Dtests=false >/dev/null && ninja -C /tmp/base >/dev/null) &
wait
s "built: $(ls /tmp/new/tools/flashcl /tmp/base/tools/flashcl 2>&1 | tr '\n' ' ')"
export FLASHCL_DEVICE=NVIDIA FLASHCL_CACHE=0
B="--algos flash --iters 7 --warmup 2 --max-seconds 2"
for v in base new; do
  F=/tmp/$v/tools/flashcl
  FLASHCL_BUILD_OPTIONS=-cl-nv-verbose FLASHCL_BUILD_LOG=1 timeout 30 $F run -b 4 -H 16 -n 4096 -d 128 --iters 2 > "$R/regs-f32-$v.txt" 2>&1
  FLASHCL_BUILD_OPTIONS=-cl-nv-verbose FLASHCL_BUILD_LOG=1 timeout 30 $F run -b 4 -H 16 -n 4096 -d 128 --dtype f16 --iters 2 > "$R/regs-f16-$v.txt" 2>&1
  s "$v regs f32: $(grep -ioE 'Used [0-9]+ registers[^,]*|[0-9]+ bytes spill (stores|loads)' "$R/regs-f32-$v.txt" | sort -u | tr '\n' ' ')"
  s "$v regs f16: $(grep -ioE 'Used [0-9]+ registers[^,]*|[0-9]+ bytes spill (stores|loads)' "$R/regs-f16-$v.txt" | sort -u | tr '\n' ' ')"
done
for round in 1 2; do
  for v in base new; do
    F=/tmp/$v/tools/flashcl
    timeout 120 $F bench --preset fa2 --dtype f32 $B --json "$R/f32-$v-$round.json" > "$R/f32-$v-$round.txt" 2> "$R/f32-$v-$round.log"
    s "$v f32 fa2 round $round rc $?"
    timeout 60 $F bench -n 1024,4096,16384 -d 128 --both --dtype f16 $B --json "$R/f16-$v-$round.json" > "$R/f16-$v-$round.txt" 2> "$R/f16-$v-$round.log"
    s "$v f16 d=128 round $round rc $?"
    timeout 30 $F bench -n 16384 -d 64 --dtype f16 $B --json "$R/f16d64-$v-$round.json" > "$R/f16d64-$v-$round.txt" 2> "$R/f16d64-$v-$round.log"
    s "$v f16 d=64 round $round rc $?"
  done
done
timeout 200 /opt/torch/.venv/bin/python bench/anchors/sdpa_prefill.py > "$R/sdpa.jsonl" 2> "$R/sdpa.log"
s "sdpa rc $?"
echo "== summary (flash rows: shape, median ms, TFLOP/s)"
for f in "$R"/f32-*.txt "$R"/f16*.txt; do echo "-- $(basename $f)"; grep -E "\| flash" "$f" | head -20; done
grep -E '"backend"' "$R/sdpa.jsonl" | python3 -c 'import sys,json
for l in sys.stdin:
  r=json.loads(l); print(r.get("backend"),r.get("dtype"),r["d"],r["n"],r["causal"],round(r.get("tflops",0),1),r.get("error",""))'
