/*
 * validate.c: validation mode. After a plan's kernel, the naive kernel recomputes a set of rows in
 * fp32 and a compare kernel checks the plan's output against them; the host reads back a few numbers
 * per row. Rows: all of them up to validate_max_rows, else the first and last row of every head and
 * one row in every BLOCK_M tile.
 */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct validation_state {
    cl_kernel ref_kernel, compare_kernel;
    cl_mem rows, ref, ref_lse, stats, info;
    cl_long n_rows;
    float *host_stats;
    cl_int *host_info;
    cl_long *host_rows;
};

void fcl_validation_free(validation_state *vs)
{
    if (!vs)
        return;
    if (vs->ref_kernel)
        clReleaseKernel(vs->ref_kernel);
    if (vs->compare_kernel)
        clReleaseKernel(vs->compare_kernel);
    cl_mem mems[5] = {vs->rows, vs->ref, vs->ref_lse, vs->stats, vs->info};
    for (int i = 0; i < 5; ++i)
        if (mems[i])
            clReleaseMemObject(mems[i]);
    free(vs->host_stats);
    free(vs->host_info);
    free(vs->host_rows);
    free(vs);
}

void fcl_tolerance(flashcl_dtype dtype, int32_t seq_kv, int p_rounded, double *atol, double *rtol)
{
    const double eps32 = ldexp(1.0, -23);
    *rtol = dtype == FLASHCL_DTYPE_F16 ? ldexp(1.0, -10) : dtype == FLASHCL_DTYPE_BF16 ? ldexp(1.0, -7) : eps32;
    *atol = eps32 * (8.0 + 2.0 * sqrt((double)seq_kv));
    /* The matrix-unit kernel rounds P to the storage type for P*V (as FlashAttention-2 does): each
     * output moves by up to the type's unit roundoff times the row's largest |V| mix, which the row
     * scale stands for; four of them. */
    if (p_rounded)
        *atol = fmax(*atol, 4.0 * (dtype == FLASHCL_DTYPE_BF16 ? ldexp(1.0, -8) : ldexp(1.0, -11)));
}

/* Deterministic row inside a tile, so that repeated runs check the same rows. */
static cl_long row_in_tile(cl_long head, cl_long tile, cl_long len)
{
    uint64_t h = fcl_hash64(&head, sizeof head, (uint64_t)tile);
    return (cl_long)(h % (uint64_t)len);
}

static cl_long *sample_rows(const flashcl_plan *pl, cl_long *count)
{
    const cl_long heads = pl->layout.row_groups, sq = pl->layout.group_rows, total = heads * sq;
    const cl_long bm = pl->config.block_m > 1 ? pl->config.block_m : 64;
    if (total <= pl->ctx->validate_max_rows) {
        cl_long *rows = malloc((size_t)total * sizeof *rows);
        if (rows)
            for (cl_long i = 0; i < total; ++i)
                rows[i] = i;
        *count = total;
        return rows;
    }
    const cl_long tiles = (sq + bm - 1) / bm;
    const cl_long per_head = tiles + 2;
    cl_long *rows = malloc((size_t)(heads * per_head) * sizeof *rows);
    if (!rows)
        return NULL;
    cl_long n = 0;
    for (cl_long hd = 0; hd < heads; ++hd) {
        const cl_long base = hd * sq;
        rows[n++] = base;
        for (cl_long t = 0; t < tiles; ++t) {
            const cl_long start = t * bm, len = (sq - start < bm) ? sq - start : bm;
            const cl_long r = start + row_in_tile(hd, t, len);
            if (r != 0 && r != sq - 1)
                rows[n++] = base + r;
        }
        if (sq > 1)
            rows[n++] = base + sq - 1;
    }
    *count = n;
    return rows;
}

