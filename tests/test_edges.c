/* SPDX-License-Identifier: MIT */
/*
 * test_edges.c: numerical edges, every algorithm against the float64 reference: a NaN or an inf in one
 * query row poisons that row only (never a hang, never another row); scores of 1e4 do not overflow
 * (the softmax subtracts the row maximum); denormal inputs; a negative scale; rows that see no key; a cache of
 * nearly 2^31 keys split across work-groups; a cache length near 2^31 past the capacity under an append.
 * The matrix-unit kernel (fp16/bf16) on the same edges against the naive kernel.
 */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { EDGE_NAN_Q_ROW, EDGE_INF_Q_ROW, EDGE_HUGE_SCORES, EDGE_DENORMALS, EDGE_NEGATIVE_SCALE, EDGE_COUNT };
static const char *edge_names[] = {"NaN in one query row", "inf in one query row", "scores of 1e4",
                                   "denormal inputs", "negative scale"};

static void run_edge(int edge, flashcl_algorithm algo)
{
    flashcl_context *ctx = tu_context_create();
    flashcl_problem p;
    flashcl_problem_default(&p);
    p.batch = 1;
    p.heads_q = 2;
    p.heads_kv = 1;
    p.seq_q = 40;
    p.seq_kv = 70;
    p.head_dim = 32;
    p.causal = edge == EDGE_NAN_Q_ROW;
    p.return_lse = 1;
    if (edge == EDGE_NEGATIVE_SCALE)
        p.scale = -0.2f;
    if (edge == EDGE_HUGE_SCORES)
        p.scale = 1.0f;
    flashcl_plan *plan = NULL;
    flashcl_status st = flashcl_plan_create_algo(ctx, &p, algo, &plan);
    ck_assert_msg(st == FLASHCL_SUCCESS, "%s", flashcl_context_last_error(ctx));
    flashcl_plan_problem(plan, &p);
    size_t sz[5];
    flashcl_plan_buffer_sizes(plan, &sz[0], &sz[1], &sz[2], &sz[3], &sz[4]);
    float *h[3];
    hm_rng rng;
    hm_rng_seed(&rng, 1000 + (uint64_t)edge);
    for (int i = 0; i < 3; ++i) {
        h[i] = malloc(sz[i]);
        hm_fill_normal(h[i], FLASHCL_DTYPE_F32, sz[i] / 4, &rng, 1.0);
    }
    const int bad_row = 17, bad_head = 1; /* query 17 of head 1 */
    float *qrow = h[0] + hm_offset(&p.q_strides, 0, bad_row, bad_head);
    switch (edge) {
    case EDGE_NAN_Q_ROW:
        qrow[5] = NAN;
        break;
    case EDGE_INF_Q_ROW:
        qrow[3] = INFINITY;
        break;
    case EDGE_HUGE_SCORES: /* |q.k| up to about 1e4 with scale 1 */
        for (size_t i = 0; i < sz[0] / 4; ++i)
            h[0][i] *= 18.0f;
        for (size_t i = 0; i < sz[1] / 4; ++i)
            h[1][i] *= 18.0f;
        break;
    case EDGE_DENORMALS:
        for (size_t i = 0; i < sz[2] / 4; ++i)
            h[2][i] *= 1e-39f;
        break;
    }
    cl_mem q = tu_buffer(sz[0], h[0]), k = tu_buffer(sz[1], h[1]), v = tu_buffer(sz[2], h[2]);
    cl_mem o = tu_buffer(sz[3], NULL), l = tu_buffer(sz[4], NULL);
    st = flashcl_plan_enqueue(plan, q, k, v, o, l, 0, NULL, NULL);
    ck_assert_msg(st == FLASHCL_SUCCESS, "%s", flashcl_context_last_error(ctx));
    ck_assert_int_eq(clFinish(tu_queue), CL_SUCCESS);
    float *out = tu_read(o, sz[3]), *lse = tu_read(l, sz[4]);

    double ref[32], scores[70];
    const int64_t rows = (int64_t)p.heads_q * p.seq_q;
    for (int64_t r = 0; r < rows; ++r) {
        const double rl = hm_reference_row(&p, h[0], h[1], h[2], r, ref, scores);
        const int64_t i = r % p.seq_q, hd = r / p.seq_q;
        const float *orow = out + hm_offset(&p.o_strides, 0, i, hd);
        const int poisoned = (edge == EDGE_NAN_Q_ROW || edge == EDGE_INF_Q_ROW) && i == bad_row && hd == bad_head;
        if (poisoned) {
            /* The reference itself is NaN there (inf - inf or NaN in the scores): so must the output be,
             * or at least not a finite number that pretends to be right. */
            int nonfinite = 0;
            for (int d = 0; d < p.head_dim; ++d)
                nonfinite += !isfinite(orow[d]);
            ck_assert_msg(nonfinite == p.head_dim, "%s, %s: the poisoned row has %d finite outputs",
                          flashcl_algorithm_name(algo), edge_names[edge], p.head_dim - nonfinite);
            continue;
        }
        double scale = 1e-300;
        for (int d = 0; d < p.head_dim; ++d)
            scale = fmax(scale, fabs(ref[d]));
        for (int d = 0; d < p.head_dim; ++d) {
            const double err = fabs(orow[d] - ref[d]);
            /* fp32 arithmetic on 70 keys: a thousand ulps of the row's scale is generous and still fails
             * any real corruption. Scores near 1e4 carry absolute fp32 errors near 1e-3, which the
             * exponential turns into relative ones: 1e-2 there. Denormal V may be flushed to zero by
             * devices without CL_FP_DENORM: any finite value no larger than the row's scale passes. */
            const double tol = edge == EDGE_DENORMALS ? scale + 1e-45 : edge == EDGE_HUGE_SCORES ? 1e-2 * scale
                                                                                                : 1e-4 * scale + 1e-30;
            ck_assert_msg(err <= tol, "%s, %s: row %lld col %d: got %g, reference %g", flashcl_algorithm_name(algo),
                          edge_names[edge], (long long)r, d, (double)orow[d], ref[d]);
        }
        ck_assert_msg(isfinite(lse[r]) && fabs(lse[r] - rl) <= 1e-4 * (1 + fabs(rl)), "%s, %s: lse of row %lld %g vs %g",
                      flashcl_algorithm_name(algo), edge_names[edge], (long long)r, (double)lse[r], rl);
    }
    free(out);
    free(lse);
    for (int i = 0; i < 3; ++i)
        free(h[i]);
    cl_mem all[5] = {q, k, v, o, l};
    for (int i = 0; i < 5; ++i)
        clReleaseMemObject(all[i]);
    flashcl_plan_destroy(&plan);
    flashcl_context_destroy(&ctx);
}

