#!/bin/bash
# SPDX-License-Identifier: MIT
# serving_h200.sh [BUILD]: flashcl's flash kernels on what a serving engine sends (issue 32's shape: B=4,
# N=4096, Hq=32, Hkv=8, d=128, fp16, causal): plain, each feature, head dims 80, 96 and 192/128, and
# chunked prefill (1024 new queries over 16384 cached keys in pages of 16), beside PyTorch's
# FlexAttention and SDPA on the same shapes (bench/anchors/flex_serving.py), in one device session. Run on
# the GPU machine after `source .gpu/gpu-env.sh`; BUILD has tools/flashcl (default: a release build in
# /tmp/fcl-serving). flashcl's side is `flashcl bench --preset serving`. Writes $OUT/serving/h200_serving.json
# (flashcl bench's) and h200_flex_serving.jsonl (PyTorch's: the names bench/serving/ keeps), and prints a table.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-/tmp/fcl-serving}
out=${OUT:-/tmp}/serving
mkdir -p "$out"
if [ ! -x "$build/tools/flashcl" ]; then
  meson setup "$build" "$src" -Dtests=disabled --buildtype=release >/dev/null && ninja -C "$build" tools/flashcl >/dev/null
fi
"$build/tools/flashcl" bench --preset serving --algos flash --iters 10 --warmup 3 --json "$out/h200_serving.json" \
  > "$out/serving.txt" 2>&1 || echo "flashcl bench: exit $?"
(cd "$src/bench/anchors" && /opt/torch/.venv/bin/python flex_serving.py > "$out/h200_flex_serving.jsonl" 2> "$out/flex.err") || echo "flex: exit $?"
python3 - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]
anchors = {}
for line in open(os.path.join(out, "h200_flex_serving.jsonl")):
    j = json.loads(line)
    if "tflops" in j:
        anchors[(j["feature"], j["backend"])] = j["tflops"]
def label(r):
    if r.get("seq_q", r["seq"]) != r["seq"]:
        return "chunked", None
    if r.get("varlen"):
        return "varlen", "varlen"
    if r.get("page_size"):
        return "paged16", None
    if r.get("softcap"):
        return "softcap", "softcap 50"
    if r.get("alibi"):
        return "alibi", "alibi"
    if "window_left" in r:
        return "window", "window 1024,0"
    if "sinks" in r:
        return "sinks", None
    if r["head_dim"] != 128:
        d, dv = r["head_dim"], r.get("head_dim_v", r["head_dim"])
        return "d%d/%d" % (d, dv), "d%d/%d" % (d, dv)
    return "plain", "plain"
res = json.load(open(os.path.join(out, "h200_serving.json")))["results"]
plain = next((r["tflops"] for r in res if r.get("ran") and label(r)[0] == "plain"), None)
print("%-10s %-12s %8s %7s %7s %8s %8s %8s" % ("shape", "kernel", "TFLOP/s", "spread", "/plain", "flex", "fa2", "cudnn"))
for r in res:
    name, feat = label(r)
    if not r.get("ran"):
        print("%-10s (not run: %s)" % (name, r.get("note", ""))); continue
    spread = 100.0 * (r["max_ms"] - r["min_ms"]) / r["median_ms"]
    a = lambda b: "%.1f" % anchors[(feat, b)] if (feat, b) in anchors else "-"
    print("%-10s %-12s %8.1f %6.1f%% %7.2f %8s %8s %8s%s" % (name, r.get("kernel", "?"), r["tflops"], spread,
          r["tflops"] / plain if plain else 0, a("flex"), a("fa2"), a("cudnn"), "" if r.get("passed") else " FAILED"))
PY
