#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes BENCHMARKS.md from the JSON that `flashcl bench` wrote into bench/, so the page cannot
drift from the measurements. Usage: python3 tools/benchmarks_md.py [bench-dir] > BENCHMARKS.md"""
import glob
import json
import os
import re
import sys

# PyTorch 2.11 SDPA on the same H200, forward, d=128, H=16, B*N=16384 (from the project's design
# notes, measured there): TFLOP/s by (N, causal).
ANCHORS = {
    (1024, False): {'fp16 FA2': 319, 'fp16 mem-efficient': 164, 'fp32 mem-efficient': 44.6, 'fp32 standard (cuBLAS)': 27.6},
    (4096, False): {'fp16 FA2': 352, 'fp16 mem-efficient': 171, 'fp32 mem-efficient': 45.8, 'fp32 standard (cuBLAS)': 27.5},
    (16384, False): {'fp16 FA2': 339, 'fp16 mem-efficient': 175, 'fp32 mem-efficient': 44.7, 'fp32 standard (cuBLAS)': 28.3},
    (16384, True): {'fp16 FA2': 291, 'fp16 mem-efficient': 167, 'fp32 mem-efficient': 46.0, 'fp32 standard (cuBLAS)': 11.7},
}


def load(directory):
    runs = []
    for path in sorted(glob.glob(os.path.join(directory, '*.json'))):
        with open(path) as f:
            data = json.load(f)
        data['file'] = os.path.basename(path)
        runs.append(data)
    return runs


def ms(r):
    return f"{r['median_ms']:.3f} ({r['min_ms']:.3f}–{r['max_ms']:.3f})"


def mib(b):
    return f"{b / 1048576:.0f}" if b >= 1048576 else f"{b / 1024:.1f} KiB" if b else "0"


def table(run):
    rows = {}
    for r in run['results']:
        key = (r['head_dim'], r['causal'], r['seq'], r['batch'], r['heads'], r['dtype'])
        rows.setdefault(key, {})[r['algo']] = r
    out = ['| d | mask | B×H×N | flash ms (min–max) | flash TFLOP/s | standard ms | standard TFLOP/s | naive ms | '
           'flash vs standard | flash vs naive | extra MiB: flash / standard | validated |',
           '|---|---|---|---|---|---|---|---|---|---|---|---|']
    for key in sorted(rows, key=lambda k: (k[0], k[1], k[2])):
        d, causal, n, b, h, _ = key
        a = rows[key]
        f, s, nv = a.get('flash'), a.get('standard'), a.get('naive')
        def cell(r, fmt):
            if r is None:
                return 'not run'
            if not r['ran']:
                note = r.get('note', 'not run')
                need = re.search(r'needs (\d+) bytes', note)
                if need:
                    return 'cannot allocate: needs %.0f GiB' % (int(need.group(1)) / 2**30)
                return note.split(';')[0][:90]
            return fmt(r)
        speed_s = f"{s['median_ms'] / f['median_ms']:.2f}×" if f and s and f['ran'] and s['ran'] else '—'
        speed_n = f"{nv['median_ms'] / f['median_ms']:.2f}×" if f and nv and f['ran'] and nv['ran'] else '—'
        mem = (mib(f['extra_bytes']) if f and f['ran'] else '—') + ' / ' + \
            (mib(s['extra_bytes']) if s and s['ran'] else ('cannot allocate' if s else '—'))
        valid = ', '.join(f"{r['algo']} {'pass' if r['passed'] else 'FAIL'}" for r in (f, nv, s) if r and r['ran'])
        tf = lambda r: '%.2f' % r['tflops']
        tfc = lambda r: tf(r) if r and r['ran'] else '—'
        med = lambda r: '%.3f' % r['median_ms']
        mask = 'causal' if causal else 'full'
        out.append(f"| {d} | {mask} | {b}×{h}×{n} | {cell(f, ms)} | {tfc(f)} | {cell(s, ms)} | {tfc(s)} | "
                   f"{cell(nv, med)} | {speed_s} | {speed_n} | {mem} | {valid} |")
    return '\n'.join(out)


def anchors(runs, mma=()):
    by = {}
    for run in list(runs) + [m for m in mma if 'h200_mma_f16.' in m['file']]:
        if 'H200' not in run['device']:
            continue
        for r in run['results']:
            if r['algo'] in ('flash', 'standard') and r['ran'] and r['head_dim'] == 128 and r['heads'] == 16:
                by[(r['dtype'], algo_of(r), r['seq'], r['causal'])] = r['tflops']
    out = ['| N | mask | flashcl flash f32 (portable) | flashcl flash_mma f16 (tensor cores) | flashcl standard f32 (CLBlast) | '
           'PyTorch fp32 mem-efficient | PyTorch fp32 standard (cuBLAS) | PyTorch fp16 mem-efficient | PyTorch fp16 FA2 |',
           '|---|---|---|---|---|---|---|---|---|']
    for (n, causal), a in ANCHORS.items():
        def get(dtype, algo):
            v = by.get((dtype, algo, n, causal))
            return f'{v:.1f}' if v is not None else '—'
        mask = 'causal' if causal else 'full'
        out.append(f"| {n} | {mask} | {get('f32', 'flash')} | {get('f16', 'flash-mma')} | {get('f32', 'standard')} | "
                   f"{a['fp32 mem-efficient']} | {a['fp32 standard (cuBLAS)']} | {a['fp16 mem-efficient']} | {a['fp16 FA2']} |")
    return '\n'.join(out)


def standings(runs):
    """Flash's speedup over standard attention by N, for each device, dtype, head dim and mask."""
    lines = []
    for run in runs:
        by = {}
        for r in run['results']:
            by.setdefault((r['dtype'], r['head_dim'], r['causal']), {}).setdefault(r['seq'], {})[r['algo']] = r
        for (dtype, d, causal), seqs in sorted(by.items()):
            cells = []
            for n in sorted(seqs):
                f, st = seqs[n].get('flash'), seqs[n].get('standard')
                if f and st and f['ran'] and st['ran']:
                    cells.append('N=%d %.2f×' % (n, st['median_ms'] / f['median_ms']))
                elif f and f['ran'] and st and not st['ran']:
                    cells.append('N=%d standard cannot run' % n)
            if cells:
                lines.append('- %s, %s d=%d %s: %s' % (run['device'], dtype, d, 'causal' if causal else 'non-causal',
                                                       ', '.join(cells)))
    return '\n'.join(lines)


def flash_tflops(runs, device, dtype, d, n, causal):
    for run in runs:
        if device not in run['device']:
            continue
        for r in run['results']:
            if (r['algo'] == 'flash' and r['ran'] and r['dtype'] == dtype and r['head_dim'] == d and r['seq'] == n
                    and r['causal'] == causal):
                return r
    return None


