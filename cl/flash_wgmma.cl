/* SPDX-License-Identifier: MIT */
/*
 * flash_wgmma.cl: the FlashAttention forward kernel on Hopper's warpgroup matrix instructions (wgmma,
 * compute capability 9.0a), from OpenCL C through the program builder's sm_90a finishing step (wgmma.cl,
 * written at build time by tools/gen_wgmma_cl.py; src/ptx.c). fp16 or bf16 K and V, fp32 accumulation; Q
 * and O in K's type, or Q in fp32 or the other 16-bit type rounded to K's as it is loaded, O in Q's.
 *
 * A work-group is WARPGROUPS warpgroups of 128 work-items; warpgroup i owns query rows 64i .. 64i+63 of the
 * block (BLOCK_M = 64 * WARPGROUPS) and keeps in registers the scores S of a BLOCK_N-key tile (BLOCK_N/2
 * fp32 accumulators a work-item) and the output O (HEAD_DIM/2), in the m64nNk16 accumulator layout: warp w
 * of the warpgroup, lane l: rows 16w + l/4 and +8, columns 8j + 2(l%4) and +1 (mma.sync's m16n8 C layout
 * for each warp). Q's block and the K and V tiles sit in local memory in core-matrix tiles (TILED: 8 x 8
 * blocks of eight 16-byte rows), the layout wgmma's descriptors read without a swizzle, or with SWIZZLE=1
 * (the host's choice from d=80) in 128-byte swizzled rows (TILE_AT).
 *   S = Q * K^T   wgmma m64n(BLOCK_N)k16, A = Q and B = K from local memory (HEAD_DIM/16 k steps)
 *   O += P * V    wgmma m64n(HEAD_DIM)k16, A = P from registers (the S accumulators of two neighbouring
 *                 n8 tiles, packed to 16-bit pairs, are the A fragment of one k16 step, as in flash_mma),
 *                 B = V from local memory read transposed (V's rows: a key's columns contiguous)
 * K and V tiles arrive by cp.async (16-byte pieces, through L1: mma.cl), issued by every work-item; each
 * tile is read by wgmma after its copies landed, a proxy fence (local memory written by the work-items
 * made visible to wgmma's reads) and a barrier. With WG_PRODUCER=1 (the host's choice on sm_90a devices:
 * a work-group of 2 * BLOCK_M + 128) a third warpgroup issues them instead and hands each stage to the
 * consumers by mbarriers (full: the copies landed; empty: the products that read it are done), with
 * setmaxnreg moving its registers to them; no work-group barrier after the start.
 * KV_STAGES=2 (the chooser's choice where it fits) or 3 (an override's): two or three K and V buffers and
 * the pipelined loop: step j issues S(j+1) and P(j) * V(j) as two batches and runs the
 * softmax of S(j+1) while the matrix units work on P(j) * V(j), then issues the copies of the tiles
 * KV_STAGES - 1 steps ahead; one barrier a step.
 * KV_STAGES=1: one buffer each, each tile's products waited for at once (V's copies during S and the
 * softmax, the next K tile's during P * V).
 *
 * Semantics as flash_mma.cl's (the same parts: geometry.cl's visible keys, HAS_WINDOW for causal or a
 * sliding window, softmax.cl's rules): tiles outside a window never loaded, GQA, LSE in natural log, a NaN
 * score poisoning its row, a row with no visible key written as zeros with LSE -inf, scores in base 2 with
 * the scale in the exponent (a negative scale negates Q's sign bits), and every feature flash_mma takes
 * (scores.cl's modifiers on the accumulators, packed sequences, KV caches, sinks). The host sends it
 * problems of FlashAttention-3's head dims (Q's and V's each 64, 80, 96, 128, 192 or 256) with aligned
 * rows (src/kernels/wgmma.c).
 *
 * FCL_PTX=0 emulates each instruction from the same local-memory tiles (P through local memory), so that
 * PoCL and rusticl test the indexing, masks and softmax of both loops in CI; every barrier is reached by
 * all work-items. Its design, and the measurements behind its choices: docs/design/wgmma.md.
 * Local memory (ushort; src/kernels/wgmma.c's wgmma_bytes must match): q_s BLOCK_M * QW, k_s KV_STAGES *
 * BLOCK_N * QW and v_s KV_STAGES * BLOCK_N * VW (QW, VW: the head dims, swizzled rounded up to 64);
 * emulated also p_s BLOCK_M * BLOCK_N and WARPS * 32 * 8 uints of exchange area.
 */
#if !defined(HEAD_DIM) || !defined(BLOCK_N) || !defined(WARPGROUPS)
#error "flash_wgmma.cl needs HEAD_DIM, BLOCK_N and WARPGROUPS"
#endif
/* (FlashAttention-3's head dims, Q's and V's each: wgmma's n takes every one for O, k16 steps for S) */
#define WG_DIM_OK(d) ((d) == 64 || (d) == 80 || (d) == 96 || (d) == 128 || (d) == 192 || (d) == 256)
#if !WG_DIM_OK(HEAD_DIM) || !WG_DIM_OK(HEAD_DIM_V) || (BLOCK_N != 64 && BLOCK_N != 80 && BLOCK_N != 128 && BLOCK_N != 192)
#error "flash_wgmma.cl takes HEAD_DIM and HEAD_DIM_V 64, 80, 96, 128, 192 or 256 and BLOCK_N 64, 80, 128 or 192"
#endif
/* 192-key tiles (FlashAttention-3's 176 and 192, docs/design/wgmma.md, wgmma-192): 96 S accumulators a
 * work-item beside O's, so V's head dim up to 128, two consumer warpgroups at most (their register split
 * below), 16-bit operands, and no keep bits (a boolean mask's or key padding's: a lane's bits of a tile in
 * one 32-bit word, 2 * BLOCK_N / 8 of them) */
#if BLOCK_N == 192 && (HEAD_DIM_V > 128 || WARPGROUPS > 2 || Q_FORMAT || (HAS_MASK && MASK_KIND == 2) || HAS_KPM)
#error "flash_wgmma.cl: 192-key tiles need d_v <= 128, two warpgroups, 16-bit operands, no bool mask or key padding"
#endif
/* (the operands' type, and Q in another: mma.cl's MMA_BF16 and Q_CONVERT) */
/* The shape comes from the host alone (src/kernels/wgmma.c, whose local-memory formula reads the same
 * values): KV_STAGES, WG_PRODUCER and SWIZZLE. */
#if !defined(KV_STAGES) || !defined(WG_PRODUCER) || !defined(SWIZZLE)
#error "flash_wgmma.cl needs KV_STAGES, WG_PRODUCER and SWIZZLE from the host"
#endif
/* 80-key tiles (FlashAttention-3's at d=256, docs/design/wgmma.md, wgmma-80): the swizzled layouts, whose copies
 * take 16 rows a pass (the unswizzled ones 32 or 64), and 16-bit operands (fp8's k steps are 32 keys) */
#if BLOCK_N == 80 && (!SWIZZLE || Q_FORMAT)
#error "flash_wgmma.cl: 80-key tiles need the swizzled layouts (from head dim 80) and 16-bit operands"
#endif
#if KV_STAGES < 1 || KV_STAGES > 4 || (KV_STAGES == 4 && !WG_PRODUCER)
#error "KV_STAGES must be 1, 2 or 3, or 4 with the producer (a ring of stages; the loop without it is written for 3)"
#endif
#if WG_PRODUCER && (!FCL_PTX || KV_STAGES < 2 || (WARPGROUPS != 2 && WARPGROUPS != 3))
#error "WG_PRODUCER: the matrix units' program (not the emulation), two to four K/V stages, two or three warpgroups"
#endif
#define BLOCK_M (64 * WARPGROUPS)
#define DV HEAD_DIM_V
/* fp8 attention (WG_FP8: common.cl's Q_FORMAT, problem.qkv_format): Q, K and V bytes of E4M3 or E5M2, the
 * products on 8-bit operands (k32 steps). Tiles are laid out in 16-bit units (two bytes a unit), so that a
 * row of HEAD_DIM bytes is stored as the 16-bit kernel stores a row of HEAD_DIM / 2 elements, and S = Q * K^T
 * takes the same descriptors. wgmma reads 8-bit B operands K-major only: V's tile is stored transposed (DV
 * rows of BLOCK_N key bytes, VT_WORD), written by the work-items that copied it (VT_STAGE, VT_TRANSPOSE).
 * P is rounded to E4M3 in registers (fp8x4), scaled by 2^P_LOG2 so that its largest weight (1) sits near
 * E4M3's top; the sums l carry the same factor, taken out of l and O at the end (exact). The
 * descale factors (FP8_DESCALE) fold into the scale and the final division, as in flash_fwd.cl. Design:
 * docs/design/fp8.md. */
#define WG_FP8 (Q_FORMAT != 0)
#if WG_FP8
#if (HEAD_DIM != 64 && HEAD_DIM != 128 && HEAD_DIM != 256) || DV != HEAD_DIM || !SWIZZLE || Q_CONVERT
#error "flash_wgmma.cl's fp8 operands: HEAD_DIM = HEAD_DIM_V 64, 128 or 256, SWIZZLE=1, no Q of another type"
#endif
#if Q_FORMAT == 2
#define FP8_TYPE "e4m3"
#else
#define FP8_TYPE "e5m2"
#endif
#define QD (HEAD_DIM / 2) /* Q's and K's rows in 16-bit units */
#define P_LOG2 8.0f
#else
#define QD HEAD_DIM
#endif
/* WG_O_STAGED (the host's where it can: src/kernels/wgmma.c's fcl_wgmma_o_staged; docs/design/wgmma.md,
 * wgmma-ostage): O's rows staged in local memory as packed pairs, then written in 16-byte chunks, instead
 * of two 16-bit stores a lane a pair; for 16-bit O whose rows (strides and start) are 16-byte aligned and
 * V's head dim at most Q's (the staging reuses Q's block). */
#ifndef WG_O_STAGED
#define WG_O_STAGED 0
#endif
/* WG_PINGPONG (the host's choice with the producer on 16-bit operands up to d_v = 128: src/kernels/wgmma.c;
 * docs/design/wgmma.md, wgmma-pingpong): the consumer warpgroups issue their products in turns, each
 * passing the turn on once its step's products are issued, so one warpgroup's products run while the
 * others do their softmax */
#ifndef WG_PINGPONG
#define WG_PINGPONG 0
#endif
/* WG_ABLATE (measurement only, wrong results: docs/design/fp8.md's and wgmma.md's ablations): bit 1 leaves
 * out the producer's transpose of V (fp8), bit 2 the softmax's exponentials, bit 4 the P * V products, bit
 * 8 the Q * K^T products (14: the copies, the barriers and the softmax's other steps alone), bit 16 O's
 * stores to global memory where O is staged (WG_O_STAGED: a block's epilogue, wgmma-epilogue; no effect
 * on the other programs), bit 32 fp8's conversion of P to E4M3 bytes (fp8-5); bit 64 does fp8's V transpose
 * twice (the same bytes: results unchanged, the producer's transpose work doubled; fp8-6); bit 128 leaves out
 * O's rescale by alpha (wgmma-d256) */
#ifndef WG_ABLATE
#define WG_ABLATE 0
#endif
/* WG_PERSIST (the host's config.persistent: src/kernels/wgmma.c; docs/design/wgmma.md, wgmma-persist): a grid
 * of fewer work-groups than row blocks, work-group g taking blocks g, g + its grid's size, ... in turn (a
 * head's blocks together: block w is row block w % blocks_m of (batch, head) w / blocks_m). With the producer,
 * its copies of the next block's K/V tiles go on through the stages while the consumers finish a block (a
 * tile's stage and phase count on across blocks: tb, the tiles of the work-group's earlier blocks). Q_BUFS 2
 * (with the producer, where local memory holds them): two Q tiles, the next block's copies issued at a
 * block's start, landing while it runs. */
#ifndef WG_PERSIST
#define WG_PERSIST 0
#endif
#ifndef Q_BUFS
#define Q_BUFS 1
#endif
#ifdef Q_BUFS_OVERRIDE /* (a variant's Q tiles, measurement only: wgmma-carveout; OpenCL's options cannot undefine) */
#undef Q_BUFS
#define Q_BUFS Q_BUFS_OVERRIDE
#endif
/* WG_LOCAL_PAD (measurement only, results unchanged: wgmma-carveout): bytes more of local memory in Q's
 * array, never touched, so that the driver gives the SM's shared memory that much more of the L1 it
 * shares (the copies go through L1) */
#ifndef WG_LOCAL_PAD
#define WG_LOCAL_PAD 0
#endif
/* WG_WARP_BCAST (on with WG_PERSIST unless a build option sets it to 0: docs/design/wgmma.md, wgmma-uniform): the
 * warpgroup's index and the producer's test taken from the warp's first work-item's index, read by a shuffle, so
 * that ptxas knows them the same across the warp: the branches on them are then uniform, and the block loop's
 * body keeps the uniform datapath (the wgmma descriptors, the stages and phases in uniform registers) */
#ifndef WG_WARP_BCAST
#define WG_WARP_BCAST WG_PERSIST
#endif
/* WG_SNAKE (on with WG_PERSIST where blocks differ in keys, causal or a window, unless a build option sets it:
 * docs/design/wgmma.md, wgmma-snake): a work-group's blocks taken round by round in a snake order, work-group g
 * the g-th block of even rounds and the g-th from the end of odd ones, rather than every grid's-size-th block:
 * causal's heavy-first blocks of a head are then paired heavy with light in each work-group (with a stride near
 * a head's block count, one work-group got a head's heavy blocks in every round: causal d=128 N=1024 -14.6%
 * against the default's grid, +5.1% with the snake, the H100) */
#ifndef WG_SNAKE
#define WG_SNAKE (WG_PERSIST && HAS_WINDOW)
#endif
/* WG_ORDER (on for the grid where blocks differ in keys, unless a build option sets it: docs/design/wgmma.md,
 * wgmma-order, -order2 and -defaults): blocks numbered row block by row block, every head's heaviest first,
 * within groups of (batch, head)s whose K and V together take about WG_ORDER_BYTES (8 MiB; WG_ORDER_HEADS > 0: that
 * many instead, 0: one group of all), group after group, rather than head by head: the grid's first waves then
 * take the group's longest blocks while its blocks in flight still share a few heads' K and V in L2 (the H100,
 * causal fp16 d=128: +3.4-4.6% at N 4096 and 8192 against head by head; over all the heads at once −28% at
 * N=1024). Causal only (a window's blocks are alike: the order is taken where win_left < 0); the grid's default
 * at d = d_v = 128 on 16-bit contiguous K and V without packed sequences (what was measured; d=64's 192-row blocks
 * and d=256's 64-key tiles balance otherwise, not measured); the persistent program keeps its snake (the grouped
 * order there is worse balanced, wgmma_balance.py) */
#ifndef WG_ORDER
#define WG_ORDER (!WG_PERSIST && HEAD_DIM == 128 && DV == 128 && !VARLEN && !KV_CACHE && !WG_FP8)
#endif
#define WG_BY_ROWS (WG_ORDER && HAS_WINDOW)
#ifndef WG_ORDER_HEADS
#define WG_ORDER_HEADS (-1)
#endif
#ifndef WG_ORDER_BYTES
#define WG_ORDER_BYTES (8L << 20)
#endif
#if WG_BY_ROWS
/* the (batch, head)s of a group: WG_ORDER_HEADS, or those whose K and V (seq_kv keys of HEAD_DIM + DV 16-bit
 * values, shared by `group` query heads) take WG_ORDER_BYTES together, at least one; with a window (win_left >= 0)
 * one, which is the order head by head */
static inline int wg_order_heads(int seq_kv, int group, int nbh, int win_left)
{
    if (win_left >= 0)
        return 1;
    if (WG_ORDER_HEADS >= 0)
        return WG_ORDER_HEADS > 0 && WG_ORDER_HEADS < nbh ? WG_ORDER_HEADS : nbh;
    const long per_head = (long)max(seq_kv, 1) * (HEAD_DIM + DV) * 2;
    return (int)clamp(WG_ORDER_BYTES * group / per_head, 1L, (long)nbh);
}
/* slot w's row block (x) and (batch, head) (y), of nbh (batch, head)s of `per` row blocks each: groups of
 * `heads` (batch, head)s (the last one what is left), row block by row block within each */
