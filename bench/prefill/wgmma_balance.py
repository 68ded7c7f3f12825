# SPDX-License-Identifier: MIT
"""How evenly flash_wgmma's persistent work-groups share a prefill's row blocks (docs/design/wgmma.md, wgmma-balance):
a model on the shape alone, no device. Each block costs its key tiles plus FIXED tile times (its start and end);
work-groups take blocks in the kernel's order (WG_HEAVY_FIRST: a head's heaviest first where blocks differ) by
three rules: a fixed stride (work-group g takes g, g + P, ...), the snake (WG_SNAKE: odd rounds reversed), and a
counter (the next free work-group takes the next block: the hardware's grid, or an atomic counter). Prints, per
shape, the busiest work-group's load over the mean (1.0: the last wave ends with the others), for the kernel's
order (head by head) and for WG_ORDER's (row block by row block across all the (batch, head)s, and within groups
of GROUP_MIB's worth of K and V: WG_ORDER_HEADS), with the MiB of K and V the first wave's blocks read. The model
has no L2 in it: the row-block order across all heads balanced best here and lost up to 28% on the H100
(docs/design/wgmma.md, wgmma-order), its first wave reading 66 MB of K and V against a 50 MB L2.

    python3 wgmma_balance.py [--sms 132] [--fixed 1.0] [--group-mib 8]
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


def rows_order(work, per, nbh, heads):
    """The blocks (and their (batch, head)s) row block by row block within groups of `heads` (batch, head)s."""
    out = []
    for g0 in range(0, nbh, heads):
        n_in = min(heads, nbh - g0)
        out += [(work[(g0 + r % n_in) * per + r // n_in], g0 + r % n_in) for r in range(n_in * per)]
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
    ap.add_argument("--group-mib", type=float, default=8.0, help="K and V a group of WG_ORDER_HEADS holds")
    a = ap.parse_args()
    # (BENCHMARKS.md's shapes: B * N = 16384, hidden 2048; d=64 with 192-row blocks, else 128; 128-key tiles)
    shapes = [("causal d=128", 128, 16, 128, True), ("d=128", 128, 16, 128, False), ("d=64", 64, 32, 192, False)]
    print("shape | N | blocks | head by head: stride, snake, counter, first wave's MiB | rows across all: snake, "
          "counter, MiB | rows in groups of G: G, snake, counter, MiB")
    for name, d, heads, bm, causal in shapes:
        for n in (1024, 4096, 8192, 16384):
            batch = 16384 // n
            nbh, per, mib = batch * heads, (n + bm - 1) // bm, n * d * 4 / 2**20
            tiles = [t + a.fixed for t in blocks(n, heads, batch, bm, 128, causal)]
            mean = sum(tiles) / a.sms
            group = max(1, min(nbh, int(a.group_mib // mib)))
            cells = []
            for order in ([(t, i // per) for i, t in enumerate(tiles)], rows_order(tiles, per, nbh, nbh),
                          rows_order(tiles, per, nbh, group)):
                work = [t for t, _ in order]
                wave = len({bh for _, bh in order[:a.sms]}) * mib
                rules = ("stride", "snake", "counter") if not cells else ("snake", "counter")
                cells.append(", ".join(f"{busiest(work, a.sms, r) / mean:.3f}" for r in rules) + f", {wave:.0f}")
            cells[2] = f"{group}, " + cells[2]
            print(f"{name} | {n} | {len(tiles)} | " + " | ".join(cells))


if __name__ == "__main__":
    main()
