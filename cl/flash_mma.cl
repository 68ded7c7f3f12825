/* SPDX-License-Identifier: MIT */
/*
 * flash_mma.cl: the FlashAttention-2 forward kernel on NVIDIA's matrix units (tensor cores), through
 * inline PTX from OpenCL C. fp16 or bf16 K and V (FLASHCL_DTYPE_F16 / _BF16, or KV_DTYPE 2 / 3), fp32
 * accumulation; Q and O in K's type, or Q in fp32 or the other 16-bit type, rounded to K's as it is
 * loaded, with O in Q's type (mma.cl's Q_CONVERT). Or fp32 Q, K and V with TF32 products (MMA_TF32, the
 * host's under problem.precision): mma.sync m16n8k8, each product as three TF32 products (MMA_TF32 3) or
 * one (1); the layout below with 4-byte elements (TF32 at the end of this comment).
 *
 * A work-group is WARPS warps; warp w owns query rows 16w .. 16w+15 of the block (BLOCK_M = 16*WARPS;
 * with MT = 2, rows 32w .. 32w+31 as two m16 tiles, BLOCK_M = 32*WARPS) and keeps, in registers,
 *   - its Q rows as m16n8k16 A fragments (loaded once, through local memory, by ldmatrix),
 *   - the scores S of a BLOCK_N-key tile as BLOCK_N/8 m16n8 accumulators (fp32),
 *   - the output O as HEAD_DIM_V/8 m16n8 accumulators (fp32; HEAD_DIM_V, V's and O's head dim, is
 *     HEAD_DIM unless the host sets it: common.cl),
 *   - the running maximum and sum of its two rows per lane (rows g and g+8, g = lane/4).
 * K and V tiles go global -> local (16-byte copies; cp.async where rows are 16-byte aligned, V's tile
 * in flight during Q*K^T and the next K tile during P*V) and local -> registers through ldmatrix (V
 * transposed by ldmatrix.trans). S = Q*K^T and O += P*V are mma.sync.m16n8k16 with fp32 accumulators;
 * the online softmax runs on the S accumulators in registers (the row maximum over the 4 lanes that
 * share a row by two butterfly shuffles), and P is converted to fp16/bf16 pairs that are already the
 * A fragments of P*V (the C layout of two neighbouring n8 tiles is the A layout of one k16 step).
 * Scores are in base 2 (S * scale*log2(e)), as in flash_fwd.cl.
 *
 * Semantics as flash_fwd.cl's direct path, from the same parts (geometry.cl: the sequence, packed or in
 * a KV cache, and the visible keys, HAS_WINDOW for causal or a sliding window; scores.cl: softcap,
 * ALiBi, masks and key padding; softmax.cl: the online softmax and sinks): tiles
 * outside a window never loaded, GQA (heads_q / group KV heads), LSE in natural log, a NaN score
 * poisoning its row, a row with no visible key written as zeros with LSE -inf. The host sends other
 * problems (split-KV, K and V in fp32) to flash_fwd.cl.
 *
 * The warp instructions come from mma.cl: FCL_PTX=1 the PTX instructions (NVIDIA, compute capability
 * 8.0 and up), FCL_PTX=0 their emulation through a per-warp exchange area in local memory and
 * work-group barriers, so that PoCL and rusticl test this kernel's indexing and softmax in CI; every
 * barrier in it is reached by all warps because the kernel's control flow is uniform across the
 * work-group. Its design, and the measurements behind its choices: docs/design/mma.md.
 *
 * Local memory (ushort; src/tiles.c's mma_bytes must match): LDS = HEAD_DIM (SWIZZLE: head dims a
 * multiple of 64 with Q_LOCAL) or HEAD_DIM + 8, LDV likewise of HEAD_DIM_V, S = KV_STAGES,
 *   k_s  max(BLOCK_M, S * BLOCK_N) * LDS (Q's block first, then each K tile; with Q_LOCAL S * BLOCK_N * LDS)
 *   v_s  S * BLOCK_N * LDV
 *   q_s  BLOCK_M * LDS                   (Q_LOCAL only: Q's block for the whole run)
 * and, emulated only, WARPS*32*8 uints of exchange area (the layout of rows: SWIZZLE below).
 *
 * TF32 (MMA_TF32 1 or 3; the host sets MT 1, Q_LOCAL 1, SWIZZLE 0, O_STAGED 0): the same tiles of fp32
 * elements, K's and Q's rows padded to 16 mod 32 elements, V's to 4 mod 16 (src/kernels/mma.c's
 * mma_tf32_bytes). A lane reads its fragments with 16-byte loads of Q's and K's rows (columns 4t..4t+3
 * of each 16: the two k8 steps' columns t and t+4 taken as 4t, 4t+1 and 4t+2, 4t+3, the same order for
 * Q and K, so the dot products are unchanged) and single loads of V's (rows 2t and 2t+1: P's A fragment
 * is then S's C fragment as it stands, keys 2t and 2t+1 of an n8 tile taken as P*V's k t and t+4).
 */
#if !defined(HEAD_DIM) || !defined(BLOCK_N) || !defined(WARPS)
#error "flash_mma.cl needs HEAD_DIM, BLOCK_N and WARPS"
#endif
#if (HEAD_DIM % 16) != 0 || HEAD_DIM > 256 || (HEAD_DIM_V % 16) != 0 || HEAD_DIM_V > 256 || (BLOCK_N % 16) != 0
#error "HEAD_DIM and HEAD_DIM_V must be multiples of 16 up to 256, BLOCK_N a multiple of 16"
#endif
/* (the operands' type, and Q in another: mma.cl's MMA_BF16 and Q_CONVERT) */
/* The shape and layout come from the host alone (src/kernels/mma.c, whose local-memory formula reads the
 * same values): ROWS_ALIGNED, MT, Q_LOCAL, KV_STAGES, O_ALIGNED, O_STAGED and SWIZZLE, each explained
 * below. */
#if !defined(ROWS_ALIGNED) || !defined(MT) || !defined(Q_LOCAL) || !defined(KV_STAGES) || !defined(O_ALIGNED) || \
    !defined(O_STAGED) || !defined(SWIZZLE)
#error "flash_mma.cl needs ROWS_ALIGNED, MT, Q_LOCAL, KV_STAGES, O_ALIGNED, O_STAGED and SWIZZLE from the host"
#endif
/* ROWS_ALIGNED: every Q, K and V row starts at a multiple of 8 elements: 16-byte loads. */

/* MT: m16 tiles of query rows a warp owns (1: 16 rows; 2: 32 rows, FlashAttention-2's layout, each K/V
 * fragment loaded once for both). Q_LOCAL: Q's block stays in local memory and its fragments are loaded
 * per k step (the host's rule: MT > 1 or a head dim above 128, where Q's fragments in registers would
 * cost 4*MT*HEAD_DIM/16 registers beside O's 4*MT*HEAD_DIM/8). KV_STAGES: K and V tiles in local memory
 * at once (1, or 2: each loaded a whole key tile ahead of its use, in buffers that alternate). With 2
 * and Q's block apart (Q_LOCAL), Q's block is copied asynchronously too, in the first K tile's group: the
 * prologue waits on one global-memory latency instead of three. */
#if KV_STAGES != 1 && KV_STAGES != 2
#error "KV_STAGES must be 1 or 2"
#endif
/* (a converted Q goes through registers; so does a split one: split in place, a work-item's stores would
 * land on chunks other work-items have not read yet) */
