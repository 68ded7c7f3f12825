/* SPDX-License-Identifier: MIT */
/*
 * flash_dpas.cl: the FlashAttention-2 forward kernel on Intel's matrix engines (DPAS: the extension
 * cl_intel_subgroup_matrix_multiply_accumulate, cl/dpas.cl), sub-groups of DPAS_SG work-items: 8 on
 * Xe-HPG (DG2, Arc A-series), 16 on Xe-HPC (Data Center GPU Max) and Xe2. fp16 or bf16 K and V, fp32
 * accumulation; Q and O in K's type, or Q in another, rounded to K's as it is loaded (mma.cl's Q_CONVERT),
 * with O in Q's type.
 *
 * The direct products (docs/design/mfma.md, "flash_dpas, the plan"): a sub-group owns 8 query rows and
 * computes, an SG-key chunk at a time, S = Q K^T (A: Q's 8 rows, in registers for the whole run, or in
 * local memory where they would not fit: Q_LOCAL; B: K^T, from local memory) and O += P V (A: P; B: V, from local memory). Work-item
 * n holds key n of each chunk for all 8 rows, and O's column n of each SG-column block: 8 * HEAD_DIM_V / SG
 * floats. So a row's maximum and sum are sub-group reductions (8 rows at once), and P is the next
 * product's A where S's results stand (SG 16), or two 8-key chunks interleaved (SG 8: k position 2n key n
 * of the first, 2n + 1 key n of the second; V's keys stored in that order within each 16-key group).
 *
 * Semantics as flash_mma.cl's, from the same parts: geometry.cl (packed sequences, KV caches contiguous
 * and paged, the visible keys: HAS_WINDOW), scores.cl (softcap, ALiBi, masks, key padding), softmax.cl
 * (the online softmax, sinks, a row with no visible key written as zeros with LSE -inf, a NaN score
 * poisoning its row). The host sends split-KV, decode steps and fp32 K/V elsewhere (src/kernels/dpas.c).
 *
 * FCL_INTEL_MMA=1: the extension's built-ins and cl_intel_subgroups' shuffles (a sub-group is DPAS_SG
 * consecutive work-items of a one-dimensional work-group: the host asks for that size); 0: emulated
 * through local memory, a work-group barrier a use, so that PoCL and rusticl test this kernel in CI; every
 * DPAS and DPAS_ROWS_* below is reached by the whole work-group (uniform control flow).
 *
 * Local memory (src/kernels/dpas.c's dpas_bytes must match): the tiles as the products' B operands, each
 * operand (16 k x SG columns: 8 pairs of k a column) 8 x DPAS_SG contiguous uints, pair i of column n at
 * i DPAS_SG + n, so that a sub-group reads one with a block read at a uniform address (no address a
 * work-item held across the loop: docs/design/mfma.md):
 *   kb   BLOCK_N x HEAD_DIM 16-bit elements: S's B operands, chunk j of SG keys and k step ks at
 *        (j KS + ks) 8 SG, a pair of d a uint (K's rows as they come)
 *   vb   DVP x BLOCK_N: O's, column block e and 16-key group c at (e NG + c) 8 SG, a uint two keys (the
 *        k positions 2i and 2i + 1 of the group: keys 2i, 2i + 1 on SG 16, i and 8 + i on SG 8); DVP =
 *        HEAD_DIM_V in whole SG-column blocks (the columns past it zeros)
 * and, emulated, SUBS x DPAS_XW floats of exchange area.
 */
#if !defined(HEAD_DIM) || !defined(BLOCK_N) || !defined(SUBS) || !defined(ROWS_ALIGNED) || !defined(CSPLIT) ||          \
    !defined(Q_LOCAL)
#error "flash_dpas.cl needs HEAD_DIM, BLOCK_N, SUBS, ROWS_ALIGNED, CSPLIT and Q_LOCAL from the host"
#endif
/* CSPLIT (the host's: 1 or 2): sub-groups that share a block of 8 rows, each computing S and the softmax
 * for them and 1 / CSPLIT of O's column blocks, so that a work-item holds 8 * HEAD_DIM_V / SG / CSPLIT of
 * O's floats (SIMD8 above dv=64, SIMD16 above dv=128: IGC's scratch at d=128 on acm-g10 went from 8 KiB to
 * 2 KiB, docs/design/mfma.md). */
