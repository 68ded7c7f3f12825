#!/bin/sh
# intel_check.sh: compile flash_decode (and kv_append, the naive kernels) offline for Intel GPUs with
# ocloc + IGC from Debian 12, and print per kernel and target: the SIMD width, GRFs, SLM, scratch
# (spill/fill or private), stateless private memory and the register allocator's spill size.
# Run from the repository root:  sh docs/vendor-checks/intel_check.sh [targets]
# (default targets: tgllp acm-g10 pvc). Results: docs/vendor-checks/intel-flash_decode.txt.
#
# Nothing is installed system-wide: the .deb files are fetched with `apt-get download` into $T and
# unpacked with `dpkg -x` into $T/root (intel-opencl-icd's /etc/OpenCL/vendors/intel.icd lands in
# $T/root/etc, not in /etc). ocloc runs with LD_LIBRARY_PATH pointing at the unpacked libraries.
# libllvm14 comes from the system if installed (Debian's libigc1 links it); it is fetched too.
#
# Where the numbers come from (each program is compiled twice per target, by the same IGC):
#   - ocloc's default output (patch tokens, what this ocloc emits without --format), decoded with
#     `ocloc disasm -patch <libigdfcl-dev's executable_format headers>`: EXECUTION_ENVIRONMENT
#     (LargestCompiledSIMDSize, NumGRFRequired, UsesStatelessSpillFill, HasStackCalls),
#     ALLOCATE_LOCAL_SURFACE (TotalInlineLocalMemorySize), MEDIA_VFE_STATE / _SLOT1
#     (PerThreadScratchSpace), ALLOCATE_STATELESS_PRIVATE_MEMORY (PerThreadPrivateMemorySize, IsSimtThread);
#   - `--format zebin`: the .ze_info section (execution_env simd_size, grf_count, slm_size,
#     has_stack_calls; per_thread_memory_buffers type/usage/size; absent keys are 0/false);
#   - IGC's shader dump (IGC_ShaderDumpEnable=1) of the zebin build: one vISA file per attempted
#     compilation ([<retry>_]simd<N>), a .asm only for the ones that were finished; the .asm header
#     has "//.spill size N" when the register allocator spilled (no such line: no spill).
set -eu
REPO=$(pwd)
T=${INTEL_TMP:-/tmp/intel}
TARGETS=${*:-tgllp acm-g10 pvc}
mkdir -p "$T"
if [ ! -x "$T/root/usr/bin/ocloc" ]; then
    (cd "$T" && apt-get download intel-opencl-icd libigc1 libigdfcl1 libigdgmm12 libopencl-clang14 \
        libllvmspirvlib14 libllvm14 libigc-dev libigdfcl-dev)
    for f in "$T"/*.deb; do dpkg -x "$f" "$T/root"; done
fi
export LD_LIBRARY_PATH="$T/root/usr/lib/x86_64-linux-gnu"
OCLOC="$T/root/usr/bin/ocloc"
PATCHDIR="$T/root/usr/include/igc/ocl_igc_shared/executable_format"
W="$T/work"
rm -rf "$W"
mkdir -p "$W/src"
(cd "$W" && "$OCLOC" query OCL_DRIVER_VERSION >/dev/null 2>&1 && echo "ocloc (NEO) $(cat OCL_DRIVER_VERSION)")
dpkg-deb -f "$T"/libigc1_*.deb Package Version | tr '\n' ' '
echo

cat >"$W/summ.py" <<'EOF'
import glob, os, re, struct, sys
zebin, ptm, dump, target, tag = sys.argv[1:6]

def ze_info(path):
    d = open(path, 'rb').read()
    shoff = struct.unpack_from('<Q', d, 0x28)[0]
    ent, num, stri = struct.unpack_from('<HHH', d, 0x3a)
    secs = [struct.unpack_from('<IIQQQQ', d, shoff + i * ent) for i in range(num)]
    so = secs[stri][4]
    for name, _, _, _, off, size in secs:
        if d[so + name:d.index(b'\0', so + name)] == b'.ze_info':
            import yaml
            return yaml.safe_load(d[off:off + size].decode())
    return {}

def patch_tokens(path):
    ks, cur, tok = {}, None, None
    for line in open(path):
        line = line.rstrip('\n')
        m = re.match(r'\tKernelName (\S+)', line)
        if m:
            cur = ks.setdefault(m.group(1), {'tokens': []})
            continue
        if not line.startswith('\t') and line.endswith(':'):
            tok = {'name': line[:-1]}
            if cur is not None:
                cur['tokens'].append(tok)
            continue
        m = re.match(r'\t\d+ (\w+) (\S+)$', line)
        if m and tok is not None:
            tok[m.group(1)] = m.group(2)
    return ks

def attempts(dump, kernel):
    out = []
    for v in sorted(glob.glob(os.path.join(dump, '*.visaasm'))):
        if '.kernel "%s"' % kernel not in open(v).read(4096):
            continue
        m = re.search(r'_(?:(\d+)_)?simd(\d+)_[^/]*\.visaasm$', v)
        retry, simd = m.group(1) or '0', m.group(2)
        asm = v[:-len('.visaasm')] + '.asm'
        if os.path.exists(asm):
            head = open(asm).read(4096)
            s = re.search(r'//\.spill size (\d+)', head)
            out.append('p%s/simd%s:spill=%s' % (retry, simd, s.group(1) if s else '0'))
        else:
            out.append('p%s/simd%s:dropped' % (retry, simd))
    return ' '.join(out)

ze = ze_info(zebin)
pt = patch_tokens(ptm)
for k in ze.get('kernels', []):
    name = k['name']
    if name == 'Intel_Symbol_Table_Void_Program':
        continue
    env = k.get('execution_env', {})
    bufs = k.get('per_thread_memory_buffers', [])
    scratch = ','.join('%s:%d' % (b['usage'], b['size']) for b in bufs if b['type'] == 'scratch') or '0'
    priv = ','.join('%d%s' % (b['size'], '/item' if b.get('is_simt_thread') else '/thread')
                    for b in bufs if b['type'] == 'global') or '0'
    z = 'simd=%s grf=%s slm=%s scratch=%s private=%s stack_calls=%s' % (
        env.get('simd_size'), env.get('grf_count'), env.get('slm_size', 0), scratch, priv,
        int(bool(env.get('has_stack_calls', False))))
    p = pt.get(name, {'tokens': []})
    f = {}
    for t in p['tokens']:
        n = t['name']
        if n == 'PATCH_TOKEN_EXECUTION_ENVIRONMENT':
            f['simd'] = t.get('LargestCompiledSIMDSize')
            f['grf'] = t.get('NumGRFRequired')
            f['stateless_spill'] = t.get('UsesStatelessSpillFill')
            f['stack'] = t.get('HasStackCalls')
        elif n == 'PATCH_TOKEN_ALLOCATE_LOCAL_SURFACE':
            f['slm'] = t.get('TotalInlineLocalMemorySize')
        elif n.startswith('PATCH_TOKEN_MEDIA_VFE_STATE'):
            f.setdefault('scratch', []).append(t.get('PerThreadScratchSpace'))
        elif 'PRIVATE' in n:
            f['private'] = t.get('PerThreadPrivateMemorySize', '?') + ('/item' if t.get('IsSimtThread') == '1' else '/thread')
    q = 'simd=%s grf=%s slm=%s scratch=%s private=%s stateless_spill=%s stack_calls=%s' % (
        f.get('simd'), f.get('grf'), f.get('slm', 0), ','.join(f.get('scratch', ['0'])), f.get('private', '0'),
        f.get('stateless_spill'), f.get('stack'))
    print('%-8s %-10s %-15s patchtokens: %s' % (target, tag, name, q))
    print('%-8s %-10s %-15s zebin:       %s' % (target, tag, name, z))
    print('%-8s %-10s %-15s IGC attempts: %s' % (target, tag, name, attempts(dump, name)))
EOF

# build TAG "PARTS" "OPTIONS": the program from cl/ parts in this order, for every target.
build() {
    tag=$1 parts=$2 opts=$3
    src="$W/src/$tag.cl"
    (cd "$REPO/cl" && cat $parts) >"$src"
    echo "## $tag: [$parts] $opts"
    for t in $TARGETS; do
        o="$W/$t/$tag"
        mkdir -p "$o"
        if ! "$OCLOC" compile -q -file "$src" -device "$t" -options "$opts" -output_no_suffix -output pt \
            -out_dir "$o" >"$o/ocloc_pt.log" 2>&1; then
            echo "$t $tag: ocloc refused or failed:"; sed 's/^/    /' "$o/ocloc_pt.log" | tail -5
            continue
        fi
        IGC_ShaderDumpEnable=1 IGC_DumpToCustomDir="$o/dump" "$OCLOC" compile -q -file "$src" -device "$t" \
            --format zebin -options "$opts" -output_no_suffix -output ze -out_dir "$o" >"$o/ocloc_ze.log" 2>&1
        "$OCLOC" disasm -file "$o/pt" -device "$t" -patch "$PATCHDIR" -dump "$o/dis" >"$o/disasm.log" 2>&1
        python3 "$W/summ.py" "$o/ze" "$o/dis/PTM.txt" "$o/dump" "$t" "$tag"
    done
}

FD="common.cl geometry.cl scores.cl softmax.cl decode.cl flash_decode.cl"
B="-cl-std=CL1.2"
# (flash_decode_options' order: dtype, HEAD_DIM ROWS TEAM KT WG FCL_PTX, features, SPLIT_KV)
build a "$FD" "$B -DFLASHCL_DTYPE_F16 -DHEAD_DIM=128 -DROWS=4 -DTEAM=16 -DKT=4 -DWG=128 -DFCL_PTX=0 -DKV_CACHE=1"
build b "$FD" "$B -DFLASHCL_DTYPE_F16 -DHEAD_DIM=128 -DROWS=4 -DTEAM=16 -DKT=4 -DWG=128 -DFCL_PTX=0 -DKV_CACHE=1 -DKV_FORMAT=1"
build c "$FD" "$B -DFLASHCL_DTYPE_F16 -DHEAD_DIM=128 -DROWS=4 -DTEAM=16 -DKT=4 -DWG=128 -DFCL_PTX=0 -DKV_CACHE=1 -DKV_FORMAT=1 -DKV_SCALE_F16=1"
build d "$FD" "$B -DFLASHCL_DTYPE_F16 -DHEAD_DIM=128 -DROWS=4 -DTEAM=16 -DKT=4 -DWG=128 -DFCL_PTX=0 -DKV_CACHE=1 -DKV_FORMAT=2"
build e "$FD" "$B -DFLASHCL_DTYPE_F16 -DHEAD_DIM=128 -DROWS=4 -DTEAM=16 -DKT=4 -DWG=128 -DFCL_PTX=0 -DKV_CACHE=1 -DKV_FORMAT=3"
build f "$FD" "$B -DFLASHCL_DTYPE_F16 -DHEAD_DIM=128 -DROWS=8 -DTEAM=16 -DKT=2 -DWG=128 -DFCL_PTX=0 -DKV_CACHE=1 -DKV_FORMAT=1"
build g "$FD" "$B -DFLASHCL_DTYPE_BF16 -DHEAD_DIM=64 -DROWS=4 -DTEAM=8 -DKT=4 -DWG=128 -DFCL_PTX=0 -DKV_CACHE=1"
build h "$FD" "$B -DFLASHCL_DTYPE_F32 -DHEAD_DIM=256 -DROWS=4 -DTEAM=32 -DKT=4 -DWG=128 -DFCL_PTX=0 -DKV_CACHE=1 -DKV_FORMAT=2"
build i "$FD" "$B -DFLASHCL_DTYPE_F16 -DHEAD_DIM=128 -DROWS=4 -DTEAM=16 -DKT=4 -DWG=128 -DFCL_PTX=0 -DKV_CACHE=1 -DKV_APPEND=1 -DPAGE_SIZE=16 -DSPLIT_KV=1"
KA="common.cl geometry.cl kvcache.cl"
build kva_int8 "$KA" "$B -DFLASHCL_DTYPE_F16 -DHEAD_DIM=128 -DPAGE_SIZE=16 -DKV_FORMAT=1 -DKV_SCALE_F16=0"
build kva_e4m3 "$KA" "$B -DFLASHCL_DTYPE_F16 -DHEAD_DIM=128 -DPAGE_SIZE=16 -DKV_FORMAT=2 -DKV_SCALE_F16=0"
build kva_e5m2 "$KA" "$B -DFLASHCL_DTYPE_F16 -DHEAD_DIM=128 -DPAGE_SIZE=16 -DKV_FORMAT=3 -DKV_SCALE_F16=0"
build naive "common.cl geometry.cl scores.cl naive.cl" "$B -DFLASHCL_DTYPE_F16 -DHEAD_DIM=128 -DKV_CACHE=1 -DKV_FORMAT=1"
# Not a configuration the library gives: (a) in IGC's 256-GRF mode (an -options switch of this IGC),
# for comparison only, on the two targets that take it.
TARGETS="acm-g10 pvc"
build a_256grf "$FD" "$B -DFLASHCL_DTYPE_F16 -DHEAD_DIM=128 -DROWS=4 -DTEAM=16 -DKT=4 -DWG=128 -DFCL_PTX=0 -DKV_CACHE=1 -cl-intel-256-GRF-per-thread"
