#!/bin/bash
# Issue 17, wgmma-9: flash_wgmma with the copies through L1 (COPY_CA=1, the default now) and auto taking it
# on the H200: flashcl bench for wgmma (pipelined, and the first loop), flash_mma and PyTorch SDPA in the
# same call; the copy variants; test_mma, test_edges and test_flash's lists that auto now sends to wgmma.
source docs/gpu-runs/wgmma/setup.sh
mkdir -p $R/bench
$B tiles --device NVIDIA -d 128 --dtype f16 -n 4096 2>&1 | grep -iE "kernel|path|reason" | head -4 | cut -c1-200
sweep() { # label, options, bench args
  FLASHCL_BUILD_OPTIONS="$2" FLASHCL_PATH=wgmma timeout 60 $B bench --device NVIDIA --algos flash --iters 10 $3 > $R/b.txt 2>&1
  printf "%-26s %s\n" "$1" "$(grep -E '^[0-9]' $R/b.txt | awk '{print $3, $4, $8, $9, $10}' | tr '\n' ';')"
}
S="-d 128 --dtype f16 -n 4096"
sweep "ca seg 4 (default)" "" "$S"; sweep "ca seg 2" "-DCOPY_SEG=2" "$S"; sweep "cg seg 4" "-DCOPY_CA=0" "$S"
sweep "ca ablate 5 (copies+sync)" "-DFLASHCL_DEBUG_ABLATE=5" "$S"; sweep "ca ablate 9" "-DFLASHCL_DEBUG_ABLATE=9" "$S"
sweep "ca ablate 2 (no copies)" "-DFLASHCL_DEBUG_ABLATE=2" "$S"
for cfg in "128 f16 " "128 bf16 " "64 f16 " "256 f16 " "128 f16 --causal"; do
  set -- $cfg
  for v in "wgmma::" "nopipe:wgmma:-DWG_PIPELINE=0" "mma:mma:"; do
    name=${v%%:*}; rest=${v#*:}; path=${rest%%:*}; opt=${rest#*:}; [ -z "$path" ] && path=wgmma
    [ "$2" = bf16 ] && [ $name = nopipe ] && continue
    f=$R/bench/${name}_$1_$2$3.json
    FLASHCL_BUILD_OPTIONS="$opt" FLASHCL_PATH=$path timeout 90 $B bench --device NVIDIA --algos flash --iters 10 -d $1 --dtype $2 $3 -n 4096,16384 --json $f > $R/b.txt 2>&1
    echo "== $name d=$1 $2 $3 rc $?: $(grep -E '^[0-9]' $R/b.txt | awk '{print $3, $8, $9, $10, $11}' | tr '\n' ';')"
  done
done
timeout 150 /opt/torch/.venv/bin/python bench/anchors/sdpa_prefill.py flash,cudnn 128,64,256 > $R/bench/sdpa.jsonl 2> $R/sdpa.log
python3 -c "
import json
for l in open('$R/bench/sdpa.jsonl'):
    r=json.loads(l)
    if 'tflops' in r: print(r['backend'],r['dtype'],r['d'],r['n'],'causal' if r['causal'] else '',round(r['tflops'],1))
" | tr '\n' ';'; echo
for t in test_mma test_edges; do
  FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no timeout 60 build-gpu/tests/$t > $R/$t.log 2>&1
  echo "$t rc $?: $(grep -E '^[0-9]+%' $R/$t.log | tail -1)"; grep -E ':[EF]:' $R/$t.log | head -3 | cut -c1-200
done
FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no FLASHCL_TEST_FEATURES=wgmma,mma,masks,window,align,offsets,mixed timeout 120 build-gpu/tests/test_flash > $R/test_flash.log 2>&1
echo "test_flash rc $?: $(grep -E '^[0-9]+%' $R/test_flash.log | tail -1)"; grep -E ':[EF]:' $R/test_flash.log | head -5 | cut -c1-200
tar czf $OUT/run.tgz -C $R .
