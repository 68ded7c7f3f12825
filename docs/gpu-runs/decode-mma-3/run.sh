#!/bin/bash
# Third H200 run of the matrix-unit decode kernel: the chooser as it stands (split rule: one wave of two
# work-groups per compute unit), paged caches of 256 and 16, quantized caches (int8 with fp32 and fp16
# scales, fp8 E4M3 and E5M2), beside PyTorch SDPA in the same session; NVIDIA's register report of the
# quantized variants; test_flash (the quantized cases on the real PTX conversions) and test_kernels.
# From the repository root.
R=/tmp/decode-mma-3
mkdir -p "$R"
trap 'tar czf "$OUT/decode-mma-3.tgz" -C /tmp decode-mma-3' EXIT
source .gpu/gpu-env.sh >/dev/null
s() { echo "$(date +%T) $*"; }
[ -d build-gpu ] || meson setup build-gpu -Dbuildtype=release >/dev/null
ninja -C build-gpu > "$R/build.log" 2>&1 || { tail -30 "$R/build.log"; exit 1; }
s built
F=build-gpu/tools/flashcl
export FLASHCL_DEVICE=NVIDIA
FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no timeout 170 build-gpu/tests/test_flash > "$R/test_flash.log" 2>&1
s "test_flash rc $? $(grep -E '^[0-9]+%' "$R/test_flash.log" | tail -1) $(grep -cE 'max err' "$R/test_flash.log") cases"
FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no timeout 60 build-gpu/tests/test_kernels > "$R/test_kernels.log" 2>&1
s "test_kernels rc $? $(grep -E '^[0-9]+%' "$R/test_kernels.log" | tail -1)"
for kv in int8 fp8e4m3 fp8e5m2; do
  FLASHCL_CACHE=0 FLASHCL_BUILD_OPTIONS=-cl-nv-verbose FLASHCL_BUILD_LOG=1 timeout 30 $F run -b 1 -H 32 --heads-kv 8 --seq-q 1 --seq-kv 32768 -d 128 --dtype f16 --kv-dtype $kv --iters 2 > "$R/regs-$kv.txt" 2>&1
  s "$kv: $(grep -A3 'properties for flash_decode_mma' "$R/regs-$kv.txt" | grep -oE '[0-9]+ bytes spill stores|Used [0-9]+ registers' | tr '\n' ' ') $(grep -E '^validation' "$R/regs-$kv.txt" | cut -c1-60)"
done
D="--decode -H 32 --heads-kv 8 -d 128 --dtype f16 --algos flash --iters 30 --warmup 5 --max-seconds 1 -n 8192,32768,131072"
one() { local tag=$1; shift; timeout 60 $F bench $D "$@" --json "$R/$tag.json" > "$R/$tag.txt" 2> "$R/$tag.log"; s "$tag rc $? $(grep -E '\| flash' "$R/$tag.txt" | awk '{printf "%s:%s:%s ", $3, $8, $11}')"; }
for b in 1 8; do
  one h200_b${b}_auto -b $b
  one h200_b${b}_paged256 -b $b --paged 256
  one h200_b${b}_paged16 -b $b --paged 16
  one h200_b${b}_int8 -b $b --kv-dtype int8
  one h200_b${b}_int8f16 -b $b --kv-dtype int8-f16
  one h200_b${b}_fp8e4m3 -b $b --kv-dtype fp8e4m3
  one h200_b${b}_fp8e5m2 -b $b --kv-dtype fp8e5m2
done
timeout 80 /opt/torch/.venv/bin/python bench/anchors/sdpa_decode.py 8192,32768,131072 flash,cudnn > "$R/h200_sdpa.jsonl" 2> "$R/sdpa.log"
s "sdpa rc $?"; grep gb_per_s "$R/h200_sdpa.jsonl" | python3 -c 'import sys,json
for l in sys.stdin:
    d=json.loads(l); print(d["backend"], d["batch"], d["cache"], round(d["gb_per_s"]))' | tr '\n' ';'; echo
