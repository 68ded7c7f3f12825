/* SPDX-License-Identifier: MIT */
/*
 * flash_decode_mma.cl: the decode kernel on NVIDIA's matrix units (mma.sync.m16n8k16, fp16 or bf16
 * K/V, fp32 accumulators). K and V go from global memory straight into registers that already are the
 * matrix instructions' fragments: no local memory, no barrier, no conversion, no shuffle per key.
 *
 * A work-group is WARPS warps and owns (batch, KV head, key split) and up to ROWS <= 8 packed query
 * rows of that KV head, as flash_decode.cl (decode.cl: the key range and the merge). Each warp takes
 * its own TK = 16*TILES keys of every step of WARPS*TK keys and keeps its own softmax state; the warps'
 * states are merged once at the end. With g = lane/4 and t = lane%4 (mma.cl lists the fragments):
 *
 * S = Q K^T, one m16n8k16 per 8 keys and 16 elements of the head dimension: A is Q (rows g; rows g+8
 * are zeros), B is K^T, whose fragment b0 (b1) is two consecutive elements of key g's row. A dot product
 * does not depend on the order of the head dimension's elements, so each lane loads key g's row in
 * 16-byte pieces at elements 8(t + 4v) (v < HEAD_DIM/32) and uses piece v's four registers as the
 * B fragments of k-steps 2v and 2v+1; Q's row is loaded the same way into A. C gives lane (g, t) row
 * g's scores of keys 2t and 2t+1 of each 8: the row's maximum is over the 4 lanes of the row (two
 * shuffles a step), each score's exp2 is computed once, and the sum stays per lane until the end.
 *
 * O^T += V^T P^T, one m16n8k16 per 16 elements of the head dimension and 16 keys: B is P^T, whose
 * fragments (P[g][2t..2t+1], P[g][2t+8..2t+9]) are exactly the pairs of S's C that lane (g, t) holds,
 * packed to 16 bits; A is V^T (rows: elements, columns: keys). Lane (g, t) loads keys 2t, 2t+1, 2t+8,
 * 2t+9 of V in 16-byte pieces at elements 8(g + 8u) (u < HEAD_DIM/64) and pairs the 16-bit halves of
 * two keys into A's registers (a byte permute: element 2q of piece u is row g of m-tile 4u+q, element
 * 2q+1 its row g+8). O^T's C holds, per lane, elements 8(g+8u)+2q and +1 of rows 2t and 2t+1; the
 * rescale of a row by its running maximum takes the factor from the row's lanes (two shuffles a step).
 *
 * A quantized cache (KV_FORMAT, common.cl): each lane loads 8 bytes where it loaded 16, the same 8
 * elements, and turns each pair of bytes into a pair of Q's 16-bit values where the instructions use
 * them (kv_pair); int8's K scale multiplies the scores, its V scale the weights P before they are packed.
 *
 * All loads of a step are issued before any is used, TILES tiles of 16 keys a warp. Semantics as
 * flash_decode.cl (the cache's filled length, paged caches, window and causal mask, softcap, ALiBi,
 * key padding, GQA, LSE, NaN rows, rows without a key). FCL_PTX=0 emulates the warp instructions
 * (mma.cl) so that CI tests this kernel on PoCL and rusticl; every loop's trip count is the same in
 * every warp, so the emulation's barriers are reached by the whole work-group. Its design, and the
 * measurements behind its choices: docs/design/decode_mma.md.
 *
 * Local memory (floats; src/tiles.c's formula must match): WARPS*ROWS*(HEAD_DIM+2) for the merge, and
 * emulated WARPS*32*8 uints of exchange area.
 */
/* KV_BULK (a variant to measure, off unless a build option sets it: docs/design/decode_mma.md, decode-mma-35):
 * each warp's K and V rows of a step copied into local memory by the copy engine (cp.async.bulk, one row a
 * lane: lanes 0-15 K's 16 keys, 16-31 V's), two steps ahead, counted by the warp's own mbarrier; the fragments
 * then read from local memory as they were from global memory. One tile a warp and step; 16-bit caches whose
 * rows start at 16-byte multiples, head dims up to 128. On NVIDIA the program must be finished for sm_90a
 * (-DFCL_SM90A=1); FCL_PTX=0 copies the rows by plain loads between work-group barriers (the emulation). Its
 * stages (WARPS * 2 * BULK_STAGE uint4s, and the barriers) are not in src/tiles.c's formula: a measurement, not
 * a choice of the host's. */
#ifndef KV_BULK
#define KV_BULK 0
#endif
#if KV_BULK
#undef TILES
#define TILES 1
#elif defined(TILES_OVERRIDE) /* (a variant's tile count, measurement only: OpenCL's build options cannot undefine) */
#undef TILES
#define TILES TILES_OVERRIDE
#endif
#if !defined(HEAD_DIM) || !defined(ROWS) || !defined(WARPS) || !defined(TILES)
#error "flash_decode_mma.cl needs HEAD_DIM, ROWS, WARPS and TILES"
#endif
#if (HEAD_DIM % 64) != 0 || HEAD_DIM > 256 || ROWS < 1 || ROWS > 8 || TILES < 1 || TILES > 4
#error "flash_decode_mma.cl takes head dims that are multiples of 64 up to 256, 1 to 8 rows, 1 to 4 tiles"
#endif
#if !defined(FLASHCL_DTYPE_F16) && !defined(FLASHCL_DTYPE_BF16)
#error "flash_decode_mma.cl needs fp16 or bf16 storage"
#endif
#if VARLEN || HAS_MASK || (PAGE_SIZE % 16) != 0
#error "flash_decode_mma.cl takes no packed sequences or additive mask, and pages of a multiple of 16 keys"
#endif
#ifndef ROWS_ALIGNED /* every Q, K and V row starts at a multiple of 8 elements: 16-byte loads */
#define ROWS_ALIGNED 0
#endif
/* How an int8 cache's fp16 scales are loaded, a variant to measure (docs/design/decode_mma.md,
 * decode-mma-10): 0 as decode-mma-9 left them; 1 after a compiler barrier that keeps them behind the
 * step's K and V loads; 2 so, and raw (16 bits a scale), converted where the products use them. */
