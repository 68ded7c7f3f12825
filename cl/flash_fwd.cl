/*
 * flash_fwd.cl: the portable FlashAttention-2 forward kernel (no vendor extension), register-blocked.
 *
 * One work-group computes BLOCK_M query rows of one (batch, head) and streams the keys BLOCK_N at a
 * time. Its work-items form a grid of RG row groups by CG column groups (CG is the config's
 * threads_per_row). Work-item (rg, cg) owns TM query rows, rg + i*RG for i < TM, and keeps in registers
 *   - a TM x TN block of the scores S = Q*K^T, keys cg + j*CG for j < TN (TN = BLOCK_N / CG), and
 *   - a TM x TD block of the output O, columns (v*CG + cg)*VW + e for v < TD/VW, e < VW (TD = HEAD_DIM/CG).
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
 * Biases and masks, each compiled in only when the problem has it (HAS_ALIBI, HAS_MASK, HAS_KPM):
 * ALiBi's -slope*|i' - j|, an fp32 additive mask, a uint8 key-padding mask; a row left with no key
 * writes zeros and LSE -inf, as under the causal mask.
 *
 * VARLEN: packed sequences of different lengths (CU_Q, CU_K: cumulative lengths, batch + 1 each).
 *
 * Specialised at build time by HEAD_DIM, BLOCK_M, BLOCK_N, TM, CG, D_CHUNK, V_CHUNK, FLASHCL_DTYPE_*.
 * Local memory, in floats (flashcl_flash_local_mem_bytes() must match this exactly), LDC = D_CHUNK+4:
 *   q_res  BLOCK_M*LDC if Q_RESIDENT, else 0
 *   shared max(qk, V_CHUNK*HEAD_DIM, BLOCK_M*CG) where qk = BLOCK_N*LDC (+ BLOCK_M*LDC if not resident)
 *   p_tile BLOCK_M*(BLOCK_N+4)
 * The +4 keeps rows 16-byte aligned for float4 loads while shifting each row by four banks.
 */
#if !defined(HEAD_DIM) || !defined(BLOCK_M) || !defined(BLOCK_N) || !defined(TM) || !defined(CG) || \
    !defined(D_CHUNK) || !defined(V_CHUNK)
#error "flash_fwd.cl needs HEAD_DIM, BLOCK_M, BLOCK_N, TM, CG, D_CHUNK and V_CHUNK"
#endif
#if (BLOCK_M % TM) != 0 || (BLOCK_N % CG) != 0 || (HEAD_DIM % CG) != 0
#error "TM must divide BLOCK_M, CG must divide BLOCK_N and HEAD_DIM"
#endif
#if (D_CHUNK % 4) != 0 || (HEAD_DIM % D_CHUNK) != 0 || (V_CHUNK % 4) != 0 || (BLOCK_N % V_CHUNK) != 0
#error "D_CHUNK must be a multiple of 4 dividing HEAD_DIM; V_CHUNK a multiple of 4 dividing BLOCK_N"
#endif

#define RG (BLOCK_M / TM)
#define WG_SIZE (RG * CG)
#define TN (BLOCK_N / CG)
#define TD (HEAD_DIM / CG)
#define LDC (D_CHUNK + 4)
#define LDP (BLOCK_N + 4)
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

