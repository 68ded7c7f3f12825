/* SPDX-License-Identifier: MIT */
/*
 * flash_amd.cl: the FlashAttention-2 forward kernel on AMD's matrix cores: flash_mfma on CDNA (gfx90a,
 * gfx94x, gfx950; wave64; the 32x32x8 MFMA of cl/mfma.cl) and flash_wmma on RDNA3/4 (gfx11, gfx12; wave32;
 * the 16x16x16 WMMA of cl/wmma.cl), through clang's amdgcn built-ins. The instruction's part (mfma.cl or
 * wmma.cl, before this file) defines the AMX_ geometry this body reads. fp16 or bf16 K and V, fp32
 * accumulation; Q and O in K's type, or Q in another, rounded to K's as it is loaded (mma.cl's Q_CONVERT),
 * with O in Q's type.
 *
 * The transposed products (docs/design/mfma.md): a wave owns AMX_Q query rows and computes, an AMX_M-key
 * part of the key tile at a time, S^T = K * Q^T (A: K's rows from local memory, B: Q^T's fragments, in
 * registers for the whole run) and O^T += V^T * P^T (A: V's tile stored transposed in local memory; B:
 * P^T). Lane l holds query l % AMX_Q in every accumulator it has, at the rows AMX_ROW(t, hf) of its half
 * hf: S^T's at those keys, O^T's at those columns. So the online softmax runs a query a lane, with the
 * other keys of each query in the partner lane (one exchange for the maximum, one for the sum at the
 * end), O's rescale is one factor a lane, and P^T is the next product's B operand where S^T's
 * accumulators stand (MFMA, gfx12) or with the partner's half added (gfx11: AMX_PFRAG).
 *
 * Semantics as flash_mma.cl's, from the same parts: geometry.cl (packed sequences, KV caches contiguous
 * and paged, the visible keys: HAS_WINDOW), scores.cl (softcap, ALiBi, masks, key padding), softmax.cl
 * (the online softmax, sinks, a row with no visible key written as zeros with LSE -inf, a NaN score
 * poisoning its row). The host sends split-KV, decode steps and fp32 K/V elsewhere (src/kernels/amd.c).
 *
 * FCL_AMD_MMA=1: the built-ins (clang's amdgcn target: AMD's ROCm OpenCL); 0: the instructions emulated
 * through local memory, a work-group barrier a use, so that PoCL and rusticl test this kernel in CI; every
 * AMX_MMA and AMX_SWAP below is reached by the whole work-group (uniform control flow).
 *
 * Local memory (src/kernels/amd.c's amd_bytes must match), in 16-bit elements:
 *   k_s   BLOCK_N x LDK     K's tile, rows padded by AMX_PAD (LDK = HEAD_DIM + AMX_PAD: a lane's row
 *                           piece and its neighbours' rows fall in distinct banks; WMMA's 8 keeps the
 *                           rows 16-byte aligned for its 16-byte pieces)
 *   vt_s  DVP x LDVT        V's tile transposed (V^T: a row a column of V, LDVT = BLOCK_N + AMX_PAD), DVP =
 *                           HEAD_DIM_V in whole AMX_M-column blocks (the rows past it zeros)
 * and, emulated, WAVES x AMX_XW floats of exchange area.
 */
#if !defined(HEAD_DIM) || !defined(BLOCK_N) || !defined(WAVES) || !defined(ROWS_ALIGNED)
#error "flash_amd.cl needs HEAD_DIM, BLOCK_N, WAVES and ROWS_ALIGNED from the host"
#endif
#if (HEAD_DIM % 16) != 0 || HEAD_DIM > 256 || (HEAD_DIM_V % 16) != 0 || HEAD_DIM_V > 256 || (BLOCK_N % AMX_M) != 0
#error "HEAD_DIM and HEAD_DIM_V must be multiples of 16 up to 256, BLOCK_N a multiple of the instruction's AMX_M"
#endif