#ifndef SCALE_LOADS
#define SCALE_LOADS 0
#endif
/* SCALE_SHFL (docs/design/decode_mma.md, decode-mma-21): an int8 cache's scales loaded once a key, lane L
 * taking the step's key k0 + L, and passed to the lanes whose scores and weights use them by shuffles (each
 * scale is needed by the 8 lanes of one t, which otherwise each load it); up to 32 keys a warp step (two
 * tiles). 1, the default for fp16 scales, measured 2-6% faster there on the H100; fp32 scales ran 10%
 * slower so, for a reason not yet found, and keep their loads. 2 (a variant to measure): V's scales
 * shuffled, K's loaded by each lane as without it. */
#ifndef SCALE_SHFL
#define SCALE_SHFL (KV_FORMAT == 1 && KV_SCALE_F16 && TILES <= 2 && !SCALE_LOADS)
#endif
#if SCALE_SHFL && KV_FORMAT == 1 && (TILES > 2 || SCALE_LOADS)
#error "SCALE_SHFL: up to two tiles a warp step, not with SCALE_LOADS"
#endif
#if SCALE_SHFL < 0 || SCALE_SHFL > 2
#error "SCALE_SHFL: 0, 1 (both scales shuffled) or 2 (V's)"
#endif
/* KV_PREFETCH (a variant to measure, off unless a build option sets it: docs/design/decode_mma.md,
 * decode-mma-11): a step's K loads issued during the step before, once its S no longer needs kr (no more
 * registers: kr is reused), so that they land while that step's softmax and P * V run; V's at the step's
 * start, during its S. */
#ifndef KV_PREFETCH
#define KV_PREFETCH 0
#endif
/* DEC_ABLATE (measurement only, wrong results: docs/design/decode_mma.md, decode-mma-15): bit 1 leaves out
 * the fused merge's reads and stores (the last split still counts itself), 2 the count as well (no fence,
 * no atomic), 4 the key loop (Q's loads, the partial rows' stores and the merge stay; rows without keys,
 * so the merge reads no partial); for a byte cache, 8 its bytes' conversion to Q's type (an add a pair in
 * its place), 16 an int8 cache's scales (their loads and products); 32 issues each step's products twice
 * (S's and P * V's, on the same registers: the scores and O doubled), the loads and their order unchanged,
 * to price the products on a step's path (decode-mma-30). 0 compiles none of it. */
#ifndef DEC_ABLATE
#define DEC_ABLATE 0
#endif
#if KV_BULK && (KV_FORMAT || !ROWS_ALIGNED || HEAD_DIM > 128 || KV_PREFETCH || (DEC_ABLATE & 4))
#error "KV_BULK: 16-bit caches with rows at 16-byte multiples, head dims up to 128, no KV_PREFETCH or DEC_ABLATE 4"
#endif
#if KV_BULK && FCL_PTX && !(defined(FCL_SM90A) && FCL_SM90A)
#error "KV_BULK on NVIDIA: the program finished for sm_90a (-DFCL_SM90A=1)"
#endif

#define WG_SIZE (32 * WARPS)
#define TK (16 * TILES)      /* keys a warp takes a step */
#define STEP (WARPS * TK)    /* keys the work-group takes a step */
/* A split's share of the keys is a multiple of SPLIT_ROUND (decode.cl): four warps' keys at most, so that
 * eight warps split a cache as finely as four did (decode-mma-29); a multiple of TK keeps each warp's
 * first key where a page holds its tiles. */
#ifndef SPLIT_ROUND
#define SPLIT_ROUND (WARPS > 4 ? 4 * TK : STEP)
#endif
#if SPLIT_ROUND % TK
#error "SPLIT_ROUND: a multiple of a warp's keys a step"
#endif
#define KS (HEAD_DIM / 16)   /* k16 steps of S, m16 tiles of O^T */
#define KVEC (HEAD_DIM / 32) /* 16-byte pieces of a K row a lane loads */
#define VVEC (HEAD_DIM / 64) /* 16-byte pieces of a V row a lane loads */

/* 16 bytes (8 elements) of a row, as four registers. */
#if ROWS_ALIGNED
#define LOAD16(p, i) (*(__global const uint4 *)((p) + (i)))
#else
#define LOAD16(p, i) as_uint4(vload8(0, (p) + (i)))
#endif
#define SPLAT4(r, x) ((r)[0] = (x).s0, (r)[1] = (x).s1, (r)[2] = (x).s2, (r)[3] = (x).s3)

/* K and V: 16-bit elements as they are, or a quantized cache's bytes (common.cl), loaded 8 bytes (8
 * elements, the same elements as 16 bytes of a 16-bit cache) at a time and turned into the pairs of
 * 16-bit values of Q's type where the matrix instructions use them: PAIR(w, idx) is pair idx (elements
 * 2idx, 2idx+1) of the piece whose words are w. */
