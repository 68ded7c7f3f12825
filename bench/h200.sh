#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/h200.sh: runs again, on an NVIDIA H200, every measurement BENCHMARKS.md is built from, with
# PyTorch's SDPA beside flashcl in the same run, writes the JSON files into bench/ and regenerates
# BENCHMARKS.md (bench/pocl.sh does the same for the CPU section). From the repository root:
#
#   bench/h200.sh [BUILD_DIR]        (default build-bench: a release build, made if missing)
#
# PYTHON names a Python with PyTorch and CUDA (default: python3); without torch the PyTorch files are
# left as they are and the script says so. FLASHCL_DEVICE picks the OpenCL device (default: NVIDIA). The
# flash_wgmma section needs a device whose sm_90a probe passes (`flashcl devices` says so: Hopper).
# About 15 minutes run one after another, most of it the driver compiling flashcl's programs the first
# time; so every flashcl bench of the chosen sections first runs once, PREWARM (default 8) side by side,
# with one timed run each and its output thrown away, to fill the program cache (0: no such pass), and the
# measured pass then runs them one at a time as before. ONLY="decode-mma ..." runs those sections alone
# (wgmma, serving, prefill, tf32, fp8, dimv, decode-mma, decode-kernel, f32), the others' files left as
# they are.
set -u
cd "$(dirname "$0")/.."
B=${1:-build-bench}
PY=${PYTHON:-python3}
export FLASHCL_DEVICE=${FLASHCL_DEVICE:-NVIDIA}
[ -d "$B" ] || meson setup "$B" -Dbuildtype=release >/dev/null || exit 1
ninja -C "$B" >/dev/null || { echo "build failed: ninja -C $B"; exit 1; }
F="$B/tools/flashcl"
fail=0
ONLY=${ONLY:-}
want() { [ -z "$ONLY" ] || case " $ONLY " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

WARMING= PREWARM=${PREWARM:-8}
declare -A warmed=()
bench() { # file, arguments...: one flashcl bench run into bench/<file> (flash alone unless --algos says)
    local out=bench/$1
    shift
    case " $* " in *" --algos "*) ;; *) set -- --algos flash "$@" ;; esac
    if [ -n "$WARMING" ]; then # (the compiling pass: each distinct run once, PREWARM at a time)
        [ -z "${warmed["$*"]:-}" ] || return 0
        warmed["$*"]=1
        while [ "$(jobs -rp | wc -l)" -ge "$PREWARM" ]; do wait -n; done
        "$F" bench "$@" --iters 1 --warmup 0 --json "$WARMING/${#warmed[@]}.json" >/dev/null 2>&1 &
        return 0
    fi
    echo "== $out"
    "$F" bench "$@" --json "$out" >/dev/null || { echo "   failed (rc $?): flashcl bench $*"; fail=1; }
}
torch() { # file, script, arguments...: a PyTorch anchor into bench/<file>, replaced only when it ran
    [ -z "$WARMING" ] || return 0
    local out=bench/$1 script=bench/anchors/$2
    shift 2
    echo "== $out (PyTorch)"
    if ! "$PY" -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
        echo "   no PyTorch with CUDA in $PY: $out left as it was"; return
    fi
    "$PY" "$script" "$@" > "$out.new" && mv "$out.new" "$out" || { rm -f "$out.new"; echo "   failed: $script"; fail=1; }
}

