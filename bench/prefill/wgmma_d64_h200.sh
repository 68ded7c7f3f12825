#!/bin/bash
# SPDX-License-Identifier: MIT
# wgmma_d64_h200.sh: flash_wgmma at d=64 with the chooser's 192-row block (three consumer warpgroups and the
# producer) against 128 rows (two), interleaved, with PyTorch's SDPA (cuDNN, FlashAttention-2) in the same
# call (docs/design/wgmma.md, wgmma-d64). The 128-row side is this tree with its chooser's three warpgroups
# turned off. Run on the
# GPU machine from the repository root after `source .gpu/gpu-env.sh`; writes $OUT/variants and
# $OUT/wgmma_d64_sdpa.jsonl.
set -euo pipefail
py=${PYTHON:-/opt/torch/.venv/bin/python}
alt=/tmp/fcl-tree-d64x128
rm -rf "$alt" && mkdir -p "$alt"
git ls-files -z | xargs -0 -I{} cp -a --parents {} "$alt"
# the chooser: two warpgroups at d = d_v = 64 as at every head dim
python3 - "$alt/src/kernels/wgmma.c" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
old = "const int rows192 = !emulated"
assert s.count(old) == 1
s = s.replace(old, "const int rows192 = 0 && !emulated")
open(p, "w").write(s)
PY
shapes="--device NVIDIA -d 64 --dtype f16 -n 1024,4096,16384 --iters 10 --warmup 2" # (B*N = 16384, H = 32)
bench/variants_h200.sh 3 "$shapes" rows128="$alt" rows192=.
bench/variants_h200.sh 3 "$shapes --causal" rows128="$alt" rows192=.
(cd bench/anchors && "$py" sdpa_prefill.py cudnn,flash 64) > "${OUT:-/tmp}/wgmma_d64_sdpa.jsonl" 2>&1 || true
grep '"d": 64' "${OUT:-/tmp}/wgmma_d64_sdpa.jsonl" | grep -v '"torch"' || tail -3 "${OUT:-/tmp}/wgmma_d64_sdpa.jsonl"
