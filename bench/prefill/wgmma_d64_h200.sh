#!/bin/bash
# SPDX-License-Identifier: MIT
# wgmma_d64_h200.sh: flash_wgmma at d=64 as the chooser takes it (192 rows: three consumer warpgroups and
# the producer, two K/V stages) against 128 rows (two warpgroups) and against 192 rows in three and four K/V stages,
# interleaved, with PyTorch's SDPA (cuDNN, FlashAttention-2) in the same call (docs/design/wgmma.md,
# wgmma-d64 and wgmma-ablate's three-stage prediction), and the ablation without products or exponentials
# in two, three and four stages. The other sides are copies of this tree with
# their chooser changed. Run on the GPU machine from the repository root after `source .gpu/gpu-env.sh`;
# REPS rounds (3 by default); writes $OUT/full/variants, $OUT/causal/variants, $OUT/copies/variants and
# $OUT/wgmma_d64_sdpa.jsonl.
set -euo pipefail
py=${PYTHON:-/opt/torch/.venv/bin/python}
# tree NAME OLD NEW: /tmp/fcl-tree-NAME, this tree with OLD replaced by NEW in the chooser (once)
tree() {
  local alt=/tmp/fcl-tree-$1
  rm -rf "$alt" && mkdir -p "$alt"
  git ls-files -z | xargs -0 -I{} cp -a --parents {} "$alt"
  python3 - "$alt/src/kernels/wgmma.c" "$2" "$3" <<'PY'
import sys
p, old, new = sys.argv[1:]
s = open(p).read()
assert s.count(old) == 1, old
open(p, "w").write(s.replace(old, new))
PY
}
# two warpgroups at d = d_v = 64, as at every head dim
tree rows128 "const int rows192 = !fp8" "const int rows192 = 0 && !fp8"
# three K/V stages where the 192-row block has them and they fit
tree stages3 "const int32_t stages = wgmma_bytes(d, dv, 64 * wgs, bn, 2, emulated, 0, fp8) <= limit ? 2 : 1;" \
  "const int32_t stages = wgs == 3 && wgmma_bytes(d, dv, 192, bn, 3, 0, 1, 0) <= limit ? 3 : wgmma_bytes(d, dv, 64 * wgs, bn, 2, emulated, 0, fp8) <= limit ? 2 : 1;"
# four, the producer's ring (2026-12-05: the kernel takes them with the producer)
tree stages4 "const int32_t stages = wgmma_bytes(d, dv, 64 * wgs, bn, 2, emulated, 0, fp8) <= limit ? 2 : 1;" \
  "const int32_t stages = wgs == 3 && wgmma_bytes(d, dv, 192, bn, 4, 0, 1, 0) <= limit ? 4 : wgmma_bytes(d, dv, 64 * wgs, bn, 2, emulated, 0, fp8) <= limit ? 2 : 1;"
shapes="--device NVIDIA -d 64 --dtype f16 -n 1024,4096,16384 --iters 10 --warmup 2" # (B*N = 16384, H = 32)
sides=(rows128=/tmp/fcl-tree-rows128 rows192=. stages3=/tmp/fcl-tree-stages3 stages4=/tmp/fcl-tree-stages4)
o=${OUT:-/tmp}
OUT=$o/full bench/variants_h200.sh "${REPS:-3}" "$shapes" "${sides[@]}"
OUT=$o/causal bench/variants_h200.sh "${REPS:-3}" "$shapes --causal" "${sides[@]}"
# the copies, handshakes and the softmax's other steps alone (WG_ABLATE=14: no products, no exponentials;
# wrong results, timing only) in two stages and in three: whether that floor is the pipeline's latency
FLASHCL_BUILD_OPTIONS=-DWG_ABLATE=14 OUT=$o/copies bench/variants_h200.sh 1 "--device NVIDIA -d 64 --dtype f16 \
  -n 16384 --iters 10" rows192=. stages3=/tmp/fcl-tree-stages3 stages4=/tmp/fcl-tree-stages4
rm -rf "$o"/*/variants/cache-* # (the programs: more files than a device call brings back)
(cd bench/anchors && "$py" sdpa_prefill.py cudnn,flash 64) > "${OUT:-/tmp}/wgmma_d64_sdpa.jsonl" 2>&1 || true
grep '"d": 64' "${OUT:-/tmp}/wgmma_d64_sdpa.jsonl" | grep -v '"torch"' || tail -3 "${OUT:-/tmp}/wgmma_d64_sdpa.jsonl"
