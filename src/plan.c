/*
 * plan.c: plans (validate, choose tiles, get the program, fix the kernel's constant arguments once)
 * and their enqueue, the hot path: check the buffers, set five arguments, launch.
 */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Flash kernel argument order (cl/flash_fwd.cl). */
enum { FA_Q, FA_K, FA_V, FA_O, FA_LSE, FA_SEQ_Q, FA_SEQ_KV, FA_HEADS_Q, FA_GROUP, FA_SCALE, FA_WIN_LEFT,
       FA_WIN_RIGHT, FA_SOFTCAP, FA_WRITE_LSE, FA_STRIDES, FA_ALIBI = FA_STRIDES + 12, FA_ALIBI_PER_BATCH, FA_MASK,
       FA_MASK_STRIDES, FA_KPM = FA_MASK_STRIDES + 3, FA_CU_Q, FA_CU_K, FA_TOTAL_Q, FA_TOTAL_KV, FA_SPLITS, FA_OP, FA_LP, FA_ROWS_TOTAL, FA_CACHE_LENS, FA_BT,
       FA_MAX_PAGES, FA_NUM_PAGES };
/* Naive kernel argument order (cl/naive.cl, naive_fwd). */
enum { NA_Q, NA_K, NA_V, NA_SEQ_Q, NA_SEQ_KV, NA_HEADS_Q, NA_GROUP, NA_SCALE, NA_WIN_LEFT, NA_WIN_RIGHT,
       NA_SOFTCAP, NA_STRIDES, NA_ALIBI = NA_STRIDES + 9, NA_ALIBI_PER_BATCH, NA_MASK, NA_MASK_STRIDES,
       NA_KPM = NA_MASK_STRIDES + 3, NA_CU_Q, NA_CU_K, NA_TOTAL_Q, NA_TOTAL_KV, NA_BATCH, NA_CACHE_LENS, NA_BT, NA_MAX_PAGES,
       NA_NUM_PAGES, NA_O, NA_LSE, NA_WRITE_LSE,
       NA_TOTAL_ROWS, NA_O_STRIDES };

static const char *dtype_define(flashcl_dtype t)
{
    return t == FLASHCL_DTYPE_F16 ? "-DFLASHCL_DTYPE_F16" : t == FLASHCL_DTYPE_BF16 ? "-DFLASHCL_DTYPE_BF16" : "-DFLASHCL_DTYPE_F32";
}

void fcl_build_options(const flashcl_problem *p, const flashcl_config *c, char *buf, size_t n)
{
    /* Biases and masks are compiled in only where the problem has them. */
    char extras[160] = "";
    if (p->alibi || p->attn_mask || p->key_padding || p->varlen || p->kv_cache)
        snprintf(extras, sizeof extras,
                 " -DHAS_ALIBI=%d -DHAS_MASK=%d -DHAS_KPM=%d -DVARLEN=%d -DKV_CACHE=%d -DKV_APPEND=%d -DPAGE_SIZE=%d",
                 p->alibi != 0, p->attn_mask != 0, p->key_padding != 0, p->varlen != 0, p->kv_cache != 0,
                 p->kv_cache && p->kv_append, p->kv_cache ? p->page_size : 0);
    if (c->algorithm == FLASHCL_ALGO_FLASH && c->mma) {
        /* 16-byte copies where every Q, K and V row starts at a multiple of 8 elements */
        const flashcl_strides *st[3] = {&p->q_strides, &p->k_strides, &p->v_strides};
        int aligned = 1;
        for (int i = 0; i < 3; ++i)
            aligned &= st[i]->batch % 8 == 0 && st[i]->seq % 8 == 0 && st[i]->head % 8 == 0;
        snprintf(buf, n, "-cl-std=CL1.2 %s -DHEAD_DIM=%d -DBLOCK_N=%d -DWARPS=%d -DFCL_PTX=%d -DROWS_ALIGNED=%d",
                 dtype_define(p->dtype), p->head_dim, c->block_n, c->block_m / 16, c->mma == 1, aligned);
    } else if (c->algorithm == FLASHCL_ALGO_FLASH)
        snprintf(buf, n,
                 "-cl-std=CL1.2 %s -DHEAD_DIM=%d -DBLOCK_M=%d -DBLOCK_N=%d -DTM=%d -DCG=%d -DD_CHUNK=%d -DV_CHUNK=%d "
                 "-DGQA_PACK=%d%s",
                 dtype_define(p->dtype), p->head_dim, c->block_m, c->block_n, c->rows_per_item, c->threads_per_row,
                 c->d_chunk, c->v_chunk, c->gqa_pack > 1 ? c->gqa_pack : 1, extras);
    else
        snprintf(buf, n, "-cl-std=CL1.2 %s -DHEAD_DIM=%d%s", dtype_define(p->dtype), p->head_dim, extras);
}

static cl_int set_arg(cl_kernel k, cl_uint i, size_t size, const void *v, cl_int err)
{
    return err != CL_SUCCESS ? err : clSetKernelArg(k, i, size, v);
}

