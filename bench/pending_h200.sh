#!/bin/bash
# SPDX-License-Identifier: MIT
# pending_h200.sh [STAGE ...]: the measurements whose predictions the design pages hold, stage by stage (those
# that ran kept to reproduce the recorded results), so that a device call starts on them at once. Run on the
# GPU machine from the repository root after `source .gpu/gpu-env.sh`; each stage packs what it wrote into
# $OUT/STAGE.tgz (a call brings back only a few files) and prints its table last. Stages:
#   check   the default decode program on the GPU: the decode_mma and quant lists, and validated steps at
#           lengths a split's rounding does not divide (decode-mma-29's SPLIT_ROUND), batch 1 and 8,
#           16-bit and byte caches (about 2 minutes with the build)
#   decode  decode-mma-28 (KV_PREFETCH at batch 1, eight warps), -29 (SPLIT_ROUND=256 against the
#           default), -30 (DEC_ABLATE=32: the products twice), interleaved, device_us and device_b2b_us,
#           then the driver's registers for each program (docs/design/decode_mma.md; about 4 minutes)
#   fp8     fp8-8 (VT_LDSM at d=64) and fp8-9 (the consumers' turns with the transpose and the
#           exponentials left out), fp16 beside (docs/design/fp8.md; about 5 minutes)
#   bytes8  decode-mma-31 (eight warps for the byte caches against the four of its day) ran at dbf080e and was
#           removed once int8 took eight warps, its sed patches no longer matching this tree: `git show
#           dbf080e:bench/pending_h200.sh` reproduces it at that commit
#   wide    wgmma-192: 192-key tiles against the chooser's 128 at d=128 (fp16 N 1024-16384, bf16 and causal at
#           16384), the driver's registers and spills for the 192-key program (about 5 minutes)
#   stream  decode-mma-32: tools/stream_probe, the rate batch 1's grid reads a cache at by loads and by bulk
#           copies, apart from flashcl's kernel (about 1 minute)
#   sass    the driver's code for flash_wgmma's default and persistent programs at d=128 (wgmma-carveout's
#           next step, docs/design/wgmma.md): their PTX and registers back for ptxas and nvdisasm
#   bench   BENCHMARKS.md's decode section again (ONLY="decode-mma" bench/h200.sh, PyTorch beside) and the
#           host's side (bench/decode-mma/host_h200.sh); the JSON comes back in bench.tgz
#   l2      wgmma-l2: d=64 and causal d=128 at N=16384, the default against one work-group an SM and against
#           the default with the persistent program's local memory (WG_LOCAL_PAD), with every query head's own
#           KV head and with one shared by all; the driver's registers of the persistent programs (about 4
#           minutes)
#   feat    wgmma-feat: the wgmma_persist list, then one work-group an SM against the default at d=128 fp16
#           N=1024 with softcap, ALiBi, sinks, a paged cache and a window (about 3 minutes with the tests' build)
#   epi     wgmma-epi: the wgmma_persist list with the producer warpgroup storing O and copying the next Q
#           (WG_EPI_PRODUCER=1), then the default against it and against the default without O's global stores
#           (WG_ABLATE=16), d 64 and 128, N 512 and 1024, and causal d=128 N 1024 and 4096, interleaved; the
#           driver's registers for the new program (docs/design/wgmma.md; about 5 minutes with the tests' build)
#   epi2    wgmma-epi2: as epi with WG_EPI_PRODUCER=2, the producer's epilogue step after each block's copies
#           (about 5 minutes with the tests' build)
#   obulk   wgmma-obulk: the wgmma lists with WG_O_BULK=1 (O's rows written by bulk copies from plain staged
#           rows), then the default against it and against the default without O's global stores, d 64, 128 and
#           256, N 1024 and 4096, and causal d=128, interleaved (about 6 minutes with the tests' build)
#   idle    wgmma-idle: the wgmma lists with WG_SKIP_IDLE=1 (a warpgroup whose rows are all past the queries skips
#           its products), then the default against it at d=64 N 512 and 1024 and the serving preset's packed
#           sequences, interleaved (about 5 minutes with the tests' build)
#   d256    wgmma-d256: where d=256's tile goes (64-key tiles, no turns), fp16 N 1024 and 16384: the default
#           against its ablations (WG_ABLATE 2: no exponentials, 128: no rescale of O, 12: no products, 14: the
#           copies, barriers and the rest of the softmax alone) and against lazy rescaling (WG_LAZY_RESCALE=1,
#           validated), two interleaved rounds (docs/design/wgmma.md; about 5 minutes)
#   order   wgmma-order: the wgmma lists with WG_ORDER=1 (blocks that differ in keys numbered row block by row
#           block across the heads), then the default against it, causal fp16 d=128 N 1024-16384 and d=64 N 1024,
#           4096 and 16384, and the serving preset's packed sequences, interleaved (about 5 minutes with the
#           tests' build)
#   order2  wgmma-order2: the wgmma lists with WG_ORDER=1 WG_ORDER_HEADS=3, then causal fp16 d=128: at N 1024 and
#           4096 the chooser's persistent program against the grid (its tiles spelled out) and the grid in the
#           row-block order within groups of 16384 / N (batch, head)s (8 MiB of K and V a group) and twice that;
#           at N=8192 (the grid) the default against the two groupings; interleaved (about 5 minutes)
#   defaults wgmma-defaults: this tree's defaults (the causal grid's grouped order at d=128, the persistent program
#           to 2048 causal keys, lazy rescaling at d_v=256) against the options that restore the last ones, causal
#           d=128 fp16 N 2048-8192, bf16, GQA, d=256 with and without causal; the options that would extend them at
#           d=64, 192 and 256; interleaved (about 4 minutes with the build; `suites` after it runs the lists)
#   wide80  wgmma-80: the wgmma list (its override entries with 80-key tiles), then the chooser's 64-key tiles against
#           80 at d=192 and 256, fp16 N 1024-16384 and causal at 4096 and 16384, interleaved (about 4 minutes)
#   benchw  BENCHMARKS.md's flash_wgmma section again (ONLY=wgmma bench/h200.sh, PyTorch beside); its JSON comes
#           back in benchw.tgz (about 4 minutes)
#   suites  every device suite of the build (tools/gpu_suites.sh, six shards)
#   e4m3    decode-mma-33: E4M3 caches at eight warps (two, three and four tiles) against this tree's four,
#           batch 1 × 32768 and 131072, the chooser's splits and 33 forced (flash_combine's merge, as four
#           warps take), interleaved trees (bench/variants_h200.sh; about 6 minutes with the trees' builds)
#   tiles1  decode-mma-34: 16-bit caches with one 16-key tile a warp and step (TILES_OVERRIDE=1) against the
#           chooser's two, batch 1 and 8, fp16, d=128 (bench/options_h200.sh; about 3 minutes)
#   e4m3b   decode-mma-33's e8t3 (E4M3 at eight warps, three tiles) against this tree at batch 1 × 8192 and batch 8 ×
#           8192-131072, the chooser's splits (about 3 minutes with the trees' builds)
#   uniform wgmma-uniform: the persistent program with the warpgroup's branches read from a warp shuffle
#           (WG_WARP_BCAST, its default) against the default and the persistent program without it, one block a
#           work-group, and one work-group an SM (132), d=128 fp16 N 1024 and 16384, after the wgmma_persist
#           list; the driver's PTX of the new program for tools/ptx_loops.py (docs/design/wgmma.md; about 4
#           minutes with the tests' build)
#   desc    wgmma-desc: the wgmma, wgmma_features and wgmma_persist lists with each k step's descriptor made by
#           an integer add (WG_DESC_ADD=1), then the default against it, d 64, 128 and 256, fp16 N 1024 and 16384
#           (docs/design/wgmma.md; about 4 minutes with the tests' build)
#   bulk    decode-mma-35: K and V by bulk copies (KV_BULK=1, one tile a warp) against the chooser's program and
#           one tile by loads (decode-mma-34's variant), batch 1 and 8, fp16, d=128 (about 5 minutes; tiles1's
#           variants included)
#   short   wgmma-short: one work-group a compute unit (persistent, the chooser's tiles spelled out) against the
#           default, d=128 fp16 N 1024-16384, bf16, d=64, causal; three interleaved rounds (about 5 minutes)
#   verify  the eleventh session's chooser changes (wgmma-short's persistent work-groups, decode-mma-37's E4M3
#           rule): the wgmma, wgmma_persist, decode_mma and quant lists; the chooser against a work-group a
#           block (d 64 and 128, N 512 and 1024) and against E4M3 at four warps (batch 1 and 2), interleaved;
#           cuDNN's prefill at d 64 and 128 (about 6 minutes with the tests' build)
#   snake   wgmma-snake: causal d=128 fp16 N 1024-16384, the default against one work-group an SM taking blocks
#           by stride and by the snake order (WG_SNAKE=1), interleaved (about 3 minutes)
#   e4m3c   decode-mma-37: e8t3 against this tree at batch 1 x 16384 and 65536 and batch 2 and 4 x 32768, where
#           a rule for batch 1's long caches would draw its line (about 3 minutes with the trees' builds)
# Ran on 2026-12-06 (seventh session, H100): check, decode, stream, wide, sass, fp8, bytes8, bench, suites; on
# 2026-12-07 (ninth session, H100): bulk (with tiles1's variants) and check; (tenth session, H100): suites and
# e4m3; (eleventh session, H100): e4m3b, uniform, desc, short, e4m3c. Their results are in the design pages.
# verify and snake ran the same session; (twelfth session, H100, one call): feat; (thirteenth session, H100): suites,
# epi, benchw, l2 and bench; (fourteenth session, H100): obulk, idle, epi2. Their results are in the design pages.
# d256 and order2 ran in the sixteenth session (H100). Next: defaults, suites, wide80, then benchw.
# BUILD (default /tmp/b): the release build every stage uses, set up if missing and brought up to date first
# (TARGETS: only those ninja targets, e.g. tools/flashcl where only the command runs; check, suites, uniform and desc
# run the tests). REPS: bulk's rounds (2),
# BATCHES its batches (1 8). With less device time than a build: `meson setup build-rel --buildtype=release
# -Dtests=disabled && ninja -C build-rel tools/flashcl` here, build-rel in the call's carry, and
# bench/options_h200.sh run there with BUILD=$PWD/build-rel (it builds nothing where the command exists).
# (Default stage: suites; then `benchw` and `l2` in calls of their own: a call has 600 s.)
set -uo pipefail
cd "$(dirname "$0")/.."
b=${BUILD:-/tmp/b}
out=${OUT:-/tmp}
dev=${FLASHCL_DEVICE:-NVIDIA}
[ $# -gt 0 ] || set -- suites
t0=$SECONDS
# (built again every time: a no-op where nothing changed, and no stale binary after a source change)
# shellcheck disable=SC2086
{ [ -f "$b/build.ninja" ] || meson setup "$b" . --buildtype=release >/dev/null; } &&
  ninja -C "$b" ${TARGETS:-} >/dev/null ||
  { echo "build failed"; exit 1; }
echo "built in $((SECONDS - t0)) s"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
# decode_table DIR: each variant's device_us / device_b2b_us per (batch, keys), every round
decode_table() {
  python3 - "$1" <<'PY'
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
            t.setdefault((r["batch"], r["seq"]), {}).setdefault(name, []).append(
                (r.get("device_us"), r.get("device_b2b_us"), r.get("passed")))
fmt = lambda v: "-" if v is None else f"{v:.1f}"
for (b, n), per in sorted(t.items()):
    cells = []
    for name, v in per.items():
        dev = [x for x, _, _ in v if x is not None]
        b2b = [y for _, y, _ in v if y is not None]
        cells.append(f"{name} {fmt(statistics.median(dev) if dev else None)} / "
                     f"{fmt(statistics.median(b2b) if b2b else None)} [{' '.join(fmt(x) for x, _, _ in v)}]"
                     f"{'' if all(p for _, _, p in v) else ' (not validated)'}")
    print(f"B={b} x {n}: " + "; ".join(cells))
PY
}
# e4m3_tree TILES: /tmp/fcl-e8tTILES, a copy of this tree whose chooser gives E4M3 eight warps (as int8 with fp32
# scales) of TILES tiles (decode-mma-33); fails where the chooser's lines have changed
e4m3_tree() {
  local d=/tmp/fcl-e8t$1
  rm -rf "$d" && mkdir -p "$d" && tar cf - --exclude=./.gpu --exclude='./build*' . | tar xf - -C "$d" &&
    sed -i -e 's/(!p->kv_format || int8_f32) && !big/(!p->kv_format || int8_f32 || p->kv_format == FLASHCL_KV_FP8_E4M3) \&\& !big/' \
      -e "s/FLASHCL_KV_FP8_E4M3 ? (fp8_cvt ? 2 :/FLASHCL_KV_FP8_E4M3 ? (fp8_cvt ? $1 :/" "$d/src/kernels/decode_mma.c" &&
    grep -q "int8_f32 || p->kv_format == FLASHCL_KV_FP8_E4M3) && !big" "$d/src/kernels/decode_mma.c" &&
    grep -q "(fp8_cvt ? $1 :" "$d/src/kernels/decode_mma.c"
}
# persistent_cfg JSON: the --config of the persistent program (2048 work-groups) with the tiles a bench JSON ran
persistent_cfg() {
  python3 -c 'import json, sys
x = json.load(open(sys.argv[1]))["results"][0]
print("kernel=wgmma,block_m=%d,block_n=%d,kv_stages=%d,producer=1,persistent=2048" %
      (x["block_m"], x["block_n"], x["kv_stages"]))' "$1"
}
# lists_with OPTIONS FEATURES SECONDS: the device's test lists (FLASHCL_TEST_FEATURES) with a variant's build
# options, into $r/lists.log, and their result
lists_with() {
  FLASHCL_BUILD_OPTIONS=$1 FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no FLASHCL_TEST_FEATURES=$2 timeout "$3" \
    "$b/tests/test_flash" > "$r/lists.log" 2>&1
  echo "$2 with $1: exit $? $(grep -h 'Checks:' "$r/lists.log" | tail -n 1)"
  grep -hE ":[FE]:" "$r/lists.log" | head -n 5
}
for stage in "$@"; do
  s0=$SECONDS
  r=$out/$stage
  mkdir -p "$r"
  echo "== $stage"
  case $stage in
  check)
    FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no FLASHCL_TEST_FEATURES=decode_mma,quant timeout 240 "$b/tests/test_flash" \
      > "$r/lists.log" 2>&1
    echo "decode_mma + quant lists: exit $? $(grep -h 'Checks:' "$r/lists.log" | tail -n 1)"
    grep -hE ":[FE]:" "$r/lists.log" | head -n 5
    for kv in f16 int8 fp8e4m3; do
      kvarg=()
      [ $kv = f16 ] || kvarg=(--kv-dtype $kv)
      for bt in 1 8; do
        timeout 150 "$b/tools/flashcl" bench --device "$dev" --decode -b $bt -H 32 --heads-kv 8 -d 128 --dtype f16 \
          ${kvarg[@]+"${kvarg[@]}"} -n 1000,3000,8193,32769,131073 --iters 5 --warmup 1 --algos flash \
          --json "$r/steps-$kv-b$bt.json" > "$r/steps-$kv-b$bt.txt" 2>&1 || echo "steps $kv b=$bt: exit $?"
      done
    done
    python3 - "$r" <<'PY'
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/steps-*.json")):
    for x in json.load(open(f))["results"]:
        print(f"  {f.rsplit('/', 1)[1][6:-5]:12s} n={x['seq']:6d} {x.get('kernel')} wg={x.get('work_group')} "
              f"validated={x.get('passed')} err={x.get('max_rel_error')}")
