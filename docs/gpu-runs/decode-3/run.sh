#!/bin/bash
# First H200 run of the decode kernel (cl/flash_decode.cl, issue 14): its results validated on decode
# shapes (the shuffle path is NVIDIA's only), then flashcl bench --decode with the decode kernel and
# with the portable kernel's decode path, beside PyTorch SDPA in the same session
# (bench/anchors/sdpa_decode.py). From the repository root on the GPU machine.
R=/tmp/decode-3
mkdir -p "$R"
trap 'tar czf "$OUT/decode-3.tgz" -C /tmp decode-3' EXIT
source .gpu/gpu-env.sh >/dev/null
s() { echo "$(date +%T) $*"; }
meson setup /tmp/b -Dbuildtype=release >/dev/null && ninja -C /tmp/b > "$R/build.log" 2>&1 || { tail -20 "$R/build.log"; exit 1; }
F=/tmp/b/tools/flashcl
export FLASHCL_DEVICE=NVIDIA
FLASHCL_BUILD_OPTIONS=-cl-nv-verbose FLASHCL_BUILD_LOG=1 FLASHCL_CACHE=0 timeout 30 $F run --seq-q 1 --seq-kv 8192 -H 32 --heads-kv 8 -d 128 --dtype f16 > "$R/regs.txt" 2>&1
s "regs: $(grep -A3 'properties for flash_decode' "$R/regs.txt" | grep -oE '[0-9]+ bytes spill stores|Used [0-9]+ registers' | tr '\n' ' ')"
for c in "--seq-q 1 --seq-kv 5000 -H 32 --heads-kv 8 -d 128 --dtype f16" "--seq-q 3 --seq-kv 3000 -H 16 --heads-kv 2 -d 64 --dtype bf16 --causal" \
         "--seq-q 1 --seq-kv 4000 -H 8 --heads-kv 8 -d 256 --dtype f32 --window 500,0 --softcap 30" "--seq-q 2 --seq-kv 3000 -H 32 --heads-kv 4 -d 96 --dtype f16 --kv-cache --append --paged 16 --alibi"; do
  timeout 30 $F run -b 2 $c > "$R/run-$(echo $c | tr -dc 'a-z0-9')".txt 2>&1
  s "run $c: rc $? $(grep -E '^kernel|validation' "$R/run-$(echo $c | tr -dc 'a-z0-9')".txt | cut -c1-90 | tr '\n' ' ')"
done
FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no timeout 60 /tmp/b/tests/test_kernels > "$R/test_kernels.log" 2>&1
s "test_kernels rc $? $(grep -E '^[0-9]+%' "$R/test_kernels.log")"
B="--decode -H 32 --heads-kv 8 -d 128 --dtype f16 --algos flash --iters 20 --warmup 3 --max-seconds 1"
for b in 1 8; do
  for path in decode portable; do
    timeout 60 $F bench $B -b $b -n 8192,32768,131072 --path $path --json "$R/b$b-$path.json" > "$R/b$b-$path.txt" 2> "$R/b$b-$path.log"
    s "b=$b $path rc $?"
  done
  for pg in 256 16; do
    timeout 40 $F bench $B -b $b -n 131072 --path decode --paged $pg --json "$R/b$b-paged$pg.json" > "$R/b$b-paged$pg.txt" 2> "$R/b$b-paged$pg.log"
    s "b=$b paged $pg rc $?"
  done
done
timeout 150 /opt/torch/.venv/bin/python bench/anchors/sdpa_decode.py > "$R/sdpa.jsonl" 2> "$R/sdpa.log"
s "sdpa rc $?"
echo "== flashcl (B, N, median ms, GB/s)"
for f in "$R"/b*.txt; do echo "-- $(basename $f)"; grep -E "\| flash" "$f" | awk '{print $1,$3,$8,$11}'; done
echo "== PyTorch"
grep -E '"backend": "(flash|cudnn)"' "$R/sdpa.jsonl" | python3 -c 'import sys,json
for l in sys.stdin:
  r=json.loads(l); print(r["backend"],r["batch"],r["cache"],round(r.get("median_ms",0),4),round(r.get("gb_per_s",0)))'
