/* SPDX-License-Identifier: MIT */
/*
 * validate.c: validation mode. After a plan's kernel, the naive kernel recomputes a set of rows in
 * fp32 and a compare kernel checks the plan's output against them; the host reads back a few numbers
 * per row. Rows: all of them up to validate_max_rows, else the first and last row of every head and
 * one row in every BLOCK_M tile.
 */
#include "kernels.h"

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

void fcl_tolerance(const flashcl_problem *p, int matrix_units, double *atol, double *rtol)
{
    const double eps32 = ldexp(1.0, -23);
    const flashcl_dtype dtype = (flashcl_dtype)p->dtype, op = fcl_kv_dtype(p);
    *rtol = dtype == FLASHCL_DTYPE_F16 ? ldexp(1.0, -10) : dtype == FLASHCL_DTYPE_BF16 ? ldexp(1.0, -7) : eps32;
    *atol = eps32 * (8.0 + 2.0 * sqrt((double)p->seq_kv));
    /* The matrix-unit kernels round P to the operands' type (K's) for P*V, as FlashAttention-2 does:
     * each output moves by up to that type's unit roundoff times the row's largest |V| mix, which the
     * row scale stands for; four of them. Q in another type is rounded to K's as it is loaded: each
     * score moves by about as much again (tests/test_flash.c measures both against float64: about one
     * unit roundoff of the row scale each, 2026-12-03), four more. */
    /* fp32 data under a TF32 precision (flash_mma): TF32 rounds Q, K, V and P alike (u = 2^-11, as fp16's),
     * twice the rounded operands of the fp16 case. TF32X3 leaves each product within about 2^-21 of its
     * value (the emulation: 1.6e-6 against the naive kernel at d=96-256, 2026-12-04), but NVIDIA's
     * matrix units gave up to 1.8e-5 of the row scale at d=128 and 4096 keys (against float64 and against
     * the naive kernel alike; d=64: 6.4e-6 and 8.6e-6), and one variant 3.0e-5 (H100, 2026-12-05/06;
     * neither staged sums nor rounded small parts moved it: docs/design/mma.md, tf32-4 and tf32-5). From
     * d=64 to 128 it grew 2.8x; the same growth puts d=256 near 5.2e-5 (not measured). 2^-14 (6.1e-5):
     * above both, where fp32's own 8 + 2 sqrt(N) ulps (1.6e-5 at 4096 keys) failed runs that were as the
     * precision states. */
    /* fp8 Q, K and V on the matrix units (flash_wgmma): P is rounded to E4M3 (u = 2^-4), each weight by up
     * to u, the output by up to u of the row's |V| mix: the emulation measured 4.2e-2 to 6.8e-2 of the row
     * scale at worst on N(0, 1) bytes (`flashcl bench --path wgmma --fp8 e4m3` on PoCL, d=64 and 128, N 64
     * to 3000, causal and not; tests/test_flash.c's wgmma_fp8 list, 2026-12-05), not falling with N (the
     * worst of more rows): four of them, 4u, as for the 16-bit P above. */
    if (matrix_units && p->qkv_format)
        *atol = fmax(*atol, 4.0 * ldexp(1.0, -4));
    else if (matrix_units && fcl_tf32(p) == 1)
        *atol = fmax(*atol, 8.0 * ldexp(1.0, -11));
    else if (matrix_units && fcl_tf32(p) == 3)
        *atol = fmax(*atol, ldexp(1.0, -14));
    else if (matrix_units) {
        const double u = op == FLASHCL_DTYPE_BF16 ? ldexp(1.0, -8) : ldexp(1.0, -11);
        *atol = fmax(*atol, 4.0 * u * (fcl_kv_mixed(p) ? 2.0 : 1.0));
    }
}

