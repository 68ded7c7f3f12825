#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes BENCHMARKS.md from the JSON that `flashcl bench` wrote into bench/, so the page cannot
drift from the measurements. Usage: python3 tools/benchmarks_md.py [bench-dir] > BENCHMARKS.md"""
import glob
import json
import statistics
import os
import re
import sys

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


def decode_kernel_section(directory):
    """The decode kernel (cl/flash_decode.cl) against the portable kernel's decode path, one run."""
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
    gpu = gpu_of(os.path.join(directory, 'decode-kernel'))
    out.append(f'\nOne run on the {gpu} (both kernels measured together; the decode rows are the kernel as it now stands:')
    out.append('each key\'s row on its own, the exact exp2), seq_q 1, Hq 32, Hkv 8, d 128, fp16 K/V;')
    out.append('GB/s of Q, K, V and O over the median. The chooser takes the decode kernel only where it measured')
    out.append('faster on the H200 (2^19 key rows and more; on matrix units it takes flash_decode_mma, above); what')
    out.append('limits it and the comparison with PyTorch: `docs/design/decode.md`. Commands: ' +
               '; '.join(f'`{c}`' for c in cmds) + '. Data: `bench/decode-kernel/`.')
    return '\n'.join(out)


def decode_mma_section(directory):
    """The decode kernel on the matrix units (flash_decode_mma) against PyTorch SDPA, one run
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
    # a step against another: the device's time alone where both have it (device_us: what a step costs the
    # GPU, the enqueue call out), else the median (which holds the enqueue call on an idle queue)
    ratio = lambda a, b: (a['device_us'] / b['device_us'] if a.get('device_us') and b.get('device_us')
                          else a['median_ms'] / b['median_ms'])
    both_dev = lambda pairs: all(a.get('device_us') and b.get('device_us') for a, b in pairs)
    # SDPA's device time: its graph's replays back to back (device_us, each reading the K/V the one before
    # left in L2), and over rotated K/V copies where one copy fits L2 (device_cold_us; else its replays')
    sdpa_warm = lambda t: t.get('device_us') if t else None
    sdpa_cold = lambda t: (t.get('device_cold_us') or (t.get('device_us') if t.get('copies') == 1 else None)) \
        if t else None
    b2b = any(r.get('device_b2b_us') for run in runs.values() for r in run['results'])
    cold = any(t.get('device_cold_us') for t in sdpa.values())
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
            f'contiguous fp16, B=1 and 8 × cache 32768 and 131072: GB/s ≥ {name} (same run; each side\'s timed call, '
            'its host\'s share included)', cells, ok)
    r, t = get(1, 'auto', 8192), sdpa.get(('flash', 1, 8192))
    if r and t:
        row('B=1, cache 8192: GB/s ≥ FlashAttention-2 (the timed call, as above)',
            [f"{r['gb_per_s']:.0f} vs {t['gb_per_s']:.0f}"],
            r['gb_per_s'] >= t['gb_per_s'])
    cells, ok, pairs = [], True, []
    for b in batches:
        for page in (256, 16):
            deltas = []
            for n in caches(b):
                r, p = get(b, 'auto', n), get(b, f'paged{page}', n)
                if r and p:
                    x = ratio(p, r) - 1
                    pairs.append((p, r))
                    deltas.append(f'{100 * x:+.1f}%')
                    ok = ok and x <= 0.05
            if deltas:
                cells.append(f"B={b} pages of {page}: {' / '.join(deltas)}")
    if cells:
        row('paged caches (pages of 256 and of 16) within 5% of contiguous (' +
            ('the device\'s step time' if both_dev(pairs) else 'step time') + ', every cache length)', cells, ok)
    if quant:
        cells, ok, pairs = [], True, []
        for b in batches:
            r = get(b, 'auto', 131072)
            for v in quant:
                q = get(b, v, 131072)
                if r and q:
                    x = ratio(q, r)
                    pairs.append((q, r))
                    cells.append(f'B={b} {v}: {x:.2f}×')
                    ok = ok and x <= 0.55
        if cells:
            row('int8 and fp8 caches: ' + ('the device\'s step' if both_dev(pairs) else 'step') +
                ' ≤ 0.55× the fp16 step at cache 131072', cells, ok)
    # the device's time against cuDNN's, like with like: steps back to back (flashcl's device_b2b_us against
    # the graph's replays), and K/V from memory (device_us, behind a fill, against the rotated copies); files
    # before device_b2b_us: device_us against the replays
    # (a row without device_b2b_us falls back to its device_us, marked †)
    ours_b2b = lambda r: (r.get('device_b2b_us') or r.get('device_us'), '' if r.get('device_b2b_us') else '†')
    ours_dev = lambda r: (r.get('device_us'), '')
    pairs = ([(ours_b2b, sdpa_warm, 'steps back to back: flashcl\'s `device_b2b_us` († its `device_us` where that '
               'is not measured) against SDPA\'s CUDA-graph replays')] if b2b else
             [(ours_dev, sdpa_warm, 'flashcl\'s `device_us` against SDPA\'s CUDA-graph replays')])
    if b2b and cold:
        pairs.append((ours_dev, sdpa_cold, 'K and V from memory: flashcl\'s `device_us`, behind a fill, against '
                      'SDPA\'s replays over rotated copies'))
    for ours, theirs, what in pairs:
        cells, ok = [], True
        for b in batches:
            for n in caches(b):
                r, t = get(b, 'auto', n), sdpa.get(('cudnn', b, n))
                if r and ours(r)[0] and theirs(t):
                    cells.append(f"B={b} {n}: {ours(r)[0]:.1f}{ours(r)[1]} vs {theirs(t):.1f}")
                    ok = ok and ours(r)[0] <= theirs(t)
        if cells:
            row(f'the device\'s time ≤ cuDNN\'s, every shape, µs ({what})', cells, ok)

    out.append('')
    host = any('host_step_us' in r for run in runs.values() for r in run['results'])
    dev = any(r.get('device_us') for run in runs.values() for r in run['results'])
    cold_cols = b2b and cold
    out.append('| B | cache | flashcl ms (min–max) | GB/s | splits | paged 256 ms (Δ%) | paged 16 ms (Δ%) | '
               'FA2 ms | GB/s | cuDNN ms | GB/s | flashcl / FA2 |' +
               (' host µs a step: flashcl (its enqueue) | FA2 | cuDNN |' if host else '') +
               (' device µs' + (', back to back' if b2b else '') + ': flashcl | FA2 | cuDNN |' if dev else '') +
               (' device µs, K/V from memory: flashcl | cuDNN |' if cold_cols else ''))
    out.append('|---|---|---|---|---|---|---|---|---|---|---|---|' + ('---|---|---|' if host else '') +
               ('---|---|---|' if dev else '') + ('---|---|' if cold_cols else ''))
    for b in batches:
        for n in caches(b):
            r = get(b, 'auto', n)
            fa, cu = sdpa.get(('flash', b, n)), sdpa.get(('cudnn', b, n))
            line = f"| {b} | {n} | {ms4(r)} | {r['gb_per_s']:.0f} | {r.get('kv_splits', 'auto')} |" \
                if r else f'| {b} | {n} | — | — | — |'
            for page in (256, 16):
                p = get(b, f'paged{page}', n)
                if p and r:
                    line += f" {m4(p)} ({100 * (ratio(p, r) - 1):+.1f}%) |"
                else:
                    line += f' {m4(p)} |' if p else ' — |'
            for t in (fa, cu):
                line += f" {m4(t)} | {t['gb_per_s']:.0f} |" if t else ' — | — |'
            line += f" {r['gb_per_s'] / fa['gb_per_s']:.2f}× |" if r and fa else ' — |'
            if host:
                line += (f" {r['host_step_us']:.0f} ({r['host_enqueue_us']:.0f}) |" if r and 'host_step_us' in r
                         else ' — |')
                for t in (fa, cu):
                    line += f" {t['host_step_us']:.0f} |" if t and 'host_step_us' in t else ' — |'
            if dev:
                mine = (ours_b2b if b2b else ours_dev)(r) if r else (None, '')
                line += f" {mine[0]:.1f}{mine[1]} |" if mine[0] else ' — |'
                for t in (fa, cu):
                    line += f" {sdpa_warm(t):.1f} |" if sdpa_warm(t) else ' — |'
            if cold_cols:
                line += f" {r['device_us']:.1f} |" if r and r.get('device_us') else ' — |'
                line += f" {sdpa_cold(cu):.1f} |" if sdpa_cold(cu) else ' — |'
            out.append(line)
    if host:
        queues = {r.get('host_queue', 'profiling') for run in runs.values() for r in run['results'] if 'host_step_us' in r}
        out.append('\nflashcl\'s host µs a step: from the enqueue call to the step complete, ' +
                   ('on an in-order queue without profiling and no event asked for, as an engine\'s loop runs it '
                    '(`host_queue` "plain"; steps over 5 ms on the profiling queue they were timed on, with an '
                    'event: "profiling"); PyTorch\'s from the call to `torch.cuda.synchronize()`.'
                    if 'plain' in queues else
                    'on the profiling queue the kernel was timed on, with an event asked for (files before release '
                    '0.7.1): NVIDIA\'s driver takes 9.8 µs to launch with an event there against 3.3 without one '
                    '(tools/enqueue_probe on the H100, docs/design/decode_mma.md), so these overstate what an '
                    'engine\'s loop pays; PyTorch\'s from the call to `torch.cuda.synchronize()`.') +
                   ' For steps of tens of µs the ms columns hold the enqueue call too (flashcl\'s from a marker that '
                   'an idle queue ends before the plan is submitted, PyTorch\'s from CUDA events around its call: '
                   'docs/design/decode_mma.md, decode-mma-15): neither is a device time there.')
    if dev and b2b:
        out.append('\nDevice µs: the GPU\'s time for a step with no enqueue call in it. Back to back: flashcl\'s '
                   '`device_b2b_us`, 8 steps enqueued behind buffer fills and run back to back, the time each adds (†: '
                   'not measured, its `device_us` in its place); '
                   'PyTorch\'s, a CUDA graph of the call replayed back to back, each replay\'s launch hidden under the '
                   'one before. Both read the K and V the step before read, from L2 where they fit it (the H100\'s '
                   '50 MB: batch 1 × 8192\'s 33.5 MB).' +
                   (' K/V from memory: flashcl\'s `device_us`, from the end of a fill (at least 1 MiB written) to '
                    'one step\'s end, its kernel\'s start on the GPU included (4.5 µs for an empty kernel on the '
                    'H100); cuDNN\'s replays over copies of K and V rotated so that none is read from L2 '
                    '(`device_cold_us`; its plain replays where one copy is past 128 MiB).' if cold_cols else '') +
                   ' (docs/design/decode_mma.md, decode-mma-22 and -25.)')
    elif dev:
        out.append('\nDevice µs: the GPU\'s time for a step with no enqueue call in it. flashcl\'s `device_us`: from the '
                   'end of a buffer fill that keeps the queue busy while the step is enqueued to the step\'s end (it '
                   'holds the kernel\'s start on the GPU, 4.5 µs for an empty kernel on the H100; the fill writes '
                   'at least 1 MiB before each step). PyTorch\'s: a CUDA graph of the call replayed back to back, '
                   'each replay\'s launch hidden under the one before; its replays read the same K and V, which at '
                   'batch 1 × 8192 (33.5 MB) fit the H100\'s 50 MB L2, so that figure may come from L2 '
                   '(docs/design/decode_mma.md, decode-mma-22).')
    if quant or other:
        out.append('')
        out.append('| B | cache | variant (file) | kernel | ms (min–max) | GB/s | device µs | step / fp16 step |')
        out.append('|---|---|---|---|---|---|---|---|')
        for b in batches:
            for v in quant + other:
                run = runs.get(f'b{b}_{v}')
                for q in sorted((x for x in run['results'] if x.get('ran')), key=lambda x: x['seq']) if run else ():
                    r = get(b, 'auto', q['seq'])
                    x = f"{ratio(q, r):.2f}×" if r else '—'
                    dv = f"{q['device_us']:.1f}" if q.get('device_us') else '—'
                    out.append(f"| {b} | {q['seq']} | {v} | {q.get('kernel', '?')} | {ms4(q)} | {q['gb_per_s']:.0f} | "
                               f"{dv} | {x} |")

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
    out.append(f"One run on the {meta('device')} ({meta('date')}; {meta('platform')}, driver "
               f"{meta('driver')}), seq_q {one('seq_q')}, Hq {one('heads')}, Hkv {one('heads_kv')}, d {one('head_dim')}, "
               f"{dtype} K/V" + (' (the quantized caches as named)' if quant else '') + '; flashcl medians of '
               f"{one('runs')} runs. GB/s = the bytes of Q, K, V and O over the median; Δ% is the paged step time "
               "(the device's, where both have it) against")
    out.append('the contiguous one, as is a variant\'s "step / fp16 step"; "splits" is the `--kv-splits` a run forced '
               '("auto": the chooser\'s count, not recorded in')
    out.append('the JSON). PyTorch' + (f' {torch}' if torch else '') + ' SDPA in the same run (`bench/anchors/sdpa_decode.py`: '
               'median of 50 CUDA-event runs, GQA')
    out.append('through enable_gqa; FA2 is its flash backend).' +
               (' Host µs a step: the median time from the call to its work finished on an idle GPU (flashcl: the '
                'enqueue to its event complete, in brackets the enqueue call alone; PyTorch: the call, then '
                'torch.cuda.synchronize()).' if host else '') +
               (' At ' + '; at '.join(mixed) + ' differ, so Δ% there is not the paging cost alone.' if mixed else ''))
    out.append('Commands: ' + '; '.join(f'`{c}`' for c in cmds) + '. Data: `bench/decode-mma/`. What limits it and how')
    out.append('the split rule was chosen: `docs/design/decode_mma.md`.')
    note = os.path.join(d, 'note.md')  # what the data cannot say by itself (the code it was measured on)
    if os.path.exists(note):
        out.append('\n' + open(note).read().strip())
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


def gpu_of(directory, pattern='h200_*.json'):
    """The GPU a section's runs measured, short ("H100" of "NVIDIA H100 80GB HBM3"), from its flashcl JSON files
    (bench/h200.sh names them h200_* on whichever Hopper GPU it ran)."""
    names = {json.load(open(p)).get('device', '') for p in glob.glob(os.path.join(directory, pattern))}
    short = sorted({next((w for w in n.split() if w[:1] in 'HABL' and w[1:].isdigit()), n) for n in names if n})
    return ' and '.join(short) or 'H200'


def first_date(runs):
    """The dates of a section's flashcl runs, one or a range."""
    dates = sorted({run.get('date', '') for run in runs.values()} - {''})
    return dates[0] if len(dates) == 1 else f'{dates[0]} to {dates[-1]}' if dates else 'undated'


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


