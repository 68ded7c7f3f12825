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
# the table BENCHMARKS.md gets from the same files (tools/benchmarks_md.py reads DIR/serving/)
python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import benchmarks_md; print(benchmarks_md.serving_section(sys.argv[2]))' \
  "$src/tools" "$(dirname "$out")"
