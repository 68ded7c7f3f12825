#!/bin/bash
# Second H200 run of the matrix-unit decode kernel: the split rule chosen from decode-mma-1 (two
# work-groups per compute unit, splits of at least 4 steps), one block-table lookup per 16-key tile for
# pages that hold no whole warp step (pages of 16 with two tiles), repeated against PyTorch SDPA in the
# same session; other head dims and bf16; NVIDIA's register report; the prefill kernels after the move
# of the warp instructions to cl/mma.cl (`run.sh bench`). The device suites (`run.sh tests`).
R=/tmp/decode-mma-2
mkdir -p "$R"
trap 'tar czf "$OUT/decode-mma-2-$1.tgz" -C /tmp decode-mma-2' EXIT
source .gpu/gpu-env.sh >/dev/null
s() { echo "$(date +%T) $*"; }
[ -d build-gpu ] || meson setup build-gpu -Dbuildtype=release >/dev/null
ninja -C build-gpu > "$R/build.log" 2>&1 || { tail -30 "$R/build.log"; exit 1; }
s built
F=build-gpu/tools/flashcl
export FLASHCL_DEVICE=NVIDIA
if [ "$1" = bench ]; then
D="--decode -H 32 --heads-kv 8 --algos flash --iters 30 --warmup 5 --max-seconds 1"
one() { local tag=$1; shift; timeout 60 $F bench $D "$@" --json "$R/$tag.json" > "$R/$tag.txt" 2> "$R/$tag.log"; s "$tag rc $? $(grep -E '\| flash' "$R/$tag.txt" | awk '{printf "%s:%s ", $3, $11}')"; }
for d in 128 64 256; do
  FLASHCL_CACHE=0 FLASHCL_BUILD_OPTIONS=-cl-nv-verbose FLASHCL_BUILD_LOG=1 timeout 30 $F run -b 1 -H 32 --heads-kv 8 --seq-q 1 --seq-kv 32768 -d $d --dtype f16 --iters 2 > "$R/regs-d$d.txt" 2>&1
  s "d=$d: $(grep -A3 'properties for flash_decode_mma' "$R/regs-d$d.txt" | grep -oE '[0-9]+ bytes spill stores|Used [0-9]+ registers' | tr '\n' ' ') $(grep -E '^kernel|^validation' "$R/regs-d$d.txt" | cut -c1-100 | tr '\n' ' ')"
done
N="-n 8192,32768,131072"
for b in 1 8; do
  one b$b-auto -b $b -d 128 --dtype f16 $N
  one b$b-paged256 -b $b -d 128 --dtype f16 $N --paged 256
  one b$b-paged16 -b $b -d 128 --dtype f16 $N --paged 16
  one b$b-auto-again -b $b -d 128 --dtype f16 $N
done
one b8-bf16 -b 8 -d 128 --dtype bf16 $N
one b8-d64 -b 8 -d 64 --dtype f16 $N
one b8-d256 -b 8 -d 256 --dtype f16 $N
one b8-d256-cudacore -b 8 -d 256 --dtype f16 $N --path decode
timeout 100 /opt/torch/.venv/bin/python bench/anchors/sdpa_decode.py 8192,32768,131072 flash,cudnn > "$R/sdpa.jsonl" 2> "$R/sdpa.log"
s "sdpa rc $?"; grep gb_per_s "$R/sdpa.jsonl" | python3 -c 'import sys,json
for l in sys.stdin:
    d=json.loads(l); print(d["backend"], d["batch"], d["cache"], round(d["gb_per_s"]))' | tr '\n' ';'; echo
P="--algos flash --iters 7 --warmup 2 --max-seconds 2 -n 4096,16384 -d 64,128 --both"
timeout 60 $F bench $P --dtype f16 --json "$R/prefill-f16.json" > "$R/prefill-f16.txt" 2> "$R/prefill-f16.log"
s "prefill f16 rc $? $(grep -E '\| flash' "$R/prefill-f16.txt" | awk '{printf "%s/%s/%s:%s ", $3, $4, $5, $10}')"
fi
if [ "$1" = tests ]; then
FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no timeout 330 build-gpu/tests/test_flash > "$R/test_flash.log" 2>&1
s "test_flash rc $? $(grep -E '^[0-9]+%' "$R/test_flash.log" | tail -1)"
for t in edges validate threads cache; do
  FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no FLASHCL_TOOL=$F timeout 60 build-gpu/tests/test_$t > "$R/test_$t.log" 2>&1
  s "test_$t rc $? $(grep -E '^[0-9]+%' "$R/test_$t.log" | tail -1)"
done
fi