#if KV_FORMAT
#define KV_P uchar
#if ROWS_ALIGNED
#define LOAD_KV(p, i) (*(__global const uint2 *)((p) + (i)))
#else
#define LOAD_KV(p, i) as_uint2(vload8(0, (p) + (i)))
#endif
#define KV_WORDS 2 /* registers a lane keeps per 8-element piece */
#define KV_VEC uint2
#define SPLAT_KV(r, x) ((r)[0] = (x).s0, (r)[1] = (x).s1)

/* FCL_SM: the NVIDIA device's compute capability x 10 (the program builder's define; 0 elsewhere).
 * FP8_CVT: the fp8 pair conversions of sm_89 and later. */
#ifndef FCL_SM
#define FCL_SM 0
#endif
#define FP8_CVT (FCL_PTX && FCL_SM >= 89)

#if FCL_PTX
/* The bytes of a and b that `sel` names (PTX prmt: one instruction). */
inline uint byte_perm(const uint a, const uint b, const uint sel)
{
    uint r;
    __asm__("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(sel));
    return r;
}
#endif

/* Bytes 2hi and 2hi+1 of w as a pair of Q's 16-bit type. */
inline uint kv_pair(const uint w, const int hi)
{
#if defined(FLASHCL_DTYPE_F16) && KV_FORMAT == 3
    /* an E5M2 byte is the upper byte of a half */
    return hi ? ((w >> 8) & 0xff00u) | (w & 0xff000000u) : ((w & 0xffu) << 8) | ((w & 0xff00u) << 16);
#elif defined(FLASHCL_DTYPE_F16) && KV_FORMAT == 1 && FCL_PTX
    /* with the sign bits flipped a byte is q + 128; under 0x64 it makes the half 1024 + q + 128, and
     * minus 1152 leaves q exactly: a byte permute and a subtract a pair */
    const uint h = byte_perm(w ^ 0x80808080u, 0x64646464u, hi ? 0x7362u : 0x5140u);
    uint r;
    __asm__("sub.f16x2 %0, %1, %2;" : "=r"(r) : "r"(h), "r"(0x64806480u));
    return r;
#elif defined(FLASHCL_DTYPE_F16) && KV_FORMAT == 2 && FP8_CVT
    /* sm_89 and later convert a pair of E4M3 bytes (the low byte to the low half) in one instruction,
     * exactly, NaN included */
    uint r;
    if (hi)
        __asm__("{\n.reg .b16 lo, hi;\nmov.b32 {lo, hi}, %1;\ncvt.rn.f16x2.e4m3x2 %0, hi;\n}" : "=r"(r) : "r"(w));
    else
        __asm__("{\n.reg .b16 lo, hi;\nmov.b32 {lo, hi}, %1;\ncvt.rn.f16x2.e4m3x2 %0, lo;\n}" : "=r"(r) : "r"(w));
    return r;
#elif defined(FLASHCL_DTYPE_F16) && KV_FORMAT == 2 && FCL_PTX
    /* An E4M3 magnitude's 7 bits placed as a half's exponent and mantissa give the value times 2^-8
     * (normal and subnormal alike); times 256 (exact), then the sign. S.1111.111 is NaN. */
    const uint x = byte_perm(w, 0u, hi ? 0x4342u : 0x4140u); /* the two bytes in the halves' low bytes */
    uint r;
    __asm__("mul.f16x2 %0, %1, %2;" : "=r"(r) : "r"((x & 0x007f007fu) << 7), "r"(0x5c005c00u));
    r |= (x & 0x00800080u) << 8;
    if (((x & 0x007f007fu) + 0x00010001u) & 0x00800080u) { /* a NaN byte (rare): its half NaN */
        r = (x & 0x7fu) == 0x7fu ? (r & 0xffff0000u) | 0x7e00u : r;
        r = (x & 0x7f0000u) == 0x7f0000u ? (r & 0xffffu) | 0x7e000000u : r;
    }
    return r;
#else
    const uint b = hi ? w >> 16 : w; /* exact through floats: every value fits the type */
    return pack2(kv_byte(b & 0xffu), kv_byte((b >> 8) & 0xffu));
#endif
}
#if DEC_ABLATE & 8 /* (the conversion left out: a word's bytes taken as they are, one add a pair) */
#define PAIR(w, idx) ((w)[(idx) >> 1] + ((idx)&1))
#else
#define PAIR(w, idx) kv_pair((w)[(idx) >> 1], (idx) & 1)
#endif
#else
#define KV_P ushort
#define LOAD_KV(p, i) LOAD16(p, i)
#define KV_WORDS 4
#define KV_VEC uint4
#define SPLAT_KV(r, x) SPLAT4(r, x)
#define PAIR(w, idx) ((w)[(idx)])
#endif

#if KV_BULK
/* A warp's stage: its step's 16 K rows, then 16 V rows, as uint4s. The strides keep a fragment's 16-byte reads
 * free of bank conflicts (a read is served eight lanes at a time: lanes 8p..8p+7, g = 2p and 2p+1, t = 0-3): K's
 * lanes read rows g and g+1 at 16t (+64v) bytes, and a stride of 64 mod 128 bytes puts the four pieces of two
 * rows in eight distinct 16-byte bank groups; V's read rows 2t (+1, +8) at 16g (+128u), where 16 mod 128 does
 * (64 would put two rows 2 apart in one group). */
#define BULK_ROW_B (2 * HEAD_DIM)                  /* a row's bytes */
#define BULK_KST (BULK_ROW_B / 16 + 4)             /* K's row stride, uint4s (64 B past the row) */
#define BULK_VST (BULK_ROW_B / 16 + 1)             /* V's (16 B past it) */
#define BULK_STAGE (16 * BULK_KST + 16 * BULK_VST) /* uint4s a warp's stage */
#if FCL_PTX
/* (mma.cl: LADDR, mbar_init and mbar_wait) */
#define MBAR_INIT_FENCE() __asm__ volatile("//SM90A fence.mbarrier_init.release.cluster;" ::: "memory")
/* The barrier's one arrival, with the bytes the phase's copies will bring */
inline void mbar_expect(__local ulong *b, const uint bytes)
{
    __asm__ volatile("{\n//SM90A .reg .b64 st;\n//SM90A mbarrier.arrive.expect_tx.shared.b64 st, [%0], %1;\n}" ::"r"(
                         LADDR(b)),
                     "r"(bytes)
                     : "memory");
}
/* One row by the copy engine: BULK_ROW_B bytes from src (16-byte aligned) to dst, counted on barrier b */
inline void bulk_row(__local uint4 *dst, __global const ushort *src, __local ulong *b)
{
    __asm__ volatile("//SM90A cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                     ::"r"(LADDR(dst)), "l"((ulong)(size_t)src), "r"((uint)BULK_ROW_B), "r"(LADDR(b))
                     : "memory");
}
#define BULK_WARP_SYNC() __asm__ volatile("bar.warp.sync -1;" ::: "memory")
/* This warp's reads of a stage before the copy engine writes it again */
#define BULK_RELEASE() __asm__ volatile("//SM90A fence.proxy.async.shared::cta;\nbar.warp.sync -1;" ::: "memory")
#else
inline void bulk_row(__local uint4 *dst, __global const ushort *src, __local ulong *b)
{
    (void)b;
    UNROLL
    for (int c = 0; c < BULK_ROW_B / 16; ++c)
        dst[c] = ((__global const uint4 *)src)[c];
}
#define BULK_RELEASE() barrier(CLK_LOCAL_MEM_FENCE)
#endif
#endif

/* (cl/args.h's FCL_FLASH_DECODE_ARGS: Q as 16-bit words, K and V in the packed view of the cache) */
#define DECODE_Q_T ushort
#define DECODE_KV_T KV_P
__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void
flash_decode_mma(FCL_SIGNATURE(FCL_FLASH_DECODE_ARGS))
{
    FCL_UNPACK();
    DECODE_APPLY_OFFSETS(); /* the caller's offsets into its buffers, in elements */
    __local float merge[FCL_DECODE_MMA_MERGE_FLOATS(HEAD_DIM, ROWS, WARPS)]; /* (cl/layout.h) */
#if !FCL_PTX
    __local uint xchg[FCL_DECODE_MMA_XCHG_UINTS(WARPS)];
#endif
#if KV_BULK
    __local uint4 bulk_stage[WARPS * 2 * BULK_STAGE]; /* (two stages a warp) */
    __local ulong bulk_bar[WARPS * 2];                /* (a barrier a stage; the emulation's unused) */
#endif
#ifdef FLASHCL_DEBUG_SCALE
    const float scale2 = scale_log2 * FLASHCL_DEBUG_SCALE; /* fault injection for the validation tests */
#else
    const float scale2 = scale_log2;
#endif
    const int tid = get_local_id(0), warp = tid >> 5, lane = tid & 31;
    const int g = lane >> 2, t = lane & 3;
#if !FCL_PTX
    __local uint *const xw = xchg + warp * 32 * 8;
#endif
    const decode_group wg = decode_group_of(ROWS, heads_q, group, n_splits, seq_q, seq_kv, CACHE_LENS, BATCH_IDX, LEFT_PAD,
                                            cache_batch, k_sb, k_ss, k_sh,
                                            v_sb, v_ss, v_sh);
    const int split = wg.split, b = wg.b, hk = wg.hk, heads_kv = wg.heads_kv, pr0 = wg.pr0;
    const seq_view sv = wg.sv;
    const int sq = sv.sq, skv = sv.skv;
    const long k_base = wg.k_base, v_base = wg.v_base;

    /* Row g of the block is this lane's row of the softmax (rows past ROWS or the step's queries: zeros). */
    const int my_pr = pr0 + g, my_qi = my_pr / group;
    const bool my_row = g < ROWS && my_qi < sq;
    uint qa[KS][2]; /* A fragments of Q (the zero rows g+8 are constants) */
    {
        const long qo = my_row ? q_row_offset(sv, hk * group + my_pr % group, my_qi, q_sb, q_ss, q_sh) : 0;
        UNROLL
        for (int v = 0; v < KVEC; ++v) {
            const uint4 x = my_row ? LOAD16(Q, qo + 8 * (t + 4 * v)) : (uint4)(0);
            qa[2 * v][0] = x.s0;
            qa[2 * v][1] = x.s1;
            qa[2 * v + 1][0] = x.s2;
            qa[2 * v + 1][1] = x.s3;
        }
    }
    const score_row mods =
        score_row_of(LOG2E_F, softcap_log2, ALIBI, alibi_per_batch, (__global const MASK_T *)KPM, 0, 0, 0, KPM, seq_kv,
                     heads_q, b, my_qi, hk * group + my_pr % group, (int)ALIGNED_POS(my_qi, sq, skv), true);
#if HAS_WINDOW
    key_range vis = visible_keys(my_qi, sq, skv, win_left, win_right);
#endif

    const decode_keys keys =
        decode_key_range(pr0, ROWS, group, sq, skv, split, n_splits, SPLIT_ROUND, win_left, win_right);
#if HAS_WINDOW
    vis.hi = min(vis.hi, keys.end);
#endif

    float o[KS][4]; /* O^T's C fragments: elements 8(g+8u)+2q (+1) of rows 2t, 2t+1; tile 4u+q */
    UNROLL
    for (int i = 0; i < KS; ++i)
        o[i][0] = o[i][1] = o[i][2] = o[i][3] = 0.0f;
    float m_run = -INFINITY, l_run = 0.0f; /* row g's running maximum; this lane's part of its sum */

    /* (lane (g, t)'s loads of a step's K at keys from k0_ into kr, through tile rows kt_; its V into vr) */
#define LOAD_K_STEP(k0_, kt_)                                                                                  \
    do {                                                                                                       \
        UNROLL                                                                                                 \
        for (int i = 0; i < TILES; ++i) {                                                                      \
            UNROLL                                                                                             \
            for (int j = 0; j < 2; ++j) {                                                                      \
                const int key = (k0_) + 16 * i + 8 * j + g;                                                    \
                const bool ok = key < keys.end;                                                                \
                UNROLL                                                                                         \
                for (int v = 0; v < KVEC; ++v) {                                                               \
                    const KV_VEC x = ok ? LOAD_KV(K, (kt_)[i] + (long)key * k_ss + 8 * (t + 4 * v)) : (KV_VEC)(0); \
                    SPLAT_KV(kr[i][j] + KV_WORDS * v, x); /* (a macro: its argument once, as a variable) */   \
                }                                                                                              \
            }                                                                                                  \
        }                                                                                                      \
    } while (0)
#define LOAD_V_STEP(k0_, vt_)                                                                                  \
    do {                                                                                                       \
        UNROLL                                                                                                 \
        for (int i = 0; i < TILES; ++i) {                                                                      \
            UNROLL                                                                                             \
            for (int e = 0; e < 4; ++e) {                                                                      \
                const int key = (k0_) + 16 * i + 2 * t + (e & 1) + 8 * (e >> 1);                               \
                const bool ok = key < keys.end;                                                                \
                UNROLL                                                                                         \
                for (int u = 0; u < VVEC; ++u) {                                                               \
                    const KV_VEC x = ok ? LOAD_KV(V, (vt_)[i] + (long)key * v_ss + 8 * (g + 8 * u)) : (KV_VEC)(0); \
                    SPLAT_KV(vr[i][e] + KV_WORDS * u, x);                                                      \
                }                                                                                              \
            }                                                                                                  \
        }                                                                                                      \
    } while (0)
    /* Each 16-key tile's rows from its page (K's in kt_, V's in vt_, for the warp's keys from k0_): tiles
     * start at multiples of 16, and a page holds whole tiles; one block-table lookup a step where a page
     * holds the warp's TK keys. */
#if PAGE_SIZE
/* (a key of tile i's page, for the warp's keys from k0_: its first step's where a page holds them all) */
#define TILE_PAGE_KEY(k0_, i) min((k0_) + ((PAGE_SIZE % TK) == 0 ? 0 : 16 * (i)), max(skv - 1, 0))
#define KV_TILES(k0_, kt_, vt_)                                                                                \
    do {                                                                                                       \
        UNROLL                                                                                                 \
        for (int i = 0; i < TILES; ++i) {                                                                      \
            const int kc = TILE_PAGE_KEY(k0_, i);                                                              \
            (kt_)[i] = k_base + kv_row(b, kc, k_ss, k_sb, BT, max_pages, num_pages) - (long)kc * k_ss;        \
            (vt_)[i] = v_base + kv_row(b, kc, v_ss, v_sb, BT, max_pages, num_pages) - (long)kc * v_ss;        \
        }                                                                                                      \
    } while (0)
#else
#define KV_TILES(k0_, kt_, vt_)                                                                                \
    do {                                                                                                       \
        UNROLL                                                                                                 \
        for (int i = 0; i < TILES; ++i) {                                                                      \
            (kt_)[i] = k_base;                                                                                 \
            (vt_)[i] = v_base;                                                                                 \
        }                                                                                                      \
    } while (0)
#endif
#if KV_FORMAT == 1
    /* An int8 cache's scales (one per row and KV head) as the tiles' rows: s_tile_[i] + key * heads_kv, for the
     * warp's keys from k0_; s_key_[i]: a key whose scale s_tile_[i] addresses (the tile's page's, or key 0) */
#if PAGE_SIZE
#define SCALE_TILES(k0_, s_tile_, s_key_)                                                                      \
    do {                                                                                                       \
        UNROLL                                                                                                 \
        for (int i = 0; i < TILES; ++i) {                                                                      \
            const int kc = TILE_PAGE_KEY(k0_, i);                                                              \
            (s_tile_)[i] = kv_scale_index(b, kc, hk, heads_kv, seq_kv, BT, max_pages, num_pages) - (long)kc * heads_kv; \
            (s_key_)[i] = kc;                                                                                  \
        }                                                                                                      \
    } while (0)
#else
#define SCALE_TILES(k0_, s_tile_, s_key_)                                                                      \
    do {                                                                                                       \
        UNROLL                                                                                                 \
        for (int i = 0; i < TILES; ++i) {                                                                      \
            (s_tile_)[i] = kv_scale_index(b, 0, hk, heads_kv, seq_kv, BT, max_pages, num_pages);              \
            (s_key_)[i] = 0;                                                                                   \
        }                                                                                                      \
    } while (0)
#endif
#endif
    uint kr[TILES][2][KVEC * KV_WORDS], vr[TILES][4][VVEC * KV_WORDS]; /* (K: keys k0+16i+8j+g; V: keys
                                                                         * k0+16i+{2t, 2t+1, 2t+8, 2t+9}) */
#if KV_PREFETCH
    if (keys.begin < keys.end) { /* (the first step's K; each step then loads the next one's after S) */
        long kt0[TILES], vt0[TILES];
        KV_TILES(keys.begin + warp * TK, kt0, vt0);
        LOAD_K_STEP(keys.begin + warp * TK, kt0);
    }
#endif
#if KV_BULK
    __local uint4 *const mine = bulk_stage + warp * 2 * BULK_STAGE;
    __local ulong *const bars = bulk_bar + warp * 2;
#if FCL_PTX
    if (lane == 0) {
        mbar_init(bars, 1);
        mbar_init(bars + 1, 1);
        MBAR_INIT_FENCE();
    }
    BULK_WARP_SYNC();
#define BULK_EXPECT(b_, n_)                                                                                    \
    do {                                                                                                       \
        if (lane == 0)                                                                                         \
            mbar_expect((b_), (uint)(n_) * (2u * BULK_ROW_B));                                                 \
        BULK_WARP_SYNC();                                                                                      \
    } while (0)
#else
#define BULK_EXPECT(b_, n_) ((void)0)
#endif
    /* The warp's rows of the step from key n0_ into stage s_ (none past the keys' end; nothing where no key is
     * left: that step's wait is skipped as well) */
#define BULK_ISSUE(n0_, s_)                                                                                    \
    do {                                                                                                       \
        const int k0_ = (n0_) + warp * TK, n_ = clamp(keys.end - k0_, 0, 16), r_ = lane & 15;                  \
        if (n_ > 0) {                                                                                          \
            long kt_[1], vt_[1];                                                                               \
            KV_TILES(k0_, kt_, vt_);                                                                           \
            BULK_EXPECT(bars + (s_), n_);                                                                      \
            if (r_ < n_)                                                                                       \
                bulk_row(mine + (s_)*BULK_STAGE + (lane < 16 ? r_ * BULK_KST : 16 * BULK_KST + r_ * BULK_VST), \
                         lane < 16 ? K + kt_[0] + (long)(k0_ + r_) * k_ss : V + vt_[0] + (long)(k0_ + r_) * v_ss,  \
                         bars + (s_));                                                                         \
        }                                                                                                      \
    } while (0)
    BULK_ISSUE(keys.begin, 0);
    BULK_ISSUE(keys.begin + STEP, 1);
#endif
    for (int n0 = keys.begin; n0 < ((DEC_ABLATE & 4) ? keys.begin : keys.end); n0 += STEP) {
        const int k0 = n0 + warp * TK; /* this warp's first key of the step */
#if !KV_BULK /* (its copies' rows found where they are issued) */
        long k_tile[TILES], v_tile[TILES];
        KV_TILES(k0, k_tile, v_tile);
#endif
#if KV_FORMAT == 1
        long s_tile[TILES];
        int s_key[TILES];
        SCALE_TILES(k0, s_tile, s_key);
#endif
#if KV_BULK
        { /* the step's rows landed in stage it & 1: the fragments from there, then the stage refilled two steps on */
            const int it = (n0 - keys.begin) / STEP, st_ = it & 1;
#if FCL_PTX
            if (k0 < keys.end)
                mbar_wait(bars + st_, (uint)(it >> 1) & 1u);
#else
            barrier(CLK_LOCAL_MEM_FENCE);
#endif
            __local const uint4 *const kl = mine + st_ * BULK_STAGE, *const vl = kl + 16 * BULK_KST;
            UNROLL
            for (int j = 0; j < 2; ++j) {
                const bool ok = k0 + 8 * j + g < keys.end;
                UNROLL
                for (int v = 0; v < KVEC; ++v) {
                    const uint4 x = ok ? kl[(8 * j + g) * BULK_KST + t + 4 * v] : (uint4)(0);
                    SPLAT4(kr[0][j] + 4 * v, x);
                }
            }
            UNROLL
            for (int e = 0; e < 4; ++e) {
                const int r = 2 * t + (e & 1) + 8 * (e >> 1);
                const bool ok = k0 + r < keys.end;
                UNROLL
                for (int u = 0; u < VVEC; ++u) {
                    const uint4 x = ok ? vl[r * BULK_VST + g + 8 * u] : (uint4)(0);
                    SPLAT4(vr[0][e] + 4 * u, x);
                }
            }
            BULK_RELEASE();
            BULK_ISSUE(n0 + 2 * STEP, st_);
        }
#else
        /* Every load of the step first (with KV_PREFETCH K's were issued during the step before) */
#if !KV_PREFETCH
        LOAD_K_STEP(k0, k_tile);
#endif
        LOAD_V_STEP(k0, v_tile);
#endif
#if KV_FORMAT == 1
        /* The int8 scales of this lane's keys of S: K's multiply the scores, V's the weights P. */
#if SCALE_LOADS >= 1 && FCL_PTX
        __asm__ volatile("" ::: "memory"); /* (the scale loads after the step's K and V loads: SCALE_LOADS) */
#endif
#if SCALE_LOADS == 2 && KV_SCALE_F16
        ushort ks[TILES][2][2], vs[TILES][2][2]; /* (raw: converted where used) */
#else
        float ks[TILES][2][2], vs[TILES][2][2];
#endif
#if SCALE_SHFL
        { /* this lane's key's scales (0 past the keys' end), then each lane's from their keys' lanes (2: V's
           * only, K's loaded below) */
#if SCALE_SHFL == 1
            float k_own = 0.0f, v_own = 0.0f;
#else
            float v_own = 0.0f;
#endif
            if (lane < 16 * TILES) {
                const int key = k0 + lane;
                const bool ok = key < keys.end;
                const long st = lane < 16 ? s_tile[0] : s_tile[TILES - 1];
#if KV_SCALE_F16 /* (loaded whatever ok is, as below) */
                const long si = st + (long)(ok ? key : (lane < 16 ? s_key[0] : s_key[TILES - 1])) * heads_kv;
#if SCALE_SHFL == 1
                const float k_scale = LOAD_SCALE(K_SCALE, si), v_scale = LOAD_SCALE(V_SCALE, si);
                k_own = ok ? k_scale : 0.0f;
#else
                const float v_scale = LOAD_SCALE(V_SCALE, si);
#endif
                v_own = ok ? v_scale : 0.0f;
#else
                const long si = st + (long)key * heads_kv;
                if (ok) {
#if SCALE_SHFL == 1
                    k_own = LOAD_SCALE(K_SCALE, si);
#endif
                    v_own = LOAD_SCALE(V_SCALE, si);
                }
#endif
            }
            UNROLL
            for (int i = 0; i < TILES; ++i) {
                UNROLL
                for (int j = 0; j < 2; ++j) {
                    UNROLL
                    for (int cc = 0; cc < 2; ++cc) {
#if SCALE_SHFL == 1
                        ks[i][j][cc] = SHFL_IDX(k_own, 16 * i + 8 * j + 2 * t + cc);
#endif
                        vs[i][j][cc] = SHFL_IDX(v_own, 16 * i + 8 * j + 2 * t + cc);
                    }
                }
            }
        }
#endif
#if SCALE_SHFL != 1
        UNROLL
        for (int i = 0; i < TILES; ++i) {
            UNROLL
            for (int j = 0; j < 2; ++j) {
                UNROLL
                for (int cc = 0; cc < 2; ++cc) {
                    const int key = k0 + 16 * i + 8 * j + 2 * t + cc;
                    const bool ok = key < keys.end;
#if KV_SCALE_F16
                    /* fp16 scales loaded whatever ok is, a key past the end reading its tile's first row (or
                     * key 0): under a condition NVIDIA's compiler branched around each pair and converted it
                     * inside the branch, waiting out each load in turn (1.00 ms a step at batch 8 x 131072,
                     * 0.85 so). fp32 scales measured slower so (0.70 -> 0.86 ms) and keep the condition
                     * (docs/design/decode_mma.md, decode-mma-9). */
                    const long si = s_tile[i] + (long)(ok ? key : s_key[i]) * heads_kv;
#if SCALE_LOADS == 2
                    ks[i][j][cc] = ((__global const ushort *)K_SCALE)[si];
                    vs[i][j][cc] = ((__global const ushort *)V_SCALE)[si];
#else
                    const float k_scale = LOAD_SCALE(K_SCALE, si);
                    ks[i][j][cc] = ok ? k_scale : 0.0f;
#if !SCALE_SHFL
                    const float v_scale = LOAD_SCALE(V_SCALE, si);
                    vs[i][j][cc] = ok ? v_scale : 0.0f;
#endif
#endif
#else
                    const long si = s_tile[i] + (long)key * heads_kv;
                    ks[i][j][cc] = ok ? LOAD_SCALE(K_SCALE, si) : 0.0f;
#if !SCALE_SHFL
                    vs[i][j][cc] = ok ? LOAD_SCALE(V_SCALE, si) : 0.0f;
#endif
#endif
                }
            }
        }
#endif
#if SCALE_LOADS == 2 && KV_SCALE_F16
        /* (a key past the end: its scale 0, as the loads' condition gave it) */
#define SCALE_OF_(raw, i, j, cc) (k0 + 16 * (i) + 8 * (j) + 2 * t + (cc) < keys.end ? half_bits_to_float(raw) : 0.0f)
#define K_SCALED(x, i, j, cc) ((x) * SCALE_OF_(ks[i][j][cc], i, j, cc))
#define V_SCALED(p, i, j, cc) ((p) * SCALE_OF_(vs[i][j][cc], i, j, cc))
#elif DEC_ABLATE & 16 /* (the scales' loads and products left out) */
#define K_SCALED(x, i, j, cc) (x)
#define V_SCALED(p, i, j, cc) (p)
#else
#define K_SCALED(x, i, j, cc) ((x) * ks[i][j][cc])
#define V_SCALED(p, i, j, cc) ((p) * vs[i][j][cc])
#endif
#else
#define K_SCALED(x, i, j, cc) (x)
#define V_SCALED(p, i, j, cc) (p)
#endif

        /* S: row g's scores of keys k0+16i+8j+2t+c, in base 2, masked. */
        float s[TILES][2][2];
        float tile_max = -INFINITY;
#if HAS_WINDOW
        const bool edge = k0 < keys.inner_lo || k0 + TK > min(keys.inner_hi, keys.end); /* a window's edge */
#endif
        UNROLL
        for (int i = 0; i < TILES; ++i) {
            UNROLL
            for (int j = 0; j < 2; ++j) {
                float c[4] = {0.0f, 0.0f, 0.0f, 0.0f};
                UNROLL
                for (int k = 0; k < KS * (1 + !!(DEC_ABLATE & 32)); ++k)
                    MMA(c, qa[k % KS][0], 0u, qa[k % KS][1], 0u, PAIR(kr[i][j], 2 * (k % KS)),
                        PAIR(kr[i][j], 2 * (k % KS) + 1));
                UNROLL
                for (int cc = 0; cc < 2; ++cc) {
                    const int key = k0 + 16 * i + 8 * j + 2 * t + cc;
                    bool visible = key < keys.end;
#if HAS_WINDOW
                    visible = visible && (!edge || (key >= vis.lo && key < vis.hi));
#endif
                    s[i][j][cc] = score_mod(mods, key, K_SCALED(c[cc] * scale2, i, j, cc), visible);
                    tile_max = max_nan(tile_max, s[i][j][cc]);
                }
            }
        }
#if KV_PREFETCH
        if (n0 + STEP < keys.end) { /* (S is done with kr: the next step's K, in flight during P * V) */
            long kt_next[TILES], vt_next[TILES];
            KV_TILES(k0 + STEP, kt_next, vt_next);
            LOAD_K_STEP(k0 + STEP, kt_next);
        }
#endif
        tile_max = max_nan(tile_max, SHFL_XOR(tile_max, 1));
        tile_max = max_nan(tile_max, SHFL_XOR(tile_max, 2));
        const float2 st = softmax_step(m_run, tile_max);
        m_run = st.x;
        /* rows 2t and 2t+1 of O^T rescaled by their own factors, held by their rows' lanes */
        const float alpha_lo = SHFL_IDX(st.y, 8 * t), alpha_hi = SHFL_IDX(st.y, 8 * t + 4);
        UNROLL
        for (int i = 0; i < KS; ++i) {
            o[i][0] *= alpha_lo;
            o[i][1] *= alpha_hi;
            o[i][2] *= alpha_lo;
            o[i][3] *= alpha_hi;
        }
        float psum = 0.0f;
        UNROLL
        for (int i = 0; i < TILES; ++i) {
            float p[2][2];
            UNROLL
            for (int j = 0; j < 2; ++j) {
                UNROLL
                for (int cc = 0; cc < 2; ++cc) {
                    p[j][cc] = softmax_weight(s[i][j][cc], st.x);
                    psum += p[j][cc];
                }
            }
            /* O^T += V^T P^T over this tile's 16 keys */
            const uint pb0 = pack2(V_SCALED(p[0][0], i, 0, 0), V_SCALED(p[0][1], i, 0, 1));
            const uint pb1 = pack2(V_SCALED(p[1][0], i, 1, 0), V_SCALED(p[1][1], i, 1, 1));
            UNROLL
            for (int mr = 0; mr < KS * (1 + !!(DEC_ABLATE & 32)); ++mr) {
                const int mt = mr % KS;
                const uint x0 = PAIR(vr[i][0], mt), x1 = PAIR(vr[i][1], mt), x2 = PAIR(vr[i][2], mt),
                           x3 = PAIR(vr[i][3], mt);
                MMA(o[mt], (x0 & 0xffffu) | (x1 << 16), (x0 >> 16) | (x1 & 0xffff0000u), (x2 & 0xffffu) | (x3 << 16),
                    (x2 >> 16) | (x3 & 0xffff0000u), pb0, pb1);
            }
        }
        l_run = l_run * st.y + psum;
    }

    /* Row g's sum over its 4 lanes; then each warp's state into the merge area, merged once. */
    l_run += SHFL_XOR(l_run, 1);
    l_run += SHFL_XOR(l_run, 2);
    __local float *const m_w = merge;                    /* [WARPS][ROWS] */
    __local float *const l_w = merge + WARPS * ROWS;     /* [WARPS][ROWS] */
    __local float *const o_w = merge + 2 * WARPS * ROWS; /* [WARPS][ROWS][HEAD_DIM] */
    if (t == 0 && g < ROWS) {
        m_w[warp * ROWS + g] = m_run;
        l_w[warp * ROWS + g] = l_run;
    }
    UNROLL
    for (int mt = 0; mt < KS; ++mt) {
        const int d = 8 * (g + 8 * (mt >> 2)) + 2 * (mt & 3);
        if (2 * t < ROWS) {
            o_w[(warp * ROWS + 2 * t) * HEAD_DIM + d] = o[mt][0];
            o_w[(warp * ROWS + 2 * t) * HEAD_DIM + d + 1] = o[mt][2];
        }
        if (2 * t + 1 < ROWS) {
            o_w[(warp * ROWS + 2 * t + 1) * HEAD_DIM + d] = o[mt][1];
            o_w[(warp * ROWS + 2 * t + 1) * HEAD_DIM + d + 1] = o[mt][3];
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    decode_merge_store(m_w, l_w, o_w, WARPS, ROWS, tid, WG_SIZE, sv, pr0, group, hk, heads_q, seq_q, split,
                       rows_total, OP, LP, O, LSE, write_lse, o_sb, o_ss, o_sh, SINKS);
#if SPLIT_KV && FUSED_MERGE && !(DEC_ABLATE & 2) /* the last split of the row block merges them (decode.cl) */
    __local int last;
#if DEC_ABLATE & 1
    (void)decode_last_split(CNT, &last, n_splits, tid);
#else
    if (decode_last_split(CNT, &last, n_splits, tid))
        decode_fused_combine(ROWS, tid, WG_SIZE, merge, FCL_DECODE_MMA_MERGE_FLOATS(HEAD_DIM, ROWS, WARPS), sv, pr0,
                             group, hk, heads_q, seq_q, n_splits, rows_total, OP, LP, O, LSE, write_lse, o_sb, o_ss,
                             o_sh, SINKS);
#endif
#endif
}