def amd_section(directory):
    """The AMD kernels' and flash_dpas's predictions (bench/amd/predictions.json, bench/amd/model.py): no AMD or
    Intel GPU has run them."""
    path = os.path.join(directory, 'amd', 'predictions.json')
    if not os.path.exists(path):
        return None
    m = json.load(open(path))
    out = ['| GPU (target) | matrix instructions a tile | VALU a tile (AGPR moves, v_exp) | waves a SIMD | '
           'clocks a SIMD: matrix core / VALU | limit | predicted TFLOP/s | peak |', '|---|---|---|---|---|---|---|---|']
    for r in m['rows']:
        lo, hi = r['predicted_tflops']
        out.append(f"| {r['gpu']} ({r['target']}, {r['isa']}) | {r['mfma']} | {r['valu']} ({r['agpr_moves']}, {r['exp']}) | "
                   f"{r['occupancy']} | {r['matrix_clocks']} / {r['valu_clocks']} | {r['limit']} | **{lo}–{hi}** (predicted) | "
                   f"{r['peak_tflops']:g} |")
    out.append('')
    out.append(f"{m['kernels']}: {m['problem']}, a wave's tile; CDNA compiled by {m['clang']} with ROCm's device libraries, "
               f"RDNA3 by clang 19 with libclc, pvc and acm-g10 by ocloc 22.43, bmg-g21 by Debian unstable's IGC 2.x (an EU's "
               f"clocks, a sub-group's tile; send and sync "
               f"instructions not counted; the A770's figure counts only the share of its dpas that is not repeated by "
               f"the two sub-groups that split O's columns, {next((r['useful'] for r in m['rows'] if r.get('useful', 1) < 1), 1):g}); "
               f"{m['date']}. The anchors to beat: {m['anchor']}.")
    out.append('The lower end: no VALU work hidden under the other wave\'s MFMAs; the upper end: all of it. How the clocks')
    out.append('are counted and what would move them: `docs/design/mfma.md`. Commands: `tools/vendor_check.sh build`;')
    out.append('`python3 bench/amd/model.py > bench/amd/predictions.json`. The first thing to measure when an AMD GPU is lent.')
    return '\n'.join(out)


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
    out = ['| target (ratio to PyTorch in the same run) | measured | met |', '|---|---|---|']
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
    cmds = sorted({run['command'].split(' --json')[0] for run in runs.values()})
    out.append(f"\nPyTorch {torch}. Commands: " + '; '.join(f'`{c}`' for c in cmds) +
               ' (fp16 and bf16 on flash_mma, what auto took on the H200 before flash_wgmma: `bench/h200.sh` runs them '
               'with `--path mma`). Every row and its PyTorch figures from one run. Data: `bench/prefill/`.')
    return '\n'.join(out)


