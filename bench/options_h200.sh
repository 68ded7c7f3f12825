#!/bin/bash
# SPDX-License-Identifier: MIT
# options_h200.sh REPS "BENCH ARGS" NAME=OPTIONS ...: one build of flashcl timed under several
# FLASHCL_BUILD_OPTIONS (a kernel's variant macros, e.g. base= ostage=-DWG_O_STAGED=1, options within one
# variant separated by commas; NAME=cfg:SPEC runs `flashcl bench --config SPEC` instead, one kernel's tiles
# forced, and NAME=cfg:SPEC+OPTIONS both), interleaved (variant after variant, REPS rounds) so that drift hits each
# alike, in one device call: the design pages' variant measurements where the variants are build options
# rather than source trees (bench/variants_h200.sh). Run on the GPU machine after `source .gpu/gpu-env.sh`;
# writes $OUT/options/NAME-ROUND.json and prints each variant's median TFLOP/s (GB/s for decode steps) per
# shape, the median of its rounds' medians with their range, and whether every run validated. Each run
# has RUN_LIMIT seconds (150 by default: a variant that hangs costs that, not the call).
set -euo pipefail
reps=$1
args=$2
shift 2
out=${OUT:-/tmp}/options
mkdir -p "$out"
b=${BUILD:-/tmp/bo}
[ -x "$b/tools/flashcl" ] || { meson setup "$b" . --buildtype=release -Dtests=disabled >/dev/null && ninja -C "$b" tools/flashcl >/dev/null; }
names=()
for v in "$@"; do names+=("${v%%=*}"); done
for ((r = 1; r <= reps; ++r)); do
  for v in "$@"; do
    name=${v%%=*} opts=${v#*=} config=()
    case $opts in
    cfg:*+*) spec=${opts#cfg:} config=(--config "${spec%%+*}") opts=${spec#*+} ;;
    cfg:*) config=(--config "${opts#cfg:}") opts= ;;
    esac
    # shellcheck disable=SC2086
    FLASHCL_BUILD_OPTIONS="${opts//,/ }" timeout "${RUN_LIMIT:-150}" "$b/tools/flashcl" bench $args --algos flash \
      ${config[@]+"${config[@]}"} --json "$out/$name-$r.json" \
      > "$out/$name-$r.txt" 2>&1 || echo "$name round $r: exit $?"
  done
done
python3 - "$out" "$reps" "${names[@]}" <<'PY'
import json, statistics, sys
out, reps, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
table = {}
for name in names:
    for r in range(1, reps + 1):
        try:
            res = json.load(open(f"{out}/{name}-{r}.json"))["results"]
        except (OSError, ValueError):
            continue
        for x in res:
            if x.get("ran"):
                key = f"d={x['head_dim']} N={x['seq']}{' causal' if x['causal'] else ''}{' decode' if x.get('seq_q') == 1 else ''}"
                v = x["gb_per_s"] if x.get("seq_q") == 1 else x["tflops"]
                table.setdefault(key, {}).setdefault(name, []).append((v, x.get("passed", False)))
for key, per in table.items():
    cells = []
    for name in names:
        vals = per.get(name, [])
        if vals:
            m = statistics.median(v for v, _ in vals)
            ok = "" if all(p for _, p in vals) else " FAILED"
            cells.append(f"{name} {m:.1f} [{min(v for v, _ in vals):.1f}-{max(v for v, _ in vals):.1f}]{ok}")
    print(f"{key:24s} " + "  ".join(cells))
PY