START_TEST(test_edge)
{
    run_edge(_i / 3, (flashcl_algorithm)(_i % 3));
}
END_TEST

/* The matrix-unit kernel (forced: emulated without matrix units) keeps the same edges: a NaN and an
 * inf query row poison their own rows only, LSE included, against the naive kernel on the same fp16
 * and bf16 inputs; a causal problem with more queries than keys writes zeros and -inf for the rows that
 * see no key. */
START_TEST(test_edge_mma)
{
    const flashcl_dtype t = _i ? FLASHCL_DTYPE_BF16 : FLASHCL_DTYPE_F16;
    flashcl_settings s;
    flashcl_settings_default(&s);
    s.disk_cache = 0;
    s.path = FLASHCL_PATH_MMA;
    flashcl_context *ctx = NULL;
    ck_assert_int_eq(flashcl_context_create(tu_context, tu_device, tu_queue, &s, &ctx), FLASHCL_SUCCESS);
    flashcl_problem p;
    flashcl_problem_default(&p);
    p.heads_q = 2;
    p.heads_kv = 1;
    p.seq_q = 90; /* more queries than keys: with causal, rows 0..19 see no key */
    p.seq_kv = 70;
    p.head_dim = 32;
    p.dtype = t;
    p.causal = 1;
    p.return_lse = 1;
    flashcl_plan *flash = NULL, *naive = NULL;
    ck_assert_int_eq(flashcl_plan_create(ctx, &p, &flash), FLASHCL_SUCCESS);
    ck_assert_int_eq(flashcl_plan_create_algo(ctx, &p, FLASHCL_ALGO_NAIVE, &naive), FLASHCL_SUCCESS);
    flashcl_config cfg;
    flashcl_plan_config(flash, &cfg);
    ck_assert_msg(cfg_mma(&cfg) != 0, "%s", cfg.path_reason);
    flashcl_plan_problem(flash, &p);
    size_t sz[5];
    flashcl_plan_buffer_sizes(flash, &sz[0], &sz[1], &sz[2], &sz[3], &sz[4]);
    void *h[3];
    hm_rng rng;
    hm_rng_seed(&rng, 77);
    for (int i = 0; i < 3; ++i) {
        h[i] = malloc(sz[i]);
        hm_fill_normal(h[i], t, sz[i] / 2, &rng, 1.0);
    }
    const int nan_row = 50, inf_row = 71; /* both of head 1, both see keys */
    hm_store(h[0], t, (size_t)hm_offset(&p.q_strides, 0, nan_row, 1) + 5, NAN);
    hm_store(h[0], t, (size_t)hm_offset(&p.q_strides, 0, inf_row, 1) + 3, INFINITY);
    cl_mem q = tu_buffer(sz[0], h[0]), k = tu_buffer(sz[1], h[1]), v = tu_buffer(sz[2], h[2]);
    cl_mem of = tu_buffer(sz[3], NULL), lf = tu_buffer(sz[4], NULL), on = tu_buffer(sz[3], NULL),
           ln = tu_buffer(sz[4], NULL);
    ck_assert_int_eq(flashcl_plan_enqueue(flash, q, k, v, of, lf, 0, NULL, NULL), FLASHCL_SUCCESS);
    ck_assert_int_eq(flashcl_plan_enqueue(naive, q, k, v, on, ln, 0, NULL, NULL), FLASHCL_SUCCESS);
    ck_assert_int_eq(clFinish(tu_queue), CL_SUCCESS);
    void *xf = tu_read(of, sz[3]), *xn = tu_read(on, sz[3]);
    float *lsf = tu_read(lf, sz[4]), *lsn = tu_read(ln, sz[4]);
    const double u = t == FLASHCL_DTYPE_BF16 ? ldexp(1.0, -8) : ldexp(1.0, -11);
    for (int hd = 0; hd < 2; ++hd)
        for (int i = 0; i < p.seq_q; ++i) {
            const int64_t base = hm_offset(&p.o_strides, 0, i, hd), r = (int64_t)hd * p.seq_q + i;
            const int poisoned = hd == 1 && (i == nan_row || i == inf_row), empty = i < p.seq_q - p.seq_kv;
            double scale = 0;
            for (int d = 0; d < p.head_dim; ++d)
                scale = fmax(scale, fabs(hm_load(xn, t, (size_t)(base + d))));
            for (int d = 0; d < p.head_dim; ++d) {
                const double a = hm_load(xf, t, (size_t)(base + d)), b = hm_load(xn, t, (size_t)(base + d));
                if (poisoned)
                    ck_assert_msg(!isfinite(a), "row %d of head 1: col %d = %g, must not be finite", i, d, a);
                else if (empty)
                    ck_assert_msg(a == 0.0, "row %d sees no key: col %d = %g", i, d, a);
                else /* the output's rounding twice and P's rounding (4 units) */
                    ck_assert_msg(fabs(a - b) <= (2.0 * u + 4.0 * u) * scale + 1e-6,
                                  "row %d head %d col %d: flash_mma %g, naive %g", i, hd, d, a, b);
            }
            if (empty)
                ck_assert_msg(isinf(lsf[r]) && lsf[r] < 0, "row %d sees no key: lse %g", i, (double)lsf[r]);
            else if (!poisoned)
                ck_assert_msg(fabs(lsf[r] - lsn[r]) <= 1e-4 * (1 + fabs(lsn[r])), "lse of row %lld: %g vs %g",
                              (long long)r, (double)lsf[r], (double)lsn[r]);
        }
    free(xf);
    free(xn);
    free(lsf);
    free(lsn);
    for (int i = 0; i < 3; ++i)
        free(h[i]);
    cl_mem all[7] = {q, k, v, of, lf, on, ln};
    for (int i = 0; i < 7; ++i)
        clReleaseMemObject(all[i]);
    flashcl_plan_destroy(&flash);
    flashcl_plan_destroy(&naive);
    flashcl_context_destroy(&ctx);
}
END_TEST