def targets(runs):
    """The speed targets, each with the measured figure from the runs in bench/ (H200, fp32)."""
    out = ['| target | measured (H200, fp32, flash) | met |', '|---|---|---|']
    tf = lambda d, n, c: flash_tflops(runs, 'H200', 'f32', d, n, c)
    def row(name, cells, ok):
        out.append(f'| {name} | {cells} | {ok} |')
    for d, goal in ((128, 30.0), (64, 25.0)):
        got = [(n, tf(d, n, False)) for n in (4096, 16384)]
        if all(r for _, r in got):
            row(f'd={d}, N=4096 and 16384, non-causal: ≥ {goal:.0f} TFLOP/s',
                ', '.join(f"N={n}: {r['tflops']:.1f}" for n, r in got),
                'yes' if all(r['tflops'] >= goal for _, r in got) else 'no')
    for d in (64, 128):
        cells, ok = [], True
        for n in (512, 1024, 4096, 16384):
            a, c = tf(d, n, False), tf(d, n, True)
            if a and c:
                ratio = c['tflops'] / a['tflops']
                cells.append(f'N={n}: {100 * ratio:.0f}%')
                ok = ok and ratio >= 0.85
        if cells:
            row(f'd={d}: causal TFLOP/s within 15% of non-causal', ', '.join(cells), 'yes' if ok else 'no')
    for run in runs:
        if 'H200' not in run['device']:
            continue
        by = {}
        for r in run['results']:
            by.setdefault((r['head_dim'], r['causal'], r['seq'], r['dtype']), {})[r['algo']] = r
        for causal, goal in ((False, 2.0), (True, 4.0)):
            cells, ok = [], True
            for d in (64, 128):
                a = by.get((d, causal, 16384, 'f32'), {})
                f, st = a.get('flash'), a.get('standard')
                if f and st and f['ran'] and st['ran']:
                    x = st['median_ms'] / f['median_ms']
                    cells.append(f'd={d}: {x:.2f}×')
                    ok = ok and x >= goal
            if cells:
                row(f"flash ≥ {goal:.0f}× standard (CLBlast) at N=16384, {'causal' if causal else 'non-causal'}",
                    ', '.join(cells), 'yes' if ok else 'no')
    cells, ok = [], True
    for n in (1024, 4096):
        ref = tf(128, n, False)
        for d in (80, 96, 256):
            r = tf(d, n, False)
            if ref and r:
                cells.append(f"N={n} d={d}: {100 * r['tflops'] / ref['tflops']:.0f}%")
                ok = ok and r['tflops'] >= 0.6 * ref['tflops']
    if cells:
        row('no cliff: d=80, 96, 256 at ≥ 60% of d=128 (same N)', ', '.join(cells), 'yes' if ok else 'no')
    return '\n'.join(out)


def before_after(runs, before):
    """Flash TFLOP/s of the kernel before register blocking (bench/before/F) against now (bench/F)."""
    old = {}
    for run in before:
        for r in run['results']:
            if r['algo'] == 'flash' and r['ran']:
                old[(run['file'], r['dtype'], r['head_dim'], r['seq'], r['causal'])] = r
    out = ['| device | dtype | d | N | mask | before TFLOP/s | now TFLOP/s | speedup |', '|---|---|---|---|---|---|---|---|']
    for run in runs:
        for r in sorted(run['results'], key=lambda r: (r['head_dim'], r['causal'], r['seq'])):
            o = old.get((run['file'], r['dtype'], r['head_dim'], r['seq'], r['causal']))
            if r['algo'] == 'flash' and r['ran'] and o:
                out.append(f"| {run['device']} | {r['dtype']} | {r['head_dim']} | {r['seq']} | "
                           f"{'causal' if r['causal'] else 'full'} | {o['tflops']:.3g} | {r['tflops']:.3g} | "
                           f"{o['median_ms'] / r['median_ms']:.2f}× |")
    return '\n'.join(out)


COPY_BW = 4.3e3  # GB/s: the H200's copy bandwidth, measured for the design notes


def algo_of(r):
    """'flash-mma' for the matrix-unit kernel's rows, else the algorithm."""
    return 'flash-mma' if r.get('kernel') == 'flash_mma' else r['algo']


def find(runs, file_part, **want):
    for run in runs:
        if file_part not in run['file']:
            continue
        for r in run['results']:
            if r['ran'] and all(r.get(k) == v for k, v in want.items()):
                return r
    return None


def mma_section(mma, main_runs):
    """The matrix-unit kernel: targets, then each shape against its earlier versions, the portable
    kernel and PyTorch."""
    out = ['| target | measured (H200, flash_mma, fp16 unless said) | met |', '|---|---|---|']
    tf = lambda n, d, c, dt='f16', f='h200_mma_f16.': find(mma, f, seq=n, head_dim=d, causal=c, dtype=dt)
    def row(name, cells, ok):
        out.append(f'| {name} | {cells} | {ok} |')
    for d, goal, stretch in ((128, 150.0, 250.0), (64, 120.0, None)):
        got = [(n, tf(n, d, False)) for n in (4096, 16384)]
        if all(r for _, r in got):
            name = f'd={d}, N ≥ 4096, non-causal: ≥ {goal:.0f} TFLOP/s' + (f' (stretch {stretch:.0f})' if stretch else '')
            ok = all(r['tflops'] >= goal for _, r in got)
            okt = 'yes' + ('; stretch no' if stretch and not all(r['tflops'] >= stretch for _, r in got) else '') if ok else 'no'
            row(name, ', '.join(f"N={n}: {r['tflops']:.1f}" for n, r in got), okt)
    for d in (64, 128):
        cells, ok, short = [], True, True
        for n in (1024, 4096, 16384):
            a, c = tf(n, d, False), tf(n, d, True)
            if a and c:
                cells.append(f"N={n}: {100 * c['tflops'] / a['tflops']:.0f}%")
                if n >= 4096:
                    ok = ok and c['tflops'] >= 0.85 * a['tflops']
                else:
                    short = short and c['tflops'] >= 0.85 * a['tflops']
        if cells:
            row(f'd={d}, N ≥ 4096: causal within 15% of non-causal', ', '.join(cells),
                ('yes' if ok else 'no') + ('' if short else ' (N=1024: no)'))
    cells, ok = [], True
    for n in (4096, 16384):
        for c in (False, True):
            a, b = tf(n, 128, c), tf(n, 128, c, 'bf16', 'h200_mma_bf16.')
            if a and b:
                cells.append(f"N={n} {'causal' if c else 'full'}: {b['tflops']:.1f} vs {a['tflops']:.1f}")
                ok = ok and b['tflops'] >= 0.95 * a['tflops']
    if cells:
        row('bf16 the same as fp16 (within 5%), d=128', ', '.join(cells), 'yes' if ok else 'no')
    out.append('')
    out.append('Each shape (B·N = 16384, hidden 2048), TFLOP/s. "pipelined" is the kernel as shipped (K/V tiles')
    out.append('through cp.async); "synchronous" the same kernel built with `-DMMA_PIPELINE=0` in the same run;')
    out.append('"first" the first version (one barrier a tile, K and V loaded together; docs/gpu-runs/mma-1);')
    out.append('"portable f32" the register-blocked portable kernel on fp32 (`bench/h200_fa2_f32.json`); PyTorch')
    out.append("FA2 fp16 the design notes' anchor (d=128 only).\n")
    out.append('| d | N | mask | pipelined fp16 ms (min–max) | pipelined fp16 | bf16 | synchronous | first | portable f32 | PyTorch FA2 fp16 |')
    out.append('|---|---|---|---|---|---|---|---|---|---|')
    for d in (64, 128):
        for c in (False, True):
            for n in (512, 1024, 2048, 4096, 8192, 16384):
                p = tf(n, d, c)
                first = find(mma, 'v1_fa2', seq=n, head_dim=d, causal=c, dtype='f16')
                if not p and not first:
                    continue
                b = tf(n, d, c, 'bf16', 'h200_mma_bf16.')
                sync = tf(n, d, c, 'f16', 'sync')
                port = flash_tflops(main_runs, 'H200', 'f32', d, n, c)
                anchor = ANCHORS.get((n, c), {}).get('fp16 FA2') if d == 128 else None
                v = lambda r: f"{r['tflops']:.1f}" if r else '—'
                out.append(f"| {d} | {n} | {'causal' if c else 'full'} | {ms(p) if p else '—'} | {v(p)} | {v(b)} | "
                           f"{v(sync)} | {v(first)} | {v(port)} | {anchor if anchor else '—'} |")
    cmds = sorted({run['command'] for run in mma})
    out.append('\nCommands: ' + '; '.join(f'`{c}`' for c in cmds) + '. Data: `bench/mma/`.')
    return '\n'.join(out)


