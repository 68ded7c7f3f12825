/*
 * flash_fwd.cl: the portable FlashAttention-2 forward kernel (no vendor extension).
 *
 * One work-group computes BLOCK_M query rows of one (batch, head). Its Q tile stays in local memory;
 * K and V stream through local memory BLOCK_N keys at a time. TPR work-items share a query row:
 * each computes BLOCK_N/TPR scores of the row and owns HEAD_DIM/TPR columns of its output in
 * registers. The online softmax keeps a running maximum and sum per row and rescales the output when
 * the maximum moves, so the n x n score matrix never exists. Scores are kept in base 2 (Q is
 * pre-multiplied by scale*log2(e)) so every exponential is one exp2.
 *
 * Specialised at build time by: HEAD_DIM, BLOCK_M, BLOCK_N, TPR, KV_SHARED and FLASHCL_DTYPE_*.
 * KV_SHARED=1 loads V into the K tile's memory once the scores are computed: one more barrier per
 * tile, BLOCK_N*HEAD_DIM floats less, for devices whose local memory cannot hold both.
 * Local memory, in floats (flashcl_flash_local_mem_bytes() must match this exactly):
 *   q_tile BLOCK_M*(HEAD_DIM+1) + k_tile BLOCK_N*(HEAD_DIM+1) + v_tile BLOCK_N*HEAD_DIM (0 if KV_SHARED)
 *   + p_tile BLOCK_M*(BLOCK_N+1) + red BLOCK_M*TPR
 * The +1 pads rows so that the TPR work-items of a row, reading different keys at the same depth,
 * hit different banks.
 */
#if !defined(HEAD_DIM) || !defined(BLOCK_M) || !defined(BLOCK_N) || !defined(TPR)
#error "flash_fwd.cl needs HEAD_DIM, BLOCK_M, BLOCK_N and TPR"
#endif
#if (HEAD_DIM % TPR) != 0 || (BLOCK_N % TPR) != 0
#error "TPR must divide HEAD_DIM and BLOCK_N"
#endif