#if Q_RESIDENT
#define QK_FLOATS (BLOCK_N * LDC)
#else
#define QK_FLOATS ((BLOCK_M + BLOCK_N) * LDC)
#endif
#define SH_MAX2(a, b) ((a) > (b) ? (a) : (b))
#define SHARED_FLOATS SH_MAX2(SH_MAX2(QK_FLOATS, V_CHUNK * HEAD_DIM), BLOCK_M * CG)

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void
flash_fwd(__global const STORE_T *restrict Q, __global const STORE_T *restrict K,
          __global const STORE_T *restrict V, __global STORE_T *restrict O, __global float *restrict LSE,
          const int seq_q, const int seq_kv, const int heads_q, const int group, float scale_log2,
          const int win_left, const int win_right, const float softcap_log2, const int write_lse,
          const long q_sb, const long q_ss, const long q_sh,
          const long k_sb, const long k_ss, const long k_sh,
          const long v_sb, const long v_ss, const long v_sh,
          const long o_sb, const long o_ss, const long o_sh,
          __global const float *restrict ALIBI, const int alibi_per_batch,
          __global const float *restrict MASK, const long m_sb, const long m_ss, const long m_sh,
          __global const uchar *restrict KPM, __global const int *restrict CU_Q, __global const int *restrict CU_K,
          const int total_q, const int total_kv, const int n_splits, __global float *restrict OP,
          __global float *restrict LP, const long rows_total, __global const int *restrict CACHE_LENS,
          __global const int *restrict BT, const int max_pages, const int num_pages)
{
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
    /* Split-KV (flash-decoding): dimension 1 numbers (batch * heads_q) x n_splits work-groups; split
     * s covers one contiguous range of the keys and writes its normalised partial output and its
     * log-sum-exp to OP/LP, which flash_combine merges. n_splits == 1: the direct path. */
    const int split = get_group_id(1) % n_splits;
    const int bh = get_group_id(1) / n_splits;
    /* Where key row j of this sequence sits in K (and V): contiguous, or page BT[b][j / PAGE_SIZE]. */
#if PAGE_SIZE
#define KV_ROW(j, rs, ps)                                                                                \
    ((long)clamp(BT[(long)b * max_pages + (j) / PAGE_SIZE], 0, num_pages - 1) * (ps) + (long)((j) % PAGE_SIZE) * (rs))
#else
#define KV_ROW(j, rs, ps) ((long)(j) * (rs))
#endif
#if GQA_PACK > 1
    /* GQA packing (decode): the GQA_PACK query heads that share KV head hk are rows of one block, so
     * K and V are loaded once for all of them. Packed row pr is query pr / GQA_PACK of head
     * hk * GQA_PACK + pr % GQA_PACK; dimension 1 numbers (batch, KV head). */
    const int b = bh / (heads_q / GQA_PACK);
    const int hk = bh - b * (heads_q / GQA_PACK);
#define ROW_Q(pr) ((pr) / GQA_PACK)
#define ROW_H(pr) (hk * GQA_PACK + (pr) % GQA_PACK)
#else
    const int b = bh / heads_q;
    const int h = bh - b * heads_q;
    const int hk = h / group;
#define ROW_Q(pr) (pr)
#define ROW_H(pr) (h)
#endif

#if VARLEN
    /* Packed sequences: sequence b is rows CU_Q[b] .. CU_Q[b+1] of Q and O, CU_K[b] .. of K and V;
     * seq_q and seq_kv are only the maxima (the grid). LSE is (heads_q, total_q). A block past its
     * sequence's end loads nothing and stores nothing (no early return: see tests/rusticl). */
    /* Clamped to the buffers: cu_seqlens that are wrong give wrong rows, never an access outside. */
    const int q_start = clamp(CU_Q[b], 0, total_q), k_start = clamp(CU_K[b], 0, total_kv);
    const int sq = clamp(CU_Q[b + 1], q_start, total_q) - q_start;
    const int skv = clamp(CU_K[b + 1], k_start, total_kv) - k_start;
    const long q_base = (long)q_start * q_ss; /* + the row's head */
    const long k_base = (long)k_start * k_ss + hk * k_sh;
    const long v_base = (long)k_start * v_ss + hk * v_sh;
    const long o_row0 = (long)q_start * o_ss;
#define LSE_ROW(hh, qq) ((long)(hh) * total_q + q_start + (qq))
#else
    const int sq = seq_q;
#if KV_CACHE /* the filled part of this sequence's cache (after the append) */
    const int skv = clamp(CACHE_LENS[b] + (KV_APPEND ? seq_q : 0), 0, seq_kv);
#else
    const int skv = seq_kv;
#endif
    const long q_base = b * q_sb; /* + the row's head */
#if PAGE_SIZE /* K/V rows through the block table; the "batch" stride is the page stride */
    const long k_base = hk * k_sh;
    const long v_base = hk * v_sh;
#else
    const long k_base = b * k_sb + hk * k_sh;
    const long v_base = b * v_sb + hk * v_sh;
#endif
    const long o_row0 = b * o_sb;
#define LSE_ROW(hh, qq) (((long)b * heads_q + (hh)) * seq_q + (qq))
#endif

    /* Row i sees keys i + shift - win_left ... i + shift + win_right (shift = skv - sq: the causal
     * mask's bottom-right alignment; -1: that side unbounded; causal is win_right = 0). Tiles before
     * the block's first visible key or past its last are never loaded. */
    const int shift = skv - sq;
    /* The block's queries: q_lo .. q_hi (packed: GQA_PACK rows per query). */
    const int q_lo = ROW_Q(m0), q_hi = ROW_Q(m0 + BLOCK_M - 1);
    int n_begin = 0, n_end = q_lo < sq ? skv : 0;
    if (n_splits > 1) { /* this split's keys: an equal share, whole tiles */
        const int share = ((skv + n_splits - 1) / n_splits + BLOCK_N - 1) / BLOCK_N * BLOCK_N;
        n_begin = split * share;
        n_end = min(n_end, n_begin + share);
    }
    if (win_left >= 0)
        n_begin = max(n_begin, clamp(q_lo + shift - win_left, 0, skv) / BLOCK_N * BLOCK_N);
    if (win_right >= 0)
        n_end = min(n_end, clamp(q_hi + shift + win_right + 1, 0, skv));

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
        const int qi = ROW_Q(m0 + r);
        *(__local float4 *)(q_s + r * LDC + d) =
            qi < sq ? LOAD4(Q, q_base + (long)ROW_H(m0 + r) * q_sh + (long)qi * q_ss + d) : (float4)(0.0f);
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
                const int qi = ROW_Q(m0 + r);
                *(__local float4 *)(q_s + r * LDC + d) =
                    qi < sq ? LOAD4(Q, q_base + (long)ROW_H(m0 + r) * q_sh + (long)qi * q_ss + d0 + d)
                            : (float4)(0.0f);
            }