def tf32_section(directory):
    """fp32 prefill on flash_mma's TF32 paths (problem.precision) and the portable kernel's fp32, beside PyTorch's
    fp32 memory-efficient kernel, from one device call (bench/prefill/tf32/: flashcl bench JSON, h200_sdpa.jsonl;
    bench/prefill/tf32_h200.sh)."""
    d = os.path.join(directory, 'prefill', 'tf32')
    runs = {os.path.basename(p)[len('h200_'):-len('.json')]: json.load(open(p))
            for p in sorted(glob.glob(os.path.join(d, 'h200_d*.json')))}
    if not runs:
        return ''
    sdpa = {}
    for line in open(os.path.join(d, 'h200_sdpa.jsonl')):
        r = json.loads(line) if line.strip() else {}
        if 'tflops' in r and not r['causal']:
            sdpa[(r['d'], r['n'])] = r
    out = ['| d | N | precision | kernel | ms (min–max) | TFLOP/s | validated | PyTorch fp32 (memory-efficient) TFLOP/s '
           '| ÷ PyTorch |', '|---|---|---|---|---|---|---|---|---|']
    for dim in (128, 64):
        for prec in ('fp32', 'tf32x3', 'tf32'):
            run = runs.get(f'd{dim}_{prec}')
            r = next((x for x in run['results'] if x.get('ran')), None) if run else None
            if not r:
                continue
            ref = sdpa.get((dim, r['seq']))
            val = (f"pass ({r['max_rel_error']:.1e})" if r.get('passed') else
                   f"**failed** ({r['max_rel_error']:.1e}; the tolerance {max(2 ** -23 * (8 + 2 * r['seq'] ** 0.5), 2 ** -17):.1e} "
                   "of the row's scale)")
            out.append(f"| {dim} | {r['seq']} | {prec} | {r['kernel']} | {ms(r)} | {r['tflops']:.1f} | {val} | "
                       f"{ref['tflops']:.1f} | {r['tflops'] / ref['tflops']:.2f}× |" if ref else '| — | — |')
    cmds = sorted({run['command'].split(' --json')[0] for run in runs.values()})
    out.append('')
    out.append('Commands: ' + '; '.join(f'`{c}`' for c in cmds) + f" (flashcl {next(iter(runs.values()))['flashcl']}, "
               f"{next(iter(runs.values()))['date']}); PyTorch: `bench/anchors/sdpa_prefill.py efficient 128,64`.")
    return '\n'.join(out)