def sdpa_decode(directory):
    rows = {}
    path = os.path.join(directory, 'decode', 'h200_sdpa.txt')
    if os.path.exists(path):
        for line in open(path):
            f = line.split()
            if len(f) == 5 and not line.startswith('#'):
                rows[(f[0], int(f[1]), int(f[2]))] = (float(f[3]), float(f[4]))
    return rows


def decode_section(dec, directory):
    sd = sdpa_decode(directory)
    get = lambda f, b, n: find(dec, f, batch=b, seq=n)
    out = ['| target | measured (H200, seq_q=1, Hq=32, Hkv=8, d=128, fp16 K/V) | met |', '|---|---|---|']
    cells, ok = [], True
    for b, f in ((1, 'h200_b1.'), (8, 'h200_b8.')):
        for n in (32768, 131072):
            r = get(f, b, n)
            if r:
                cells.append(f"B={b} {n}: {r['gb_per_s']:.0f} GB/s ({100 * r['gb_per_s'] / COPY_BW:.0f}%)")
                ok = ok and r['gb_per_s'] >= 0.6 * COPY_BW
    out.append(f'| K/V bandwidth ≥ 60% of copy bandwidth ({COPY_BW / 1e3:.1f} TB/s) at cache ≥ 32768 | {", ".join(cells)} | {"yes" if ok else "no"} |')
    s, u = get('h200_b1.', 1, 131072), get('unsplit', 1, 131072)
    if s and u:
        x = u['median_ms'] / s['median_ms']
        out.append(f"| split-KV ≥ 4× unsplit, B=1, cache 131072 | {u['median_ms']:.2f} ms unsplit / {s['median_ms']:.3f} ms = {x:.0f}× | {'yes' if x >= 4 else 'no'} |")
    cells, ok = [], True
    # each paged run against the contiguous run of the same device run (B=8's paged run came with its own)
    for b, f, fp in ((1, 'h200_b1.', 'h200_b1_paged'), (8, 'h200_b8_contiguous_beside', 'h200_b8_paged')):
        r, p = get(f, b, 131072), get(fp, b, 131072)
        if r and p:
            cells.append(f"B={b}: {100 * (p['median_ms'] / r['median_ms'] - 1):+.1f}%")
            ok = ok and p['median_ms'] <= 1.10 * r['median_ms']
    out.append(f'| paged (pages of 256) within 10% of contiguous, cache 131072 | {", ".join(cells)} | {"yes" if ok else "no"} |')
    out.append('')
    out.append('Each shape: flashcl (the portable kernel with split-KV and GQA packing; medians of 20 runs) against')
    out.append('PyTorch SDPA on the same GPU (`bench/anchors/sdpa_decode.py`: median of 50 CUDA-event runs, GQA')
    out.append('through enable_gqa); ms and GB/s (the bytes of Q, K, V and O over the time).\n')
    out.append('| B | cache | flashcl ms (min–max) | flashcl GB/s | paged 256 ms | PyTorch flash ms | GB/s | PyTorch cuDNN ms | GB/s | PyTorch math ms |')
    out.append('|---|---|---|---|---|---|---|---|---|---|')
    for b, f, fp in ((1, 'h200_b1.', 'h200_b1_paged'), (8, 'h200_b8.', 'h200_b8_paged')):
        for n in (8192, 16384, 32768, 65536, 131072):
            r, p = get(f, b, n), get(fp, b, n)
            fl, cu, ma = sd.get(('flash', b, n)), sd.get(('cudnn', b, n)), sd.get(('math', b, n))
            if not r and not fl:
                continue
            out.append(f"| {b} | {n} | {ms(r) if r else '—'} | {r['gb_per_s']:.0f} |".replace(" | None", "") if r else f"| {b} | {n} | — | — |")
            out[-1] += (f" {p['median_ms']:.3f} |" if p else ' — |')
            for t in (fl, cu):
                out[-1] += f' {t[0]:.4f} | {t[1]:.0f} |' if t else ' — | — |'
            out[-1] += f' {ma[0]:.3f} |' if ma else ' — |'
    cmds = sorted({run['command'] for run in dec})
    out.append('\nCommands: ' + '; '.join(f'`{c}`' for c in cmds) + '. Data: `bench/decode/` (PyTorch: `h200_sdpa.txt`).')
    return '\n'.join(out)


def decode_kernel_section(directory):
    """The decode kernel (cl/flash_decode.cl) against the portable kernel's decode path, one session."""
    runs = {os.path.basename(p)[len('h200_'):-len('.json')]: json.load(open(p))
            for p in sorted(glob.glob(os.path.join(directory, 'decode-kernel', 'h200_*.json')))}
    if not runs:
        return ''
    out = ['| B | cache | decode kernel ms (min–max) | GB/s | portable path ms (min–max) | GB/s | decode / portable |',
           '|---|---|---|---|---|---|---|']
    for b in (1, 8):
        dec, por = runs.get(f'b{b}_decode'), runs.get(f'b{b}_portable')
        if not dec or not por:
            continue
        for r in dec['results']:
            q = next((x for x in por['results'] if x['seq'] == r['seq']), None)
            if q and r.get('ran') and q.get('ran'):
                out.append(f"| {b} | {r['seq']} | {ms(r)} | {r['gb_per_s']:.0f} | {ms(q)} | {q['gb_per_s']:.0f} | "
                           f"{r['gb_per_s'] / q['gb_per_s']:.2f}× |")
    cmds = sorted({run['command'].split(' --json')[0] for run in runs.values()})
    out.append('\nOne session on the H200 (`docs/gpu-runs/decode-5/run.sh`; the decode rows are its `both` variant, built')
    out.append('with the switches that made it the kernel as it now stands: each key\'s row on its own, the exact exp2),')
    out.append('seq_q 1, Hq 32, Hkv 8, d 128, fp16 K/V;')
    out.append('GB/s of Q, K, V and O over the median. The chooser takes the decode kernel only where it measured')
    out.append('faster (2^19 key rows and more, on the H200); what limits it and the comparison with PyTorch are in')
    out.append('`docs/NOTES.md`. Commands: ' + '; '.join(f'`{c}`' for c in cmds) + '. Data: `bench/decode-kernel/`.')
    return '\n'.join(out)