static flashcl_status setup(flashcl_plan *pl)
{
    flashcl_context *ctx = pl->ctx;
    const flashcl_problem *p = &pl->problem;
    validation_state *vs = calloc(1, sizeof *vs);
    if (!vs)
        return fcl_fail(ctx, FLASHCL_OUT_OF_HOST_MEMORY, "validation: out of host memory");
    pl->validation = vs;
    flashcl_config naive = {.algorithm = FLASHCL_ALGO_NAIVE};
    char options[512];
    fcl_build_options(p, &naive, options, sizeof options);
    cl_program prog;
    flashcl_status st = fcl_get_program(ctx, "naive.cl", options, &prog);
    if (st != FLASHCL_SUCCESS)
        return st;
    cl_int err;
    vs->ref_kernel = clCreateKernel(prog, "naive_ref_rows", &err);
    if (!vs->ref_kernel)
        return fcl_fail_cl(ctx, err, "validation: clCreateKernel(naive_ref_rows)");
    vs->compare_kernel = clCreateKernel(prog, "compare_rows", &err);
    if (!vs->compare_kernel)
        return fcl_fail_cl(ctx, err, "validation: clCreateKernel(compare_rows)");

    vs->host_rows = sample_rows(pl, &vs->n_rows);
    const size_t n = (size_t)vs->n_rows;
    vs->host_stats = malloc(n * 4 * sizeof(float));
    vs->host_info = malloc(n * 4 * sizeof(cl_int));
    if (!vs->host_rows || !vs->host_stats || !vs->host_info)
        return fcl_fail(ctx, FLASHCL_OUT_OF_HOST_MEMORY, "validation: out of host memory for %zu rows", n);
    vs->rows = clCreateBuffer(ctx->cl_ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * sizeof(cl_long),
                              vs->host_rows, &err);
    if (vs->rows)
        vs->ref = clCreateBuffer(ctx->cl_ctx, CL_MEM_READ_WRITE, n * p->head_dim * sizeof(float), NULL, &err);
    if (vs->ref)
        vs->ref_lse = clCreateBuffer(ctx->cl_ctx, CL_MEM_READ_WRITE, n * sizeof(float), NULL, &err);
    if (vs->ref_lse)
        vs->stats = clCreateBuffer(ctx->cl_ctx, CL_MEM_READ_WRITE, n * 4 * sizeof(float), NULL, &err);
    if (vs->stats)
        vs->info = clCreateBuffer(ctx->cl_ctx, CL_MEM_READ_WRITE, n * 4 * sizeof(cl_int), NULL, &err);
    if (!vs->info)
        return fcl_fail_cl(ctx, err, "validation: clCreateBuffer");

    /* Constant arguments. naive_ref_rows: Q K V, 33 problem args (17 scalars and strides, then the
     * optional ALiBi slopes, mask and key padding with their scalars, then the packed sequences'
     * cu_seqlens, total_q, total_kv and batch, then the KV cache's lengths, block table and page
     * counts), rows, n_rows, ref, ref_lse. */
    const resolved_layout *L = &pl->layout;
    cl_int group = p->heads_q / p->heads_kv, has_lse = p->return_lse != 0;
    cl_int win_left, win_right;
    fcl_visible_window(p, &win_left, &win_right);
    cl_float scale = p->scale, softcap = p->softcap;
    cl_long strides[9] = {L->q.batch, L->q.seq, L->q.head, L->k.batch, L->k.seq, L->k.head,
                          L->v.batch, L->v.seq, L->v.head};
    cl_kernel r = vs->ref_kernel;
    err = clSetKernelArg(r, 3, sizeof(cl_int), &p->seq_q);
    err |= clSetKernelArg(r, 4, sizeof(cl_int), &p->seq_kv);
    err |= clSetKernelArg(r, 5, sizeof(cl_int), &p->heads_q);
    err |= clSetKernelArg(r, 6, sizeof(cl_int), &group);
    err |= clSetKernelArg(r, 7, sizeof(cl_float), &scale);
    err |= clSetKernelArg(r, 8, sizeof(cl_int), &win_left);
    err |= clSetKernelArg(r, 9, sizeof(cl_int), &win_right);
    err |= clSetKernelArg(r, 10, sizeof(cl_float), &softcap);
    for (int i = 0; i < 9; ++i)
        err |= clSetKernelArg(r, 11 + i, sizeof(cl_long), &strides[i]);
    cl_int alibi_per_batch = p->alibi == 2;
    cl_long mstr[3] = {L->mask.batch, L->mask.seq, L->mask.head};
    err |= clSetKernelArg(r, 21, sizeof(cl_int), &alibi_per_batch);
    for (int i = 0; i < 3; ++i)
        err |= clSetKernelArg(r, 23 + i, sizeof(cl_long), &mstr[i]);
    cl_int total_q = p->varlen ? (cl_int)p->total_q : 0, total_kv = p->varlen ? (cl_int)p->total_kv : 0;
    cl_int group_rows = (cl_int)pl->layout.group_rows;
    err |= clSetKernelArg(r, 29, sizeof(cl_int), &total_q);
    err |= clSetKernelArg(r, 30, sizeof(cl_int), &total_kv);
    err |= clSetKernelArg(r, 31, sizeof(cl_int), &p->batch);
    cl_int max_pages = L->max_pages, num_pages = p->kv_cache && p->page_size ? p->num_pages : 1;
    err |= clSetKernelArg(r, 34, sizeof(cl_int), &max_pages);
    err |= clSetKernelArg(r, 35, sizeof(cl_int), &num_pages);
    err |= clSetKernelArg(r, 36, sizeof(cl_mem), &vs->rows);
    err |= clSetKernelArg(r, 37, sizeof(cl_long), &vs->n_rows);
    err |= clSetKernelArg(r, 38, sizeof(cl_mem), &vs->ref);
    err |= clSetKernelArg(r, 39, sizeof(cl_mem), &vs->ref_lse);

    /* compare_rows: O, LSE, has_lse, seq_q, heads_q, o strides (3), rows, n_rows, ref, ref_lse, atol,
     * rtol, stats, info. */
    double atol, rtol;
    fcl_tolerance(p->dtype, p->seq_kv, pl->config.mma != 0, &atol, &rtol);
    cl_float fatol = (cl_float)atol, frtol = (cl_float)rtol;
    cl_long ostr[3] = {L->o.batch, L->o.seq, L->o.head};
    cl_kernel c = vs->compare_kernel;
    err |= clSetKernelArg(c, 2, sizeof(cl_int), &has_lse);
    err |= clSetKernelArg(c, 3, sizeof(cl_int), &group_rows); /* packed: total_q, and the head is row / total_q */
    err |= clSetKernelArg(c, 4, sizeof(cl_int), &p->heads_q);
    for (int i = 0; i < 3; ++i)
        err |= clSetKernelArg(c, 5 + i, sizeof(cl_long), &ostr[i]);
    err |= clSetKernelArg(c, 8, sizeof(cl_mem), &vs->rows);
    err |= clSetKernelArg(c, 9, sizeof(cl_long), &vs->n_rows);
    err |= clSetKernelArg(c, 10, sizeof(cl_mem), &vs->ref);
    err |= clSetKernelArg(c, 11, sizeof(cl_mem), &vs->ref_lse);
    err |= clSetKernelArg(c, 12, sizeof(cl_float), &fatol);
    err |= clSetKernelArg(c, 13, sizeof(cl_float), &frtol);
    err |= clSetKernelArg(c, 14, sizeof(cl_mem), &vs->stats);
    err |= clSetKernelArg(c, 15, sizeof(cl_mem), &vs->info);
    if (err != CL_SUCCESS)
        return fcl_fail(ctx, FLASHCL_OPENCL_ERROR, "validation: clSetKernelArg failed");
    return FLASHCL_SUCCESS;
}