/* Sets the arguments that never change for a plan: sizes, scale, strides. */
static cl_int set_constant_args(flashcl_plan *pl)
{
    const flashcl_problem *p = &pl->problem;
    const resolved_layout *L = &pl->layout;
    cl_int group = p->heads_q / p->heads_kv, write_lse = p->return_lse != 0;
    cl_int win_left, win_right;
    fcl_visible_window(p, &win_left, &win_right);
    cl_long strides[12] = {L->q.batch, L->q.seq, L->q.head, L->k.batch, L->k.seq, L->k.head,
                           L->v.batch, L->v.seq, L->v.head, L->o.batch, L->o.seq, L->o.head};
    cl_kernel k = pl->kernel;
    cl_int err = CL_SUCCESS;
    cl_int alibi_per_batch = p->alibi == 2;
    cl_long mstr[3] = {L->mask.batch, L->mask.seq, L->mask.head};
    cl_int total_q = p->varlen ? (cl_int)p->total_q : 0, total_kv = p->varlen ? (cl_int)p->total_kv : 0;
    cl_int max_pages = L->max_pages, num_pages = p->kv_cache && p->page_size ? p->num_pages : 1;
    const int flash_k = pl->config.algorithm == FLASHCL_ALGO_FLASH;
    err = set_arg(k, flash_k ? FA_MAX_PAGES : NA_MAX_PAGES, sizeof(cl_int), &max_pages, err);
    err = set_arg(k, flash_k ? FA_NUM_PAGES : NA_NUM_PAGES, sizeof(cl_int), &num_pages, err);
    if (pl->config.algorithm == FLASHCL_ALGO_FLASH) {
        err = set_arg(k, FA_TOTAL_Q, sizeof(cl_int), &total_q, err);
        err = set_arg(k, FA_TOTAL_KV, sizeof(cl_int), &total_kv, err);
        cl_int splits = pl->config.kv_splits > 1 ? pl->config.kv_splits : 1;
        cl_long rows_total = (cl_long)(L->row_groups * L->group_rows);
        err = set_arg(k, FA_SPLITS, sizeof(cl_int), &splits, err);
        err = set_arg(k, FA_OP, sizeof(cl_mem), &pl->partial_o, err); /* NULL without splits: never read */
        err = set_arg(k, FA_LP, sizeof(cl_mem), &pl->partial_lse, err);
        err = set_arg(k, FA_ROWS_TOTAL, sizeof(cl_long), &rows_total, err);
        err = set_arg(k, FA_ALIBI_PER_BATCH, sizeof(cl_int), &alibi_per_batch, err);
        for (int i = 0; i < 3; ++i)
            err = set_arg(k, FA_MASK_STRIDES + i, sizeof(cl_long), &mstr[i], err);
        cl_float scale_log2 = fcl_effective_scale(p) * 1.4426950408889634f;
        err = set_arg(k, FA_SEQ_Q, sizeof(cl_int), &p->seq_q, err);
        err = set_arg(k, FA_SEQ_KV, sizeof(cl_int), &p->seq_kv, err);
        err = set_arg(k, FA_HEADS_Q, sizeof(cl_int), &p->heads_q, err);
        err = set_arg(k, FA_GROUP, sizeof(cl_int), &group, err);
        err = set_arg(k, FA_SCALE, sizeof(cl_float), &scale_log2, err);
        cl_float softcap_log2 = p->softcap * 1.4426950408889634f;
        err = set_arg(k, FA_WIN_LEFT, sizeof(cl_int), &win_left, err);
        err = set_arg(k, FA_WIN_RIGHT, sizeof(cl_int), &win_right, err);
        err = set_arg(k, FA_SOFTCAP, sizeof(cl_float), &softcap_log2, err);
        err = set_arg(k, FA_WRITE_LSE, sizeof(cl_int), &write_lse, err);
        for (int i = 0; i < 12; ++i)
            err = set_arg(k, FA_STRIDES + i, sizeof(cl_long), &strides[i], err);
    } else {
        cl_float scale = fcl_effective_scale(p);
        cl_long total = (cl_long)(L->row_groups * L->group_rows);
        err = set_arg(k, NA_TOTAL_Q, sizeof(cl_int), &total_q, err);
        err = set_arg(k, NA_TOTAL_KV, sizeof(cl_int), &total_kv, err);
        err = set_arg(k, NA_BATCH, sizeof(cl_int), &p->batch, err);
        err = set_arg(k, NA_ALIBI_PER_BATCH, sizeof(cl_int), &alibi_per_batch, err);
        for (int i = 0; i < 3; ++i)
            err = set_arg(k, NA_MASK_STRIDES + i, sizeof(cl_long), &mstr[i], err);
        err = set_arg(k, NA_SEQ_Q, sizeof(cl_int), &p->seq_q, err);
        err = set_arg(k, NA_SEQ_KV, sizeof(cl_int), &p->seq_kv, err);
        err = set_arg(k, NA_HEADS_Q, sizeof(cl_int), &p->heads_q, err);
        err = set_arg(k, NA_GROUP, sizeof(cl_int), &group, err);
        err = set_arg(k, NA_SCALE, sizeof(cl_float), &scale, err);
        cl_float softcap = p->softcap;
        err = set_arg(k, NA_WIN_LEFT, sizeof(cl_int), &win_left, err);
        err = set_arg(k, NA_WIN_RIGHT, sizeof(cl_int), &win_right, err);
        err = set_arg(k, NA_SOFTCAP, sizeof(cl_float), &softcap, err);
        for (int i = 0; i < 9; ++i)
            err = set_arg(k, NA_STRIDES + i, sizeof(cl_long), &strides[i], err);
        err = set_arg(k, NA_WRITE_LSE, sizeof(cl_int), &write_lse, err);
        err = set_arg(k, NA_TOTAL_ROWS, sizeof(cl_long), &total, err);
        for (int i = 0; i < 3; ++i)
            err = set_arg(k, NA_O_STRIDES + i, sizeof(cl_long), &strides[9 + i], err);
    }
    return err;
}