/* A plan of *p that must be made; *p as the plan resolved it (the scale, heads_kv), its config and buffer sizes. */
static flashcl_plan *plan_of(flashcl_context *ctx, flashcl_problem *p, flashcl_config *cfg, size_t sz[5])
{
    flashcl_plan *plan = NULL;
    ck_assert_msg(flashcl_plan_create(ctx, p, &plan) == FLASHCL_SUCCESS, "%s", flashcl_context_last_error(ctx));
    flashcl_plan_problem(plan, p);
    flashcl_plan_config(plan, cfg);
    flashcl_plan_buffer_sizes(plan, &sz[0], &sz[1], &sz[2], &sz[3], &sz[4]);
    return plan;
}

/* The longest caches: seq_kv near 2^31 - 1 split across work-groups (each split's share and end in the kernels
 * pass 2^31 - 1 there), a window of 100 keys to the left of each query (its right unbounded), one K and V row
 * broadcast to every key (stride 0), so that the float64 reference is exact: O is V's row, the LSE the score
 * plus the log of the keys seen. A split arithmetic that wraps loses the keys: zeros, or the poisoned
 * output. _i: 0-3 one query or 20, splits chosen or 1000; 4, 5 the decode kernels, the same. */
START_TEST(test_longest_cache)
{
    flashcl_context *ctx = NULL;
    if (_i >= 4) { /* the decode kernels' split arithmetic (decode.cl), forced */
        flashcl_settings st;
        flashcl_settings_default(&st);
        st.disk_cache = 0;
        st.validate = 0;
        st.path = FLASHCL_PATH_DECODE;
        ck_assert_int_eq(flashcl_context_create(tu_context, tu_device, tu_queue, &st, &ctx), FLASHCL_SUCCESS);
    } else {
        ctx = tu_context_create();
    }
    flashcl_problem p;
    flashcl_problem_default(&p);
    p.heads_q = p.heads_kv = 1;
    p.seq_q = _i & 1 && _i < 4 ? 20 : 1;
    p.seq_kv = INT32_MAX - 647;
    p.head_dim = 16;
    p.window = 1;
    p.window_left = 100;
    p.window_right = -1;
    p.kv_splits = _i & 1 && _i >= 4 ? 1000 : _i & 2 ? 1000 : 0; /* (1000: skv + splits past 2^31 - 1) */
    p.return_lse = 1;
    p.k_strides = p.v_strides = (flashcl_strides){0, 0, 16};
    flashcl_config cfg;
    size_t sz[5];
    flashcl_plan *plan = plan_of(ctx, &p, &cfg, sz);
    ck_assert_uint_eq(sz[1], 16 * sizeof(float));
    float qh[20 * 16], kh[16], vh[16];
    hm_rng rng;
    hm_rng_seed(&rng, 4242 + (uint64_t)_i);
    hm_fill_normal(qh, FLASHCL_DTYPE_F32, (size_t)p.seq_q * 16, &rng, 1.0);
    hm_fill_normal(kh, FLASHCL_DTYPE_F32, 16, &rng, 1.0);
    hm_fill_normal(vh, FLASHCL_DTYPE_F32, 16, &rng, 1.0);
    cl_mem q = tu_buffer(sz[0], qh), k = tu_buffer(sz[1], kh), v = tu_buffer(sz[2], vh);
    cl_mem o = tu_buffer(sz[3], NULL), l = tu_buffer(sz[4], NULL); /* (NaN until written) */
    ck_assert_msg(flashcl_plan_enqueue(plan, q, k, v, o, l, 0, NULL, NULL) == FLASHCL_SUCCESS, "%s",
                  flashcl_context_last_error(ctx));
    ck_assert_int_eq(clFinish(tu_queue), CL_SUCCESS);
    float *out = tu_read(o, sz[3]), *lse = tu_read(l, sz[4]);
    for (int i = 0; i < p.seq_q; ++i) {
        double s = 0;
        for (int d = 0; d < 16; ++d)
            s += (double)qh[i * 16 + d] * kh[d];
        /* (keys from 100 before the query's position to the last: the window's right side unbounded) */
        const double want = s * p.scale + log(101.0 + (p.seq_q - 1 - i)); /* (the plan's problem: scale resolved) */
        for (int d = 0; d < 16; ++d)
            ck_assert_msg(fabs(out[i * 16 + d] - vh[d]) <= 1e-5 * (1 + fabs(vh[d])),
                          "%s, %d splits: query %d col %d: %g, want V's %g", cfg.kernel_name, (int)cfg.kv_splits, i,
                          d, (double)out[i * 16 + d], (double)vh[d]);
        ck_assert_msg(fabs(lse[i] - want) <= 1e-4 * (1 + fabs(want)), "%s, %d splits: query %d: lse %g, want %g",
                      cfg.kernel_name, (int)cfg.kv_splits, i, (double)lse[i], want);
    }
    ck_assert_msg(cfg.kv_splits > 1, "%s: %d splits, the case is about splits", cfg.kernel_name, (int)cfg.kv_splits);
    free(out);
    free(lse);
    cl_mem all[5] = {q, k, v, o, l};
    for (int j = 0; j < 5; ++j)
        clReleaseMemObject(all[j]);
    flashcl_plan_destroy(&plan);
    flashcl_context_destroy(&ctx);
}
END_TEST