def fp8_section(directory):
    """fp8 attention (E4M3 Q, K and V, per-head descale factors) on flash_wgmma's fp8 products against its fp16 on
    the same shapes, interleaved rounds of one device call (bench/prefill/fp8/: the f16-* and fp8-* JSON that
    bench/prefill/fp8_h200.sh writes); each shape's median over the rounds' medians."""
    d = os.path.join(directory, 'prefill', 'fp8')
    files = sorted(glob.glob(os.path.join(d, 'f*-*-*.json')))
    if not files:
        return ''
    cells, first = {}, None
    for path in files:
        run = json.load(open(path))
        first = first or run
        variant = os.path.basename(path).split('-')[0]
        for r in run['results']:
            if r.get('ran'):
                key = (r['head_dim'], r['seq'], r['causal'])
                cells.setdefault(key, {}).setdefault(variant, []).append(r)
    sdpa = {}  # (the same call's fp16 SDPA, where the run kept it: sdpa.jsonl)
    if os.path.exists(os.path.join(d, 'sdpa.jsonl')):
        for line in open(os.path.join(d, 'sdpa.jsonl')):
            r = json.loads(line) if line.strip() else {}
            if r.get('dtype') == 'float16' and 'tflops' in r:
                sdpa[(r['backend'], r['d'], r['n'], r['causal'])] = r['tflops']
    out = ['| d | N | mask | fp16 ms (min–max) | fp16 TFLOP/s | fp8 ms (min–max) | fp8 TFLOP/s | fp8 ÷ fp16 | cuDNN fp16 '
           '| FA2 fp16 | fp8 kernel | fp8 validated (max error / row scale) |', '|---|---|---|---|---|---|---|---|---|---|---|---|']
    def ms(runs):  # the median run's time, with the spread over every timed run of every round
        mid = sorted(runs, key=lambda r: r['median_ms'])[len(runs) // 2]
        lo, hi = min(r.get('min_ms', r['median_ms']) for r in runs), max(r.get('max_ms', r['median_ms']) for r in runs)
        return f"{mid['median_ms']:.3f} ({lo:.3f}–{hi:.3f})"
    for (dim, n, causal), v in sorted(cells.items(), key=lambda kv: (kv[0][2], kv[0][0], kv[0][1])):
        f16, f8 = v.get('f16', []), v.get('fp8', [])
        if not f16 or not f8:
            continue
        t16 = statistics.median(r['tflops'] for r in f16)
        t8 = statistics.median(r['tflops'] for r in f8)
        err = max(r.get('max_rel_error') or 0 for r in f8)
        ok = all(r.get('passed') for r in f8)
        anchor = [sdpa.get((b, dim, n, causal)) for b in ('cudnn', 'flash')]
        cud, fa2 = (f'{a:.1f}' if a else '—' for a in anchor)
        out.append(f"| {dim} | {n} | {'causal' if causal else 'none'} | {ms(f16)} | {t16:.1f} | {ms(f8)} | {t8:.1f} | "
                   f"{t8 / t16:.2f}× | {cud} | "
                   f"{fa2} | {f8[0].get('kernel', '')} | {'pass' if ok else '**failed**'} ({err:.1e}) |")
    out.append('')
    out.append(f"Command: `bench/prefill/fp8_h200.sh` (flashcl {first['flashcl']}, {first['date']}): `flashcl bench "
               f"--fp8 e4m3 --descale head` against the same command without `--fp8`, in alternating rounds; PyTorch's fp16 "
               "SDPA by `bench/anchors/sdpa_prefill.py cudnn,flash` in the same call.")
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
               "`bench/anchors/sdpa_dimv.py`. Data: `bench/dimv/`.")
    return '\n'.join(out)


