#!/bin/bash
# Fourth H200 run (written after the session's device time was spent; for the next one): the quantized caches
# after decode-mma-3 (the scale
# computed by a multiply; more 16-key tiles a warp for byte-sized caches; the E4M3 and int8 conversions
# by byte permutes): the quantized test cases on the real PTX conversions, then quantized and fp16
# decode steps side by side in one session, paged caches, PyTorch SDPA, then the whole test_flash. Results go
# straight to $OUT (bench/decode-mma/ takes the h200_*.json and h200_sdpa.jsonl). From the repository root.
R=$OUT/decode-mma-4
mkdir -p "$R"
source .gpu/gpu-env.sh >/dev/null
s() { echo "$(date +%T) $*"; }
[ -d build-gpu ] || meson setup build-gpu -Dbuildtype=release >/dev/null
ninja -C build-gpu > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
s built
F=build-gpu/tools/flashcl
export FLASHCL_DEVICE=NVIDIA
FLASHCL_TEST_FEATURES=quant FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no timeout 40 build-gpu/tests/test_flash > "$R/test_flash_quant.log" 2>&1
s "test_flash quant rc $? $(grep -E '^[0-9]+%' "$R/test_flash_quant.log" | tail -1)"
D="--decode -H 32 --heads-kv 8 -d 128 --dtype f16 --algos flash --iters 20 --warmup 3 --max-seconds 1 -n 8192,32768,131072"
one() { local tag=$1; shift; timeout 30 $F bench $D "$@" --json "$R/$tag.json" > "$R/$tag.txt" 2> "$R/$tag.log"; s "$tag rc $? $(grep -E '\| flash' "$R/$tag.txt" | awk '{printf "%s:%s:%s ", $3, $8, $11}')"; }
for b in 8 1; do
  one h200_b${b}_auto -b $b
  one h200_b${b}_int8 -b $b --kv-dtype int8
  one h200_b${b}_fp8e5m2 -b $b --kv-dtype fp8e5m2
  one h200_b${b}_fp8e4m3 -b $b --kv-dtype fp8e4m3
done
one h200_b8_int8f16 -b 8 --kv-dtype int8-f16
one h200_b1_paged256 -b 1 --paged 256
one h200_b1_paged16 -b 1 --paged 16
one h200_b8_paged256 -b 8 --paged 256
one h200_b8_paged16 -b 8 --paged 16
timeout 80 /opt/torch/.venv/bin/python bench/anchors/sdpa_decode.py 8192,32768,131072 flash,cudnn > "$R/h200_sdpa.jsonl" 2> "$R/sdpa.log"
s "sdpa rc $?"
FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no timeout 200 build-gpu/tests/test_flash > "$R/test_flash.log" 2>&1
s "test_flash rc $? $(grep -E '^[0-9]+%' "$R/test_flash.log" | tail -1)"
# ptxas's register/spill report of the decode kernel for fp16 and each byte format (-cl-nv-verbose)
for kv in plain int8 fp8e5m2 fp8e4m3; do
  a=""; [ $kv = plain ] || a="--kv-dtype $kv"
  FLASHCL_CACHE=0 FLASHCL_BUILD_OPTIONS=-cl-nv-verbose FLASHCL_BUILD_LOG=1 timeout 30 $F run -b 8 -H 32 --heads-kv 8 -d 128 --dtype f16 --seq-q 1 --seq-kv 4096 --kv-cache $a > "$R/nv_verbose_$kv.log" 2>&1
  s "verbose $kv: $(grep -iE 'registers|spill' "$R/nv_verbose_$kv.log" | grep -i decode -A2 | head -3 | tr '\n' ' ')"
done
