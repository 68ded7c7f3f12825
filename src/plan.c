/* SPDX-License-Identifier: MIT */
/*
 * plan.c: plans: validate the problem, choose the configuration, build its kernels (shrinking the
 * tiles when the compiled kernel needs more than the formula promised) and fix their constant
 * arguments once. The enqueue, the hot path, is src/enqueue.c.
 */
#include "kernels/module.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A kernel's arguments that never change (sizes, scale, strides), by its module. */
static flashcl_status bind_constants(flashcl_plan *pl, cl_kernel k, fcl_kernel_id id, const char *what)
{
    fcl_args a = fcl_args_of(k, id);
    const fcl_kernel_module *m = fcl_module_of(id);
    if (m->bind_constants)
        m->bind_constants(&a, pl);
    return fcl_args_check(pl->ctx, &a, what);
}

/* kv_append: the kernel that writes a step's new keys and values into the cache (cl/kvcache.cl). */
static flashcl_status setup_append(flashcl_plan *pl)
{
    flashcl_status st = fcl_kernel_create(pl->ctx, FCL_K_KV_APPEND, &pl->problem, &pl->config, &pl->append, NULL, 0);
    if (st != FLASHCL_SUCCESS)
        return st;
    size_t global[2], local[2];
    fcl_append_module.grid(pl, global, local);
    pl->append_global = global[0];
    return bind_constants(pl, pl->append, FCL_K_KV_APPEND, NULL);
}

/* Split-KV: the size of the partial results (their memory is the caller's workspace or the plan's,
 * bound at each enqueue) and the merge kernel (cl/flash_combine.cl), except where flash_decode_mma merges
 * its splits itself (the counters' number is the grid's, set with it). */
static flashcl_status setup_splits(flashcl_plan *pl)
{
    flashcl_context *ctx = pl->ctx;
    const flashcl_problem *p = &pl->problem;
    const resolved_layout *L = &pl->layout;
    const cl_long rows = (cl_long)(L->row_groups * L->group_rows);
    const cl_int splits = pl->config.kv_splits;
    /* (splits x rows x (d_v + 1) floats: refused where that passes 64 bits, never a wrapped size) */
    uint64_t partial_floats = 0;
    validate_or_return(ctx,
                       !__builtin_mul_overflow((uint64_t)splits, (uint64_t)rows, &partial_floats) &&
                           !__builtin_mul_overflow(partial_floats, (uint64_t)fcl_head_dim_v(p), &pl->ws_lse_floats) &&
                           !__builtin_add_overflow(pl->ws_lse_floats, partial_floats, &pl->ws_bytes) &&
                           !__builtin_mul_overflow(pl->ws_bytes, (uint64_t)sizeof(float), &pl->ws_bytes),
                       FLASHCL_INVALID_ARGUMENT,
                       "problem: the split-KV workspace, kv_splits = %d x %lld rows x (head_dim_v + 1) floats, "
                       "overflows 64 bits",
                       (int)splits, (long long)rows);
    if (pl->kernel_id == FCL_K_FLASH_DECODE_MMA && fcl_decode_mma_fuses(&pl->config)) {
        pl->fused_merge = 1;
        return FLASHCL_SUCCESS;
    }
    flashcl_status st = fcl_kernel_create(ctx, FCL_K_FLASH_COMBINE, p, &pl->config, &pl->combine, NULL, 0);
    if (st != FLASHCL_SUCCESS)
        return st;
    size_t global[2], local[2];
    fcl_combine_module.grid(pl, global, local);
    pl->combine_global = global[0];
    pl->combine_local = local[0];
    return bind_constants(pl, pl->combine, FCL_K_FLASH_COMBINE, "split-KV");
}

/* What the compiled kernel allows: its work-group limit and its local memory. */
static flashcl_status measure_kernel(flashcl_context *ctx, cl_kernel k, size_t *wg, cl_ulong *local, cl_ulong *priv)
{
    cl_int err = clGetKernelWorkGroupInfo(k, ctx->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof *wg, wg, NULL);
    if (err != CL_SUCCESS)
        return fcl_fail_cl(ctx, err, "clGetKernelWorkGroupInfo(CL_KERNEL_WORK_GROUP_SIZE)");
    err = clGetKernelWorkGroupInfo(k, ctx->device, CL_KERNEL_LOCAL_MEM_SIZE, sizeof *local, local, NULL);
    if (err != CL_SUCCESS)
        return fcl_fail_cl(ctx, err, "clGetKernelWorkGroupInfo(CL_KERNEL_LOCAL_MEM_SIZE)");
    *priv = 0;
    err = clGetKernelWorkGroupInfo(k, ctx->device, CL_KERNEL_PRIVATE_MEM_SIZE, sizeof *priv, priv, NULL);
    if (err != CL_SUCCESS)
        return fcl_fail_cl(ctx, err, "clGetKernelWorkGroupInfo(CL_KERNEL_PRIVATE_MEM_SIZE)");
    return FLASHCL_SUCCESS;
}