#define Q_ASYNC (KV_STAGES == 2 && Q_LOCAL && !Q_CONVERT && !Q_SPLIT)
/* O_STAGED, the host's where O_ALIGNED (O's strides multiples of 8 elements and, checked at enqueue, its
 * offset a multiple of 16 bytes) and the head dim is above 64 and at most 192: the normalised output goes through
 * local memory (each warp its own rows, as packed pairs) and leaves in 16-byte row chunks, instead of two
 * 16-bit stores a lane an output pair (128 x 64 in two stages at d=128: +12.6% at N=1024, +3.9% at
 * 4096, +1.7% at 16384; d=64 -0.9%, d=256 -1.1% with 16 bytes of spill: docs/design/mma.md). O's rows
 * are staged where Q's or K's were, so they are no wider than those. */
#if MT != 1 && MT != 2
#error "MT must be 1 or 2"
#endif
#if O_STAGED && Q_CONVERT
#error "O_STAGED stages O in the operands' type: O in Q's own type is stored from the accumulators"
#endif
#if MMA_TF32 && (MT != 1 || !Q_LOCAL || SWIZZLE || O_STAGED)
#error "MMA_TF32 needs MT 1, Q_LOCAL 1, SWIZZLE 0 and O_STAGED 0"
#endif
/* Q_SPLIT (TF32X3, where local memory allows: the host's): Q's block split once as it lands, its TF32
 * parts in q_s and what they leave in q_rest (BLOCK_M * LDS more fp32 elements), instead of every key tile
 * splitting its fragments again. */
#ifndef Q_SPLIT
#define Q_SPLIT 0
#endif
/* KV_SPLIT (measured as a variant: docs/design/mma.md, tf32-3): each K and V tile split once, by the
 * work-items that copied it, as their copies land (TF32 parts in place, the rest in k_rest and v_rest);
 * otherwise every warp splits the B fragments it reads. */
#ifndef KV_SPLIT
#define KV_SPLIT 0
#endif
#if (Q_SPLIT || KV_SPLIT) && MMA_TF32 != 3
#error "Q_SPLIT and KV_SPLIT are TF32X3's"
#endif
/* Q_SPLIT's blocks are stored in fragment order: a lane's A fragment of a k8 step (its four values) as one
 * 16-byte read, no register moves to assemble it. Step s (0, 1) of the 16 columns k2 of warp w: */
#define Q_FRAG_AT(w, k2, s, ln) (((((w) * (HEAD_DIM / 16) + (k2)) * 2 + (s)) * 32 + (ln)) * 4)
/* and where row r, column c of the block goes (the columns of each 16 permuted as K's reads take them:
 * TF32 at the end of the comment at the top) */
#define Q_SPLIT_AT(r, c)                                                                                       \
    (Q_FRAG_AT((r) / 16, (c) / 16, ((c) % 4) / 2, ((r) % 8) * 4 + ((c) % 16) / 4) + ((r) % 16) / 8 + 2 * ((c) % 2))
/* (four columns c .. c+3 of row r, split: hi into q_s, lo into q_rest) */
#define Q_SPLIT_STORE(r, c, hi, lo)                                                                            \
    do {                                                                                                       \
        __local uint *const qh_ = (__local uint *)q_s;                                                         \
        qh_[Q_SPLIT_AT(r, c)] = (hi).x, qh_[Q_SPLIT_AT(r, (c) + 1)] = (hi).y;                                  \
        qh_[Q_SPLIT_AT(r, (c) + 2)] = (hi).z, qh_[Q_SPLIT_AT(r, (c) + 3)] = (hi).w;                            \
        q_rest[Q_SPLIT_AT(r, c)] = (lo).x, q_rest[Q_SPLIT_AT(r, (c) + 1)] = (lo).y;                            \
        q_rest[Q_SPLIT_AT(r, (c) + 2)] = (lo).z, q_rest[Q_SPLIT_AT(r, (c) + 3)] = (lo).w;                      \
    } while (0)
/* The local tiles' element (MMA_E) and the elements of a 16-byte chunk (CE): 16-bit operands, or fp32. */
#if MMA_TF32
#define MMA_E float
#define CE 4
#else
#define MMA_E ushort
#define CE 8
#endif
#define BLOCK_M (16 * WARPS * MT)
#define WG_SIZE (32 * WARPS)
/* Local rows of 16-bit elements, in 16-byte chunks of 8. SWIZZLE (head dims a multiple of 64): rows of
 * exactly HEAD_DIM, chunk c of row r stored at chunk c ^ (r % 8), so the eight row addresses of an
 * ldmatrix (eight rows, one chunk column) fall in eight distinct 16-byte bank groups; otherwise rows
 * padded by one chunk (LDS = HEAD_DIM + 8: each row shifted by four banks) for the same effect. AT(r, c):
 * the element offset of row r, column c (c a multiple of 8). Padded rows measured as fast or faster on the
 * H200 except at d=64 with Q's block apart (d=128 equal, causal +6%; d=256 +11-15%; d=64 -2%:
 * docs/design/mma.md): the swizzle's XOR costs an address computation an ldmatrix where registers are
 * short, padded rows are a base and an immediate offset. So the host swizzles only there (V's rows of
 * another width than K's: padded). */
#if SWIZZLE && (HEAD_DIM % 64 != 0 || HEAD_DIM_V != HEAD_DIM)
#error "SWIZZLE needs rows of whole groups of 8 chunks, a head dim a multiple of 64, and V's rows as K's"
#endif
#if MMA_TF32
#define LDS (HEAD_DIM + (48 - HEAD_DIM % 32) % 32) /* 16 mod 32 */
#define AT(r, c) ((r) * LDS + (c))
#define LDV (HEAD_DIM_V + 4) /* 4 mod 16 */
#define AT_V(r, c) ((r) * LDV + (c))
#elif SWIZZLE
#define LDS HEAD_DIM
/* (the chunk's high bits kept apart, so that unrolled loops fold them into immediate offsets and only
 * the low three bits, one value a lane per parity, cost a register) */
#define AT(r, c) ((r) * LDS + ((c) & ~63) + (((((c) >> 3) & 7) ^ ((r) & 7)) << 3))
#define LDV LDS
#define AT_V(r, c) AT(r, c)
#else
#define LDS (HEAD_DIM + 8)
#define AT(r, c) ((r) * LDS + (c))
#define LDV (HEAD_DIM_V + 8)
#define AT_V(r, c) ((r) * LDV + (c)) /* V's tiles, and O's rows when staged */
#endif
/* (a boolean mask's or key padding's reads ahead of the products, as bits: tiles of up to 128 keys) */
#define MMA_KEEP_BITS (HAS_SCORE_MODS && HAS_KEEP_BITS && BLOCK_N <= 128)
#define KSTEPS (HEAD_DIM / 16) /* k16 steps of Q*K^T */
#define NT (BLOCK_N / 8)       /* n8 tiles of S */
#define DT (HEAD_DIM_V / 8)    /* n8 tiles of O */
#define KT (BLOCK_N * LDS)     /* elements of one K tile buffer */
#define VT (BLOCK_N * LDV)     /* and of one V tile buffer */
#if Q_LOCAL
#define KROWS (KV_STAGES * BLOCK_N)
#else
#define KROWS (BLOCK_M > KV_STAGES * BLOCK_N ? BLOCK_M : KV_STAGES * BLOCK_N)
#endif