PY
    ;;
  decode)
    BUILD=$b OUT=$r RUN_LIMIT=150 bash bench/options_h200.sh 2 "--device $dev --decode -b 1 -H 32 --heads-kv 8 -d 128 \
--dtype f16 -n 8192,8193,32768,32769 --iters 20 --warmup 3" base= pf=-DKV_PREFETCH=1 r256=-DSPLIT_ROUND=256 \
      x2=-DDEC_ABLATE=32 > "$r/options.txt" 2>&1
    for v in base: pf:-DKV_PREFETCH=1 x2:-DDEC_ABLATE=32; do # (the driver's programs, for their registers)
      name=${v%%:*}
      FLASHCL_CACHE_DIR=$r/cache-$name FLASHCL_BUILD_OPTIONS=${v#*:} timeout 60 "$b/tools/flashcl" bench \
        --device "$dev" --decode -b 1 -H 32 --heads-kv 8 -d 128 --dtype f16 -n 8192 --iters 1 --warmup 0 \
        --algos flash > /dev/null 2>&1
      mkdir -p "$r/sass-$name" && OUT_DIR=$r/sass-$name timeout 120 python3 tools/nv_driver_sass.py \
        "$r/cache-$name" > "$r/sass-$name/log.txt" 2>&1
      echo "$name: $(grep -h 'flash_decode_mma: [0-9]* registers' "$r/sass-$name/log.txt" | head -n 1)"
    done
    echo "device_us / device_b2b_us (us), the median of the rounds [each round's device_us]:"
    decode_table "$r/options"
    ;;
  fp8)
    BUILD=$b OUT=$r/d128 RUN_LIMIT=200 bash bench/options_h200.sh 2 "--device $dev -d 128 -n 16384 --dtype f16 \
--fp8 e4m3 --descale head --iters 10" base= pp=-DWG_PINGPONG=1 vtexp=-DWG_ABLATE=3 \
      vtexppp=-DWG_ABLATE=3,-DWG_PINGPONG=1 | tail -n 3
    BUILD=$b OUT=$r/d64 RUN_LIMIT=200 bash bench/options_h200.sh 2 "--device $dev -d 64 -n 16384 --dtype f16 \
--fp8 e4m3 --descale head --iters 10" base= ldsm=-DVT_LDSM=1 | tail -n 3
    BUILD=$b OUT=$r/f16 RUN_LIMIT=200 bash bench/options_h200.sh 2 "--device $dev -d 64,128 -n 16384 --dtype f16 \
--iters 10" f16= | tail -n 3
    ;;
  wide)
    # (the chooser's tiles spelled out, and the same with 192-key tiles; every run validated)
    c128=kernel=wgmma,block_m=128,block_n=128,kv_stages=2,producer=1
    c192=kernel=wgmma,block_m=128,block_n=192,kv_stages=2,producer=1
    BUILD=$b OUT=$r/f16 RUN_LIMIT=200 bash bench/options_h200.sh 2 "--device $dev -d 128 -n 1024,4096,16384 \
--dtype f16 --iters 10" auto= t128=cfg:$c128 t192=cfg:$c192 | tail -n 4
    BUILD=$b OUT=$r/more RUN_LIMIT=200 bash bench/options_h200.sh 2 "--device $dev -d 128 -n 16384 --dtype bf16 \
--iters 10 --both" t128=cfg:$c128 t192=cfg:$c192 | tail -n 4
    # (the driver's registers and spills for the 192-key programs, plain and causal)
    FLASHCL_CACHE_DIR=$r/cache-192 timeout 120 "$b/tools/flashcl" bench --device "$dev" -d 128 -n 4096 --dtype f16 \
      --iters 2 --warmup 0 --algos flash --config "$c192" --both > /dev/null 2>&1
    mkdir -p "$r/sass-192" && OUT_DIR=$r/sass-192 timeout 120 python3 tools/nv_driver_sass.py "$r/cache-192" \
      > "$r/sass-192/log.txt" 2>&1
    grep -h "flash_wgmma: [0-9]* registers\|spill\|serialized" "$r/sass-192/log.txt" | head -n 8
    ;;
  stream)
    # (tools/stream_probe: batch 1's grid at 8192 and 32768 keys, eight warps and 16 splits; four warps and 32
    # splits, the byte caches' grid at 8192; every variant's program back for the driver's registers)
    for c in "8192 8 16" "32768 8 16" "8192 4 32"; do
      set -- $c
      mkdir -p "$r/ptx-$1-$2"
      timeout 150 "$b/tools/stream_probe" "$dev" --keys $1 --warps $2 --splits $3 --copies 4 --reps 30 \
        --ptx "$r/ptx-$1-$2" --json > "$r/probe-$1-$2.json" 2> "$r/probe-$1-$2.err" || echo "stream_probe $c: exit $?"
      python3 - "$r/probe-$1-$2.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(f"{d['keys']} keys, {d['warps']} warps, {d['splits']} splits ({2 * d['bytes'] / 1e6:.1f} MB):")