def decode_mma_section(directory):
    """The decode kernel on the matrix units (flash_decode_mma) against PyTorch SDPA, one device session
    (bench/decode-mma/): contiguous, paged and (when measured) quantized caches and the other kernels."""
    d = os.path.join(directory, 'decode-mma')
    runs = {os.path.basename(p)[len('h200_'):-len('.json')]: json.load(open(p))
            for p in sorted(glob.glob(os.path.join(d, 'h200_b*_*.json')))}
    if not runs:
        return ''
    torch, sdpa = None, {}
    path = os.path.join(d, 'h200_sdpa.jsonl')
    if os.path.exists(path):
        for line in open(path):
            if not line.strip():
                continue
            r = json.loads(line)
            if 'torch' in r:
                torch = r['torch']
            elif 'backend' in r and 'error' not in r:
                sdpa[(r['backend'], r['batch'], r['cache'])] = r
    batches = sorted({int(k[1:].split('_')[0]) for k in runs})
    def get(b, variant, n):
        run = runs.get(f'b{b}_{variant}')
        return next((r for r in run['results'] if r.get('ran') and r['seq'] == n), None) if run else None
    def caches(b):
        return sorted({r['seq'] for v in ('auto', 'paged256', 'paged16') if f'b{b}_{v}' in runs
                       for r in runs[f'b{b}_{v}']['results'] if r.get('ran')})
    m4 = lambda r: f"{r['median_ms']:.4f}"
    ms4 = lambda r: f"{r['median_ms']:.4f} ({r['min_ms']:.4f}–{r['max_ms']:.4f})"
    quant = [v for v in ('int8', 'fp8e4m3', 'fp8e5m2') if any(f'b{b}_{v}' in runs for b in batches)]
    other = [v for v in ('cudacore', 'portable') if any(f'b{b}_{v}' in runs for b in batches)]

    out = ['| target | measured (GB/s, or step time against contiguous) | met |', '|---|---|---|']
    def row(name, cells, ok):
        out.append(f"| {name} | {', '.join(cells)} | {'yes' if ok else 'no'} |")
    shapes = [(b, n) for b in (1, 8) for n in (32768, 131072)]
    for backend, name in (('flash', 'FlashAttention-2'), ('cudnn', 'cuDNN')):
        cells, ok = [], True
        for b, n in shapes:
            r, t = get(b, 'auto', n), sdpa.get((backend, b, n))
            if r and t:
                cells.append(f"B={b} {n}: {r['gb_per_s']:.0f} vs {t['gb_per_s']:.0f}")
                ok = ok and r['gb_per_s'] >= t['gb_per_s']
            else:
                cells.append(f'B={b} {n}: not measured')
                ok = False
        row(('stretch: ' if backend == 'cudnn' else '') +
            f'contiguous fp16, B=1 and 8 × cache 32768 and 131072: GB/s ≥ {name} (same session)', cells, ok)
    r, t = get(1, 'auto', 8192), sdpa.get(('flash', 1, 8192))
    if r and t:
        row('B=1, cache 8192: GB/s ≥ FlashAttention-2', [f"{r['gb_per_s']:.0f} vs {t['gb_per_s']:.0f}"],
            r['gb_per_s'] >= t['gb_per_s'])
    cells, ok = [], True
    for b in batches:
        for page in (256, 16):
            deltas = []
            for n in caches(b):
                r, p = get(b, 'auto', n), get(b, f'paged{page}', n)
                if r and p:
                    x = p['median_ms'] / r['median_ms'] - 1
                    deltas.append(f'{100 * x:+.1f}%')
                    ok = ok and x <= 0.05
            if deltas:
                cells.append(f"B={b} pages of {page}: {' / '.join(deltas)}")
    if cells:
        row('paged caches (pages of 256 and of 16) within 5% of contiguous (step time, every cache length)', cells, ok)
    if quant:
        cells, ok = [], True
        for b in batches:
            r = get(b, 'auto', 131072)
            for v in quant:
                q = get(b, v, 131072)
                if r and q:
                    x = q['median_ms'] / r['median_ms']
                    cells.append(f'B={b} {v}: {x:.2f}×')
                    ok = ok and x <= 0.55
        if cells:
            row('int8 and fp8 caches: step ≤ 0.55× the fp16 step at cache 131072', cells, ok)

    out.append('')
    out.append('| B | cache | flashcl ms (min–max) | GB/s | splits | paged 256 ms (Δ%) | paged 16 ms (Δ%) | '
               'FA2 ms | GB/s | cuDNN ms | GB/s | flashcl / FA2 |')
    out.append('|---|---|---|---|---|---|---|---|---|---|---|---|')
    for b in batches:
        for n in caches(b):
            r = get(b, 'auto', n)
            fa, cu = sdpa.get(('flash', b, n)), sdpa.get(('cudnn', b, n))
            line = f"| {b} | {n} | {ms4(r)} | {r['gb_per_s']:.0f} | {r.get('kv_splits', 'auto')} |" \
                if r else f'| {b} | {n} | — | — | — |'
            for page in (256, 16):
                p = get(b, f'paged{page}', n)
                if p and r:
                    line += f" {m4(p)} ({100 * (p['median_ms'] / r['median_ms'] - 1):+.1f}%) |"
                else:
                    line += f' {m4(p)} |' if p else ' — |'
            for t in (fa, cu):
                line += f" {m4(t)} | {t['gb_per_s']:.0f} |" if t else ' — | — |'
            line += f" {r['gb_per_s'] / fa['gb_per_s']:.2f}× |" if r and fa else ' — |'
            out.append(line)
    if quant or other:
        out.append('')
        out.append('| B | cache | variant (file) | kernel | ms (min–max) | GB/s | step / fp16 step |')
        out.append('|---|---|---|---|---|---|---|')
        for b in batches:
            for v in quant + other:
                run = runs.get(f'b{b}_{v}')
                for q in sorted((x for x in run['results'] if x.get('ran')), key=lambda x: x['seq']) if run else ():
                    r = get(b, 'auto', q['seq'])
                    ratio = f"{q['median_ms'] / r['median_ms']:.2f}×" if r else '—'
                    out.append(f"| {b} | {q['seq']} | {v} | {q.get('kernel', '?')} | {ms4(q)} | {q['gb_per_s']:.0f} | {ratio} |")

    main = [r for k, run in runs.items() if k.endswith('_auto') for r in run['results'] if r.get('ran')]
    one = lambda key: ', '.join(str(v) for v in sorted({r.get(key) for r in main}, key=str))
    dtype = ', '.join(sorted({'fp16' if r['dtype'] == 'f16' else r['dtype'] for r in main}))
    meta = lambda key: ', '.join(sorted({str(run[key]) for run in runs.values()}))
    split_set = lambda b, vs: {r.get('kv_splits', 'auto') for v in vs if f'b{b}_{v}' in runs
                               for r in runs[f'b{b}_{v}']['results']}
    show = lambda x: ', '.join(sorted(map(str, x)))
    mixed = [f"B={b} the contiguous run's splits ({show(split_set(b, ('auto',)))}) and the paged runs' "
             f"({show(split_set(b, ('paged256', 'paged16')))})" for b in batches
             if split_set(b, ('paged256', 'paged16')) and split_set(b, ('auto',)) != split_set(b, ('paged256', 'paged16'))]
    cmds = sorted({run['command'].split(' --json')[0] for run in runs.values()})
    out.append('')
    out.append(f"One device session on the {meta('device')} ({meta('date')}; {meta('platform')}, driver "
               f"{meta('driver')}), seq_q {one('seq_q')}, Hq {one('heads')}, Hkv {one('heads_kv')}, d {one('head_dim')}, "
               f"{dtype} K/V" + (' (the quantized caches as named)' if quant else '') + '; flashcl medians of '
               f"{one('runs')} runs. GB/s = the bytes of Q, K, V and O over the median; Δ% is the paged step time against")
    out.append('the contiguous one; "splits" is the `--kv-splits` a run forced ("auto": the chooser\'s count, not recorded in')
    out.append('the JSON). PyTorch' + (f' {torch}' if torch else '') + ' SDPA in the same session (`bench/anchors/sdpa_decode.py`: '
               'median of 50 CUDA-event runs, GQA')
    out.append('through enable_gqa; FA2 is its flash backend).' +
               (' At ' + '; at '.join(mixed) + ' differ, so Δ% there is not the paging cost alone.' if mixed else ''))
    out.append('Commands: ' + '; '.join(f'`{c}`' for c in cmds) + '. Data: `bench/decode-mma/`. What limits it and how')
    out.append('the split rule was chosen: `docs/NOTES.md` ("the decode kernel on the matrix units").')
    note = os.path.join(d, 'note.md')  # what the data cannot say by itself (the code it was measured on)
    if os.path.exists(note):
        out.append('\n' + open(note).read().strip())
    return '\n'.join(out)