/* kv_append: the kernel that writes a step's new keys and values into the cache (cl/kvcache.cl). */
static flashcl_status setup_append(flashcl_plan *pl)
{
    flashcl_context *ctx = pl->ctx;
    const flashcl_problem *p = &pl->problem;
    const resolved_layout *L = &pl->layout;
    char options[160];
    snprintf(options, sizeof options, "-cl-std=CL1.2 %s -DHEAD_DIM=%d -DPAGE_SIZE=%d", dtype_define(p->dtype),
             p->head_dim, p->page_size);
    cl_program prog;
    flashcl_status st = fcl_get_program(ctx, "kvcache.cl", options, &prog);
    if (st != FLASHCL_SUCCESS)
        return st;
    cl_int err;
    pl->append = clCreateKernel(prog, "kv_append", &err);
    if (!pl->append)
        return fcl_fail_cl(ctx, err, "clCreateKernel(kv_append)");
    const cl_long total = (cl_long)p->batch * p->seq_q * p->heads_kv * p->head_dim;
    cl_int num_pages = p->page_size ? p->num_pages : 1;
    cl_long str[6] = {L->k.batch, L->k.seq, L->k.head, L->v.batch, L->v.seq, L->v.head};
    cl_kernel a = pl->append;
    err = set_arg(a, 6, sizeof(cl_int), &p->seq_q, CL_SUCCESS);
    err = set_arg(a, 7, sizeof(cl_int), &p->heads_kv, err);
    err = set_arg(a, 8, sizeof(cl_int), &p->seq_kv, err);
    err = set_arg(a, 9, sizeof(cl_int), &L->max_pages, err);
    err = set_arg(a, 10, sizeof(cl_int), &num_pages, err);
    for (int i = 0; i < 6; ++i)
        err = set_arg(a, 11 + i, sizeof(cl_long), &str[i], err);
    err = set_arg(a, 17, sizeof(cl_long), &total, err);
    if (err != CL_SUCCESS)
        return fcl_fail_cl(ctx, err, "clSetKernelArg(kv_append)");
    pl->append_global = ((size_t)total + 63) / 64 * 64;
    return FLASHCL_SUCCESS;
}

/* Split-KV: the partial results' memory and the merge kernel (from the flash kernel's program). */
static flashcl_status setup_splits(flashcl_plan *pl)
{
    flashcl_context *ctx = pl->ctx;
    const flashcl_problem *p = &pl->problem;
    const cl_long rows = (cl_long)(pl->layout.row_groups * pl->layout.group_rows);
    const cl_int splits = pl->config.kv_splits;
    const size_t lse_bytes = (size_t)splits * (size_t)rows * sizeof(float);
    const size_t o_bytes = lse_bytes * (size_t)p->head_dim;
    cl_int err;
    pl->partial_o = clCreateBuffer(ctx->cl_ctx, CL_MEM_READ_WRITE, o_bytes, NULL, &err);
    if (!pl->partial_o)
        return fcl_fail_cl(ctx, err, "split-KV: allocating the partial outputs");
    pl->partial_lse = clCreateBuffer(ctx->cl_ctx, CL_MEM_READ_WRITE, lse_bytes, NULL, &err);
    if (!pl->partial_lse)
        return fcl_fail_cl(ctx, err, "split-KV: allocating the partial log-sum-exps");
    cl_program prog = NULL;
    err = clGetKernelInfo(pl->kernel, CL_KERNEL_PROGRAM, sizeof prog, &prog, NULL);
    if (err == CL_SUCCESS)
        pl->combine = clCreateKernel(prog, "flash_combine", &err);
    if (!pl->combine)
        return fcl_fail_cl(ctx, err, "split-KV: clCreateKernel(flash_combine)");
    const resolved_layout *L = &pl->layout;
    cl_int write_lse = p->return_lse != 0, group_rows = (cl_int)L->group_rows, varlen = p->varlen != 0;
    cl_long ostr[3] = {L->o.batch, L->o.seq, L->o.head};
    cl_kernel c = pl->combine;
    err = set_arg(c, 0, sizeof(cl_mem), &pl->partial_o, CL_SUCCESS);
    err = set_arg(c, 1, sizeof(cl_mem), &pl->partial_lse, err);
    err = set_arg(c, 2, sizeof(cl_int), &splits, err);
    err = set_arg(c, 3, sizeof(cl_long), &rows, err);
    err = set_arg(c, 6, sizeof(cl_int), &write_lse, err);
    err = set_arg(c, 7, sizeof(cl_int), &group_rows, err);
    err = set_arg(c, 8, sizeof(cl_int), &p->heads_q, err);
    for (int i = 0; i < 3; ++i)
        err = set_arg(c, 9 + i, sizeof(cl_long), &ostr[i], err);
    err = set_arg(c, 12, sizeof(cl_int), &varlen, err);
    if (err != CL_SUCCESS)
        return fcl_fail_cl(ctx, err, "split-KV: clSetKernelArg(flash_combine)");
    pl->combine_local = 64;
    const size_t items = (size_t)rows * (size_t)p->head_dim;
    pl->combine_global = (items + pl->combine_local - 1) / pl->combine_local * pl->combine_local;
    return FLASHCL_SUCCESS;
}

/* Builds the kernel for pl->config; when the compiled kernel needs more local memory or allows a
 * smaller work-group than the formula and the device promised, shrinks the limits and tries again. */