#if (HEAD_DIM % 16) != 0 || HEAD_DIM > 256 || (HEAD_DIM_V % 16) != 0 || HEAD_DIM_V > 256 || (BLOCK_N % 16) != 0
#error "HEAD_DIM and HEAD_DIM_V must be multiples of 16 up to 256, BLOCK_N a multiple of 16"
#endif

#define BLOCK_M (8 * SUBS / CSPLIT)
#define WG_SIZE (DPAS_SG * SUBS)
#define DVP ((HEAD_DIM_V + DPAS_SG - 1) / DPAS_SG * DPAS_SG)
#define KS (HEAD_DIM / 16)    /* k steps of S = Q K^T */
#define NC (BLOCK_N / DPAS_SG) /* SG-key chunks of a tile: S's results */
#define NG (BLOCK_N / 16)     /* 16-key groups of a tile: O's k steps */
#define DB (DVP / DPAS_SG)    /* SG-column blocks of O */
#define DBH (DB / CSPLIT)     /* and those of a sub-group */
#if DB % CSPLIT
#error "CSPLIT must divide O's column blocks"
#endif
#define CPR (HEAD_DIM / 8)
#define CPR_V (HEAD_DIM_V / 8)

#if FCL_INTEL_MMA /* (mma.cl's UNROLL is for NVIDIA's kernels; the emulation is not unrolled) */
#undef UNROLL
#define UNROLL _Pragma("unroll")
/* the sub-group size the instruction's layout is for, asked of the compiler */
#define DPAS_SUB_GROUP_ATTR __attribute__((intel_reqd_sub_group_size(DPAS_SG)))
#else
#define DPAS_SUB_GROUP_ATTR
#endif

#define ACC(v, t) (((float *)&(v))[t])

/* A float as its 16-bit operand (K's type), rounded to nearest even */
inline uint dpas_bits(const float x)
{
#if FCL_INTEL_MMA && !MMA_BF16
    return (uint)as_ushort(convert_half_rte(x));
#else
    return pack2(x, 0.0f) & 0xffffu;
#endif
}

/* One of Q's elements at p as 16 bits of K's type, the sign flipped by `sign` */
inline uint q_bits(__global const MMA_Q_T *p, const uint sign)
{
#if Q_CONVERT
    return (dpas_bits(LOAD(p, 0)) ^ sign) & 0xffffu;
#else
    return ((uint)p[0] ^ sign) & 0xffffu;
#endif
}

/* A B operand from local memory (8 x DPAS_SG uints at p, uniform over the sub-group): work-item n's pair i
 * at i DPAS_SG + n. On the hardware a sub-group block read (cl_intel_subgroup_local_block_io: one message,
 * one address for the sub-group); emulated, the same elements one by one. */
#if FCL_INTEL_MMA
#define LOCAL_B(p) as_int8(intel_sub_group_block_read8((__local const uint *)(p)))
#else
inline int8 local_b_emu(__local const uint *p, const int lane)
{
    int8 r;
    for (int i = 0; i < 8; ++i)
        ((int *)&r)[i] = (int)p[i * DPAS_SG + lane];
    return r;
}
#define LOCAL_B(p) local_b_emu((p), lane)
#endif

/* Q's A operand of k step ks: in registers, or (Q_LOCAL) a sub-group block read of the 8 x 16 elements
 * row-major at qs + 128 ks (SG 16: work-item n's element m at 16 m + n; SG 8: its pair m at 8 m + n) */
#if !Q_LOCAL
#define Q_A(ks) qa[ks]
#elif FCL_INTEL_MMA && DPAS_SG == 8
#define Q_A(ks) as_int8(intel_sub_group_block_read8((__local const uint *)(qs + 128 * (ks))))
#elif FCL_INTEL_MMA
#define Q_A(ks) as_short8(intel_sub_group_block_read_us8(qs + 128 * (ks)))
#else
inline DPAS_A q_a_emu(__local const ushort *p, const int lane)
{
    DPAS_A r;
    for (int m = 0; m < 8; ++m)
#if DPAS_SG == 8
        ((int *)&r)[m] = (int)((__local const uint *)p)[8 * m + lane];
#else
        ((short *)&r)[m] = (short)p[16 * m + lane];
#endif
    return r;
}
#define Q_A(ks) q_a_emu(qs + 128 * (ks), lane)
#endif