def refactor_section(directory):
    """The kernels before and after the architecture change (one table per kernel, shared parts, features
    compiled in only when used), measured in one device session beside PyTorch SDPA (bench/refactor/)."""
    runs = {os.path.basename(p)[len('h200_'):-len('.json')]: json.load(open(p))
            for p in sorted(glob.glob(os.path.join(directory, 'refactor', 'h200_*.json')))}
    sdpa = {}
    path = os.path.join(directory, 'refactor', 'h200_sdpa.jsonl')
    if os.path.exists(path):
        for line in open(path):
            r = json.loads(line)
            if 'backend' in r and 'tflops' in r:
                sdpa[(r['backend'], r['d'], r['n'], r['causal'])] = r['tflops']
    if not runs:
        return ''
    out = ['| dtype | kernel | d | N | mask | before: ms (min–max) | TFLOP/s | after: ms (min–max) | TFLOP/s | change | '
           'PyTorch same session |', '|---|---|---|---|---|---|---|---|---|---|---|']
    for kind in ('f32', 'f16'):
        base, new = runs.get('base_' + kind), runs.get('new_' + kind)
        if not base or not new:
            continue
        for r in new['results']:
            b = next((x for x in base['results'] if x['seq'] == r['seq'] and x['head_dim'] == r['head_dim'] and
                      x['causal'] == r['causal'] and x['dtype'] == r['dtype']), None)
            if not b or not r.get('ran') or not b.get('ran'):
                continue
            key = (r['head_dim'], r['seq'], r['causal'])
            if r['dtype'] == 'f32':
                ref = f"mem-efficient fp32 {sdpa[('efficient',) + key]:.1f}" if ('efficient',) + key in sdpa else ''
            else:
                ref = ', '.join(f"{name} {sdpa[(be,) + key]:.0f}" for be, name in (('flash', 'FA2'), ('cudnn', 'cuDNN'))
                                if (be,) + key in sdpa)
            out.append(f"| {r['dtype']} | {r.get('kernel', '?')} | {r['head_dim']} | {r['seq']} | "
                       f"{'causal' if r['causal'] else 'full'} | {ms(b)} | {b['tflops']:.2f} | {ms(r)} | "
                       f"{r['tflops']:.2f} | {100 * (r['tflops'] / b['tflops'] - 1):+.1f}% | {ref} |")
    cmds = sorted({run['command'].split(' --json')[0] for run in runs.values()})
    out.append('\nBefore: the kernels at commit d611790; after: this tree; both built and run in one session on the')
    out.append('H200 (`docs/gpu-runs/refactor-4/run.sh`; the earlier runs, `docs/gpu-runs/refactor-1` to `-3`, measured the')
    out.append('same non-causal rows within 1%, and the causal ones before the fix in `docs/NOTES.md`). PyTorch:')
    out.append('`bench/anchors/sdpa_prefill.py` in the same session (fp16')
    out.append('FlashAttention-2 and cuDNN, fp32 memory-efficient; TFLOP/s). Commands: ' + '; '.join(f'`{c}`' for c in cmds)
               + '. Data: `bench/refactor/`.')
    return '\n'.join(out)


def target_row(name, cases, want):
    """A targets table's row: cases are ((dtype, d, n, causal), flashcl result, reference result); met
    where every ratio of TFLOP/s is at least `want`. Returns the row and whether it was met."""
    cells, ok = [], True
    for (dt, dim, n, causal), r, t in cases:
        if r and t:
            x = r['tflops'] / t['tflops']
            cells.append(f"{dt} d={dim} N={n}{' causal' if causal else ''}: {r['tflops']:.1f} / {t['tflops']:.1f} = {x:.2f}×")
            ok = ok and x >= want
        else:
            cells.append(f"{dt} d={dim} N={n}: not measured")
            ok = False
    return f"| {name} | {'; '.join(cells)} | {'yes' if ok else 'no'} |", ok


def sdpa_prefill(paths):
    """bench/anchors/sdpa_prefill.py's JSON lines: {(backend, dtype, d, n, causal): result} and PyTorch's version."""
    sdpa, torch = {}, None
    for path in paths:
        for line in open(path):
            if line.strip():
                r = json.loads(line)
                if 'torch' in r:
                    torch = r['torch']
                elif 'tflops' in r:
                    sdpa[(r['backend'], r['dtype'], r['d'], r['n'], r['causal'])] = r
    return sdpa, torch