#define BLOCK_M (AMX_Q * WAVES)
#define WG_SIZE (AMX_WAVE * WAVES)
#define LDK (HEAD_DIM + AMX_PAD)
#define DVP ((HEAD_DIM_V + AMX_M - 1) / AMX_M * AMX_M)
#define LDVT (BLOCK_N + AMX_PAD)
#define KS (HEAD_DIM / AMX_KD) /* k steps of S^T = K Q^T */
#define ST (BLOCK_N / AMX_M)   /* AMX_M-key parts of a key tile */
#define PV (AMX_M / AMX_KV)    /* products of O^T a part */
#define DB (DVP / AMX_M)       /* AMX_M-column blocks of O^T */
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

/* Two floats as one register of two 16-bit operands (lo in the low half), rounded to nearest even: mma.cl's
 * pack2, whose fp16 on the hardware (FCL_AMD_MMA) is the conversion instruction (common.cl's
 * float_to_half_bits; vstore_half_rte is about 30 integer instructions a value in AMD's device libraries,
 * gfx942 build of 2026-12-04), bf16 common.cl's integer rounding (CDNA3 has no bf16 conversion). */
#define amx_pack2(lo, hi) pack2((lo), (hi))

/* Element t of an accumulator vector (indexed by a loop variable; constant once unrolled) */
#define ACC(v, t) (((float *)&(v))[t])

/* An operand of AMX_PIECES pieces (AMX_OP: uint2, uint4 or uint8) */
#if AMX_PIECES == 1
#define AMX_OP uint2
#define AMX_JOIN(pc) ((pc)[0])
#elif AMX_PIECES == 2
#define AMX_OP uint4
#define AMX_JOIN(pc) ((uint4)((pc)[0], (pc)[1]))
#else
#define AMX_OP uint8
#define AMX_JOIN(pc) ((uint8)((pc)[0], (pc)[1], (pc)[2], (pc)[3]))
#endif

/* Four of Q's elements at p as an operand's piece (two pairs), rounded to K's type where Q has its own,
 * the sign bits flipped by `sign` */
inline uint2 q_piece(__global const MMA_Q_T *p, const uint sign)
{
#if Q_CONVERT
    const float4 f = LOAD4(p, 0);
    return (uint2)(amx_pack2(f.x, f.y), amx_pack2(f.z, f.w)) ^ sign;
#elif ROWS_ALIGNED
    return *(__global const uint2 *)p ^ sign; /* (rows at multiples of 8 elements: one 8-byte load) */
#else
    return as_uint2(vload4(0, p)) ^ sign;
#endif
}

/* Q^T's B operand for the k step at q (the row's element 0 of the step): its pieces (row order) */
inline AMX_OP q_frag(__global const MMA_Q_T *q, const uint sign, const int hf)
{
    uint2 pc[AMX_PIECES];
    UNROLL
    for (int i = 0; i < AMX_PIECES; ++i)
        pc[i] = q_piece(q + AMX_LANE_OFF(hf) + AMX_STEP * i, sign);
    return AMX_JOIN(pc);
}
/* K's or V^T's A operand from a local row whose lane part (AMX_LANE_OFF, AMX_VLANE_OFF) base already holds,
 * at element offset `at` of the row: its pieces AMX_STEP (AMX_VSTEP) elements apart (a constant base and
 * constant offsets, which the compiler pairs into one ds_read2) */
