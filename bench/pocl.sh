#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/pocl.sh: runs again BENCHMARKS.md's CPU section (PoCL's CPU device: the fa2 preset's shapes scaled
# to B·N = 1024, N up to 1024), writes bench/pocl_fa2_scaled_f32.json and its plot, and regenerates
# BENCHMARKS.md. From the repository root: bench/pocl.sh [BUILD_DIR] (default build-bench). A few minutes
# on a 2-core machine; the page shows whichever CPU ran it.
set -u
cd "$(dirname "$0")/.."
B=${1:-build-bench}
[ -d "$B" ] || meson setup "$B" -Dbuildtype=release >/dev/null || exit 1
ninja -C "$B" >/dev/null || { echo "build failed: ninja -C $B"; exit 1; }
"$B/tools/flashcl" bench --device "${FLASHCL_DEVICE:-Portable Computing Language}" --preset fa2 --tokens 1024 --max-n 1024 --iters 3 --warmup 1 \
    --json bench/pocl_fa2_scaled_f32.json --plot bench/pocl_fa2_scaled_f32.svg >/dev/null || exit 1
python3 tools/benchmarks_md.py bench > BENCHMARKS.md
