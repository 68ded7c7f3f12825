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

/* The keys its rows see (the window), its split's share (a multiple of `step`, so that every split and
 * window start is a multiple of `step`: a paged cache's page holds whole steps, or for
 * flash_decode_mma's eight warps whole warp steps). */
inline decode_keys decode_key_range(const int pr0, const int rows, const int group, const int sq, const int skv,
                                    const int split, const int n_splits, const int step, const int win_left,
                                    const int win_right)
{
    decode_keys r;
    const int q_lo = pr0 / group, q_hi = min((pr0 + rows - 1) / group, sq - 1);
    r.begin = 0;
    r.end = q_lo < sq ? skv : 0;
#if SPLIT_KV
    /* (in 64 bits: skv + n_splits and the last split's end may pass 2^31 - 1) */
    const long share = (((long)skv + n_splits - 1) / n_splits + step - 1) / step * step;
    r.begin = (int)min(split * share, (long)skv);
    r.end = (int)min((long)r.end, split * share + share);
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

#if SPLIT_KV && FUSED_MERGE
#ifndef DECODE_MERGE_BATCH
#define DECODE_MERGE_BATCH 8
#endif
/* DECODE_MERGE_PREFETCH (a variant, 0 = off: docs/design/decode_mma.md, decode-mma-26): an item's first
 * element's partials of up to that many splits loaded with the splits' LSEs, before the weights are
 * reduced, so that the merge waits for memory once where it waited three times */
#ifndef DECODE_MERGE_PREFETCH
#define DECODE_MERGE_PREFETCH 0
#endif
/* Split-KV's merge in the decode kernel (docs/design/decode_mma.md, "The merge in the kernel"): after a
 * work-group has written its split's partial rows, it counts itself on its row block's counter (CNT: one
 * an (batch, KV head, row block), zero between steps); the one that counts last merges the splits as
 * flash_combine does and sets the counter back to zero. Returns whether this work-group is that one.
 * On NVIDIA a gpu-scope fence orders the partials before the count and the count before their reads
 * (FCL_PTX; mem_fence elsewhere, where the emulation runs on one device's coherent memory). */
#if FCL_PTX
#define DECODE_FENCE_GPU() __asm__ volatile("fence.acq_rel.gpu;" ::: "memory")
#else
#define DECODE_FENCE_GPU() mem_fence(CLK_GLOBAL_MEM_FENCE)
#endif
inline int decode_last_split(__global int *cnt, __local int *flag, const int n_splits, const int lid)
{
    DECODE_FENCE_GPU(); /* (each work-item's partial results, before the work-group's count) */
    barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        DECODE_FENCE_GPU();
        __global int *const c = cnt + (long)(get_group_id(1) / n_splits) * get_num_groups(0) + get_group_id(0);
        const int last = atomic_inc(c) == n_splits - 1;
        if (last) {
            DECODE_FENCE_GPU(); /* (the other splits' partials, after their counts) */
            atomic_xchg(c, 0);
        }
        *flag = last;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    return *flag;
}

/* The last split's merge of its rows (flash_combine.cl's formula, natural logs: each split's partial row
 * weighs exp(LSE_s - m); a split with no key weighs 0; the sink joins the denominator once), with the
 * work-group's `wg` items: the splits' LSEs into local memory (lw: rows x n_splits floats and 2 rows, the
 * kernel's merge area, free again; where they do not fit each element recomputes its row's weights), a
 * row's weights and LSE by one item, then each item's four elements' sums over the splits. The partials are
 * plain loads: decode_last_split's acquire fence (a gpu-scope fence on NVIDIA, which also drops what the
 * SM's L1 holds) orders them after the other splits' writes, which the barrier passes on to the whole
 * work-group. */
/* (larger with DECODE_MERGE_PREFETCH: clang leaves it out of line, where an OpenCL inline function has no body) */
#if DECODE_MERGE_PREFETCH
__attribute__((always_inline))
#endif
inline void decode_fused_combine(const int rows, const int lid, const int wg, __local float *lw, const int lw_floats,
                                 const seq_view sv, const int pr0, const int group, const int hk, const int heads_q,
                                 const int seq_q, const int n_splits, const long rows_total, __global const float *OP_,
                                 __global const float *LP_, __global STORE_T *O, __global float *LSE,
                                 const int write_lse, const long o_sb, const long o_ss, const long o_sh,
                                 __global const float *SINKS)
{
    const int staged = rows * (n_splits + 2) <= lw_floats;
    __local float *const row_m = lw + rows * n_splits, *const row_lse = row_m + rows;
#if DECODE_MERGE_PREFETCH
    /* (the first element of this item, as the staged loop below takes it: its row's partials, loaded now) */
    const int pre_on = staged && n_splits <= DECODE_MERGE_PREFETCH && lid < rows * (HEAD_DIM / 4);
    float4 pre[DECODE_MERGE_PREFETCH];
    {
        const int r = lid / (HEAD_DIM / 4), d = 4 * (lid - r * (HEAD_DIM / 4));
        const int pr = pr0 + r, qi = pr / group, h = hk * group + pr % group;
        const int mine = pre_on && qi < sv.sq;
        const long row = mine ? lse_row(sv, h, qi, heads_q, seq_q, 0) : 0;
        __global const float *const op = OP_ + partial_row(0, rows_total, row) * HEAD_DIM + d;
        const long split_stride = partial_row(1, rows_total, 0) * HEAD_DIM;
#pragma unroll
        for (int u = 0; u < DECODE_MERGE_PREFETCH; ++u)
            pre[u] = mine && u < n_splits ? vload4(0, op + u * split_stride) : (float4)(0.0f);
    }
#endif
    if (staged) {
        for (int idx = lid; idx < rows * n_splits; idx += wg) {
            const int r = idx / n_splits, s = idx - r * n_splits;
            const int pr = pr0 + r, qi = pr / group, h = hk * group + pr % group;
            lw[idx] = qi < sv.sq ? LP_[partial_row(s, rows_total, lse_row(sv, h, qi, heads_q, seq_q, 0))] : -INFINITY;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int r = lid; r < rows; r += wg) { /* a row's weights w_s / sum, in place; its maximum and LSE */
            const int h = hk * group + (pr0 + r) % group;
            float m = -INFINITY;
            for (int s = 0; s < n_splits; ++s)
                m = max_nan(m, lw[r * n_splits + s]);
#if HAS_SINKS
            const float sink = SINKS[h];
            if (sink != -INFINITY && !isnan(m))
                m = fmax(m, sink);
#endif
            float den = 0.0f;
            if (m != -INFINITY) {
                for (int s = 0; s < n_splits; ++s) {
                    const float lse = lw[r * n_splits + s];
                    const float w = lse == -INFINITY ? 0.0f : exp(lse - m);
                    lw[r * n_splits + s] = w;
                    den += w;
                }
#if HAS_SINKS
                if (sink != -INFINITY)
                    den += exp(sink - m);
#endif
                for (int s = 0; s < n_splits; ++s)
                    lw[r * n_splits + s] /= den;
            }
            (void)h;
            row_m[r] = m;
            row_lse[r] = m == -INFINITY ? -INFINITY : m + log(den);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (staged) /* four elements an item */
        for (int idx = lid; idx < rows * (HEAD_DIM / 4); idx += wg) {
            const int r = idx / (HEAD_DIM / 4), d = 4 * (idx - r * (HEAD_DIM / 4));
            const int pr = pr0 + r, qi = pr / group, h = hk * group + pr % group;
            if (qi >= sv.sq)
                continue;
            const long row = lse_row(sv, h, qi, heads_q, seq_q, 0);
            float4 out = (float4)(0.0f);
            /* DECODE_MERGE_BATCH splits' partials at a time, each batch's loads issued before its sums and
             * none under a branch (docs/design/decode_mma.md, decode-mma-17: one load waited for at a time
             * took 5.7 us of a 16-split step); a split that saw no key weighs 0, and its partial, read
             * all the same, is selected away before the product (it may be anything, NaN included) */
#if DECODE_MERGE_PREFETCH
            if (row_m[r] != -INFINITY && pre_on && idx == lid) {
#pragma unroll
                for (int u = 0; u < DECODE_MERGE_PREFETCH; ++u) {
                    const float w = u < n_splits ? lw[r * n_splits + u] : 0.0f;
                    out += w * (w != 0.0f ? pre[u] : (float4)(0.0f));
                }
            } else
#endif
            if (row_m[r] != -INFINITY) {
                __global const float *const op = OP_ + partial_row(0, rows_total, row) * HEAD_DIM + d;
                const long split_stride = partial_row(1, rows_total, 0) * HEAD_DIM;
                for (int s0 = 0; s0 < n_splits; s0 += DECODE_MERGE_BATCH) {
                    float4 x[DECODE_MERGE_BATCH];
#pragma unroll
                    for (int u = 0; u < DECODE_MERGE_BATCH; ++u)
                        x[u] = s0 + u < n_splits ? vload4(0, op + (s0 + u) * split_stride) : (float4)(0.0f);
#pragma unroll
                    for (int u = 0; u < DECODE_MERGE_BATCH; ++u) {
                        const float w = s0 + u < n_splits ? lw[r * n_splits + s0 + u] : 0.0f;
                        out += w * (w != 0.0f ? x[u] : (float4)(0.0f)); /* (one multiply-add) */
                    }
                }
            }
            const long o = q_row_offset(sv, h, qi, o_sb, o_ss, o_sh) + d;
            STORE(O, o, out.x);
            STORE(O, o + 1, out.y);
            STORE(O, o + 2, out.z);
            STORE(O, o + 3, out.w);
            if (write_lse && d == 0)
                LSE[row] = row_lse[r];
        }
    else /* (the splits' LSEs do not fit: one element an item, its row's weights recomputed) */
        for (int idx = lid; idx < rows * HEAD_DIM; idx += wg) {
            const int r = idx / HEAD_DIM, d = idx - r * HEAD_DIM;
            const int pr = pr0 + r, qi = pr / group, h = hk * group + pr % group;
            if (qi >= sv.sq)
                continue;
            const long row = lse_row(sv, h, qi, heads_q, seq_q, 0);
#if HAS_SINKS
            const float sink = SINKS[h];
#else
            const float sink = -INFINITY;
#endif
            float lse_out;
            const float out = split_merge(OP_, LP_, rows_total, n_splits, row, d, HEAD_DIM, sink, &lse_out);
            STORE(O, q_row_offset(sv, h, qi, o_sb, o_ss, o_sh) + d, out);
            if (write_lse && d == 0)
                LSE[row] = lse_out;
        }
}
#endif