/* A 16-byte load of CE elements from global memory; a copy of them to local memory. */
#if ROWS_ALIGNED
#define LOADC(src) (*(__global const uint4 *)(src))
#elif MMA_TF32
#define LOADC(src) as_uint4(vload4(0, (src)))
#else
#define LOADC(src) as_uint4(vload8(0, (src)))
#endif
#define COPYC(dst, src, ok) (*(__local uint4 *)(dst) = (ok) ? LOADC(src) : (uint4)(0))
/* and CE of Q's, rounded to the operands' type where Q has its own */
#if Q_CONVERT
#define LOAD_QC(src) q_round8(src)
#else
#define LOAD_QC(src) LOADC(src)
#endif

/* MMA_PIPELINE: K and V tiles through cp.async (mma.cl: asynchronous global -> local copies through L2,
 * compute capability 8.0+, 16-byte aligned rows): V's tile loads while S = Q*K^T is computed, the next K
 * tile while O += P*V is. Otherwise (unaligned rows, and emulated) the same order with synchronous copies.
 */
#define MMA_PIPELINE (FCL_PTX && ROWS_ALIGNED)
#if MMA_PIPELINE
#define ASYNC8(dst, src, ok) CP_ASYNC16_CG(dst, src, ok)
#define ASYNC_COMMIT() CP_ASYNC_COMMIT()
/* this work-item's copies landed, all but the n groups committed last */
#define ASYNC_WAIT(n) CP_ASYNC_WAIT(n)
#else
#define ASYNC8(dst, src, ok) COPYC(dst, src, ok)
#define ASYNC_COMMIT()
#define ASYNC_WAIT(n)
#endif
/* One K or V tile (BLOCK_N rows of W elements from key n0) into local memory at ATF(row, column); rows
 * past skv are zeros (their source address clamped to row 0). Work-item tid copies chunks tid, tid +
 * WG_SIZE, ... of the tile's BLOCK_N x W/8 16-byte chunks; its row and column advance by constants
 * (WG_SIZE/CPR rows and WG_SIZE%CPR chunks, wrapping to the next row), and so does its source pointer:
 * no division or 64-bit multiply a chunk (NVIDIA's compiler kept the general loop's per-chunk index
 * arithmetic, 16 instructions a copy, about a quarter of the key loop at d=128). */
#define CPR (HEAD_DIM / CE)   /* 16-byte chunks a row of K */
#define CPR_V (HEAD_DIM_V / CE) /* and of V and O */
#define LOAD_TILE_(dst, src, base, stride, pstride, n0, CHECK, W, ATF)                                         \
    do {                                                                                                       \
        int r_ = tid / ((W) / CE), c_ = (tid - r_ * ((W) / CE)) * CE;                                          \
        __global const MMA_KV_T *row0_ = (src) + (base);                                                       \
        __global const MMA_KV_T *p_ = row0_ + TILE_ROW((n0) + r_, stride, pstride) + c_;                       \
        const long step_ = (long)(WG_SIZE / ((W) / CE)) * (stride) + (WG_SIZE % ((W) / CE)) * CE;              \
        UNROLL                                                                                                 \
        for (int i_ = 0; i_ < (BLOCK_N * ((W) / CE) + WG_SIZE - 1) / WG_SIZE; ++i_) {                          \
            if ((BLOCK_N * ((W) / CE)) % WG_SIZE == 0 || r_ < BLOCK_N) {                                       \
                const bool ok_ = !(CHECK) || (n0) + r_ < skv;                                                  \
                ASYNC8((dst) + ATF(r_, c_), PAGED_SRC(p_, row0_, (n0) + r_, stride, pstride, c_, ok_), ok_);   \
            }                                                                                                  \
            r_ += WG_SIZE / ((W) / CE);                                                                        \
            c_ += (WG_SIZE % ((W) / CE)) * CE;                                                                 \
            p_ += step_;                                                                                       \
            if (WG_SIZE % ((W) / CE) != 0 && c_ >= (W)) {                                                      \
                c_ -= (W);                                                                                     \
                r_ += 1;                                                                                       \
                p_ += (stride) - (W);                                                                          \
            }                                                                                                  \
        }                                                                                                      \
    } while (0)
/* A paged cache (PAGE_SIZE): each chunk's row through the block table, one lookup a row piece (rows past
 * the keys read the last key's page, and nothing of it); otherwise the stepped pointer. */
#if PAGE_SIZE
#define PAGED_SRC(p, row0, j, stride, pstride, c, ok) ((row0) + KV_ROW(min((j), skv - 1), stride, pstride) + (c))
#define TILE_ROW(j, stride, pstride) 0 /* (the stepped pointer is not read: no block-table lookup for it) */
#else
#define PAGED_SRC(p, row0, j, stride, pstride, c, ok) ((ok) ? (p) : (row0) + (c))
#define TILE_ROW(j, stride, pstride) KV_ROW(j, stride, pstride)
#endif
/* (the row checks only on the tile that crosses the end of the keys) */
#define LOAD_ROWS(dst, src, base, stride, pstride, n0, W, ATF)                                                 \
    do {                                                                                                       \
        if ((n0) + BLOCK_N <= skv)                                                                             \
            LOAD_TILE_(dst, src, base, stride, pstride, n0, 0, W, ATF);                                        \
        else                                                                                                   \
            LOAD_TILE_(dst, src, base, stride, pstride, n0, 1, W, ATF);                                        \
    } while (0)
/* K's tile of keys n0 .. n0 + BLOCK_N - 1 into dst, and V's (a paged cache's page stride: the batch's) */
#define LOAD_K(dst, n0) LOAD_ROWS(dst, K, k_base, k_ss, k_sb, n0, HEAD_DIM, AT)
#define LOAD_V(dst, n0) LOAD_ROWS(dst, V, v_base, v_ss, v_sb, n0, HEAD_DIM_V, AT_V)

#if MMA_TF32
#if MMA_TF32 == 3
/* TF32X3's split of x: hi, x rounded to TF32 (to nearest, ties away) by an integer add and a mask, and lo,
 * the rest (exact in fp32, at most 2^-11 of |x|) truncated to TF32: x = hi + lo to 2^-21 of |x|, in 4
 * instructions where one cvt.rna.tf32.f32 alone took 4 (ptxas 13.0, sm_90: VIADD, FSETP, SEL, LOP3, for its
 * NaN and infinity checks; docs/design/mma.md, tf32-3). Those checks are not needed here: a NaN x whose add
 * carries out of the exponent leaves a hi of zero but a NaN lo (x - hi), an infinite x a NaN lo, so the
 * products are NaN either way; only a finite |x| within 2^-12 of fp32's largest rounds up to infinity. */
#define TF32_HI(x) ((as_uint(x) + 0x1000u) & 0xffffe000u)
#define TF32_LO(x, hi) (as_uint((x) - as_float(hi)) & 0xffffe000u)
/* Four fp32 values as an A fragment of TF32 values (b) and what they left (sm): x = b + sm. */
#define TF32_SPLIT4(b, sm, x0, x1, x2, x3)                                                                     \
    do {                                                                                                       \
        const float x_[4] = {(x0), (x1), (x2), (x3)};                                                          \
        UNROLL                                                                                                 \
        for (int i_ = 0; i_ < 4; ++i_) {                                                                       \
            (b)[i_] = TF32_HI(x_[i_]);                                                                         \
            (sm)[i_] = TF32_LO(x_[i_], (b)[i_]);                                                               \
        }                                                                                                      \
    } while (0)