inline AMX_OP lds_frag(__local const uint2 *base, const int at, const int step)
{
    uint2 pc[AMX_PIECES];
    UNROLL
    for (int i = 0; i < AMX_PIECES; ++i)
        pc[i] = base[(at + step * i) / 4];
    return AMX_JOIN(pc);
}

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void
AMX_ENTRY(FCL_SIGNATURE(FCL_FLASH_MMA_ARGS))
{
    FCL_UNPACK();
    APPLY_QKVO_OFFSETS();
    APPLY_PREFILL_OFFSETS();
    __local AMX_ROW_T k2[BLOCK_N * LDK / (sizeof(AMX_ROW_T) / 2)];
    __local AMX_ROW_T v2[DVP * LDVT / (sizeof(AMX_ROW_T) / 2)];
    __local ushort *const k_s = (__local ushort *)k2;
    __local ushort *const vt_s = (__local ushort *)v2;
#ifdef FLASHCL_DEBUG_SCALE
    const float scale2 = scale_log2 * FLASHCL_DEBUG_SCALE;
#else
    const float scale2 = scale_log2;
#endif
    const int tid = get_local_id(0);
    const int wave = tid / AMX_WAVE, lane = tid % AMX_WAVE;
    const int r = lane % AMX_Q, hf = lane / AMX_Q; /* the lane's query in the wave's, its half of the keys */
#if !FCL_AMD_MMA
    __local float xchg[WAVES * AMX_XW];
    __local float *const xw = xchg + wave * AMX_XW;
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

    /* This lane's query; its Q^T fragments (B of S^T: row qi's k steps) for the whole run, straight from
     * global memory. The scale goes into the exponent (one FMA a score) of scores whose maximum is taken
     * unscaled, which needs a positive scale: a negative one negates Q (its sign bits: exact). With
     * modifiers of a score's value the scores are scaled before them (scores.cl's HAS_VALUE_MODS). */
    const int qi = m0 + AMX_Q * wave + r;
    const uint q_sign = scale2 < 0.0f ? 0x80008000u : 0u;
    const float scale_abs = fabs(scale2);
    const float exp_scale = HAS_VALUE_MODS ? 1.0f : scale_abs, mod_scale = HAS_VALUE_MODS ? scale_abs : 1.0f;
    AMX_OP qf[KS];
    {
        __global const MMA_Q_T *const qrow = Q + q_row_offset(sv, h, q_row_clamp(qi, sq), q_sb, q_ss, q_sh);
        UNROLL
        for (int ks = 0; ks < KS; ++ks)
            qf[ks] = qi < sq ? q_frag(qrow + AMX_KD * ks, q_sign, hf) : (AMX_OP)(0);
    }
    /* V^T's rows past V's head dim stay zeros (their O^T columns are computed and never stored) */
    for (int idx = HEAD_DIM_V * LDVT + tid; idx < DVP * LDVT; idx += WG_SIZE)
        vt_s[idx] = 0;

    AMX_ACC o[DB];
    UNROLL
    for (int e = 0; e < DB; ++e)
        o[e] = (AMX_ACC)(0.0f);
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
            store_row8(k_s + j * LDK + c, kv_piece(K, k_base, b, n0 + j, skv, c, k_ss, k_sb, BT, max_pages, num_pages));
        }
        for (int idx = tid; idx < BLOCK_N * CPR_V; idx += WG_SIZE) {
            const int c = idx / BLOCK_N * 8, j = idx - idx / BLOCK_N * BLOCK_N;
            store_column8(vt_s + c * LDVT + j, LDVT,
                          kv_piece(V, v_base, b, n0 + j, skv, c, v_ss, v_sb, BT, max_pages, num_pages));
        }
        barrier(CLK_LOCAL_MEM_FENCE);

        /* S^T = K Q^T, an AMX_M-key part at a time: A = K's row AMX_M st + r, the k step's pieces */
        AMX_ACC s[ST];
        UNROLL
        for (int st = 0; st < ST; ++st) {
            s[st] = (AMX_ACC)(0.0f);
            __local const uint2 *const krow = (__local const uint2 *)(k_s + (AMX_M * st + r) * LDK + AMX_LANE_OFF(hf));
            UNROLL
            for (int ks = 0; ks < KS; ++ks)
                AMX_MMA(s[st], lds_frag(krow, AMX_KD * ks, AMX_STEP), qf[ks]);
        }

        /* This lane's keys: part st, accumulator t: n0 + AMX_M st + AMX_ROW(t, hf). Scaled and modified
         * (scores.cl) where modifiers are compiled in; keys outside the row's window, or past the
         * sequence's end, -inf on the tiles that cross them (selects: a store under a branch compiled to
         * one exec-masked block a score). */
        const bool edge = n0 < inner_lo || n0 + BLOCK_N > inner_hi;
        key_range vis = {0, skv};
#if HAS_WINDOW
        if (edge)
            vis = visible_keys(qi, sq, skv, win_left, win_right);
