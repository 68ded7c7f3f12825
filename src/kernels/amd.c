/* SPDX-License-Identifier: MIT */
/*
 * amd.c: the modules of AMD's matrix-core prefill kernels (cl/flash_amd.cl): flash_mfma, the 32x32x8 MFMA
 * on CDNA (gfx90a, gfx94x, gfx950; wave64, 32 query rows a wave), and flash_wmma, the 16x16x16 WMMA on
 * RDNA3/4 (gfx11, gfx12; wave32, 16 rows a wave), through clang's amdgcn built-ins, in the transposed
 * products (S^T = K Q^T, O^T += V^T P^T: P stays in registers); emulated elsewhere when forced, for
 * testing. Their arguments are flash_mma's. Design reasons: docs/design/mfma.md.
 */
#include "module.h"

#include <stdio.h>
#include <string.h>

/* What the two kernels differ in (cl/mfma.cl's and cl/wmma.cl's AMX_ geometry) */
typedef struct amd_shape {
    flashcl_kernel kernel;
    const char *name;   /* "MFMA", "WMMA" */
    int32_t wave;       /* lanes a wave */
    int32_t rows;       /* query rows a wave (AMX_Q) */
    int32_t m;          /* keys of an S^T part, columns of an O^T block (AMX_M): block_n's unit */
    int32_t waves;      /* the chooser's waves a work-group */
    int32_t pad;        /* elements a local row of K and V^T is padded by (AMX_PAD) */
    const char *what;   /* the path reason on the hardware */
} amd_shape;

static const amd_shape mfma_shape = {FLASHCL_KERNEL_MFMA, "MFMA", 64, 32, 32, 4, 4,
                                     "AMD matrix cores: MFMA 32x32x8 through clang's built-in, fp32 accumulation"};
static const amd_shape wmma_shape = {FLASHCL_KERNEL_WMMA, "WMMA", 32, 16, 16, 8, 8,
                                     "AMD matrix cores: WMMA 16x16x16 through clang's built-in, fp32 accumulation"};

static const amd_shape *shape_of(const flashcl_config *c)
{
    return c->kernel == FLASHCL_KERNEL_WMMA ? &wmma_shape : &mfma_shape;
}

/* cl/mfma.cl's MFMA_XW and cl/wmma.cl's WMMA_XW: the emulation's exchange area, bytes a wave */
#define AMX_XW_BYTES (512u * 4u)

/* cl/flash_amd.cl's layout: K's tile (bn rows of d + pad elements), V's transposed (dv in whole m-column
 * blocks, rows of bn + pad), 16-bit elements; emulated, the waves' exchange areas. */
static uint64_t amd_bytes(const amd_shape *sh, int32_t d, int32_t dv, int32_t bm, int32_t bn, int emulated)
{
    const uint64_t dvp = (uint64_t)(dv + sh->m - 1) / (uint64_t)sh->m * (uint64_t)sh->m;
    return ((uint64_t)bn * (uint64_t)(d + sh->pad) + dvp * (uint64_t)(bn + sh->pad)) * 2 +
           (emulated ? (uint64_t)(bm / sh->rows) * AMX_XW_BYTES : 0);
}

static uint64_t amd_local_bytes(int32_t d, int32_t dv, const flashcl_config *c)
{
    const amd_shape *sh = shape_of(c);
    if (d < 1 || dv < 1 || c->block_m < sh->rows || c->block_m % sh->rows || c->block_n < sh->m || c->block_n % sh->m)
        return 0;
    return amd_bytes(sh, d, dv, c->block_m, c->block_n, c->emulated);
}

/* flash_wmma: those up to head_dim 192 and head_dim_v 128 (MLA's 192 over 128 included). Beyond, a wave32
 * lane's O^T (dv / 2 floats) and Q^T fragments (gfx11: d / 2 registers, its operands whole in every lane)
 * spill: d=256 kept 636 B (gfx1200) and 1768 B (gfx1100) of scratch a lane (tools/vendor_check.sh,
 * 2026-12-04), and reloading Q each tile was hoisted back into registers by the compiler. */
