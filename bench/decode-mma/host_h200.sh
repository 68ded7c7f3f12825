#!/bin/bash
# SPDX-License-Identifier: MIT
# host_h200.sh: the host's side of a short decode step, in one device call (docs/design/decode_mma.md,
# decode-mma-12): the OpenCL driver's own costs apart from flashcl (tools/enqueue_probe: clSetKernelArg,
# the enqueue call, the round trip of an empty kernel, of two, of a 15-buffer kernel), flashcl's decode
# step at batch 1 (host_enqueue_us and host_step_us of `flashcl bench --decode`), and CUDA's beside them
# (PyTorch: one one-element kernel from the call to torch.cuda.synchronize(); SDPA's cuDNN and
# FlashAttention-2 steps). Run on the GPU machine from the repository root after `source
# .gpu/gpu-env.sh`; writes $OUT/host/ and prints each figure.
set -uo pipefail
b=${BUILD:-/tmp/b}
py=${PYTHON:-/opt/torch/.venv/bin/python}
dev=${FLASHCL_DEVICE:-NVIDIA}
out=${OUT:-/tmp}/host
mkdir -p "$out"
[ -f "$b/build.ninja" ] || meson setup "$b" . --buildtype=release >/dev/null || exit 1
ninja -C "$b" tools/flashcl tools/enqueue_probe >/dev/null || exit 1
timeout 120 "$b/tools/enqueue_probe" "$dev" --json > "$out/probe.json" && python3 - "$out/probe.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(d["device"])
for r in d["results"]:
    print(f"  {r['name']:26s} {r['median_us']:9.2f} [{r['p10_us']:.2f}-{r['p90_us']:.2f}] us  {r['what']}")
PY
timeout 180 "$b/tools/flashcl" bench --device "$dev" --decode -b 1 -H 32 --heads-kv 8 -d 128 --dtype f16 -n 8192,32768 \
  --iters 200 --warmup 20 --algos flash --json "$out/flashcl_b1.json" > /dev/null &&
  python3 - "$out/flashcl_b1.json" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    if r.get("ran"):
        dev = r.get("device_us")
        print(f"flashcl B=1 x {r['seq']}: kernel {r['median_ms'] * 1e3:.1f} us, enqueue call {r['host_enqueue_us']:.1f} us, "
              f"enqueue to completion {r['host_step_us']:.1f} us, device alone "
              f"{'-' if dev is None else f'{dev:.1f} us'} ({r['kernel']})")
PY
"$py" - > "$out/cuda.jsonl" <<'PY'
import json, sys
sys.path.insert(0, "bench/anchors")
import torch
from cuda_timing import host_us
x = torch.zeros(1, device="cuda")
print(json.dumps({"torch": torch.__version__, "device": torch.cuda.get_device_name(),
                  "tiny_kernel_step_us": host_us(lambda: x.add_(1), 100, 2000)}))
PY
cat "$out/cuda.jsonl"
(cd bench/anchors && timeout 120 "$py" sdpa_decode.py 8192,32768 flash,cudnn) > "$out/sdpa.jsonl" 2>&1
python3 - "$out/sdpa.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line) if line.startswith("{") else {}
    if r.get("batch") == 1 and "host_step_us" in r:
        dev = r.get("device_us")
        print(f"SDPA {r['backend']} B=1 x {r['cache']}: kernel {r['median_ms'] * 1e3:.1f} us, "
              f"call to synchronize {r['host_step_us']:.1f} us, device alone "
              f"{'-' if dev is None else f'{dev:.1f} us'}")
PY
