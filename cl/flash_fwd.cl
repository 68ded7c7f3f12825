/* SPDX-License-Identifier: MIT */
/*
 * flash_fwd.cl: the portable FlashAttention-2 forward kernel (no vendor extension), register-blocked.
 *
 * One work-group computes BLOCK_M query rows of one (batch, head) and streams the keys BLOCK_N at a
 * time. Its work-items form a grid of RG row groups by CG column groups (CG is the config's
 * threads_per_row). Work-item (rg, cg) owns TM query rows, rg + i*RG for i < TM, and keeps in registers
 *   - a TM x TN block of the scores S = Q*K^T, keys cg + j*CG for j < TN (TN = BLOCK_N / CG), and
 *   - a TM x TD block of the output O, columns (v*CG + cg)*VW + e for v < TD/VW, e < VW (TD = HEAD_DIM_V/CG).
 * Each value loaded from local memory feeds TN (or TM) multiply-adds instead of one: the loop over the
 * head dimension does TM + TN float4 loads for 4*TM*TN FMAs. The strided ownership puts the CG
 * work-items of a row group on neighbouring keys and columns, so their loads hit different banks and
 * the loads of the RG row groups' Q rows are broadcasts.
 *
 * Q*K^T runs over the head dimension D_CHUNK columns at a time: the chunk of Q and of K sit in local
 * memory together. When D_CHUNK == HEAD_DIM, Q is loaded once and stays (Q_RESIDENT); otherwise its
 * chunks are read again for every key tile (from cache: the work-group's Q is small). The online
 * softmax keeps a running maximum and sum per row; the row maximum of a tile is reduced through local
 * memory (no subgroup functions: OpenCL 1.2). P goes to local memory and P*V runs over the keys V_CHUNK
 * at a time, V's chunk reusing the memory of the Q/K chunks. Scores are in base 2 (scale*log2(e) is
 * applied to S) so every exponential is one exp2. Tiles wholly outside the causal mask or the sliding
 * window are never loaded.
 *
 * Its parts: common.cl (storage, feature switches), geometry.cl (sequences, the visible keys),
 * scores.cl (softcap, biases, masks), softmax.cl (the online softmax). Every feature that costs in
 * the key loop is compiled in only when the problem has it (common.cl): the causal mask or a window
 * (HAS_WINDOW: scores are masked only in the tiles that cross a row's window edge or the sequence's
 * end), the softcap, ALiBi, masks, packed sequences, caches, paging, split-KV, GQA packing. A row left
 * with no key writes zeros and LSE -inf.
 *
 * Specialised at build time by HEAD_DIM, BLOCK_M, BLOCK_N, TM, CG, D_CHUNK, V_CHUNK, FLASHCL_DTYPE_*, and
 * HEAD_DIM_V where V and O have another head dim than Q and K (common.cl; Q*K^T runs over HEAD_DIM, P*V
 * and the output over HEAD_DIM_V). Its design, and the measurements behind its choices:
 * docs/design/portable.md (the tile choice: docs/design/tiles.md).
 * Local memory, in floats (src/tiles.c's flash_floats must match this exactly), LDC = D_CHUNK+4:
 *   q_res  BLOCK_M*LDC if Q_RESIDENT, else 0
 *   shared max(qk, V_CHUNK*HEAD_DIM_V, BLOCK_M*CG) where qk = BLOCK_N*LDC (+ BLOCK_M*LDC if not resident)
 *   p_tile BLOCK_M*(BLOCK_N+4)
 * The +4 keeps rows 16-byte aligned for float4 loads while shifting each row by four banks.
 */
#if !defined(HEAD_DIM) || !defined(BLOCK_M) || !defined(BLOCK_N) || !defined(TM) || !defined(CG) || \
    !defined(D_CHUNK) || !defined(V_CHUNK)
#error "flash_fwd.cl needs HEAD_DIM, BLOCK_M, BLOCK_N, TM, CG, D_CHUNK and V_CHUNK"
#endif
#if (BLOCK_M % TM) != 0 || (BLOCK_N % CG) != 0 || (HEAD_DIM_V % CG) != 0
#error "TM must divide BLOCK_M, CG must divide BLOCK_N and HEAD_DIM_V"
#endif
#if (D_CHUNK % 4) != 0 || (HEAD_DIM % D_CHUNK) != 0 || (V_CHUNK % 4) != 0 || (BLOCK_N % V_CHUNK) != 0
#error "D_CHUNK must be a multiple of 4 dividing HEAD_DIM; V_CHUNK a multiple of 4 dividing BLOCK_N"
#endif

