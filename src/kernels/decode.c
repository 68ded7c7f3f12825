/* SPDX-License-Identifier: MIT */
/*
 * decode.c: the decode kernel's module (cl/flash_decode.cl): a decode step (16 queries or fewer) with K
 * and V streamed straight to registers by teams of head_dim/8 lanes a key, the team's sums by the
 * device's shuffles where proven (decode 2) or through local memory (decode 1). Design reasons:
 * docs/design/decode.md.
 */
#include "module.h"

#include <stdio.h>
#include <string.h>

/* cl/flash_decode.cl's layout: the teams' merge area, and the local-memory reduction's where the device
 * has no shuffles (shared). */
static uint64_t decode_bytes(int32_t d, int32_t rows, int32_t team, int32_t kt, int32_t wg, int shuffles)
{
    const uint64_t D = (uint64_t)d, R = (uint64_t)rows, T = (uint64_t)team, KT = (uint64_t)kt, WG = (uint64_t)wg;
    return FCL_DECODE_FLOATS(D, R, T, KT, WG, shuffles) * sizeof(float); /* (cl/layout.h) */
}

static uint64_t decode_local_bytes(int32_t d, int32_t dv, const flashcl_config *c)
{
    (void)dv;
    if (c->block_m < 1 || c->team < 1 || c->keys_per_step < 1 || c->work_group_size < c->team)
        return 0;
    return decode_bytes(d, c->block_m, c->team, c->keys_per_step, c->work_group_size, c->shuffles);
}

/* Shared with the matrix-unit decode kernel: a decode step without an additive mask or packed sequences,
 * V's head dim Q's, at most 4096 packed rows a KV head. */
int fcl_decode_takes(const flashcl_problem *p, char *why, size_t n)
{
    const char *no = NULL;
    if (!fcl_is_decode(p))
        no = "not a decode step (more than 16 queries)";
    else if (p->qkv_format)
        no = "fp8 Q, K and V (problem.qkv_format: the portable kernel's)";
    else if (p->attn_mask || p->varlen)
        no = "an additive mask or packed sequences (the decode kernel has neither)";
    else if (fcl_head_dim_v(p) != p->head_dim)
        no = "head_dim_v other than head_dim (the decode kernels' lanes span one head dim)";
    else if ((int64_t)p->seq_q * (p->heads_q / p->heads_kv) > 4096)
        no = "more than 4096 query rows per KV head";
    if (no)
        snprintf(why, n, "%s", no);
    return no == NULL;
}

/* Registers a work-item keeps: 8 elements of each row's query and output and of each key's K and V, and a
 * score per row and key. */
static int64_t decode_regs(int64_t rows, int64_t kt)
{
    return 8 * (2 * rows + 2 * kt) + rows * kt;
}

static int64_t decode_register_block(const flashcl_config *c, int32_t head_dim_v)
{
    (void)head_dim_v;
    return decode_regs(c->block_m, c->keys_per_step);
}

/* Teams of head_dim/8 lanes (a power of two) per key, 128 work-items, up to 8 of the KV head's packed
 * query rows per work-group, 4 keys per team and step (2 with 8 rows: registers), within the choice's
 * limits. */
static int decode_choose(const flashcl_device_profile *pr, const fcl_choice *ch, const flashcl_problem *p,
                         flashcl_config *cfg, char *why, size_t why_len)
{
    const int shuffles = fcl_ptx_units(pr); /* inline PTX shfl, proven by the matrix-unit test compile */
    int32_t team = 1;
    while (team * 8 < p->head_dim)
        team *= 2;
    const int64_t packed = (int64_t)p->seq_q * (p->heads_q / p->heads_kv);
    int32_t rows = packed < 8 ? (int32_t)packed : 8;
    int32_t wg = 128;
    /* the shuffles name a whole warp's lanes: never fewer than 32 work-items with them */
    const int32_t wg_min = shuffles && team < 32 ? 32 : team;
    while ((size_t)wg > ch->work_group && wg > wg_min)
        wg /= 2;
    /* decode_regs at most 176, halved after a build that kept them in memory */
    const int32_t max_regs = 176 >> ch->reg_shift;
    while (rows > 1 && decode_regs(rows, 2) > max_regs)
        rows /= 2;
    for (;;) {
        int32_t kt = rows <= 4 ? 4 : 2;
        while (kt > 1 && decode_regs(rows, kt) > max_regs)
            kt /= 2;
        if ((size_t)wg <= ch->work_group && decode_bytes(p->head_dim, rows, team, kt, wg, shuffles) <= ch->local_mem) {
            memset(cfg, 0, sizeof *cfg);
            cfg->kernel = FLASHCL_KERNEL_DECODE;
            cfg->shuffles = shuffles;
            cfg->team = team;
            cfg->keys_per_step = kt;
            cfg->block_m = rows;
            cfg->threads_per_row = team;
            cfg->rows_per_item = rows;
            cfg->v_chunk = kt;
            cfg->block_n = wg / team * kt;
            cfg->d_chunk = p->head_dim;
            cfg->work_group_size = wg;
            snprintf(cfg->reason, sizeof cfg->reason,
                     "%d rows per work-group, teams of %d lanes (8 elements each), %d keys per team and step, "
                     "K/V straight to registers",
                     (int)rows, (int)team, (int)kt);
            snprintf(why, why_len, "decode kernel: K/V streamed to registers, %s",
                     shuffles ? "team sums by shuffles" : "team sums through local memory");
            return 1;
        }
        if (rows > 1)
            rows /= 2;
        else if (wg > wg_min)
            wg /= 2;
        else
            break;
    }
    snprintf(why, why_len, "portable: the decode kernel's smallest shape needs %llu B of local memory",
             (unsigned long long)decode_bytes(p->head_dim, 1, team, 4, team, shuffles));
    return 0;
}