for x in d["results"]:
    print(f"  {x['kernel']:12s} depth {x['depth']:2d} stages {x['stages']}: {x['median_us']:8.2f} us "
          f"[{x['p10_us']:.2f}-{x['p90_us']:.2f}] {x['gb_per_s']:7.1f} GB/s")
PY
      mkdir -p "$r/sass-$1-$2" && OUT_DIR=$r/sass-$1-$2 timeout 120 python3 tools/nv_driver_sass.py "$r/ptx-$1-$2" \
        > "$r/sass-$1-$2.txt" 2>&1
      grep -h "registers" "$r/sass-$1-$2.txt" | head -n 12
    done
    ;;
  sass)
    # (the default's tiles, then the same tiles persistent: bench/options_h200.sh's p2048 of wgmma-carveout)
    for name in default persistent; do
      cfg=()
      [ $name = default ] || cfg=(--config "$(persistent_cfg "$r/default.json")")
      FLASHCL_CACHE_DIR=$r/cache-$name timeout 150 "$b/tools/flashcl" bench --device "$dev" -d 128 -n 1024 --dtype f16 \
        --iters 3 --warmup 1 --algos flash ${cfg[@]+"${cfg[@]}"} --json "$r/$name.json" > "$r/$name.txt" 2>&1 ||
        echo "$name: exit $?"
      mkdir -p "$r/sass-$name" && OUT_DIR=$r/sass-$name timeout 120 python3 tools/nv_driver_sass.py "$r/cache-$name" \
        > "$r/sass-$name/log.txt" 2>&1
      echo "$name ${cfg[*]:-}: $(grep -h 'flash_wgmma: [0-9]* registers' "$r/sass-$name/log.txt" | head -n 1)"
    done
    ;;
  bench)
    ONLY="decode-mma" PYTHON=${PYTHON:-/opt/torch/.venv/bin/python} bench/h200.sh "$b" | tail -n 4
    BUILD=$b OUT=$r bash bench/decode-mma/host_h200.sh > "$r/host.txt" 2>&1
    tail -n 12 "$r/host.txt"
    cp -r bench/decode-mma "$r/decode-mma"
    ;;
  benchw)
    # (BENCHMARKS.md's flash_wgmma section again, cuDNN and FlashAttention-2 beside: its JSON comes back in
    # benchw.tgz, for tools/benchmarks_md.py here)
    ONLY="wgmma" PYTHON=${PYTHON:-/opt/torch/.venv/bin/python} bench/h200.sh "$b" | tail -n 4
    cp -r bench/wgmma "$r/wgmma"
    ;;
  suites)
    SHARDS=6 OUT=$r timeout 420 bash tools/gpu_suites.sh "$b" 330
    ;;
  e4m3)
    # (copies whose chooser gives E4M3 eight warps, as int8 with fp32 scales: e8t2 with its two tiles, e8t3 and
    # e8t4 with three and four)
    for tiles in 2 3 4; do
      e4m3_tree $tiles || { echo "e4m3: the chooser's lines have changed"; continue 2; }
    done
    for s in auto 33; do
      sp=()
      [ $s = auto ] || sp=(--kv-splits $s)
      OUT=$r/$s REUSE=1 RUN_LIMIT=150 bash bench/variants_h200.sh 2 "--device $dev --decode -b 1 -H 32 --heads-kv 8 \
-d 128 --dtype f16 --kv-dtype fp8e4m3 -n 32768,131072 --iters 20 --warmup 3 ${sp[*]:-}" base=. e8t2=/tmp/fcl-e8t2 \
        e8t3=/tmp/fcl-e8t3 e8t4=/tmp/fcl-e8t4 > /dev/null
      decode_table "$r/$s/variants" | sed "s/^/splits $s: /"
    done
    ;;
  e4m3b)
    # (decode-mma-33's e8t3, E4M3 at eight warps with three tiles, against this tree at the shapes e4m3 left out)
    e4m3_tree 3 || { echo "e4m3b: the chooser's lines have changed"; continue; }
    for bt in 1 8; do
      n=8192
      [ $bt = 1 ] || n=8192,32768,131072
      OUT=$r/b$bt REUSE=1 RUN_LIMIT=150 bash bench/variants_h200.sh 2 "--device $dev --decode -b $bt -H 32 --heads-kv 8 \
-d 128 --dtype f16 --kv-dtype fp8e4m3 -n $n --iters 20 --warmup 3" base=. e8t3=/tmp/fcl-e8t3 > /dev/null
      decode_table "$r/b$bt/variants"
    done
    ;;
  uniform)
    # (wgmma-uniform: the wgmma_persist list on the GPU; the chooser's tiles spelled out, then the default, the
    # persistent program as it was (WG_WARP_BCAST=0) and as it is, interleaved; the driver's PTX of the new one)
    FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no FLASHCL_TEST_FEATURES=wgmma_persist timeout 120 "$b/tests/test_flash" \
      > "$r/persist.log" 2>&1
    echo "wgmma_persist list: exit $? $(grep -h 'Checks:' "$r/persist.log" | tail -n 1)"
    FLASHCL_CACHE_DIR=$r/cache-default timeout 150 "$b/tools/flashcl" bench --device "$dev" -d 128 -n 1024 --dtype f16 \
      --iters 3 --warmup 1 --algos flash --json "$r/default.json" > "$r/default.txt" 2>&1
    c=$(persistent_cfg "$r/default.json") || { echo "uniform: no default tiles"; continue; }
    OUT=$r BUILD=$b RUN_LIMIT=120 bash bench/options_h200.sh 2 \
      "--device $dev -d 128 -n 1024,16384 --dtype f16 --iters 10" \
      base= p2048old=cfg:$c+-DWG_WARP_BCAST=0 p2048=cfg:$c p132=cfg:${c/persistent=2048/persistent=132}
    FLASHCL_CACHE_DIR=$r/cache-p2048 timeout 150 "$b/tools/flashcl" bench --device "$dev" -d 128 -n 1024 --dtype f16 \
      --iters 3 --warmup 1 --algos flash --config "$c" > /dev/null 2>&1
    mkdir -p "$r/sass-p2048" && OUT_DIR=$r/sass-p2048 timeout 120 python3 tools/nv_driver_sass.py "$r/cache-p2048" \
      > "$r/sass-p2048/log.txt" 2>&1
    echo "p2048: $(grep -h 'flash_wgmma: [0-9]* registers' "$r/sass-p2048/log.txt" | head -n 1)"
    ;;
  desc)
    # (wgmma-desc: the wgmma lists on the GPU with the descriptors by adds, then the default against them,
    # interleaved, at each head dim the chooser's program)
    lists_with -DWG_DESC_ADD=1 wgmma,wgmma_features,wgmma_persist 240
    OUT=$r BUILD=$b RUN_LIMIT=150 bash bench/options_h200.sh 2 "--device $dev -d 64,128,256 -n 1024,16384 --dtype f16 \
--iters 10" base= desc=-DWG_DESC_ADD=1
    ;;
  tiles1)
    for bt in 1 8; do
      BUILD=$b OUT=$r/b$bt RUN_LIMIT=150 bash bench/options_h200.sh 2 "--device $dev --decode -b $bt -H 32 --heads-kv 8 \
-d 128 --dtype f16 -n 8192,32768,131072 --iters 20 --warmup 3" base= t1=-DTILES_OVERRIDE=1 > "$r/b$bt.txt" 2>&1
      decode_table "$r/b$bt/options"
    done
    ;;
  bulk)
    # (-DFCL_SM90A=1 finishes every program of the run for sm_90a: without marks, only retargeted; a run has
    # 90 s, so that a wait that never ends costs four of them, not the call)
    for bt in ${BATCHES:-1 8}; do
      BUILD=$b OUT=$r/b$bt RUN_LIMIT=90 bash bench/options_h200.sh "${REPS:-2}" "--device $dev --decode -b $bt -H 32 --heads-kv 8 \
-d 128 --dtype f16 -n 8192,32768,131072 --iters 20 --warmup 3" base= t1=-DTILES_OVERRIDE=1 \
        bulk=-DKV_BULK=1,-DFCL_SM90A=1 > "$r/b$bt.txt" 2>&1
      decode_table "$r/b$bt/options"
    done
    ;;
  short)
    # (wgmma-short: one work-group a compute unit against the default, each row's tiles the chooser's spelled out,
    # three interleaved rounds; a row whose lengths get different tiles is skipped, named)
    cus=$("$b/tools/flashcl" devices --json | python3 -c 'import json, sys
print(next(x["compute_units"] for x in json.load(sys.stdin) if sys.argv[1] in x["name"] + x["platform"]))' "$dev") ||
      { echo "short: no compute units for $dev"; continue; }
    i=0
    for spec in "-d 128 -n 1024,2048,4096,16384 --dtype f16" "-d 128 -n 1024,4096 --dtype bf16" \
      "-d 64 -n 1024,4096,16384 --dtype f16" "-d 128 -n 1024,4096,16384 --dtype f16 --causal" \
      "-d 64 -n 1024 --dtype f16 --causal"; do
      i=$((i + 1))
      mkdir -p "$r/s$i"
      # shellcheck disable=SC2086
      timeout 150 "$b/tools/flashcl" bench --device "$dev" $spec --iters 2 --warmup 1 --algos flash \
        --json "$r/s$i/default.json" > "$r/s$i/default.txt" 2>&1
      tiles=$(python3 -c 'import json, sys
print(len({(x["block_m"], x["block_n"], x["kv_stages"]) for x in json.load(open(sys.argv[1]))["results"] if x.get("ran")}))' \
        "$r/s$i/default.json") || tiles=0
      [ "$tiles" = 1 ] || { echo "short [$spec]: the lengths' tiles differ ($tiles), skipped"; continue; }
      c=$(persistent_cfg "$r/s$i/default.json")
      echo "[$spec] p$cus=${c/persistent=2048/persistent=$cus}"
      OUT=$r/s$i BUILD=$b RUN_LIMIT=150 bash bench/options_h200.sh 3 "--device $dev $spec --iters 10" \
        base= p$cus=cfg:${c/persistent=2048/persistent=$cus}
    done
    ;;
  e4m3c)
    # (decode-mma-37: e8t3 against this tree at batch 1 x 16384 and 65536, where the chooser's rule would draw its
    # line, and batch 2 and 4 x 32768)
    e4m3_tree 3 || { echo "e4m3c: the chooser's lines have changed"; continue; }
    for bt in 1 2 4; do
      n=32768
      [ $bt != 1 ] || n=16384,65536
      OUT=$r/b$bt REUSE=1 RUN_LIMIT=150 bash bench/variants_h200.sh 2 "--device $dev --decode -b $bt -H 32 --heads-kv 8 \
-d 128 --dtype f16 --kv-dtype fp8e4m3 -n $n --iters 20 --warmup 3" base=. e8t3=/tmp/fcl-e8t3 > /dev/null
      decode_table "$r/b$bt/variants"
    done
    ;;
  verify)
    # (the eleventh session's chooser changes on the GPU: the lists first; then the chooser's prefill against the
    # same tiles with a work-group a block, and its E4M3 steps against a copy whose rule is off, interleaved;
    # cuDNN beside at d 64 and 128)
    FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no FLASHCL_TEST_FEATURES=wgmma,wgmma_persist,decode_mma,quant timeout 300 \
      "$b/tests/test_flash" > "$r/lists.log" 2>&1
    echo "wgmma, wgmma_persist, decode_mma and quant lists: exit $? $(grep -h 'Checks:' "$r/lists.log" | tail -n 1)"
    grep -hE ":[FE]:" "$r/lists.log" | head -n 5
    i=0
    for spec in "-d 128 -n 512,1024 --dtype f16" "-d 128 -n 1024 --dtype bf16" "-d 64 -n 512,1024 --dtype f16"; do
      i=$((i + 1))
      mkdir -p "$r/p$i"
      # shellcheck disable=SC2086
      timeout 150 "$b/tools/flashcl" bench --device "$dev" $spec --iters 2 --warmup 1 --algos flash \
        --json "$r/p$i/auto.json" > "$r/p$i/auto.txt" 2>&1
      c=$(python3 -c 'import json, sys
x = [r for r in json.load(open(sys.argv[1]))["results"] if r.get("ran")]
assert all(r["persistent"] > 0 for r in x), "not persistent"
print("kernel=wgmma,block_m=%d,block_n=%d,kv_stages=%d,producer=1,persistent=0" % (x[0]["block_m"], x[0]["block_n"], x[0]["kv_stages"]))' \
        "$r/p$i/auto.json") || { echo "verify [$spec]: the chooser did not take persistent work-groups"; continue; }
      echo "[$spec] blocks=$c"
      OUT=$r/p$i BUILD=$b RUN_LIMIT=150 bash bench/options_h200.sh 3 "--device $dev $spec --iters 10" \
        chooser= blocks=cfg:$c
    done
    d=/tmp/fcl-e4m3-four
    rm -rf "$d" && mkdir -p "$d" && tar cf - --exclude=./.gpu --exclude='./build*' . | tar xf - -C "$d" &&
      sed -i 's/&& !big && decode_mma_e4m3_eight(pr, p, rows);/\&\& !big \&\& 0 \&\& decode_mma_e4m3_eight(pr, p, rows);/' \
        "$d/src/kernels/decode_mma.c" && grep -q '!big && 0 && decode_mma_e4m3_eight' "$d/src/kernels/decode_mma.c" ||
      { echo "verify: the E4M3 rule's line has changed"; continue; }
    for bt in 1 2; do
      n=12288,16384
      [ $bt = 1 ] || n=8192,16384,32768
      OUT=$r/b$bt RUN_LIMIT=150 bash bench/variants_h200.sh 2 "--device $dev --decode -b $bt -H 32 --heads-kv 8 \
-d 128 --dtype f16 --kv-dtype fp8e4m3 -n $n --iters 20 --warmup 3" chooser=. four=$d > /dev/null
      decode_table "$r/b$bt/variants"
    done
    /opt/torch/.venv/bin/python bench/anchors/sdpa_prefill.py cudnn 64,128 > "$r/sdpa_prefill.jsonl" 2>&1 &&
      python3 -c 'import json, sys
for l in open(sys.argv[1]):
    x = json.loads(l)
    if "tflops" in x:
        print("cudnn %s d=%d N=%d%s %.1f" % (x["dtype"], x["d"], x["n"], " causal" if x["causal"] else "", x["tflops"]))' \
        "$r/sdpa_prefill.jsonl"
    ;;
  snake)
    # (wgmma-snake: causal with one work-group an SM, blocks by stride and by the snake, against the default)
    timeout 150 "$b/tools/flashcl" bench --device "$dev" -d 128 -n 1024 --causal --dtype f16 --iters 2 --warmup 1 \
      --algos flash --json "$r/default.json" > "$r/default.txt" 2>&1
    c=$(persistent_cfg "$r/default.json") || { echo "snake: no default tiles"; continue; }
    c=${c/persistent=2048/persistent=132}
    OUT=$r BUILD=$b RUN_LIMIT=120 bash bench/options_h200.sh 2 \
      "--device $dev -d 128 -n 1024,4096,16384 --causal --dtype f16 --iters 10" \
      base= p132=cfg:$c snake=cfg:$c+-DWG_SNAKE=1
    ;;
  l2)
    # (wgmma-l2: why one work-group an SM loses at N=16384: the same runs with one KV head, whose K and V then stay
    # in L2, and the default with the persistent program's local memory (WG_LOCAL_PAD); the driver's registers)
    for spec in "64 f16" "128 f16 --causal"; do
      set -- $spec
      t=d$1${3:+c}
      mkdir -p "$r/$t"
      # shellcheck disable=SC2086
      timeout 150 "$b/tools/flashcl" bench --device "$dev" -d $1 -n 16384 --dtype $2 ${3:-} --iters 2 --warmup 1 \
        --algos flash --json "$r/$t/default.json" > "$r/$t/default.txt" 2>&1
      c=$(persistent_cfg "$r/$t/default.json") || { echo "l2 $t: no default tiles"; continue; }
      c=${c/persistent=2048/persistent=132}
      pad=$(( $1 == 64 ? 24576 : 32768 )) # (Q's second tile: 192 x 64 or 128 x 128 16-bit elements)
      for kv in $((2048 / $1)) 1; do
        echo "[$t, $kv KV heads]"
        OUT=$r/$t/kv$kv BUILD=$b RUN_LIMIT=120 bash bench/options_h200.sh 2 \
          "--device $dev -d $1 -n 16384 --dtype $2 ${3:-} --heads-kv $kv --iters 10" \
          base= p132=cfg:$c pad=-DWG_LOCAL_PAD=$pad
      done
      FLASHCL_CACHE_DIR=$r/$t/cache-p132 timeout 150 "$b/tools/flashcl" bench --device "$dev" -d $1 -n 16384 \
        --dtype $2 ${3:-} --iters 2 --warmup 1 --algos flash --config "$c" > /dev/null 2>&1
      mkdir -p "$r/$t/sass-p132" && OUT_DIR=$r/$t/sass-p132 timeout 120 python3 tools/nv_driver_sass.py \
        "$r/$t/cache-p132" > "$r/$t/sass-p132/log.txt" 2>&1
      echo "$t p132: $(grep -h 'flash_wgmma: [0-9]* registers' "$r/$t/sass-p132/log.txt" | head -n 1)"
    done
    ;;
  epi | epi2)
    # (wgmma-epi, wgmma-epi2: the wgmma_persist list with the producer's epilogue, 1 where the block before's end
    # comes before K(KV_STAGES)'s copies, 2 after every block's copies; then the default against it and against
    # the default without O's global stores, interleaved; causal with the snake; the registers of the new program)
    v=${stage#epi}
    v=${v:-1}
    lists_with "-DWG_EPI_PRODUCER=$v" wgmma_persist 150
    OUT=$r/plain BUILD=$b RUN_LIMIT=150 bash bench/options_h200.sh 2 "--device $dev -d 64,128 -n 512,1024 --dtype f16 \
--iters 10" base= "epi=-DWG_EPI_PRODUCER=$v" noout=-DWG_ABLATE=16
    OUT=$r/causal BUILD=$b RUN_LIMIT=120 bash bench/options_h200.sh 2 "--device $dev -d 128 -n 1024,4096 --dtype f16 \
--causal --iters 10" base= "epi=-DWG_EPI_PRODUCER=$v"
    FLASHCL_BUILD_OPTIONS=-DWG_EPI_PRODUCER=$v FLASHCL_CACHE_DIR=$r/cache-epi timeout 100 "$b/tools/flashcl" bench \
      --device "$dev" -d 128 -n 1024 --dtype f16 --iters 2 --warmup 1 --algos flash > /dev/null 2>&1
    mkdir -p "$r/sass-epi" && OUT_DIR=$r/sass-epi timeout 100 python3 tools/nv_driver_sass.py "$r/cache-epi" \
      > "$r/sass-epi/log.txt" 2>&1
    echo "epi$v: $(grep -h 'flash_wgmma: [0-9]* registers' "$r/sass-epi/log.txt" | head -n 1)"
    ;;
  obulk)
    # (wgmma-obulk: the wgmma lists with O's rows written by bulk copies, then the default against it and against
    # the default without O's global stores, interleaved; causal beside)
    lists_with -DWG_O_BULK=1 wgmma,wgmma_features,wgmma_persist 240
    OUT=$r/plain BUILD=$b RUN_LIMIT=150 bash bench/options_h200.sh 2 "--device $dev -d 64,128,256 -n 1024,4096 \
--dtype f16 --iters 10" base= obulk=-DWG_O_BULK=1 noout=-DWG_ABLATE=16
    OUT=$r/causal BUILD=$b RUN_LIMIT=120 bash bench/options_h200.sh 2 "--device $dev -d 128 -n 1024,4096 --dtype f16 \
--causal --iters 10" base= obulk=-DWG_O_BULK=1
    ;;
  idle)
    # (wgmma-idle: the wgmma lists with idle warpgroups skipping their products, then the default against it where
    # blocks end partial: d=64's 192 rows at N 512 and 1024, and the serving preset's packed sequences)
    lists_with -DWG_SKIP_IDLE=1 wgmma,wgmma_features,wgmma_persist 240
    OUT=$r/plain BUILD=$b RUN_LIMIT=120 bash bench/options_h200.sh 2 "--device $dev -d 64 -n 512,1024 --dtype f16 \
--iters 10" base= idle=-DWG_SKIP_IDLE=1
    OUT=$r/serving BUILD=$b RUN_LIMIT=150 bash bench/options_h200.sh 2 "--device $dev --preset serving --only \
varlen,varlen-paged --iters 10" base= idle=-DWG_SKIP_IDLE=1
    ;;
  order)
    # (wgmma-order: the lists first, then the default of its day (head by head: WG_ORDER=0) against the order over
    # all the heads (WG_ORDER_HEADS=0), where causal blocks differ)
    lists_with "-DWG_ORDER=1 -DWG_ORDER_HEADS=0" wgmma,wgmma_features,wgmma_persist 240
    OUT=$r/d128 BUILD=$b RUN_LIMIT=150 bash bench/options_h200.sh 2 "--device $dev -d 128 -n 1024,4096,8192,16384 \
--dtype f16 --causal --iters 10" base=-DWG_ORDER=0 order=-DWG_ORDER=1,-DWG_ORDER_HEADS=0
    OUT=$r/d64 BUILD=$b RUN_LIMIT=150 bash bench/options_h200.sh 2 "--device $dev -d 64 -n 1024,4096,16384 \
--dtype f16 --causal --iters 10" base=-DWG_ORDER=0 order=-DWG_ORDER=1,-DWG_ORDER_HEADS=0
    OUT=$r/serving BUILD=$b RUN_LIMIT=150 bash bench/options_h200.sh 2 "--device $dev --preset serving --only \
varlen,varlen-paged --iters 10" base=-DWG_ORDER=0 order=-DWG_ORDER=1,-DWG_ORDER_HEADS=0
    ;;
  order2)
    # (wgmma-order2: the grid with causal blocks in the row-block order within groups of (batch, head)s, against the
    # grid of its day, head by head: WG_ORDER=0 since the grouping became its default)
    lists_with "-DWG_ORDER=1 -DWG_ORDER_HEADS=3" wgmma,wgmma_persist 240
    grid=kernel=wgmma,block_m=128,block_n=128,kv_stages=2,producer=1
    for n in 1024 4096 8192; do
      g=$((16384 / n))
      if [ $n = 8192 ]; then v=(base=-DWG_ORDER=0); else v=(base= grid=cfg:$grid+-DWG_ORDER=0); fi
      o=cfg:$grid+-DWG_ORDER=1,-DWG_ORDER_HEADS
      OUT=$r/n$n BUILD=$b RUN_LIMIT=120 bash bench/options_h200.sh 2 "--device $dev -d 128 -n $n --dtype f16 --causal \
--iters 10" "${v[@]}" "g$g=$o=$g" "g$((2 * g))=$o=$((2 * g))"
    done
    ;;
  d256)
    # (wgmma-d256: the ablations' results are wrong by design, only their time is read; lazy is validated; the
    # default of its day rescaled O at every tile, WG_LAZY_RESCALE=0 since lazy became d=256's default)
    e=-DWG_LAZY_RESCALE=0
    OUT=$r BUILD=$b RUN_LIMIT=150 bash bench/options_h200.sh "${REPS:-2}" "--device $dev -d 256 -n 1024,16384 \
--dtype f16 --iters 10" base=$e exp=$e,-DWG_ABLATE=2 resc=$e,-DWG_ABLATE=128 \
      mma=$e,-DWG_ABLATE=12 copies=$e,-DWG_ABLATE=14 lazy=-DWG_LAZY_RESCALE=1
    ;;
  defaults)
    # (wgmma-defaults: this tree's defaults against the options that restore the last ones: the causal grid head by
    # head (WG_ORDER=0), the persistent program to 4096 keys, d=256's O rescaled at every tile (WG_LAZY_RESCALE=0);
    # where the defaults stop (d=64's and d=256's causal grids, d=192), the options that would extend them; the
    # lists on the defaults are the suites' flash shards)
    grid=kernel=wgmma,block_m=128,block_n=128,kv_stages=2,producer=1
    bo() { local o=$1 a=$2; shift 2; OUT=$r/$o BUILD=$b RUN_LIMIT=120 bash bench/options_h200.sh 2 \
      "--device $dev $a --iters 10" "$@"; }
    bo d128 "-d 128 -n 2048,4096,8192 --dtype f16 --causal" base= heads=cfg:$grid+-DWG_ORDER=0 grid=cfg:$grid \
      p132=cfg:$grid,persistent=132
    bo bf16 "-d 128 -n 4096,8192 --dtype bf16 --causal" base= heads=cfg:$grid+-DWG_ORDER=0 p132=cfg:$grid,persistent=132
    bo gqa "-d 128 -n 8192 --heads-kv 4 --dtype f16 --causal" base= heads=-DWG_ORDER=0
    bo d64 "-d 64 -n 4096,16384 --dtype f16 --causal" base= order=-DWG_ORDER=1
    bo d256 "-d 256 -n 1024,16384 --dtype f16" base= eager=-DWG_LAZY_RESCALE=0
    bo d192 "-d 192 -n 1024,16384 --dtype f16" base= lazy=-DWG_LAZY_RESCALE=1
    bo d256c "-d 256 -n 4096,16384 --dtype f16 --causal" base= eager=-DWG_LAZY_RESCALE=0 order=-DWG_ORDER=1
    ;;
  wide80)
    # (wgmma-80: the wgmma list, whose override entries have 80-key tiles, then the chooser's 64-key tiles against 80)
    lists_with "" wgmma 240
    k80=cfg:kernel=wgmma,block_m=128,block_n=80,kv_stages=2,producer=1
    OUT=$r/d256 BUILD=$b RUN_LIMIT=120 bash bench/options_h200.sh 2 "--device $dev -d 192,256 -n 1024,4096,16384 \
--dtype f16 --iters 10" base= k80=$k80
    OUT=$r/d256c BUILD=$b RUN_LIMIT=120 bash bench/options_h200.sh 2 "--device $dev -d 256 -n 4096,16384 --dtype f16 \
--causal --iters 10" base= k80=$k80
    ;;
  feat)
    # (wgmma-feat: one work-group an SM against the default at N=1024 with each feature the chooser leaves out of
    # it, the wgmma_persist list (which has them) first)
    FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no FLASHCL_TEST_FEATURES=wgmma_persist timeout 150 "$b/tests/test_flash" \
      > "$r/persist.log" 2>&1
    echo "wgmma_persist list: exit $? $(grep -h 'Checks:' "$r/persist.log" | tail -n 1)"
    grep -hE ":[FE]:" "$r/persist.log" | head -n 5
    timeout 150 "$b/tools/flashcl" bench --device "$dev" -d 128 -n 1024 --dtype f16 --iters 2 --warmup 1 \
      --algos flash --json "$r/default.json" > "$r/default.txt" 2>&1
    c=$(persistent_cfg "$r/default.json") || { echo "feat: no default tiles"; continue; }
    c=${c/persistent=2048/persistent=132}
    for f in "--softcap 50" "--alibi" "--sinks 0.5" "--paged 16" "--window 256,0"; do
      t=$(echo "$f" | tr -dc 'a-z0-9')
      echo "[$f]"
      OUT=$r/$t BUILD=$b RUN_LIMIT=120 bash bench/options_h200.sh 2 \
        "--device $dev -d 128 -n 1024 --dtype f16 $f --iters 10" base= p132=cfg:$c
    done
    ;;
  *) echo "pending_h200.sh: no stage '$stage'"; continue ;;
  esac
  tar czf "$out/$stage.tgz" -C "$out" "$stage" && rm -rf "$r"
  echo "$stage: $((SECONDS - s0)) s"
done