#define TF32_HI4(f) ((uint4)(TF32_HI((f).x), TF32_HI((f).y), TF32_HI((f).z), TF32_HI((f).w)))
#define TF32_LO4(f, u) ((uint4)(TF32_LO((f).x, (u).x), TF32_LO((f).y, (u).y), TF32_LO((f).z, (u).z), TF32_LO((f).w, (u).w)))
/* A*B for A = a + as (fragments) and B = (b0, b1) + (s0, s1) as three m16n8k8 products, the smalls' product
 * (below 2^-22 of |A*B|) dropped: the two small products added to cs, then the big one to cb. */
#define MMA_TF32_PARTS(cb, cs, a, as, b0, b1, s0, s1)                                                          \
    do {                                                                                                       \
        MMA_TF32_OP(cs, (as)[0], (as)[1], (as)[2], (as)[3], (b0), (b1));                                       \
        MMA_TF32_OP(cs, (a)[0], (a)[1], (a)[2], (a)[3], (s0), (s1));                                           \
        MMA_TF32_OP(cb, (a)[0], (a)[1], (a)[2], (a)[3], (b0), (b1));                                           \
    } while (0)
/* c += A*B, the small products first */
#define MMA_TF32_PRODUCT(c, a, as, b0, b1, s0, s1) MMA_TF32_PARTS(c, c, a, as, b0, b1, s0, s1)
/* (this work-item's chunks of a W-column tile at dst, as LOAD_TILE_ copied them) */
#define SPLIT_OWN(dst, rest, W, ATF)                                                                           \
    for (int idx_ = tid; idx_ < BLOCK_N * ((W) / CE); idx_ += WG_SIZE) {                                       \
        const int r_ = idx_ / ((W) / CE), c_ = (idx_ - r_ * ((W) / CE)) * CE;                                  \
        const float4 x_ = *(__local const float4 *)((dst) + ATF(r_, c_));                                      \
        const uint4 hi_ = TF32_HI4(x_);                                                                        \
        *(__local uint4 *)((dst) + ATF(r_, c_)) = hi_;                                                         \
        *(__local uint4 *)((rest) + ATF(r_, c_)) = TF32_LO4(x_, hi_);                                          \
    }
/* V's B fragment of P*V's k8 step j and output tile e: rows 8j + 2t and + 1, column 8e + g, split */
#if KV_SPLIT
#define V_FRAG(vh, vl, j, e)                                                                                   \
    const uint2 vh = (uint2)(as_uint(vt[AT_V((j) * 8 + 2 * t, (e) * 8 + g)]),                                  \
                             as_uint(vt[AT_V((j) * 8 + 2 * t + 1, (e) * 8 + g)]));                             \
    const uint2 vl = (uint2)(vt_rest[AT_V((j) * 8 + 2 * t, (e) * 8 + g)], vt_rest[AT_V((j) * 8 + 2 * t + 1, (e) * 8 + g)])