static int wmma_takes(const flashcl_problem *p, char *why, size_t n)
{
    if (!fcl_mma_takes(p, why, n))
        return 0;
    if (p->head_dim > 192 || fcl_head_dim_v(p) > 128) {
        snprintf(why, n, "head_dim above 192 or head_dim_v above 128 (flash_wmma's registers would spill)");
        return 0;
    }
    return 1;
}

static void amd_config(const amd_shape *sh, flashcl_config *cfg, int emulated, int32_t bm, int32_t bn, int32_t head_dim)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->kernel = sh->kernel;
    cfg->emulated = emulated;
    cfg->kv_stages = 1;
    cfg->block_m = bm;
    cfg->block_n = bn;
    cfg->threads_per_row = 2; /* a query's two lanes (l and l ^ rows), each half of a tile's keys */
    cfg->rows_per_item = 1;
    cfg->d_chunk = head_dim;
    cfg->v_chunk = bn;
    cfg->work_group_size = 2 * bm;
}

/* The shape's waves (four of 32 rows on CDNA, eight of 16 on RDNA: 128 queries, 256 work-items), fewer
 * where the work-group limit is lower; 64-key tiles where two work-groups a compute unit still fit the
 * budget (up to d=96 in 64 KiB), else 32; then fewer waves where local memory is short (the emulation's
 * exchange areas), then (WMMA) 16-key tiles. The order is a prediction until an AMD GPU measures it
 * (docs/design/mfma.md). */
static int amd_choose(const amd_shape *sh, int emulated, const fcl_choice *ch, const flashcl_problem *p,
                      flashcl_config *cfg, char *why, size_t why_len)
{
    const int32_t d = p->head_dim, dv = fcl_head_dim_v(p);
    int32_t waves = sh->waves;
    while (waves > 1 && (size_t)(sh->wave * waves) > ch->work_group)
        waves /= 2;
    int32_t bn = 2 * amd_bytes(sh, d, dv, sh->rows * waves, 64, emulated) <= ch->local_mem ? 64 : 32;
    while (amd_bytes(sh, d, dv, sh->rows * waves, bn, emulated) > ch->local_mem && (waves > 1 || bn > sh->m)) {
        if (waves > 1)
            waves /= 2;
        else
            bn /= 2;
    }
    if (amd_bytes(sh, d, dv, sh->rows * waves, bn, emulated) > ch->local_mem || ch->work_group < (size_t)sh->wave) {
        snprintf(why, why_len, "portable: the %s kernel's tiles need %llu B of local memory and %d work-items", sh->name,
                 (unsigned long long)amd_bytes(sh, d, dv, sh->rows * waves, bn, emulated), (int)sh->wave);
        return 0;
    }
    amd_config(sh, cfg, emulated, sh->rows * waves, bn, d);
    snprintf(cfg->reason, sizeof cfg->reason,
             "%d waves x %d query rows (a query a lane pair), Q^T in registers, %d-key K and V^T tiles in local memory",
             (int)waves, (int)sh->rows, (int)bn);
    if (emulated)
        snprintf(why, why_len, "%s kernel, emulated (forced on a device without AMD's matrix cores: for testing)", sh->name);
    else
        snprintf(why, why_len, "%s", sh->what);
    return 1;
}

static int mfma_choose(const flashcl_device_profile *pr, const fcl_choice *ch, const flashcl_problem *p,
                       flashcl_config *cfg, char *why, size_t why_len)
{
    return amd_choose(&mfma_shape, !fcl_mfma_units(pr), ch, p, cfg, why, why_len);
}

static int wmma_choose(const flashcl_device_profile *pr, const fcl_choice *ch, const flashcl_problem *p,
                       flashcl_config *cfg, char *why, size_t why_len)
{
    return amd_choose(&wmma_shape, !fcl_wmma_units(pr), ch, p, cfg, why, why_len);
}

/* block_m a multiple of the wave's rows up to 256, within the work-group limit (2 x block_m work-items);
 * block_n a multiple of the part's keys up to 128. */