#endif
#if HAS_SCORE_MODS
        {
            /* (the lane's first key k0 and each key's constant offset from it: ALiBi's distance converted
             * once a tile, as scores.cl's SCORE_MODS_ACC does) */
            const int k0 = n0 + AMX_ROW(0, hf);
            const float d0 = ALIBI_D0(mods, k0);
            UNROLL
            for (int st = 0; st < ST; ++st)
                UNROLL
                for (int t = 0; t < AMX_NS; ++t) {
                    const int kk = AMX_M * st + AMX_ROW(t, 0), key = k0 + kk;
                    ACC(s[st], t) = score_mod_dist(mods, key, fabs(d0 + (float)kk), ACC(s[st], t) * mod_scale,
                                                   !edge || (key >= vis.lo && key < vis.hi));
                }
        }
#else
        if (edge) {
            UNROLL
            for (int st = 0; st < ST; ++st)
                UNROLL
                for (int t = 0; t < AMX_NS; ++t) {
                    const int key = n0 + AMX_M * st + AMX_ROW(t, hf);
                    ACC(s[st], t) = key < vis.lo || key >= vis.hi ? -INFINITY : ACC(s[st], t);
                }
        }
#endif

        /* Online softmax, a query a lane (softmax.cl's rules, the maximum kept unscaled): the tile's
         * maximum over both halves of the query's keys; a row whose maximum is still -inf weighs its keys
         * exp2(-inf - 0) = 0; a NaN maximum makes every weight, and the row, NaN. */
        float mx = m_run;
        UNROLL
        for (int st = 0; st < ST; ++st)
            UNROLL
            for (int t = 0; t < AMX_NS; ++t)
                mx = max_nan(mx, ACC(s[st], t));
        mx = max_nan(mx, AMX_SWAP(mx));
        const float m_scaled = mx == -INFINITY ? 0.0f : mx * exp_scale;
        /* (with a window exactly 1 where the maximum did not move; a NaN maximum moves it) */
        const float alpha = HAS_WINDOW && mx == m_run ? 1.0f : SOFTMAX_EXP2(fma(m_run, exp_scale, -m_scaled));
        float psum = 0.0f;
        UNROLL
        for (int st = 0; st < ST; ++st)
            UNROLL
            for (int t = 0; t < AMX_NS; ++t) {
                const float p = SOFTMAX_EXP2(fma(ACC(s[st], t), exp_scale, -m_scaled));
                ACC(s[st], t) = p;
                psum += p;
            }
        l_run = l_run * alpha + psum;
        m_run = mx;
        UNROLL
        for (int e = 0; e < DB; ++e)
            o[e] *= alpha;

        /* O^T += V^T P^T over the part's keys AMX_KV kb ..: B = P^T (AMX_PFRAG: rounded where the weights
         * stand), A = V^T's row AMX_M e + r at those keys */
        UNROLL
        for (int st = 0; st < ST; ++st)
            UNROLL
            for (int kb = 0; kb < PV; ++kb) {
                AMX_OP pb;
                AMX_PFRAG(pb, (float *)&s[st], kb, amx_pack2);
                __local const uint2 *const vcol =
                    (__local const uint2 *)(vt_s + r * LDVT + AMX_M * st + AMX_KV * kb + AMX_VLANE_OFF(hf));
                UNROLL
                for (int e = 0; e < DB; ++e)
                    AMX_MMA(o[e], lds_frag(vcol, e * AMX_M * LDVT, AMX_VSTEP), pb);
            }
    }

    /* The query's sum over both halves of its keys; normalise and store this lane's columns of its row:
     * AMX_M e + AMX_ROW(t, hf). */
    const float l = l_run + AMX_SWAP(l_run);
    const softmax_end fin = softmax_finish(softmax_max_scaled(m_run, exp_scale), l, SINK_LOGIT2(SINKS, h));
    if (qi < sq) {
        const long ob = q_row_offset(sv, h, qi, o_sb, o_ss, o_sh);
        UNROLL
        for (int e = 0; e < DB; ++e)
            UNROLL
            for (int t = 0; t < AMX_NS; ++t) {
                const int col = AMX_M * e + AMX_ROW(t, hf);
                if (DVP == HEAD_DIM_V || col < HEAD_DIM_V)
                    STORE(O, ob + col, ACC(o[e], t) * fin.inv);
            }
        if (write_lse && hf == 0)
            LSE[lse_row(sv, h, qi, heads_q, seq_q, total_q)] = softmax_lse(fin.m, fin.l);
    }
}
