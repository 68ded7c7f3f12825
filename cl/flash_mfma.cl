/* SPDX-License-Identifier: MIT */
/*
 * flash_mfma.cl: the FlashAttention-2 forward kernel on AMD CDNA's matrix cores (gfx90a, gfx942, gfx950;
 * wave64), through clang's MFMA built-in (mfma.cl's MFMA32: D 32 x 32 += A 32 x 8 * B 8 x 32). fp16 or
 * bf16 K and V, fp32 accumulation; Q and O in K's type, or Q in another, rounded to K's as it is loaded
 * (mma.cl's Q_CONVERT), with O in Q's type.
 *
 * The transposed products (docs/design/mfma.md): a wave owns 32 query rows and computes, a 32-key part of
 * the key tile at a time, S^T = K * Q^T (A: 32 keys x 8 of the head dim from local memory, B: Q^T's
 * fragments, in registers for the whole run) and O^T += V^T * P^T (A: 32 of V's columns x 8 keys, from
 * V's tile stored transposed in local memory; B: P^T). Lane l holds query l % 32 in every accumulator it
 * has: S^T's at keys 8 (t / 4) + 4 (l / 32) + t % 4, O^T's at columns likewise. So the online softmax
 * runs a query a lane, with the other half of each query's keys in the partner lane l ^ 32 (one exchange
 * for the maximum, one for the sum at the end), O's rescale is one factor a lane, and P^T, rounded to 16
 * bits where S^T's accumulators stand, is the next product's B operand with no exchange at all.
 *
 * Semantics as flash_mma.cl's, from the same parts: geometry.cl (packed sequences, KV caches contiguous
 * and paged, the visible keys: HAS_WINDOW), scores.cl (softcap, ALiBi, masks, key padding), softmax.cl
 * (the online softmax, sinks, a row with no visible key written as zeros with LSE -inf, a NaN score
 * poisoning its row). The host sends split-KV, decode steps and fp32 K/V elsewhere (src/kernels/mfma.c).
 *
 * FCL_AMD_MMA=1: the built-in (clang's amdgcn target: AMD's ROCm OpenCL); 0: the instruction emulated
 * through local memory, a work-group barrier a use, so that PoCL and rusticl test this kernel in CI;
 * every MFMA32 and MFMA_SWAP32 below is reached by the whole work-group (uniform control flow).
 *
 * Local memory (src/kernels/mfma.c's mfma_bytes must match), in 16-bit elements:
 *   k_s   BLOCK_N x LDK     K's tile, rows padded by 4 (LDK = HEAD_DIM + 4: a lane's 8-byte row piece
 *                           and its 31 neighbours' rows fall in distinct banks)
 *   vt_s  DVP x LDVT        V's tile transposed (V^T: a row a column of V, LDVT = BLOCK_N + 4), DVP =
 *                           HEAD_DIM_V in whole 32-column blocks (the rows past it zeros)
 * and, emulated, WAVES x MFMA_XW floats of exchange area.
 */
#if !defined(HEAD_DIM) || !defined(BLOCK_N) || !defined(WAVES) || !defined(ROWS_ALIGNED)
#error "flash_mfma.cl needs HEAD_DIM, BLOCK_N, WAVES and ROWS_ALIGNED from the host"
#endif
#if (HEAD_DIM % 16) != 0 || HEAD_DIM > 256 || (HEAD_DIM_V % 16) != 0 || HEAD_DIM_V > 256 || (BLOCK_N % 32) != 0
#error "HEAD_DIM and HEAD_DIM_V must be multiples of 16 up to 256, BLOCK_N a multiple of 32"
#endif

#define BLOCK_M (32 * WAVES)
#define WG_SIZE (64 * WAVES)
#define LDK (HEAD_DIM + 4)
#define DVP ((HEAD_DIM_V + 31) / 32 * 32)
#define LDVT (BLOCK_N + 4)
#define KS (HEAD_DIM / 8)  /* k steps of S^T = K Q^T */
#define ST (BLOCK_N / 32)  /* 32-key parts of a key tile */
#define DB (DVP / 32)      /* 32-column blocks of O^T */
#define CPR (HEAD_DIM / 8) /* 8-element pieces a row of K, and of V */
#define CPR_V (HEAD_DIM_V / 8)