def serving_label(r):
    """The serving preset's shape of a result (flashcl bench --preset serving) and the anchor feature name
    bench/anchors/flex_serving.py gives the same shape (None: no PyTorch kernel takes it)."""
    if r.get('seq_q', r['seq']) != r['seq']:
        return 'chunked prefill (1024 queries over 16384 keys, pages of 16)', None
    if r.get('varlen') and r.get('page_size'):
        return 'packed sequences over a paged cache (pages of 16)', None
    if r.get('varlen'):
        return 'packed sequences (lengths N/2 to N)', 'varlen'
    if r.get('page_size'):
        return 'paged KV cache, pages of 16', None
    if r.get('softcap'):
        return 'softcap 50', 'softcap 50'
    if r.get('alibi'):
        return 'ALiBi', 'alibi'
    if 'window_left' in r:
        return 'window 1024 (causal)', 'window 1024,0'
    if 'sinks' in r:
        return 'sinks 0.5', None
    if r.get('mask') == 'bool':
        return 'boolean mask (one (N, N) for every batch and head)', 'bool mask'
    if r.get('key_padding'):
        return "key padding (each sequence's last eighth)", 'key padding'

    if r['head_dim'] != 128:
        d, dv = r['head_dim'], r.get('head_dim_v', r['head_dim'])
        return f'd={d}' + (f' over d_v={dv}, H=16' if dv != d else ''), f'd{d}/{dv}'
    return 'plain', 'plain'