/* Whether the flash kernel rounds P (and a Q of another type) to K's type: the matrix-unit kernels. */
static int rounds_p(const flashcl_config *c)
{
    return c->algorithm == FLASHCL_ALGO_FLASH && (c->kernel == FLASHCL_KERNEL_MMA || c->kernel == FLASHCL_KERNEL_WGMMA ||
                                                  c->kernel == FLASHCL_KERNEL_MFMA || c->kernel == FLASHCL_KERNEL_WMMA ||
                                                  c->kernel == FLASHCL_KERNEL_DPAS ||
                                                  c->kernel == FLASHCL_KERNEL_DECODE_MMA);
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
    const flashcl_config naive = {.algorithm = FLASHCL_ALGO_NAIVE, .d_chunk = fcl_naive_chunk(&ctx->profile)};
    flashcl_status st = fcl_kernel_create(ctx, FCL_K_NAIVE_REF_ROWS, p, &naive, &vs->ref_kernel, NULL, 0);
    if (st == FLASHCL_SUCCESS)
        st = fcl_kernel_create(ctx, FCL_K_COMPARE_ROWS, p, &naive, &vs->compare_kernel, NULL, 0);
    if (st != FLASHCL_SUCCESS)
        return st;
    cl_int err;

    vs->host_rows = sample_rows(pl, &vs->n_rows);
    const size_t n = (size_t)vs->n_rows;
    vs->host_stats = malloc(n * 4 * sizeof(float));
    vs->host_info = malloc(n * 4 * sizeof(cl_int));
    if (!vs->host_rows || !vs->host_stats || !vs->host_info)
        return fcl_fail(ctx, FLASHCL_OUT_OF_HOST_MEMORY, "validation: out of host memory for %zu rows", n);
    vs->rows = clCreateBuffer(ctx->cl_ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * sizeof(cl_long),
                              vs->host_rows, &err);
    if (vs->rows)
        vs->ref = clCreateBuffer(ctx->cl_ctx, CL_MEM_READ_WRITE, n * fcl_head_dim_v(p) * sizeof(float), NULL, &err);
    if (vs->ref)
        vs->ref_lse = clCreateBuffer(ctx->cl_ctx, CL_MEM_READ_WRITE, n * sizeof(float), NULL, &err);
    if (vs->ref_lse)
        vs->stats = clCreateBuffer(ctx->cl_ctx, CL_MEM_READ_WRITE, n * 4 * sizeof(float), NULL, &err);
    if (vs->stats)
        vs->info = clCreateBuffer(ctx->cl_ctx, CL_MEM_READ_WRITE, n * 4 * sizeof(cl_int), NULL, &err);
    if (!vs->info)
        return fcl_fail_cl(ctx, err, "validation: clCreateBuffer");

    /* The arguments that never change: the problem's, the sampled rows and the scratch, the tolerance. */
    const resolved_layout *L = &pl->layout;
    fcl_args r = fcl_args_of(vs->ref_kernel, FCL_K_NAIVE_REF_ROWS);
    fcl_bind_naive_problem(&r, pl);
    fcl_arg_mem(&r, NR_rows, vs->rows);
    fcl_arg_long(&r, NR_n_rows, vs->n_rows);
    fcl_arg_mem(&r, NR_ref, vs->ref);
    fcl_arg_mem(&r, NR_ref_lse, vs->ref_lse);
    if ((st = fcl_args_check(ctx, &r, "validation")) != FLASHCL_SUCCESS)
        return st;
    double atol, rtol;
    fcl_tolerance(p, rounds_p(&pl->config), &atol, &rtol);
    fcl_args c = fcl_args_of(vs->compare_kernel, FCL_K_COMPARE_ROWS);
    fcl_arg_int(&c, CR_has_lse, p->return_lse != 0);
    fcl_arg_int(&c, CR_seq_q, (cl_int)L->group_rows); /* packed: total_q, and the head is row / total_q */
    fcl_arg_int(&c, CR_heads_q, p->heads_q);
    FCL_ARG_STRIDES(&c, CR_o, L->o);
    fcl_arg_mem(&c, CR_rows, vs->rows);
    fcl_arg_long(&c, CR_n_rows, vs->n_rows);
    fcl_arg_mem(&c, CR_ref, vs->ref);
    fcl_arg_mem(&c, CR_ref_lse, vs->ref_lse);
    fcl_arg_float(&c, CR_atol, (cl_float)atol);
    fcl_arg_float(&c, CR_rtol, (cl_float)rtol);
    fcl_arg_mem(&c, CR_stats, vs->stats);
    fcl_arg_mem(&c, CR_info, vs->info);
    return fcl_args_check(ctx, &c, "validation");
}

flashcl_status fcl_validate_run(flashcl_plan *pl, const flashcl_tensors *t, cl_event flash_done)
{
    const cl_mem o = t->o, lse = t->lse;
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
    fcl_args r = fcl_args_of(vs->ref_kernel, FCL_K_NAIVE_REF_ROWS);
    fcl_bind_naive_inputs(&r, t, &pl->off);
    if ((st = fcl_args_check(ctx, &r, "validation")) != FLASHCL_SUCCESS)
        return st;
    fcl_args c = fcl_args_of(vs->compare_kernel, FCL_K_COMPARE_ROWS);
    fcl_arg_mem(&c, CR_O, o);
    fcl_arg_mem(&c, CR_LSE, lse ? lse : o); /* never read when has_lse is 0 */
    fcl_arg_long(&c, CR_o_off, pl->off.o);
    fcl_arg_long(&c, CR_lse_off, pl->off.lse);
    if ((st = fcl_args_check(ctx, &c, "validation")) != FLASHCL_SUCCESS)
        return st;

    const size_t wg = 64;
    const size_t global = ((size_t)vs->n_rows + wg - 1) / wg * wg;
    cl_event ref_done = NULL;
    cl_int err = clEnqueueNDRangeKernel(pl->queue, vs->ref_kernel, 1, NULL, &global, NULL, 1, &flash_done, &ref_done);
    if (err != CL_SUCCESS)
        return fcl_fail_cl(ctx, err, "validation: enqueue naive_ref_rows");
    cl_event cmp_done = NULL;
    err = clEnqueueNDRangeKernel(pl->queue, vs->compare_kernel, 1, NULL, &global, NULL, 1, &ref_done, &cmp_done);
    clReleaseEvent(ref_done);
    if (err != CL_SUCCESS)
        return fcl_fail_cl(ctx, err, "validation: enqueue compare_rows");
    const size_t n = (size_t)vs->n_rows;
    err = clEnqueueReadBuffer(pl->queue, vs->stats, CL_FALSE, 0, n * 4 * sizeof(float), vs->host_stats, 1,
                              &cmp_done, NULL);
    if (err == CL_SUCCESS)
        err = clEnqueueReadBuffer(pl->queue, vs->info, CL_TRUE, 0, n * 4 * sizeof(cl_int), vs->host_info, 1,
                                  &cmp_done, NULL);
    clReleaseEvent(cmp_done);
    if (err != CL_SUCCESS)
        return fcl_fail_cl(ctx, err, "validation: reading the comparison back");

    flashcl_validation *R = &pl->report;
    fcl_tolerance(p, rounds_p(&pl->config), &R->atol, &R->rtol);
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
                        "non-finite where the naive result is finite); worst row %lld col %d: got %g, naive %g (atol %.3g x row scale, rtol %.3g)",
                        (long long)R->failures, (long long)R->rows_checked, (long long)R->nan_count,
                        (long long)R->worst_row, (int)R->worst_col, R->worst_out, R->worst_ref, R->atol, R->rtol);
    return FLASHCL_SUCCESS;
}
