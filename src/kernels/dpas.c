/* SPDX-License-Identifier: MIT */
/*
 * dpas.c: Intel's matrix-engine prefill kernel's module (cl/flash_dpas.cl): DPAS through the extension
 * cl_intel_subgroup_matrix_multiply_accumulate, sub-groups of 8 (Xe-HPG) or 16 (Xe-HPC, Xe2) work-items
 * of 8 query rows each, in the direct products (S = Q K^T, O += P V); emulated elsewhere when forced, for
 * testing. Its arguments are flash_mma's. Design reasons: docs/design/mfma.md.
 */
#include "module.h"

#include <stdio.h>
#include <string.h>

/* cl/dpas.cl's DPAS_XW: the emulation's exchange area, bytes a sub-group */
#define DPAS_XW_BYTES (512u * 4u)

/* cl/flash_dpas.cl's CSPLIT: sub-groups sharing a block of 8 rows, each with its part of O's column blocks:
 * the fewest (1, 2, 4) that leave a work-item at most 64 of O's floats (8 dv / sg: SIMD8 above dv=64,
 * SIMD16 above 128), dividing the blocks evenly */
static int32_t csplit(int32_t sg, int32_t dv)
{
    const int32_t blocks = (dv + sg - 1) / sg;
    int32_t cs = 1;
    while (8 * dv / sg / cs > 64 && blocks % (2 * cs) == 0)
        cs *= 2;
    return cs;
}

/* cl/flash_dpas.cl's Q_LOCAL: Q's A operands in local memory where in registers they would take more than
 * 192 bytes a work-item (8 d 2 / sg: SIMD16 above d=192, SIMD8 above 96), which IGC kept partly in scratch
 * (docs/design/mfma.md) */
static int q_local(int32_t sg, int32_t d)
{
    return 16 * d / sg > 192;
}

/* cl/flash_dpas.cl's layout, 16-bit elements: K's tile (bn x d) and V's (dv in whole sg-column blocks x
 * bn) as B operands, Q's block (bm x d) where Q_LOCAL; emulated, the sub-groups' exchange areas. */
static uint64_t dpas_bytes(int32_t sg, int32_t d, int32_t dv, int32_t bm, int32_t bn, int emulated)
{
    const uint64_t dvp = (uint64_t)(dv + sg - 1) / (uint64_t)sg * (uint64_t)sg;
    return ((uint64_t)bn * (uint64_t)d + dvp * (uint64_t)bn + (q_local(sg, d) ? (uint64_t)bm * (uint64_t)d : 0)) * 2 +
           (emulated ? (uint64_t)(bm / 8) * (uint64_t)csplit(sg, dv) * DPAS_XW_BYTES : 0);
}

/* The layout's sub-group: the config's (8 or 16; 0 reads as 16) */
static int32_t sg_of(const flashcl_config *c)
{
    return c->sub_group == 8 ? 8 : 16;
}

static uint64_t dpas_local_bytes(int32_t d, int32_t dv, const flashcl_config *c)
{
    if (d < 1 || dv < 1 || c->block_m < 8 || c->block_m % 8 || c->block_n < 16 || c->block_n % 16)
        return 0;
    return dpas_bytes(sg_of(c), d, dv, c->block_m, c->block_n, c->emulated);
}

static void dpas_config(flashcl_config *cfg, int emulated, int32_t sg, int32_t bm, int32_t bn, int32_t head_dim,
                        int32_t dv)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->kernel = FLASHCL_KERNEL_DPAS;
    cfg->emulated = emulated;
    cfg->kv_stages = 1;
    cfg->block_m = bm;
    cfg->block_n = bn;
    cfg->threads_per_row = sg; /* a row's keys and columns over the sub-group */
    cfg->rows_per_item = 8;    /* DPAS's 8 rows */
    cfg->d_chunk = head_dim;
    cfg->v_chunk = bn;
    cfg->sub_group = sg;
    cfg->work_group_size = bm / 8 * csplit(sg, dv) * sg;
}

/* On the hardware the layout the device's DPAS has (16 on Xe-HPC and Xe2, whose 128 KiB of local memory
 * tells them apart; else 8) and 16-key tiles; emulated 16 (8 through an override), 64-key tiles where two
 * work-groups a compute unit fit the budget, else 32. Sixteen sub-groups (128 rows), fewer where the
 * work-group limit is lower, then fewer, then 16-key tiles, where local memory is short. A prediction
 * until an Intel GPU measures it (docs/design/mfma.md). */