def prefill_section(directory):
    """flash_mma (fp16, bf16) and the portable kernel (fp32) against PyTorch SDPA on prefill shapes, each
    pair from one device call (bench/prefill/: flashcl bench JSON, h200_sdpa*.jsonl from
    bench/anchors/sdpa_prefill.py)."""
    d = os.path.join(directory, 'prefill')
    runs = {os.path.basename(p)[len('h200_'):-len('.json')]: json.load(open(p))
            for p in sorted(glob.glob(os.path.join(d, 'h200_*.json')))}
    if not runs:
        return ''
    sdpa, torch = sdpa_prefill(sorted(glob.glob(os.path.join(d, 'h200_sdpa*.jsonl'))))
    def fl(name, dim, n, causal):
        run = runs.get(name)
        return next((r for r in run['results'] if r.get('ran') and r['head_dim'] == dim and r['seq'] == n and
                     r['causal'] == causal), None) if run else None
    tdt = {'f16': 'float16', 'bf16': 'bfloat16', 'f32': 'float32'}
    out = ['| target (ratio to PyTorch in the same call) | measured | met |', '|---|---|---|']
    def target(name, cases, want, backend='flash'):
        row, ok = target_row(name, [((dt, dim, n, causal), fl(file, dim, n, causal),
                                     sdpa.get((backend, tdt[dt], dim, n, causal)))
                                    for file, dt, dim, n, causal in cases], want)
        out.append(row)
        return ok
    target('fp16 and bf16, d=128, N=4096 and 16384: ≥ 0.95× FlashAttention-2',
           [(f'{dt}_d128', dt, 128, n, False) for dt in ('f16', 'bf16') for n in (4096, 16384)], 0.95)
    target('causal, d=128: ≥ 0.95× FlashAttention-2 causal',
           [(f'{dt}_d128', dt, 128, n, True) for dt in ('f16', 'bf16') for n in (4096, 16384)], 0.95)
    target('d=64: ≥ 0.95×', [(f'{dt}_d64', dt, 64, n, False) for dt in ('f16', 'bf16') for n in (4096, 16384)], 0.95)
    target('d=256: ≥ 0.9×', [(f'{dt}_d256', dt, 256, n, False) for dt in ('f16', 'bf16') for n in (4096, 16384)], 0.9)
    target('N=1024, d=128: ≥ 0.85×', [(f'{dt}_d128', dt, 128, 1024, False) for dt in ('f16', 'bf16')], 0.85)
    allcases = [(f'{dt}_d{dim}', dt, dim, n, c) for dt, dim in (('f16', 64), ('bf16', 64), ('f16', 128), ('bf16', 128),
                                                                ('f16', 256), ('bf16', 256))
                for n in (1024, 4096, 16384) for c in (False, True)]
    above = [(f, dt, dim, n, c) for f, dt, dim, n, c in allcases if sdpa.get(('flash', tdt[dt], dim, n, c))]
    cells = [f"{dt} d={dim} N={n}{' causal' if c else ''}" for f, dt, dim, n, c in above
             if fl(f, dim, n, c) and fl(f, dim, n, c)['tflops'] > sdpa[('flash', tdt[dt], dim, n, c)]['tflops']]
    out.append(f"| stretch: above FlashAttention-2 everywhere | above at: {', '.join(cells) if cells else 'none'} | "
               f"{'yes' if len(cells) == len(above) and above else 'no'} |")
    target('fp32 (portable kernel), d=128 and d=64: ≥ 1.0× PyTorch fp32 memory-efficient',
           [(f'f32_d{dim}', 'f32', dim, n, False) for dim in (128, 64) for n in (4096, 16384)], 1.0, 'efficient')
    out.append('')
    out.append('Every shape (TFLOP/s; flashcl: median of profiling events with the spread, validated against the')
    out.append('naive kernel in the same run; PyTorch: median of CUDA events, `bench/anchors/sdpa_prefill.py`).')
    out.append('B·N = 16384 tokens, hidden 2048 (d=64 H=32, d=128 H=16, d=256 H=8).\n')
    out.append('| dtype | d | mask | N | flashcl ms (min–max) | flashcl TFLOP/s | FlashAttention-2 | ratio | cuDNN (fp16) |')
    out.append('|---|---|---|---|---|---|---|---|---|')
    for f, dt, dim, n, c in allcases:
        r = fl(f, dim, n, c)
        if not r:
            continue
        t, cu = sdpa.get(('flash', tdt[dt], dim, n, c)), sdpa.get(('cudnn', 'float16', dim, n, c))
        out.append(f"| {dt} | {dim} | {'causal' if c else 'full'} | {n} | {ms(r)} | {r['tflops']:.1f} | "
                   f"{t['tflops']:.1f} | {r['tflops'] / t['tflops']:.2f}× | {cu['tflops']:.1f} |" if t and cu else
                   f"| {dt} | {dim} | {'causal' if c else 'full'} | {n} | {ms(r)} | {r['tflops']:.1f} | — | — | — |")
    f32rows = [(dim, n, c) for dim in (128, 64) for n in (4096, 16384) for c in (False, True)
               if fl(f'f32_d{dim}', dim, n, c) and sdpa.get(('efficient', 'float32', dim, n, c))]
    if f32rows:
        out.append('')
        out.append('The portable kernel (fp32) against PyTorch\'s fp32 memory-efficient kernel:\n')
        out.append('| d | mask | N | flashcl ms (min–max) | flashcl TFLOP/s | PyTorch fp32 memory-efficient | ratio |')
        out.append('|---|---|---|---|---|---|---|')
        for dim, n, c in f32rows:
            r, e = fl(f'f32_d{dim}', dim, n, c), sdpa[('efficient', 'float32', dim, n, c)]
            out.append(f"| {dim} | {'causal' if c else 'full'} | {n} | {ms(r)} | {r['tflops']:.2f} | {e['tflops']:.1f} | "
                       f"{r['tflops'] / e['tflops']:.2f}× |")
    sh, tu = runs.get('f32_d128_shipped'), runs.get('f32_d128_tuned')
    if sh and tu:  # (prefill-6's comparison; its data now under bench/prefill/prefill-5)
        out.append('')
        out.append('The portable kernel (fp32, d=128) with the tuning entry shipped before (64 × 16 tiles, tuned under')
        out.append('48 KiB) and with the winner of `flashcl tune` under the static local-memory budget (128 × 32, now')
        out.append('shipped), against PyTorch\'s fp32 memory-efficient kernel:\n')
        out.append('| N | shipped before ms | TFLOP/s | re-tuned ms | TFLOP/s | PyTorch fp32 memory-efficient TFLOP/s |')
        out.append('|---|---|---|---|---|---|')
        for n in (4096, 16384):
            a, b, e = fl('f32_d128_shipped', 128, n, False), fl('f32_d128_tuned', 128, n, False), sdpa.get(('efficient', 'float32', 128, n, False))
            if a and b and e:
                out.append(f"| {n} | {ms(a)} | {a['tflops']:.2f} | {ms(b)} | {b['tflops']:.2f} | {e['tflops']:.1f} |")
        out.append('\n(The re-tuned entry was stored for N=4096\'s class by the run; at N=16384 that run still took the')
        out.append('old entry. The shipped table now has the new tiles for every length.)')
    cmds = sorted({run['command'].split(' --json')[0] for run in runs.values()})
    out.append(f"\nPyTorch {torch}. Commands: " + '; '.join(f'`{c}`' for c in cmds) +
               '. Run: `docs/gpu-runs/prefill/run15.sh` (every row and its PyTorch figures in one device call). Data: '
               '`bench/prefill/` (the tables before: prefill-12\'s and prefill-9\'s in `bench/prefill/prefill-12/`, '
               'prefill-5\'s in `bench/prefill/prefill-5/`).')
    return '\n'.join(out)