def serving_section(directory):
    """What serving engines send (flashcl bench --preset serving) beside FlexAttention, FlashAttention-2 and
    cuDNN on the same shapes, from one device call (bench/serving/: the preset's JSON and
    h200_flex_serving.jsonl from bench/anchors/flex_serving.py)."""
    d = os.path.join(directory, 'serving')
    path, apath = os.path.join(d, 'h200_serving.json'), os.path.join(d, 'h200_flex_serving.jsonl')
    if not os.path.exists(path) or not os.path.exists(apath):
        return ''
    run = json.load(open(path))
    anchors, torch = {}, None
    for line in open(apath):
        if line.strip():
            a = json.loads(line)
            if 'torch' in a:
                torch = a['torch']
            elif 'tflops' in a:
                anchors[(a['feature'], a['backend'])] = a['tflops']
    res = [r for r in run['results'] if r.get('ran')]
    plain = next((r['tflops'] for r in res if serving_label(r)[0] == 'plain'), None)
    out = ['| shape | kernel | ms (min–max) | TFLOP/s | ÷ plain | FlexAttention | FlashAttention-2 | cuDNN '
           '| ÷ FlexAttention | ÷ FA2 | ÷ cuDNN |', '|---|---|---|---|---|---|---|---|---|---|---|']
    for r in res:
        name, feat = serving_label(r)
        def t(b):
            x = anchors.get((feat, b))
            return f'{x:.1f}' if x else '—'
        def q(b):
            x = anchors.get((feat, b))
            return f"{r['tflops'] / x:.2f}×" if x else '—'
        out.append(f"| {name} | {r['kernel']} | {ms(r)} | {r['tflops']:.1f} | {r['tflops'] / plain:.2f} | {t('flex')} "
                   f"| {t('fa2')} | {t('cudnn')} | {q('flex')} | {q('fa2')} | {q('cudnn')} |")
    out.append(f"\nB=4, Hq=32, Hkv=8, N=4096, d=128, fp16, causal unless the shape says otherwise; TFLOP/s count "
               f"2·(d + d_v) a visible (query, key) pair. {run['device']}, {run['date']}; PyTorch {torch} "
               "(FlexAttention: `torch.compile(flex_attention)`, score_mod for softcap and ALiBi, create_block_mask "
               "for causal, the window and the documents of packed sequences; SDPA with `enable_gqa`). Commands: "
               f"`{run['command'].split(' --json')[0]}`; `bench/anchors/flex_serving.py` (both: `bench/serving_h200.sh`). "
               "Data: `bench/serving/`.")
    return '\n'.join(out)


def wgmma_section(directory):
    """flash_wgmma (Hopper's warpgroup MMA through sm_90a programs, as auto takes it) beside flash_mma and
    PyTorch SDPA (FlashAttention-2, cuDNN), all from one device call (bench/wgmma/: flashcl bench JSON named
    h200_<variant>_<d>_<dtype>[_causal].json, h200_sdpa.jsonl from bench/anchors/sdpa_prefill.py; the
    flash_wgmma's design page has the runs before it)."""
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
    out = ['| target (ratios to PyTorch in the same run) | measured (flash_wgmma TFLOP/s / reference) | met |',
           '|---|---|---|']
    def cudnn(dt, dim, n, causal): # cuDNN in the row's own dtype where the anchor ran it, else its fp16
        return rs.get(('cudnn', tdt[dt], dim, n, causal)) or rs.get(('cudnn', 'float16', dim, n, causal))
    def target(name, cases, want, backend='flash'):
        out.append(target_row(name, [((dt, dim, n, causal), get('wgmma', dim, dt, n, causal),
                                      rs.get(('flash', tdt[dt], dim, n, causal)) if backend == 'flash'
                                      else cudnn(dt, dim, n, causal))
                                     for dim, dt, n, causal in cases], want)[0])
    target('fp16 and bf16, d=128, N=4096 and 16384: ≥ 1.5× FlashAttention-2',
           [(128, dt, n, False) for dt in ('f16', 'bf16') for n in (4096, 16384)], 1.5)
    target('stretch: ≥ cuDNN (fp16)', [(128, 'f16', n, False) for n in (4096, 16384)], 1.0, 'cudnn')
    shapes = [(dim, dt, causal) for dim, dt, causal in ((128, 'f16', False), (128, 'bf16', False), (128, 'f16', True),
                                                         (64, 'f16', False), (256, 'f16', False))]
    if get('wgmma', 128, 'f16', 1024, False):
        target('≥ cuDNN at every shape measured here (its own dtype)',
               [(dim, dt, n, causal) for dim, dt, causal in shapes for n in (1024, 4096, 16384)
                if get('wgmma', dim, dt, n, causal)], 1.0, 'cudnn')
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
               'FlashAttention-2 | cuDNN | wgmma / FA2 | wgmma / cuDNN |')
    out.append('|---|---|---|---|---|---|' + ('---|' if has_mma else '') + '---|---|---|---|')
    for dim, dt, causal in shapes:
        for n in (1024, 4096, 16384):
            w, m = (get(x, dim, dt, n, causal) for x in ('wgmma', 'mma'))
            if not w:
                continue
            fa, cu = sdpa.get(('flash', tdt[dt], dim, n, causal)), cudnn(dt, dim, n, causal)
            cu = cu and cu['tflops']
            mc = (f"{m['tflops']:.1f} | " if m else '— | ') if has_mma else ''
            out.append(f"| {dt} | {dim} | {'causal' if causal else 'full'} | {n} | {ms(w)} | {w['tflops']:.1f} | "
                       f"{mc}{fa:.1f} | {cu:.1f} | {w['tflops'] / fa:.2f}× | {w['tflops'] / cu:.2f}× |"
                       if fa and cu else f"| {dt} | {dim} | {'causal' if causal else 'full'} | {n} | {ms(w)} | "
                       f"{w['tflops']:.1f} | {mc}— | — | — | — |")
    assert all(r['kernel'] == ('flash_mma' if k.startswith('mma') else 'flash_wgmma') and r['passed']
               for k, run in runs.items() for r in run['results'] if r.get('ran'))
    cmds = sorted({run['command'].split(' --json')[0] for run in runs.values()})
    out.append(f"\nPyTorch {torch}. Commands: " + '; '.join(f'`{c}`' for c in cmds) + ' — flash_wgmma as auto takes '
               'it on this device (`FLASHCL_PATH=auto`: the producer warpgroup at every head dim, the 128-byte swizzled '
               'tiles at d=128 and d=256, O staged through local memory, causal\'s heavy blocks first). These JSON '
               f'files and PyTorch from one device call ({first_date(runs)}; the design page has the runs before it and '
               'how far cuDNN\'s own figure moves between calls: `docs/design/wgmma.md`). Data: `bench/wgmma/`.')
    d64 = [r for k, run in runs.items() if k.startswith('wgmma_64') for r in run['results'] if r.get('ran')]
    if any(r.get('block_m', 128) != 192 and r['seq'] >= 2048 for r in d64):  # (files before bench recorded tiles)
        out.append('\nd=64 has taken a 192-row block (three consumer warpgroups) since 2026-12-05; the d=64 rows above '
                   'predate it. Its measurement beside 128 rows and cuDNN in one call (+9% to +18%; 0.85-0.92× cuDNN): '
                   '`docs/design/wgmma.md`, wgmma-d64.')
    if any(tuple(int(x) for x in run.get('flashcl', '0.7.1').split('.')) < (0, 7, 1) for run in runs.values()):
        out.append('\nSince release 0.7.1 the consumer warpgroups issue their products in turns at d ≤ 128 (16-bit operands); '
                   'the rows above predate it. Its measurement against the kernel without the turns in one session '
                   '(+6% at d=128 N=1024, +10.6% at d=64 N=16384, +8-11% causal at N=1024; d=128 N=16384 and d=256 '
                   'unchanged): `docs/design/wgmma.md`, wgmma-pingpong.')
    return '\n'.join(out)


