#!/bin/bash
# SPDX-License-Identifier: MIT
# ablate_h200.sh: where a short decode step's kernel time goes (docs/design/decode_mma.md, decode-mma-15):
# flash_decode_mma at batch 1 (Hq 32, Hkv 8, d 128, fp16; 8192 keys: 16 splits merged in the kernel;
# 32768: 33 splits and flash_combine) under DEC_ABLATE's bits, interleaved (bench/options_h200.sh), beside
# the driver's own floor (tools/enqueue_probe: an empty kernel's profiling start to end, alone and over
# the step's grid). The ablations' results are wrong by design: only their time is read. Run on the GPU
# machine from the repository root after `source .gpu/gpu-env.sh`; writes $OUT/ablate/.
set -uo pipefail
b=${BUILD:-/tmp/b}
out=${OUT:-/tmp}
mkdir -p "$out/ablate"
dev=${FLASHCL_DEVICE:-NVIDIA}
case $dev in *" "*) echo "ablate_h200.sh: FLASHCL_DEVICE without spaces (a substring or P:D), got '$dev'"; exit 2 ;; esac
[ -f "$b/build.ninja" ] || meson setup "$b" . --buildtype=release -Dtests=disabled >/dev/null || exit 1
ninja -C "$b" tools/flashcl tools/enqueue_probe >/dev/null || exit 1
timeout 120 "$b/tools/enqueue_probe" "$dev" --json > "$out/ablate/probe.json" && python3 - "$out/ablate/probe.json" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    if r["name"].startswith(("kernel", "step_one")):
        print("  %-26s %8.2f [%.2f-%.2f] us" % (r["name"], r["median_us"], r["p10_us"], r["p90_us"]))
PY
BUILD=$b OUT=$out/ablate RUN_LIMIT=${RUN_LIMIT:-90} bash bench/options_h200.sh "${ROUNDS:-3}" \
  "--device $dev --decode -b 1 -H 32 --heads-kv 8 -d 128 --dtype f16 -n 8192,32768 --iters 50 --warmup 10" \
  base= nomerge=-DDEC_ABLATE=1 nocount=-DDEC_ABLATE=3 noloop=-DDEC_ABLATE=4 bare=-DDEC_ABLATE=7
# (GB/s above are of the whole cache, whatever was read; the kernel, host-step and device times (device_us:
# the enqueue call out, decode-mma-22), us, each round's:)
python3 - "$out/ablate/options" <<'PY'
import glob, json, os, statistics, sys
t = {}
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    name = os.path.basename(f).rsplit("-", 1)[0]
    try:
        res = json.load(open(f))["results"]
    except (OSError, ValueError):
        continue
    for r in res:
        if r.get("ran"):
            t.setdefault(r["seq"], {}).setdefault(name, []).append(
                (r["median_ms"] * 1e3, r.get("host_step_us") or float("nan"), r.get("device_us") or float("nan")))
span = lambda v, i: f"{statistics.median(x[i] for x in v):.1f} [{min(x[i] for x in v):.1f}-{max(x[i] for x in v):.1f}]"
for seq, per in t.items():
    print(f"B=1 x {seq}: " + "  ".join(
        f"{n} kernel {span(v, 0)} step {span(v, 1)} device {span(v, 2)}" for n, v in per.items()))
PY