/*
 * Builds the kernel of the first of the chooser's candidates that its compiler accepts: one that does
 * not build, needs more work-items or local memory than the compiled kernel allows, or keeps its register
 * block in memory, gives way to the candidate fcl_next_candidate names for what the compiler reported
 * (src/candidates.c). The naive validator has one candidate: its work-group shrinks to the compiled size.
 */
static flashcl_status build_kernel(flashcl_plan *pl, const fcl_candidates *list)
{
    flashcl_context *ctx = pl->ctx;
    /* What a compiled kernel may take: the reported size, or on a GPU what static arrays may (the probe) */
    const uint64_t local_limit = !ctx->profile.is_cpu && ctx->profile.local_mem_static > ctx->profile.local_mem_size
                                     ? ctx->profile.local_mem_static
                                     : ctx->profile.local_mem_size;
    int i = 0;
    pl->config = list->config[0];
    for (int attempt = 0; attempt < FCL_MAX_CANDIDATES + 8; ++attempt) {
        const fcl_kernel_id id = fcl_config_kernel(&pl->config);
        cl_kernel k = NULL;
        flashcl_status st = fcl_kernel_create(ctx, id, &pl->problem, &pl->config, &k, pl->options, sizeof pl->options);
        fcl_compiled got = {.built = st == FLASHCL_SUCCESS};
        if (st != FLASHCL_SUCCESS && (id == FCL_K_FLASH_FWD || id == FCL_K_NAIVE_FWD))
            return st; /* (the portable kernel and the validator build for every device) */
        cl_ulong klocal = 0, kpriv = 0;
        if (got.built && (st = measure_kernel(ctx, k, &got.work_group, &klocal, &kpriv)) != FLASHCL_SUCCESS) {
            clReleaseKernel(k);
            return st;
        }
        got.local_mem = klocal;
        got.private_mem = kpriv;
        /* the program's required work-group size (0: none), asked once: what the drivers below under-report
         * the compiled size against, and what a plan must launch */
        size_t required[3] = {0, 0, 0};
        if (got.built && clGetKernelWorkGroupInfo(k, ctx->device, CL_KERNEL_COMPILE_WORK_GROUP_SIZE, sizeof required,
                                                  required, NULL) != CL_SUCCESS)
            required[0] = 0;
        /* flash_mfma on rusticl (Mesa 22.3, llvmpipe): it reports 32 work-items for every kernel, one with
         * no local or private memory too, and runs a kernel of a required size of 256 with the right result
         * (a probe, 2026-12-04: docs/design/mfma.md); flash_mfma's waves are 64 work-items and flash_wmma's
         * 32, never fewer, and their work-groups their own choice. */
        const int takes_compiled = (id == FCL_K_FLASH_WGMMA && fcl_wgmma_producer(&pl->config)) ||
                                   ((id == FCL_K_FLASH_MFMA || id == FCL_K_FLASH_WMMA || id == FCL_K_FLASH_DPAS) &&
                                    ctx->profile.vendor == FLASHCL_VENDOR_MESA);
        /* flash_wgmma's producer warpgroup (384 work-items): NVIDIA's driver (580) reports 256 for every kernel
         * of a required size of 384 that a probe built (docs/design/wgmma.md, "The finishing step's header":
         * with or without setmaxnreg, whatever the entry's header) and launches each at 384 with the right
         * result; ptxas allocated for 384 (168 registers at the entry). The compiled size is then what the
         * kernel takes. */
        if (got.built && takes_compiled && got.work_group < (size_t)pl->config.work_group_size &&
            required[0] == (size_t)pl->config.work_group_size)
            got.work_group = required[0];
        /* a program whose required work-group size is not the one its plan launches: a defect of flashcl's
         * (568d126's, a launch failing with CL_INVALID_WORK_GROUP_SIZE on the device), said at the plan */
        if (got.built && pl->config.algorithm == FLASHCL_ALGO_FLASH && required[0] != 0 &&
            required[0] != (size_t)pl->config.work_group_size) {
            clReleaseKernel(k);
            return fcl_fail(ctx, FLASHCL_BUILD_FAILED,
                            "%s's program requires work-groups of %zu work-items and its plan launches %d (the "
                            "kernel's source and flashcl's chooser disagree: a defect to report, with `flashcl "
                            "tiles` for the problem)",
                            pl->config.kernel_name, required[0], (int)pl->config.work_group_size);
        }
        if (pl->config.algorithm != FLASHCL_ALGO_FLASH) {
            if (got.work_group >= (size_t)pl->config.work_group_size) {
                pl->kernel = k;
                pl->kernel_id = id;
                return FLASHCL_SUCCESS;
            }
            clReleaseKernel(k);
            if (got.work_group < 1)
                break;
            pl->config.work_group_size = (int32_t)got.work_group; /* naive: a smaller work-group */
            continue;
        }
        flashcl_config next = pl->config;
        const int j = fcl_next_candidate(&ctx->profile, list, i, &got, local_limit, fcl_head_dim_v(&pl->problem), &next);
        if (j == i) {
            pl->kernel = k;
            pl->kernel_id = id;
            return FLASHCL_SUCCESS;
        }
        if (k)
            clReleaseKernel(k);
        if (j < 0) {
            if (!got.built)
                return st;
            break;
        }
        i = j;
        pl->config = next;
    }
    return fcl_fail(ctx, FLASHCL_UNSUPPORTED,
                    "no tile configuration of %s for head_dim %d fits this device (%s: %llu B local memory, "
                    "work-group %zu)",
                    pl->config.kernel_name, pl->problem.head_dim, ctx->profile.name,
                    (unsigned long long)local_limit, ctx->profile.max_work_group_size);
}