static inline int2 wg_rows_order(int w, int per, int nbh, int heads)
{
    const int g = w / (heads * per), r = w - g * heads * per, n_in = min(heads, nbh - g * heads);
    return (int2)(r / n_in, g * heads + r % n_in);
}
#endif
/* WG_DESC_ADD (measurement first, off: docs/design/wgmma.md, wgmma-desc): each k step's wgmma descriptor made
 * from its tile's by an integer add to the address field, rather than from its own address (a mask, a shift
 * and an or each) */
#ifndef WG_DESC_ADD
#define WG_DESC_ADD 0
#endif
/* WG_EPI_PRODUCER (1 or 2, measurement first, off: docs/design/wgmma.md, wgmma-epi and wgmma-epi2: where the
 * producer takes a block's end, below): with persistent work-groups, two Q
 * tiles, the producer and O staged (WG_EPI: all of them, else off), the producer warpgroup stores each block's
 * staged O to global memory and then copies the block after next's Q into that tile, so that the consumers go
 * from a block's last product to the next block's first without the stores, the warpgroup barrier before them,
 * the consumers' barrier and Q's copies. Two mbarriers a Q tile order it: "Q full" (the producer's copies
 * landed) and "O staged" (every consumer's stores of the block's O into the tile done). */
#ifndef WG_EPI_PRODUCER
#define WG_EPI_PRODUCER 0
#endif
#define WG_EPI                                                                                                 \
    (WG_EPI_PRODUCER && WG_PERSIST && WG_PRODUCER && Q_BUFS == 2 && WG_O_STAGED && !WG_FP8 && DV == HEAD_DIM &&  \
     !Q_CONVERT && FCL_PTX)
/* WG_O_BULK (measurement first, off: docs/design/wgmma.md, wgmma-obulk): O staged (WG_O_STAGED) in plain rows of
 * O_PITCH units in its Q tile, each row then written to O by one bulk copy (cp.async.bulk, shared to global, the
 * copy engine's) issued by one work-item, in place of each work-item's reads and 16-byte stores; the copies' reads
 * of the tile waited for before it takes the next Q and at the end (WG_OB: with WG_O_STAGED on the matrix units,
 * not with WG_EPI) */