def dimv_section(directory):
    """V's own head dim (problem.head_dim_v): MLA's prefill, 192 over 128, beside the same shape with V at 192
    and PyTorch SDPA, all from one device call (bench/dimv/: flashcl bench JSON, h200_sdpa_dimv.jsonl from
    bench/anchors/sdpa_dimv.py)."""
    d = os.path.join(directory, 'dimv')
    dv_path, d192_path = os.path.join(d, 'h200_dimv.json'), os.path.join(d, 'h200_d192.json')
    if not os.path.exists(dv_path) or not os.path.exists(d192_path):
        return ''
    dv, same = json.load(open(dv_path)), json.load(open(d192_path))
    sdpa, torch = {}, None
    for line in open(os.path.join(d, 'h200_sdpa_dimv.jsonl')):
        if line.strip():
            r = json.loads(line)
            if 'torch' in r:
                torch = r['torch']
            else:
                sdpa[(r['backend'], r['causal'])] = r
    def get(run, causal):
        return next((r for r in run['results'] if r.get('ran') and r['causal'] == causal), None)
    out = ['| mask | flashcl 192/128 ms (min–max) | TFLOP/s | kernel | flashcl 192/192 TFLOP/s | cuDNN | memory-efficient '
           '| FlashAttention-2 | 192/128 ÷ cuDNN | ÷ memory-efficient |', '|---|---|---|---|---|---|---|---|---|---|']
    for causal in (False, True):
        r, s = get(dv, causal), get(same, causal)
        if not r:
            continue
        def t(backend):
            x = sdpa.get((backend, causal), {})
            return f"{x['tflops']:.1f}" if 'tflops' in x else 'refused'
        def ratio(backend):
            x = sdpa.get((backend, causal), {})
            return f"{r['tflops'] / x['tflops']:.2f}×" if 'tflops' in x else '—'
        out.append(f"| {'causal' if causal else 'full'} | {ms(r)} | {r['tflops']:.1f} | {r['kernel']} | "
                   f"{s['tflops']:.1f} | {t('cudnn')} | {t('efficient')} | {t('flash')} | {ratio('cudnn')} | {ratio('efficient')} |")
    out.append(f"\nB=4, H=16, N=4096, fp16; TFLOP/s count 2·B·H·pairs·(d + d_v), pairs halved under the causal mask. "
               f"PyTorch {torch}. Commands: `{dv['command'].split(' --json')[0]}`; `{same['command'].split(' --json')[0]}`; "
               "`bench/anchors/sdpa_dimv.py`. Run: `docs/gpu-runs/engine/run4.sh`. Data: `bench/dimv/`.")
    return '\n'.join(out)


def wgmma_section(directory):
    """flash_wgmma (Hopper's warpgroup MMA through sm_90a programs, as auto takes it) beside flash_mma and
    PyTorch SDPA (FlashAttention-2, cuDNN), all from one device call (bench/wgmma/: flashcl bench JSON named
    h200_<variant>_<d>_<dtype>[_causal].json, h200_sdpa.jsonl from bench/anchors/sdpa_prefill.py; the
    session before's in bench/wgmma/wgmma-9/)."""
    d = os.path.join(directory, 'wgmma')
    runs = {os.path.basename(p)[len('h200_'):-len('.json')]: json.load(open(p))
            for p in sorted(glob.glob(os.path.join(d, 'h200_*.json')))}
    if not runs:
        return ''
    rs, torch = sdpa_prefill([os.path.join(d, 'h200_sdpa.jsonl')])
    sdpa = {k: r['tflops'] for k, r in rs.items()}
    tdt = {'f16': 'float16', 'bf16': 'bfloat16'}
    def get(variant, dim, dt, n, causal):
        run = runs.get(f"{variant}_{dim}_{dt}{'_causal' if causal else ''}")
        return next((r for r in run['results'] if r.get('ran') and r['seq'] == n), None) if run else None
    out = ['| target (issue 17; ratios to PyTorch in the same call) | measured (flash_wgmma TFLOP/s / reference) | met |',
           '|---|---|---|']
    def target(name, cases, want, backend='flash'):
        out.append(target_row(name, [((dt, dim, n, causal), get('wgmma', dim, dt, n, causal),
                                      rs.get((backend, tdt[dt] if backend == 'flash' else 'float16', dim, n, causal)))
                                     for dim, dt, n, causal in cases], want)[0])
    target('fp16 and bf16, d=128, N=4096 and 16384: ≥ 1.5× FlashAttention-2',
           [(128, dt, n, False) for dt in ('f16', 'bf16') for n in (4096, 16384)], 1.5)
    target('stretch: ≥ cuDNN (fp16)', [(128, 'f16', n, False) for n in (4096, 16384)], 1.0, 'cudnn')
    target('d=64: ≥ 1.4× FlashAttention-2', [(64, 'f16', n, False) for n in (4096, 16384)], 1.4)
    target('d=256: ≥ 1.4× FlashAttention-2', [(256, 'f16', n, False) for n in (4096, 16384)], 1.4)
    c, f = get('wgmma', 128, 'f16', 16384, True), get('wgmma', 128, 'f16', 16384, False)
    if c and f:
        x = c['tflops'] / f['tflops']
        out.append(f"| causal ≥ 0.9× non-causal at N=16384 (fp16, d=128) | {c['tflops']:.1f} / {f['tflops']:.1f} = "
                   f"{x:.2f}× | {'yes' if x >= 0.9 else 'no'} |")
    out.append('')
    out.append('Every shape (TFLOP/s; flashcl: median of 10 profiling events, validated against the naive kernel in the')
    out.append('same run; the spread is flash_wgmma\'s). B·N = 16384 tokens, hidden 2048 (d=64 H=32, d=128 H=16,')
    out.append('d=256 H=8).\n')
    has_mma = any(k.startswith('mma') for k in runs)
    out.append('| dtype | d | mask | N | flash_wgmma ms (min–max) | flash_wgmma | ' + ('flash_mma | ' if has_mma else '') +
               'FlashAttention-2 | cuDNN (fp16) | wgmma / FA2 | wgmma / cuDNN |')
    out.append('|---|---|---|---|---|---|' + ('---|' if has_mma else '') + '---|---|---|---|')
    for dim, dt, causal in ((128, 'f16', False), (128, 'bf16', False), (128, 'f16', True), (64, 'f16', False),
                            (256, 'f16', False)):
        for n in (4096, 16384):
            w, m = (get(x, dim, dt, n, causal) for x in ('wgmma', 'mma'))
            if not w:
                continue
            fa, cu = sdpa.get(('flash', tdt[dt], dim, n, causal)), sdpa.get(('cudnn', 'float16', dim, n, causal))
            mc = (f"{m['tflops']:.1f} | " if m else '— | ') if has_mma else ''
            out.append(f"| {dt} | {dim} | {'causal' if causal else 'full'} | {n} | {ms(w)} | {w['tflops']:.1f} | "
                       f"{mc}{fa:.1f} | {cu:.1f} | {w['tflops'] / fa:.2f}× | {w['tflops'] / cu:.2f}× |"
                       if fa and cu else f"| {dt} | {dim} | {'causal' if causal else 'full'} | {n} | {ms(w)} | "
                       f"{w['tflops']:.1f} | {mc}— | — | — | — |")
    assert all(r['kernel'] == ('flash_mma' if k.startswith('mma') else 'flash_wgmma') and r['passed']
               for k, run in runs.items() for r in run['results'] if r.get('ran'))
    cmds = sorted({run['command'].split(' --json')[0] for run in runs.values()})
    out.append(f"\nPyTorch {torch}. Commands: " + '; '.join(f'`{c}`' for c in cmds) + ' — flash_wgmma as auto takes '
               'it on this device (`FLASHCL_PATH=auto`; since wgmma-16 with the 128-byte swizzled tiles at d=128 and '
               'd=256 and the producer warpgroup at every head dim). Run: wgmma-18 in `docs/NOTES.md` (these JSON '
               'files and PyTorch in one device call; wgmma-17, `docs/gpu-runs/wgmma/run16.sh`, measured the same '
               'figures within 1% and flash_mma beside them, 311.0 / 323.0 TFLOP/s at fp16 d=128). Data: '
               '`bench/wgmma/` (before the swizzled tiles, wgmma-15: `bench/wgmma/wgmma-15/`, with flash_mma; the '
               'session before\'s, wgmma-9: `bench/wgmma/wgmma-9/`).')
    return '\n'.join(out)


