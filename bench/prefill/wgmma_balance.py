# SPDX-License-Identifier: MIT
"""How evenly flash_wgmma's persistent work-groups share a prefill's row blocks (docs/design/wgmma.md, wgmma-balance):
a model on the shape alone, no device. Each block costs its key tiles plus FIXED tile times (its start and end);
work-groups take blocks in the kernel's order (WG_HEAVY_FIRST: a head's heaviest first where blocks differ) by
three rules: a fixed stride (work-group g takes g, g + P, ...), the snake (WG_SNAKE: odd rounds reversed), and a
counter (the next free work-group takes the next block: the hardware's grid, or an atomic counter). Prints, per
shape, the busiest work-group's load over the mean (1.0: the last wave ends with the others).

    python3 wgmma_balance.py [--sms 132] [--fixed 1.0]
"""
import argparse
import heapq


def blocks(n, heads, batch, bm, bn, causal):
    """Each row block's tiles, in the kernel's order: head by head, a head's heaviest first where causal."""
    per_head = (n + bm - 1) // bm
    out = []
    for _ in range(batch * heads):
        for mb in range(per_head):
            m0 = (per_head - 1 - mb) * bm if causal else mb * bm
            keys = min(m0 + bm, n) if causal else n
            out.append((keys + bn - 1) // bn)
    return out


def busiest(work, sms, rule):
    """The largest work-group load under a rule: 'stride', 'snake' or 'counter'."""
    if rule == "counter":
        loads = [0.0] * sms
        for c in work:
            heapq.heappush(loads, heapq.heappop(loads) + c)
        return max(loads)
    loads = [0.0] * sms
    slots = (len(work) + sms - 1) // sms * sms
    for w in range(slots):
        rnd, g = divmod(w, sms)
        blk = rnd * sms + (sms - 1 - g if rule == "snake" and rnd & 1 else g)
        if blk < len(work):
            loads[g] += work[blk]
    return max(loads)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sms", type=int, default=132, help="work-groups, one an SM (the H100 SXM's 132)")
    ap.add_argument("--fixed", type=float, default=1.0, help="a block's own cost, in tile times")
    a = ap.parse_args()
    # (BENCHMARKS.md's shapes: B * N = 16384, hidden 2048; d=64 with 192-row blocks, else 128; 128-key tiles)
    shapes = [("causal d=128", 128, 16, 128, True), ("d=128", 128, 16, 128, False), ("d=64", 64, 32, 192, False)]
    print("shape | N | blocks | stride | snake | counter (busiest work-group over the mean)")
    for name, _, heads, bm, causal in shapes:
        for n in (1024, 4096, 8192, 16384):
            work = [t + a.fixed for t in blocks(n, heads, 16384 // n, bm, 128, causal)]
            mean = sum(work) / a.sms
            cells = " | ".join(f"{busiest(work, a.sms, r) / mean:.3f}" for r in ("stride", "snake", "counter"))
            print(f"{name} | {n} | {len(work)} | {cells}")


if __name__ == "__main__":
    main()