/* The choice a plan on this context makes: the context's path, limits, database and override. */
static void context_choice(flashcl_context *ctx, flashcl_algorithm algorithm, fcl_choice *ch, flashcl_config *override)
{
    fcl_choice_of(&ctx->profile, ctx->path, ctx->local_mem_limit, ctx->tuning_db, ch);
    int has = 0;
    if (algorithm == FLASHCL_ALGO_FLASH)
        fcl_context_get_override(ctx, &has, override);
    if (has)
        ch->override = override;
}

flashcl_status flashcl_context_choose_config(flashcl_context *ctx, const flashcl_problem *problem,
                                             flashcl_algorithm algorithm, flashcl_config *config)
{
    if (!ctx)
        return fcl_fail(NULL, FLASHCL_INVALID_ARGUMENT, "flashcl_context_choose_config: ctx is NULL");
    validate_or_return(ctx, problem && config, FLASHCL_INVALID_ARGUMENT, "flashcl_context_choose_config: %s is NULL",
                       !problem ? "problem" : "config");
    fcl_choice ch;
    flashcl_config override;
    context_choice(ctx, algorithm, &ch, &override);
    flashcl_problem sides;
    return fcl_choose(ctx, &ctx->profile, &ch, fcl_problem_sides(problem, &sides), algorithm, config);
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
    flashcl_problem sides;
    problem = fcl_problem_sides(problem, &sides);
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

    fcl_choice choice;
    flashcl_config override;
    context_choice(ctx, algorithm, &choice, &override);
    fcl_candidates *list = malloc(sizeof *list);
    if (!list) {
        st = fcl_fail(ctx, FLASHCL_OUT_OF_HOST_MEMORY, "flashcl_plan_create: out of host memory");
        goto fail;
    }
    st = fcl_choose_candidates(ctx, &ctx->profile, &choice, &pl->problem, algorithm, list);
    if (st == FLASHCL_SUCCESS)
        pl->config = list->config[0];
    if (st == FLASHCL_SUCCESS && algorithm != FLASHCL_ALGO_STANDARD)
        st = build_kernel(pl, list);
    free(list);
    if (st != FLASHCL_SUCCESS)
        goto fail;
    if (algorithm == FLASHCL_ALGO_STANDARD) {
        if ((st = fcl_standard_setup(pl)) != FLASHCL_SUCCESS)
            goto fail;
        *out = pl;
        return FLASHCL_SUCCESS;
    }
    if (pl->config.algorithm == FLASHCL_ALGO_FLASH && pl->config.kv_splits > 1 &&
        (st = setup_splits(pl)) != FLASHCL_SUCCESS)
        goto fail;
    if (pl->problem.kv_cache && pl->problem.kv_append && (st = setup_append(pl)) != FLASHCL_SUCCESS)
        goto fail;
    if ((st = bind_constants(pl, pl->kernel, (fcl_kernel_id)pl->kernel_id, NULL)) != FLASHCL_SUCCESS)
        goto fail;
    fcl_module_of((fcl_kernel_id)pl->kernel_id)->grid(pl, pl->global, pl->local);
    if (pl->fused_merge) /* (a counter a row block: the work-groups of one split) */
        pl->counter_slots = pl->global[0] / pl->local[0] * (pl->global[1] / pl->local[1]) / (size_t)pl->config.kv_splits;
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
    flashcl_plan_release_tensors(pl);
    if (pl->kernel)
        clReleaseKernel(pl->kernel);
    if (pl->combine)
        clReleaseKernel(pl->combine);
    if (pl->append)
        clReleaseKernel(pl->append);
    if (pl->partial)
        clReleaseMemObject(pl->partial);
    if (pl->counters)
        clReleaseMemObject(pl->counters);
    if (pl->last_use)
        clReleaseEvent(pl->last_use);
    if (pl->last_queue)
        clReleaseCommandQueue(pl->last_queue);
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
    if (plan->partial) /* split-KV's partial results, allocated by an enqueue without a workspace */
        bytes += plan->ws_bytes;
    if (plan->counters) /* flash_decode_mma's merge in the kernel: its counters */
        bytes += plan->counter_slots * sizeof(cl_int);
    return bytes;
}

