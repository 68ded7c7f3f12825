#!/bin/bash
# First H200 run of the matrix-unit decode kernel (cl/flash_decode_mma.cl): its speed against the
# portable kernel's decode path, the CUDA-core decode kernel and PyTorch SDPA (FlashAttention-2, cuDNN)
# in the same session; its tiles a warp (TILES 1, 2, 4 through a temporary FLASHCL_EXPERIMENT_DECODE_TILES), split counts, paged
# caches of 256 and 16 (`run.sh bench`); then the device suites that cover it (`run.sh tests`, a second
# command on the same machine). From the repository root.
R=/tmp/decode-mma-1
mkdir -p "$R"
trap 'tar czf "$OUT/decode-mma-1-$1.tgz" -C /tmp decode-mma-1' EXIT
source .gpu/gpu-env.sh >/dev/null
s() { echo "$(date +%T) $*"; }
[ -d build-gpu ] || meson setup build-gpu -Dbuildtype=release >/dev/null
ninja -C build-gpu > "$R/build.log" 2>&1 || { tail -30 "$R/build.log"; exit 1; }
s built
F=build-gpu/tools/flashcl
export FLASHCL_DEVICE=NVIDIA
D="--decode -H 32 --heads-kv 8 -d 128 --dtype f16 --algos flash --iters 20 --warmup 3 --max-seconds 1 -n 8192,32768,131072"
one() { local tag=$1; shift; timeout 45 $F bench $D "$@" --json "$R/$tag.json" > "$R/$tag.txt" 2> "$R/$tag.log"; s "$tag rc $? $(grep -E '\| flash' "$R/$tag.txt" | awk '{printf "%s:%s ", $3, $11}')"; }
if [ "$1" = bench ]; then
FLASHCL_CACHE=0 FLASHCL_BUILD_OPTIONS=-cl-nv-verbose FLASHCL_BUILD_LOG=1 timeout 30 $F run --decode -b 1 -H 32 --heads-kv 8 -n 32768 -d 128 --dtype f16 --iters 2 > "$R/regs.txt" 2>&1
s "regs: $(grep -A3 'properties for flash_decode_mma' "$R/regs.txt" | grep -oE '[0-9]+ bytes spill stores|Used [0-9]+ registers' | tr '\n' ' ') $(grep -E '^kernel|^validation' "$R/regs.txt" | cut -c1-120 | tr '\n' ' ')"
for b in 1 8; do
  one b$b-auto -b $b
  FLASHCL_EXPERIMENT_DECODE_TILES=1 one b$b-t1 -b $b
  FLASHCL_EXPERIMENT_DECODE_TILES=4 one b$b-t4 -b $b
  one b$b-paged256 -b $b --paged 256
  one b$b-paged16 -b $b --paged 16
  one b$b-portable -b $b --path portable
  one b$b-cudacore -b $b --path decode
done
for sp in 32 64 256; do one b1-s$sp -b 1 --kv-splits $sp; done
for sp in 16 32 128; do one b8-s$sp -b 8 --kv-splits $sp; done
timeout 100 /opt/torch/.venv/bin/python bench/anchors/sdpa_decode.py 8192,32768,131072 flash,cudnn > "$R/sdpa.jsonl" 2> "$R/sdpa.log"
s "sdpa rc $?"; grep gb_per_s "$R/sdpa.jsonl" | python3 -c 'import sys,json
for l in sys.stdin:
    d=json.loads(l); print(d["backend"], d["batch"], d["cache"], round(d["gb_per_s"]))' | tr '\n' ';'; echo
fi
if [ "$1" = tests ]; then
for t in kernels mma plan; do
  FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no FLASHCL_TOOL=$F timeout 60 build-gpu/tests/test_$t > "$R/test_$t.log" 2>&1
  s "test_$t rc $? $(grep -E '^[0-9]+%' "$R/test_$t.log" | tail -1)"
done
FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no timeout 150 build-gpu/tests/test_flash > "$R/test_flash.log" 2>&1
s "test_flash rc $? $(grep -E '^[0-9]+%' "$R/test_flash.log" | tail -1)"
fi