#ifndef WG_O_BULK
#define WG_O_BULK 0
#endif
#define WG_OB (WG_O_BULK && WG_O_STAGED && FCL_PTX && !WG_EPI)
#define O_PITCH (DV + 8) /* (16 bytes more than a row: a warp's pairs of eight rows in different banks) */
/* A Q tile's units: Q's block, or staged O's rows where they take more (whole 1024-byte swizzle atoms) */
#define Q_TILE_U (WG_OB && O_PITCH > QW ? (BLOCK_M * O_PITCH + 511) / 512 * 512 : BLOCK_M * QW)
#if WG_OB
#define BULK_STORE(dst, src, bytes)                                                                            \
    __asm__ volatile("//SM90A cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst),            \
                     "r"(LADDR(src)), "r"(bytes)                                                                \
                     : "memory")
#define BULK_COMMIT() __asm__ volatile("//SM90A cp.async.bulk.commit_group;" ::: "memory")
#define BULK_WAIT_READ() __asm__ volatile("//SM90A cp.async.bulk.wait_group.read 0;" ::: "memory")
#else
#define BULK_WAIT_READ()
#endif
/* Named barrier id0, id1 or id2 (immediates: a register's id makes ptxas count all 16 as used) for index i, op
 * "bar.sync" or "bar.arrive", 256 work-items (two warpgroups): WG_PINGPONG's turns and WG_OB's waits */
#define NAMED_BAR3_(op, i, id0, id1, id2)                                                                      \
    do {                                                                                                       \
        if ((i) == 0)                                                                                          \
            __asm__ volatile(op " " id0 ", 256;" ::: "memory");                                                \
        else if ((i) == 1)                                                                                     \
            __asm__ volatile(op " " id1 ", 256;" ::: "memory");                                                \
        else                                                                                                   \
            __asm__ volatile(op " " id2 ", 256;" ::: "memory");                                                \
    } while (0)
/* WG_OB's plain rows cover other warpgroups' Q (warpgroup i's 64 rows of O_PITCH units reach into warpgroup i + 1's
 * rows, and at d=128 the next one's into the first one's second 64-column block), which their products may still
 * read: before its staging, every warpgroup whose Q it covers must be done with S. With the turns, only the next
 * warpgroup in the ring needs a wait (the one before it has issued its last P * V, so its S is done): warpgroup i +
 * 1 arrives on named barrier 8 + i once its last S is done (OB_Q_READ), warpgroup i waits there (OB_STAGE_WAIT);
 * without the turns, a barrier of all the consumers (found by review before the first run, 2026-12-07) */
#if WG_OB && WG_PINGPONG && WG_PRODUCER
#define OB_BAR_(op, i) NAMED_BAR3_(op, i, "8", "9", "9")
#define OB_Q_READ()                                                                                            \
    do {                                                                                                       \
        if (wgi > 0)                                                                                           \
            OB_BAR_("bar.arrive", wgi - 1);                                                                    \
    } while (0)
#define OB_STAGE_WAIT()                                                                                        \
    do {                                                                                                       \
        if (wgi + 1 < WARPGROUPS)                                                                              \
            OB_BAR_("bar.sync", wgi);                                                                          \
    } while (0)
#elif WG_OB && WG_PRODUCER
#define OB_Q_READ()
#define OB_STAGE_WAIT() CONSUMERS_BARRIER()
#elif WG_OB
#define OB_Q_READ()
#define OB_STAGE_WAIT() barrier(CLK_LOCAL_MEM_FENCE)
#else
#define OB_Q_READ()
#define OB_STAGE_WAIT()
#endif
/* WG_SKIP_IDLE (measurement first, off: docs/design/wgmma.md, wgmma-idle): a consumer warpgroup whose 64 rows are
 * all past the block's queries skips its products (WG_IDLE: with the producer and the turns, which order its
 * arrivals; below) */
#ifndef WG_SKIP_IDLE
#define WG_SKIP_IDLE 0
#endif
#define WG_IDLE (WG_SKIP_IDLE && WG_PRODUCER && WG_PINGPONG && FCL_PTX && KV_STAGES >= 2)
#if Q_BUFS == 2
#define ASYNC_WAIT_Q() ASYNC_WAIT(1) /* (this block's Q: all groups but the last, the next block's Q) */
#else
#define ASYNC_WAIT_Q() ASYNC_WAIT0()
#endif
/* WG_LAZY_RESCALE (on at d_v = 256 with 16-bit operands, unless a build option sets it: docs/design/wgmma.md,
 * wgmma-lazy and wgmma-d256: +2.6% / +3.7% at d=256 N 1024 / 16384 on the H100, where O's rescale of 128
 * accumulators is on the consumers' path; at d=64 and 128 it lost, its vote on the softmax's path; d_v = 192 not
 * measured): a row's softmax keeps its reference maximum until a tile's maximum passes it by WG_LAZY_T (base-2
 * exponent units: P then up to 2^WG_LAZY_T, which fp16 and bf16 hold), so O's rescale and alpha's exponential are
 * skipped on most tiles (a warp multiplies O only where one of its rows moved); O / l and the LSE take the
 * reference as they take the maximum (the same value in both, exact either way) */
#ifndef WG_LAZY_RESCALE
#define WG_LAZY_RESCALE (DV == 256 && !WG_FP8)
#endif
#ifndef WG_LAZY_T
#define WG_LAZY_T 8.0f
#endif
#if WG_LAZY_RESCALE && WG_FP8
#error "WG_LAZY_RESCALE: 16-bit P (fp8's E4M3 P is scaled to its top already)"
#endif
#if WG_PERSIST && WG_FP8
#error "WG_PERSIST: 16-bit operands (fp8's descale factors and staging tiles are a block's own)"
#endif
#if Q_BUFS != 1 && !(Q_BUFS == 2 && WG_PERSIST && WG_PRODUCER)
#error "Q_BUFS: 1, or 2 with WG_PERSIST and the producer"
#endif
#if WG_ABLATE & 2
#define WG_EXP2(x) (x)
#else
#define WG_EXP2(x) mma_exp2(x)
#endif
#if WG_O_STAGED && (DV > HEAD_DIM || Q_CONVERT || WG_FP8)
#error "WG_O_STAGED: V's head dim at most Q's, O in the operands' 16-bit type, not fp8 operands"
#endif
/* The tiles' stored widths: with SWIZZLE whole 64-column blocks (d=80 and 96 in two, the last one's columns
 * past the head dim never copied nor read: S takes HEAD_DIM / 16 k steps, P * V's n is DV) */
#define PAD64(c) (((c) + 63) & ~63)
#define QW (SWIZZLE ? PAD64(QD) : QD)
#define VW (SWIZZLE ? PAD64(DV) : DV)
#define KT (BLOCK_N * QW) /* one K tile, in ushorts */
#if WG_FP8
#define VTW PAD64(BLOCK_N / 2) /* V's transposed tile: a row's BLOCK_N key bytes, whole 128-byte rows */
#define VT (DV * VTW)
#else
#define VT (BLOCK_N * VW) /* one V tile */
#endif
#define WG_SIZE (128 * WARPGROUPS) /* the consumers: the warpgroups that own query rows */
#define WG_THREADS (WG_SIZE + 128 * WG_PRODUCER)
#define WARPS (4 * WARPGROUPS)
#define KSTEPS (QD / 16) /* (k16 steps; fp8: k32 steps of the same 32 bytes) */
#define NS (BLOCK_N / 2)  /* S accumulators a work-item */
#define NO (DV / 2)         /* O accumulators a work-item */
#define CPR (QD / 8)        /* 16-byte chunks a row of Q and K */
#define CPR_V (DV / 8)      /* ... of V */

/* Element (r, c) of a tile C elements wide, in ushorts: core matrix (r/8, c/8) of 64 elements, its rows
 * of 8. Between core matrices: along c 128 bytes, along r 16*C bytes. */
#define TILED(r, c, C) (((((r) >> 3) * ((C) >> 3) + ((c) >> 3)) << 6) + (((r)&7) << 3) + ((c)&7))
/* Element (r, c) of a Q, K or V tile of ROWS rows, C wide: TILED, or with SWIZZLE=1 (the host's choice
 * from d=80: docs/design/wgmma.md) wgmma's 128-byte swizzle: blocks of 64 columns, each ROWS
 * rows of 128 bytes, the 16-byte piece j of row r at j ^ (r % 8) (atoms of 8 rows, 1024-byte aligned), so
 * that a warp copies whole 128-byte lines of four rows into 512 bytes without a bank conflict. */
#if SWIZZLE
#define TILE_AT(r, c, ROWS, C) (((((c) >> 6) * (ROWS) + (r)) << 6) + (((((c) >> 3) & 7) ^ ((r)&7)) << 3) + ((c)&7))
#define LOCAL_ALIGN __attribute__((aligned(1024)))
#else
#define TILE_AT(r, c, ROWS, C) TILED(r, c, C)
#define LOCAL_ALIGN
#endif

/* A row's address in 16-bit units (fp8: from a byte address; strides in elements, over EPU) */
#if WG_FP8
#define TPTR(p) ((__global const ushort *)(p))
#define EPU 2
#else
#define TPTR(p) (p)
#define EPU 1
#endif
/* the elements a product step reduces: k16, or k32 bytes */
#define K_STEP (WG_FP8 ? 32 : 16)
/* Byte c of row r of a tile stored in 16-bit units (fp8 operands): the low byte of unit c / 2 first */
#define BYTE_AT(r, c, ROWS, C) (2 * TILE_AT(r, (c) >> 1, ROWS, C) + ((c)&1))

/* tile t's K and V buffers (KV_STAGES of each: tile t in buffer t % KV_STAGES, counted from the
 * work-group's first block: tb, the tiles of its blocks before this one, WG_PERSIST's) */
#define KBUF(t) (k_s + ((tb + (t)) % KV_STAGES) * KT)
#define VBUF(t) (v_s + ((tb + (t)) % KV_STAGES) * VT)

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

#if FCL_PTX
/* The copies: mma.cl's cp.async, through L1 (docs/design/wgmma.md) */
#define ASYNC8(dst, src, ok) CP_ASYNC16_CA(dst, src, ok)
#define ASYNC_COMMIT() CP_ASYNC_COMMIT()
#define ASYNC_WAIT0() CP_ASYNC_WAIT(0)
/* this work-item's copies landed, all but the n groups committed last */
#define ASYNC_WAIT(n) CP_ASYNC_WAIT(n)
#if WG_FP8
#define WG_SS_S(d, da, db, acc) CAT(WGMMA_SS8_, BLOCK_N)(d, da, db, acc)
#else
#define WG_SS_S(d, da, db, acc) CAT(WGMMA_SS_, BLOCK_N)(d, da, db, acc)
#endif
/* The operands pinned where they are (an empty asm that reads and writes each, con "+f" for the fp32
 * accumulators, "+r" for P's packed fragments): the compiler may not move their uses or definitions across
 * the wgmma fences and waits, whose asm names no registers. */
#define PIN_OPERANDS(x, n, con)                                                                                \
    do {                                                                                                       \
        UNROLL                                                                                                 \
        for (int f_ = 0; f_ < (n); ++f_)                                                                       \
            __asm__ volatile("" : con((x)[f_])::"memory");                                                      \
    } while (0)
#define FENCE_OPERANDS(x, n) PIN_OPERANDS(x, n, "+f")
#define FENCE_OPERANDS_U(x, n) PIN_OPERANDS(x, n, "+r")
#if WG_FP8
#define WG_RS_O(d, a, db, acc) CAT(WGMMA_RS8_, DV)(d, a, db, acc)
#else
#define WG_RS_O(d, a, db, acc) CAT(WGMMA_RS_, DV)(d, a, db, acc)
#endif
/* The producer warpgroup's synchronization (WG_PRODUCER): mbarriers in local memory (mma.cl's mbar_init and
 * mbar_wait, and these) */
/* One arrival, by the work-items whose `who` is 0 (predicated: no branch between the products) */
#define MBAR_ARRIVE_IF0(b, who)                                                                                \
    __asm__ volatile("{\n//SM90A .reg .pred p;\n//SM90A .reg .b64 st;\n//SM90A setp.eq.u32 p, %1, 0;\n"         \
                     "//SM90A @p mbarrier.arrive.shared.b64 st, [%0];\n}" ::"r"(LADDR(b)),                     \
                     "r"((uint)(who))                                                                          \
                     : "memory")
/* An arrival once every cp.async this work-item issued so far has landed (the barrier's count includes it) */
#define ASYNC_ARRIVE(b) __asm__ volatile("//SM90A cp.async.mbarrier.arrive.noinc.shared.b64 [%0];" ::"r"(LADDR(b)) : "memory")
#define ASYNC_WAIT_ALL() CP_ASYNC_WAIT_ALL()
/* The registers of a work-item: the producer gives up what the consumers take, within what the work-group
 * holds from its launch, (65536 / its work-items) rounded down to a multiple of 8 each (setmaxnreg moves
 * registers inside that; asking for more waits forever: fp8.md, fp8-4, hung on the H100 2026-12-05). Two
 * consumer warpgroups 128 x 40 + 256 x 232 (384 x 168 = 64512 of the SM's 65536), three (a 192-row block
 * at d = d_v = 64: docs/design/wgmma.md, wgmma-d64) 128 x 32 + 384 x 160 (512 x 128); WG_SPLIT_THREADS: the
 * work-items a split is for, the entry's count for the finishing step (.reqntid, which setmaxnreg needs),
 * only with the producer the work-group's (WG_THREADS, which the other configurations keep: 568d126 had
 * redefined it, so a work-group without the producer was launched against the wrong required size) */
#if WARPGROUPS == 3
#define WG_SPLIT_THREADS 512
#define WG_PRODUCER_NREG 32
#define WG_CONSUMER_NREG 160
/* the consumer warpgroups alone (named barrier 1; 0 is the work-group's) */
#define CONSUMERS_BARRIER() __asm__ volatile("bar.sync 1, 384;" ::: "memory")
#elif WG_FP8 /* (fp8: the producer transposes V's tiles through registers, 128 x 64 + 256 x 216 by default) */
/* FP8_PRODUCER_REGS (a variant: docs/design/fp8.md, fp8-4): the producer's registers, the consumers
 * taking the rest of 384 x 168 (NVIDIA's build of the fp8 program spills 56 bytes in the producer at 64,
 * 24 at 72, none at 80 and up beside 208) */
#ifndef FP8_PRODUCER_REGS
#define FP8_PRODUCER_REGS 64
#endif
#define WG_SPLIT_THREADS 384
#define WG_PRODUCER_NREG FP8_PRODUCER_REGS
#if FP8_PRODUCER_REGS <= 72
#define WG_CONSUMER_NREG 216
#elif FP8_PRODUCER_REGS <= 88
#define WG_CONSUMER_NREG 208
#else
#define WG_CONSUMER_NREG 200
#endif
#define CONSUMERS_BARRIER() __asm__ volatile("bar.sync 1, 256;" ::: "memory")
#else
#define WG_SPLIT_THREADS 384
#if BLOCK_N > 128 /* (S's 96 accumulators: ptxas 12.9 on clang's PTX spills 48 bytes and serializes wgmma at
                    232, none at 240; the producer's copies fit 24: wgmma-192) */
#define WG_PRODUCER_NREG 24
#define WG_CONSUMER_NREG 240
#else
#define WG_PRODUCER_NREG 40
#define WG_CONSUMER_NREG 232
#endif
#define CONSUMERS_BARRIER() __asm__ volatile("bar.sync 1, 256;" ::: "memory")
#endif
#if WG_PRODUCER_NREG % 8 || WG_CONSUMER_NREG % 8 || WG_PRODUCER_NREG < 24 || WG_CONSUMER_NREG > 256 ||            \
    128 * WG_PRODUCER_NREG + (WG_SPLIT_THREADS - 128) * WG_CONSUMER_NREG >                                            \
        WG_SPLIT_THREADS * (65536 / WG_SPLIT_THREADS / 8 * 8)
#error "the warpgroups' registers (setmaxnreg): multiples of 8 within what the work-group launches with (FP8_PRODUCER_REGS: 24 to 104)"
#endif
#if WG_PRODUCER && WG_SPLIT_THREADS != WG_THREADS
#error "the register split's work-items: the work-group's (WG_THREADS)"
#endif
#define FCL_STR_(x) #x
#define FCL_STR(x) FCL_STR_(x)
#define PRODUCER_REGS()                                                                                        \
    __asm__ volatile("//SM90A setmaxnreg.dec.sync.aligned.u32 " FCL_STR(WG_PRODUCER_NREG) ";" ::: "memory")
#define CONSUMER_REGS()                                                                                        \
    __asm__ volatile("//SM90A setmaxnreg.inc.sync.aligned.u32 " FCL_STR(WG_CONSUMER_NREG) ";" ::: "memory")
#define THREADS_MARK() __asm__ volatile("//SM90A-THREADS " FCL_STR(WG_SPLIT_THREADS))
/* one warpgroup's 128 work-items (named barrier 2 + its index, an immediate each: a register's id makes
 * ptxas count all 16 barriers as used) */
#define WARPGROUP_BARRIER()                                                                                    \
    do {                                                                                                       \
        if (wgi == 0)                                                                                          \
            __asm__ volatile("bar.sync 2, 128;" ::: "memory");                                                 \
        else if (wgi == 1)                                                                                     \
            __asm__ volatile("bar.sync 3, 128;" ::: "memory");                                                 \
        else                                                                                                   \
            __asm__ volatile("bar.sync 4, 128;" ::: "memory");                                                 \
    } while (0)
#if WG_FP8
/* Four fp32 weights as E4M3 bytes, a's in the low byte (to nearest even, saturating: cvt.rn.satfinite,
 * compute capability 8.9 and up) */
inline uint fp8x4(const float a, const float b, const float c, const float e)
{
#if WG_ABLATE & 32 /* (the conversion left out: the four weights' bits mixed by one instruction) */
    return as_uint(a) ^ as_uint(b) ^ as_uint(c) ^ as_uint(e);
#else
    uint r;
    __asm__("{\n.reg .b16 lo, hi;\ncvt.rn.satfinite.e4m3x2.f32 lo, %2, %1;\ncvt.rn.satfinite.e4m3x2.f32 hi, %4, %3;\n"
            "mov.b32 %0, {lo, hi};\n}"
            : "=r"(r)
            : "f"(a), "f"(b), "f"(c), "f"(e));
    return r;
#endif
}
/* Bytes of x (0-3) and y (4-7), byte i of the result the one the selector's nibble i names (prmt.b32) */
inline uint prmt(const uint x, const uint y, const uint sel)
{
    uint r;
    __asm__("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(y), "r"(sel));
    return r;
}
#endif
#else
#if WG_FP8
inline uint fp8x4(const float a, const float b, const float c, const float e)
{
    return float_to_e4m3(a) | float_to_e4m3(b) << 8 | float_to_e4m3(c) << 16 | float_to_e4m3(e) << 24;
}
inline uint prmt(const uint x, const uint y, const uint sel)
{
    const ulong v = (ulong)y << 32 | x;
    uint r = 0;
    for (int i = 0; i < 4; ++i)
        r |= (uint)(v >> (8 * ((sel >> (4 * i)) & 7u)) & 0xffu) << (8 * i);
    return r;
}
#endif
#define ASYNC8(dst, src, ok) (*(__local uint4 *)(dst) = (ok) ? vload4(0, (__global const uint *)(src)) : (uint4)(0))
#define WARPGROUP_BARRIER() barrier(CLK_LOCAL_MEM_FENCE) /* (every work-item reaches it: no producer here) */
#define ASYNC_COMMIT()
#define ASYNC_WAIT0()
#define ASYNC_WAIT(n)
#define FENCE_PROXY_ASYNC()
#define WGMMA_COMMIT()
#define WGMMA_WAIT0()
#define WGMMA_WAIT1()
#if WG_FP8
/* S = A * B^T (fp8 bytes, the 32 reduced columns from k0) and O += P * V (P's E4M3 bytes, a row-major
 * BLOCK_M x BLOCK_N tile at their fragments' places, keys k0 .. k0+31 of V's transposed tile), emulated */
inline void wg_ss_emu(float *d, const int n, __local const ushort *a, const int a_row0, __local const ushort *b,
                      const int k0, const int acc, const int wt)
{
    const int w = wt >> 5, l = wt & 31;
    __local const uchar *a8 = (__local const uchar *)a, *b8 = (__local const uchar *)b;
    for (int e = 0; e < n / 2; ++e) {
        const int row = a_row0 + 16 * w + (l >> 2) + 8 * ((e >> 1) & 1), col = 8 * (e >> 2) + 2 * (l & 3) + (e & 1);
        float s = 0.0f;
        for (int k = k0; k < k0 + 32; ++k)
            s = fma(q_byte(a8[BYTE_AT(row, k, BLOCK_M, QD)]), q_byte(b8[BYTE_AT(col, k, BLOCK_N, QD)]), s);
        d[e] = acc ? d[e] + s : s;
    }
}
inline void wg_pv_emu(float *d, __local const ushort *p, const int p_row0, __local const ushort *v, const int k0,
                      const int wt)
{
    const int w = wt >> 5, l = wt & 31;
    __local const uchar *p8 = (__local const uchar *)p, *v8 = (__local const uchar *)v;
    for (int e = 0; e < NO; ++e) {
        const int row = p_row0 + 16 * w + (l >> 2) + 8 * ((e >> 1) & 1), col = 8 * (e >> 2) + 2 * (l & 3) + (e & 1);
        float s = 0.0f;
        for (int k = k0; k < k0 + 32; ++k)
            s = fma(e4m3_to_float(p8[row * BLOCK_N + k]), q_byte(v8[BYTE_AT(col, k, DV, VTW)]), s);
        d[e] += s;
    }
}
#else
/* S = A * B^T for this work-item's accumulators: A rows a_row0 .. +63 and B rows of tiles C wide, the 16
 * reduced columns from k0 (emulated wgmma, SS form). */
inline void wg_ss_emu(float *d, const int n, __local const ushort *a, const int a_row0, __local const ushort *b,
                      const int k0, const int acc, const int wt)
{
    const int w = wt >> 5, l = wt & 31;
    for (int e = 0; e < n / 2; ++e) {
        const int row = a_row0 + 16 * w + (l >> 2) + 8 * ((e >> 1) & 1), col = 8 * (e >> 2) + 2 * (l & 3) + (e & 1);
        float s = 0.0f;
        for (int k = k0; k < k0 + 16; ++k)
            s = fma(bits_to_float(a[TILE_AT(row, k, BLOCK_M, HEAD_DIM)]),
                    bits_to_float(b[TILE_AT(col, k, BLOCK_N, HEAD_DIM)]), s);
        d[e] = acc ? d[e] + s : s;
    }
}
/* O += P * V: P rows p_row0 .. +63 of a tile BLOCK_N wide, V rows (keys) k0 .. k0+15 of a tile DV
 * wide (emulated wgmma, P from local memory in place of registers, V read transposed). */
inline void wg_pv_emu(float *d, __local const ushort *p, const int p_row0, __local const ushort *v, const int k0,
                      const int wt)
{
    const int w = wt >> 5, l = wt & 31;
    for (int e = 0; e < NO; ++e) {
        const int row = p_row0 + 16 * w + (l >> 2) + 8 * ((e >> 1) & 1), col = 8 * (e >> 2) + 2 * (l & 3) + (e & 1);
        float s = 0.0f;
        for (int k = k0; k < k0 + 16; ++k)
            s = fma(bits_to_float(p[TILED(row, k, BLOCK_N)]), bits_to_float(v[TILE_AT(k, col, BLOCK_N, DV)]), s);
        d[e] += s;
    }
}
#endif
#endif

/* A tile of ROWS rows of K or V (keys from n0) or of Q into local memory, TILED, rows of N chunks (CPR or
 * CPR_V). Chunk i (16 bytes) of a tile: a warp's 32 consecutive chunks cover SEG = 4 chunks of each of 8
 * neighbouring rows (64 bytes of 8 rows: the warp fills four neighbouring core matrices, 512 contiguous
 * bytes in local memory, no bank conflict; docs/design/wgmma.md), or where N is not a multiple of 4 (d=80)
 * SEG = 2 chunks of 16 rows (four core matrices again). Rows at or past `limit` are zeros. */
#define SEG(N) ((N) % 4 ? 2 : 4)
#define CHUNK_ROW(i, N) ((32 / SEG(N)) * (((i) >> 5) / ((N) / SEG(N))) + ((i) / SEG(N)) % (32 / SEG(N)))
#define CHUNK_COL(i, N) (8 * (SEG(N) * (((i) >> 5) % ((N) / SEG(N))) + (i) % SEG(N)))
#if SWIZZLE /* (chunk i of a tile of ROWS rows: piece i % 8 of a 64-column block's row; a warp: four rows) */
/* (ROWS a power of two, or 192 for 192-key tiles: the same mask's code for the first) */
#define CHUNK_R(i, ROWS, N) (((ROWS) & ((ROWS)-1)) ? ((i) >> 3) % (ROWS) : ((i) >> 3) & ((ROWS)-1))
#define CHUNK_C(i, ROWS, N) (64 * (((i) >> 3) / (ROWS)) + 8 * ((i)&7))
#define CHUNKS(N) (PAD64(8 * (N)) / 8) /* a row's chunks walked: whole blocks, those past N skipped */
#define CHUNK_IN(c, N) ((N) % 8 == 0 || (c) < 8 * (N))
#else
#define CHUNK_R(i, ROWS, N) CHUNK_ROW(i, N)
#define CHUNK_C(i, ROWS, N) CHUNK_COL(i, N)
#define CHUNKS(N) (N)
#define CHUNK_IN(c, N) 1
#endif
/* Q's tile: LOAD_TILED's copies, or where Q has a type of its own (Q_CONVERT) the same chunks read as
 * floats and rounded to the operands' type by each work-item (synchronous stores: the waits and proxy
 * fences before S(0) cover them as they do the sign flip's) */
#if Q_CONVERT
#define LOAD_Q_TILED(dst, ROWS, ROW_PTR, limit)                                                                \
    do {                                                                                                       \
        UNROLL /* (every load issued before the first store waits for its data) */                             \
        for (int it_ = 0; it_ < ((ROWS)*CHUNKS(CPR) + WG_SIZE - 1) / WG_SIZE; ++it_) {                         \
            const int i_ = tid + it_ * WG_SIZE;                                                                \
            const int r_ = CHUNK_R(i_, ROWS, CPR), c_ = CHUNK_C(i_, ROWS, CPR);                                \
            if ((((ROWS)*CHUNKS(CPR)) % WG_SIZE == 0 || i_ < (ROWS)*CHUNKS(CPR)) && CHUNK_IN(c_, CPR)) {       \
                const uint4 x_ = r_ < (limit) ? q_round8(ROW_PTR(r_) + c_) : (uint4)(0);                       \
                *(__local uint4 *)((dst) + TILE_AT(r_, c_, ROWS, QD)) = x_;                                    \
            }                                                                                                  \
        }                                                                                                      \
    } while (0)
#else
#define LOAD_Q_TILED(dst, ROWS, ROW_PTR, limit) LOAD_TILED(dst, ROWS, ROW_PTR, limit, QD)
#endif
/* (C: the tile's width in 16-bit units, QD or DV; a last partial round of chunks where ROWS * C / 8 is not a
 * multiple of WG_SIZE; swizzled, a last block's chunks past C skipped) */
#define LOAD_TILED(dst, ROWS, ROW_PTR, limit, C)                                                               \
    do {                                                                                                       \
        UNROLL                                                                                                 \
        for (int it_ = 0; it_ < ((ROWS)*CHUNKS((C) / 8) + WG_SIZE - 1) / WG_SIZE; ++it_) {                     \
            const int i_ = tid + it_ * WG_SIZE;                                                                \
            const int r_ = CHUNK_R(i_, ROWS, (C) / 8), c_ = CHUNK_C(i_, ROWS, (C) / 8);                        \
            const bool ok_ = r_ < (limit);                                                                     \
            if ((((ROWS)*CHUNKS((C) / 8)) % WG_SIZE == 0 || i_ < (ROWS)*CHUNKS((C) / 8)) &&                    \
                CHUNK_IN(c_, (C) / 8))                                                                         \
                ASYNC8((dst) + TILE_AT(r_, c_, ROWS, C), ROW_PTR(ok_ ? r_ : 0) + c_, ok_);                     \
        }                                                                                                      \
    } while (0)
/* A negative scale's sign flip of Q's chunks this work-item copied (LOAD_Q_TILED's walk) */
#define FLIP_Q_SIGN()                                                                                          \
    do {                                                                                                       \
        for (int i_ = tid; i_ < BLOCK_M * CHUNKS(CPR); i_ += WG_SIZE) {                                        \
            const int r_ = CHUNK_R(i_, BLOCK_M, CPR), c_ = CHUNK_C(i_, BLOCK_M, CPR);                          \
            if (CHUNK_IN(c_, CPR))                                                                             \
                *(__local uint4 *)(q_s + TILE_AT(r_, c_, BLOCK_M, QD)) ^= q_sign;                              \
        }                                                                                                      \
    } while (0)

/* The producer's copy of a K or V tile (row 0 at src_, rows ss_ elements apart; rows at or past limit_
 * zeros), walked so that the address arithmetic is a pointer step a block of rows and immediate offsets
 * between column groups (the shared pattern's divisions, recomputed a piece, cost about 45 instructions a
 * copy, which the producer's four warps could not issue fast enough: docs/design/wgmma.md). A warp
 * instruction covers COPY_ROWS rows: whole 128-byte lines of 4 rows into the swizzled tiles, 64 bytes of 8
 * rows into TILED's (512 contiguous bytes of local memory either way); work-item me takes rows COPY_ROWS *
 * (me / 32) + (me % 32) / (32 / COPY_ROWS) + 4 COPY_ROWS k, piece me % (32 / COPY_ROWS) of each column
 * group of GROUP_COLS (written as shifts and masks: me is never negative). */
#define GROUP_COLS (SWIZZLE ? 64 : (QD | DV) % 32 ? 16 : 32) /* (16: d=80 unswizzled) */
#define PIECES (GROUP_COLS / 8)                                     /* a row's pieces in a column group */
#define COPY_ROWS (32 / PIECES)
#if PAGE_SIZE /* (a paged cache: each row's page through the block table, the tile's loaded first: pg_) */
#define PRODUCER_SRC(s_, src_, base_, n_, row_, ss_, ps_, c0_, ok_)                                            \
    (TPTR((base_) + kv_page_row(pg_[rb_], min((n_) + (row_), skv - 1), ss_, ps_)) + (c0_))
#else
#define PRODUCER_SRC(s_, src_, base_, n_, row_, ss_, ps_, c0_, ok_) ((ok_) ? (s_) : (src_) + (c0_))
#endif
#if PAGE_SIZE && FCL_PTX /* (unrolled where pages are looked up: pg_ stays in registers) */
#define PRODUCER_ROWS_UNROLL _Pragma("unroll")
#else
#define PRODUCER_ROWS_UNROLL _Pragma("nounroll")
#endif
#if PAGE_SIZE /* the pages of this work-item's rows of the tile, loaded together before its copies issue */
#define PRODUCER_PAGES(n_, r0_)                                                                                \
    int pg_[BLOCK_N / (4 * COPY_ROWS)];                                                                        \
    UNROLL                                                                                                     \
    for (int p_ = 0; p_ < BLOCK_N / (4 * COPY_ROWS); ++p_)                                                     \
        pg_[p_] = kv_page(b, min((n_) + (r0_) + 4 * COPY_ROWS * p_, skv - 1), BT, max_pages, num_pages)
#else
#define PRODUCER_PAGES(n_, r0_)
#endif
#define PRODUCER_LOAD(dst_, base_, n_, ss_, ps_, limit_, C_)                                                   \
    do {                                                                                                       \
        const int r0_ = COPY_ROWS * (me >> 5) + (me & 31) / PIECES, c0_ = 8 * (me & (PIECES - 1));             \
        __global const ushort *src_ = TPTR((base_) + KV_ROW(n_, ss_, ps_));                                     \
        __global const ushort *s_ = src_ + (long)r0_ * ((ss_) / EPU) + c0_;                                    \
        PRODUCER_PAGES(n_, r0_);                                                                               \
        __local ushort *d_ = (dst_) + TILE_AT(r0_, c0_, BLOCK_N, C_);                                          \
        PRODUCER_ROWS_UNROLL for (int rb_ = 0; rb_ < BLOCK_N / (4 * COPY_ROWS); ++rb_)                         \
        {                                                                                                      \
            const bool ok_ = r0_ + 4 * COPY_ROWS * rb_ < (limit_);                                             \
            __global const ushort *sp_ =                                                                       \
                PRODUCER_SRC(s_, src_, base_, n_, r0_ + 4 * COPY_ROWS * rb_, ss_, ps_, c0_, ok_);              \
            UNROLL                                                                                             \
            for (int g_ = 0; g_ < ((C_) + GROUP_COLS - 1) / GROUP_COLS; ++g_) /* (a last group: d=80, 96) */  \
                if ((C_) % GROUP_COLS == 0 || GROUP_COLS * g_ + c0_ < (C_))                                    \
                    ASYNC8(d_ + g_ * TILE_AT(0, GROUP_COLS, BLOCK_N, C_), sp_ + GROUP_COLS * g_, ok_);         \
            s_ += 4 * COPY_ROWS * (long)((ss_) / EPU);                                                         \
            d_ += TILE_AT(4 * COPY_ROWS, 0, BLOCK_N, C_);                                                      \
        }                                                                                                      \
    } while (0)

#if WG_FP8
/* V's tile transposed (wgmma reads 8-bit B operands K-major only). Byte k' of row n of a V buffer holds
 * V[key][n], the keys renumbered in each 16-key group so that P's E4M3 bytes are used where the S
 * accumulators hold them (PACK_P): k' = 4t + 2h + b is key 8h + 2t + b. The work-items that copy V's tile
 * into the staging tile transpose it. Unit u of a tile (VT_UNITS of them, 128 work-items a round): tq = u %
 * 4, group G = (u / 4) % NG of 16 keys, column chunk cc = u / (4 NG) of 16 bytes; rows 16G + 2tq + {0, 1,
 * 8, 9} of chunk cc, copied into the staging tile (VT_STAGE, cp.async), become word 4G + tq of rows 16cc ..
 * 16cc+15 of V's tile (VT_TRANSPOSE, 24 prmt a unit; a warp's store is the 32 words of one row). The
 * staging tile: BLOCK_N rows of DV bytes, 16-byte chunk cc of row r at cc ^ STG_SWZ(r), so that the 8
 * lanes of a quarter warp reach 8 different bank groups. */
#define NG (BLOCK_N / 16)
#define VT_UNITS (4 * NG * (DV / 16))
/* VT_PAIR (on unless a build option sets it to 0: docs/design/fp8.md, fp8-3): a work-item
 * takes units tq and tq + 1 of a group and chunk together (rows 16G + 2tq .. 2tq+3 and their +8) and
 * writes each row's two words in one 8-byte store (words 4G + tq, tq even, are adjacent within a swizzled
 * 16-byte piece): half the stores, one round at d=128. Its staging swizzle spreads a quarter warp's rows
 * 16G + 4h + j (G < 4, h < 2) over the 8 pieces of a row. */
#ifndef VT_PAIR
#define VT_PAIR 1
#endif
#define VT_PER (VT_PAIR ? 2 : 1)                         /* units a work-item takes at once */
#define VT_ROUNDS ((VT_UNITS / VT_PER + 127) / 128)
/* VT_LDSM (docs/design/fp8.md, fp8-7): each warp transposes whole blocks of 16 keys x 32 bytes by
 * ldmatrix.trans (16-bit pairs), two byte permutes a pair of rows and stmatrix (VT_LDSM_BLOCK below); its
 * staging swizzle spreads a matrix's 8 rows over 8 bank groups (at d_v = 64, two rows a 128-byte line,
 * by the row's bit 0 and the chunk's swizzle by bits 1-2). The default at d_v 64, 128 and 256, where it
 * measured 17%, 4% and 31% faster on the H100 (fp8-7, fp8-8); 0 keeps the permutes. */
#ifndef VT_LDSM
#define VT_LDSM (DV == 64 || DV == 128 || DV == 256)
#endif
#if VT_LDSM
#define STG_SWZ(r) (DV >= 128 ? ((r)&7) : (((r) >> 1) & 3))
#elif VT_PAIR
#define STG_SWZ(r) (((((r) >> 2) & 1) | (((r) >> 3) & 6)) & (DV / 16 - 1))
#else
#define STG_SWZ(r) (((((r) >> 1) & 3) | (((r) >> 2) & 4)) & (DV / 16 - 1))
#endif
#define STG_AT(r, cc) ((r) * (DV / 2) + 8 * ((cc) ^ STG_SWZ(r)))
/* VT_BUFS staging tiles (1 or 2; the host's 2 with the producer): with two, tile t's copies go into tile
 * t % 2 while tile t-1's are transposed from the other (docs/design/fp8.md, fp8-2) */
#ifndef VT_BUFS
#define VT_BUFS 1
#endif
#define STG(t) (stg_s + ((t) % VT_BUFS) * (BLOCK_N * DV / 2))
#define VT_WORD(n, w) (TILE_AT(n, 2 * (w), DV, VTW) >> 1) /* word w of row n, in uints */
#if VT_PAIR /* (u_: a pair of units) */
#define VT_UNIT(u_)                                                                                            \
    const int tq_ = 2 * ((u_)&1), g_ = ((u_) >> 1) % NG, cc_ = ((u_) >> 1) / NG;                               \
    if ((VT_UNITS / 2) % 128 == 0 || (u_) < VT_UNITS / 2)
#else
#define VT_UNIT(u_)                                                                                            \
    const int tq_ = (u_)&3, g_ = ((u_) >> 2) % NG, cc_ = ((u_) >> 2) / NG;                                     \
    if (VT_UNITS % 128 == 0 || (u_) < VT_UNITS)
#endif
/* work-item me_'s units of V's tile at keys n0_ (rows at or past limit_: zeros) into the staging tile stg_ */
#define VT_STAGE(stg_, me_, n0_, limit_)                                                                       \
    do {                                                                                                       \
        UNROLL                                                                                                 \
        for (int k_ = 0; k_ < VT_ROUNDS; ++k_) {                                                               \
            VT_UNIT((me_) + 128 * k_)                                                                          \
            {                                                                                                  \
                UNROLL                                                                                         \
                for (int x_ = 0; x_ < 4 * VT_PER; ++x_) {                                                      \
                    const int r_ = 16 * g_ + 2 * tq_ + (x_ & (2 * VT_PER - 1)) + 8 * (x_ / (2 * VT_PER));       \
                    const bool ok_ = r_ < (limit_);                                                            \
                    ASYNC8((stg_) + STG_AT(r_, cc_),                                                           \
                           TPTR(V + v_base + KV_ROW((n0_) + (ok_ ? r_ : 0), v_ss, v_sb)) + 8 * cc_, ok_);     \
                }                                                                                              \
            }                                                                                                  \
        }                                                                                                      \
    } while (0)
/* four columns n_ .. n_+3 of rows a, b, c, e (keys 2tq, +1, +8, +9) as word w_ of four rows of V's tile */
#define VT_WORDS(d_, n_, w_, a, b, c, e)                                                                       \
    do {                                                                                                       \
        const uint x0_ = prmt(a, b, 0x5140u), x1_ = prmt(a, b, 0x7362u);                                      \
        const uint y0_ = prmt(c, e, 0x5140u), y1_ = prmt(c, e, 0x7362u);                                      \
        (d_)[VT_WORD(n_, w_)] = prmt(x0_, y0_, 0x5410u);                                                      \
        (d_)[VT_WORD((n_) + 1, w_)] = prmt(x0_, y0_, 0x7632u);                                                \
        (d_)[VT_WORD((n_) + 2, w_)] = prmt(x1_, y1_, 0x5410u);                                                \
        (d_)[VT_WORD((n_) + 3, w_)] = prmt(x1_, y1_, 0x7632u);                                                \
    } while (0)
/* a unit's four 16-byte reads of the staging tile stg_: rows r_, r_+1, r_+8, r_+9 of chunk cc_ */
#define VT_READ4(stg_, r_, cc_, a, b, c, e)                                                                    \
    const uint4 a = *(__local const uint4 *)((stg_) + STG_AT(r_, cc_));                                        \
    const uint4 b = *(__local const uint4 *)((stg_) + STG_AT((r_) + 1, cc_));                                  \
    const uint4 c = *(__local const uint4 *)((stg_) + STG_AT((r_) + 8, cc_));                                  \
    const uint4 e = *(__local const uint4 *)((stg_) + STG_AT((r_) + 9, cc_))
#if VT_PAIR
/* rows n_ .. n_+3 of V's tile, words w_ and w_+1: four columns of rows a .. e (keys 2tq, +1, +8, +9) and of
 * rows a2 .. e2 (keys 2tq+2, +3, +10, +11), one 8-byte store a row */
#define VT_WORDS2(d_, n_, w_, a, b, c, e, a2, b2, c2, e2)                                                      \
    do {                                                                                                       \
        const uint x0_ = prmt(a, b, 0x5140u), x1_ = prmt(a, b, 0x7362u);                                      \
        const uint y0_ = prmt(c, e, 0x5140u), y1_ = prmt(c, e, 0x7362u);                                      \
        const uint u0_ = prmt(a2, b2, 0x5140u), u1_ = prmt(a2, b2, 0x7362u);                                  \
        const uint v0_ = prmt(c2, e2, 0x5140u), v1_ = prmt(c2, e2, 0x7362u);                                  \
        *(__local uint2 *)((d_) + VT_WORD(n_, w_)) = (uint2)(prmt(x0_, y0_, 0x5410u), prmt(u0_, v0_, 0x5410u)); \
        *(__local uint2 *)((d_) + VT_WORD((n_) + 1, w_)) =                                                     \
            (uint2)(prmt(x0_, y0_, 0x7632u), prmt(u0_, v0_, 0x7632u));                                        \
        *(__local uint2 *)((d_) + VT_WORD((n_) + 2, w_)) =                                                     \
            (uint2)(prmt(x1_, y1_, 0x5410u), prmt(u1_, v1_, 0x5410u));                                        \
        *(__local uint2 *)((d_) + VT_WORD((n_) + 3, w_)) =                                                     \
            (uint2)(prmt(x1_, y1_, 0x7632u), prmt(u1_, v1_, 0x7632u));                                        \
    } while (0)
/* one unit (with VT_PAIR two) of rows r_ .. of chunk cc_ of the staging tile stg_ as word w_ (and w_+1)
 * of rows n_ .. n_+15 of V's buffer d_ */
#define VT_TRANSPOSE_UNIT(d_, stg_, r_, w_, n_, cc_)                                                           \
    do {                                                                                                       \
        VT_READ4(stg_, r_, cc_, a_, b_, c_, e_);                                                               \
        VT_READ4(stg_, (r_) + 2, cc_, a2_, b2_, c2_, e2_);                                                     \
        VT_WORDS2(d_, n_, w_, a_.s0, b_.s0, c_.s0, e_.s0, a2_.s0, b2_.s0, c2_.s0, e2_.s0);                     \
        VT_WORDS2(d_, (n_) + 4, w_, a_.s1, b_.s1, c_.s1, e_.s1, a2_.s1, b2_.s1, c2_.s1, e2_.s1);               \
        VT_WORDS2(d_, (n_) + 8, w_, a_.s2, b_.s2, c_.s2, e_.s2, a2_.s2, b2_.s2, c2_.s2, e2_.s2);               \
        VT_WORDS2(d_, (n_) + 12, w_, a_.s3, b_.s3, c_.s3, e_.s3, a2_.s3, b2_.s3, c2_.s3, e2_.s3);              \
    } while (0)
#else
#define VT_TRANSPOSE_UNIT(d_, stg_, r_, w_, n_, cc_)                                                           \
    do {                                                                                                       \
        VT_READ4(stg_, r_, cc_, a_, b_, c_, e_);                                                               \
        VT_WORDS(d_, n_, w_, a_.s0, b_.s0, c_.s0, e_.s0);                                                      \
        VT_WORDS(d_, (n_) + 4, w_, a_.s1, b_.s1, c_.s1, e_.s1);                                                \
        VT_WORDS(d_, (n_) + 8, w_, a_.s2, b_.s2, c_.s2, e_.s2);                                                \
        VT_WORDS(d_, (n_) + 12, w_, a_.s3, b_.s3, c_.s3, e_.s3);                                               \
    } while (0)
#endif
/* work-item me_'s units, once its copies landed, from the staging tile stg_ into V's buffer dst_ */
#define VT_TRANSPOSE(dst_, stg_, me_)                                                                          \
    do {                                                                                                       \
        __local uint *const d_ = (__local uint *)(dst_);                                                       \
        UNROLL                                                                                                 \
        for (int k_ = 0; k_ < VT_ROUNDS; ++k_) {                                                               \
            VT_UNIT((me_) + 128 * k_)                                                                          \
            VT_TRANSPOSE_UNIT(d_, stg_, 16 * g_ + 2 * tq_, 4 * g_ + tq_, 16 * cc_, cc_);                       \
        }                                                                                                      \
    } while (0)
#if VT_LDSM
/* VT_LDSM's blocks: block b of a tile (NG x DV / 32 of them) is key group G = b % NG (16 keys) and the
 * staging tile's 16-byte chunks 2cp and 2cp + 1, cp = b / NG; warp w of the four takes blocks w, w + 4, ...
 * Lane l copies row 16G + l % 16 of chunk 2cp + l / 16 (VT_STAGE), and gives ldmatrix the same row as
 * row l % 8 of matrix l / 8 (matrices: keys 0-7 and 8-15 of chunk 2cp, then of 2cp + 1). With .trans, lane
 * 4j + q receives of each matrix rows 2q and 2q + 1 at its 16-bit column j: the bytes of head dims 2j and
 * 2j + 1 of keys 2q and 2q + 1 (+8 in the second). Two permutes give word q of V's rows 16 * chunk + 2j
 * (bytes 0 and 2 of each of the pair) and 2j + 1 (bytes 1 and 3): keys 2q, 2q + 1, 2q + 8, 2q + 9 of the
 * group, word 4G + q of the row as VT_WORDS makes it. stmatrix stores lane 4j + q's register m as word q of
 * row j of matrix m, and lane l gives the address of row l % 8 of matrix l / 8: V's row 16 * chunk + 2i
 * (+1 for odd m), its 16 bytes of group G (words 4G .. 4G + 3, one swizzled piece). */
#define VT_BLOCKS (NG * (DV / 32))
#if VT_BLOCKS % 4 || (DV != 64 && DV != 128 && DV != 256)
#error "VT_LDSM: d_v 64, 128 or 256 (whole 32-byte chunk pairs, STG_SWZ's range), blocks falling evenly to four warps"
#endif
#define VT_LDSM_STAGE(stg_, me_, n0_, limit_)                                                                  \
    do {                                                                                                       \
        const int ln_ = (me_)&31;                                                                              \
        UNROLL                                                                                                 \
        for (int k_ = 0; k_ < VT_BLOCKS / 4; ++k_) {                                                           \
            const int b_ = ((me_) >> 5) + 4 * k_, r_ = 16 * (b_ % NG) + (ln_ & 15), cc_ = 2 * (b_ / NG) + (ln_ >> 4); \
            const bool ok_ = r_ < (limit_);                                                                    \
            ASYNC8((stg_) + STG_AT(r_, cc_), TPTR(V + v_base + KV_ROW((n0_) + (ok_ ? r_ : 0), v_ss, v_sb)) + 8 * cc_, \
                   ok_);                                                                                       \
        }                                                                                                      \
    } while (0)
#if FCL_PTX
/* (every lane's copies waited for, then the warp's: ldmatrix reads rows other lanes copied) */
#define VT_WARP_SYNC() __asm__ volatile("bar.warp.sync -1;" ::: "memory")
#define VT_LDSM4(x, stg_, r_, cc_)                                                                             \
    __asm__ volatile("//SM90A ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"         \
                     : "=r"((x)[0]), "=r"((x)[1]), "=r"((x)[2]), "=r"((x)[3])                                  \
                     : "r"(LADDR((stg_) + STG_AT(r_, cc_)))                                                    \
                     : "memory")
#define VT_STSM4(d_, n_, w_, x)                                                                                \
    __asm__ volatile("//SM90A stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(         \
                         LADDR((d_) + VT_WORD(n_, w_))),                                                       \
                     "r"((x)[0]), "r"((x)[1]), "r"((x)[2]), "r"((x)[3])                                        \
                     : "memory")
#else
/* (emulated: each work-item reads what its lane would receive and writes what its lane gives; the
 * staging tile's rows, copied by other work-items, behind LOAD_V's barrier) */
#define VT_WARP_SYNC()
#define VT_LDSM4(x, stg_, r_, cc_)                                                                             \
    do {                                                                                                       \
        const int j_ = ln_ >> 2, q_ = ln_ & 3, r0_ = (r_) - (ln_ & 7) - 8 * ((ln_ >> 3) & 1),                   \
                  c0_ = (cc_) - (ln_ >> 4);                                                                    \
        UNROLL                                                                                                 \
        for (int m_ = 0; m_ < 4; ++m_) {                                                                       \
            const int ra_ = r0_ + 8 * (m_ & 1) + 2 * q_, ca_ = c0_ + (m_ >> 1);                                 \
            (x)[m_] = (uint)(stg_)[STG_AT(ra_, ca_) + j_] | (uint)(stg_)[STG_AT(ra_ + 1, ca_) + j_] << 16;       \
        }                                                                                                      \
    } while (0)
#define VT_STSM4(d_, n_, w_, x)                                                                                \
    do {                                                                                                       \
        const int j_ = ln_ >> 2, q_ = ln_ & 3, n0_ = (n_) - 16 * (ln_ >> 4) - 2 * (ln_ & 7) - ((ln_ >> 3) & 1);  \
        UNROLL                                                                                                 \
        for (int m_ = 0; m_ < 4; ++m_)                                                                         \
            (d_)[VT_WORD(n0_ + 16 * (m_ >> 1) + 2 * j_ + (m_ & 1), (w_) + q_)] = (x)[m_];                      \
    } while (0)
#endif
/* work-item me_'s blocks, its warp's copies landed, from the staging tile stg_ into V's buffer dst_ */
#define VT_LDSM_TRANSPOSE(dst_, stg_, me_)                                                                     \
    do {                                                                                                       \
        __local uint *const d_ = (__local uint *)(dst_);                                                       \
        const int ln_ = (me_)&31;                                                                              \
        VT_WARP_SYNC();                                                                                        \
        UNROLL                                                                                                 \
        for (int k_ = 0; k_ < VT_BLOCKS / 4; ++k_) {                                                           \
            const int b_ = ((me_) >> 5) + 4 * k_, g_ = b_ % NG, cp_ = b_ / NG;                                 \
            uint x_[4], y_[4];                                                                                 \
            VT_LDSM4(x_, stg_, 16 * g_ + (ln_ & 15), 2 * cp_ + (ln_ >> 4));                                    \
            y_[0] = prmt(x_[0], x_[1], 0x6420u);                                                               \
            y_[1] = prmt(x_[0], x_[1], 0x7531u);                                                               \
            y_[2] = prmt(x_[2], x_[3], 0x6420u);                                                               \
            y_[3] = prmt(x_[2], x_[3], 0x7531u);                                                               \
            VT_STSM4(d_, 32 * cp_ + 16 * (ln_ >> 4) + 2 * (ln_ & 7) + ((ln_ >> 3) & 1), 4 * g_, y_);           \
        }                                                                                                      \
    } while (0)
#undef VT_STAGE
#define VT_STAGE(stg_, me_, n0_, limit_) VT_LDSM_STAGE(stg_, me_, n0_, limit_)
#undef VT_TRANSPOSE
#define VT_TRANSPOSE(dst_, stg_, me_) VT_LDSM_TRANSPOSE(dst_, stg_, me_)
#endif
/* V's tile at keys n0_ into buffer dst_ where the consumers copy (no producer): staged and transposed by
 * the first warpgroup at once (its copies waited for: the producer's way, synchronous); emulated with
 * VT_LDSM, whose lanes read rows that others copied, a barrier between and one after (two LOAD_Vs may
 * follow each other, the second's copies overwriting what the first's transpose still reads; LOAD_V is
 * reached by the whole work-group) */
#if VT_LDSM && !FCL_PTX
#define VT_EMU_BARRIER() barrier(CLK_LOCAL_MEM_FENCE)
#else
#define VT_EMU_BARRIER()
#endif
#define LOAD_V(dst_, n0_, ROW_PTR)                                                                             \
    do {                                                                                                       \
        if (tid < 128) {                                                                                       \
            VT_STAGE(stg_s, tid, n0_, skv - (n0_));                                                            \
            ASYNC_COMMIT();                                                                                    \
            ASYNC_WAIT0();                                                                                     \
        }                                                                                                      \
        VT_EMU_BARRIER();                                                                                      \
        if (tid < 128)                                                                                         \
            VT_TRANSPOSE(dst_, stg_s, tid);                                                                    \
        VT_EMU_BARRIER(); /* (the staging tile read by all before the next LOAD_V's copies into it) */       \
    } while (0)
#else
#define LOAD_V(dst_, n0_, ROW_PTR) LOAD_TILED(dst_, BLOCK_N, ROW_PTR, skv - (n0_), DV)
#endif

__kernel __attribute__((reqd_work_group_size(WG_THREADS, 1, 1))) void
flash_wgmma(FCL_SIGNATURE(FCL_FLASH_MMA_ARGS))
{
    FCL_UNPACK();
    APPLY_QKVO_OFFSETS();
    APPLY_PREFILL_OFFSETS();
#if WG_FP8
    DESCALE += descale_off;
#endif
    __local uint4 q4[Q_BUFS * Q_TILE_U / 8 + WG_LOCAL_PAD / 16] LOCAL_ALIGN;
    __local uint4 k4[KV_STAGES * KT / 8] LOCAL_ALIGN;
    __local uint4 v4[KV_STAGES * VT / 8] LOCAL_ALIGN;
    __local ushort *const q_s = (__local ushort *)q4;
    __local ushort *const k_s = (__local ushort *)k4;
    __local ushort *const v_s = (__local ushort *)v4;
#if WG_FP8
    __local uint4 stg4[VT_BUFS * BLOCK_N * DV / 16]; /* V's tiles as copied, before their transpose */
    __local ushort *const stg_s = (__local ushort *)stg4;
#endif
#if !FCL_PTX
    __local uint4 p4[BLOCK_M * BLOCK_N / 8];
    __local ushort *const p_s = (__local ushort *)p4;
    __local uint xchg[WARPS * 32 * 8];
#endif
#ifdef FLASHCL_DEBUG_SCALE
    float scale2 = scale_log2 * FLASHCL_DEBUG_SCALE;
#else
    float scale2 = scale_log2;
#endif
    const int tid = get_local_id(0);
#if WG_WARP_BCAST && FCL_PTX
    const int tid_w = as_int(shfl_idx(as_float(tid), 0)); /* (the warp's first work-item's: WG_WARP_BCAST) */
#else
    const int tid_w = tid;
#endif
    const int wgi = tid_w >> 7, wt = tid & 127; /* the warpgroup, and the work-item in it */
    const int warp = tid >> 5, lane = tid & 31;
    const int g = lane >> 2, t = lane & 3;
#if !FCL_PTX
    __local uint *const xw = xchg + warp * 32 * 8;
#endif
    /* WG_HEAVY_FIRST (on unless a build option sets it to 0: docs/design/wgmma.md, wgmma-lpt): with a
     * causal mask or a window the last query blocks of a head see the most keys; the work-groups the device
     * starts first take them, so that the lightest ones fill the last wave */
#ifndef WG_HEAVY_FIRST
#define WG_HEAVY_FIRST 1
#endif
/* Row block mb_ of nmb_ of (batch, head) bh_: its first row m0 (heavy first: the blocks reversed), batch b,
 * head h and KV head hk, its sequence's view, and its keys (BLOCK_KEYS) */
#define BLOCK_ROWS(mb_, nmb_, bh_)                                                                             \
    BLOCK_COORDS(mb_, nmb_, bh_);                                                                              \
    BLOCK_SEQ()
#define BLOCK_COORDS(mb_, nmb_, bh_)                                                                           \
    const int m0 = (WG_HEAVY_FIRST && HAS_WINDOW ? (nmb_)-1 - (mb_) : (mb_)) * BLOCK_M;                        \
    const int bh = (bh_);                                                                                      \
    const int b = bh / heads_q, h = bh - b * heads_q, hk = h / group
#define BLOCK_SEQ()                                                                                            \
    const seq_view sv = seq_view_of(b, seq_q, seq_kv, CU_Q, CU_K, total_q, total_kv, CACHE_LENS, BATCH_IDX,    \
                                    LEFT_PAD, cache_batch);                                                    \
    const int sq = sv.sq, skv = sv.skv
/* the keys the block reads, and those all its rows see (geometry.cl); BLOCK_TILES: its BLOCK_N-key tiles */
#define BLOCK_KEYS()                                                                                           \
    const long k_base = kv_base(sv, hk, k_sb, k_ss, k_sh);                                                     \
    const long v_base = kv_base(sv, hk, v_sb, v_ss, v_sh);                                                     \
    const block_keys keys = block_keys_of(m0, min(m0 + BLOCK_M, sq) - 1, sq, skv, win_left, win_right, BLOCK_N); \
    const int n_begin = keys.begin, n_end = keys.end, inner_lo = keys.inner_lo, inner_hi = keys.inner_hi
#define BLOCK_TILES() const int tiles = n_begin < n_end ? (n_end - n_begin + BLOCK_N - 1) / BLOCK_N : 0
#if WG_PERSIST
    const int blocks_m = (seq_q + BLOCK_M - 1) / BLOCK_M, n_work = blocks_m * batch * heads_q;
#if WG_BY_ROWS
    const int order_heads = wg_order_heads(seq_kv, group, batch * heads_q, win_left);
#endif
    const int w0 = (int)get_group_id(0), w_step = (int)get_num_groups(0);
    /* the work-group's slots w0, w0 + w_step, ... and the block of each (WG_SNAKE: odd rounds reversed; a slot
     * whose block is past the last one ends the work-group's blocks: it is in the last round) */
#if WG_SNAKE
    const int n_slots = (n_work + w_step - 1) / w_step * w_step;
#define WG_BLOCK_OF(w_) ((w_) / w_step * w_step + (((w_) / w_step) & 1 ? w_step - 1 - w0 : w0))
#else
    const int n_slots = n_work;
#define WG_BLOCK_OF(w_) (w_)
#endif
/* block w's row block and (batch, head): head by head, or row block by row block (WG_BY_ROWS) */
#if WG_BY_ROWS
#define BLOCK_OF(w_)                                                                                           \
    const int2 wo_ = wg_rows_order((w_), blocks_m, batch * heads_q, order_heads);                              \
    BLOCK_ROWS(wo_.x, blocks_m, wo_.y)
#else
#define BLOCK_OF(w_) BLOCK_ROWS((w_) % blocks_m, blocks_m, (w_) / blocks_m)
#endif
#define BLOCK_AT(w_)                                                                                           \
    BLOCK_OF(w_);                                                                                              \
    BLOCK_KEYS();                                                                                              \
    BLOCK_TILES()
#else
#if WG_BY_ROWS /* (the grid's work-groups in their order, the first index fastest) */
    const int nbh_ = (int)get_num_groups(1);
    const int2 wo_ = wg_rows_order((int)get_group_id(0) + (int)get_group_id(1) * (int)get_num_groups(0),
                                   (int)get_num_groups(0), nbh_, wg_order_heads(seq_kv, group, nbh_, win_left));
    BLOCK_COORDS(wo_.x, (int)get_num_groups(0), wo_.y);
#else
    BLOCK_COORDS((int)get_group_id(0), (int)get_num_groups(0), (int)get_group_id(1));
#endif
#if WG_FP8 /* (Q's and K's descale factors into the scale, V's into the final division) */
    const int heads_kv = heads_q / group;
    scale2 *= fp8_descale(DESCALE, 0, b, hk, batch, heads_kv) * fp8_descale(DESCALE, 1, b, hk, batch, heads_kv);
    const float v_descale = fp8_descale(DESCALE, 2, b, hk, batch, heads_kv);
#endif
    BLOCK_SEQ();
    BLOCK_KEYS();
    const int tb = 0; /* (one block: no tiles before it) */
#endif
    /* (key row j from kv_base, rows rs and pages ps elements apart: geometry.cl's kv_row) */
#define KV_ROW(j, rs, ps) kv_row(b, (j), (rs), (ps), BT, max_pages, num_pages)

    /* Q's block (rows past the queries: zeros) and the first K tile, one group of copies. The scale goes
     * into the exponent of scores whose maximum is taken unscaled, which needs a positive scale: a
     * negative one negates Q (its sign bits, exact), flipped by each work-item on its own chunks. */
    const uint q_sign = scale2 < 0.0f ? (WG_FP8 ? 0x80808080u : 0x80008000u) : 0u;
    const float scale_abs = fabs(scale2);
    /* With score modifiers of the value the scores are scaled (and modified) before the softmax, whose
     * exponent then takes them as they are (scores.cl's HAS_VALUE_MODS); mod_scale: the scale the
     * modifiers apply. */
    const float exp_scale = HAS_VALUE_MODS ? 1.0f : scale_abs, mod_scale = HAS_VALUE_MODS ? scale_abs : 1.0f;
#if WG_LAZY_RESCALE
    const float lazy_t = WG_LAZY_T / exp_scale; /* (the reference's slack in unscaled scores) */
#else
    const float lazy_t = 0.0f;
#endif
#define Q_ROW(r) TPTR(Q + q_row_offset(sv, h, q_row_clamp(m0 + (r), sq), q_sb, q_ss, q_sh))
#define K_ROW(r) TPTR(K + k_base + KV_ROW(n0 + (r), k_ss, k_sb))
#define V_ROW(r) (V + v_base + KV_ROW(n0 + (r), v_ss, v_sb))
#define K_NEXT(r) TPTR(K + k_base + KV_ROW(n1 + (r), k_ss, k_sb))
#define V_NEXT(r) (V + v_base + KV_ROW(nv + (r), v_ss, v_sb))
#if !WG_PERSIST
    BLOCK_TILES();
#endif
#if WG_PRODUCER
    /* mbarriers, a stage's each: "full" K and V (128 arrivals: each producer work-item's once its copies of
     * the tile landed) and "empty" K and V (WARPS arrivals: each consumer warp's once the products that read
     * the tile are done). After the barrier that makes them visible, no work-group barrier is reached. */
    __local ulong mbar[4 * KV_STAGES + 4 * WG_EPI];
#define FULL_K(t) (mbar + (tb + (t)) % KV_STAGES)
#define FULL_V(t) (mbar + KV_STAGES + (tb + (t)) % KV_STAGES)
#define EMPTY_K(t) (mbar + 2 * KV_STAGES + (tb + (t)) % KV_STAGES)
#define EMPTY_V(t) (mbar + 3 * KV_STAGES + (tb + (t)) % KV_STAGES)
#define ROUND(t) (((tb + (t)) / KV_STAGES) & 1) /* the parity of tile t's phase of its stage's barriers */
    /* WG_EPI's, Q tile p's: "Q full" (128 arrivals: each producer work-item's once its copies landed) and "O
     * staged" (WG_SIZE: every consumer work-item's once its stores of O into the tile are done); the k-th block
     * of the work-group takes tile k % 2, the (k / 2)-th phase of its barriers */
#define Q_FULL(p) (mbar + 4 * KV_STAGES + (p))
#define O_STAGED(p) (mbar + 4 * KV_STAGES + 2 + (p))
    THREADS_MARK(); /* (the finishing step: the entry's .reqntid, which setmaxnreg needs) */
    if (tid == 0) {
        for (int i = 0; i < 4 * KV_STAGES; ++i)
            mbar_init(mbar + i, i < 2 * KV_STAGES ? 128 : WARPS);
#if WG_EPI
        for (int p = 0; p < 2; ++p) {
            mbar_init(Q_FULL(p), 128);
            mbar_init(O_STAGED(p), WG_SIZE);
        }
#endif
    }
#if !Q_CONVERT && !WG_PERSIST /* (a converted Q: its loads wait for their data, so the consumers issue them
                  past the barrier, while the producer copies the first K tile; S(0)'s wait and fence cover their
                  stores; WG_PERSIST: each block's at its start) */
    if (tid < WG_SIZE) {
        LOAD_Q_TILED(q_s, BLOCK_M, Q_ROW, sq - m0);
        ASYNC_COMMIT();
    }
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
#if WG_EPI
/* The chunks of a Q tile (Q_TILE(kk_): the k-th block's, kk_ = k) the producer's work-item me takes, LOAD_TILED's
 * walk over 128 work-items: the same for O's stores out of the tile and Q's copies into it, so that a work-item
 * overwrites only chunks it has itself read (its stores, issued in order, have their data first) */
#define Q_TILE(kk_) ((__local ushort *)q4 + ((kk_)&1) * Q_TILE_U)
#define EPI_CHUNKS (BLOCK_M * CHUNKS(CPR))
#define EPI_FOR(i_) for (int i_ = me; i_ < EPI_CHUNKS; i_ += 128)
/* Slot ww_'s block (the kk_-th of the work-group): its staged O, once every consumer stored it, to global memory,
 * four chunks read before their stores */
#define EPI_STORE_O(kk_, ww_)                                                                                  \
    do {                                                                                                       \
        const int wb_ = WG_BLOCK_OF(ww_);                                                                      \
        BLOCK_OF(wb_); /* (its m0, sv, h, sq) */                                                               \
        __local const ushort *const src_ = Q_TILE(kk_);                                                        \
        mbar_wait(O_STAGED((kk_)&1), ((kk_) >> 1) & 1);                                                        \
        for (int i0_ = me; i0_ < EPI_CHUNKS; i0_ += 512) {                                                     \
            uint4 x_[4];                                                                                       \
            UNROLL                                                                                             \
            for (int u_ = 0; u_ < 4; ++u_) {                                                                   \
                const int i_ = i0_ + 128 * u_;                                                                 \
                if (EPI_CHUNKS % 512 == 0 || i_ < EPI_CHUNKS)                                                  \
                    x_[u_] = *(__local const uint4 *)(src_ + TILE_AT(CHUNK_R(i_, BLOCK_M, CPR),                \
                                                                    CHUNK_C(i_, BLOCK_M, CPR), BLOCK_M, QD));  \
            }                                                                                                  \
            UNROLL                                                                                             \
            for (int u_ = 0; u_ < 4; ++u_) {                                                                   \
                const int i_ = i0_ + 128 * u_;                                                                 \
                const int r_ = CHUNK_R(i_, BLOCK_M, CPR), c_ = CHUNK_C(i_, BLOCK_M, CPR);                      \
                if ((EPI_CHUNKS % 512 == 0 || i_ < EPI_CHUNKS) && CHUNK_IN(c_, CPR) && m0 + r_ < sq)           \
                    *(__global uint4 *)(O + q_row_offset(sv, h, m0 + r_, o_sb, o_ss, o_sh) + c_) = x_[u_];    \
            }                                                                                                  \
        }                                                                                                      \
    } while (0)
/* Slot ww_'s block's Q (the kk_-th of the work-group) into its tile, then the tile's "Q full" arrival */
#define EPI_COPY_Q(kk_, ww_)                                                                                   \
    do {                                                                                                       \
        const int wb_ = WG_BLOCK_OF(ww_);                                                                      \
        BLOCK_OF(wb_);                                                                                         \
        __local ushort *const dst_ = Q_TILE(kk_);                                                              \
        EPI_FOR(i_)                                                                                            \
        {                                                                                                      \
            const int r_ = CHUNK_R(i_, BLOCK_M, CPR), c_ = CHUNK_C(i_, BLOCK_M, CPR);                          \
            const bool ok_ = r_ < sq - m0;                                                                     \
            if (CHUNK_IN(c_, CPR))                                                                             \
                ASYNC8(dst_ + TILE_AT(r_, c_, BLOCK_M, QD), Q_ROW(ok_ ? r_ : 0) + c_, ok_);                    \
        }                                                                                                      \
        ASYNC_ARRIVE(Q_FULL((kk_)&1));                                                                         \
    } while (0)
/* In the k-th block (slot w): the block before's O out, then the block after's Q into the same tile */
#define EPI_STEP(k_, w_)                                                                                       \
    do {                                                                                                       \
        if ((k_) > 0) {                                                                                        \
            EPI_STORE_O((k_)-1, (w_)-w_step);                                                                  \
            if ((w_) + w_step < n_slots && WG_BLOCK_OF((w_) + w_step) < n_work)                                \
                EPI_COPY_Q((k_) + 1, (w_) + w_step);                                                           \
        }                                                                                                      \
    } while (0)
#endif
    if (tid_w >= WG_SIZE) {
        /* The producer: K(t) then V(t-1), the order of use, each into its stage once the consumers freed it
         * (a tile KV_STAGES earlier: the phase before; a stage's first round passes at once) */
        PRODUCER_REGS();
        const int me = tid - WG_SIZE;
#if WG_PERSIST
        int tb = 0;
#if WG_EPI
        /* (WG_EPI: the first two blocks' Q at once; each later block's at the epilogue step of the block two
         * before it, once that block's O has left its tile) */
        int k = 0;
        if (w0 < n_slots && WG_BLOCK_OF(w0) < n_work)
            EPI_COPY_Q(0, w0);
        if (w0 + w_step < n_slots && WG_BLOCK_OF(w0 + w_step) < n_work)
            EPI_COPY_Q(1, w0 + w_step);
#endif
        for (int w = w0; w < n_slots && WG_BLOCK_OF(w) < n_work; w += w_step) {
            BLOCK_AT(WG_BLOCK_OF(w));
#endif
        for (int t = 0; t <= tiles; ++t) {
#if WG_EPI
            /* (1: the block before's end where the producer waits anyway, K(KV_STAGES)'s stage being freed by
             * this block's S(0), which the consumers reach once they staged the block before's O; blocks of at
             * most KV_STAGES tiles take it after their copies. Measured: −4 to −16%, the step then on the path
             * to this block's next copies (wgmma-epi). 2: every block after its copies, about KV_STAGES tiles
             * before the consumers need the next block's first ones: wgmma-epi2) */
            if (WG_EPI_PRODUCER == 1 && t == KV_STAGES && t < tiles)
                EPI_STEP(k, w);
#endif
            if (t < tiles) {
                const int n1 = n_begin + t * BLOCK_N;
                mbar_wait(EMPTY_K(t), ROUND(t) ^ 1);
                PRODUCER_LOAD(KBUF(t), K + k_base, n1, k_ss, k_sb, skv - n1, QD);
                ASYNC_ARRIVE(FULL_K(t));
#if WG_FP8
                ASYNC_COMMIT(); /* (the groups: K(t), V(t) staged, K(t+1), ...) */
#endif
            }
#if WG_FP8
            /* V(t-1), staged at the previous step, transposed into its buffer once its copies landed and the
             * consumers freed the buffer; V(t) staged into the staging tile before that with two of them
             * (the groups: K(t), V(t); its copies then fly during V(t-1)'s transpose), after it with one */
            if (VT_BUFS == 2 && t < tiles) {
                const int nv = n_begin + t * BLOCK_N;
                VT_STAGE(STG(t), me, nv, skv - nv);
                ASYNC_COMMIT();
            }
            if (t > 0) {
                if (t < tiles)
                    ASYNC_WAIT(VT_BUFS); /* (all groups but K(t)'s, and V(t)'s with two staging tiles) */
                else
                    ASYNC_WAIT0();
                mbar_wait(EMPTY_V(t - 1), ROUND(t - 1) ^ 1);
#if !(WG_ABLATE & 1)
                VT_TRANSPOSE(VBUF(t - 1), STG(t - 1), me);
#endif
#if WG_ABLATE & 64 /* (the same bytes again: the results unchanged, the producer's work doubled; the
                       clobber keeps the compiler from taking the first pass's loads and dropping its stores) */
                __asm__ volatile("" ::: "memory");
                VT_TRANSPOSE(VBUF(t - 1), STG(t - 1), me);
#endif
                FENCE_PROXY_ASYNC(); /* (its stores, made visible to wgmma's reads) */
                MBAR_ARRIVE_IF0(FULL_V(t - 1), 0);
            }
            if (VT_BUFS == 1 && t < tiles) {
                const int nv = n_begin + t * BLOCK_N;
                VT_STAGE(STG(t), me, nv, skv - nv);
                ASYNC_COMMIT();
            }
#else
            if (t > 0) {
                const int nv = n_begin + (t - 1) * BLOCK_N;
                mbar_wait(EMPTY_V(t - 1), ROUND(t - 1) ^ 1);
                PRODUCER_LOAD(VBUF(t - 1), V + v_base, nv, v_ss, v_sb, skv - nv, DV);
                ASYNC_ARRIVE(FULL_V(t - 1));
            }
#endif
        }
#if WG_PERSIST
#if WG_EPI
            if (WG_EPI_PRODUCER != 1 || tiles <= KV_STAGES)
                EPI_STEP(k, w);
            ++k;
#endif
            tb += tiles;
        }
#if WG_EPI
        if (k > 0) /* (the last block's O) */
            EPI_STORE_O(k - 1, w0 + (k - 1) * w_step);
#endif
#endif
        ASYNC_WAIT_ALL(); /* (its copies land before the work-item ends) */
        return;
    }
    CONSUMER_REGS();
#endif
#if WG_PERSIST /* (the consumers' blocks: the loop's body is the rest of the kernel, left at its indent) */
#if WG_PRODUCER
    int tb = 0;
#else
    const int tb = 0; /* (each block's copies and waits its own) */
#endif
#if Q_BUFS == 2
    int q_par = 0; /* (the block's Q tile) */
#endif
#if WG_EPI
    int q_use = 0; /* (the phase of the tile's barriers this block waits for: the tile's use, counted from 0) */
#endif
    for (int w = w0; w < n_slots && WG_BLOCK_OF(w) < n_work; w += w_step) {
        BLOCK_AT(WG_BLOCK_OF(w));
#if Q_BUFS == 2
        __local ushort *const q_s = (__local ushort *)q4 + q_par * Q_TILE_U;
#endif
#endif
#if WG_EPI
    /* the producer's copies of this block's Q landed (S(0)'s proxy fence after its K wait covers them; with no
     * keys, O's staging below writes its tile only after them) */
    mbar_wait(Q_FULL(q_par), q_use & 1);
    if (q_sign) {
        FLIP_Q_SIGN();
        FENCE_PROXY_ASYNC();
        CONSUMERS_BARRIER(); /* (every consumer's flips, before any warpgroup's S(0)) */
    }
#elif WG_PRODUCER
#if WG_PERSIST
    BULK_WAIT_READ(); /* (WG_OB: the block before's rows read out of the tile that takes the next Q) */
    if (w != w0)
        CONSUMERS_BARRIER(); /* (every consumer done with the block before: its Q tile, its staged O) */
    if (Q_BUFS == 1 || w == w0) {
        LOAD_Q_TILED(q_s, BLOCK_M, Q_ROW, sq - m0);
        ASYNC_COMMIT();
    }
#if Q_BUFS == 2
    { /* the next block's Q, into the other tile (free: the barrier above, or none before) */
        __local ushort *const q_next = (__local ushort *)q4 + (q_par ^ 1) * Q_TILE_U;
        const int wn = WG_BLOCK_OF(w + w_step); /* (the next slot's block: past the last one, none) */
        if (w + w_step < n_slots && wn < n_work) {
            BLOCK_OF(wn); /* (its m0, sv, h, sq) */
            LOAD_Q_TILED(q_next, BLOCK_M, Q_ROW, sq - m0);
        }
        ASYNC_COMMIT(); /* (a group, maybe empty: the waits below leave the last one in flight) */
    }
#endif
#elif Q_CONVERT
    LOAD_Q_TILED(q_s, BLOCK_M, Q_ROW, sq - m0);
#endif
    if (q_sign) {
        ASYNC_WAIT_Q(); /* (this block's Q) */
        FLIP_Q_SIGN();
    }
#else
#if WG_PERSIST
    BULK_WAIT_READ();
    if (w != w0)
        barrier(CLK_LOCAL_MEM_FENCE); /* (the block before done with Q's and K/V's tiles) */
#endif
    LOAD_Q_TILED(q_s, BLOCK_M, Q_ROW, sq - m0);
    {
        const int n0 = n_begin;
        if (n_begin < n_end)
            LOAD_TILED(k_s, BLOCK_N, K_ROW, skv - n0, QD);
    }
    ASYNC_COMMIT();
#if KV_STAGES == 3
    { /* K(1) and V(0) in a group of their own: each step then waits for all but its last group */
        const int n1 = n_begin + BLOCK_N, nv = n_begin;
        if (n1 < n_end)
            LOAD_TILED(k_s + KT, BLOCK_N, K_NEXT, skv - n1, QD);
        if (nv < n_end)
            LOAD_V(v_s, nv, V_NEXT);
        ASYNC_COMMIT();
    }
#endif
    if (q_sign) {
        ASYNC_WAIT0();
        FLIP_Q_SIGN();
    }
#endif

    float o[NO];
UNROLL
    for (int e = 0; e < NO; ++e)
        o[e] = 0.0f;
    float m_run[2] = {-INFINITY, -INFINITY}, l_run[2] = {0.0f, 0.0f}; /* rows row0 and row0 + 8 */
    const int row0 = m0 + 64 * wgi + 16 * (warp & 3) + g;
    float s[NS], alpha[2];
#if HAS_SCORE_MODS && HAS_KEEP_BITS
    uint keep[2]; /* the kept keys of the S tile the softmax takes next, rows row0 and row0 + 8 (LOAD_KEEP) */
#endif

    /* The mask of the S tile of keys n0_ .. (only the tiles that cross a row's window edge or the
     * sequence's end; unscaled scores), then the online softmax on the work-item's two rows (flash_mma.cl's,
     * one m tile): s becomes P, unnormalised, and alpha the factor of O's rescale. */
#if HAS_WINDOW
#define ROW_KEYS(r) visible_keys(row0 + (r)*8, sq, skv, win_left, win_right)
#else
#define ROW_KEYS(r) ((key_range){0, skv})
#endif
/* the score modifiers (scores.cl) on the lane's accumulators of row r: scaled, modified, and -inf outside
 * the row's visible keys on a tile that crosses their edge */
#define WG_S_ACC(j, e) s[4 * (j) + 2 * r + (e)]
#if HAS_SCORE_MODS
#define WG_SCORES(sm_n0)                                                                                       \
    do {                                                                                                       \
        const bool edge_ = (sm_n0) < inner_lo || (sm_n0) + BLOCK_N > inner_hi;                                 \
        UNROLL                                                                                                 \
        for (int r = 0; r < 2; ++r) {                                                                          \
            const key_range vis = edge_ ? ROW_KEYS(r) : (key_range){0, skv};                                   \
            const int qi_ = row0 + r * 8; /* (the row's modifiers: the same every tile, hoisted) */            \
            const score_row mods_ = score_row_of(LOG2E_F, softcap_log2, ALIBI, alibi_per_batch, MASK, m_sb, m_ss, \
                                                 m_sh, KPM, seq_kv, heads_q, b, qi_, h,                         \
                                                 (int)ALIGNED_POS(qi_, sq, skv), qi_ < sq);                     \
            if (edge_) /* (two copies: the interior tiles' without a key comparison) */                       \
                WG_MODS(mods_, sm_n0, 1, vis);                                                                 \
            else if (!WG_KEEP_ALL(r))                                                                          \
                WG_MODS(mods_, sm_n0, 0, vis);                                                                 \
        }                                                                                                      \
    } while (0)
/* A boolean mask or key padding: their reads for the tile of keys n0_ into keep[r] (scores.cl's
 * KEEP_BITS_QUAD for an aligned full tile, else KEEP_BITS), read past the wait for the tile's S, while
 * the previous tile's P * V runs (LOAD_KEEP; issued before the wait they cost more: docs/design/wgmma.md,
 * 2026-12-04); key padding alone is the same for both rows (KEEP_ROWS 1). */
#if HAS_KEEP_BITS
#define KEEP_ROWS (HAS_MASK && MASK_KIND == 2 ? 2 : 1)
#define LOAD_KEEP(n0_)                                                                                         \
    do {                                                                                                       \
        const int kn0_ = (n0_);                                                                                \
        const bool quad_ = keep_tile_aligned(kn0_, BLOCK_N, skv, b);                                          \
        UNROLL                                                                                                 \
        for (int r = 0; r < KEEP_ROWS; ++r) {                                                                  \
            const int qi_ = row0 + r * 8;                                                                      \
            const score_row mods_ = score_row_of(LOG2E_F, softcap_log2, ALIBI, alibi_per_batch, MASK, m_sb, m_ss, \
                                                 m_sh, KPM, seq_kv, heads_q, b, qi_, h,                         \
                                                 (int)ALIGNED_POS(qi_, sq, skv), qi_ < sq);                     \
            if (quad_)                                                                                         \
                KEEP_BITS_QUAD(keep[r], mods_, kn0_, BLOCK_N / 8, t, lane);                                    \
            else                                                                                               \
                KEEP_BITS(keep[r], mods_, kn0_ + 2 * t, BLOCK_N / 8, skv);                                     \
        }                                                                                                      \
        if (KEEP_ROWS == 1)                                                                                    \
            keep[1] = keep[0];                                                                                 \
    } while (0)
#define WG_KEEP_ALL(r) KEEP_NOTHING_TO_DO(keep[r], BLOCK_N / 8)
#define WG_MODS(mods_, n0_, edge_, vis_)                                                                       \
    SCORE_MODS_ACC_KEEP(WG_S_ACC, BLOCK_N / 8, mods_, (n0_) + 2 * t, mod_scale, edge_, vis_, keep[r])
#else
#define LOAD_KEEP(n0_)
#define WG_KEEP_ALL(r) 0
#define WG_MODS(mods_, n0_, edge_, vis_) SCORE_MODS_ACC(WG_S_ACC, BLOCK_N / 8, mods_, (n0_) + 2 * t, mod_scale, edge_, vis_)
#endif
#else
#define LOAD_KEEP(n0_)
#define WG_SCORES(sm_n0)                                                                                       \
    do {                                                                                                       \
        if ((sm_n0) < inner_lo || (sm_n0) + BLOCK_N > inner_hi) {                                              \
            UNROLL                                                                                             \
            for (int r = 0; r < 2; ++r) {                                                                      \
                const key_range vis = ROW_KEYS(r);                                                             \
                UNROLL                                                                                         \
                for (int j = 0; j < BLOCK_N / 8; ++j)                                                          \
                    UNROLL                                                                                     \
                    for (int e = 0; e < 2; ++e) {                                                              \
                        const int key = (sm_n0) + 8 * j + 2 * t + e;                                           \
                        if (key < vis.lo || key >= vis.hi)                                                     \
                            s[4 * j + 2 * r + e] = -INFINITY;                                                  \
                    }                                                                                          \
            }                                                                                                  \
        }                                                                                                      \
    } while (0)
#endif
#if WG_FP8
#define P_SHIFT(m) ((m)-P_LOG2)
#else
#define P_SHIFT(m) (m)
#endif
#define WG_SOFTMAX(n0_)                                                                                        \
    do {                                                                                                       \
        const int sm_n0 = (n0_); /* (evaluated before the loops: their counters would capture its names) */    \
        WG_SCORES(sm_n0);                                                                                      \
        UNROLL                                                                                                 \
        for (int r = 0; r < 2; ++r) {                                                                          \
            float mx = m_run[r];                                                                               \
            UNROLL                                                                                             \
            for (int j = 0; j < BLOCK_N / 8; ++j)                                                              \
                mx = mma_max_nan(mx, mma_max_nan(s[4 * j + 2 * r], s[4 * j + 2 * r + 1]));                    \
            mx = mma_max_nan(mx, SHFL_XOR(mx, 1));                                                             \
            mx = mma_max_nan(mx, SHFL_XOR(mx, 2));                                                             \
            /* (WG_LAZY_RESCALE: the reference stays unless the maximum passes it by lazy_t; NaN moves it) */   \
            const float ref_ = m_run[r];                                                                       \
            const int move_ = !WG_LAZY_RESCALE || !(mx <= ref_ + lazy_t);                                      \
            mx = move_ ? mx : ref_;                                                                            \
            const float m_scaled = mx == -INFINITY ? 0.0f : mx * exp_scale;                                    \
            const float m_p = P_SHIFT(m_scaled); /* (fp8: P scaled by 2^P_LOG2) */                            \
            alpha[r] = move_ ? mma_exp2(fma(ref_, exp_scale, -m_scaled)) : 1.0f;                               \
            float psum = 0.0f;                                                                                 \
            UNROLL                                                                                             \
            for (int j = 0; j < BLOCK_N / 8; ++j) {                                                            \
                const float p0 = WG_EXP2(fma(s[4 * j + 2 * r], exp_scale, -m_p));                              \
                const float p1 = WG_EXP2(fma(s[4 * j + 2 * r + 1], exp_scale, -m_p));                         \
                s[4 * j + 2 * r] = p0;                                                                         \
                s[4 * j + 2 * r + 1] = p1;                                                                     \
                psum += p0 + p1;                                                                               \
            }                                                                                                  \
            l_run[r] = l_run[r] * alpha[r] + psum;                                                             \
            m_run[r] = mx;                                                                                     \
        }                                                                                                      \
    } while (0)
#define RESCALE_O()                                                                                            \
    do {                                                                                                       \
        /* (lazily: where a reference moved; WG_ABLATE bit 128: never) */                                      \
        if (!(WG_ABLATE & 128) && (!WG_LAZY_RESCALE || alpha[0] != 1.0f || alpha[1] != 1.0f))                  \
            UNROLL                                                                                             \
            for (int j = 0; j < DV / 8; ++j) {                                                                 \
                o[4 * j] *= alpha[0];                                                                          \
                o[4 * j + 1] *= alpha[0];                                                                      \
                o[4 * j + 2] *= alpha[1];                                                                      \
                o[4 * j + 3] *= alpha[1];                                                                      \
            }                                                                                                  \
    } while (0)
/* P * V's steps: k16 (S's n8 tiles 2kk, 2kk+1) or fp8's k32 (tiles 4kk .. 4kk+3) */
#define PV_STEPS (BLOCK_N / K_STEP)
#define PA_REGS (4 * PV_STEPS)
#if WG_FP8
/* fp8: register i of k32 step kk holds row r = i % 2, keys of S's n8 tiles j0 = 4kk + 2(i / 2) and j0 + 1:
 * bytes 2t, 2t+1 of tile j0, then of tile j0+1 (wgmma's k = 4t .. 4t+3 of half i / 2: V's tile holds those
 * keys there, VT_TRANSPOSE) */
#define PACK_FP8(kk, i)                                                                                        \
    fp8x4(s[16 * (kk) + 8 * ((i) >> 1) + 2 * ((i)&1)], s[16 * (kk) + 8 * ((i) >> 1) + 2 * ((i)&1) + 1],        \
          s[16 * (kk) + 8 * ((i) >> 1) + 4 + 2 * ((i)&1)], s[16 * (kk) + 8 * ((i) >> 1) + 4 + 2 * ((i)&1) + 1])
#endif
#if FCL_PTX
    /* P's A fragments: k16 step kk is S's n8 tiles 2kk and 2kk+1, packed to 16-bit pairs (fp8: PACK_FP8) */
    uint pa[PV_STEPS][4];
#if WG_FP8
#define PACK_P()                                                                                               \
    do {                                                                                                       \
        UNROLL                                                                                                 \
        for (int kk = 0; kk < PV_STEPS; ++kk)                                                                  \
            UNROLL                                                                                             \
            for (int i = 0; i < 4; ++i)                                                                        \
                pa[kk][i] = PACK_FP8(kk, i);                                                                   \
    } while (0)
#else
#define PACK_P()                                                                                               \
    do {                                                                                                       \
        UNROLL                                                                                                 \
        for (int kk = 0; kk < BLOCK_N / 16; ++kk)                                                              \
            UNROLL                                                                                             \
            for (int i = 0; i < 4; ++i)                                                                        \
                pa[kk][i] = pack2(s[8 * kk + 2 * i], s[8 * kk + 2 * i + 1]);                                   \
    } while (0)
#endif
/* The descriptors of k step ks of Q's and of K's tile at kt_, and of V's rows 16kk .. 16kk+15 of the tile
 * at vt_ (read transposed: V's rows have a key's columns contiguous). TILED: k step ks is core-matrix
 * columns 2ks, 2ks+1, 256 bytes on; between core matrices 128 bytes along the head dim, 16 * HEAD_DIM
 * bytes along the rows (for V: 16 * HEAD_DIM along the keys, 128 along the head dim). SWIZZLE (descriptor
 * bits 62-63: 1, 128 bytes): Q and K K-major, k step ks 32 bytes into the rows of 64-column block ks / 4,
 * 1024 bytes between 8-row groups (the leading offset unused); V MN-major, k step kk 2048 bytes on,
 * BLOCK_N * 128 bytes between 64-column blocks (the leading offset: the two swapped failed validation,
 * docs/design/wgmma.md) and 1024 between 8-key groups. */
#if WG_DESC_ADD
/* the descriptor of a tile's start, e elements (16-bit: every tile here is ushorts) on: the offset added to
 * the address field (the start's bytes 4-17), exact where it does not carry out of the field's 256 KB, which
 * holds a work-group's local memory */
#define DESC_AT(p_, e, lbo, sbo) (wg_desc((p_), (lbo), (sbo)) + (ulong)((uint)(e) >> 3))
#else
#define DESC_AT(p_, e, lbo, sbo) wg_desc((p_) + (e), (lbo), (sbo))
#endif
#if SWIZZLE
#define SW128(desc) ((desc) | (1ul << 62))
#define DESC_Q(ks) SW128(DESC_AT(q_s + 64 * wgi * 64, ((ks) >> 2) * BLOCK_M * 64 + 16 * ((ks)&3), 16, 1024))
#define DESC_K(kt_, ks) SW128(DESC_AT((kt_), ((ks) >> 2) * BLOCK_N * 64 + 16 * ((ks)&3), 16, 1024))
#if WG_FP8 /* (V's transposed tile, K-major as K's: k32 step kk 32 bytes into its 128-byte rows) */
#define DESC_V(vt_, kk) SW128(DESC_AT((vt_), 16 * (kk), 16, 1024))
#else
#define DESC_V(vt_, kk) SW128(DESC_AT((vt_), 16 * (kk)*64, BLOCK_N * 128, 1024))
#endif
#else
#define DESC_Q(ks) DESC_AT(q_s + 64 * wgi * QD, 128 * (ks), 128, 16 * QD)
#define DESC_K(kt_, ks) DESC_AT((kt_), 128 * (ks), 128, 16 * QD)
#define DESC_V(vt_, kk) DESC_AT((vt_), 16 * (kk)*DV, 16 * DV, 128)
#endif
/* The issue of S = Q * K^T from the K tile at kt_ and of O += P * V from the V tile at vt_, each a batch of
 * its own (not waited for). */
#define ISSUE_S(kt_)                                                                                           \
    do {                                                                                                       \
        UNROLL                                                                                                 \
        for (int ks = 0; ks < KSTEPS * !(WG_ABLATE & 8); ++ks) {                                              \
            const ulong dq = DESC_Q(ks), dk = DESC_K(kt_, ks);                                                 \
            WG_SS_S(s, dq, dk, ks);                                                                            \
        }                                                                                                      \
        WGMMA_COMMIT();                                                                                        \
    } while (0)
#define ISSUE_PV(vt_)                                                                                          \
    do {                                                                                                       \
        UNROLL                                                                                                 \
        for (int kk = 0; kk < PV_STEPS * !(WG_ABLATE & 4); ++kk) {                                            \
            const ulong dv = DESC_V(vt_, kk);                                                                  \
            WG_RS_O(o, pa[kk], dv, 1);                                                                         \
        }                                                                                                      \
        WGMMA_COMMIT();                                                                                        \
    } while (0)
#else
/* emulated: P through local memory (the same 16-bit values as the registers'), S and P * V computed at once;
 * fp8: the registers' bytes, each at its fragment's place (rows g, g+8; k 4t .. of each half) */
#if WG_FP8
#define PACK_P()                                                                                               \
    do {                                                                                                       \
        __local uchar *const p8_ = (__local uchar *)p_s;                                                       \
        for (int kk = 0; kk < PV_STEPS; ++kk)                                                                  \
            for (int i = 0; i < 4; ++i) {                                                                      \
                const uint w_ = PACK_FP8(kk, i);                                                               \
                const int row = 64 * wgi + 16 * (warp & 3) + g + 8 * (i & 1);                                  \
                for (int e = 0; e < 4; ++e)                                                                    \
                    p8_[row * BLOCK_N + 32 * kk + 16 * (i >> 1) + 4 * t + e] = (uchar)(w_ >> (8 * e));         \
            }                                                                                                  \
    } while (0)
#else
#define PACK_P()                                                                                               \
    do {                                                                                                       \
        for (int j = 0; j < BLOCK_N / 8; ++j)                                                                  \
            for (int r = 0; r < 2; ++r) {                                                                      \
                const uint pr = pack2(s[4 * j + 2 * r], s[4 * j + 2 * r + 1]);                                 \
                const int row = 64 * wgi + 16 * (warp & 3) + g + 8 * r, col = 8 * j + 2 * t;                   \
                p_s[TILED(row, col, BLOCK_N)] = (ushort)pr;                                                    \
                p_s[TILED(row, col + 1, BLOCK_N)] = (ushort)(pr >> 16);                                        \
            }                                                                                                  \
    } while (0)
#endif
#define ISSUE_S(kt_)                                                                                           \
    do {                                                                                                       \
        for (int ks = 0; ks < KSTEPS; ++ks)                                                                    \
            wg_ss_emu(s, BLOCK_N, q_s, 64 * wgi, (kt_), K_STEP * ks, ks, wt);                                  \
    } while (0)
#define ISSUE_PV(vt_)                                                                                          \
    do {                                                                                                       \
        for (int kk = 0; kk < PV_STEPS; ++kk)                                                                  \
            wg_pv_emu(o, p_s, 64 * wgi, (vt_), K_STEP * kk, wt);                                               \
    } while (0)
#endif

/* WG_PINGPONG's turns: named barrier 5 + i is warpgroup i's (256 work-items: its own 128 waiting, the
 * previous warpgroup's 128 arriving); the last warpgroup hands the first its first turn, and does not pass
 * on its last, so that no arrival is left over when the work-group ends */
#if WG_PINGPONG && WG_PRODUCER && FCL_PTX
#define TURN_BAR_(op, i) NAMED_BAR3_(op, i, "5", "6", "7")
#define TURN_START()                                                                                           \
    do {                                                                                                       \
        if (tiles > 0 && wgi == WARPGROUPS - 1)                                                                \
            TURN_BAR_("bar.arrive", 0);                                                                        \
    } while (0)
#define TURN_WAIT() TURN_BAR_("bar.sync", wgi)
#define TURN_PASS(last_)                                                                                       \
    do {                                                                                                       \
        if (!(last_) || wgi < WARPGROUPS - 1)                                                                  \
            TURN_BAR_("bar.arrive", wgi + 1 < WARPGROUPS ? wgi + 1 : 0);                                       \
    } while (0)
#else
#define TURN_START()
#define TURN_WAIT()
#define TURN_PASS(last_)
#endif
#if KV_STAGES >= 2
    /* Step j issues S(j+1) and P(j) * V(j) together and runs the softmax of S(j+1) while the matrix units
     * work on P(j) * V(j); O is rescaled (alpha of tile j+1) once that product is done. S(0) comes before
     * the loop and the last tile's P * V after it, so that no product is issued or waited for under a
     * condition (ptxas serializes every wgmma of a kernel whose accumulators might be in flight where other
     * instructions read them). Copies: at step j's start K(j+1) and V(j) have landed (issued KV_STAGES - 1
     * steps before); K(j+KV_STAGES) then goes into K(j)'s buffer (S(j) done everywhere: the barrier) and
     * V(j+KV_STAGES-1) into V(j-1)'s (P(j-1) * V(j-1) done). One group of copies a step, one barrier a step;
     * with three stages each step waits for all groups but the last, so two steps' copies are in flight. */
#define STEP_SYNC()                                                                                            \
    do {                                                                                                       \
        STEP_WAIT();                  /* this work-item's copies of K(j+1), V(j) (and Q's) */                  \
        FENCE_PROXY_ASYNC();          /* ... visible to wgmma */                                               \
        barrier(CLK_LOCAL_MEM_FENCE); /* everyone's; and S(j), P(j-1) * V(j-1) done */                         \
    } while (0)
/* K(j+S) into K(j)'s buffer, V(j+S-1) into V(j-1)'s (S = KV_STAGES; tile t in buffer t % S): issued once
 * the step's products are (their address arithmetic and issue beside the matrix units' work) */
#if KV_STAGES == 3
#define STEP_WAIT() ASYNC_WAIT(1) /* (all groups but the last: two steps' copies in flight) */
#else
#define STEP_WAIT() ASYNC_WAIT0()
#endif
#define STEP_COPIES(j_)                                                                                        \
    do {                                                                                                       \
        const int n1 = n_begin + ((j_) + KV_STAGES) * BLOCK_N, nv = n_begin + ((j_) + KV_STAGES - 1) * BLOCK_N; \
        if (n1 < n_end)                                                                                        \
            LOAD_TILED(KBUF((j_) + KV_STAGES), BLOCK_N, K_NEXT, skv - n1, QD);                                 \
        if (nv < n_end)                                                                                        \
            LOAD_V(VBUF((j_) + KV_STAGES - 1), nv, V_NEXT);                                                     \
        ASYNC_COMMIT();                                                                                        \
    } while (0)
#if FCL_PTX
/* (P packed and O rescaled before the fence, pinned there: registers a batch reads are written before it
 * starts, so ptxas needs no warpgroup.arrive of its own between the products) */
#define BATCH_FENCE()                                                                                          \
    do {                                                                                                       \
        FENCE_OPERANDS(o, NO);                                                                                 \
        FENCE_OPERANDS_U((uint *)pa, PA_REGS);                                                                      \
        WGMMA_FENCE();                                                                                         \
    } while (0)
#define PIN_S() FENCE_OPERANDS(s, NS) /* (no read of S above its wait) */
#define PIN_O() FENCE_OPERANDS(o, NO)
#define EMU_BARRIER()
#else
#define BATCH_FENCE()
#define PIN_S()
#define PIN_O()
/* (emulated: the warp's reads of P(j) done before P(j+1) replaces it) */
#define EMU_BARRIER() barrier(CLK_LOCAL_MEM_FENCE)
#endif
#if WG_PRODUCER
    /* Each step waits for its tiles' "full" barriers alone, and frees a stage (its warp's arrival on the
     * "empty" barrier, by lane 0) once the products that read it are done: S(j+1) at the first wait, P(j) *
     * V(j) at the second. S(0) waits for Q too: every consumer's copies of it, the sign flip's stores.
     * After each wait the consumers' proxy fence: the copies are the generic proxy's writes and wgmma
     * reads by the async one, and the PTX memory model asks for the fence between them. */
#undef STEP_COPIES
#define STEP_COPIES(j_)
#if WG_EPI /* (Q: the producer's, its "Q full" waited for at the block's start) */
#define SYNC_FIRST()                                                                                           \
    do {                                                                                                       \
        mbar_wait(FULL_K(0), ROUND(0));                                                                        \
        FENCE_PROXY_ASYNC();                                                                                   \
    } while (0)
#else
#define SYNC_FIRST()                                                                                           \
    do {                                                                                                       \
        ASYNC_WAIT_Q(); /* (Q's copies: with two tiles, all but the next block's) */                           \
        FENCE_PROXY_ASYNC();                                                                                   \
        CONSUMERS_BARRIER();                                                                                   \
        mbar_wait(FULL_K(0), ROUND(0));                                                                        \
        FENCE_PROXY_ASYNC();                                                                                   \
    } while (0)
#endif
#define SYNC_STEP(j_)                                                                                          \
    do {                                                                                                       \
        mbar_wait(FULL_K((j_) + 1), ROUND((j_) + 1));                                                          \
        mbar_wait(FULL_V(j_), ROUND(j_));                                                                      \
        FENCE_PROXY_ASYNC(); /* (the copies are the generic proxy's writes, wgmma reads by the async one) */   \
    } while (0)
#define SYNC_LAST()                                                                                            \
    do {                                                                                                       \
        mbar_wait(FULL_V(tiles - 1), ROUND(tiles - 1));                                                        \
        FENCE_PROXY_ASYNC();                                                                                   \
    } while (0)
#define RELEASE_K(t) MBAR_ARRIVE_IF0(EMPTY_K(t), lane)
#define RELEASE_V(t) MBAR_ARRIVE_IF0(EMPTY_V(t), lane)
#else
#define SYNC_FIRST() STEP_SYNC()
#define SYNC_STEP(j_) STEP_SYNC()
#define SYNC_LAST() STEP_SYNC()
#define RELEASE_K(t)
#define RELEASE_V(t)
#endif
    TURN_START();
#if WG_IDLE
    /* WG_SKIP_IDLE: a warpgroup whose rows are all past the queries (a partial last block) leaves out its products
     * and softmax, and keeps every barrier the others count on: Q's wait and the consumers' barrier (SYNC_FIRST's),
     * its turns, and its warps' arrivals on each stage's "empty" barriers. Such warpgroups are the last in the
     * turns' ring, so each arrival comes after the active warpgroups' arrival for the stage's tile before (no
     * phase taken early). */
    if (m0 + 64 * wgi >= sq) {
        OB_Q_READ(); /* (its Q is never read) */
        if (tiles > 0) {
#if !WG_EPI
            ASYNC_WAIT_Q();
            FENCE_PROXY_ASYNC(); /* (its copies of the others' rows, as SYNC_FIRST's) */
            CONSUMERS_BARRIER();
#endif
            TURN_WAIT();
            TURN_PASS(0);
            RELEASE_K(0);
        }
        for (int j = 0; j + 1 < tiles; ++j) {
            TURN_WAIT();
            TURN_PASS(0);
            RELEASE_K(j + 1);
            RELEASE_V(j);
        }
        if (tiles > 0) {
            TURN_WAIT();
            TURN_PASS(1);
#if WG_PERSIST
            RELEASE_V(tiles - 1);
#endif
        }
    } else {
#endif
    if (tiles == 0)
        OB_Q_READ(); /* (no S: its Q is never read) */
    if (tiles > 0) { /* S(0) */
        SYNC_FIRST();
        TURN_WAIT();
        BATCH_FENCE();
        ISSUE_S(KBUF(0)); /* (K(0)'s stage: with persistent work-groups not always the first) */
        TURN_PASS(0);
        STEP_COPIES(-1);
        WGMMA_WAIT0();
        if (tiles == 1)
            OB_Q_READ(); /* (its last S done: WG_OB's next staging may cover its Q) */
        LOAD_KEEP(n_begin);
        RELEASE_K(0);
        PIN_S();
        WG_SOFTMAX(n_begin);
        PACK_P(); /* (O is zero: no rescale) */
    }
    for (int j = 0; j + 1 < tiles; ++j) {
        SYNC_STEP(j);
        TURN_WAIT();
        BATCH_FENCE();
        ISSUE_S(KBUF(j + 1));
        ISSUE_PV(VBUF(j));
        TURN_PASS(0);
        STEP_COPIES(j);
        WGMMA_WAIT1(); /* S(j+1) done, P(j) * V(j) may still run */
        if (j + 2 == tiles)
            OB_Q_READ();
        LOAD_KEEP(n_begin + (j + 1) * BLOCK_N);
        RELEASE_K(j + 1);
        PIN_S();
        WG_SOFTMAX(n_begin + (j + 1) * BLOCK_N);
        WGMMA_WAIT0();
        RELEASE_V(j);
        PIN_O();
        RESCALE_O();
        EMU_BARRIER();
        PACK_P();
    }
    if (tiles > 0) { /* the last tile's P * V */
        SYNC_LAST();
        TURN_WAIT();
        BATCH_FENCE();
        ISSUE_PV(VBUF(tiles - 1));
        TURN_PASS(1);
        WGMMA_WAIT0();
#if WG_PERSIST
        RELEASE_V(tiles - 1); /* (the ring goes on into the next block: its stage freed as the others) */
#endif
        PIN_O();
    }
#if WG_IDLE
    }
#endif
#else
    for (int n0 = n_begin; n0 < n_end; n0 += BLOCK_N) { /* one stage: each tile's products waited for at once */
        ASYNC_WAIT0();                /* this work-item's copies of K(n0) (and Q's) landed */
        FENCE_PROXY_ASYNC();          /* ... and are visible to wgmma */
        barrier(CLK_LOCAL_MEM_FENCE); /* everyone's; and P * V of the previous tile is done: v_s is free */
        LOAD_V(v_s, n0, V_ROW);
        ASYNC_COMMIT();

        /* S = Q * K^T, the mask, the softmax, O's rescale */
#if FCL_PTX
        WGMMA_FENCE();
#endif
        ISSUE_S(k_s);
        WGMMA_WAIT0();
        LOAD_KEEP(n0);
#if FCL_PTX
        FENCE_OPERANDS(s, NS); /* (no read of S above the wait) */
#endif
        WG_SOFTMAX(n0);
        RESCALE_O();

        ASYNC_WAIT0(); /* V(n0) landed */
        FENCE_PROXY_ASYNC();
#if !FCL_PTX
        PACK_P();
#endif
        barrier(CLK_LOCAL_MEM_FENCE); /* everyone's V copies; and S is done: this k buffer is free */
        {
            const int n1 = n0 + BLOCK_N; /* K(i+1) */
            if (n1 < n_end)
                LOAD_TILED(k_s, BLOCK_N, K_NEXT, skv - n1, QD);
        }
        ASYNC_COMMIT();

        /* O += P * V */
#if FCL_PTX
        PACK_P();
        FENCE_OPERANDS(o, NO);
        FENCE_OPERANDS_U((uint *)pa, PA_REGS);
        WGMMA_FENCE();
#endif
        ISSUE_PV(v_s);
        WGMMA_WAIT0();
#if FCL_PTX
        FENCE_OPERANDS(o, NO); /* (no use of O above the wait) */
#endif
    }
#endif
#if !WG_EPI /* (WG_EPI: the consumers copy nothing, and the start's "Q full" wait covers a block with no keys) */
    ASYNC_WAIT_Q(); /* (no keys: Q's copies, never read, landed before the work-group ends; with two Q tiles
                       the next block's may fly on) */
#endif
#if WG_O_STAGED && !WG_EPI
    /* With no keys, no step waited for Q: the rows a warpgroup stages O into below took copies from the
     * other consumers' work-items too, which must land first (found on the H100, 2026-12-05: a causal block
     * of rows that see no key wrote Q's values where zeros belong) */
    if (tiles == 0) {
#if WG_PRODUCER
        CONSUMERS_BARRIER();
#else
        barrier(CLK_LOCAL_MEM_FENCE);
#endif
    }
#endif

    OB_STAGE_WAIT(); /* (WG_OB: the Q rows its staging covers read) */
    /* The row sums over the 4 lanes of each row; normalise and store (WG_O_STAGED: through local memory). */
UNROLL
    for (int r = 0; r < 2; ++r) {
        float l = l_run[r];
        l += SHFL_XOR(l, 1);
        l += SHFL_XOR(l, 2);
#if WG_FP8
        l *= 0x1p-8f; /* (P's 2^P_LOG2 out of the sum, exact, and below out of O) */
#endif
        const int qi = row0 + r * 8;
        const softmax_end e = softmax_finish(softmax_max_scaled(m_run[r], exp_scale), l, SINK_LOGIT2(SINKS, h));
#if WG_FP8
        const float inv = e.inv * v_descale * 0x1p-8f, lse_m = e.m, lse_l = e.l;
#else
        const float inv = e.inv, lse_m = e.m, lse_l = e.l;
#endif
#if WG_OB
        /* the row's packed pairs into this warpgroup's rows of the tile, plain rows O_PITCH units apart */
        const int rr = 64 * wgi + 16 * (warp & 3) + g + r * 8;
UNROLL
        for (int j = 0; j < DV / 8; ++j)
            *(__local uint *)(q_s + rr * O_PITCH + j * 8 + 2 * t) =
                pack2(o[4 * j + 2 * r] * inv, o[4 * j + 2 * r + 1] * inv);
#elif WG_O_STAGED
        /* the row's packed pairs into this warpgroup's rows of Q's block (its own products are done) */
        const int rr = 16 * (warp & 3) + g + r * 8;
UNROLL
        for (int j = 0; j < DV / 8; ++j)
            *(__local uint *)(q_s + TILE_AT(64 * wgi + rr, j * 8 + 2 * t, BLOCK_M, HEAD_DIM)) =
                pack2(o[4 * j + 2 * r] * inv, o[4 * j + 2 * r + 1] * inv);
#else
        if (qi < sq) {
            const long ob = q_row_offset(sv, h, qi, o_sb, o_ss, o_sh);
UNROLL
            for (int j = 0; j < DV / 8; ++j) {
                STORE(O, ob + j * 8 + 2 * t, o[4 * j + 2 * r] * inv);
                STORE(O, ob + j * 8 + 2 * t + 1, o[4 * j + 2 * r + 1] * inv);
            }
        }
#endif
        if (qi < sq && write_lse && t == 0)
            LSE[lse_row(sv, h, qi, heads_q, seq_q, total_q)] = softmax_lse(lse_m, lse_l);
    }
#if WG_EPI
    MBAR_ARRIVE_IF0(O_STAGED(q_par), 0); /* (every consumer work-item's stores into the tile; the producer's) */
#elif WG_OB
    /* the warpgroup's rows, once all staged and made visible to the copy engine (the async proxy): a bulk copy a
     * row, by the warpgroup's first 64 work-items */
    FENCE_PROXY_ASYNC();
    WARPGROUP_BARRIER();
    if (wt < 64 && m0 + 64 * wgi + wt < sq)
        BULK_STORE(O + q_row_offset(sv, h, m0 + 64 * wgi + wt, o_sb, o_ss, o_sh), q_s + (64 * wgi + wt) * O_PITCH,
                   DV * 2);
    BULK_COMMIT();
#elif WG_O_STAGED
    /* then the warpgroup's 64 rows leave in 16-byte chunks, a row's chunks from neighbouring work-items */
    WARPGROUP_BARRIER();
    for (int idx = wt; idx < 64 * (DV / 8) * !(WG_ABLATE & 16); idx += 128) {
        const int rr = idx / (DV / 8), c = (idx - rr * (DV / 8)) * 8, qi = m0 + 64 * wgi + rr;
        if (qi < sq)
            *(__global uint4 *)(O + q_row_offset(sv, h, qi, o_sb, o_ss, o_sh) + c) =
                *(__local const uint4 *)(q_s + TILE_AT(64 * wgi + rr, c, BLOCK_M, HEAD_DIM));
    }
#endif
#if WG_PERSIST
#if WG_PRODUCER
        tb += tiles;
#endif
#if Q_BUFS == 2
        q_par ^= 1;
#endif
#if WG_EPI
        q_use += q_par == 0; /* (both tiles used once more) */
#endif
    }
#endif
    BULK_WAIT_READ(); /* (WG_OB: the last rows read out of local memory before the work-group ends) */
}