#define RG (BLOCK_M / TM)
#define WG_SIZE (RG * CG)
#define TN (BLOCK_N / CG)
#define TD (HEAD_DIM_V / CG)
#define LDC FCL_FWD_LDC(D_CHUNK) /* (cl/layout.h: the host's formula reads the same) */
#define LDP FCL_FWD_LDP(BLOCK_N)
#define Q_RESIDENT (D_CHUNK == HEAD_DIM)

/* Output columns travel as vectors of VW floats. */
#if (TD % 4) == 0
#define VW 4
#define VEC float4
#define VZERO ((float4)(0.0f))
#define VSTORE(x, p) vstore4((x), 0, (p))
#elif (TD % 2) == 0
#define VW 2
#define VEC float2
#define VZERO ((float2)(0.0f))
#define VSTORE(x, p) vstore2((x), 0, (p))
#else
#define VW 1
#define VEC float
#define VZERO 0.0f
#define VSTORE(x, p) ((p)[0] = (x))
#endif
#define NV (TD / VW)


/* ROW_SHFL: a row's tile maximum and final sum are reduced across its CG work-items by warp shuffles
 * instead of through local memory (two work-group barriers a key tile fewer, and no loads). The host
 * sets FCL_SHFL where it proved inline PTX on the device (NVIDIA: the matrix-unit test compile); the CG
 * work-items of a row group are then consecutive lanes of one warp (CG divides 32, whole warps). The
 * local-memory reduction stays the portable path and keeps its place in SHARED_FLOATS (the host's
 * formula does not depend on this switch). FWD_MAX is max_nan, one max.NaN on compute capability 8.0+. */
