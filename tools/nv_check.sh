#!/bin/sh
# SPDX-License-Identifier: MIT
# nv_check.sh: the programs flashcl would build on a Hopper GPU, read by clang's OpenCL front end without
# the GPU. tools/vendor_programs writes them (class nvidia-hopper: the chooser on a fake H200 profile whose
# sm_90a probe passed, each program exactly as a plan builds it: parts and options); their GPU branches
# (FCL_PTX, FCL_SM90A), which the emulated programs PoCL and rusticl run never compile, go through clang's
# front end for the nvptx64-nvidia-nvcl target (tools/nvcl_prelude.h for the built-ins it leaves
# unresolved) with every warning an error (NVIDIA's compiler printed "1 warning generated" for a macro
# redefinition and, later, a constant operand of &&, and no test read it), and each flash program's required
# work-group size, from its LLVM IR, is checked against the one its plan launches (568d126 redefined
# flash_wgmma's: its work-groups without the producer failed their launch on the GPU, which no CPU test saw).
#
# Usage, from the repository root after a build: tools/nv_check.sh [BUILD_DIR] (default build). Exit 1 when
# a program does not compile or a required size differs, 77 without clang.
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${1:-build}
CLANG=${NV_CLANG:-$(command -v clang || command -v clang-15 || echo clang)}
command -v "$CLANG" >/dev/null 2>&1 || { echo "nv_check: no clang: skipped"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$BUILD/tools/vendor_programs" "$T" nvidia-hopper > "$T/index.tsv" || { echo "nv_check: vendor_programs failed"; exit 1; }
bad=0 n=0
tab=$(printf '\t')
while IFS="$tab" read -r class name entry local opts wg; do
    n=$((n + 1))
    # shellcheck disable=SC2086
    if ! cat tools/nvcl_prelude.h "$T/$name.cl" > "$T/k.cl" ||
        ! "$CLANG" -x cl $opts -target nvptx64-nvidia-nvcl -Xclang -finclude-default-header -DNVCL_FRONT_END=1 -Werror \
            -S -emit-llvm -O0 -o "$T/k.ll" "$T/k.cl" > "$T/log" 2>&1; then
        echo "FAIL ${name#"$class"__}: does not compile ($opts)"
        grep -m 3 "error" "$T/log"
        bad=1
        continue
    fi
    case $wg in
    '' | *[!0-9]*) echo "FAIL ${name#"$class"__}: no work-group size in vendor_programs' line"; bad=1; continue ;;
    0) echo "ok   ${name#"$class"__}"; continue ;;
    esac
    # (the entry's !reqd_work_group_size !N, then !N = !{i32 X, i32 1, i32 1})
    md=$(sed -n "s/^define .*@$entry(.*!reqd_work_group_size \(![0-9]*\).*/\1/p" "$T/k.ll")
    req=
    [ -n "$md" ] && req=$(sed -n "s/^$md = !{i32 \([0-9]*\), .*/\1/p" "$T/k.ll")
    if [ -z "$req" ]; then # (every flash kernel requires one: the IR's form not read is a failure, not a pass)
        echo "FAIL ${name#"$class"__}: no required work-group size found in the LLVM IR (launches $wg)"
        bad=1
    elif [ "$req" = "$wg" ]; then
        echo "ok   ${name#"$class"__}: requires and launches $wg"
    else
        echo "FAIL ${name#"$class"__}: requires $req work-items a work-group, its plan launches $wg ($opts)"
        bad=1
    fi
done < "$T/index.tsv"
[ "$n" -gt 0 ] || { echo "nv_check: vendor_programs wrote no program"; bad=1; }
echo "nv_check: $n programs, $([ $bad = 0 ] && echo "all compile and match" || echo "FAILED")"
exit $bad
