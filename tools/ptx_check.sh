#!/bin/sh
# SPDX-License-Identifier: MIT
# Assembles a matrix-unit kernel (cl/flash_mma.cl, or $KERNEL: flash_decode_mma, flash_wgmma) for an NVIDIA GPU
# without one: clang emits PTX for OpenCL C, CUDA's ptxas assembles it and prints registers, spills and
# local memory. clang's code generation is not NVIDIA's OpenCL compiler's (register counts differ), but
# the inline PTX is checked by the same assembler.
# Usage: [KERNEL=name] [SASS=out.sass] tools/ptx_check.sh [head_dim [dtype_define [extra -D options]]], e.g.
#   tools/ptx_check.sh 128 FLASHCL_DTYPE_F16 -DKV_STAGES=2
#   KERNEL=flash_decode_mma tools/ptx_check.sh 128 FLASHCL_DTYPE_F16 -DROWS=8 -DTILES=1
#   KERNEL=flash_wgmma tools/ptx_check.sh 128 FLASHCL_DTYPE_F16 -DFCL_SM90A=1
#   KERNEL=flash_decode_mma tools/ptx_check.sh 128 FLASHCL_DTYPE_F16 -DROWS=8 -UWARPS -DWARPS=8 -DKV_BULK=1 -DFCL_SM90A=1
set -e
cd "$(dirname "$0")/.."
d=${1:-128}
t=${2:-FLASHCL_DTYPE_BF16}
[ $# -gt 2 ] && shift 2 || set --
ptxas=${PTXAS:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}
tmp=$(mktemp -d)
trap '[ -n "$KEEP" ] || rm -rf "$tmp"' EXIT
cp tools/nvcl_prelude.h "$tmp/prelude.cl" # (OpenCL built-ins the nvcl target leaves unresolved)
kernel=${KERNEL:-flash_mma}
case $kernel in
flash_mma) shape="-DBLOCK_N=64 -DWARPS=4" ;;
flash_decode_mma) shape="-DWARPS=4" ;; # ROWS and TILES: defaults below unless given
flash_wgmma) shape="-DBLOCK_N=128 -DWARPGROUPS=2" ;; # (BLOCK_N=64 for d=256: pass -UBLOCK_N -DBLOCK_N=64)
*) echo "KERNEL: flash_mma, flash_decode_mma or flash_wgmma" >&2; exit 2 ;;
esac
# The program's parts, in src/kernels.c's order for the kernel (its DEF may span two lines).
parts=$(tr -d '\n' < src/kernels.c | sed -n 's/.*DEF("'"$kernel"'", *FLASH_PARTS "\([a-z_. ]*\)".*/\1/p')
flash_parts=$(sed -n 's/^#define FLASH_PARTS "\(.*\) "$/\1/p' src/kernels.c)
# (the shape the host would pass, src/kernels/mma.c and wgmma.c, where the command line does not)
swizzle='(HEAD_DIM == 64 && Q_LOCAL)'
[ "$kernel" = flash_wgmma ] && swizzle=$([ "$d" -ge 80 ] && echo 1 || echo 0)
(cat "$tmp/prelude.cl"
 for kv in "ROWS 4" "TILES 2" "MT 1" "KV_STAGES 1" "Q_LOCAL (MT > 1 || HEAD_DIM > 128)" "O_ALIGNED 0" "O_STAGED 0" \
           "WG_PRODUCER 0" "SWIZZLE $swizzle"; do
   printf '#ifndef %s\n#define %s\n#endif\n' "${kv%% *}" "$kv"
 done
 for f in $flash_parts $parts; do # (wgmma.cl: generated, as the build does)
   if [ "$f" = wgmma.cl ]; then python3 tools/gen_wgmma_cl.py; else cat "cl/$f"; fi
 done) > "$tmp/k.cl"
clang -x cl -cl-std=CL1.2 -target nvptx64-nvidia-nvcl -Xclang -finclude-default-header -O3 -S \
  -D"$t" -DHEAD_DIM="$d" $shape -DFCL_PTX=1 -DFAST_EXP2=1 -DROWS_ALIGNED=1 "$@" -o "$tmp/k.ptx" "$tmp/k.cl" \
  2>&1 | grep -v "warning:" | grep -E "error" || true
# flash_wgmma, and any program given -DFCL_SM90A=1 (flash_decode_mma's KV_BULK): finished for sm_90a as
# src/program.c does (the marks removed, the target)
arch=sm_90
sm90a=0
case " $* " in *" -DFCL_SM90A=1 "*) sm90a=1 ;; esac
if [ "$kernel" = flash_wgmma ] || [ $sm90a = 1 ]; then
  arch=sm_90a; sed -i 's#//SM90A ##g' "$tmp/k.ptx"
  # (a thread-count mark: the entry's .reqntid, which clang does not write)
  n=$(sed -n 's#.*//SM90A-THREADS \([0-9]*\).*#\1#p' "$tmp/k.ptx" | head -1)
  [ -z "$n" ] || sed -i '0,/^)$/s//)\n.reqntid '"$n"', 1, 1\n.minnctapersm 1/' "$tmp/k.ptx"
fi
sed -i 's/^\.version .*/.version 8.0/; s/^\.target .*/.target '"$arch"'/' "$tmp/k.ptx"
"$ptxas" -arch=$arch -v "$tmp/k.ptx" -o "$tmp/k.cubin" 2>&1 | grep -E "error|fatal|Used|spill|C75" || true
# SASS=file: also the assembled kernel's instructions (nvdisasm from $NVDISASM or the PATH), e.g. to
# count what the main loop issues.
if [ -n "$SASS" ]; then "${NVDISASM:-nvdisasm}" -c "$tmp/k.cubin" > "$SASS"; fi