/* The loops over fragments (this file's and scores.cl's SCORE_MODS_ACC) are unrolled where the instruction
 * is the hardware's: the accumulators must stay in registers (the modifiers' walk not unrolled kept them in
 * 128 bytes of scratch a lane: tools/vendor_check.sh, gfx90a, 2026-12-04). Emulated they are not (mma.cl's
 * UNROLL: PoCL compiles the unrolled emulation slowly). */
#if FCL_AMD_MMA
#undef UNROLL
#define UNROLL _Pragma("unroll")
#endif

/* Two floats as one register of two 16-bit operands (lo in the low half), rounded to nearest even: on the
 * hardware fp16 through its conversion instruction (mma.cl's pack2 goes through vstore_half_rte, which
 * AMD's device libraries implement in integer arithmetic with branches: about 30 instructions a value in
 * the gfx942 build of 2026-12-04), bf16 by common.cl's integer rounding (CDNA3 has no bf16 conversion). */
#if FCL_AMD_MMA && !MMA_BF16
inline uint mfma_pack2(const float lo, const float hi)
{
    return (uint)as_ushort(convert_half_rte(lo)) | (uint)as_ushort(convert_half_rte(hi)) << 16;
}
#else
#define mfma_pack2(lo, hi) pack2((lo), (hi))
#endif

/* Eight elements of a K or V row from global memory as 16 bytes (their 16-bit patterns) */
#if ROWS_ALIGNED
#define LOAD8(src) (*(__global const uint4 *)(src))
#else
#define LOAD8(src) as_uint4(vload8(0, (src)))
#endif

/* Element t of a float16 (accumulators indexed by a loop variable; constant once unrolled) */
#define ACC(v, t) (((float *)&(v))[t])

/* Four of Q's elements at p as an MFMA operand (two pairs), rounded to K's type where Q has its own,
 * the sign bits flipped by `sign` */