#ifndef KV_SHARED
#define KV_SHARED 0
#endif
#define WG_SIZE (BLOCK_M * TPR)
#define LDQK (HEAD_DIM + 1)
#define LDP (BLOCK_N + 1)
#define D_PER_T (HEAD_DIM / TPR)
#define N_PER_T (BLOCK_N / TPR)

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void
flash_fwd(__global const STORE_T *restrict Q, __global const STORE_T *restrict K,
          __global const STORE_T *restrict V, __global STORE_T *restrict O, __global float *restrict LSE,
          const int seq_q, const int seq_kv, const int heads_q, const int group, float scale_log2,
          const int causal, const int write_lse,
          const long q_sb, const long q_ss, const long q_sh,
          const long k_sb, const long k_ss, const long k_sh,
          const long v_sb, const long v_ss, const long v_sh,
          const long o_sb, const long o_ss, const long o_sh)
{
    __local float q_tile[BLOCK_M * LDQK];
    __local float k_tile[BLOCK_N * LDQK];
#if KV_SHARED
#define V_AT(c, d) k_tile[(c) * LDQK + (d)]
#else
    __local float v_tile[BLOCK_N * HEAD_DIM];
#define V_AT(c, d) v_tile[(c) * HEAD_DIM + (d)]
#endif
    __local float p_tile[BLOCK_M * LDP];
    __local float red[BLOCK_M * TPR];

#ifdef FLASHCL_DEBUG_SCALE
    /* Fault injection for the validation tests: a kernel that is wrong on purpose. */
    scale_log2 *= FLASHCL_DEBUG_SCALE;
#endif
    const int tid = get_local_id(0);
    const int row = tid / TPR;
    const int lane = tid - row * TPR;
    const int m0 = get_group_id(0) * BLOCK_M;
    const int bh = get_group_id(1);
    const int b = bh / heads_q;
    const int h = bh - b * heads_q;
    const int hk = h / group;
    const int qi = m0 + row;

    const long q_base = b * q_sb + h * q_sh;
    const long k_base = b * k_sb + hk * k_sh;
    const long v_base = b * v_sb + hk * v_sh;

    for (int idx = tid; idx < BLOCK_M * HEAD_DIM; idx += WG_SIZE) {
        const int r = idx / HEAD_DIM;
        const int d = idx - r * HEAD_DIM;
        const int i = m0 + r;
        q_tile[r * LDQK + d] = i < seq_q ? LOAD(Q, q_base + (long)i * q_ss + d) * scale_log2 : 0.0f;
    }

    /* Causal, bottom-right aligned: row i sees keys j <= i + seq_kv - seq_q. Tiles past the block's
     * last visible key are never loaded. */
    const int shift = seq_kv - seq_q;
    int n_end = seq_kv;
    if (causal)
        n_end = clamp(m0 + BLOCK_M + shift, 0, seq_kv);
    const int last_key = causal ? qi + shift : seq_kv - 1;

    float acc[D_PER_T];
    for (int k = 0; k < D_PER_T; ++k)
        acc[k] = 0.0f;
    float m_run = -INFINITY;
    float l_part = 0.0f; /* this work-item's share of the row sum, rescaled with the row */

    for (int n0 = 0; n0 < n_end; n0 += BLOCK_N) {
        barrier(CLK_LOCAL_MEM_FENCE); /* the previous tile is no longer read */
        for (int idx = tid; idx < BLOCK_N * HEAD_DIM; idx += WG_SIZE) {
            const int c = idx / HEAD_DIM;
            const int d = idx - c * HEAD_DIM;
            const int j = n0 + c;
            const bool in = j < seq_kv;
            k_tile[c * LDQK + d] = in ? LOAD(K, k_base + (long)j * k_ss + d) : 0.0f;
#if !KV_SHARED
            V_AT(c, d) = in ? LOAD(V, v_base + (long)j * v_ss + d) : 0.0f;
#endif
        }
        barrier(CLK_LOCAL_MEM_FENCE);

        float s[N_PER_T];
        float tile_max = -INFINITY;
        for (int jj = 0; jj < N_PER_T; ++jj) {
            const int c = lane + jj * TPR;
            float dot = 0.0f;
            for (int d = 0; d < HEAD_DIM; ++d)
                dot = fma(q_tile[row * LDQK + d], k_tile[c * LDQK + d], dot);
            const int j = n0 + c;
            s[jj] = (j < seq_kv && j <= last_key) ? dot : -INFINITY;
            tile_max = max_nan(tile_max, s[jj]);
        }
        red[tid] = tile_max;
        barrier(CLK_LOCAL_MEM_FENCE);
        float m_new = m_run;
        for (int t = 0; t < TPR; ++t)
            m_new = max_nan(m_new, red[row * TPR + t]);
        /* A row that has seen no key yet keeps m = -inf: its weights are 0 and nothing rescales. A NaN
         * score makes m NaN, and with it every weight and output of its row (and of that row only). */
        const bool empty = m_new == -INFINITY;
        const float alpha = empty ? 1.0f : exp2(m_run - m_new);
        float psum = 0.0f;
        for (int jj = 0; jj < N_PER_T; ++jj) {
            const float p = empty ? 0.0f : exp2(s[jj] - m_new);
            p_tile[row * LDP + lane + jj * TPR] = p;
            psum += p;
        }
        l_part = l_part * alpha + psum;
        for (int k = 0; k < D_PER_T; ++k)
            acc[k] *= alpha;
        m_run = m_new;
        barrier(CLK_LOCAL_MEM_FENCE); /* p_tile complete, k_tile no longer read */
#if KV_SHARED
        for (int idx = tid; idx < BLOCK_N * HEAD_DIM; idx += WG_SIZE) {
            const int c = idx / HEAD_DIM;
            const int d = idx - c * HEAD_DIM;
            const int j = n0 + c;
            V_AT(c, d) = j < seq_kv ? LOAD(V, v_base + (long)j * v_ss + d) : 0.0f;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
#endif

        for (int c = 0; c < BLOCK_N; ++c) {
            const float p = p_tile[row * LDP + c];
            for (int k = 0; k < D_PER_T; ++k)
                acc[k] = fma(p, V_AT(c, lane + k * TPR), acc[k]);
        }
    }

    barrier(CLK_LOCAL_MEM_FENCE);
    red[tid] = l_part;
    barrier(CLK_LOCAL_MEM_FENCE);
    float l = 0.0f;
    for (int t = 0; t < TPR; ++t)
        l += red[row * TPR + t];

    if (qi < seq_q) {
        const float inv = l > 0.0f ? 1.0f / l : 0.0f; /* no visible key: zeros, never NaN */
        const long o_base = b * o_sb + (long)qi * o_ss + h * o_sh;
        for (int k = 0; k < D_PER_T; ++k)
            STORE(O, o_base + lane + k * TPR, acc[k] * inv);
        if (write_lse && lane == 0)
            LSE[((long)b * heads_q + h) * seq_q + qi] = l > 0.0f ? (m_run + log2(l)) * LN2_F : -INFINITY;
    }
}
