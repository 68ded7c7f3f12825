#!/bin/bash
# SPDX-License-Identifier: MIT
# serving_h200.sh [BUILD]: flashcl's flash kernels on what a serving engine sends (issue 32's shape: B=4,
# N=4096, Hq=32, Hkv=8, d=128, fp16, causal): plain, each feature, head dims 80, 96 and 192/128, and
# chunked prefill (1024 new queries over 16384 cached keys in pages of 16), beside PyTorch's
# FlexAttention and SDPA on the same shapes (bench/anchors/flex_serving.py), in one device session. Run on
# the GPU machine after `source .gpu/gpu-env.sh`; BUILD has tools/flashcl (default: a release build in
# /tmp/fcl-serving). Writes $OUT/serving/*.json (flashcl bench's) and flex.jsonl, and prints a table.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-/tmp/fcl-serving}
out=${OUT:-/tmp}/serving
mkdir -p "$out"
if [ ! -x "$build/tools/flashcl" ]; then
  meson setup "$build" "$src" -Dtests=disabled --buildtype=release >/dev/null && ninja -C "$build" tools/flashcl >/dev/null
fi
base="--algos flash --iters 10 --warmup 3 --dtype f16 --causal -b 4 -n 4096"
gqa="-H 32 --heads-kv 8"
runs=(
  "plain:$gqa -d 128"
  "varlen:$gqa -d 128 --varlen"
  "paged16:$gqa -d 128 --paged 16"
  "softcap:$gqa -d 128 --softcap 50"
  "alibi:$gqa -d 128 --alibi"
  "window:$gqa -d 128 --window 1024,0"
  "sinks:$gqa -d 128 --sinks 0.5"
  "d80:$gqa -d 80"
  "d96:$gqa -d 96"
  "d192-128:-H 16 -d 192 --dim-v 128"
)
for r in "${runs[@]}"; do
  name=${r%%:*}
  # shellcheck disable=SC2086
  "$build/tools/flashcl" bench $base ${r#*:} --json "$out/$name.json" > "$out/$name.txt" 2>&1 || echo "$name: exit $?"
done
# chunked prefill: 1024 queries over a cache of 16384 keys in pages of 16
"$build/tools/flashcl" bench --algos flash --iters 10 --warmup 3 --dtype f16 --causal -b 4 $gqa -d 128 \
  --decode --seq-q 1024 -n 16384 --paged 16 --json "$out/chunked.json" > "$out/chunked.txt" 2>&1 || echo "chunked: exit $?"
(cd "$src/bench/anchors" && /opt/torch/.venv/bin/python flex_serving.py > "$out/flex.jsonl" 2> "$out/flex.err") || echo "flex: exit $?"
python3 - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]
def fcl(name):
    try:
        r = json.load(open(os.path.join(out, name + ".json")))["results"][0]
        return r
    except Exception as e:
        return None
anchors = {}
for line in open(os.path.join(out, "flex.jsonl")):
    j = json.loads(line)
    if "tflops" in j:
        anchors[(j["feature"], j["backend"])] = j["tflops"]
print("%-10s %-12s %8s %6s %8s %8s %8s" % ("feature", "kernel", "TFLOP/s", "spread", "flex", "fa2", "cudnn"))
for name, feat in [("plain", "plain"), ("varlen", "varlen"), ("paged16", None), ("chunked", None),
                   ("softcap", "softcap 50"), ("alibi", "alibi"), ("window", "window 1024,0"), ("sinks", None),
                   ("d80", "d80/80"), ("d96", "d96/96"), ("d192-128", "d192/128")]:
    r = fcl(name)
    if not r:
        print("%-10s (no result)" % name); continue
    f = r.get("flash", r)
    print("%-10s %-12s %8.1f %6s %8s %8s %8s" % (name, str(f.get("kernel", "?")), f.get("tflops", 0.0),
          "%.1f%%" % (100 * (f.get("max_ms", 0) - f.get("min_ms", 0)) / max(f.get("median_ms", 1e-9), 1e-9)) if "median_ms" in f else "?",
          "%.1f" % anchors[(feat, "flex")] if (feat, "flex") in anchors else "-",
          "%.1f" % anchors[(feat, "fa2")] if (feat, "fa2") in anchors else "-",
          "%.1f" % anchors[(feat, "cudnn")] if (feat, "cudnn") in anchors else "-"))
PY