uint64_t flashcl_plan_workspace_bytes(const flashcl_plan *plan)
{
    return plan ? plan->ws_bytes : 0;
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

flashcl_status flashcl_plan_tensor_bytes(const flashcl_plan *plan, struct flashcl_offsets *bytes)
{
    if (!plan || !bytes)
        return fcl_fail(plan ? plan->ctx : NULL, FLASHCL_INVALID_ARGUMENT, "flashcl_plan_tensor_bytes: %s is NULL",
                        !plan ? "plan" : "bytes");
    const resolved_layout *L = &plan->layout;
    const flashcl_problem *p = &plan->problem;
    const uint64_t cu = p->varlen ? L->cu_seqlens_bytes : 0, append = p->kv_cache && p->kv_append;
    const uint64_t cu_k = p->kv_cache ? 0 : cu; /* (over a KV cache the keys are cache_seqlens') */
    *bytes = (struct flashcl_offsets){.q = L->q_bytes, .k = L->k_bytes, .v = L->v_bytes, .o = L->o_bytes,
                                      .lse = L->lse_bytes, .alibi_slopes = L->alibi_bytes, .mask = L->mask_bytes,
                                      .key_padding = L->key_padding_bytes, .cu_seqlens_q = cu, .cu_seqlens_k = cu_k,
                                      .cache_seqlens = L->cache_seqlens_bytes, .block_table = L->block_table_bytes,
                                      .k_new = append ? L->kv_new_bytes : 0, .v_new = append ? L->v_new_bytes : 0,
                                      .k_scale = L->kv_scale_bytes, .v_scale = L->kv_scale_bytes,
                                      .sinks = L->sinks_bytes, .cache_batch_idx = L->cache_batch_idx_bytes,
                                      .cache_leftpad = L->cache_leftpad_bytes, .descale = L->descale_bytes,
                                      .workspace = plan->ws_bytes};
    return FLASHCL_SUCCESS;
}

flashcl_status flashcl_context_precompile(flashcl_context *ctx, const flashcl_problem *problems, size_t n)
{
    if (!ctx)
        return fcl_fail(NULL, FLASHCL_INVALID_ARGUMENT, "flashcl_context_precompile: ctx is NULL");
    validate_or_return(ctx, problems || n == 0, FLASHCL_INVALID_ARGUMENT,
                       "flashcl_context_precompile: problems is NULL (n = %zu)", n);
    for (size_t i = 0; i < n; ++i) {
        flashcl_plan *pl = NULL;
        const flashcl_status st = flashcl_plan_create(ctx, &problems[i], &pl);
        if (st != FLASHCL_SUCCESS) {
            char *why = fcl_strdup(flashcl_context_last_error(ctx));
            fcl_fail(ctx, st, "flashcl_context_precompile: problems[%zu]: %s", i, why ? why : "(no message)");
            free(why);
            return st;
        }
        flashcl_plan_destroy(&pl);
    }
    return FLASHCL_SUCCESS;
}