/* The keys of O's k position pair u of a tile (16-key group u / 8, pair u % 8): 2u and 2u + 1 on SG 16;
 * on SG 8, where P's k position 2n holds key n of a group and 2n + 1 key 8 + n, 16 (u / 8) + u % 8 and 8
 * after it */
#if DPAS_SG == 8
#define PAIR_KEY0(u) (((u) & ~7) * 2 + ((u)&7))
#define PAIR_STEP 8
#else
#define PAIR_KEY0(u) (2 * (u))
#define PAIR_STEP 1
#endif

/* The sub-group's reductions of flash_dpas's eight rows (a work-item holds one key of each row: a row's
 * maximum and sum are over the sub-group): each component of v reduced over the DPAS_SG work-items, the
 * maximum keeping NaN (common.cl's max_nan). On the hardware a butterfly of cl_intel_subgroups shuffles;
 * emulated through xw (8 x DPAS_SG floats; a work-group barrier, as DPAS). */
#if FCL_INTEL_MMA
#pragma OPENCL EXTENSION cl_intel_subgroups : enable
/* (whole vectors, no loop over a vector's components through a pointer: IGC kept those in scratch) */
#define DPAS_SHUFFLE_XOR8(v, s)                                                                                \
    ((float8)(intel_sub_group_shuffle_xor((v).s0, (s)), intel_sub_group_shuffle_xor((v).s1, (s)),             \
              intel_sub_group_shuffle_xor((v).s2, (s)), intel_sub_group_shuffle_xor((v).s3, (s)),             \
              intel_sub_group_shuffle_xor((v).s4, (s)), intel_sub_group_shuffle_xor((v).s5, (s)),             \
              intel_sub_group_shuffle_xor((v).s6, (s)), intel_sub_group_shuffle_xor((v).s7, (s))))