static int amd_override(const amd_shape *sh, int emulated, const fcl_choice *ch, const flashcl_problem *p,
                        flashcl_config *c, char *why, size_t n)
{
    if (!(c->block_m >= sh->rows && c->block_m <= 256 && c->block_m % sh->rows == 0 && c->block_n >= sh->m &&
          c->block_n <= 128 && c->block_n % sh->m == 0 && (size_t)(2 * c->block_m) <= ch->work_group)) {
        snprintf(why, n,
                 ": the %s kernel takes block_m %d to 256 and block_n %d to 128, multiples of %d and %d (got %d, %d), "
                 "and 2 x block_m work-items (at most %zu)",
                 sh->name, (int)sh->rows, (int)sh->m, (int)sh->rows, (int)sh->m, (int)c->block_m, (int)c->block_n,
                 ch->work_group);
        return 0;
    }
    const uint64_t bytes = amd_bytes(sh, p->head_dim, fcl_head_dim_v(p), c->block_m, c->block_n, emulated);
    if (bytes > ch->local_mem) {
        snprintf(why, n, ": the %s tiles %dx%d need %llu B of local memory, the limit is %llu B", sh->name,
                 (int)c->block_m, (int)c->block_n, (unsigned long long)bytes, (unsigned long long)ch->local_mem);
        return 0;
    }
    const int32_t bm = c->block_m, bn = c->block_n;
    amd_config(sh, c, emulated, bm, bn, p->head_dim);
    snprintf(c->reason, sizeof c->reason, "%d waves, %d-key tiles: set by flashcl_context_override_config",
             (int)(bm / sh->rows), (int)bn);
    fcl_strlcpy(c->path_reason, "AMD matrix cores: tiles set by flashcl_context_override_config", sizeof c->path_reason);
    return 1;
}

static int mfma_override(const flashcl_device_profile *pr, const fcl_choice *ch, const flashcl_problem *p,
                         flashcl_config *c, char *why, size_t n)
{
    return amd_override(&mfma_shape, !fcl_mfma_units(pr), ch, p, c, why, n);
}

static int wmma_override(const flashcl_device_profile *pr, const fcl_choice *ch, const flashcl_problem *p,
                         flashcl_config *c, char *why, size_t n)
{
    return amd_override(&wmma_shape, !fcl_wmma_units(pr), ch, p, c, why, n);
}

/* (flash_wmma's layout, gfx11's or gfx12's, is the compiler's target: cl/wmma.cl reads clang's __gfxNNNN__) */
static void amd_options(const flashcl_problem *p, const flashcl_config *c, char *buf, size_t n)
{
    char dv[32], features[512];
    fcl_dim_v_define(p, dv, sizeof dv);
    fcl_feature_defines(p, 1, features, sizeof features);
    snprintf(buf, n, "-cl-std=CL1.2 %s -DHEAD_DIM=%d%s -DBLOCK_N=%d -DWAVES=%d -DFCL_AMD_MMA=%d -DFAST_EXP2=%d "
             "-DROWS_ALIGNED=%d%s",
             fcl_dtype_define(p->dtype), (int)p->head_dim, dv, (int)c->block_n, (int)(c->block_m / shape_of(c)->rows),
             !c->emulated, !c->emulated, fcl_rows_aligned(p), features);
}

const fcl_kernel_module fcl_mfma_module = {
    .id = FCL_K_FLASH_MFMA,
    .name = "mfma",
    .takes = fcl_mma_takes, /* (flash_mma's problems: every feature through the shared parts) */
    .choose = mfma_choose,
    .local_bytes = amd_local_bytes,
    .override = mfma_override,
    .options = amd_options,
    .bind_constants = fcl_mma_constants,
    .bind_buffers = fcl_mma_buffers,
    .grid = fcl_flash_grid,
};

const fcl_kernel_module fcl_wmma_module = {
    .id = FCL_K_FLASH_WMMA,
    .name = "wmma",
    .takes = wmma_takes,
    .choose = wmma_choose,
    .local_bytes = amd_local_bytes,
    .override = wmma_override,
    .options = amd_options,
    .bind_constants = fcl_mma_constants,
    .bind_buffers = fcl_mma_buffers,
    .grid = fcl_flash_grid,
};