/* A cache length past the capacity, near INT_MAX, under kv_append: the step's rows fall past the cache and are
 * dropped, and the keys are clamped to the cache's seq_kv rows (flashcl.h). The length plus the step's rows wraps a
 * 32-bit int to a negative, which clamped to no keys at all before the kernels summed in 64 bits. O against
 * float64 attention over the cache's rows as they were; _i: 0 a decode step, 1 twenty queries. */
START_TEST(test_cache_length_past_capacity)
{
    flashcl_context *ctx = tu_context_create();
    flashcl_problem p;
    flashcl_problem_default(&p);
    p.heads_q = p.heads_kv = 1;
    p.seq_q = _i ? 20 : 1;
    p.seq_kv = 48;
    p.head_dim = 16;
    p.kv_cache = 1;
    p.kv_append = 1;
    flashcl_config cfg;
    size_t sz[5];
    flashcl_plan *plan = plan_of(ctx, &p, &cfg, sz);
    struct flashcl_offsets bytes;
    ck_assert_int_eq(flashcl_plan_tensor_bytes(plan, &bytes), FLASHCL_SUCCESS);
    float qh[20 * 16], kh[48 * 16], vh[48 * 16], newh[20 * 16];
    hm_rng rng;
    hm_rng_seed(&rng, 777 + (uint64_t)_i);
    hm_fill_normal(qh, FLASHCL_DTYPE_F32, (size_t)p.seq_q * 16, &rng, 1.0);
    hm_fill_normal(kh, FLASHCL_DTYPE_F32, 48 * 16, &rng, 1.0);
    hm_fill_normal(vh, FLASHCL_DTYPE_F32, 48 * 16, &rng, 1.0);
    hm_fill_normal(newh, FLASHCL_DTYPE_F32, (size_t)p.seq_q * 16, &rng, 4.0);
    const int32_t len = INT32_MAX; /* (plus one row past INT_MAX) */
    cl_mem q = tu_buffer(sz[0], qh), k = tu_buffer(sz[1], kh), v = tu_buffer(sz[2], vh), o = tu_buffer(sz[3], NULL),
           lens = tu_buffer(sizeof len, &len), knew = tu_buffer((size_t)bytes.k_new, newh),
           vnew = tu_buffer((size_t)bytes.v_new, newh);
    flashcl_tensors t = {.q = q, .k = k, .v = v, .o = o, .cache_seqlens = lens, .k_new = knew, .v_new = vnew};
    ck_assert_msg(flashcl_plan_enqueue_tensors(plan, &t, 0, NULL, NULL) == FLASHCL_SUCCESS, "%s",
                  flashcl_context_last_error(ctx));
    ck_assert_int_eq(clFinish(tu_queue), CL_SUCCESS);
    float *out = tu_read(o, sz[3]), *kc = tu_read(k, sz[1]);
    ck_assert_msg(!memcmp(kc, kh, sizeof kh), "%s: the append wrote into the cache", cfg.kernel_name);
    for (int i = 0; i < p.seq_q; ++i) {
        double s[48], m = -INFINITY, l = 0;
        for (int j = 0; j < 48; ++j) {
            s[j] = 0;
            for (int d = 0; d < 16; ++d)
                s[j] += (double)qh[i * 16 + d] * kh[j * 16 + d];
            s[j] *= p.scale;
            m = fmax(m, s[j]);
        }
        for (int j = 0; j < 48; ++j)
            l += exp(s[j] - m);
        for (int d = 0; d < 16; ++d) {
            double want = 0;
            for (int j = 0; j < 48; ++j)
                want += exp(s[j] - m) / l * vh[j * 16 + d];
            ck_assert_msg(fabs(out[i * 16 + d] - want) <= 1e-5 * (1 + fabs(want)), "%s: query %d col %d: %g, want %g",
                          cfg.kernel_name, i, d, (double)out[i * 16 + d], want);
        }
    }
    free(out);
    free(kc);
    cl_mem all[7] = {q, k, v, o, lens, knew, vnew};
    for (int j = 0; j < 7; ++j)
        clReleaseMemObject(all[j]);
    flashcl_plan_destroy(&plan);
    flashcl_context_destroy(&ctx);
}
END_TEST

