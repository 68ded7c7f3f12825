#!/bin/bash
# Fifth H200 run: the quantized caches after decode-mma-4 (E4M3 at 1.54x the fp16 step): E4M3 by sm_89's
# cvt.rn.f16x2.e4m3x2 (FP8_CVT, on by FCL_SM >= 89) against the permute path (-DFP8_CVT=0), and 4 tiles a
# warp for int8 and E4M3 (-DTILES=4 over the chooser's 3), each validated by `flashcl run` first; fp16
# and PyTorch SDPA again in the same session; ptxas's register report per variant. One tarball in $OUT.
R=/tmp/decode-mma-5
rm -rf "$R"; mkdir -p "$R"
source .gpu/gpu-env.sh >/dev/null
s() { echo "$(date +%T) $*" | tee -a "$R/summary.txt"; }
[ -d build-gpu ] || meson setup build-gpu -Dbuildtype=release >/dev/null
ninja -C build-gpu > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
s built
F=build-gpu/tools/flashcl
export FLASHCL_DEVICE=NVIDIA
FLASHCL_TEST_FEATURES=quant FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no timeout 40 build-gpu/tests/test_flash > "$R/test_flash_quant.log" 2>&1
s "test_flash quant rc $? $(grep -E '^[0-9]+%' "$R/test_flash_quant.log" | tail -1)"
D="--decode -H 32 --heads-kv 8 -d 128 --dtype f16 --algos flash --iters 20 --warmup 3 --max-seconds 1"
# variant: tag, build options, kv-dtype (or plain)
variant() {
  local tag=$1 opts=$2 kv=$3 a=""
  [ "$kv" = plain ] || a="--kv-dtype $kv"
  FLASHCL_BUILD_OPTIONS="$opts" timeout 30 $F run -b 8 -H 32 --heads-kv 8 -d 128 --dtype f16 --seq-q 1 --seq-kv 4096 --kv-cache $a > "$R/run_$tag.txt" 2>&1
  s "$tag validate rc $? $(grep -E '^validation' "$R/run_$tag.txt" | cut -c1-60)"
  FLASHCL_CACHE=0 FLASHCL_BUILD_OPTIONS="$opts -cl-nv-verbose" FLASHCL_BUILD_LOG=1 timeout 30 $F run -b 8 -H 32 --heads-kv 8 -d 128 --dtype f16 --seq-q 1 --seq-kv 4096 --kv-cache $a > "$R/verbose_$tag.log" 2>&1
  s "$tag ptxas: $(grep -A3 "flash_decode_mma" "$R/verbose_$tag.log" | grep -E 'registers|spill' | tr -s ' ' | tr '\n' ' ' | cut -c1-200)"
  for b in 8 1; do
    FLASHCL_BUILD_OPTIONS="$opts" timeout 30 $F bench $D -b $b -n 32768,131072 $a --json "$R/h200_b${b}_$tag.json" > "$R/h200_b${b}_$tag.txt" 2>&1
    s "$tag b$b rc $? $(grep -E '\| flash' "$R/h200_b${b}_$tag.txt" | awk '{printf "%s:%s:%s ", $3, $8, $11}')"
  done
}
variant fp16 "" plain
variant int8 "" int8
variant int8_t4 "-DTILES=4" int8
variant fp8e5m2 "" fp8e5m2
variant fp8e4m3 "" fp8e4m3
variant fp8e4m3_t4 "-DTILES=4" fp8e4m3
variant fp8e4m3_nocvt "-DFP8_CVT=0" fp8e4m3
timeout 80 /opt/torch/.venv/bin/python bench/anchors/sdpa_decode.py 8192,32768,131072 flash,cudnn > "$R/h200_sdpa.jsonl" 2> "$R/sdpa.log"
s "sdpa rc $? $(cut -c1-400 "$R/h200_sdpa.jsonl" | tr '\n' ' ' | cut -c1-600)"
tar -C /tmp -czf "$OUT/decode-mma-5.tgz" decode-mma-5