#endif
            for (int idx = tid; idx < BLOCK_N * D_CHUNK / 4; idx += WG_SIZE) {
                const int c = idx / (D_CHUNK / 4);
                const int d = (idx - c * (D_CHUNK / 4)) * 4;
                const int j = n0 + c;
                *(__local float4 *)(k_s + c * LDC + d) =
                    j < skv ? LOAD4(K, k_base + KV_ROW(j, k_ss, k_sb) + d0 + d) : (float4)(0.0f);
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

        /* Scale (and softcap: cap*tanh(s/cap), in base 2 as c2*tanh(s2/c2) with c2 = cap*log2(e)),
         * mask, and this work-item's maximum of each of its rows. */
        float mx[TM];
        for (int i = 0; i < TM; ++i) {
            const int qrow = ROW_Q(m0 + rg + i * RG), hrow = ROW_H(m0 + rg + i * RG);
            const int pos = qrow + shift;
#if HAS_ALIBI
            const float alibi_log2 = ALIBI[alibi_per_batch ? (long)b * heads_q + hrow : hrow] * LOG2E_F;
#endif
            const int first_key = win_left >= 0 ? pos - win_left : 0;
            const int last_key = win_right >= 0 ? min(pos + win_right, skv - 1) : skv - 1;
            mx[i] = -INFINITY;
            for (int j = 0; j < TN; ++j) {
                const int key = n0 + cg + j * CG;
                float t = s[i][j] * scale_log2;
                if (softcap_log2 > 0.0f)
                    t = softcap_log2 * tanh(t / softcap_log2);
                bool visible = key >= first_key && key <= last_key;
#if HAS_ALIBI
                t -= alibi_log2 * fabs((float)(pos - key));
#endif
#if HAS_MASK
                if (visible && qrow < sq)
                    t += MASK[b * m_sb + (long)qrow * m_ss + (long)hrow * m_sh + key] * LOG2E_F;
#endif
#if HAS_KPM
                if (visible && KPM[(long)b * seq_kv + key])
                    visible = false;
#endif
                s[i][j] = visible ? t : -INFINITY;
                mx[i] = max_nan(mx[i], s[i][j]);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE); /* the last K chunk is read: red may reuse its memory */
        for (int i = 0; i < TM; ++i)
            red[(rg + i * RG) * CG + cg] = mx[i];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int i = 0; i < TM; ++i) {
            const int r = rg + i * RG;
            float m_new = m_run[i];
            for (int t = 0; t < CG; ++t)
                m_new = max_nan(m_new, red[r * CG + t]);
            /* A row that has seen no key yet keeps m = -inf: its weights are 0 and nothing rescales.
             * A NaN score makes m NaN, and with it every weight and output of its row (only). */
            const bool empty = m_new == -INFINITY;
            const float alpha = empty ? 1.0f : exp2(m_run[i] - m_new);
            float psum = 0.0f;
            for (int j = 0; j < TN; ++j) {
                const float p = empty ? 0.0f : exp2(s[i][j] - m_new);
                p_s[r * LDP + cg + j * CG] = p;
                psum += p;
            }
            l_part[i] = l_part[i] * alpha + psum;
            for (int v = 0; v < NV; ++v)
                acc[i][v] *= alpha;
            m_run[i] = m_new;
        }

        /* O += P*V, V_CHUNK keys at a time. Columns (v*CG + cg)*VW: neighbouring work-items read
         * neighbouring vectors of a V row. */
        for (int c0 = 0; c0 < BLOCK_N; c0 += V_CHUNK) {
            barrier(CLK_LOCAL_MEM_FENCE); /* P is complete; red (or the previous V chunk) is read */
            for (int idx = tid; idx < V_CHUNK * HEAD_DIM / 4; idx += WG_SIZE) {
                const int c = idx / (HEAD_DIM / 4);
                const int d = (idx - c * (HEAD_DIM / 4)) * 4;
                const int j = n0 + c0 + c;
                *(__local float4 *)(v_s + c * HEAD_DIM + d) =
                    j < skv ? LOAD4(V, v_base + KV_ROW(j, v_ss, v_sb) + d) : (float4)(0.0f);
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            for (int c = 0; c < V_CHUNK; c += 4) {
                float4 pv[TM];
                for (int i = 0; i < TM; ++i)
                    pv[i] = *(__local const float4 *)(p_s + (rg + i * RG) * LDP + c0 + c);
                for (int v = 0; v < NV; ++v) {
                    __local const VEC *const vrow = (__local const VEC *)(v_s + c * HEAD_DIM) + v * CG + cg;
                    const VEC v0 = vrow[0];
                    const VEC v1 = vrow[HEAD_DIM / VW];
                    const VEC v2 = vrow[2 * (HEAD_DIM / VW)];
                    const VEC v3 = vrow[3 * (HEAD_DIM / VW)];
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

    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = 0; i < TM; ++i)
        red[(rg + i * RG) * CG + cg] = l_part[i];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = 0; i < TM; ++i) {
        const int r = rg + i * RG;
        const int qi = ROW_Q(m0 + r), hi = ROW_H(m0 + r);
        float l = 0.0f;
        for (int t = 0; t < CG; ++t)
            l += red[r * CG + t];
        if (qi >= sq)
            continue;
        const float inv = l > 0.0f ? 1.0f / l : 0.0f; /* no visible key: zeros, never NaN */
        const float lse = l > 0.0f ? (m_run[i] + log2(l)) * LN2_F : -INFINITY;
        if (n_splits > 1) { /* partial result, fp32, (split, row, head_dim); its LSE (split, row) */
            const long prow = (long)split * rows_total + LSE_ROW(hi, qi);
            for (int v = 0; v < NV; ++v) {
                float out[VW];
                VSTORE(acc[i][v] * inv, out);
                for (int e = 0; e < VW; ++e)
                    OP[prow * HEAD_DIM + (v * CG + cg) * VW + e] = out[e];
            }
            if (cg == 0)
                LP[prow] = lse;
            continue;
        }
        const long o_base = o_row0 + (long)hi * o_sh + (long)qi * o_ss;
        for (int v = 0; v < NV; ++v) {
            float out[VW];
            VSTORE(acc[i][v] * inv, out);
            for (int e = 0; e < VW; ++e)
                STORE(O, o_base + (v * CG + cg) * VW + e, out[e]);
        }
        if (write_lse && cg == 0)
            LSE[LSE_ROW(hi, qi)] = lse;
    }
}

/*
 * Merges the splits of split-KV: for each row, O = sum_s w_s O_s / sum_s w_s with w_s = exp(LSE_s - m),
 * m = max_s LSE_s, and LSE = m + log(sum_s w_s). Splits that saw no key (LSE -inf) weigh 0; a row no
 * split saw is zeros with LSE -inf. A NaN partial keeps its row NaN. One work-item per (row, column);
 * rows numbered as LSE is (padded: (b * heads_q + h) * seq_q + i; packed: h * total_q + token).
 */
__kernel void flash_combine(__global const float *restrict OP, __global const float *restrict LP,
                            const int n_splits, const long rows_total, __global STORE_T *restrict O,
                            __global float *restrict LSE, const int write_lse, const int group_rows,
                            const int heads_q, const long o_sb, const long o_ss, const long o_sh,
                            const int varlen)
{
    const long gid = get_global_id(0);
    if (gid >= rows_total * HEAD_DIM)
        return;
    const long row = gid / HEAD_DIM;
    const int d = (int)(gid - row * HEAD_DIM);
    float m = -INFINITY;
    for (int s = 0; s < n_splits; ++s)
        m = max_nan(m, LP[s * rows_total + row]);
    float num = 0.0f, den = 0.0f;
    if (m != -INFINITY)
        for (int s = 0; s < n_splits; ++s) {
            const float lse = LP[s * rows_total + row];
            const float w = lse == -INFINITY ? 0.0f : exp(lse - m);
            num += w * OP[(s * rows_total + row) * HEAD_DIM + d];
            den += w;
        }
    const long g = row / group_rows, i = row - g * group_rows;
    /* padded: g = b * heads_q + h, i the query; packed: g = h, i the token (batch stride unused) */
    const long o = varlen ? i * o_ss + g * o_sh : (g / heads_q) * o_sb + i * o_ss + (g % heads_q) * o_sh;
    STORE(O, o + d, m == -INFINITY ? 0.0f : num / den);
    if (write_lse && d == 0)
        LSE[row] = m == -INFINITY ? -INFINITY : m + log(den);
}