static flashcl_status build_kernel(flashcl_plan *pl)
{
    flashcl_context *ctx = pl->ctx;
    uint64_t budget = ctx->profile.local_mem_budget;
    size_t max_wg = ctx->profile.max_work_group_size;
    for (int attempt = 0; attempt < 8; ++attempt) {
        fcl_build_options(&pl->problem, &pl->config, pl->options, sizeof pl->options);
        cl_program prog;
        const char *src = pl->config.algorithm != FLASHCL_ALGO_FLASH ? "naive.cl"
                          : pl->config.mma                          ? "flash_mma.cl"
                                                                    : "flash_fwd.cl";
        flashcl_status st = fcl_get_program(ctx, src, pl->options, &prog);
        if (st != FLASHCL_SUCCESS && pl->config.mma) {
            /* The context's test compile built a smaller variant; this one did not build (the log is
             * in the context's last error): the portable kernel instead, with the reason. */
            flashcl_device_profile portable = ctx->profile;
            portable.path = FLASHCL_PATH_PORTABLE;
            if (flashcl_choose_config_db(&portable, &pl->problem, FLASHCL_ALGO_FLASH, ctx->tuning_db, &pl->config) !=
                FLASHCL_SUCCESS)
                return st;
            snprintf(pl->config.path_reason, sizeof pl->config.path_reason,
                     "portable: the matrix-unit kernel did not build for this problem");
            continue;
        }
        if (st != FLASHCL_SUCCESS)
            return st;
        cl_int err;
        cl_kernel k = clCreateKernel(prog, pl->config.kernel, &err);
        if (!k)
            return fcl_fail_cl(ctx, err, "clCreateKernel");
        size_t kwg = 0;
        cl_ulong klocal = 0;
        err = clGetKernelWorkGroupInfo(k, ctx->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof kwg, &kwg, NULL);
        if (err == CL_SUCCESS)
            err = clGetKernelWorkGroupInfo(k, ctx->device, CL_KERNEL_LOCAL_MEM_SIZE, sizeof klocal, &klocal, NULL);
        if (err != CL_SUCCESS) {
            clReleaseKernel(k);
            return fcl_fail_cl(ctx, err, "clGetKernelWorkGroupInfo");
        }
        if (kwg >= (size_t)pl->config.work_group_size && klocal <= ctx->profile.local_mem_size) {
            pl->kernel = k;
            return FLASHCL_SUCCESS;
        }
        clReleaseKernel(k);
        if (pl->config.algorithm != FLASHCL_ALGO_FLASH) {
            if (kwg < 1)
                break;
            pl->config.work_group_size = (int32_t)kwg;
            continue;
        }
        if (kwg < (size_t)pl->config.work_group_size)
            max_wg = kwg;
        if (klocal > ctx->profile.local_mem_size) {
            /* Scale the budget by what the compiler reported against the formula: a driver that
             * counts each byte twice (rusticl 22 on llvmpipe does) gets half the budget. */
            budget = (uint64_t)((double)pl->config.local_mem_bytes * (double)ctx->profile.local_mem_size /
                                (double)klocal);
        }
        flashcl_config smaller;
        if (pl->config.mma) { /* fewer warps or shorter key tiles, else the portable kernel */
            if (fcl_choose_mma(&ctx->profile, &pl->problem, budget, max_wg, &smaller) &&
                (smaller.block_m < pl->config.block_m || smaller.block_n < pl->config.block_n)) {
                fcl_strlcpy(smaller.source, "heuristic (shrunk)", sizeof smaller.source);
                snprintf(smaller.reason, sizeof smaller.reason,
                         "shrunk after compiling: the kernel allowed %zu work-items and needed %llu B of local memory",
                         kwg, (unsigned long long)klocal);
                fcl_strlcpy(smaller.path_reason, pl->config.path_reason, sizeof smaller.path_reason);
                pl->config = smaller;
                continue;
            }
        }
        flashcl_problem view;
        fcl_packed_view(&pl->problem, pl->config.gqa_pack, &view);
        if (fcl_choose_flash(&ctx->profile, &view, budget, max_wg, &smaller) != FLASHCL_SUCCESS)
            break;
        smaller.gqa_pack = pl->config.gqa_pack;
        fcl_strlcpy(smaller.source, "heuristic (shrunk)", sizeof smaller.source);
        snprintf(smaller.reason, sizeof smaller.reason,
                 "shrunk after compiling: the kernel allowed %zu work-items and needed %llu B of local memory",
                 kwg, (unsigned long long)klocal);
        smaller.kv_splits = fcl_choose_splits(&ctx->profile, &pl->problem, &smaller);
        if (pl->config.mma) /* the matrix-unit kernel has one tile shape: the portable kernel instead */
            snprintf(smaller.path_reason, sizeof smaller.path_reason,
                     "portable: the compiled matrix-unit kernel allowed %zu work-items, needed %llu B", kwg,
                     (unsigned long long)klocal);
        else
            fcl_strlcpy(smaller.path_reason, pl->config.path_reason, sizeof smaller.path_reason);
        pl->config = smaller;
    }
    return fcl_fail(ctx, FLASHCL_UNSUPPORTED,
                    "no tile configuration of %s for head_dim %d fits this device (%s: %llu B local memory, "
                    "work-group %zu)",
                    pl->config.kernel, pl->problem.head_dim, ctx->profile.name,
                    (unsigned long long)ctx->profile.local_mem_size, ctx->profile.max_work_group_size);
}

flashcl_status flashcl_context_choose_config(flashcl_context *ctx, const flashcl_problem *problem,
                                             flashcl_algorithm algorithm, flashcl_config *config)
{
    if (!ctx)
        return fcl_fail(NULL, FLASHCL_INVALID_ARGUMENT, "flashcl_context_choose_config: ctx is NULL");
    validate_or_return(ctx, problem && config, FLASHCL_INVALID_ARGUMENT, "flashcl_context_choose_config: %s is NULL",
                       !problem ? "problem" : "config");
    if (algorithm == FLASHCL_ALGO_FLASH && ctx->has_override) {
        resolved_layout layout;
        flashcl_status st = fcl_check_problem(ctx, problem, &layout);
        if (st != FLASHCL_SUCCESS)
            return st;
        flashcl_config c = ctx->override;
        char why[160];
        validate_or_return(ctx,
                           fcl_complete_flash_config(&ctx->profile, problem, ctx->profile.local_mem_budget,
                                                     ctx->profile.max_work_group_size, &c, why, sizeof why),
                           FLASHCL_INVALID_ARGUMENT, "the context's override config does not fit this problem: %s", why);
        fcl_strlcpy(c.source, "override", sizeof c.source);
        fcl_strlcpy(c.path_reason, "portable: tiles set by flashcl_context_override_config", sizeof c.path_reason);
        c.gqa_pack = fcl_gqa_pack(problem);
        c.kv_splits = fcl_choose_splits(&ctx->profile, problem, &c);
        snprintf(c.reason, sizeof c.reason, "set by flashcl_context_override_config");
        *config = c;
        return FLASHCL_SUCCESS;
    }
    flashcl_status st = flashcl_choose_config_db(&ctx->profile, problem, algorithm, ctx->tuning_db, config);
    if (st != FLASHCL_SUCCESS)
        return fcl_fail(ctx, st, "%s", flashcl_context_last_error(NULL));
    return FLASHCL_SUCCESS;
}