#else
#define V_FRAG(vh, vl, j, e)                                                                                   \
    const float2 vx_##vh = (float2)(vt[AT_V((j) * 8 + 2 * t, (e) * 8 + g)], vt[AT_V((j) * 8 + 2 * t + 1, (e) * 8 + g)]); \
    const uint2 vh = (uint2)(TF32_HI(vx_##vh.x), TF32_HI(vx_##vh.y));                                         \
    const uint2 vl = (uint2)(TF32_LO(vx_##vh.x, vh.x), TF32_LO(vx_##vh.y, vh.y))
#endif
/* How the matrix unit's sums are staged into fp32 adds (docs/design/mma.md, tf32-3): 0, S 16 columns and O
 * a key tile in one accumulator; 1, every k8 step's three products in an accumulator of their own; 2, the
 * big product's k8 step apart and the small products' whole sum apart. */
#ifndef TF32_ACC
#define TF32_ACC 0
#endif
/* (an accumulator tile: c += t; t = 0) */
#define ACC_ADD(c, t) ((c)[0] += (t)[0], (c)[1] += (t)[1], (c)[2] += (t)[2], (c)[3] += (t)[3])
#define ACC_ZERO(t) ((t)[0] = (t)[1] = (t)[2] = (t)[3] = 0.0f)
#else
#define TF32_SPLIT4(b, sm, x0, x1, x2, x3)                                                                     \
    ((b)[0] = tf32_round(x0), (b)[1] = tf32_round(x1), (b)[2] = tf32_round(x2), (b)[3] = tf32_round(x3))
#define MMA_TF32_PRODUCT(c, a, as, y0, y1)                                                                     \
    MMA_TF32_OP(c, (a)[0], (a)[1], (a)[2], (a)[3], tf32_round(y0), tf32_round(y1))
#endif
#endif

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void
flash_mma(FCL_SIGNATURE(FCL_FLASH_MMA_ARGS))
{
    FCL_UNPACK();
    /* The caller's offsets into its buffers, in elements (flashcl_offsets). */
    APPLY_QKVO_OFFSETS();
    APPLY_PREFILL_OFFSETS();
    __local uint4 k4[KROWS * LDS / CE];
    __local uint4 v4[KV_STAGES * VT / CE];
    __local MMA_E *const k_s = (__local MMA_E *)k4;
    __local MMA_E *const v_s = (__local MMA_E *)v4;
#if Q_LOCAL
    __local uint4 q4[BLOCK_M * LDS / CE];
    __local MMA_E *const q_s = (__local MMA_E *)q4;
#if Q_SPLIT
    __local uint4 q_rest4[BLOCK_M * LDS / CE];
    __local uint *const q_rest = (__local uint *)q_rest4;
#endif
#if KV_SPLIT
    __local uint4 k_rest4[KROWS * LDS / CE];
    __local uint4 v_rest4[KV_STAGES * VT / CE];
    __local uint *const k_rest = (__local uint *)k_rest4;
    __local uint *const v_rest = (__local uint *)v_rest4;
#endif
#else
    __local MMA_E *const q_s = k_s; /* Q's block passes through k_s into registers */
#endif
#if !FCL_PTX
    __local uint xchg[WARPS * 32 * 8];
#endif
#ifdef FLASHCL_DEBUG_SCALE
    const float scale2 = scale_log2 * FLASHCL_DEBUG_SCALE;
#else
    const float scale2 = scale_log2;
#endif
    const int tid = get_local_id(0);
    const int warp = tid >> 5, lane = tid & 31;
    const int g = lane >> 2, t = lane & 3;
#if !FCL_PTX
    __local uint *const xw = xchg + warp * 32 * 8;
#endif
    /* (causal or windowed: the blocks of a head in reverse, the longest key ranges first) */
    const int m0 = (HAS_WINDOW ? (int)get_num_groups(0) - 1 - (int)get_group_id(0) : (int)get_group_id(0)) * BLOCK_M;
    const int bh = get_group_id(1);
    const int b = bh / heads_q, h = bh - b * heads_q, hk = h / group;
    const seq_view sv = seq_view_of(b, seq_q, seq_kv, CU_Q, CU_K, total_q, total_kv, CACHE_LENS, BATCH_IDX, LEFT_PAD,
                                    cache_batch);
    const int sq = sv.sq, skv = sv.skv;
    const long k_base = kv_base(sv, hk, k_sb, k_ss, k_sh);
    const long v_base = kv_base(sv, hk, v_sb, v_ss, v_sh);
    /* (key row j from kv_base, rows rs and pages ps elements apart: geometry.cl's kv_row) */
#define KV_ROW(j, rs, ps) kv_row(b, (j), (rs), (ps), BT, max_pages, num_pages)

    /* Keys this block can see (tiles outside are never loaded) and keys all its rows see (tiles there
     * need no mask), geometry.cl. */
    const int q_lo = m0, q_hi = min(m0 + BLOCK_M, sq) - 1;
    int n_begin = 0, n_end = q_lo < sq ? skv : 0;
#if HAS_WINDOW
    const key_range first_row = visible_keys(q_lo, sq, skv, win_left, win_right);
    const key_range last_row = visible_keys(q_hi, sq, skv, win_left, win_right);
    n_begin = first_row.lo / BLOCK_N * BLOCK_N;
    n_end = min(n_end, last_row.hi);
    const int inner_lo = last_row.lo, inner_hi = first_row.hi;
#else
    const int inner_lo = 0, inner_hi = skv;
#endif

    /* Q's block -> local -> A fragments (ldmatrix x4: rows 0-7/8-15 x columns 0-7/8-15 of a k step):
     * once into registers, or with Q_LOCAL per k step from q_s. The scale is applied in the exponent
     * (exp2(s * scale - m * scale), one FMA a score) to scores whose maximum is taken unscaled, which
     * needs a positive scale: a negative one negates Q instead (the sign bits: exact). */
    const uint q_sign = scale2 < 0.0f ? (MMA_TF32 ? 0x80000000u : 0x80008000u) : 0u;
    const float scale_abs = fabs(scale2);
    /* With score modifiers of the value the scores are scaled (and modified) before the softmax, whose
     * exponent then takes them as they are (scores.cl's HAS_VALUE_MODS); mod_scale: the scale the
     * modifiers apply. */
    const float exp_scale = HAS_VALUE_MODS ? 1.0f : scale_abs, mod_scale = HAS_VALUE_MODS ? scale_abs : 1.0f;
#if Q_ASYNC
    /* Q's block and the first K tile in one group of copies; a negative scale's sign flip by each
     * work-item on its own chunks once they landed (the loop's first barrier publishes them). */
    for (int idx = tid; idx < BLOCK_M * (HEAD_DIM / CE); idx += WG_SIZE) {
        const int r = idx / (HEAD_DIM / CE), c = (idx - r * (HEAD_DIM / CE)) * CE;
        ASYNC8(q_s + AT(r, c), Q + q_row_offset(sv, h, q_row_clamp(m0 + r, sq), q_sb, q_ss, q_sh) + c, m0 + r < sq);
    }
    if (n_begin < n_end)
        LOAD_K(k_s, n_begin);
    ASYNC_COMMIT();
    if (q_sign) {
        ASYNC_WAIT(0);
        for (int idx = tid; idx < BLOCK_M * (HEAD_DIM / CE); idx += WG_SIZE) {
            const int r = idx / (HEAD_DIM / CE), c = (idx - r * (HEAD_DIM / CE)) * CE;
            *(__local uint4 *)(q_s + AT(r, c)) ^= q_sign;
        }
    }
#else
    UNROLL /* (every load issued before the first store waits for its data) */
    for (int idx = tid; idx < BLOCK_M * (HEAD_DIM / CE); idx += WG_SIZE) {
        const int r = idx / (HEAD_DIM / CE), c = (idx - r * (HEAD_DIM / CE)) * CE;
        __global const MMA_Q_T *src = Q + q_row_offset(sv, h, q_row_clamp(m0 + r, sq), q_sb, q_ss, q_sh) + c;
#if Q_SPLIT
        const float4 x = as_float4(m0 + r < sq ? LOAD_QC(src) ^ q_sign : (uint4)(0));
        const uint4 hi = TF32_HI4(x);
        Q_SPLIT_STORE(r, c, hi, TF32_LO4(x, hi));
#else
        *(__local uint4 *)(q_s + AT(r, c)) = m0 + r < sq ? LOAD_QC(src) ^ q_sign : (uint4)(0);
#endif
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
#if !MMA_TF32
    const int mi = lane >> 3, mr = lane & 7; /* the matrix and row this lane addresses in an ldmatrix */
#endif
#define Q_FRAG_OFFSET(mt, ks) AT(warp * 16 * MT + (mt) * 16 + (mi & 1) * 8 + mr, (ks) * 16 + (mi >> 1) * 8)
#if Q_LOCAL
#define Q_FRAG(dst, mt, ks) LDSM_X4(dst, q_s, Q_FRAG_OFFSET(mt, ks))
#else
    uint qa[MT][KSTEPS][4];
UNROLL
    for (int mt = 0; mt < MT; ++mt)
UNROLL
        for (int ks = 0; ks < KSTEPS; ++ks)
            LDSM_X4(qa[mt][ks], q_s, Q_FRAG_OFFSET(mt, ks));
#define Q_FRAG(dst, mt, ks) ((dst)[0] = qa[mt][ks][0], (dst)[1] = qa[mt][ks][1], (dst)[2] = qa[mt][ks][2], (dst)[3] = qa[mt][ks][3])
#endif

    float o[MT][DT][4];
    float m_run[MT][2], l_run[MT][2]; /* rows g and g + 8 of each m tile; l: this lane's columns only */
    int row0[MT];                     /* and row0 + 8 */
UNROLL
    for (int mt = 0; mt < MT; ++mt) {
UNROLL
        for (int j = 0; j < DT; ++j)
            o[mt][j][0] = o[mt][j][1] = o[mt][j][2] = o[mt][j][3] = 0.0f;
        m_run[mt][0] = m_run[mt][1] = -INFINITY;
        l_run[mt][0] = l_run[mt][1] = 0.0f;
        row0[mt] = m0 + warp * 16 * MT + mt * 16 + g;
    }

#if !Q_LOCAL
    barrier(CLK_LOCAL_MEM_FENCE); /* every warp holds its Q fragments: k_s is free */
#endif
#if KV_STAGES == 1
    if (n_begin < n_end) {
        LOAD_K(k_s, n_begin);
        ASYNC_COMMIT();
    }
#else
    /* Two stages: K(i) and V(i) in buffers i % 2. Tile i's loop step issues V(i+1) at its start and
     * K(i+2) once S(i) is done, so each copy has more than a loop step to land; every step commits two
     * groups (empty past the keys), so waiting for all but the last two is always the tile wanted:
     * at the step's start K(i) (then pending: V(i), K(i+1)), before P*V V(i) (K(i+1), V(i+1)). */
#if !Q_ASYNC
    if (n_begin < n_end)
        LOAD_K(k_s, n_begin);
    ASYNC_COMMIT();
#endif
    if (n_begin < n_end)
        LOAD_V(v_s, n_begin);
    ASYNC_COMMIT();
    if (n_begin + BLOCK_N < n_end)
        LOAD_K(k_s + KT, n_begin + BLOCK_N);
    ASYNC_COMMIT();
    int kbuf = 0, vbuf = 0; /* tile i's buffers: k_s + kbuf, v_s + vbuf (0 or KT, 0 or VT) */
#endif
    for (int n0 = n_begin; n0 < n_end; n0 += BLOCK_N) {
#if KV_STAGES == 1
        ASYNC_WAIT(0);                /* this thread's copies of K(n0) have landed */
#if KV_SPLIT
        SPLIT_OWN(k_s, k_rest, HEAD_DIM, AT)
        __local const uint *const kt_rest = k_rest, *const vt_rest = v_rest;
#endif
        barrier(CLK_LOCAL_MEM_FENCE); /* everyone's have; and P*V of the previous tile is done: v_s is free */
        LOAD_V(v_s, n0);
        ASYNC_COMMIT();
        __local const MMA_E *const kt = k_s, *const vt = v_s;
#else
        ASYNC_WAIT(2);                /* this thread's copies of K(n0) have landed */
#if KV_SPLIT
        SPLIT_OWN(k_s + kbuf, k_rest + kbuf, HEAD_DIM, AT)
        __local const uint *const kt_rest = k_rest + kbuf, *const vt_rest = v_rest + vbuf;
#endif
        barrier(CLK_LOCAL_MEM_FENCE); /* everyone's have; and P*V of the previous tile is done: its v buffer is free */
        if (n0 + BLOCK_N < n_end)
            LOAD_V(v_s + (vbuf ^ VT), n0 + BLOCK_N);
        ASYNC_COMMIT();
        __local const MMA_E *const kt = k_s + kbuf, *const vt = v_s + vbuf;
#endif

#if MMA_KEEP_BITS
        /* A boolean mask or key padding: their reads for this tile into bits (scores.cl's KEEP_BITS_QUAD for an
         * aligned full tile, else KEEP_BITS) before S is computed, so that their latency runs under the products */
        uint keep[MT][2];
        const bool keep_quad = keep_tile_aligned(n0, BLOCK_N, skv, b); /* (uniform: scores.cl) */
UNROLL
        for (int mt = 0; mt < MT; ++mt)
UNROLL
            for (int r = 0; r < 2; ++r) {
                const int qi = row0[mt] + r * 8;
                const score_row mods = score_row_of(LOG2E_F, softcap_log2, ALIBI, alibi_per_batch, MASK, m_sb, m_ss,
                                                    m_sh, KPM, seq_kv, heads_q, b, qi, h,
                                                    (int)ALIGNED_POS(qi, sq, skv), qi < sq);
                if (keep_quad)
                    KEEP_BITS_QUAD(keep[mt][r], mods, n0, NT, t, lane);
                else
                    KEEP_BITS(keep[mt][r], mods, n0 + 2 * t, NT, skv);
            }
#endif
        /* S = Q*K^T, two k steps at a time: ldmatrix x4 gives an 8-key tile's B fragments of both, used
         * for each of the warp's m tiles; k outer, so that with Q_LOCAL Q's fragments come from q_s once
         * a k step. */
        float s[MT][NT][4];
UNROLL
        for (int mt = 0; mt < MT; ++mt)
UNROLL
            for (int j = 0; j < NT; ++j)
                s[mt][j][0] = s[mt][j][1] = s[mt][j][2] = s[mt][j][3] = 0.0f;
#if MMA_TF32
#if MMA_TF32 == 3 && TF32_ACC == 2
        float s_small[NT][4];
UNROLL
        for (int j = 0; j < NT; ++j)
            ACC_ZERO(s_small[j]);
#endif
        /* Two k8 steps a 16-byte read: Q's rows g and g+8 and K's row g of an n8 tile, columns 16k2 + 4t ..
         * + 3 (the first step's k t and t+4 as columns 4t and 4t+1, the second's as 4t+2 and 4t+3). */
UNROLL
        for (int k2 = 0; k2 < HEAD_DIM / 16; ++k2) {
            uint qb[2][4], qs[2][4]; /* the two steps' A fragments (TF32), and what rounding left (TF32X3) */
#if Q_SPLIT
            /* (split once, as Q's block landed: its TF32 parts in q_s, the rest in q_rest, fragment order) */
UNROLL
            for (int st = 0; st < 2; ++st) {
                const uint4 hi = *(__local const uint4 *)((__local const uint *)q_s + Q_FRAG_AT(warp, k2, st, lane));
                const uint4 lo = *(__local const uint4 *)(q_rest + Q_FRAG_AT(warp, k2, st, lane));
                qb[st][0] = hi.x, qb[st][1] = hi.y, qb[st][2] = hi.z, qb[st][3] = hi.w;
                qs[st][0] = lo.x, qs[st][1] = lo.y, qs[st][2] = lo.z, qs[st][3] = lo.w;
            }
#else
            const float4 qg = *(__local const float4 *)(q_s + AT(warp * 16 + g, k2 * 16 + 4 * t));
            const float4 qh = *(__local const float4 *)(q_s + AT(warp * 16 + g + 8, k2 * 16 + 4 * t));
            TF32_SPLIT4(qb[0], qs[0], qg.x, qh.x, qg.y, qh.y);
            TF32_SPLIT4(qb[1], qs[1], qg.z, qh.z, qg.w, qh.w);
#endif
UNROLL
            for (int j = 0; j < NT; ++j) {
                const float4 kb = *(__local const float4 *)(kt + AT(j * 8 + g, k2 * 16 + 4 * t));
#if MMA_TF32 == 3
#if KV_SPLIT
                const uint4 kh = as_uint4(kb), kl = *(__local const uint4 *)(kt_rest + AT(j * 8 + g, k2 * 16 + 4 * t));
#else
                const uint4 kh = TF32_HI4(kb), kl = TF32_LO4(kb, kh);
#endif
                /* (the matrix unit's sums staged into fp32 adds: TF32_ACC; as P*V's below) */
                float acc[4];
#if TF32_ACC == 0
                ACC_ZERO(acc);
                MMA_TF32_PRODUCT(acc, qb[0], qs[0], kh.x, kh.y, kl.x, kl.y);
                MMA_TF32_PRODUCT(acc, qb[1], qs[1], kh.z, kh.w, kl.z, kl.w);
                ACC_ADD(s[0][j], acc);
#elif TF32_ACC == 1
                ACC_ZERO(acc);
                MMA_TF32_PRODUCT(acc, qb[0], qs[0], kh.x, kh.y, kl.x, kl.y);
                ACC_ADD(s[0][j], acc);
                ACC_ZERO(acc);
                MMA_TF32_PRODUCT(acc, qb[1], qs[1], kh.z, kh.w, kl.z, kl.w);
                ACC_ADD(s[0][j], acc);
#else
                ACC_ZERO(acc);
                MMA_TF32_PARTS(acc, s_small[j], qb[0], qs[0], kh.x, kh.y, kl.x, kl.y);
                ACC_ADD(s[0][j], acc);
                ACC_ZERO(acc);
                MMA_TF32_PARTS(acc, s_small[j], qb[1], qs[1], kh.z, kh.w, kl.z, kl.w);
                ACC_ADD(s[0][j], acc);
#endif
#else
                MMA_TF32_PRODUCT(s[0][j], qb[0], qs[0], kb.x, kb.y);
                MMA_TF32_PRODUCT(s[0][j], qb[1], qs[1], kb.z, kb.w);
#endif
            }
        }
#if MMA_TF32 == 3 && TF32_ACC == 2
UNROLL
        for (int j = 0; j < NT; ++j)
            ACC_ADD(s[0][j], s_small[j]);
#endif
#else
UNROLL
        for (int k2 = 0; k2 < KSTEPS / 2; ++k2) {
            uint qf[MT][2][4];
UNROLL
            for (int mt = 0; mt < MT; ++mt) {
                Q_FRAG(qf[mt][0], mt, 2 * k2);
                Q_FRAG(qf[mt][1], mt, 2 * k2 + 1);
            }
UNROLL
            for (int j = 0; j < NT; ++j) {
                uint kb[4];
                LDSM_X4(kb, kt, AT(j * 8 + mr, k2 * 32 + mi * 8));
UNROLL
                for (int mt = 0; mt < MT; ++mt) {
                    MMA(s[mt][j], qf[mt][0][0], qf[mt][0][1], qf[mt][0][2], qf[mt][0][3], kb[0], kb[1]);
                    MMA(s[mt][j], qf[mt][1][0], qf[mt][1][1], qf[mt][1][2], qf[mt][1][3], kb[2], kb[3]);
                }
            }
        }
#if KSTEPS % 2
        /* An odd head dim's last k step (d = 80, 112, ...): the x4 load's matrices 2 and 3 repeat 0 and 1
         * (the same addresses), which that step does not use. */
        {
            uint qf[MT][4];
UNROLL
            for (int mt = 0; mt < MT; ++mt)
                Q_FRAG(qf[mt], mt, KSTEPS - 1);
UNROLL
            for (int j = 0; j < NT; ++j) {
                uint kb[4];
                LDSM_X4(kb, kt, AT(j * 8 + mr, (KSTEPS - 1) * 16 + (mi & 1) * 8));
UNROLL
                for (int mt = 0; mt < MT; ++mt)
                    MMA(s[mt][j], qf[mt][0], qf[mt][1], qf[mt][2], qf[mt][3], kb[0], kb[1]);
            }
        }
#endif
#endif /* MMA_TF32 */

#if HAS_SCORE_MODS
        /* Scaled and modified (scores.cl) on the accumulators; the keys outside a row's window, or past
         * the sequence's end, -inf on the tiles that cross them. */
        {
            const bool edge = n0 < inner_lo || n0 + BLOCK_N > inner_hi;
UNROLL
            for (int mt = 0; mt < MT; ++mt)
UNROLL
                for (int r = 0; r < 2; ++r) {
                    key_range vis = {0, skv};
#if HAS_WINDOW
                    if (edge)
                        vis = visible_keys(row0[mt] + r * 8, sq, skv, win_left, win_right);
#endif
                    const int qi = row0[mt] + r * 8;
                    /* (what the modifiers need of the row: the same every tile, for the compiler to hoist; a
                     * private array of them, pointers included, crashed llvmpipe's code: 2026-12-03) */
                    const score_row mods = score_row_of(LOG2E_F, softcap_log2, ALIBI, alibi_per_batch, MASK, m_sb, m_ss,
                                                        m_sh, KPM, seq_kv, heads_q, b, qi, h,
                                                        (int)ALIGNED_POS(qi, sq, skv), qi < sq);
#define S_ACC(j, e) s[mt][j][2 * r + (e)]
#if MMA_KEEP_BITS
                    if (edge) /* (two copies: the interior tiles' without a key comparison) */
                        SCORE_MODS_ACC_KEEP(S_ACC, NT, mods, n0 + 2 * t, mod_scale, 1, vis, keep[mt][r]);
                    else if (!KEEP_NOTHING_TO_DO(keep[mt][r], NT))
                        SCORE_MODS_ACC_KEEP(S_ACC, NT, mods, n0 + 2 * t, mod_scale, 0, vis, keep[mt][r]);
#else
                    if (edge) /* (two copies: the interior tiles' without a key comparison) */
                        SCORE_MODS_ACC(S_ACC, NT, mods, n0 + 2 * t, mod_scale, 1, vis);
                    else
                        SCORE_MODS_ACC(S_ACC, NT, mods, n0 + 2 * t, mod_scale, 0, vis);
#endif
#undef S_ACC
                }
        }
#else
        /* Mask only the tiles that cross a row's window edge or the sequence's end (unscaled scores). */
        if (n0 < inner_lo || n0 + BLOCK_N > inner_hi) {
UNROLL
            for (int mt = 0; mt < MT; ++mt)
UNROLL
                for (int r = 0; r < 2; ++r) {
#if HAS_WINDOW
                    const key_range vis = visible_keys(row0[mt] + r * 8, sq, skv, win_left, win_right);
#else
                    const key_range vis = {0, skv};
#endif
                    const int k0 = n0 + 2 * t;
UNROLL
                    for (int j = 0; j < NT; ++j)
UNROLL
                        for (int e = 0; e < 2; ++e) {
                            const int key = k0 + j * 8 + e;
                            if (key < vis.lo || key >= vis.hi)
                                s[mt][j][2 * r + e] = -INFINITY;
                        }
                }
        }
#endif

        float alphas[MT][2];
        /* Online softmax on the lane's rows (r = 0: row0, elements 0 and 1; r = 1: row0 + 8), softmax.cl's
         * rules with the maximum m_run kept unscaled: a row whose maximum is still -inf weighs its keys
         * exp2(-inf - 0) = 0; a NaN maximum makes every weight, and the row, NaN. */
UNROLL
        for (int mt = 0; mt < MT; ++mt)
UNROLL
            for (int r = 0; r < 2; ++r) {
                float mx = m_run[mt][r];
UNROLL
                for (int j = 0; j < NT; ++j)
                    mx = mma_max_nan(mx, mma_max_nan(s[mt][j][2 * r], s[mt][j][2 * r + 1]));
                mx = mma_max_nan(mx, SHFL_XOR(mx, 1));
                mx = mma_max_nan(mx, SHFL_XOR(mx, 2));
                const float m_scaled = mx == -INFINITY ? 0.0f : mx * exp_scale;
                /* (with a window exactly 1 where the maximum did not move; a NaN maximum moves it) */
                const float alpha = HAS_WINDOW && mx == m_run[mt][r] ? 1.0f : mma_exp2(fma(m_run[mt][r], exp_scale, -m_scaled));
                float psum = 0.0f;
UNROLL
                for (int j = 0; j < NT; ++j) {
                    const float p0 = mma_exp2(fma(s[mt][j][2 * r], exp_scale, -m_scaled));
                    const float p1 = mma_exp2(fma(s[mt][j][2 * r + 1], exp_scale, -m_scaled));
                    s[mt][j][2 * r] = p0;
                    s[mt][j][2 * r + 1] = p1;
                    psum += p0 + p1;
                }
                l_run[mt][r] = l_run[mt][r] * alpha + psum;
                m_run[mt][r] = mx;
                alphas[mt][r] = alpha;
            }
        /* With a window (causal or sliding) O's rescale is skipped for a warp none of whose rows moved its
         * maximum (alpha exactly 1 there: the same results). d=128, 128 x 64 in two stages: causal +4.7% at
         * N=16384, +1.2% at 4096; without a window -2% on 64-key tiles (docs/design/mma.md). */
        if (!HAS_WINDOW || warp_any(alphas[0][0] != 1.0f || alphas[0][1] != 1.0f || alphas[MT - 1][0] != 1.0f ||
                                      alphas[MT - 1][1] != 1.0f)) {
UNROLL
            for (int mt = 0; mt < MT; ++mt)
UNROLL
                for (int j = 0; j < DT; ++j) {
                    o[mt][j][0] *= alphas[mt][0];
                    o[mt][j][1] *= alphas[mt][0];
                    o[mt][j][2] *= alphas[mt][1];
                    o[mt][j][3] *= alphas[mt][1];
                }
        }

#if KV_STAGES == 1
        ASYNC_WAIT(0);                /* V(n0) has landed */
#if KV_SPLIT
        SPLIT_OWN(v_s, v_rest, HEAD_DIM_V, AT_V)
#endif
        barrier(CLK_LOCAL_MEM_FENCE); /* everyone's V copies too; and S is done: k_s is free */
        if (n0 + BLOCK_N < n_end) {
            LOAD_K(k_s, n0 + BLOCK_N);
            ASYNC_COMMIT();
        }
#else
        ASYNC_WAIT(2);                /* V(n0) has landed */
#if KV_SPLIT
        SPLIT_OWN(v_s + vbuf, v_rest + vbuf, HEAD_DIM_V, AT_V)
#endif
        barrier(CLK_LOCAL_MEM_FENCE); /* everyone's V copies too; and S is done: this k buffer is free */
        if (n0 + 2 * BLOCK_N < n_end)
            LOAD_K(k_s + kbuf, n0 + 2 * BLOCK_N);
        ASYNC_COMMIT();
#endif

#if MMA_TF32
        /* O += P*V: P's k8 step j is S tile j as it stands (its keys 8j + 2t and 8j + 2t + 1 as k t and t+4);
         * V's B fragments of the output's n8 tile e from rows 8j + 2t and 8j + 2t + 1, column 8e + g. */
#if MMA_TF32 == 3
        /* TF32X3: each output tile's sum over this key tile in an accumulator of its own, added to O by an
         * fp32 add: the matrix unit's own accumulation is not rounded to nearest (the H200 measured 6e-5 of
         * the row's scale at 4096 keys with S and O accumulated there, 10x fp32's; docs/design/mma.md,
         * tf32-1 and tf32-2) */
        uint pb[NT][4], ps[NT][4];
UNROLL
        for (int j = 0; j < NT; ++j)
            TF32_SPLIT4(pb[j], ps[j], s[0][j][0], s[0][j][2], s[0][j][1], s[0][j][3]);
UNROLL
        for (int e = 0; e < DT; ++e) {
            float acc[4];
#if TF32_ACC == 0
            ACC_ZERO(acc);
UNROLL
            for (int j = 0; j < NT; ++j) {
                V_FRAG(vh, vl, j, e);
                MMA_TF32_PRODUCT(acc, pb[j], ps[j], vh.x, vh.y, vl.x, vl.y);
            }
            ACC_ADD(o[0][e], acc);
#elif TF32_ACC == 1
UNROLL
            for (int j = 0; j < NT; ++j) {
                V_FRAG(vh, vl, j, e);
                ACC_ZERO(acc);
                MMA_TF32_PRODUCT(acc, pb[j], ps[j], vh.x, vh.y, vl.x, vl.y);
                ACC_ADD(o[0][e], acc);
            }
#else
            float small[4];
            ACC_ZERO(small);
UNROLL
            for (int j = 0; j < NT; ++j) {
                V_FRAG(vh, vl, j, e);
                ACC_ZERO(acc);
                MMA_TF32_PARTS(acc, small, pb[j], ps[j], vh.x, vh.y, vl.x, vl.y);
                ACC_ADD(o[0][e], acc);
            }
            ACC_ADD(o[0][e], small);
#endif
        }
#else
UNROLL
        for (int j = 0; j < NT; ++j) {
            uint pb[4], ps[4];
            TF32_SPLIT4(pb, ps, s[0][j][0], s[0][j][2], s[0][j][1], s[0][j][3]);
UNROLL
            for (int e = 0; e < DT; ++e)
                MMA_TF32_PRODUCT(o[0][e], pb, ps, vt[AT_V(j * 8 + 2 * t, e * 8 + g)],
                                 vt[AT_V(j * 8 + 2 * t + 1, e * 8 + g)]);
        }
#endif
#else
        /* O += P*V: P's k16 step kk is S tiles 2kk and 2kk+1; ldmatrix.trans x4 gives V's B fragments
         * for two n8 tiles of the output (columns 16e .. 16e+15), used for each m tile. */
UNROLL
        for (int kk = 0; kk < BLOCK_N / 16; ++kk) {
            uint pa[MT][4];
UNROLL
            for (int mt = 0; mt < MT; ++mt) {
                pa[mt][0] = pack2(s[mt][2 * kk][0], s[mt][2 * kk][1]);
                pa[mt][1] = pack2(s[mt][2 * kk][2], s[mt][2 * kk][3]);
                pa[mt][2] = pack2(s[mt][2 * kk + 1][0], s[mt][2 * kk + 1][1]);
                pa[mt][3] = pack2(s[mt][2 * kk + 1][2], s[mt][2 * kk + 1][3]);
            }
UNROLL
            for (int e = 0; e < HEAD_DIM_V / 16; ++e) {
                uint vb[4];
                LDSM_X4_T(vb, vt, AT_V(kk * 16 + (mi & 1) * 8 + mr, e * 16 + (mi >> 1) * 8));
UNROLL
                for (int mt = 0; mt < MT; ++mt) {
                    MMA(o[mt][2 * e], pa[mt][0], pa[mt][1], pa[mt][2], pa[mt][3], vb[0], vb[1]);
                    MMA(o[mt][2 * e + 1], pa[mt][0], pa[mt][1], pa[mt][2], pa[mt][3], vb[2], vb[3]);
                }
            }
        }
#endif
#if KV_STAGES == 2
        kbuf ^= KT;
        vbuf ^= VT;
#endif
    }
#if Q_ASYNC
    ASYNC_WAIT(0); /* (no keys: Q's copies, never read, landed before the work-group ends) */
#endif

    /* The row sums over the 4 lanes of each row; normalise and store. */
#if O_STAGED
    /* Into Q's block (each warp reads only its own rows there) or, with Q in registers, the K buffers
     * (free once every warp is past its last S); then whole rows out in 16-byte chunks. */
    __local ushort *const o_s = Q_LOCAL ? q_s : k_s;
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
UNROLL
    for (int mt = 0; mt < MT; ++mt)
UNROLL
        for (int r = 0; r < 2; ++r) {
            float l = l_run[mt][r];
            l += SHFL_XOR(l, 1);
            l += SHFL_XOR(l, 2);
            const int qi = row0[mt] + r * 8;
            const softmax_end e = softmax_finish(softmax_max_scaled(m_run[mt][r], exp_scale), l, SINK_LOGIT2(SINKS, h));
            const float inv = e.inv, lse_m = e.m, lse_l = e.l;
#if O_STAGED
            const int orow = warp * 16 * MT + mt * 16 + g + r * 8;
UNROLL
            for (int j = 0; j < DT; ++j)
                *(__local uint *)(o_s + AT_V(orow, j * 8) + 2 * t) = pack2(o[mt][j][2 * r] * inv, o[mt][j][2 * r + 1] * inv);
            if (write_lse && t == 0 && qi < sq)
                LSE[lse_row(sv, h, qi, heads_q, seq_q, total_q)] = softmax_lse(lse_m, lse_l);
#else
            if (qi < sq) {
                const long ob = q_row_offset(sv, h, qi, o_sb, o_ss, o_sh);
UNROLL
                for (int j = 0; j < DT; ++j) {
                    STORE(O, ob + j * 8 + 2 * t, o[mt][j][2 * r] * inv);
                    STORE(O, ob + j * 8 + 2 * t + 1, o[mt][j][2 * r + 1] * inv);
                }
                if (write_lse && t == 0)
                    LSE[lse_row(sv, h, qi, heads_q, seq_q, total_q)] = softmax_lse(lse_m, lse_l);
            }
#endif
        }
#if O_STAGED
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int idx = tid; idx < BLOCK_M * CPR_V; idx += WG_SIZE) {
        const int r = idx / CPR_V, c = (idx - r * CPR_V) * CE;
        if (m0 + r < sq)
            *(__global uint4 *)(O + q_row_offset(sv, h, m0 + r, o_sb, o_ss, o_sh) + c) = *(__local const uint4 *)(o_s + AT_V(r, c));
    }
#endif
}