def main():
    directory = sys.argv[1] if len(sys.argv) > 1 else 'bench'
    runs = load(directory)
    before = load(os.path.join(directory, 'before'))
    print('# Benchmarks\n')
    print('Generated by `python3 tools/benchmarks_md.py bench > BENCHMARKS.md` from the JSON files `flashcl bench`')
    print('wrote into `bench/`; do not edit by hand. Times are medians of OpenCL profiling events (a marker before')
    print("each run, the last command's end after it), warm-up and compilation excluded, with the spread (min–max)")
    print("of the timed runs. FLOPs: 4·B·H·Sq·Sk·d, only computed pairs under a causal mask. Every algorithm's")
    print('output was validated against the naive kernel in the same run. "Extra" is the device memory an')
    print("algorithm allocates beyond the caller's Q, K, V and O (`flashcl_plan_extra_device_bytes`). The commands")
    print("are as each run recorded them: before release 0.2.0 `--max-seconds N` capped each measurement at N")
    print("seconds; now it is the whole bench's budget, so drop it to reproduce these runs.\n")
    dvs = dimv_section(directory)
    if dvs:
        print('## V\'s own head dim (MLA\'s prefill) on the H200 against PyTorch, one session\n')
        print('`problem.head_dim_v`: 192-wide queries and keys over 128-wide values, on the matrix-unit kernel, beside')
        print('the same shape with V at 192 and PyTorch SDPA in the same device call (engine-4 in `docs/NOTES.md`).\n')
        print(dvs + '\n')
    wg = wgmma_section(directory)
    if wg:
        print('## Hopper\'s warpgroup MMA (flash_wgmma) on the H200 against PyTorch, one session\n')
        print('fp16/bf16 at head dims 64, 128 and 256 on devices whose sm_90a probe passed (auto takes it there;')
        print('`flashcl tiles` says so): wgmma from OpenCL C through PTX finished for sm_90a, two consumer warpgroups')
        print('of 64 query rows, the softmax of one tile beside the products of the last, K/V by cp.async through L1')
        print('in two stages into 128-byte swizzled tiles (d=128, d=256), issued by a producer warpgroup with')
        print('per-stage mbarriers and setmaxnreg. wgmma-9 to -18 in `docs/NOTES.md` give every step\'s prediction')
        print('and result and what limits it.\n')
        print(wg + '\n')
    pf = prefill_section(directory)
    if pf:
        print('## Prefill on the H200 against PyTorch, one session\n')
        print('The matrix-unit kernel (fp16, bf16; since wgmma-9 auto takes flash_wgmma on Hopper, above) and the')
        print('portable kernel (fp32) beside PyTorch SDPA measured in the same device call (prefill-15). What each change moved, what')
        print('limits the figures that miss their target and what was tried: `docs/NOTES.md` (2026-12-01, second,')
        print('third and fifth sessions).')
        print('The sections after this one are the project\'s earlier measurements.\n')
        print(pf + '\n')
    print('## Against PyTorch on the same GPU (d=128, H=16, B·N=16384, TFLOP/s)\n')
    mma = load(os.path.join(directory, 'mma'))
    print("PyTorch 2.11 SDPA figures are the anchors measured on this H200 for the design notes; flashcl's are from the")
    print('tables below: the portable register-blocked kernel (no vendor extension) on fp32, and the matrix-unit')
    print('kernel (inline PTX mma.sync) on fp16. These are 2026-11-29\'s figures, before the inference features')
    print('(the portable kernel then measured 22.0 at d=128) and the static local-memory budget; today\'s are the')
    print('prefill table at the top: 31.0 for the portable kernel, 310–323 for the matrix-unit kernel.\n')
    print(anchors(runs, mma) + '\n')
    print('## Speed targets of the portable kernel (fp32)\n')
    print('Computed from the tables below. What limits the figures that miss, what was tried, and the prediction')
    print('written before each change are in `docs/NOTES.md` ("The speed work"). In short: NVIDIA\'s OpenCL gives')
    print('a work-group 48 KiB of local memory (CUDA allows 227 KiB); at d=128 a resident fp32 Q tile of 64 rows')
    print('takes 33 KiB of it, which leaves room for 16-key tiles only, and the kernel already uses 128 registers.\n')
    print(targets(runs) + '\n')
    if mma:
        print('## The matrix-unit kernel (flash_mma: tensor cores through inline PTX)\n')
        print('fp16/bf16 on NVIDIA GPUs of compute capability 8.0 and up, chosen automatically (`flashcl tiles` says')
        print('which kernel a problem gets and why). Predictions, what each change moved and what limits it:')
        print('`docs/NOTES.md` ("The matrix-unit kernel").\n')
        print(mma_section(mma, runs) + '\n')
    ref = refactor_section(directory)
    if ref:
        print('## The architecture change: the same kernels from shared parts, features compiled in only when used\n')
        print('The plain fp32 path had lost 12% at d=128 to the inference features (`docs/NOTES.md`); with the')
        print('causal mask, windows, the softcap and split-KV compiled in only when a problem has them it is back.')
        print('Before and after, in one session:\n')
        print(ref + '\n')
    dm = decode_mma_section(directory)
    if dm:
        print('## Decode on the matrix units (flash_decode_mma) against PyTorch, one session\n')
        print(dm + '\n')
    dk = decode_kernel_section(directory)
    if dk:
        print('## The decode kernel (first version) against the portable kernel\'s decode path\n')
        print(dk + '\n')
    dec = load(os.path.join(directory, 'decode'))
    if dec:
        print('## Decode (one query against a long KV cache) on the H200\n')
        print('What limits these and what was tried: `docs/NOTES.md` ("Decode on the H200").\n')
        print(decode_section(dec, directory) + '\n')
    print('## Before and after register blocking (flash, same shapes and command)\n')
    print('"Before" is the first portable kernel (one local load per FMA, `bench/before/`), "now" the tables below.\n')
    print(before_after(runs, before) + '\n')
    print('## Flash against standard attention (time of standard / time of flash, same run)\n')
    print('Above 1 flash is faster. Standard attention writes the n×n scores to device memory; where it cannot')
    print('allocate them, flash still runs with no extra memory at all (the O(n) point, `--preset long`).\n')
    print(standings(runs) + '\n')
    for run in runs:
        print('## %s (%s, driver %s), %s\n' % (run['device'], run['platform'], run['driver'], run['date']))
        print('Command: `%s` (flashcl %s); data: `bench/%s`\n' % (run['command'], run['flashcl'], run['file']))
        svg = os.path.splitext(run['file'])[0] + '.svg'
        if os.path.exists(os.path.join(directory, svg)):
            print(f"![time and memory against N](bench/{svg})\n")
        print(table(run) + '\n')


if __name__ == '__main__':
    main()