#ifndef FCL_SHFL
#define FCL_SHFL 0
#endif
#define ROW_SHFL (FCL_SHFL && (32 % CG) == 0 && (WG_SIZE % 32) == 0)
#if ROW_SHFL
inline float row_xor(const float v, const int m)
{
    float r;
    __asm__ volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=f"(r) : "f"(v), "r"(m));
    return r;
}
#endif
#if FCL_SHFL && defined(FCL_SM) && FCL_SM >= 80
inline float fwd_max(const float a, const float b)
{
    float r;
    __asm__("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    return r;
}
#define FWD_MAX(a, b) fwd_max((a), (b))
#else
#define FWD_MAX(a, b) max_nan((a), (b))
#endif
#define SHARED_FLOATS FCL_FWD_SHARED_FLOATS(HEAD_DIM, HEAD_DIM_V, BLOCK_M, BLOCK_N, CG, D_CHUNK, V_CHUNK)

/* Packed rows (GQA_PACK > 1, decode): block row pr is query pr / GQA_PACK of head h0 + pr % GQA_PACK,
 * so that the query heads sharing a KV head share its K/V tiles; otherwise row pr is query pr of h0. */
inline int row_query(const int pr)
{
    return pr / GQA_PACK;
}
inline int row_head(const int pr, const int h0)
{
    return h0 + pr % GQA_PACK;
}

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) SUB_GROUP_ATTR void
flash_fwd(FCL_SIGNATURE(FCL_FLASH_FWD_ARGS))
{
    FCL_UNPACK();
    /* The caller's offsets into its buffers, in elements (flashcl_offsets). */
    APPLY_QKVO_OFFSETS();
    APPLY_PREFILL_OFFSETS();
    DESCALE += descale_off;
    OP += op_off; /* split-KV's scratch: the caller's workspace or the plan's */
    LP += lp_off;
    /* Declared as float4 so that every row start is 16-byte aligned; scalar stores go through casts. */
    __local float4 shared4[(SHARED_FLOATS + 3) / 4];
    __local float4 p4[BLOCK_M * LDP / 4];
#if Q_RESIDENT
    __local float4 qres4[BLOCK_M * LDC / 4];
    __local float *const q_s = (__local float *)qres4;
    __local float *const k_s = (__local float *)shared4;
#else
    __local float *const q_s = (__local float *)shared4;
    __local float *const k_s = (__local float *)shared4 + BLOCK_M * LDC;
#endif
    __local float *const v_s = (__local float *)shared4;
    __local float *const red = (__local float *)shared4;
    __local float *const p_s = (__local float *)p4;

#ifdef FLASHCL_DEBUG_SCALE
    /* Fault injection for the validation tests: a kernel that is wrong on purpose. */
    scale_log2 *= FLASHCL_DEBUG_SCALE;
#endif
    const int tid = get_local_id(0);
    const int rg = tid / CG;
    const int cg = tid - rg * CG;
    const int m0 = get_group_id(0) * BLOCK_M;
#if SPLIT_KV
    /* Split-KV (flash-decoding): dimension 1 numbers (batch * heads) x n_splits work-groups; split s
     * covers one contiguous range of the keys and writes its normalised partial output and its
     * log-sum-exp to OP/LP, which flash_combine merges. */
    const int split = get_group_id(1) % n_splits;
    const int bh = get_group_id(1) / n_splits;
#else
    const int bh = get_group_id(1);
#endif
    /* Dimension 1 numbers (batch, query head), or (batch, KV head) when query heads are packed. */
    const int heads_per_batch = heads_q / GQA_PACK;
    const int b = bh / heads_per_batch;
    const int h0 = (bh - b * heads_per_batch) * GQA_PACK; /* the block's first query head */
    const int hk = h0 / group;
    /* fp8 attention's descale factors (common.cl): Q's and K's into the scale, V's into the final division */
    const float dqk = fp8_descale(DESCALE, 0, b, hk, batch, heads_q / group) *
                      fp8_descale(DESCALE, 1, b, hk, batch, heads_q / group),
                v_descale = fp8_descale(DESCALE, 2, b, hk, batch, heads_q / group);
    scale *= dqk;
    scale_log2 *= dqk;
    const seq_view sv = seq_view_of(b, seq_q, seq_kv, CU_Q, CU_K, total_q, total_kv, CACHE_LENS, BATCH_IDX, LEFT_PAD,
                                    cache_batch);
    const int sq = sv.sq, skv = sv.skv;
    const long k_base = kv_base(sv, hk, k_sb, k_ss, k_sh);
    const long v_base = kv_base(sv, hk, v_sb, v_ss, v_sh);

    /* The block's queries q_lo .. q_hi. A block past its sequence's end (packed sequences) loads and
     * stores nothing (no early return: see tests/rusticl). */
    const int q_lo = row_query(m0), q_hi = min(row_query(m0 + BLOCK_M - 1), sq - 1);
    int n_begin = 0, n_end = q_lo < sq ? skv : 0;
#if SPLIT_KV
    { /* this split's keys: an equal share, whole tiles */
        /* (in 64 bits: skv + n_splits and the last split's end may pass 2^31 - 1) */
        const long share = (((long)skv + n_splits - 1) / n_splits + BLOCK_N - 1) / BLOCK_N * BLOCK_N;
        n_begin = (int)min(split * share, (long)skv);
        n_end = (int)min((long)n_end, split * share + share);
    }
#endif
#if HAS_WINDOW
    /* Tiles before the block's first visible key or past its last are never loaded; tiles inside
     * every row's window need no mask. */
    const key_range first_row = visible_keys(q_lo, sq, skv, win_left, win_right);
    const key_range last_row = visible_keys(q_hi, sq, skv, win_left, win_right);
    n_begin = max(n_begin, first_row.lo / BLOCK_N * BLOCK_N);
    n_end = min(n_end, last_row.hi);
    const int inner_lo = last_row.lo, inner_hi = first_row.hi;
#else
    const int inner_lo = 0, inner_hi = skv;
#endif

    VEC acc[TM][NV];
    float m_run[TM], l_part[TM];
    for (int i = 0; i < TM; ++i) {
        for (int v = 0; v < NV; ++v)
            acc[i][v] = VZERO;
        m_run[i] = -INFINITY;
        l_part[i] = 0.0f; /* this work-item's share of the row sum, rescaled with the row */
    }

    /* Global to local copies move float4s: a quarter of the load, store and index instructions. */
#if Q_RESIDENT
    for (int idx = tid; idx < BLOCK_M * HEAD_DIM / 4; idx += WG_SIZE) {
        const int r = idx / (HEAD_DIM / 4);
        const int d = (idx - r * (HEAD_DIM / 4)) * 4;
        const int qi = row_query(m0 + r);
        *(__local float4 *)(q_s + r * LDC + d) =
            qi < sq ? LOAD_Q4(Q, q_row_offset(sv, row_head(m0 + r, h0), qi, q_sb, q_ss, q_sh) + d) : (float4)(0.0f);
    }
#endif

    for (int n0 = n_begin; n0 < n_end; n0 += BLOCK_N) {
        /* S = Q*K^T for this tile, D_CHUNK columns of the head dimension at a time. */
        float s[TM][TN];
        for (int i = 0; i < TM; ++i)
            for (int j = 0; j < TN; ++j)
                s[i][j] = 0.0f;
        for (int d0 = 0; d0 < HEAD_DIM; d0 += D_CHUNK) {
            barrier(CLK_LOCAL_MEM_FENCE); /* the previous chunk (or V, or the reductions) is read */
#if !Q_RESIDENT
            for (int idx = tid; idx < BLOCK_M * D_CHUNK / 4; idx += WG_SIZE) {
                const int r = idx / (D_CHUNK / 4);
                const int d = (idx - r * (D_CHUNK / 4)) * 4;
                const int qi = row_query(m0 + r);
                *(__local float4 *)(q_s + r * LDC + d) =
                    qi < sq ? LOAD_Q4(Q, q_row_offset(sv, row_head(m0 + r, h0), qi, q_sb, q_ss, q_sh) + d0 + d)
                            : (float4)(0.0f);
            }
#endif
            for (int idx = tid; idx < BLOCK_N * D_CHUNK / 4; idx += WG_SIZE) {
                const int c = idx / (D_CHUNK / 4);
                const int d = (idx - c * (D_CHUNK / 4)) * 4;
                const int j = n0 + c;
                *(__local float4 *)(k_s + c * LDC + d) =
                    j < skv ? KV_LOAD4(K, k_base + kv_row(b, j, k_ss, k_sb, BT, max_pages, num_pages) + d0 + d)
                            : (float4)(0.0f);
            }
            barrier(CLK_LOCAL_MEM_FENCE);
#if Q_RESIDENT
            __local const float *const qc = q_s + d0;
#else
            __local const float *const qc = q_s;
#endif
            for (int d = 0; d < D_CHUNK; d += 4) {
                float4 qv[TM], kv[TN];
                for (int i = 0; i < TM; ++i)
                    qv[i] = *(__local const float4 *)(qc + (rg + i * RG) * LDC + d);
                for (int j = 0; j < TN; ++j)
                    kv[j] = *(__local const float4 *)(k_s + (cg + j * CG) * LDC + d);
                for (int i = 0; i < TM; ++i)
                    for (int j = 0; j < TN; ++j) {
                        float t = s[i][j];
                        t = fma(qv[i].x, kv[j].x, t);
                        t = fma(qv[i].y, kv[j].y, t);
                        t = fma(qv[i].z, kv[j].z, t);
                        t = fma(qv[i].w, kv[j].w, t);
                        s[i][j] = t;
                    }
            }
        }

        /* Scale, softcap, biases, masks (scores.cl, in base 2), and this work-item's maximum of each of
         * its rows. Only a tile that crosses a row's window edge or the sequence's end is masked. */
        const bool edge = n0 < inner_lo || n0 + BLOCK_N > inner_hi;
        float mx[TM];
        for (int i = 0; i < TM; ++i) {
            const int pr = m0 + rg + i * RG;
            const int qrow = row_query(pr), hrow = row_head(pr, h0);
            key_range vis = {0, skv};
#if HAS_WINDOW
            if (edge) /* uniform across the work-group: interior tiles skip the row's bounds */
                vis = visible_keys(qrow, sq, skv, win_left, win_right);
#endif
            const score_row mods = score_row_of(LOG2E_F, softcap_log2, ALIBI, alibi_per_batch, MASK, m_sb, m_ss, m_sh, KPM,
                                                seq_kv, heads_q, b, qrow, hrow, (int)ALIGNED_POS(qrow, sq, skv), qrow < sq);
            mx[i] = -INFINITY;
            for (int j = 0; j < TN; ++j) {
                const int key = n0 + cg + j * CG;
                s[i][j] = score_mod(mods, key, s[i][j] * scale_log2, !edge || (key >= vis.lo && key < vis.hi));
                mx[i] = FWD_MAX(mx[i], s[i][j]);
            }
        }
#if !ROW_SHFL
        barrier(CLK_LOCAL_MEM_FENCE); /* the last K chunk is read: red may reuse its memory */
        for (int i = 0; i < TM; ++i)
            red[(rg + i * RG) * CG + cg] = mx[i];
        barrier(CLK_LOCAL_MEM_FENCE);
#endif
        for (int i = 0; i < TM; ++i) {
            const int r = rg + i * RG;
#if ROW_SHFL /* (P goes to the row group's own rows of p_s: the barrier before V's copy orders it) */
            float tile_max = mx[i];
            for (int t = 1; t < CG; t <<= 1)
                tile_max = FWD_MAX(tile_max, row_xor(tile_max, t));
#else
            float tile_max = -INFINITY;
            for (int t = 0; t < CG; ++t)
                tile_max = FWD_MAX(tile_max, red[r * CG + t]);
#endif
            const float2 step = softmax_step(m_run[i], tile_max);
            m_run[i] = step.x;
            float psum = 0.0f;
            for (int j = 0; j < TN; ++j) {
                const float p = softmax_weight(s[i][j], step.x);
                p_s[r * LDP + cg + j * CG] = p;
                psum += p;
            }
            l_part[i] = l_part[i] * step.y + psum;
            for (int v = 0; v < NV; ++v)
                acc[i][v] *= step.y;
        }

        /* O += P*V, V_CHUNK keys at a time. Columns (v*CG + cg)*VW: neighbouring work-items read
         * neighbouring vectors of a V row. */
        for (int c0 = 0; c0 < BLOCK_N; c0 += V_CHUNK) {
            barrier(CLK_LOCAL_MEM_FENCE); /* P is complete; red (or the previous V chunk) is read */
            for (int idx = tid; idx < V_CHUNK * HEAD_DIM_V / 4; idx += WG_SIZE) {
                const int c = idx / (HEAD_DIM_V / 4);
                const int d = (idx - c * (HEAD_DIM_V / 4)) * 4;
                const int j = n0 + c0 + c;
                *(__local float4 *)(v_s + c * HEAD_DIM_V + d) =
                    j < skv ? KV_LOAD4(V, v_base + kv_row(b, j, v_ss, v_sb, BT, max_pages, num_pages) + d)
                            : (float4)(0.0f);
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            for (int c = 0; c < V_CHUNK; c += 4) {
                float4 pv[TM];
                for (int i = 0; i < TM; ++i)
                    pv[i] = *(__local const float4 *)(p_s + (rg + i * RG) * LDP + c0 + c);
                for (int v = 0; v < NV; ++v) {
                    __local const VEC *const vrow = (__local const VEC *)(v_s + c * HEAD_DIM_V) + v * CG + cg;
                    const VEC v0 = vrow[0];
                    const VEC v1 = vrow[HEAD_DIM_V / VW];
                    const VEC v2 = vrow[2 * (HEAD_DIM_V / VW)];
                    const VEC v3 = vrow[3 * (HEAD_DIM_V / VW)];
                    for (int i = 0; i < TM; ++i) {
                        VEC a = acc[i][v];
                        a = fma((VEC)(pv[i].x), v0, a);
                        a = fma((VEC)(pv[i].y), v1, a);
                        a = fma((VEC)(pv[i].z), v2, a);
                        a = fma((VEC)(pv[i].w), v3, a);
                        acc[i][v] = a;
                    }
                }
            }
        }
    }

#if !ROW_SHFL
    barrier(CLK_LOCAL_MEM_FENCE);
    REG_UNROLL
    for (int i = 0; i < TM; ++i)
        red[(rg + i * RG) * CG + cg] = l_part[i];
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
    REG_UNROLL
    for (int i = 0; i < TM; ++i) {
        const int r = rg + i * RG;
        const int qi = row_query(m0 + r), hi = row_head(m0 + r, h0);
#if ROW_SHFL
        float l = l_part[i];
        for (int t = 1; t < CG; t <<= 1)
            l += row_xor(l, t);
#else
        float l = 0.0f;
        for (int t = 0; t < CG; ++t)
            l += red[r * CG + t];
#endif
        if (qi >= sq)
            continue;
        const softmax_end e = softmax_finish(m_run[i], l, SINK_LOGIT2(SINKS, hi));
        const float inv = e.inv * v_descale, lse = softmax_lse(e.m, e.l);
#if SPLIT_KV
        /* the partial result, fp32, (split, row, head_dim_v); its LSE (split, row) */
        const long prow = partial_row(split, rows_total, lse_row(sv, hi, qi, heads_q, seq_q, total_q));
        REG_UNROLL
        for (int v = 0; v < NV; ++v) {
            float out[VW];
            VSTORE(acc[i][v] * inv, out);
            REG_UNROLL
            for (int e = 0; e < VW; ++e)
                OP[prow * HEAD_DIM_V + (v * CG + cg) * VW + e] = out[e];
        }
        if (cg == 0)
            LP[prow] = lse;
#else
        const long o_base = q_row_offset(sv, hi, qi, o_sb, o_ss, o_sh);
        REG_UNROLL
        for (int v = 0; v < NV; ++v) {
            float out[VW];
            VSTORE(acc[i][v] * inv, out);
            REG_UNROLL
            for (int e = 0; e < VW; ++e)
                STORE(O, o_base + (v * CG + cg) * VW + e, out[e]);
        }
        if (write_lse && cg == 0)
            LSE[lse_row(sv, hi, qi, heads_q, seq_q, total_q)] = lse;
#endif
    }
}