def main():
    directory = sys.argv[1] if len(sys.argv) > 1 else 'bench'
    runs = load(directory)
    print('# Benchmarks\n')
    print('Generated by `python3 tools/benchmarks_md.py bench > BENCHMARKS.md` from the JSON files `flashcl bench`')
    print('wrote into `bench/` (`bench/h200.sh` and `bench/pocl.sh` run them again); do not edit by hand. Times are')
    print("medians of OpenCL profiling events (a marker before each run, the last command's end after it), warm-up and")
    print("compilation excluded, with the spread (min–max) of the timed runs. FLOPs: 4·B·H·Sq·Sk·d, only computed")
    print("pairs under a causal mask. Every algorithm's output was validated against the naive kernel in the same")
    print('run. "Extra" is the device memory an algorithm allocates beyond the caller\'s Q, K, V and O')
    print("(`flashcl_plan_extra_device_bytes`). The commands are as each run recorded them: before release 0.2.0")
    print("`--max-seconds N` capped each measurement at N seconds; now it is the whole bench's budget, so drop it")
    print('to reproduce these runs. Why each kernel is built the way it is, with the measurements behind each')
    print('choice: `docs/design/`. Each section names the GPU its runs measured (the files keep the h200_ prefix of')
    print('`bench/h200.sh`, which wrote them on whichever Hopper GPU was lent).\n')
    wg = wgmma_section(directory)
    if wg:
        print(f'## Prefill on Hopper\'s warpgroup MMA (flash_wgmma), {gpu_of(os.path.join(directory, "wgmma"))}, '
              'against PyTorch\n')
        print('fp16/bf16 at head dims 64, 128 and 256 on devices whose sm_90a probe passed (auto takes it there;')
        print('`flashcl tiles` says so): wgmma from OpenCL C through PTX finished for sm_90a, two consumer warpgroups')
        print('(three at d=64) of 64 query rows, the softmax of one tile beside the products of the last, K/V by cp.async through L1')
        print('in two stages into 128-byte swizzled tiles (d=128, d=256), issued by a producer warpgroup with')
        print('per-stage mbarriers and setmaxnreg. Each choice\'s measurement and what limits the figures:')
        print('`docs/design/wgmma.md`.\n')
        print(wg + '\n')
    sv = serving_section(directory)
    if sv:
        print(f'## What serving engines send, {gpu_of(os.path.join(directory, "serving"))}, against FlexAttention, '
              'FlashAttention-2 and cuDNN\n')
        print('`flashcl bench --preset serving`: one serving shape, plain and with one feature a shape, on the kernel')
        print('auto takes (the matrix-unit kernels compose the features from the shared parts:')
        print('`docs/design/wgmma.md`, "What engines send"), beside PyTorch on the GPU in the same device call.\n')
        print(sv + '\n')
    pf = prefill_section(directory)
    if pf:
        print('## Prefill on flash_mma (tensor cores through mma.sync) and the portable kernel, '
              f'{gpu_of(os.path.join(directory, "prefill"))}, against PyTorch\n')
        print('The matrix-unit kernel (fp16, bf16: what auto takes on NVIDIA GPUs of compute capability 8.0 and up')
        print('below Hopper, and on Hopper for the problems flash_wgmma does not take) and the portable kernel (fp32:')
        print('every device) beside PyTorch SDPA, measured in one run on 2026-12-01. What each choice moved and what')
        print('limits the figures that miss their target: `docs/design/mma.md` and `docs/design/portable.md`.\n')
        print(pf + '\n')
    tf = tf32_section(directory)
    if tf:
        tdir = os.path.join(directory, 'prefill', 'tf32')
        print(f'## fp32 prefill on TF32 products (flash_mma, problem.precision), {gpu_of(tdir)}, against PyTorch\n')
        print('fp32 Q, K and V, hidden 2048, B·N = 16384: the portable kernel (fp32, the default), flash_mma with')
        print('three TF32 products a product (tf32x3: PyTorch\'s own fp32 arithmetic) and with one (tf32:')
        print('`allow_tf32`\'s accuracy), beside PyTorch\'s fp32 memory-efficient kernel in the same device call.')
        print('The validation column gives the run\'s largest relative error against the naive kernel (fp32).')
        tdates = {json.load(open(p)).get('date', '') for p in glob.glob(os.path.join(tdir, 'h200_d*.json'))}
        if min(tdates) < '2026-12-05':
            print('Why and what limits them: `docs/design/mma.md`, tf32-1 and tf32-2. Measured at 45824dd (tf32-2); '
                  'tf32-3 (the split in 4 instructions, Q split once) came after: on an H100 (2026-12-05, PyTorch in '
                  'the same call) tf32x3 ran 50.2 TFLOP/s at d=128 (1.08× PyTorch\'s fp32 kernel, its error at the '
                  'tolerance\'s edge) and 53.0 at d=64 (1.50×); mma.md, tf32-3. The H200 table waits for an H200 run.\n')
        else:
            print('Why and what limits them: `docs/design/mma.md`, tf32-1 to tf32-5.')
            if max(tdates) <= '2026-12-06':
                print('These runs were validated at fp32\'s tolerance; tf32x3\'s is 2^-14 of the row\'s scale since '
                      '(`flashcl.h`, mma.md: the error of NVIDIA\'s matrix units at d=128, 1.8e-5 here, is not the '
                      'split\'s or the staging\'s), which the d=128 row\'s 1.8e-5 is within.')
            print()
        print(tf + '\n')
    f8 = fp8_section(directory)
    if f8:
        print('## fp8 attention on Hopper\'s fp8 products (flash_wgmma), '
              f'{gpu_of(os.path.join(directory, "prefill", "fp8"), "*-*.json")}\n')
        print('E4M3 Q, K and V with per-(batch, KV head) descale factors, O in fp16, hidden 2048, B·N = 16384, against')
        print('flash_wgmma\'s fp16 on the same shapes in the same device call. P is rounded to E4M3 for P·V, as')
        print('FlashAttention-3 does; the validation column is the largest error against the naive kernel over the')
        print('row\'s scale (allowed: 2^-2). Why and what limits it: `docs/design/fp8.md`.\n')
        print(f8 + '\n')
        fdir = os.path.join(directory, 'prefill', 'fp8')
        if max(json.load(open(p)).get('date', '') for p in glob.glob(os.path.join(fdir, '*-*.json'))) <= '2026-12-05':
            # (what came after this table's runs, until they are made again)
            print('Since this table (on an H100, 2026-12-05, d=128 N=16384; fp8.md, fp8-2 to fp8-4): two staging '
                  'tiles and the paired transpose, both defaults now, bring fp8 to 620.7 TFLOP/s against fp16\'s '
                  '587.8 in one call (1.06×; 628.5 against 605.9 a call apart); the ablations put the limit in V\'s transpose '
                  '(12% of the step), then the exponentials. The H200 table waits for an H200 run.\n')
    dvs = dimv_section(directory)
    if dvs:
        print(f'## V\'s own head dim (MLA\'s prefill), {gpu_of(os.path.join(directory, "dimv"))}, against PyTorch\n')
        print('`problem.head_dim_v`: 192-wide queries and keys over 128-wide values, on the kernel auto takes, beside')
        print('the same shape with V at 192 and PyTorch SDPA in the same run (`docs/design/wgmma.md`).\n')
        print(dvs + '\n')
    dm = decode_mma_section(directory)
    if dm:
        print(f'## Decode on the matrix units (flash_decode_mma), {gpu_of(os.path.join(directory, "decode-mma"))}, '
              'against PyTorch\n')
        print(dm + '\n')
    amd = amd_section(directory)
    if amd:
        print('## Predictions for AMD and Intel (flash_mfma, flash_wmma, flash_dpas): not measured\n')
        print('No AMD or Intel GPU has run flashcl. These are the performance model\'s figures, from the instructions')
        print('the vendors\' compilers emit for the key loop and the vendors\' peak figures, written before any hardware')
        print('run.\n')
        print(amd + '\n')
    dk = decode_kernel_section(directory)
    if dk:
        print('## Decode on the CUDA cores (flash_decode) against the portable kernel\'s decode path, '
              f'{gpu_of(os.path.join(directory, "decode-kernel"))}\n')
        print(dk + '\n')
    print('## Flash against standard attention (time of standard / time of flash, same run)\n')
    print('Above 1 flash is faster. Standard attention (CLBlast\'s SGEMMs) writes the n×n scores to device memory;')
    print('flash needs no memory beyond Q, K, V and O. These runs are the portable kernel on fp32 (its history:')
    print('`docs/design/portable.md`); each run\'s date is in its heading below.\n')
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