/* K and V interleaved in one buffer under kv_append (each cache row K's heads then V's: the same strides, V's
 * offset one row of K's heads): apart elements, accepted, each appended row written to its half and the rest of
 * the buffer untouched; O against float64 attention over the cache after the append, GQA (two query heads a KV
 * head), two sequences of cache lengths 17 and 30. _i: 0 a decode step, 1 five queries. */
START_TEST(test_interleaved_cache)
{
    enum { H = 2, D = 16, CAP = 40, B = 2 };
    flashcl_context *ctx = tu_context_create();
    flashcl_problem p;
    flashcl_problem_default(&p);
    p.batch = B;
    p.heads_q = 2 * H;
    p.heads_kv = H;
    p.seq_q = _i ? 5 : 1;
    p.seq_kv = CAP;
    p.head_dim = D;
    p.kv_cache = 1;
    p.kv_append = 1;
    p.k_strides = p.v_strides = (flashcl_strides){CAP * 2 * H * D, 2 * H * D, D};
    flashcl_config cfg;
    size_t sz[5];
    flashcl_plan *plan = plan_of(ctx, &p, &cfg, sz);
    struct flashcl_offsets bytes;
    ck_assert_int_eq(flashcl_plan_tensor_bytes(plan, &bytes), FLASHCL_SUCCESS);
    const size_t cache_floats = (size_t)B * CAP * 2 * H * D, new_floats = (size_t)B * p.seq_q * H * D;
    float *qh = malloc(sz[0]), *cache = malloc(cache_floats * 4), *kn = malloc(new_floats * 4),
          *vn = malloc(new_floats * 4);
    hm_rng rng;
    hm_rng_seed(&rng, 4242 + (uint64_t)_i);
    hm_fill_normal(qh, FLASHCL_DTYPE_F32, sz[0] / 4, &rng, 1.0);
    hm_fill_normal(cache, FLASHCL_DTYPE_F32, cache_floats, &rng, 1.0);
    hm_fill_normal(kn, FLASHCL_DTYPE_F32, new_floats, &rng, 2.0);
    hm_fill_normal(vn, FLASHCL_DTYPE_F32, new_floats, &rng, 2.0);
    const int32_t lens[B] = {17, 30};
    cl_mem q = tu_buffer(sz[0], qh), kv = tu_buffer(cache_floats * 4, cache), o = tu_buffer(sz[3], NULL),
           lb = tu_buffer(sizeof lens, lens), knew = tu_buffer((size_t)bytes.k_new, kn),
           vnew = tu_buffer((size_t)bytes.v_new, vn);
    flashcl_tensors t = {.q = q, .k = kv, .v = kv, .o = o, .cache_seqlens = lb, .k_new = knew, .v_new = vnew};
    t.offsets.v = H * D * sizeof(float);
    ck_assert_msg(flashcl_plan_enqueue_tensors(plan, &t, 0, NULL, NULL) == FLASHCL_SUCCESS, "%s",
                  flashcl_context_last_error(ctx));
    ck_assert_int_eq(clFinish(tu_queue), CL_SUCCESS);
    float *out = tu_read(o, sz[3]), *after = tu_read(kv, cache_floats * 4);
    for (int b = 0; b < B; ++b) /* the appended rows in their halves, every other element as it was */
        for (int r = 0; r < CAP; ++r)
            for (int e = 0; e < 2 * H * D; ++e) {
                const size_t at = ((size_t)b * CAP + r) * 2 * H * D + e;
                const int i = r - lens[b];
                const float want = i >= 0 && i < p.seq_q
                                       ? (e < H * D ? kn : vn)[((size_t)b * p.seq_q + i) * H * D + e % (H * D)]
                                       : cache[at];
                ck_assert_msg(after[at] == want, "%s: sequence %d row %d element %d: %g, want %g", cfg.kernel_name, b,
                              r, e, (double)after[at], (double)want);
            }
    const hm_extras x = {.cache_seqlens = lens};
    double ref[D], scores[CAP];
    for (int64_t row = 0; row < (int64_t)B * p.heads_q * p.seq_q; ++row) {
        hm_reference_row_ex(&p, qh, after, after + H * D, &x, row, ref, scores);
        const int64_t i = row % p.seq_q, h = row / p.seq_q % p.heads_q, b = row / p.seq_q / p.heads_q;
        const float *orow = out + hm_offset(&p.o_strides, b, i, h);
        double scale = 1e-30;
        for (int d = 0; d < D; ++d)
            scale = fmax(scale, fabs(ref[d]));
        for (int d = 0; d < D; ++d)
            ck_assert_msg(fabs(orow[d] - ref[d]) <= 1e-5 * scale, "%s: row %lld col %d: %g, want %g", cfg.kernel_name,
                          (long long)row, d, (double)orow[d], ref[d]);
    }
    free(out);
    free(after);
    free(qh);
    free(cache);
    free(kn);
    free(vn);
    cl_mem all[6] = {q, kv, o, lb, knew, vnew};
    for (int j = 0; j < 6; ++j)
        clReleaseMemObject(all[j]);
    flashcl_plan_destroy(&plan);
    flashcl_context_destroy(&ctx);
}
END_TEST

static Suite *make_suite(void)
{
    Suite *s = suite_create("edges");
    TCase *tc = tcase_create("edges");
    tcase_set_timeout(tc, 300);
    for (int i = 0; i < EDGE_COUNT * 3; ++i)
        if (flashcl_algorithm_available((flashcl_algorithm)(i % 3))) {
            tcase_add_loop_test(tc, test_edge, i, i + 1);
        }
    tcase_add_loop_test(tc, test_edge_mma, 0, 2);
    tcase_add_loop_test(tc, test_longest_cache, 0, 6);
    tcase_add_loop_test(tc, test_cache_length_past_capacity, 0, 2);
    tcase_add_loop_test(tc, test_interleaved_cache, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run(make_suite, 1);
}