flashcl_status flashcl_plan_create_algo(flashcl_context *ctx, const flashcl_problem *problem,
                                        flashcl_algorithm algorithm, flashcl_plan **out)
{
    if (!ctx)
        return fcl_fail(NULL, FLASHCL_INVALID_ARGUMENT, "flashcl_plan_create: ctx is NULL");
    validate_or_return(ctx, out, FLASHCL_INVALID_ARGUMENT, "flashcl_plan_create: out is NULL");
    *out = NULL;
    validate_or_return(ctx, algorithm == FLASHCL_ALGO_FLASH || algorithm == FLASHCL_ALGO_NAIVE ||
                                algorithm == FLASHCL_ALGO_STANDARD,
                       FLASHCL_INVALID_ARGUMENT, "flashcl_plan_create: algorithm = %d is not a flashcl_algorithm",
                       (int)algorithm);
    resolved_layout layout;
    flashcl_status st = fcl_check_problem(ctx, problem, &layout);
    if (st != FLASHCL_SUCCESS)
        return st;

    flashcl_plan *pl = calloc(1, sizeof *pl);
    if (!pl)
        return fcl_fail(ctx, FLASHCL_OUT_OF_HOST_MEMORY, "flashcl_plan_create: out of host memory");
    pl->ctx = ctx;
    pl->problem = *problem;
    pl->problem.scale = fcl_effective_scale(problem);
    pl->problem.q_strides = layout.q;
    pl->problem.k_strides = layout.k;
    pl->problem.v_strides = layout.v;
    pl->problem.o_strides = layout.o;
    if (problem->attn_mask)
        pl->problem.mask_strides = layout.mask;
    pl->layout = layout;

    st = flashcl_context_choose_config(ctx, &pl->problem, algorithm, &pl->config);
    if (st != FLASHCL_SUCCESS)
        goto fail;
    if (algorithm == FLASHCL_ALGO_STANDARD) {
        if ((st = fcl_standard_setup(pl)) != FLASHCL_SUCCESS)
            goto fail;
        *out = pl;
        return FLASHCL_SUCCESS;
    }
    if ((st = build_kernel(pl)) != FLASHCL_SUCCESS)
        goto fail;
    if (pl->config.algorithm == FLASHCL_ALGO_FLASH && pl->config.kv_splits > 1 &&
        (st = setup_splits(pl)) != FLASHCL_SUCCESS)
        goto fail;
    if (pl->problem.kv_cache && pl->problem.kv_append && (st = setup_append(pl)) != FLASHCL_SUCCESS)
        goto fail;
    cl_int err = set_constant_args(pl);
    if (err != CL_SUCCESS) {
        st = fcl_fail_cl(ctx, err, "clSetKernelArg");
        goto fail;
    }
    const flashcl_problem *p = &pl->problem;
    if (pl->config.algorithm == FLASHCL_ALGO_FLASH) {
        const size_t pack = pl->config.gqa_pack > 1 ? (size_t)pl->config.gqa_pack : 1;
        size_t tiles = ((size_t)p->seq_q * pack + pl->config.block_m - 1) / pl->config.block_m;
        pl->local[0] = (size_t)pl->config.work_group_size;
        pl->local[1] = 1;
        pl->global[0] = tiles * pl->local[0];
        pl->global[1] = (size_t)p->batch * p->heads_q / pack * (size_t)(pl->config.kv_splits > 1 ? pl->config.kv_splits : 1);
    } else {
        size_t total = (size_t)(pl->layout.row_groups * pl->layout.group_rows);
        size_t wg = (size_t)pl->config.work_group_size;
        pl->local[0] = wg;
        pl->local[1] = 1;
        pl->global[0] = (total + wg - 1) / wg * wg;
        pl->global[1] = 1;
    }
    *out = pl;
    return FLASHCL_SUCCESS;
fail:
    flashcl_plan_destroy(&pl);
    return st;
}

flashcl_status flashcl_plan_create(flashcl_context *ctx, const flashcl_problem *problem, flashcl_plan **out)
{
    return flashcl_plan_create_algo(ctx, problem, FLASHCL_ALGO_FLASH, out);
}

void flashcl_plan_destroy(flashcl_plan **plan)
{
    if (!plan || !*plan)
        return;
    flashcl_plan *pl = *plan;
    if (pl->kernel)
        clReleaseKernel(pl->kernel);
    if (pl->combine)
        clReleaseKernel(pl->combine);
    if (pl->append)
        clReleaseKernel(pl->append);
    if (pl->partial_o)
        clReleaseMemObject(pl->partial_o);
    if (pl->partial_lse)
        clReleaseMemObject(pl->partial_lse);
    fcl_validation_free(pl->validation);
    fcl_standard_free(pl->standard);
    free(pl);
    *plan = NULL;
}

flashcl_status flashcl_plan_config(const flashcl_plan *plan, flashcl_config *config)
{
    if (!plan || !config)
        return fcl_fail(plan ? plan->ctx : NULL, FLASHCL_INVALID_ARGUMENT, "flashcl_plan_config: %s is NULL",
                        !plan ? "plan" : "config");
    *config = plan->config;
    return FLASHCL_SUCCESS;
}

