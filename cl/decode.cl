/* SPDX-License-Identifier: MIT */
/*
 * decode.cl: what the two decode kernels share (flash_decode.cl for any device, flash_decode_mma.cl
 * on the matrix units): the keys a work-group reads, and the one merge of its parts' states at the end.
 * A decode work-group owns (batch, KV head, key split) and `rows` packed query rows of that KV head
 * (row pr is query pr / group of head hk*group + pr % group), and takes its keys `step` at a time.
 * Needs HEAD_DIM.
 */

/* The caller's offsets (cl/args.h's fcl_kernel_offsets, unpacked), applied at the start of both decode kernels. */
#define DECODE_APPLY_OFFSETS()                                                                           \
    (APPLY_QKVO_OFFSETS(), ALIBI += alibi_off, KPM += kpm_off, CACHE_LENS += cache_lens_off, BT += bt_off, \
     K_SCALE += k_scale_off, V_SCALE += v_scale_off, SINKS += sinks_off, OP += op_off, LP += lp_off,     \
     BATCH_IDX += cache_idx_off, LEFT_PAD += leftpad_off)

/* What a decode work-group owns, from its ids: grid (row chunks of `rows`, batch x KV heads x splits). */
typedef struct decode_group {
    int split, b, hk, heads_kv, pr0; /* pr0: its first packed row */
    seq_view sv;
    long k_base, v_base; /* its sequence's K and V rows of KV head hk (geometry.cl kv_base) */
} decode_group;

inline decode_group decode_group_of(const int rows, const int heads_q, const int group, const int n_splits,
                                    const int seq_q, const int seq_kv, __global const int *cache_lens,
                                    __global const int *cache_idx, __global const int *leftpad, const int cache_batch,
                                    const long k_sb, const long k_ss, const long k_sh, const long v_sb,
                                    const long v_ss, const long v_sh)
{
    decode_group w;
    w.heads_kv = heads_q / group;
#if SPLIT_KV
    w.split = get_group_id(1) % n_splits;
    const int bhk = get_group_id(1) / n_splits;
#else
    w.split = 0;
    const int bhk = get_group_id(1);
#endif
    w.b = bhk / w.heads_kv;
    w.hk = bhk - w.b * w.heads_kv;
    w.pr0 = get_group_id(0) * rows;
    w.sv = seq_view_of(w.b, seq_q, seq_kv, 0, 0, 0, 0, cache_lens, cache_idx, leftpad, cache_batch);
    w.k_base = kv_base(w.sv, w.hk, k_sb, k_ss, k_sh);
    w.v_base = kv_base(w.sv, w.hk, v_sb, v_ss, v_sh);
    return w;
}

typedef struct decode_keys {
    int begin, end;         /* the keys the work-group reads, in whole steps from begin */
    int inner_lo, inner_hi; /* the keys every one of its rows sees: no window test there */
} decode_keys;

/* The keys its rows see (the window), its split's share (a whole number of steps, so that every step
 * of `step` keys starts at a multiple of `step`: a paged cache's page holds whole steps). */
inline decode_keys decode_key_range(const int pr0, const int rows, const int group, const int sq, const int skv,
                                    const int split, const int n_splits, const int step, const int win_left,
                                    const int win_right)
{
    decode_keys r;
    const int q_lo = pr0 / group, q_hi = min((pr0 + rows - 1) / group, sq - 1);
    r.begin = 0;
    r.end = q_lo < sq ? skv : 0;
#if SPLIT_KV
    const int share = ((skv + n_splits - 1) / n_splits + step - 1) / step * step;
    r.begin = split * share;
    r.end = min(r.end, r.begin + share);
#endif
#if HAS_WINDOW
    const key_range first_row = visible_keys(q_lo, sq, skv, win_left, win_right);
    const key_range last_row = visible_keys(q_hi, sq, skv, win_left, win_right);
    r.begin = max(r.begin, first_row.lo / step * step);
    r.end = min(r.end, last_row.hi);
    r.inner_lo = last_row.lo;
    r.inner_hi = first_row.hi;
#else
    r.inner_lo = 0;
    r.inner_hi = skv;
#endif
    return r;
}

/* The merge: `parts` partial states of each of the `rows` rows in local memory (m_p and l_p
 * [parts][rows], o_p [parts][rows][HEAD_DIM], written before a barrier), combined per (row, element)
 * as O = sum_p o_p 2^(m_p - M) / sum_p l_p 2^(m_p - M) with M = max_p m_p; then O and the LSE, or under
 * split-KV the split's normalised partial result and LSE for flash_combine. The work-group's `wg`
 * items share the elements; rows past the step's queries are not written. */
inline void decode_merge_store(__local const float *m_p, __local const float *l_p, __local const float *o_p,
                               const int parts, const int rows, const int lid, const int wg, const seq_view sv,
                               const int pr0, const int group, const int hk, const int heads_q, const int seq_q,
                               const int split, const long rows_total, __global float *OP, __global float *LP,
                               __global STORE_T *O, __global float *LSE, const int write_lse, const long o_sb,
                               const long o_ss, const long o_sh, __global const float *SINKS)
{
    for (int idx = lid; idx < rows * HEAD_DIM; idx += wg) {
        const int r = idx / HEAD_DIM, d = idx - r * HEAD_DIM;
        const int pr = pr0 + r, qi = pr / group, h = hk * group + pr % group;
        if (qi >= sv.sq)
            continue;
        float m = -INFINITY;
        for (int p = 0; p < parts; ++p)
            m = max_nan(m, m_p[p * rows + r]);
        float l = 0.0f, o = 0.0f;
        for (int p = 0; p < parts; ++p) {
            const float w = softmax_weight(m_p[p * rows + r], m);
            l += l_p[p * rows + r] * w;
            o += o_p[(p * rows + r) * HEAD_DIM + d] * w;
        }
        const softmax_end e = softmax_finish(m, l, SINK_LOGIT2(SINKS, h));
        const float out = o * e.inv, lse = softmax_lse(e.m, e.l);
#if SPLIT_KV
        const long prow = partial_row(split, rows_total, lse_row(sv, h, qi, heads_q, seq_q, 0));
        OP[prow * HEAD_DIM + d] = out;
        if (d == 0)
            LP[prow] = lse;
#else
        STORE(O, q_row_offset(sv, h, qi, o_sb, o_ss, o_sh) + d, out);
        if (write_lse && d == 0)
            LSE[lse_row(sv, h, qi, heads_q, seq_q, 0)] = lse;
#endif
    }
}
