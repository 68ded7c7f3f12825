#!/bin/bash
# SPDX-License-Identifier: MIT
# rounded_q_h200.sh [BUILD]: fp32 queries over fp16 K/V (ggml's activations over an fp16 cache) on the
# matrix-unit kernels, which round Q to K's type as it is loaded, beside the same problem in fp16 and on
# the portable kernel that took it before (fp32 Q unrounded), and PyTorch's fp32 and fp16 SDPA on the
# same shapes (bench/anchors/sdpa_prefill.py), in one device session. B*N = 16384, hidden 2048, d = 64
# and 128, N = 4096 and 16384, not causal. Run on the GPU machine after `source .gpu/gpu-env.sh`; BUILD
# has tools/flashcl (default: a release build in /tmp/fcl-rq). Writes $OUT/rounded_q/*.json (flashcl
# bench's), h200_sdpa.jsonl (PyTorch's) and prints a table: the names bench/rounded_q/ keeps.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-/tmp/fcl-rq}
out=${OUT:-/tmp}/rounded_q
mkdir -p "$out"
if [ ! -x "$build/tools/flashcl" ]; then
  meson setup "$build" "$src" -Dtests=disabled --buildtype=release >/dev/null && ninja -C "$build" tools/flashcl >/dev/null
fi
F="$build/tools/flashcl"
for d in 128 64; do
  for v in "f16 auto" "f32f16 auto" "f16 mma" "f32f16 mma" "f32f16 portable"; do
    set -- $v
    dt=--dtype\ f16
    [ "$1" = f32f16 ] && dt="--dtype f32 --kv-dtype f16"
    $F bench --device NVIDIA --algos flash --iters 10 --warmup 3 -d $d $dt --path $2 -n 4096,16384 \
      --json "$out/h200_${1}_${2}_d$d.json" > "$out/${1}_${2}_d$d.txt" 2>&1 || echo "flashcl bench $1 $2 d=$d: exit $?"
  done
done
(cd "$src/bench/anchors" && /opt/torch/.venv/bin/python sdpa_prefill.py flash,cudnn,efficient 128,64 \
  > "$out/h200_sdpa.jsonl" 2> "$out/sdpa.err") || echo "sdpa: exit $?"
python3 - "$out" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
rows = {}
for f in sorted(glob.glob(os.path.join(out, "h200_*_d*.json"))):
    name = os.path.basename(f)[5:-5]
    try:
        doc = json.load(open(f))
    except Exception as ex:
        print(name, "unreadable", ex); continue
    for r in doc.get("results", []):
        if r.get("algo") == "flash" and "tflops" in r:
            print(f"{name:24s} N={r.get('seq')} passed={r.get('passed')} {r.get('kernel', '')} {r['tflops']:.1f} TFLOP/s "
                  f"median {r.get('median_ms', 0):.3f} ms [{r.get('min_ms', 0):.3f}, {r.get('max_ms', 0):.3f}]")
for line in open(os.path.join(out, "h200_sdpa.jsonl")):
    r = json.loads(line)
    if "tflops" in r and not r.get("causal"):
        print(f"sdpa {r['backend']:9s} {r['dtype']:8s} d={r['d']} N={r['n']} {r['tflops']:.1f} TFLOP/s")
PY