flashcl_status fcl_validate_run(flashcl_plan *pl, const flashcl_tensors *t, cl_event flash_done)
{
    const cl_mem q = t->q, k = t->k, v = t->v, o = t->o, lse = t->lse;
    flashcl_context *ctx = pl->ctx;
    const flashcl_problem *p = &pl->problem;
    flashcl_status st;
    memset(&pl->report, 0, sizeof pl->report);
    if (!pl->validation && (st = setup(pl)) != FLASHCL_SUCCESS) {
        fcl_validation_free(pl->validation);
        pl->validation = NULL;
        return st;
    }
    validation_state *vs = pl->validation;
    cl_int err = clSetKernelArg(vs->ref_kernel, 0, sizeof(cl_mem), &q);
    err |= clSetKernelArg(vs->ref_kernel, 1, sizeof(cl_mem), &k);
    err |= clSetKernelArg(vs->ref_kernel, 2, sizeof(cl_mem), &v);
    /* The optional inputs (the kernel reads them only when compiled in); q stands in for absent ones. */
    const cl_mem alibi = t->alibi_slopes ? t->alibi_slopes : q, mask = t->mask ? t->mask : q,
                 kpm = t->key_padding ? t->key_padding : q, cu_q = t->cu_seqlens_q ? t->cu_seqlens_q : q,
                 cu_k = t->cu_seqlens_k ? t->cu_seqlens_k : q;
    err |= clSetKernelArg(vs->ref_kernel, 20, sizeof(cl_mem), &alibi);
    err |= clSetKernelArg(vs->ref_kernel, 22, sizeof(cl_mem), &mask);
    err |= clSetKernelArg(vs->ref_kernel, 26, sizeof(cl_mem), &kpm);
    err |= clSetKernelArg(vs->ref_kernel, 27, sizeof(cl_mem), &cu_q);
    err |= clSetKernelArg(vs->ref_kernel, 28, sizeof(cl_mem), &cu_k);
    const cl_mem lens = t->cache_seqlens ? t->cache_seqlens : q, bt = t->block_table ? t->block_table : q;
    err |= clSetKernelArg(vs->ref_kernel, 32, sizeof(cl_mem), &lens);
    err |= clSetKernelArg(vs->ref_kernel, 33, sizeof(cl_mem), &bt);
    err |= clSetKernelArg(vs->compare_kernel, 0, sizeof(cl_mem), &o);
    cl_mem lse_arg = lse ? lse : o; /* never read when has_lse is 0 */
    err |= clSetKernelArg(vs->compare_kernel, 1, sizeof(cl_mem), &lse_arg);
    if (err != CL_SUCCESS)
        return fcl_fail(ctx, FLASHCL_OPENCL_ERROR, "validation: clSetKernelArg failed");

    const size_t wg = 64;
    const size_t global = ((size_t)vs->n_rows + wg - 1) / wg * wg;
    cl_event ref_done = NULL;
    err = clEnqueueNDRangeKernel(ctx->queue, vs->ref_kernel, 1, NULL, &global, NULL, 1, &flash_done, &ref_done);
    if (err != CL_SUCCESS)
        return fcl_fail_cl(ctx, err, "validation: enqueue naive_ref_rows");
    cl_event cmp_done = NULL;
    err = clEnqueueNDRangeKernel(ctx->queue, vs->compare_kernel, 1, NULL, &global, NULL, 1, &ref_done, &cmp_done);
    clReleaseEvent(ref_done);
    if (err != CL_SUCCESS)
        return fcl_fail_cl(ctx, err, "validation: enqueue compare_rows");
    const size_t n = (size_t)vs->n_rows;
    err = clEnqueueReadBuffer(ctx->queue, vs->stats, CL_FALSE, 0, n * 4 * sizeof(float), vs->host_stats, 1,
                              &cmp_done, NULL);
    if (err == CL_SUCCESS)
        err = clEnqueueReadBuffer(ctx->queue, vs->info, CL_TRUE, 0, n * 4 * sizeof(cl_int), vs->host_info, 1,
                                  &cmp_done, NULL);
    clReleaseEvent(cmp_done);
    if (err != CL_SUCCESS)
        return fcl_fail_cl(ctx, err, "validation: reading the comparison back");

    flashcl_validation *R = &pl->report;
    fcl_tolerance(p->dtype, p->seq_kv, pl->config.mma != 0, &R->atol, &R->rtol);
    R->ran = 1;
    R->rows_checked = vs->n_rows;
    R->rows_total = pl->layout.row_groups * pl->layout.group_rows;
    R->worst_row = -1;
    double worst_rel = -1.0;
    for (size_t r = 0; r < n; ++r) {
        const float *s = vs->host_stats + 4 * r;
        const cl_int *inf = vs->host_info + 4 * r;
        R->failures += inf[1];
        R->nan_count += inf[2];
        const double abs_err = s[0];
        const double rel = abs_err / (double)s[3];
        if (abs_err > R->max_abs_error)
            R->max_abs_error = abs_err;
        if (rel > worst_rel || isnan(rel)) {
            worst_rel = isnan(rel) ? INFINITY : rel;
            R->max_rel_error = worst_rel;
            R->worst_row = vs->host_rows[r];
            R->worst_col = inf[0];
            R->worst_out = s[1];
            R->worst_ref = s[2];
        }
    }
    R->passed = R->failures == 0 && R->nan_count == 0;
    if (!R->passed)
        return fcl_fail(ctx, FLASHCL_VALIDATION_FAILED,
                        "validation failed: %lld elements of the %lld checked rows are outside the tolerance (%lld "
                        "non-finite); worst row %lld col %d: got %g, naive %g (atol %.3g x row scale, rtol %.3g)",
                        (long long)R->failures, (long long)R->rows_checked, (long long)R->nan_count,
                        (long long)R->worst_row, (int)R->worst_col, R->worst_out, R->worst_ref, R->atol, R->rtol);
    return FLASHCL_SUCCESS;
}
