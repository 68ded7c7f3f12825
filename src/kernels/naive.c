/* SPDX-License-Identifier: MIT */
/*
 * naive.c: the naive kernels' module (cl/naive.cl): naive_fwd, the textbook computation one row a
 * work-item (the validator, and FLASHCL_ALGO_NAIVE), and the validator's naive_ref_rows and compare_rows.
 * Design reasons: docs/design/naive.md.
 */
#include "module.h"

#include <stdio.h>
#include <string.h>

/* Output columns the naive kernels hold at once: on Intel GPUs 32, 8 on Xe-HPC and Xe2 (128 KiB of local
 * memory: pvc, bmg), where IGC kept a head_dim-long array in scratch or private memory (tools/vendor_check.sh:
 * tgllp, acm-g10, pvc at d=128; bmg-g21 with IGC 2.40 at 16 columns: 2368 bytes of spill); elsewhere all of
 * them (0). */
int32_t fcl_naive_chunk(const flashcl_device_profile *pr)
{
    return !fcl_intel_gpu(pr) ? 0 : fcl_intel_xe_hpc(pr) ? 8 : 32;
}

/* No local memory; one row per work-item, work-groups of one warp/wavefront width (at least 32, at most
 * what the device allows). */
static int naive_choose(const flashcl_device_profile *pr, const fcl_choice *ch, const flashcl_problem *p,
                        flashcl_config *cfg, char *why, size_t n)
{
    (void)ch;
    (void)p;
    (void)why;
    (void)n;
    size_t wg = pr->wg_multiple > 32 ? pr->wg_multiple : 32;
    while (wg > pr->max_work_group_size && wg > 1)
        wg /= 2;
    memset(cfg, 0, sizeof *cfg);
    cfg->algorithm = FLASHCL_ALGO_NAIVE;
    cfg->block_m = 1;
    cfg->block_n = 1;
    cfg->threads_per_row = 1;
    cfg->rows_per_item = 1;
    cfg->kv_splits = 1;
    cfg->gqa_pack = 1;
    cfg->work_group_size = (int32_t)wg;
    cfg->d_chunk = fcl_naive_chunk(pr);
    cfg->kernel = FLASHCL_KERNEL_NAIVE;
    fcl_strlcpy(cfg->kernel_name, "naive_fwd", sizeof cfg->kernel_name);
    fcl_strlcpy(cfg->source, "fixed", sizeof cfg->source);
    snprintf(cfg->reason, sizeof cfg->reason, "one row per work-item, work-groups of %zu", wg);
    return 1;
}

/* d_chunk > 0 asks for the output columns in chunks of that many. */
static void naive_options(const flashcl_problem *p, const flashcl_config *c, char *buf, size_t n)
{
    char features[256], chunk[32] = "", dv[32];
    fcl_feature_defines(p, 0, features, sizeof features);
    if (c->d_chunk > 0 && c->d_chunk < fcl_head_dim_v(p)) /* (chunks of the output's columns) */
        snprintf(chunk, sizeof chunk, " -DNAIVE_CHUNK=%d", c->d_chunk);
    fcl_dim_v_define(p, dv, sizeof dv);
    snprintf(buf, n, "-cl-std=CL1.2 %s -DHEAD_DIM=%d%s%s%s", fcl_dtype_define(p->dtype), p->head_dim, dv, features,
             chunk);
}

/* naive_fwd and naive_ref_rows share their inputs and the problem's structs, at the same positions: one
 * binding for both. */
_Static_assert((int)NF_prm == (int)NR_prm && (int)NF_offs == (int)NR_offs && (int)NF_descale == (int)NR_descale,
               "naive_fwd and naive_ref_rows must take their inputs at the same positions");

void fcl_bind_naive_problem(fcl_args *a, const flashcl_plan *pl)
{
    fcl_params prm;
    fcl_params_of(pl, &prm);
    fcl_arg_params(a, NF_prm, &prm);
}

void fcl_bind_naive_inputs(fcl_args *a, const flashcl_tensors *t, const fcl_offsets *off)
{
    fcl_kernel_offsets offs;
    fcl_kernel_offsets_of(off, 0, 0, &offs);
    fcl_arg_mem(a, NF_Q, t->q);
    fcl_arg_mem(a, NF_K, t->k);
    fcl_arg_mem(a, NF_V, t->v);
    fcl_arg_mem(a, NF_alibi, FCL_OPT(t, alibi_slopes));
    fcl_arg_mem(a, NF_mask, FCL_OPT(t, mask));
    fcl_arg_mem(a, NF_kpm, FCL_OPT(t, key_padding));
    fcl_arg_mem(a, NF_cu_q, FCL_OPT(t, cu_seqlens_q));
    fcl_arg_mem(a, NF_cu_k, FCL_OPT(t, cu_seqlens_k));
    fcl_arg_mem(a, NF_cache_lens, FCL_OPT(t, cache_seqlens));
    fcl_arg_mem(a, NF_bt, FCL_OPT(t, block_table));
    fcl_arg_mem(a, NF_k_scale, FCL_OPT(t, k_scale));
    fcl_arg_mem(a, NF_v_scale, FCL_OPT(t, v_scale));
    fcl_arg_mem(a, NF_sinks, FCL_OPT(t, sinks));
    fcl_arg_mem(a, NF_cache_idx, FCL_OPT(t, cache_batch_idx));
    fcl_arg_mem(a, NF_leftpad, FCL_OPT(t, cache_leftpad));
    fcl_arg_mem(a, NF_descale, FCL_OPT(t, descale));
    fcl_arg_offsets(a, NF_offs, &offs);
}

static void naive_constants(fcl_args *a, const flashcl_plan *pl)
{
    fcl_bind_naive_problem(a, pl);
}

static void naive_buffers(fcl_args *a, const flashcl_plan *pl, const flashcl_tensors *t, const fcl_scratch *s)
{
    (void)s;
    fcl_bind_naive_inputs(a, t, &pl->off);
    fcl_arg_mem(a, NF_O, t->o);
    fcl_arg_mem(a, NF_LSE, t->lse);
}

/* One row a work-item over every (batch, row, head) row. */
static void naive_grid(const flashcl_plan *pl, size_t global[2], size_t local[2])
{
    const size_t total = (size_t)(pl->layout.row_groups * pl->layout.group_rows);
    local[0] = (size_t)pl->config.work_group_size;
    local[1] = 1;
    global[0] = (total + local[0] - 1) / local[0] * local[0];
    global[1] = 1;
}

const fcl_kernel_module fcl_naive_module = {
    .id = FCL_K_NAIVE_FWD,
    .name = "naive",
    .choose = naive_choose,
    .options = naive_options,
    .bind_constants = naive_constants,
    .bind_buffers = naive_buffers,
    .grid = naive_grid,
};