inline float8 max_nan8(const float8 a, const float8 b)
{
    return select(fmax(a, b), (float8)(NAN), isnan(a) | isnan(b));
}
inline float8 dpas_rows_max(float8 v)
{
    UNROLL
    for (int step = DPAS_SG / 2; step > 0; step >>= 1)
        v = max_nan8(v, DPAS_SHUFFLE_XOR8(v, (uint)step));
    return v;
}
inline float8 dpas_rows_sum(float8 v)
{
    UNROLL
    for (int step = DPAS_SG / 2; step > 0; step >>= 1)
        v += DPAS_SHUFFLE_XOR8(v, (uint)step);
    return v;
}
#define DPAS_ROWS_MAX(v) dpas_rows_max(v)
#define DPAS_ROWS_SUM(v) dpas_rows_sum(v)
#else
inline float8 dpas_rows_emu(float8 v, const int sum, __local float *xw, const int lane)
{
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int m = 0; m < 8; ++m)
        xw[8 * lane + m] = ((float *)&v)[m];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int m = 0; m < 8; ++m) {
        float r = xw[m];
        for (int l = 1; l < DPAS_SG; ++l)
            r = sum ? r + xw[8 * l + m] : max_nan(r, xw[8 * l + m]);
        ((float *)&v)[m] = r;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    return v;
}
#define DPAS_ROWS_MAX(v) dpas_rows_emu((v), 0, xw, lane)
#define DPAS_ROWS_SUM(v) dpas_rows_emu((v), 1, xw, lane)
#endif

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) DPAS_SUB_GROUP_ATTR void
flash_dpas(FCL_SIGNATURE(FCL_FLASH_MMA_ARGS))
{
    FCL_UNPACK();
    APPLY_QKVO_OFFSETS();
    APPLY_PREFILL_OFFSETS();
    __local uint4 k4[BLOCK_N * HEAD_DIM / 8];
    __local uint4 v4[DVP * BLOCK_N / 8];
    __local uint *const kb = (__local uint *)k4;
    __local uint *const vb = (__local uint *)v4;
#ifdef FLASHCL_DEBUG_SCALE
    const float scale2 = scale_log2 * FLASHCL_DEBUG_SCALE;
#else
    const float scale2 = scale_log2;
#endif
    const int tid = get_local_id(0);
#if FCL_INTEL_MMA /* (IGC knows these are uniform over a sub-group, tid / DPAS_SG not: a sub-group's column
                   * blocks' addresses would take a register each, docs/design/mfma.md) */
    const int sg = (int)get_sub_group_id(), lane = (int)get_sub_group_local_id();
#else
    const int sg = tid / DPAS_SG, lane = tid % DPAS_SG;
#endif
#if !FCL_INTEL_MMA
    __local float xchg[SUBS * DPAS_XW];
    __local float *const xw = xchg + sg * DPAS_XW;
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

    /* Keys this block can see (tiles outside are never loaded) and keys all its rows see (tiles there need
     * no mask): geometry.cl's block_keys_of */
    const block_keys keys = block_keys_of(m0, min(m0 + BLOCK_M, sq) - 1, sq, skv, win_left, win_right, BLOCK_N);
    const int n_begin = keys.begin, n_end = keys.end, inner_lo = keys.inner_lo, inner_hi = keys.inner_hi;

    /* The sub-group's rows q0 .. q0 + 7; Q's A operands for the whole run (a work-item: its k positions of
     * the 8 rows), the scale in the exponent as flash_mma's (a negative scale negates Q's sign bits). */
    const int q0 = m0 + 8 * (sg / CSPLIT), e0 = (sg % CSPLIT) * DBH; /* (e0: the first of its column blocks) */
    const position pos0 = ALIGNED_POS(q0, sq, skv);
    const uint q_sign = scale2 < 0.0f ? 0x8000u : 0u;
    const float scale_abs = fabs(scale2);
    const float exp_scale = HAS_VALUE_MODS ? 1.0f : scale_abs, mod_scale = HAS_VALUE_MODS ? scale_abs : 1.0f;
#if Q_LOCAL
    /* (Q's A operands in local memory, the rows' block r at r KS 128, k step ks 128 after it, row m's 16
     * elements 16 m after that: a sub-group block read at a uniform address, as B's) */
    __local uint4 q4[BLOCK_M * HEAD_DIM / 8];
    __local ushort *const qs = (__local ushort *)q4 + sg / CSPLIT * KS * 128;
    if (sg % CSPLIT == 0)
#else
    DPAS_A qa[KS];
#endif
    UNROLL
    for (int m = 0; m < 8; ++m) {
        const int qi = q0 + m;
        __global const MMA_Q_T *const qrow = Q + q_row_offset(sv, h, q_row_clamp(qi, sq), q_sb, q_ss, q_sh);
        UNROLL
        for (int ks = 0; ks < KS; ++ks) {
#if DPAS_SG == 8
            const uint lo = qi < sq ? q_bits(qrow + 16 * ks + 2 * lane, q_sign) : 0u;
            const uint hi = qi < sq ? q_bits(qrow + 16 * ks + 2 * lane + 1, q_sign) : 0u;
#if Q_LOCAL
            ((__local uint *)qs)[ks * 64 + 8 * m + lane] = lo | hi << 16;
#else
            ((int *)&qa[ks])[m] = (int)(lo | hi << 16);
#endif
#else
            const uint x = qi < sq ? q_bits(qrow + 16 * ks + lane, q_sign) : 0u;
#if Q_LOCAL
            qs[ks * 128 + 16 * m + lane] = (ushort)x;
#else
            ((short *)&qa[ks])[m] = (short)x;
#endif
#endif
        }
    }
    for (int idx = tid; DVP != HEAD_DIM_V && idx < NG * 8 * DPAS_SG; idx += WG_SIZE)
        if ((DB - 1) * DPAS_SG + idx % DPAS_SG >= HEAD_DIM_V)
            vb[(DB - 1) * NG * 8 * DPAS_SG + idx] = 0u;

    float8 o[DBH];
    UNROLL
    for (int e = 0; e < DBH; ++e)
        o[e] = (float8)(0.0f);
    float8 m_run = (float8)(-INFINITY), l_run = (float8)(0.0f); /* l_run: this work-item's keys only */

    for (int n0 = n_begin; n0 < n_end; n0 += BLOCK_N) {
        barrier(CLK_LOCAL_MEM_FENCE); /* the previous tile's products are done: kb and vb are free */
        /* K: a piece (8 elements of a key row: 4 pairs of d) down its key's column of a B operand */
        for (int idx = tid; idx < BLOCK_N * CPR; idx += WG_SIZE) {
            const int j = idx / CPR, c = (idx - j * CPR) * 8;
            const uint4 x = kv_piece(K, k_base, b, n0 + j, skv, c, k_ss, k_sb, BT, max_pages, num_pages);
            __local uint *const dst = kb + ((j / DPAS_SG * KS + c / 16) * 8 + c % 16 / 2) * DPAS_SG + j % DPAS_SG;
            dst[0] = x.x;
            dst[DPAS_SG] = x.y;
            dst[2 * DPAS_SG] = x.z;
            dst[3 * DPAS_SG] = x.w;
        }
        /* V: the same 8 columns of a pair of keys, interleaved into 8 uints of a B operand's row */
        for (int idx = tid; idx < BLOCK_N / 2 * CPR_V; idx += WG_SIZE) {
            const int c = idx / (BLOCK_N / 2) * 8, u = idx - idx / (BLOCK_N / 2) * (BLOCK_N / 2);
            const int j = PAIR_KEY0(u);
            const uint4 lo = kv_piece(V, v_base, b, n0 + j, skv, c, v_ss, v_sb, BT, max_pages, num_pages);
            const uint4 hi = kv_piece(V, v_base, b, n0 + j + PAIR_STEP, skv, c, v_ss, v_sb, BT, max_pages, num_pages);
            __local uint4 *const dst =
                (__local uint4 *)(vb + ((c / DPAS_SG * NG + u / 8) * 8 + u % 8) * DPAS_SG + c % DPAS_SG);
            dst[0] = (uint4)((lo.x & 0xffffu) | hi.x << 16, lo.x >> 16 | (hi.x & 0xffff0000u), (lo.y & 0xffffu) | hi.y << 16,
                             lo.y >> 16 | (hi.y & 0xffff0000u));
            dst[1] = (uint4)((lo.z & 0xffffu) | hi.z << 16, lo.z >> 16 | (hi.z & 0xffff0000u), (lo.w & 0xffffu) | hi.w << 16,
                             lo.w >> 16 | (hi.w & 0xffff0000u));
        }
        barrier(CLK_LOCAL_MEM_FENCE);

        /* S = Q K^T, an SG-key chunk at a time: B = K^T, the chunk's keys at the k step */
        float8 s[NC];
        UNROLL
        for (int j = 0; j < NC; ++j) {
            s[j] = (float8)(0.0f);
            UNROLL
            for (int ks = 0; ks < KS; ++ks)
                DPAS(s[j], Q_A(ks), LOCAL_B(kb + (j * KS + ks) * 8 * DPAS_SG));
        }

        /* Row m's score of key n0 + SG j + lane: scaled and modified (scores.cl), -inf outside the row's
         * window or past the keys on the tiles that cross them. Whether row q0 + m sees the key, from its
         * distance to row q0's aligned position (geometry.cl's visible_keys, the bounds relative to the
         * block's first row: no range a row held across the loop) */
#if HAS_WINDOW
#define DPAS_SEES(m, key)                                                                                   \
    ((key) < skv && (win_left < 0 || (position)(key)-pos0 >= (position)(m)-win_left) &&                        \
     (win_right < 0 || (position)(key)-pos0 <= (position)(m) + win_right))
#else
#define DPAS_SEES(m, key) ((key) < skv)
#endif
        const bool edge = n0 < inner_lo || n0 + BLOCK_N > inner_hi;
        UNROLL
        for (int m = 0; m < 8; ++m) {
            const int qi = q0 + m;
#if HAS_SCORE_MODS
            const score_row mods = score_row_of(LOG2E_F, softcap_log2, ALIBI, alibi_per_batch, MASK, m_sb, m_ss, m_sh,
                                                KPM, seq_kv, heads_q, b, qi, h, (int)ALIGNED_POS(qi, sq, skv), qi < sq);
            UNROLL
            for (int j = 0; j < NC; ++j) {
                const int key = n0 + j * DPAS_SG + lane;
                ACC(s[j], m) = score_mod(mods, key, ACC(s[j], m) * mod_scale, !edge || DPAS_SEES(m, key));
            }
#else
            if (edge) {
                UNROLL
                for (int j = 0; j < NC; ++j) {
                    const int key = n0 + j * DPAS_SG + lane;
                    ACC(s[j], m) = DPAS_SEES(m, key) ? ACC(s[j], m) : -INFINITY;
                }
            }
#endif
        }

        /* Online softmax, 8 rows at once (softmax.cl's rules, the maximum kept unscaled): the tile's row
         * maxima over the sub-group; a row whose maximum is still -inf weighs its keys 0; a NaN maximum
         * makes the row NaN. */
        float8 mx = m_run;
        UNROLL
        for (int j = 0; j < NC; ++j)
            UNROLL
            for (int m = 0; m < 8; ++m)
                ACC(mx, m) = max_nan(ACC(mx, m), ACC(s[j], m));
        mx = DPAS_ROWS_MAX(mx);
        float8 alpha, psum = (float8)(0.0f), m_scaled;
        UNROLL
        for (int m = 0; m < 8; ++m) {
            ACC(m_scaled, m) = ACC(mx, m) == -INFINITY ? 0.0f : ACC(mx, m) * exp_scale;
            ACC(alpha, m) = HAS_WINDOW && ACC(mx, m) == ACC(m_run, m)
                                ? 1.0f
                                : SOFTMAX_EXP2(fma(ACC(m_run, m), exp_scale, -ACC(m_scaled, m)));
            UNROLL
            for (int j = 0; j < NC; ++j) {
                const float p = SOFTMAX_EXP2(fma(ACC(s[j], m), exp_scale, -ACC(m_scaled, m)));
                ACC(s[j], m) = p;
                ACC(psum, m) += p;
            }
        }
        l_run = l_run * alpha + psum;
        m_run = mx;
        UNROLL
        for (int e = 0; e < DBH; ++e)
            o[e] *= alpha;

        /* O += P V over each 16-key group: A = P (SG 16: the chunk's results where they stand; SG 8: two
         * chunks interleaved), B = V's group of keys at column block e */
        UNROLL
        for (int c = 0; c < NG; ++c) {
            DPAS_A pa;
            UNROLL
            for (int m = 0; m < 8; ++m) {
#if DPAS_SG == 8
                ((int *)&pa)[m] = (int)(dpas_bits(ACC(s[2 * c], m)) | dpas_bits(ACC(s[2 * c + 1], m)) << 16);
#else
                ((short *)&pa)[m] = (short)dpas_bits(ACC(s[c], m));
#endif
            }
            UNROLL
            for (int e = 0; e < DBH; ++e)
                DPAS(o[e], pa, LOCAL_B(vb + ((e0 + e) * NG + c) * 8 * DPAS_SG));
        }
    }

    /* The rows' sums over the sub-group; normalise and store this work-item's columns SG e + lane */
    const float8 l = DPAS_ROWS_SUM(l_run);
    UNROLL
    for (int m = 0; m < 8; ++m) {
        const int qi = q0 + m;
        const softmax_end fin = softmax_finish(softmax_max_scaled(ACC(m_run, m), exp_scale), ACC(l, m),
                                               SINK_LOGIT2(SINKS, h));
        if (qi < sq) {
            const long ob = q_row_offset(sv, h, qi, o_sb, o_ss, o_sh);
            UNROLL
            for (int e = 0; e < DBH; ++e) {
                const int col = (e0 + e) * DPAS_SG + lane;
                if (DVP == HEAD_DIM_V || col < HEAD_DIM_V)
                    STORE(O, ob + col, ACC(o[e], m) * fin.inv);
            }
            if (write_lse && lane == 0 && e0 == 0)
                LSE[lse_row(sv, h, qi, heads_q, seq_q, total_q)] = softmax_lse(fin.m, fin.l);
        }
    }
}