sections() {
# Hopper's warpgroup kernel as auto takes it, fp16/bf16 at d = 64, 128, 256 (B·N = 16384, hidden 2048).
want wgmma && for cfg in "128 f16" "128 bf16" "64 f16" "256 f16" "128 f16 --causal"; do
    set -- $cfg
    bench wgmma/h200_wgmma_$1_$2${3:+_causal}.json --iters 10 -d $1 --dtype $2 ${3:-} -n 1024,4096,16384
done
want wgmma && torch wgmma/h200_sdpa.jsonl sdpa_prefill.py flash,cudnn 128,64,256

# What serving engines send: plain, each feature, other head dims, chunked prefill (bench/serving_h200.sh's
# runs), beside FlexAttention and SDPA.
want serving && bench serving/h200_serving.json --preset serving --iters 10 --warmup 3
want serving && torch serving/h200_flex_serving.jsonl flex_serving.py

# flash_mma (forced: auto takes flash_wgmma for these on Hopper) and the portable kernel on fp32.
want prefill && {
bench prefill/h200_f16_d128.json --path mma --iters 10 -d 128 --dtype f16 -n 1024,4096,16384 --both
bench prefill/h200_bf16_d128.json --path mma --iters 10 -d 128 --dtype bf16 -n 1024,4096,16384 --both
bench prefill/h200_f16_d64.json --path mma --iters 10 -d 64 --dtype f16 -n 4096,16384 --both
bench prefill/h200_bf16_d64.json --path mma --iters 10 -d 64 --dtype bf16 -n 4096,16384
bench prefill/h200_f16_d256.json --path mma --iters 10 -d 256 --dtype f16 -n 4096,16384 --both
bench prefill/h200_bf16_d256.json --path mma --iters 10 -d 256 --dtype bf16 -n 4096,16384
bench prefill/h200_f32_d128.json --iters 10 -d 128 --dtype f32 -n 4096,16384 --both
bench prefill/h200_f32_d64.json --iters 10 -d 64 --dtype f32 -n 4096,16384
torch prefill/h200_sdpa.jsonl sdpa_prefill.py
}

# fp32 on flash_mma's TF32 products (tf32x3, tf32) and the portable kernel (bench/prefill/tf32_h200.sh's runs),
# beside PyTorch's fp32 memory-efficient kernel; the errors against float64: bench/prefill/tf32_accuracy.py.
want tf32 && for d in 128 64; do
    for prec in tf32x3 tf32 fp32; do
        bench prefill/tf32/h200_d${d}_$prec.json -b 4 -n 4096 -H $((2048 / d)) -d $d --dtype f32 --iters 10 --precision $prec
    done
done
want tf32 && torch prefill/tf32/h200_sdpa.jsonl sdpa_prefill.py efficient 128,64

# V's own head dim: MLA's 192 over 128, beside V at 192.
want dimv && {
bench dimv/h200_dimv.json --iters 10 -d 192 --dim-v 128 -H 16 --dtype f16 -n 4096 --both
bench dimv/h200_d192.json --iters 10 -d 192 -H 16 --dtype f16 -n 4096 --both
torch dimv/h200_sdpa_dimv.jsonl sdpa_dimv.py
}

# fp8 attention on flash_wgmma's fp8 products against its fp16, alternating rounds (bench/prefill/fp8_h200.sh
# does the same with the device lists first).
want fp8 && mkdir -p bench/prefill/fp8 && for r in 1 2; do
  for v in f16 fp8; do
    x=""
    [ $v = fp8 ] && x="--fp8 e4m3 --descale head"
    # shellcheck disable=SC2086
    bench prefill/fp8/$v-full-$r.json --iters 10 --dtype f16 -d 64,128,256 -n 1024,4096,16384 $x
    # shellcheck disable=SC2086
    bench prefill/fp8/$v-causal-$r.json --iters 10 --dtype f16 -d 128 -n 1024,4096,16384 --causal $x
  done
done
want fp8 && torch prefill/fp8/sdpa.jsonl sdpa_prefill.py cudnn,flash 64,128,256

# Decode steps on the matrix units (auto): contiguous, quantized and paged caches.
D="--decode -H 32 --heads-kv 8 -d 128 --dtype f16 --iters 20 --warmup 3 -n 8192,32768,131072"
want decode-mma && for b in 8 1; do
    bench decode-mma/h200_b${b}_auto.json $D -b $b
    bench decode-mma/h200_b${b}_int8.json $D -b $b --kv-dtype int8
    bench decode-mma/h200_b${b}_int8f16.json $D -b $b --kv-dtype int8-f16
    bench decode-mma/h200_b${b}_fp8e5m2.json $D -b $b --kv-dtype fp8e5m2
    bench decode-mma/h200_b${b}_fp8e4m3.json $D -b $b --kv-dtype fp8e4m3
    bench decode-mma/h200_b${b}_paged256.json $D -b $b --paged 256
    bench decode-mma/h200_b${b}_paged16.json $D -b $b --paged 16
done
want decode-mma && torch decode-mma/h200_sdpa.jsonl sdpa_decode.py 8192,32768,131072 flash,cudnn

# The CUDA-core decode kernel against the portable kernel's decode path (both forced).
want decode-kernel && for b in 8 1; do
    bench decode-kernel/h200_b${b}_decode.json $D -b $b --path decode
    bench decode-kernel/h200_b${b}_portable.json $D -b $b --path portable
done

# The portable kernel on fp32 against standard attention (CLBlast), and the other head dims.
want f32 && bench h200_fa2_f32.json --preset fa2 --algos flash,standard --iters 5
want f32 && bench h200_dims_f32.json -n 1024,4096 -d 80,96,128,256 --both --iters 5
}

if [ "$PREWARM" -gt 0 ]; then
    WARMING=$(mktemp -d)
    t0=$SECONDS
    sections
    wait
    echo "== the programs compiled, ${#warmed[@]} runs $PREWARM side by side, in $((SECONDS - t0)) s"
    rm -rf "$WARMING"
    WARMING=
fi
sections

python3 tools/benchmarks_md.py bench > BENCHMARKS.md || fail=1
echo "BENCHMARKS.md regenerated$([ $fail = 0 ] || echo ', with failures above')"
exit $fail
