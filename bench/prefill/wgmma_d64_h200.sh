#!/bin/bash
# SPDX-License-Identifier: MIT
# wgmma_d64_h200.sh: flash_wgmma at d=64 with a 192-row block (three consumer warpgroups and the producer)
# against the chooser's 128 rows, interleaved, with PyTorch's SDPA (cuDNN, FlashAttention-2) in the same
# call (docs/design/wgmma.md, wgmma-d64). The 192-row side is this tree with its chooser changed to take
# three warpgroups at d=64 (an override's shape: the chooser offers it only once measured). Run on the
# GPU machine from the repository root after `source .gpu/gpu-env.sh`; writes $OUT/variants and
# $OUT/wgmma_d64_sdpa.jsonl.
set -euo pipefail
py=${PYTHON:-/opt/torch/.venv/bin/python}
alt=/tmp/fcl-tree-d64x192
rm -rf "$alt" && mkdir -p "$alt"
git ls-files -z | xargs -0 -I{} cp --parents {} "$alt"
# the chooser: three warpgroups at d = d_v = 64 where the queries fill them
python3 - "$alt/src/kernels/wgmma.c" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
old = "int32_t wgs = p->seq_q > 64 && ch->work_group >= 256 ? 2 : 1,"
assert s.count(old) == 1
s = s.replace(old, "int32_t wgs = p->seq_q > 128 && p->head_dim == 64 && fcl_head_dim_v(p) == 64 && ch->work_group >= 512 ? 3 : "
                   "p->seq_q > 64 && ch->work_group >= 256 ? 2 : 1,")
open(p, "w").write(s)
PY
shapes="--device NVIDIA -d 64 --dtype f16 -n 1024,4096,16384 --iters 10 --warmup 2" # (B*N = 16384, H = 32)
bench/variants_h200.sh 3 "$shapes" rows128=. rows192="$alt"
bench/variants_h200.sh 3 "$shapes --causal" rows128=. rows192="$alt"
(cd bench/anchors && "$py" sdpa_prefill.py cudnn,flash 64) > "${OUT:-/tmp}/wgmma_d64_sdpa.jsonl" 2>&1 || true
grep '"d": 64' "${OUT:-/tmp}/wgmma_d64_sdpa.jsonl" | grep -v '"torch"' || tail -3 "${OUT:-/tmp}/wgmma_d64_sdpa.jsonl"
