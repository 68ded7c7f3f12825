#!/bin/bash
# SPDX-License-Identifier: MIT
# wgmma_persist_h200.sh: flash_wgmma with persistent work-groups (config.persistent: one a compute unit, each
# running row blocks in turn; docs/design/wgmma.md, wgmma-persist) against the default (a work-group a
# block), in one device call. First the `wgmma_persist` test list under a time limit (a phase miscounted
# across blocks hangs the work-group), then fp16 at d=64, 128 and 256, N=1024, 4096 and 16384 (B*N = 16384,
# hidden 2048; d=256 the same on both sides: the rule stops at d_v 128), full and causal, interleaved in REPS rounds (2 by default; bench/variants_h200.sh, every run
# validated), the other side a copy of this tree with the chooser's persistent rule on; cuDNN's figures by
# PyTorch's SDPA in the same call. Run on the GPU machine from the repository root after `source
# .gpu/gpu-env.sh`, with a build (BUILD, default /tmp/b, tests enabled); writes $OUT/persist/.
set -uo pipefail
b=${BUILD:-/tmp/b}
py=${PYTHON:-/opt/torch/.venv/bin/python}
out=${OUT:-/tmp}/persist
mkdir -p "$out"
[ -f "$b/build.ninja" ] || meson setup "$b" . --buildtype=release >/dev/null || exit 1
ninja -C "$b" >/dev/null || exit 1
FLASHCL_TEST_PLATFORM=NVIDIA FLASHCL_TEST_FEATURES=wgmma_persist CK_FORK=no timeout 150 "$b/tests/test_flash" \
  > "$out/tests.log" 2>&1
echo "test_flash wgmma_persist: exit $?, $(grep -h 'Checks:' "$out/tests.log" | tail -n 1)"
alt=/tmp/fcl-tree-persist
rm -rf "$alt" && mkdir -p "$alt"
git ls-files -z | xargs -0 -I{} cp -a --parents {} "$alt"
python3 - "$alt/src/kernels/wgmma.c" <<'PY' || exit 1
import sys
p = sys.argv[1]
s = open(p).read()
old = "const int32_t persistent = 0 && producer && !fp8 && dv <= 128"
assert s.count(old) == 1, old
open(p, "w").write(s.replace(old, "const int32_t persistent = producer && !fp8 && dv <= 128"))
PY
shapes="--device NVIDIA -d 64,128,256 --dtype f16 -n 1024,4096,16384 --iters 10 --warmup 2"
for c in "" "--causal"; do
  OUT=/tmp bash bench/variants_h200.sh "${REPS:-2}" "$shapes $c" base=. persist=$alt
  rm -rf /tmp/variants/cache-* && rm -rf "$out/variants${c:+-causal}" && mv /tmp/variants "$out/variants${c:+-causal}"
done
(cd bench/anchors && timeout 150 "$py" sdpa_prefill.py cudnn 64,128,256) > "$out/sdpa.jsonl" 2>&1 || true
grep -v '"torch"' "$out/sdpa.jsonl" | grep '"n": 1024' || tail -3 "$out/sdpa.jsonl"
