#!/bin/sh
# amd_quantized_check.sh: flash_decode's quantized-KV variants through clang 15's amdgcn backend with
# ROCm's device libraries (Debian: clang-15, rocm-device-libs), the way amd-flash_decode.txt was made:
# -target amdgcn-amd-amdhsa -O3, -Rpass-analysis=kernel-resource-usage. Run from the repository root:
#   sh docs/vendor-checks/amd_quantized_check.sh      (results: amd-flash_decode-quantized.txt)
# Each shape is compiled as the library builds it (flash_decode_options: KV_CACHE=1 and KV_FORMAT, no
# SPLIT_KV) and also with -DSPLIT_KV=1, the switch amd-flash_decode.txt's lines were compiled with.
set -eu
CLANG=${CLANG:-/usr/lib/llvm-15/bin/clang}
LIBS=${LIBS:-/usr/lib/x86_64-linux-gnu/amdgcn/bitcode}
W=${AMD_TMP:-/tmp/amd}
mkdir -p "$W"
(cd cl && cat common.cl geometry.cl scores.cl softmax.cl decode.cl flash_decode.cl) >"$W/fd.cl"
"$CLANG" --version | head -1
dpkg-query -W rocm-device-libs 2>/dev/null || true
BASE="-DFLASHCL_DTYPE_F16 -DHEAD_DIM=128 -DROWS=4 -DTEAM=16 -DKT=4 -DWG=128 -DFCL_PTX=0 -DKV_CACHE=1"
for cpu in gfx90a gfx1030; do
    for split in "" " -DSPLIT_KV=1"; do
        for v in "a:" "b: -DKV_FORMAT=1" "d: -DKV_FORMAT=2" "e: -DKV_FORMAT=3"; do
            tag=${v%%:*} extra=${v#*:}
            opts="$BASE$extra$split"
            r=$("$CLANG" -x cl -cl-std=CL1.2 -target amdgcn-amd-amdhsa -mcpu=$cpu -O3 --rocm-device-lib-path="$LIBS" \
                -Rpass-analysis=kernel-resource-usage $opts -c "$W/fd.cl" -o "$W/fd_${cpu}_$tag.o" 2>&1 |
                sed -n 's/.*remark: *\(.*\) \[-Rpass-analysis.*/\1/p' | grep -v '^Function Name' | tr '\n' ';')
            echo "$cpu ($tag) $opts: $r"
        done
    done
done