flashcl_status flashcl_plan_problem(const flashcl_plan *plan, flashcl_problem *problem)
{
    if (!plan || !problem)
        return fcl_fail(plan ? plan->ctx : NULL, FLASHCL_INVALID_ARGUMENT, "flashcl_plan_problem: %s is NULL",
                        !plan ? "plan" : "problem");
    *problem = plan->problem;
    return FLASHCL_SUCCESS;
}

flashcl_context *flashcl_plan_context(const flashcl_plan *plan)
{
    return plan ? plan->ctx : NULL;
}

uint64_t flashcl_plan_extra_device_bytes(const flashcl_plan *plan)
{
    if (!plan)
        return 0;
    uint64_t bytes = fcl_standard_extra_bytes(plan->standard);
    if (plan->partial_o) /* split-KV's partial results */
        bytes += (uint64_t)plan->config.kv_splits * (uint64_t)(plan->layout.row_groups * plan->layout.group_rows) *
                 ((uint64_t)plan->problem.head_dim + 1) * sizeof(float);
    return bytes;
}

flashcl_status flashcl_plan_kernel_info(const flashcl_plan *plan, flashcl_kernel_info *info)
{
    if (!plan || !info)
        return fcl_fail(plan ? plan->ctx : NULL, FLASHCL_INVALID_ARGUMENT, "flashcl_plan_kernel_info: %s is NULL",
                        !plan ? "plan" : "info");
    if (!plan->kernel)
        return fcl_fail(plan->ctx, FLASHCL_UNSUPPORTED, "flashcl_plan_kernel_info: a standard plan runs CLBlast kernels");
    cl_ulong local = 0, priv = 0;
    size_t wg = 0;
    cl_device_id dev = plan->ctx->device;
    cl_int err = clGetKernelWorkGroupInfo(plan->kernel, dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL);
    if (err == CL_SUCCESS)
        err = clGetKernelWorkGroupInfo(plan->kernel, dev, CL_KERNEL_LOCAL_MEM_SIZE, sizeof local, &local, NULL);
    if (err == CL_SUCCESS)
        err = clGetKernelWorkGroupInfo(plan->kernel, dev, CL_KERNEL_PRIVATE_MEM_SIZE, sizeof priv, &priv, NULL);
    if (err != CL_SUCCESS)
        return fcl_fail_cl(plan->ctx, err, "clGetKernelWorkGroupInfo");
    info->max_work_group_size = wg;
    info->local_mem_bytes = local;
    info->private_mem_bytes = priv;
    return FLASHCL_SUCCESS;
}

void flashcl_plan_buffer_sizes(const flashcl_plan *plan, size_t *q, size_t *k, size_t *v, size_t *o, size_t *lse)
{
    const resolved_layout *L = plan ? &plan->layout : NULL;
    if (q)
        *q = L ? (size_t)L->q_bytes : 0;
    if (k)
        *k = L ? (size_t)L->k_bytes : 0;
    if (v)
        *v = L ? (size_t)L->v_bytes : 0;
    if (o)
        *o = L ? (size_t)L->o_bytes : 0;
    if (lse)
        *lse = L ? (size_t)L->lse_bytes : 0;
}

/* A buffer argument is usable when it is a buffer of the plan's context, large enough. */
static flashcl_status check_buffer(flashcl_context *ctx, cl_mem m, const char *name, uint64_t need)
{
    validate_or_return(ctx, m, FLASHCL_INVALID_ARGUMENT, "flashcl_plan_enqueue: %s is NULL", name);
    cl_context mctx = NULL;
    size_t size = 0;
    cl_mem_object_type type = 0;
    cl_int err = clGetMemObjectInfo(m, CL_MEM_TYPE, sizeof type, &type, NULL);
    if (err == CL_SUCCESS)
        err = clGetMemObjectInfo(m, CL_MEM_CONTEXT, sizeof mctx, &mctx, NULL);
    if (err == CL_SUCCESS)
        err = clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof size, &size, NULL);
    validate_or_return(ctx, err == CL_SUCCESS, FLASHCL_INVALID_ARGUMENT,
                       "flashcl_plan_enqueue: %s is not a valid cl_mem (%s)", name, fcl_cl_error_name(err));
    validate_or_return(ctx, type == CL_MEM_OBJECT_BUFFER, FLASHCL_INVALID_ARGUMENT,
                       "flashcl_plan_enqueue: %s is not a buffer", name);
    validate_or_return(ctx, mctx == ctx->cl_ctx, FLASHCL_INVALID_ARGUMENT,
                       "flashcl_plan_enqueue: %s belongs to another OpenCL context", name);
    validate_or_return(ctx, size >= need, FLASHCL_BUFFER_TOO_SMALL,
                       "flashcl_plan_enqueue: %s holds %zu bytes, the problem needs %llu", name, size,
                       (unsigned long long)need);
    return FLASHCL_SUCCESS;
}

static flashcl_status launch_kernel(flashcl_plan *pl, const flashcl_tensors *t, cl_uint num_events,
                                    const cl_event *wait_list, cl_event *done);

/* An optional input: present iff the problem asks for it, then checked like the others. */
static flashcl_status check_optional(flashcl_context *ctx, cl_mem m, int wanted, const char *name,
                                     const char *field, uint64_t need)
{
    if (wanted) {
        validate_or_return(ctx, m, FLASHCL_INVALID_ARGUMENT,
                           "flashcl_plan_enqueue: problem.%s is set but %s is NULL (pass it with "
                           "flashcl_plan_enqueue_tensors)",
                           field, name);
        return check_buffer(ctx, m, name, need);
    }
    validate_or_return(ctx, !m, FLASHCL_INVALID_ARGUMENT, "flashcl_plan_enqueue: %s given but problem.%s is 0",
                       name, field);
    return FLASHCL_SUCCESS;
}