static int dpas_choose(const flashcl_device_profile *pr, const fcl_choice *ch, const flashcl_problem *p,
                       flashcl_config *cfg, char *why, size_t why_len)
{
    const int emulated = !fcl_dpas_units(pr);
    const int32_t sg = emulated || fcl_intel_xe_hpc(pr) ? 16 : 8;
    const int32_t d = p->head_dim, dv = fcl_head_dim_v(p), cs = csplit(sg, dv);
    int32_t rows = 16 / cs > 1 ? 16 / cs : 1; /* blocks of 8 rows: 16 sub-groups */
    while (rows > 1 && (size_t)(sg * cs * rows) > ch->work_group)
        rows /= 2;
    /* (on the hardware 16-key tiles: IGC keeps 32-key ones partly in scratch, docs/design/mfma.md) */
    int32_t bn = !emulated ? 16 : 2 * dpas_bytes(sg, d, dv, 8 * rows, 64, emulated) <= ch->local_mem ? 64 : 32;
    while (dpas_bytes(sg, d, dv, 8 * rows, bn, emulated) > ch->local_mem && (rows > 1 || bn > 16)) {
        if (rows > 1)
            rows /= 2;
        else
            bn /= 2;
    }
    if (dpas_bytes(sg, d, dv, 8 * rows, bn, emulated) > ch->local_mem || ch->work_group < (size_t)(sg * cs)) {
        snprintf(why, why_len, "portable: the DPAS kernel's tiles need %llu B of local memory and %d work-items",
                 (unsigned long long)dpas_bytes(sg, d, dv, 8 * rows, bn, emulated), (int)(sg * cs));
        return 0;
    }
    dpas_config(cfg, emulated, sg, 8 * rows, bn, d, dv);
    char split[64] = "";
    if (cs > 1)
        snprintf(split, sizeof split, " (%d a block, each 1/%d of O's columns)", (int)cs, (int)cs);
    snprintf(cfg->reason, sizeof cfg->reason,
             "%d sub-groups of %d x 8 query rows%s, Q in %s, %d-key K and V tiles in local memory", (int)(rows * cs),
             (int)sg, split, q_local(sg, d) ? "local memory" : "registers", (int)bn);
    if (emulated)
        snprintf(why, why_len, "DPAS kernel, emulated (forced on a device without Intel's matrix engines: for testing)");
    else
        snprintf(why, why_len, "Intel matrix engines: DPAS (sub-groups of %d) through the extension's built-ins, fp32 "
                 "accumulation", (int)sg);
    return 1;
}

/* block_m 8 to 256, a multiple of 8 (a sub-group each, within the work-group limit); block_n 16 to 128, a
 * multiple of 16; sub_group 8 or 16 (0: the chooser's). */
static int dpas_override(const flashcl_device_profile *pr, const fcl_choice *ch, const flashcl_problem *p,
                         flashcl_config *c, char *why, size_t n)
{
    const int emulated = !fcl_dpas_units(pr);
    const int32_t sg = c->sub_group ? c->sub_group : emulated || fcl_intel_xe_hpc(pr) ? 16 : 8;
    const int32_t dv = fcl_head_dim_v(p);
    if (!(sg == 8 || sg == 16) || !(c->block_m >= 8 && c->block_m <= 256 && c->block_m % 8 == 0 && c->block_n >= 16 &&
                                    c->block_n <= 128 && c->block_n % 16 == 0 &&
                                    (size_t)(c->block_m / 8 * csplit(sg, dv) * sg) <= ch->work_group)) {
        snprintf(why, n,
                 ": the DPAS kernel takes sub_group 8 or 16 (got %d), block_m 8 to 256 and block_n 16 to 128, multiples "
                 "of 8 and 16 (got %d, %d), and block_m / 8 x %d x sub_group work-items (at most %zu)",
                 (int)c->sub_group, (int)c->block_m, (int)c->block_n, (int)csplit(sg, dv), ch->work_group);
        return 0;
    }
    const uint64_t bytes = dpas_bytes(sg, p->head_dim, dv, c->block_m, c->block_n, emulated);
    if (bytes > ch->local_mem) {
        snprintf(why, n, ": the DPAS tiles %dx%d need %llu B of local memory, the limit is %llu B", (int)c->block_m,
                 (int)c->block_n, (unsigned long long)bytes, (unsigned long long)ch->local_mem);
        return 0;
    }
    const int32_t bm = c->block_m, bn = c->block_n;
    dpas_config(c, emulated, sg, bm, bn, p->head_dim, dv);
    snprintf(c->reason, sizeof c->reason, "%d sub-groups of %d, %d-key tiles: set by flashcl_context_override_config",
             (int)(bm / 8), (int)sg, (int)bn);
    fcl_strlcpy(c->path_reason, "Intel matrix engines: tiles set by flashcl_context_override_config", sizeof c->path_reason);
    return 1;
}

static void dpas_options(const flashcl_problem *p, const flashcl_config *c, char *buf, size_t n)
{
    char dv[32], features[512];
    fcl_dim_v_define(p, dv, sizeof dv);
    fcl_feature_defines(p, 1, features, sizeof features);
    /* (on the hardware IGC's 256 registers a thread: with 128 every program kept part of itself in scratch) */
    const int32_t cs = csplit(sg_of(c), fcl_head_dim_v(p));
    snprintf(buf, n,
             "-cl-std=CL1.2 %s -DHEAD_DIM=%d%s -DBLOCK_N=%d -DSUBS=%d -DCSPLIT=%d -DQ_LOCAL=%d -DDPAS_SG=%d "
             "-DFCL_INTEL_MMA=%d -DFAST_EXP2=%d -DROWS_ALIGNED=%d%s%s",
             fcl_dtype_define(p->dtype), (int)p->head_dim, dv, (int)c->block_n, (int)(c->block_m / 8 * cs), (int)cs,
             q_local(sg_of(c), p->head_dim), (int)sg_of(c), !c->emulated, !c->emulated, fcl_rows_aligned(p),
             c->emulated ? "" : " -cl-intel-256-GRF-per-thread", features);
}

const fcl_kernel_module fcl_dpas_module = {
    .id = FCL_K_FLASH_DPAS,
    .name = "dpas",
    .takes = fcl_mma_takes,
    .choose = dpas_choose,
    .local_bytes = dpas_local_bytes,
    .override = dpas_override,
    .options = dpas_options,
    .bind_constants = fcl_mma_constants,
    .bind_buffers = fcl_mma_buffers,
    .grid = fcl_flash_grid,
};
