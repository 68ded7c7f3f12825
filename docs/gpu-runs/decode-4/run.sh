#!/bin/bash
# Second H200 run of the decode kernel: after one block-table lookup a step (paged) and the hardware
# exp2; where its time goes (storage type: the fp16 conversions; a timing-only build without the
# team sums, -DEXPERIMENT_NO_TEAM_SUM, whose results are wrong on purpose); the portable kernel's
# decode path and PyTorch SDPA in the same session. From the repository root on the GPU machine.
R=/tmp/decode-4
mkdir -p "$R"
trap 'tar czf "$OUT/decode-4.tgz" -C /tmp decode-4' EXIT
source .gpu/gpu-env.sh >/dev/null
s() { echo "$(date +%T) $*"; }
meson setup /tmp/b -Dbuildtype=release -Dtests=false >/dev/null && ninja -C /tmp/b > "$R/build.log" 2>&1 || { tail -20 "$R/build.log"; exit 1; }
F=/tmp/b/tools/flashcl
export FLASHCL_DEVICE=NVIDIA
B="--decode -H 32 --heads-kv 8 -d 128 --algos flash --iters 20 --warmup 3 --max-seconds 1"
run() { local tag=$1; shift; timeout 40 $F bench $B "$@" --json "$R/$tag.json" > "$R/$tag.txt" 2> "$R/$tag.log"; s "$tag rc $? $(grep -E '\| flash' "$R/$tag.txt" | awk '{printf "%s:%s:%s ", $1, $3, $11}')"; }
run b1-decode -b 1 -n 8192,32768,131072 --dtype f16 --path decode
run b8-decode -b 8 -n 8192,32768,131072 --dtype f16 --path decode
run b1-portable -b 1 -n 8192,32768,131072 --dtype f16 --path portable
run b8-portable -b 8 -n 8192,32768,131072 --dtype f16 --path portable
run b1-paged256 -b 1 -n 131072 --dtype f16 --path decode --paged 256
run b8-paged256 -b 8 -n 131072 --dtype f16 --path decode --paged 256
run b8-paged16 -b 8 -n 131072 --dtype f16 --path decode --paged 16
run b8-bf16 -b 8 -n 131072 --dtype bf16 --path decode
run b8-f32 -b 8 -n 131072 --dtype f32 --path decode
FLASHCL_BUILD_OPTIONS=-DEXPERIMENT_NO_TEAM_SUM run b8-nosum -b 8 -n 131072 --dtype f16 --path decode
timeout 100 /opt/torch/.venv/bin/python bench/anchors/sdpa_decode.py > "$R/sdpa.jsonl" 2> "$R/sdpa.log"
s "sdpa rc $? $(grep -E '"backend": "flash"' "$R/sdpa.jsonl" | python3 -c 'import sys,json
print(" ".join("%d:%d:%.0f" % (r["batch"], r["cache"], r["gb_per_s"]) for r in map(json.loads, sys.stdin)))')"