flashcl_status flashcl_plan_enqueue_tensors(flashcl_plan *pl, const flashcl_tensors *t, cl_uint num_events,
                                            const cl_event *wait_list, cl_event *event)
{
    if (!pl)
        return fcl_fail(NULL, FLASHCL_INVALID_ARGUMENT, "flashcl_plan_enqueue: plan is NULL");
    flashcl_context *ctx = pl->ctx;
    validate_or_return(ctx, t, FLASHCL_INVALID_ARGUMENT, "flashcl_plan_enqueue_tensors: tensors is NULL");
    const cl_mem q = t->q, k = t->k, v = t->v, o = t->o, lse = t->lse;
    const flashcl_problem *p = &pl->problem;
    const resolved_layout *L = &pl->layout;
    flashcl_status st;
    if ((st = check_buffer(ctx, q, "q", L->q_bytes)) || (st = check_buffer(ctx, k, "k", L->k_bytes)) ||
        (st = check_buffer(ctx, v, "v", L->v_bytes)) || (st = check_buffer(ctx, o, "o", L->o_bytes)))
        return st;
    if (p->return_lse) {
        if ((st = check_buffer(ctx, lse, "lse", L->lse_bytes)))
            return st;
    } else {
        validate_or_return(ctx, !lse, FLASHCL_INVALID_ARGUMENT,
                           "flashcl_plan_enqueue: lse given but problem.return_lse is 0");
    }
    if ((st = check_optional(ctx, t->alibi_slopes, p->alibi != 0, "alibi_slopes", "alibi", L->alibi_bytes)) ||
        (st = check_optional(ctx, t->mask, p->attn_mask != 0, "mask", "attn_mask", L->mask_bytes)) ||
        (st = check_optional(ctx, t->key_padding, p->key_padding != 0, "key_padding", "key_padding",
                             L->key_padding_bytes)) ||
        (st = check_optional(ctx, t->cu_seqlens_q, p->varlen != 0, "cu_seqlens_q", "varlen", L->cu_seqlens_bytes)) ||
        (st = check_optional(ctx, t->cu_seqlens_k, p->varlen != 0, "cu_seqlens_k", "varlen", L->cu_seqlens_bytes)) ||
        (st = check_optional(ctx, t->cache_seqlens, p->kv_cache != 0, "cache_seqlens", "kv_cache",
                             L->cache_seqlens_bytes)) ||
        (st = check_optional(ctx, t->block_table, p->kv_cache && p->page_size, "block_table", "page_size",
                             L->block_table_bytes)) ||
        (st = check_optional(ctx, t->k_new, p->kv_cache && p->kv_append, "k_new", "kv_append", L->kv_new_bytes)) ||
        (st = check_optional(ctx, t->v_new, p->kv_cache && p->kv_append, "v_new", "kv_append", L->kv_new_bytes)))
        return st;
    validate_or_return(ctx, !t->k_new || (t->k_new != k && t->k_new != v && t->v_new != k && t->v_new != v),
                       FLASHCL_INVALID_ARGUMENT, "flashcl_plan_enqueue: k_new or v_new aliases the cache it is appended to");
    const cl_mem ins[12] = {q, k, v, t->alibi_slopes, t->mask, t->key_padding, t->cu_seqlens_q, t->cu_seqlens_k,
                            t->cache_seqlens, t->block_table, t->k_new, t->v_new};
    for (int i = 0; i < 12; ++i)
        validate_or_return(ctx, !ins[i] || (ins[i] != o && ins[i] != lse), FLASHCL_INVALID_ARGUMENT,
                           "flashcl_plan_enqueue: %s aliases an input buffer", ins[i] == o ? "o" : "lse");
    validate_or_return(ctx, !lse || lse != o, FLASHCL_INVALID_ARGUMENT, "flashcl_plan_enqueue: lse aliases o");
    validate_or_return(ctx, (num_events == 0) == (wait_list == NULL), FLASHCL_INVALID_ARGUMENT,
                       "flashcl_plan_enqueue: num_events_in_wait_list = %u but event_wait_list is %s",
                       num_events, wait_list ? "not NULL" : "NULL");
    /* Drivers differ here (PoCL accepts a NULL event, or another context's, and then waits forever):
     * check the events ourselves so that a bad list is refused the same way everywhere. */
    for (cl_uint i = 0; i < num_events; ++i) {
        cl_context ectx = NULL;
        validate_or_return(ctx,
                           wait_list[i] && clGetEventInfo(wait_list[i], CL_EVENT_CONTEXT, sizeof ectx, &ectx, NULL) ==
                                               CL_SUCCESS && ectx == ctx->cl_ctx,
                           FLASHCL_INVALID_ARGUMENT,
                           "flashcl_plan_enqueue: event_wait_list[%u] is %s", i,
                           !wait_list[i] ? "NULL" : ectx ? "an event of another OpenCL context" : "not a valid event");
    }

    const int validate = ctx->validate;
    cl_event done = NULL;
    if (pl->config.algorithm == FLASHCL_ALGO_STANDARD) {
        st = fcl_standard_enqueue(pl, q, k, v, o, lse, num_events, wait_list, (event || validate) ? &done : NULL);
        if (st != FLASHCL_SUCCESS)
            return st;
    } else {
        st = launch_kernel(pl, t, num_events, wait_list, (event || validate) ? &done : NULL);
        if (st != FLASHCL_SUCCESS)
            return st;
    }
    if (validate) {
        st = fcl_validate_run(pl, t, done);
        if (event)
            *event = done;
        else
            clReleaseEvent(done);
        return st;
    }
    if (event)
        *event = done;
    return FLASHCL_SUCCESS;
}

flashcl_status flashcl_plan_enqueue(flashcl_plan *pl, cl_mem q, cl_mem k, cl_mem v, cl_mem o, cl_mem lse,
                                    cl_uint num_events, const cl_event *wait_list, cl_event *event)
{
    const flashcl_tensors t = {.q = q, .k = k, .v = v, .o = o, .lse = lse};
    return flashcl_plan_enqueue_tensors(pl, &t, num_events, wait_list, event);
}