inline uint2 q_frag(__global const MMA_Q_T *p, const uint sign)
{
#if Q_CONVERT
    const float4 f = LOAD4(p, 0);
    return (uint2)(mfma_pack2(f.x, f.y), mfma_pack2(f.z, f.w)) ^ sign;
#elif ROWS_ALIGNED
    return *(__global const uint2 *)p ^ sign; /* (rows at multiples of 8 elements: one 8-byte load) */
#else
    return as_uint2(vload4(0, p)) ^ sign;
#endif
}

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void
flash_mfma(FCL_SIGNATURE(FCL_FLASH_MMA_ARGS))
{
    FCL_UNPACK();
    APPLY_QKVO_OFFSETS();
    APPLY_PREFILL_OFFSETS();
    __local uint2 k2[BLOCK_N * LDK / 4];
    __local uint2 v2[DVP * LDVT / 4];
    __local ushort *const k_s = (__local ushort *)k2;
    __local ushort *const vt_s = (__local ushort *)v2;
#ifdef FLASHCL_DEBUG_SCALE
    const float scale2 = scale_log2 * FLASHCL_DEBUG_SCALE;
#else
    const float scale2 = scale_log2;
#endif
    const int tid = get_local_id(0);
    const int wave = tid >> 6, lane = tid & 63;
    const int r = lane & 31, hf = lane >> 5; /* the lane's query in the wave's 32, its half of the keys */
#if !FCL_AMD_MMA
    __local float xchg[WAVES * MFMA_XW];
    __local float *const xw = xchg + wave * MFMA_XW;
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

    /* This lane's query; its Q^T fragments (B of S^T: Q[qi][8 ks + 4 hf .. + 3]) for the whole run, straight
     * from global memory. The scale goes into the exponent (one FMA a score) of scores whose maximum is
     * taken unscaled, which needs a positive scale: a negative one negates Q (its sign bits: exact). With
     * modifiers of a score's value the scores are scaled before them (scores.cl's HAS_VALUE_MODS). */
    const int qi = m0 + 32 * wave + r;
    const uint q_sign = scale2 < 0.0f ? 0x80008000u : 0u;
    const float scale_abs = fabs(scale2);
    const float exp_scale = HAS_VALUE_MODS ? 1.0f : scale_abs, mod_scale = HAS_VALUE_MODS ? scale_abs : 1.0f;
    uint2 qf[KS];
    {
        __global const MMA_Q_T *const qrow = Q + q_row_offset(sv, h, q_row_clamp(qi, sq), q_sb, q_ss, q_sh) + 4 * hf;
        UNROLL
        for (int ks = 0; ks < KS; ++ks)
            qf[ks] = qi < sq ? q_frag(qrow + 8 * ks, q_sign) : (uint2)(0);
    }
    /* V^T's rows past V's head dim stay zeros (their O^T columns are computed and never stored) */
    for (int idx = HEAD_DIM_V * LDVT + tid; idx < DVP * LDVT; idx += WG_SIZE)
        vt_s[idx] = 0;

    float16 o[DB];
    UNROLL
    for (int e = 0; e < DB; ++e)
        o[e] = (float16)(0.0f);
    float m_run = -INFINITY, l_run = 0.0f; /* l_run: this lane's keys only (its partner has the rest) */
#if HAS_SCORE_MODS
    /* (what the modifiers need of the row: the same every tile) */
    const score_row mods = score_row_of(LOG2E_F, softcap_log2, ALIBI, alibi_per_batch, MASK, m_sb, m_ss, m_sh, KPM,
                                        seq_kv, heads_q, b, qi, h, (int)ALIGNED_POS(qi, sq, skv), qi < sq);
#endif

    for (int n0 = n_begin; n0 < n_end; n0 += BLOCK_N) {
        barrier(CLK_LOCAL_MEM_FENCE); /* the previous tile's products are done: k_s and vt_s are free */
        /* K's tile, row-major; V's transposed (work-item idx: key idx % BLOCK_N, so that neighbouring
         * work-items store neighbouring 16-bit elements of a V^T row). Rows past the keys are zeros. */
        for (int idx = tid; idx < BLOCK_N * CPR; idx += WG_SIZE) {
            const int j = idx / CPR, c = (idx - j * CPR) * 8;
            const bool ok = n0 + j < skv;
            const uint4 x = ok ? LOAD8(K + k_base + kv_row(b, n0 + j, k_ss, k_sb, BT, max_pages, num_pages) + c) : (uint4)(0);
            __local uint2 *const dst = (__local uint2 *)(k_s + j * LDK + c);
            dst[0] = x.xy;
            dst[1] = x.zw;
        }
        for (int idx = tid; idx < BLOCK_N * CPR_V; idx += WG_SIZE) {
            const int c = idx / BLOCK_N * 8, j = idx - idx / BLOCK_N * BLOCK_N;
            const bool ok = n0 + j < skv;
            const uint4 x = ok ? LOAD8(V + v_base + kv_row(b, n0 + j, v_ss, v_sb, BT, max_pages, num_pages) + c) : (uint4)(0);
            __local ushort *const dst = vt_s + c * LDVT + j;
            dst[0 * LDVT] = (ushort)x.x;
            dst[1 * LDVT] = (ushort)(x.x >> 16);
            dst[2 * LDVT] = (ushort)x.y;
            dst[3 * LDVT] = (ushort)(x.y >> 16);
            dst[4 * LDVT] = (ushort)x.z;
            dst[5 * LDVT] = (ushort)(x.z >> 16);
            dst[6 * LDVT] = (ushort)x.w;
            dst[7 * LDVT] = (ushort)(x.w >> 16);
        }
        barrier(CLK_LOCAL_MEM_FENCE);

        /* S^T = K Q^T, a 32-key part at a time: A = K[32 st + r][8 ks + 4 hf .. + 3] */
        float16 s[ST];
        UNROLL
        for (int st = 0; st < ST; ++st) {
            s[st] = (float16)(0.0f);
            __local const uint2 *const krow = (__local const uint2 *)(k_s + (32 * st + r) * LDK + 4 * hf);
            UNROLL
            for (int ks = 0; ks < KS; ++ks)
                MFMA32(s[st], krow[2 * ks], qf[ks]);
        }

        /* This lane's keys: part st, element t: n0 + 32 st + 8 (t / 4) + 4 hf + t % 4; as scores.cl's
         * accumulator walk (keys k0 + 8 j + e, e < 2), two walks: k0 = n0 + 4 hf and n0 + 4 hf + 2. */
        const bool edge = n0 < inner_lo || n0 + BLOCK_N > inner_hi;
        key_range vis = {0, skv};
#if HAS_WINDOW
        if (edge)
            vis = visible_keys(qi, sq, skv, win_left, win_right);
#endif
#define S_LO(j, e) ACC(s[(j) >> 2], 4 * ((j)&3) + (e))
#define S_HI(j, e) ACC(s[(j) >> 2], 4 * ((j)&3) + 2 + (e))
#if HAS_SCORE_MODS
        if (edge) { /* (two copies: the interior tiles' without a key comparison) */
            SCORE_MODS_ACC(S_LO, BLOCK_N / 8, mods, n0 + 4 * hf, mod_scale, 1, vis);
            SCORE_MODS_ACC(S_HI, BLOCK_N / 8, mods, n0 + 4 * hf + 2, mod_scale, 1, vis);
        } else {
            SCORE_MODS_ACC(S_LO, BLOCK_N / 8, mods, n0 + 4 * hf, mod_scale, 0, vis);
            SCORE_MODS_ACC(S_HI, BLOCK_N / 8, mods, n0 + 4 * hf + 2, mod_scale, 0, vis);
        }
#else
        if (edge) {
            UNROLL
            for (int st = 0; st < ST; ++st)
                UNROLL
                for (int t = 0; t < 16; ++t) {
                    const int key = n0 + 32 * st + 8 * (t >> 2) + 4 * hf + (t & 3);
                    /* (a select: a store under a branch compiled to one exec-masked block a score) */
                    ACC(s[st], t) = key < vis.lo || key >= vis.hi ? -INFINITY : ACC(s[st], t);
                }
        }
#endif
#undef S_LO
#undef S_HI

        /* Online softmax, a query a lane (softmax.cl's rules, the maximum kept unscaled): the tile's
         * maximum over both halves of the query's keys; a row whose maximum is still -inf weighs its keys
         * exp2(-inf - 0) = 0; a NaN maximum makes every weight, and the row, NaN. */
        float mx = m_run;
        UNROLL
        for (int st = 0; st < ST; ++st)
            UNROLL
            for (int t = 0; t < 16; ++t)
                mx = max_nan(mx, ACC(s[st], t));
        mx = max_nan(mx, MFMA_SWAP32(mx));
        const float m_scaled = mx == -INFINITY ? 0.0f : mx * exp_scale;
        /* (with a window exactly 1 where the maximum did not move; a NaN maximum moves it) */
        const float alpha = HAS_WINDOW && mx == m_run ? 1.0f : SOFTMAX_EXP2(fma(m_run, exp_scale, -m_scaled));
        float psum = 0.0f;
        UNROLL
        for (int st = 0; st < ST; ++st)
            UNROLL
            for (int t = 0; t < 16; ++t) {
                const float p = SOFTMAX_EXP2(fma(ACC(s[st], t), exp_scale, -m_scaled));
                ACC(s[st], t) = p;
                psum += p;
            }
        l_run = l_run * alpha + psum;
        m_run = mx;
        UNROLL
        for (int e = 0; e < DB; ++e)
            o[e] *= alpha;

        /* O^T += V^T P^T over keys 32 st + 8 kb .. + 7: B = P^T, this lane's four weights of them rounded
         * where they stand; A = V^T[32 e + r][32 st + 8 kb + 4 hf .. + 3] */
        UNROLL
        for (int st = 0; st < ST; ++st)
            UNROLL
            for (int kb = 0; kb < 4; ++kb) {
                const uint2 pb = (uint2)(mfma_pack2(ACC(s[st], 4 * kb), ACC(s[st], 4 * kb + 1)),
                                         mfma_pack2(ACC(s[st], 4 * kb + 2), ACC(s[st], 4 * kb + 3)));
                __local const uint2 *const vcol =
                    (__local const uint2 *)(vt_s + r * LDVT + 32 * st + 8 * kb + 4 * hf);
                UNROLL
                for (int e = 0; e < DB; ++e)
                    MFMA32(o[e], vcol[e * 32 * LDVT / 4], pb);
            }
    }

    /* The query's sum over both halves of its keys; normalise and store this lane's columns of its row:
     * 32 e + 8 (t / 4) + 4 hf + t % 4. */
    const float l = l_run + MFMA_SWAP32(l_run);
    const softmax_end fin = softmax_finish(softmax_max_scaled(m_run, exp_scale), l, SINK_LOGIT2(SINKS, h));
    if (qi < sq) {
        const long ob = q_row_offset(sv, h, qi, o_sb, o_ss, o_sh);
        UNROLL
        for (int e = 0; e < DB; ++e)
            UNROLL
            for (int t = 0; t < 16; ++t) {
                const int col = 32 * e + 8 * (t >> 2) + 4 * hf + (t & 3);
                if (DVP == HEAD_DIM_V || col < HEAD_DIM_V)
                    STORE(O, ob + col, ACC(o[e], t) * fin.inv);
            }
        if (write_lse && hf == 0)
            LSE[lse_row(sv, h, qi, heads_q, seq_q, total_q)] = softmax_lse(fin.m, fin.l);
    }
}
