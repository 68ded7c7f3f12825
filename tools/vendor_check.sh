#!/bin/sh
# SPDX-License-Identifier: MIT
# vendor_check.sh: the programs flashcl would build for AMD and Intel GPUs, through the vendors' own
# offline compilers, without the hardware. tools/vendor_programs asks the library's chooser, on fake
# profiles of those GPUs (what their drivers report), for the configuration of each representative
# problem and writes exactly the program a plan would build (parts and options from src/kernels.c);
# this script compiles each for its targets and prints, per program and target: registers (AMD VGPRs,
# Intel SIMD width and GRFs), spills, scratch and private memory, local memory against flashcl's formula.
#
#   AMD:   clang's amdgcn backend with ROCm's device libraries (Debian: clang-15, rocm-device-libs):
#          amd-cdna -> gfx90a and gfx940 (MI300's ISA: gfx942's MFMA instructions, with ROCm's own device
#          libraries, as ROCm's OpenCL compiles for MI300), amd-rdna2 -> gfx1030
#          (-Rpass-analysis=kernel-resource-usage); and for the
#          targets LLVM 15 lacks, Debian's clang 19 with libclc's per-target bitcode (Mesa's OpenCL
#          route, triple amdgcn-mesa-mesa3d), fetched with `apt-get download` and unpacked into
#          $VENDOR_TMP/llvm19, never installed (installing libclc-19 on Debian 12 removes
#          mesa-opencl-icd, which the rusticl suites need): amd-cdna -> gfx942, amd-rdna (RDNA3/4, whose
#          16-bit prefill builds flash_wmma) -> gfx1100, gfx1200.
#   Intel: ocloc and IGC from Debian's intel-opencl-icd, fetched with `apt-get download` and unpacked
#          into $VENDOR_TMP/intel: nothing is installed, Intel's ICD is not registered (its runtime is
#          what AddressSanitizer cannot load): intel-xe -> tgllp; intel-hpg (whose 16-bit prefill builds
#          flash_dpas) -> acm-g10; intel-pvc -> pvc (patch tokens
#          decoded by `ocloc disasm`: LargestCompiledSIMDSize, PerThreadScratchSpace,
#          PerThreadPrivateMemorySize, TotalInlineLocalMemorySize).
#
# AMD's "spills V+S" are VGPR spills (to scratch memory: a failure) and SGPR spills (into VGPR lanes,
# no memory: reported only; clang 19 for gfx942 spills 52 SGPRs in the prefill kernel with every
# inference option on, whose 312 bytes of arguments it keeps in scalar registers).
#
# Usage, from the repository root after a build: tools/vendor_check.sh [--report-only] [BUILD_DIR]
# (BUILD_DIR default build; VENDOR_CLASSES="intel-xe ..." for some target classes only). Exit status 1 when a program does not build, or when any program spills,
# uses scratch or keeps private memory, or its local memory differs from the formula (unless
# --report-only); 77 when no vendor compiler could be found or fetched.
set -u
REPORT_ONLY=0
[ "${1:-}" = --report-only ] && { REPORT_ONLY=1; shift; }
BUILD=${1:-build}
T=${VENDOR_TMP:-/tmp/flashcl-vendor}
CLANG=${AMD_CLANG:-/usr/lib/llvm-15/bin/clang}
LIBS=${AMD_DEVICE_LIBS:-/usr/lib/x86_64-linux-gnu/amdgcn/bitcode}
mkdir -p "$T/programs"
rm -f "$T/programs"/*.cl
# shellcheck disable=SC2086
"$BUILD/tools/vendor_programs" "$T/programs" ${VENDOR_CLASSES:-} > "$T/index.tsv" || { echo "vendor_programs failed"; exit 1; }

have_amd=0
if [ -x "$CLANG" ] && [ -d "$LIBS" ]; then
    have_amd=1
    echo "AMD: $("$CLANG" --version | head -1); device libraries $(dpkg-query -W -f='${Version}' rocm-device-libs 2>/dev/null || echo "$LIBS")"
else
    echo "AMD: no $CLANG with $LIBS (Debian: clang-15 rocm-device-libs): skipped"
fi
have_amd19=0
L19="$T/llvm19/root"
CLANG19="$L19/usr/lib/llvm-19/bin/clang"
if [ ! -x "$CLANG19" ]; then
    mkdir -p "$T/llvm19"
    (cd "$T/llvm19" && apt-get download -q clang-19 libclang-cpp19 libllvm19 libclang-common-19-dev libclc-19 \
        libclc-19-dev llvm-19-linker-tools libclang1-19 >/dev/null 2>&1) &&
        for f in "$T/llvm19"/*.deb; do dpkg -x "$f" "$L19"; done
fi
clang19() { LD_LIBRARY_PATH="$L19/usr/lib/x86_64-linux-gnu:$L19/usr/lib/llvm-19/lib" "$CLANG19" "$@"; }
if [ -x "$CLANG19" ] && clang19 --version >/dev/null 2>&1; then
    have_amd19=1
    echo "AMD (LLVM 19 targets): $(clang19 --version | head -1); libclc $(dpkg-deb -f "$T/llvm19"/libclc-19_*.deb Version 2>/dev/null)"
else
    echo "AMD (LLVM 19 targets): clang-19 and libclc-19 could not be fetched (apt-get download): skipped"
fi
have_intel=0
OCLOC="$T/intel/root/usr/bin/ocloc"
if [ ! -x "$OCLOC" ]; then
    mkdir -p "$T/intel"
    (cd "$T/intel" && apt-get download -q intel-opencl-icd libigc1 libigdfcl1 libigdgmm12 libopencl-clang14 \
        libllvmspirvlib14 libllvm14 libigdfcl-dev >/dev/null 2>&1) &&
        for f in "$T/intel"/*.deb; do dpkg -x "$f" "$T/intel/root"; done
fi
if [ -x "$OCLOC" ]; then
    have_intel=1
    echo "Intel: ocloc $(dpkg-deb -f "$T/intel"/intel-opencl-icd_*.deb Version 2>/dev/null), IGC $(dpkg-deb -f "$T/intel"/libigc1_*.deb Version 2>/dev/null)"
else
    echo "Intel: ocloc could not be fetched (apt-get download intel-opencl-icd ...): skipped"
fi
# Xe2 (bmg-g21: the Arc B580), which ocloc 22.43 does not know: Debian unstable's ocloc and IGC 2.x, which
# need a newer C library than Debian 12's, unpacked with unstable's libc6, libstdc++6, libgcc-s1 and
# zlib1g into $VENDOR_TMP/xe2 and run under that C library's loader, never installed. Optional: where the
# index or a package cannot be fetched the target is skipped (the package names resolve through the index,
# so a new version in unstable needs no change here).
have_xe2=0
xe2_igc=
X2="$T/xe2/root"
X2L="$X2/usr/lib/x86_64-linux-gnu"
if ! ls "$X2"/usr/bin/ocloc-* >/dev/null 2>&1; then
    mkdir -p "$T/xe2" && python3 - "$T/xe2" >/dev/null 2>&1 <<'PY' && for f in "$T/xe2"/*.deb; do dpkg -x "$f" "$X2"; done
import lzma, os, sys, urllib.request
mirror = "http://deb.debian.org/debian/"
index = lzma.decompress(urllib.request.urlopen(mirror + "dists/sid/main/binary-amd64/Packages.xz", timeout=120).read())
files = {}
for stanza in index.decode("utf-8", "replace").split("\n\n"):
    fields = dict(line.split(": ", 1) for line in stanza.splitlines() if ": " in line and not line.startswith(" "))
    if fields.get("Architecture") in ("amd64", "all"):
        files[fields.get("Package")] = fields.get("Filename")
for pkg in ("intel-ocloc", "libigc2", "libigdfcl2", "libigdgmm12", "libc6", "libstdc++6", "libgcc-s1", "zlib1g"):
    path = os.path.join(sys.argv[1], os.path.basename(files[pkg]))
    with open(path, "wb") as f:
        f.write(urllib.request.urlopen(mirror + files[pkg], timeout=300).read())
PY
fi
OCLOC2=$(ls "$X2"/usr/bin/ocloc-* 2>/dev/null | head -1)
ocloc2() { "$X2L/ld-linux-x86-64.so.2" --library-path "$X2L" "$OCLOC2" "$@"; }
# (unstable moves on: the verdicts fail the check only with the IGC the tree was last checked against; with
# another they are reported, marked, so that a new compiler's choices do not turn CI red by themselves)
XE2_CHECKED_IGC=2.40.14-1
if [ -n "$OCLOC2" ] && ocloc2 compile --help >/dev/null 2>&1; then
    have_xe2=1
    xe2_igc=$(dpkg-deb -f "$T/xe2"/libigc2_*.deb Version 2>/dev/null)
    echo "Intel Xe2: ocloc $(dpkg-deb -f "$T/xe2"/intel-ocloc_*.deb Version 2>/dev/null), IGC $xe2_igc (Debian unstable, under its own C library)$([ "$xe2_igc" = "$XE2_CHECKED_IGC" ] || echo "; not IGC $XE2_CHECKED_IGC: its verdicts reported, not failed")"
else
    echo "Intel Xe2: Debian unstable's ocloc could not be fetched or run: bmg-g21 skipped"
fi
[ $have_amd = 0 ] && [ $have_amd19 = 0 ] && [ $have_intel = 0 ] && exit 77
PATCHDIR="$T/intel/root/usr/include/igc/ocl_igc_shared/executable_format"
IGA="$T/intel/iga" # (ocloc disasm loads libiga64.so, which the package ships as .so.1 only: the assembly)
if [ $have_intel = 1 ]; then
    mkdir -p "$IGA" && ln -sf "$T/intel/root/usr/lib/x86_64-linux-gnu/libiga64.so.1" "$IGA/libiga64.so"
fi

bad=0
printf '%-9s %-8s %-52s %-14s %s\n' class target program kernel "result"
: > "$T/report.txt"
# check_programs PART PARTS: the index lines whose number is PART modulo PARTS, each report line prefixed by its
# index line's number and a tab (the parts run side by side, one a core, and are merged back in index order).
# One line of index.tsv: class, program name, entry, formula's local bytes, options, the launched work-group.
check_programs() {
    local part=$1 parts=$2 n=0
    while IFS="$(printf '\t')" read -r class name entry local opts _wg; do
        n=$((n + 1))
        [ $((n % parts)) = "$part" ] || continue
        src="$T/programs/$name.cl"
        short=${name#"$class"__}
        case $class in
        amd-cdna) targets="amd:gfx90a amd:gfx940 amd19:gfx942" ;;
        amd-rdna2) targets="amd:gfx1030" ;;
        amd-rdna) targets="amd19:gfx1100 amd19:gfx1200" ;;
        intel-xe) targets="intel:tgllp" ;;
        intel-hpg) targets="intel:acm-g10" ;;
        intel-pvc) targets="intel:pvc intel2:bmg-g21" ;; # (Xe2's programs are Xe-HPC's: 128 KiB of local memory)
        *) targets= ;;
        esac
        for tt in $targets; do
            kind=${tt%%:*} target=${tt#*:}
            if [ "$kind" = amd ] || [ "$kind" = amd19 ]; then
                # (the assembly is kept: flash_mfma's must hold the MFMA instructions)
                s="$T/programs/$name.$target.s"
                if [ "$kind" = amd ]; then
                    [ $have_amd = 1 ] || continue
                    # shellcheck disable=SC2086
                    r=$("$CLANG" -x cl $opts -target amdgcn-amd-amdhsa -mcpu="$target" -O3 --rocm-device-lib-path="$LIBS" \
                        -Rpass-analysis=kernel-resource-usage -S "$src" -o "$s" 2>&1)
                else
                    [ $have_amd19 = 1 ] || continue
                    # shellcheck disable=SC2086
                    r=$(clang19 -x cl $opts -Xclang -finclude-default-header -target amdgcn-mesa-mesa3d -mcpu="$target" -O3 \
                        -nogpulib -Xclang -mlink-builtin-bitcode -Xclang "$L19/usr/lib/clc/$target-amdgcn-mesa-mesa3d.bc" \
                        -Rpass-analysis=kernel-resource-usage -S "$src" -o "$s" 2>&1)
                fi
                if [ $? -ne 0 ]; then
                    printf '%-9s %-8s %-52s %-14s %s\n' "$class" "$target" "$short" "$entry" "BUILD ERROR"
                    bad=1
                    continue
                fi
                line=$(printf '%s\n' "$r" | sed -n 's/.*remark: *\(.*\) \[-Rpass-analysis.*/\1/p' | awk -v k="$entry" '
                    /Function Name:/ { on = ($NF == k) }
                    on && /VGPRs:/ && !/Spill/ { v = $NF } on && /VGPRs Spill:/ { vs = $NF }
                    on && /SGPRs Spill:/ { ss = $NF } on && /ScratchSize/ { sc = $NF }
                    on && /AGPRs:/ { a = $NF }
                    on && /Occupancy/ { oc = $NF } on && /LDS Size/ { lds = $NF }
                    END { printf "%s %s %s %s %s %s %s", v, vs, ss, sc, oc, lds, a + 0 }')
                set -- $line
                verdict=ok
                agprs=${7:-0}
                mfma=
                if [ "$entry" = flash_mfma ] || [ "$entry" = flash_wmma ]; then
                    # the matrix cores' instructions: none is a kernel that would run its products elsewhere
                    ins=$([ "$entry" = flash_mfma ] && echo v_mfma || echo v_wmma)
                    mfma=$(grep -c "$ins" "$s")
                    [ "$mfma" = 0 ] && verdict="NO MATRIX"
                    mfma=", $mfma $ins, $agprs AGPRs"
                fi
                # VGPR spills go to scratch memory: a failure. SGPR spills go to lanes of a VGPR
                # (v_writelane/v_readlane, no memory): reported in the spills column, not failed.
                [ "${2:-0}" != 0 ] && verdict=SPILL
                [ "${4:-0}" != 0 ] && verdict=SCRATCH
                [ "$local" != 0 ] && [ "${6:-0}" != "$local" ] && verdict="LOCAL ${6:-?} != $local"
                [ "$verdict" != ok ] && bad=1
                printf '%-9s %-8s %-52s %-14s VGPRs %s, spills %s+%s, scratch %s B/lane, %s waves/SIMD, LDS %s%s: %s\n' \
                    "$class" "$target" "$short" "$entry" "${1:-?}" "${2:-?}" "${3:-?}" "${4:-?}" "${5:-?}" "${6:-?}" "$mfma" "$verdict"
            elif [ "$kind" = intel2 ]; then
                # Xe2 through IGC 2.x: its report (IGC_ShaderDumpEnable) has the kernel's assembly with its spill
                # size, and the kernels' zeInfo their SIMD width, registers, scratch, private and local memory
                [ $have_xe2 = 1 ] || continue
                o="$T/xe2/out/$target/$name"
                rm -rf "$o" && mkdir -p "$o"
                xopts=$opts
                [ "$entry" = flash_dpas ] &&
                    xopts="$opts -Dcl_intel_subgroup_matrix_multiply_accumulate -Dcl_intel_subgroup_local_block_io"
                if ! IGC_ShaderDumpEnable=1 IGC_DumpToCustomDir="$o/dump" ocloc2 compile -q -file "$src" -device "$target" \
                    -options "$xopts" -output_no_suffix -out_dir "$o" >"$o/ocloc.log" 2>&1; then
                    if [ "$xe2_igc" = "$XE2_CHECKED_IGC" ]; then
                        printf '%-9s %-8s %-52s %-14s %s\n' "$class" "$target" "$short" "$entry" "BUILD ERROR"
                        bad=1
                    else
                        printf '%-9s %-8s %-52s %-14s %s\n' "$class" "$target" "$short" "$entry" "BUILD ERROR (IGC $xe2_igc)"
                    fi
                    continue
                fi
                line=$(awk -v k="$entry" '
                    /^[a-z_]+:/ { top = $1 }
                    top == "kernels:" && /^  - name:/ { on = ($3 == k) }
                    on && /grf_count:/ { grf = $2 } on && /simd_size:/ { simd = $2 } on && /slm_size:/ { slm = $2 }
                    on && /- type: *scratch/ { t = "s" } on && /- type: *private/ { t = "p" }
                    on && /^ +size:/ && t == "s" { sc += $2; t = "" } on && /^ +size:/ && t == "p" { pm += $2; t = "" }
                    END { printf "%s %s %s %s %s", simd, grf, sc + 0, pm + 0, slm + 0 }' "$o"/dump/*.zeinfo 2>/dev/null)
                set -- $line
                asm=$(grep -l "^//.kernel $entry\$" "$o"/dump/*_simd"${1:-0}"_entry_*.asm 2>/dev/null | head -1)
                verdict=ok
                [ "${3:-0}" != 0 ] && verdict=SCRATCH
                [ "${4:-0}" != 0 ] && verdict=PRIVATE
                [ -z "$asm" ] && verdict="NO ASSEMBLY"
                [ "$local" != 0 ] && [ "${5:-0}" != "$local" ] && verdict="LOCAL ${5:-?} != $local"
                dpas=
                if [ "$entry" = flash_dpas ]; then
                    n=$(grep -c 'dpas\.' "$asm" 2>/dev/null)
                    [ "${n:-0}" = 0 ] && verdict="NO MATRIX"
                    dpas=", $n dpas"
                fi
                case $verdict in ok*) ;; *) if [ "$xe2_igc" = "$XE2_CHECKED_IGC" ]; then bad=1; else verdict="$verdict (IGC $xe2_igc)"; fi ;; esac
                printf '%-9s %-8s %-52s %-14s SIMD %s, %s GRF, scratch %s B/thread, private %s B, SLM %s%s: %s\n' \
                    "$class" "$target" "$short" "$entry" "${1:-?}" "${2:-?}" "${3:-?}" "${4:-?}" "${5:-?}" "$dpas" "$verdict"
            else
                [ $have_intel = 1 ] || continue
                o="$T/intel/out/$target/$name"
                rm -rf "$o" && mkdir -p "$o"
                # (flash_dpas: ocloc 22.43 does not define the extensions' macros, which guard their built-ins)
                xopts=$opts
                [ "$entry" = flash_dpas ] &&
                    xopts="$opts -Dcl_intel_subgroup_matrix_multiply_accumulate -Dcl_intel_subgroup_local_block_io"
                if ! LD_LIBRARY_PATH="$T/intel/root/usr/lib/x86_64-linux-gnu" "$OCLOC" compile -q -file "$src" \
                    -device "$target" -options "$xopts" -output_no_suffix -output pt -out_dir "$o" >"$o/ocloc.log" 2>&1; then
                    printf '%-9s %-8s %-52s %-14s %s\n' "$class" "$target" "$short" "$entry" "BUILD ERROR"
                    bad=1
                    continue
                fi
                LD_LIBRARY_PATH="$IGA:$T/intel/root/usr/lib/x86_64-linux-gnu" "$OCLOC" disasm -file "$o/pt" -device "$target" \
                    -patch "$PATCHDIR" -dump "$o/dis" >"$o/disasm.log" 2>&1
                line=$(awk -v k="$entry" '
                    /^\tKernelName / { on = ($2 == k) }
                    on && /LargestCompiledSIMDSize/ { simd = $NF } on && /NumGRFRequired/ { grf = $NF }
                    on && /PerThreadScratchSpace/ && $NF > sc { sc = $NF }
                    on && /PerThreadPrivateMemorySize/ { pm = $NF }
                    on && /TotalInlineLocalMemorySize/ { slm = $NF }
                    END { printf "%s %s %s %s %s", simd, grf, sc + 0, pm + 0, slm + 0 }' "$o/dis/PTM.txt" 2>/dev/null)
                set -- $line
                verdict=ok
                [ "${3:-0}" != 0 ] && verdict=SCRATCH
                [ "${4:-0}" != 0 ] && verdict=PRIVATE
                [ "$local" != 0 ] && [ "${5:-0}" != "$local" ] && verdict="LOCAL ${5:-?} != $local"
                dpas=
                if [ "$entry" = flash_dpas ]; then
                    # the matrix engines' instruction, and never IGC's "INVALID opcode" (it builds a DPAS kernel for
                    # a device without the instruction into one that computes nothing, and exits 0)
                    n=$(cat "$o/dis"/*.asm 2>/dev/null | grep -c 'dpas\.')
                    invalid=$(grep -ci 'invalid opcode' "$o/ocloc.log")
                    { [ "$n" = 0 ] || [ "$invalid" != 0 ]; } && verdict="NO MATRIX"
                    dpas=", $n dpas"
                fi
                case $verdict in ok*) ;; *) bad=1 ;; esac
                printf '%-9s %-8s %-52s %-14s SIMD %s, %s GRF, scratch %s B/thread, private %s B, SLM %s%s: %s\n' \
                    "$class" "$target" "$short" "$entry" "${1:-?}" "${2:-?}" "${3:-?}" "${4:-?}" "${5:-?}" "$dpas" "$verdict"
            fi
        done | sed "s/^/$n\t/"
    done < "$T/index.tsv"
}
parts=$(nproc 2>/dev/null || echo 1)
p=0
while [ $p -lt "$parts" ]; do
    check_programs "$p" "$parts" > "$T/part.$p" &
    p=$((p + 1))
done
wait
sort -s -t "$(printf '\t')" -k1,1n "$T"/part.* | cut -f2- | tee "$T/report.txt"
rm -f "$T"/part.*
grep -qE ': (SPILL|SCRATCH|PRIVATE|NO MATRIX|NO ASSEMBLY|BUILD ERROR|LOCAL .*)$|BUILD ERROR$' "$T/report.txt" && bad=1
# The summary, a Markdown table (docs/TESTING.md holds the last one): per target and
# kernel, the range of registers and occupancy over the programs, and whether all are in registers.
echo
echo "| target | kernel | programs | registers | occupancy / SIMD width | spills, scratch, private |"
echo "|---|---|---|---|---|---|"
awk '$1 ~ /^(amd|intel)-/ && NF > 4 {
    t = $2; k = $4; key = t "|" k
    if (!(key in n)) order[++m] = key
    n[key]++
    if ($5 == "VGPRs") { r = $6 + 0; for (j = 7; j <= NF; ++j) if ($j == "waves/SIMD,") o = $(j - 1) + 0; unit = "VGPRs"; ounit = "waves/SIMD" }
    else { r = $7 + 0; o = $6 + 0; unit = "GRFs"; ounit = "SIMD" }
    if (!(key in rmin) || r < rmin[key]) rmin[key] = r
    if (!(key in rmax) || r > rmax[key]) rmax[key] = r
    if (!(key in omin) || o < omin[key]) omin[key] = o
    if (!(key in omax) || o > omax[key]) omax[key] = o
    u[key] = unit; ou[key] = ounit
    if ($NF != "ok") badk[key] = 1
}
END {
    for (i = 1; i <= m; ++i) {
        key = order[i]; split(key, p, "|")
        rr = rmin[key] == rmax[key] ? rmin[key] : rmin[key] "-" rmax[key]
        oo = omin[key] == omax[key] ? omin[key] : omin[key] "-" omax[key]
        printf "| %s | %s | %d | %s %s | %s %s | %s |\n", p[1], p[2], n[key], rr, u[key], oo, ou[key], (key in badk) ? "**some**" : "none"
    }
}' "$T/report.txt"
# The verdict on $asm, an AMD check kernel's assembly: at least two of instruction $2 and no scratch
# (clang's "; ScratchSize:" comments, both triples); a failure sets bad and shows the compiler's errors.
mma_verdict() {
    n=$(printf '%s\n' "$asm" | grep -c "$2")
    scratch=$(printf '%s\n' "$asm" | sed -n 's/.*; ScratchSize: \([0-9]*\).*/\1/p' | sort -n | tail -1)
    if [ "$n" -ge 2 ] && [ "${scratch:-1}" = 0 ]; then
        echo "$1: $n $2, scratch 0: ok"
    else
        echo "$1: $n $2, scratch ${scratch:-?}: FAILED"
        printf '%s\n' "$asm" | grep -E 'error' | head -5
        bad=1
    fi
}
# cl/mfma.cl's instruction through clang's built-in (FCL_AMD_MMA=1), for the planned flash_mfma: a kernel
# of two chained products must build for gfx90a with v_mfma and no scratch (docs/design/mfma.md).
if [ $have_amd = 1 ]; then
    for dt in F16 BF16; do
        { cat "$(dirname "$0")/../cl/mfma.cl"; cat <<'KERNEL'
__kernel __attribute__((reqd_work_group_size(64, 1, 1))) void mfma_check(__global const uint2 *x, __global float *y)
{
    const int lane = get_local_id(0);
    float16 s = (float16)(0.0f), o = (float16)(0.0f);
    MFMA32(s, x[lane], x[64 + lane]);
    const uint2 p = (uint2)(as_uint(s.s0) >> 16 | (as_uint(s.s1) & 0xffff0000u), as_uint(s.s2) >> 16 | (as_uint(s.s3) & 0xffff0000u));
    MFMA32(o, x[128 + lane], p);
    vstore16(o, lane, y);
}
KERNEL
        } > "$T/mfma_check.cl"
        asm=$("$CLANG" -x cl -cl-std=CL2.0 -target amdgcn-amd-amdhsa -mcpu=gfx90a -O3 --rocm-device-lib-path="$LIBS" \
              -DFCL_AMD_MMA=1 -DFLASHCL_DTYPE_$dt -S "$T/mfma_check.cl" -o - 2>&1)
        mma_verdict "amd-cdna  gfx90a  mfma.cl $dt" v_mfma_f32_32x32x8
    done
fi
# cl/wmma.cl's instructions through clang 19's built-ins (RDNA3 gfx1100, RDNA4 gfx1200; Mesa's triple):
# a product whose accumulators feed the next one must build with v_wmma and no scratch.
if [ $have_amd19 = 1 ]; then
    for target in gfx1100 gfx1200; do
        gfx=${target#gfx}; gfx=${gfx%00}
        for dt in F16 BF16; do
            { cat "$(dirname "$0")/../cl/wmma.cl"; cat <<'KERNEL'
__kernel __attribute__((reqd_work_group_size(32, 1, 1))) void wmma_check(__global const WMMA_AB_T *x, __global float *y)
{
    const int lane = get_local_id(0);
    float8 s = (float8)(0.0f), o = (float8)(0.0f);
    WMMA16(s, x[lane], x[32 + lane]);
    WMMA_AB_T p = x[64 + lane];
    p.s0 = as_uint(s.s0) >> 16 | (as_uint(s.s1) & 0xffff0000u);
    p.s1 = as_uint(s.s2) >> 16 | (as_uint(s.s3) & 0xffff0000u);
    WMMA16(o, x[96 + lane], p);
    vstore8(o, lane, y);
}
KERNEL
            } > "$T/wmma_check.cl"
            ab=$([ "$gfx" = 11 ] && echo uint8 || echo uint4)
            asm=$(clang19 -x cl -cl-std=CL2.0 -Xclang -finclude-default-header -target amdgcn-mesa-mesa3d -mcpu=$target -O3 \
                  -nogpulib -Xclang -mlink-builtin-bitcode -Xclang "$L19/usr/lib/clc/$target-amdgcn-mesa-mesa3d.bc" \
                  -DFCL_AMD_MMA=1 -DWMMA_GFX=$gfx -DWMMA_AB_T=$ab -DFLASHCL_DTYPE_$dt -S "$T/wmma_check.cl" -o - 2>&1)
            mma_verdict "amd-rdna  $target  wmma.cl $dt" v_wmma_f32_16x16x16
        done
    done
fi
# cl/dpas.cl's instruction through the extension's built-ins (DG2: sub-groups of 8, PVC: 16; the extension's
# macro passed, as ocloc does not define it): two chained products must build with dpas and without IGC's
# "INVALID opcode" (what it prints, exiting 0, for a device without the instruction).
if [ $have_intel = 1 ]; then
    for target in dg2 pvc; do
        sg=$([ $target = pvc ] && echo 16 || echo 8)
        for dt in F16 BF16; do
            { cat "$(dirname "$0")/../cl/dpas.cl"; cat <<'KERNEL'
__kernel __attribute__((reqd_work_group_size(DPAS_SG, 1, 1))) __attribute__((intel_reqd_sub_group_size(DPAS_SG)))
void dpas_check(__global const DPAS_A *x, __global const int8 *w, __global float *y)
{
    const int lane = get_sub_group_local_id();
    float8 s = (float8)(0.0f), o = (float8)(0.0f);
    DPAS(s, x[lane], w[lane]);
    DPAS_A p = x[DPAS_SG + lane];
    p.s0 = (short)(as_uint(s.s0) >> 16);
    p.s1 = (short)(as_uint(s.s1) >> 16);
    DPAS(o, p, w[DPAS_SG + lane]);
    vstore8(o, lane, y);
}
KERNEL
            } > "$T/dpas_check.cl"
            o="$T/intel/out/$target/dpas_check_$dt"
            rm -rf "$o" && mkdir -p "$o"
            LD_LIBRARY_PATH="$T/intel/root/usr/lib/x86_64-linux-gnu" "$OCLOC" compile -q -file "$T/dpas_check.cl" \
                -device $target -options "-cl-std=CL2.0 -Dcl_intel_subgroup_matrix_multiply_accumulate -DFCL_INTEL_MMA=1 -DDPAS_SG=$sg -DFLASHCL_DTYPE_$dt" \
                -output_no_suffix -output k -out_dir "$o" > "$o/ocloc.log" 2>&1
            rc=$?
            LD_LIBRARY_PATH="$IGA:$T/intel/root/usr/lib/x86_64-linux-gnu" "$OCLOC" disasm -file "$o/k" -device $target \
                -dump "$o/dis" > "$o/disasm.log" 2>&1
            n=$(cat "$o/dis"/*.asm 2>/dev/null | grep -c 'dpas\.8x8')
            invalid=$(grep -ci 'invalid opcode' "$o/ocloc.log")
            if [ $rc = 0 ] && [ "$n" -ge 2 ] && [ "$invalid" = 0 ]; then
                echo "intel     $target  dpas.cl $dt: $n dpas.8x8 (SIMD $sg): ok"
            else
                echo "intel     $target  dpas.cl $dt: exit $rc, $n dpas, $invalid INVALID opcode: FAILED"
                head -5 "$o/ocloc.log"
                bad=1
            fi
        done
    done
fi
# Intel's runtime itself (NEO, from the same packages, never installed) in AUB mode: no GPU, it reports the
# product it is told to be and builds for real, and runs nothing. flashcl's profile query must find the DPAS
# extension on dg2 and pvc and prove the matrix engines there (flash_dpas and the probe build), and not on
# tgllp, which lacks them (IGC would build DPAS for it into a kernel that computes nothing).
if [ $have_intel = 1 ] && [ -x "$BUILD/tools/flashcl" ]; then
    printf '%s\n' "$T/intel/root/usr/lib/x86_64-linux-gnu/intel-opencl/libigdrcl.so" > "$T/intel/aub.icd"
    for product in dg2 pvc tgllp; do
        want=$([ $product = tgllp ] && echo false || echo true)
        # (in $T/intel: NEO writes its AUB stream, *.aub, into the working directory)
        tool=$(cd "$BUILD/tools" && pwd)/flashcl
        json=$(cd "$T/intel" && OCL_ICD_VENDORS="$T/intel/aub.icd" LD_LIBRARY_PATH="$T/intel/root/usr/lib/x86_64-linux-gnu" \
               NEOReadDebugKeys=1 SetCommandStreamReceiver=1 ProductFamilyOverride=$product FLASHCL_CACHE=0 \
               timeout 600 "$tool" devices --json 2>&1)
        ext=$(printf '%s\n' "$json" | grep -c "\"intel_subgroup_matrix\": $want")
        units=$(printf '%s\n' "$json" | grep -c "\"matrix_units\": $want")
        if [ "$ext" = 1 ] && [ "$units" = 1 ]; then
            echo "intel     $product  AUB mode: DPAS extension $want, matrix engines proven $want$([ $want = true ] && echo ' (flash_dpas built by NEO)'): ok"
        else
            echo "intel     $product  AUB mode: expected the extension and the matrix engines $want: FAILED"
            printf '%s\n' "$json" | head -5
            bad=1
        fi
    done
fi
if [ $bad = 1 ]; then
    echo "vendor_check: some programs spill, use scratch or private memory, or do not build"
    [ $REPORT_ONLY = 1 ] && exit 0
    exit 1
fi
echo "vendor_check: every program builds in registers"