/* The flash or naive kernel: the buffer arguments, then the launch. */
static flashcl_status launch_kernel(flashcl_plan *pl, const flashcl_tensors *t, cl_uint num_events,
                                    const cl_event *wait_list, cl_event *done)
{
    flashcl_context *ctx = pl->ctx;
    cl_kernel kern = pl->kernel;
    const int flash = pl->config.algorithm == FLASHCL_ALGO_FLASH;
    /* Optional inputs are read only when compiled in; q stands in for absent ones. */
    const cl_mem alibi = t->alibi_slopes ? t->alibi_slopes : t->q, mask = t->mask ? t->mask : t->q,
                 kpm = t->key_padding ? t->key_padding : t->q, cu_q = t->cu_seqlens_q ? t->cu_seqlens_q : t->q,
                 cu_k = t->cu_seqlens_k ? t->cu_seqlens_k : t->q,
                 lens = t->cache_seqlens ? t->cache_seqlens : t->q, bt = t->block_table ? t->block_table : t->q;
    cl_int err = CL_SUCCESS;
    err = set_arg(kern, flash ? FA_CACHE_LENS : NA_CACHE_LENS, sizeof(cl_mem), &lens, err);
    err = set_arg(kern, flash ? FA_BT : NA_BT, sizeof(cl_mem), &bt, err);
    err = set_arg(kern, flash ? FA_CU_Q : NA_CU_Q, sizeof(cl_mem), &cu_q, err);
    err = set_arg(kern, flash ? FA_CU_K : NA_CU_K, sizeof(cl_mem), &cu_k, err);
    err = set_arg(kern, flash ? FA_Q : NA_Q, sizeof(cl_mem), &t->q, err);
    err = set_arg(kern, flash ? FA_K : NA_K, sizeof(cl_mem), &t->k, err);
    err = set_arg(kern, flash ? FA_V : NA_V, sizeof(cl_mem), &t->v, err);
    err = set_arg(kern, flash ? FA_O : NA_O, sizeof(cl_mem), &t->o, err);
    err = set_arg(kern, flash ? FA_LSE : NA_LSE, sizeof(cl_mem), &t->lse, err);
    err = set_arg(kern, flash ? FA_ALIBI : NA_ALIBI, sizeof(cl_mem), &alibi, err);
    err = set_arg(kern, flash ? FA_MASK : NA_MASK, sizeof(cl_mem), &mask, err);
    err = set_arg(kern, flash ? FA_KPM : NA_KPM, sizeof(cl_mem), &kpm, err);
    if (err != CL_SUCCESS)
        return fcl_fail_cl(ctx, err, "clSetKernelArg");

    cl_event appended = NULL;
    if (pl->append) { /* the step's keys and values into the cache, then the attention after it */
        const cl_mem bt = t->block_table ? t->block_table : t->q;
        err = set_arg(pl->append, 0, sizeof(cl_mem), &t->k, CL_SUCCESS);
        err = set_arg(pl->append, 1, sizeof(cl_mem), &t->v, err);
        err = set_arg(pl->append, 2, sizeof(cl_mem), &t->k_new, err);
        err = set_arg(pl->append, 3, sizeof(cl_mem), &t->v_new, err);
        err = set_arg(pl->append, 4, sizeof(cl_mem), &t->cache_seqlens, err);
        err = set_arg(pl->append, 5, sizeof(cl_mem), &bt, err);
        const size_t local = 64;
        if (err == CL_SUCCESS)
            err = clEnqueueNDRangeKernel(ctx->queue, pl->append, 1, NULL, &pl->append_global, &local, num_events,
                                         wait_list, &appended);
        if (err != CL_SUCCESS)
            return fcl_fail_cl(ctx, err, "kv_append: clEnqueueNDRangeKernel");
        num_events = 1;
        wait_list = &appended;
    }
    cl_event partial = NULL;
    err = clEnqueueNDRangeKernel(ctx->queue, kern, 2, NULL, pl->global, pl->local, num_events, wait_list,
                                 pl->combine ? &partial : done);
    if (appended)
        clReleaseEvent(appended);
    if (err != CL_SUCCESS)
        return fcl_fail_cl(ctx, err, "clEnqueueNDRangeKernel");
    if (pl->combine) { /* split-KV: merge the partial results, after them (the queue may be out of order) */
        err = set_arg(pl->combine, 4, sizeof(cl_mem), &t->o, CL_SUCCESS);
        err = set_arg(pl->combine, 5, sizeof(cl_mem), &t->lse, err);
        if (err == CL_SUCCESS)
            err = clEnqueueNDRangeKernel(ctx->queue, pl->combine, 1, NULL, &pl->combine_global, &pl->combine_local,
                                         1, &partial, done);
        clReleaseEvent(partial);
        if (err != CL_SUCCESS)
            return fcl_fail_cl(ctx, err, "split-KV: clEnqueueNDRangeKernel(flash_combine)");
    }
    return FLASHCL_SUCCESS;
}

flashcl_status flashcl_plan_last_validation(const flashcl_plan *plan, flashcl_validation *report)
{
    if (!plan || !report)
        return fcl_fail(plan ? plan->ctx : NULL, FLASHCL_INVALID_ARGUMENT,
                        "flashcl_plan_last_validation: %s is NULL", !plan ? "plan" : "report");
    *report = plan->report;
    return FLASHCL_SUCCESS;
}

unsigned flashcl_version(void)
{
    return FLASHCL_VERSION_NUMBER;
}

const char *flashcl_version_string(void)
{
#define FCL_STR2(x) #x
#define FCL_STR(x) FCL_STR2(x)
    return FCL_STR(FLASHCL_VERSION_MAJOR) "." FCL_STR(FLASHCL_VERSION_MINOR) "." FCL_STR(FLASHCL_VERSION_PATCH);
}