/* block_m its rows, team, keys_per_step, work_group_size its work-group; the team's sums by shuffles
 * where the device's are proven. (No FAST_EXP2: the hardware exp2 measured
 * no faster here: docs/design/decode.md.) */
static void decode_options(const flashcl_problem *p, const flashcl_config *c, char *buf, size_t n)
{
    char features[256], sg[32];
    fcl_feature_defines(p, 1, features, sizeof features);
    fcl_sub_group_define(c, sg, sizeof sg);
    snprintf(buf, n, "-cl-std=CL1.2 %s -DHEAD_DIM=%d -DROWS=%d -DTEAM=%d -DKT=%d -DWG=%d -DFCL_PTX=%d%s%s%s",
             fcl_dtype_define(p->dtype), p->head_dim, c->block_m, c->team, c->keys_per_step, c->work_group_size,
             c->shuffles != 0, features, c->kv_splits > 1 ? " -DSPLIT_KV=1" : "", sg);
}

void fcl_decode_constants(fcl_args *a, const flashcl_plan *pl)
{
    fcl_params prm;
    fcl_params_of(pl, &prm);
    fcl_arg_params(a, DE_prm, &prm);
}

void fcl_decode_buffers(fcl_args *a, const flashcl_plan *pl, const flashcl_tensors *t, const fcl_scratch *s)
{
    fcl_kernel_offsets offs;
    fcl_kernel_offsets_of(&pl->off, s->op_off, s->lp_off, &offs);
    fcl_arg_mem(a, DE_Q, t->q);
    fcl_arg_mem(a, DE_K, t->k);
    fcl_arg_mem(a, DE_V, t->v);
    fcl_arg_mem(a, DE_O, t->o);
    fcl_arg_mem(a, DE_LSE, t->lse);
    fcl_arg_mem(a, DE_ALIBI, FCL_OPT(t, alibi_slopes));
    fcl_arg_mem(a, DE_KPM, FCL_OPT(t, key_padding));
    fcl_arg_mem(a, DE_OP, s->mem);
    fcl_arg_mem(a, DE_LP, s->mem);
    fcl_arg_mem(a, DE_CACHE_LENS, FCL_OPT(t, cache_seqlens));
    fcl_arg_mem(a, DE_BT, FCL_OPT(t, block_table));
    fcl_arg_mem(a, DE_K_SCALE, FCL_OPT(t, k_scale));
    fcl_arg_mem(a, DE_V_SCALE, FCL_OPT(t, v_scale));
    fcl_arg_mem(a, DE_SINKS, FCL_OPT(t, sinks));
    fcl_arg_mem(a, DE_BATCH_IDX, FCL_OPT(t, cache_batch_idx));
    fcl_arg_mem(a, DE_LEFT_PAD, FCL_OPT(t, cache_leftpad));
    fcl_arg_mem(a, DE_CNT, s->counters ? s->counters : s->mem); /* (read only where FUSED_MERGE) */
    fcl_arg_offsets(a, DE_offs, &offs);
}

const fcl_kernel_module fcl_decode_module = {
    .id = FCL_K_FLASH_DECODE,
    .name = "decode",
    .takes = fcl_decode_takes,
    .choose = decode_choose,
    .local_bytes = decode_local_bytes,
    .register_block = decode_register_block,
    .options = decode_options,
    .bind_constants = fcl_decode_constants,
    .bind_buffers = fcl_decode_buffers,
    .grid = fcl_flash_grid,
};
