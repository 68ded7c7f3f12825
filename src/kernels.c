/* SPDX-License-Identifier: MIT */
/*
 * kernels.c: the kernel table (source parts, entry point, build options, arguments by name) and the
 * argument binder every launch goes through; the one place that knows how a kernel is called.
 */
#include "kernels.h"

#include <stdio.h>
#include <string.h>

#define FCL_NAME(name, kind) #name,
#define FCL_KIND(name, kind) FCL_ARG_##kind,
#define FCL_ARG_TABLES(tag, LIST)                                                                          \
    static const char *const tag##_names[] = {LIST(FCL_NAME)};                                             \
    static const fcl_arg_kind tag##_kinds[] = {LIST(FCL_KIND)};
FCL_ARG_TABLES(flash_fwd, FCL_FLASH_FWD_ARGS)
FCL_ARG_TABLES(flash_mma, FCL_FLASH_MMA_ARGS)
FCL_ARG_TABLES(flash_combine, FCL_FLASH_COMBINE_ARGS)
FCL_ARG_TABLES(flash_decode, FCL_FLASH_DECODE_ARGS)
FCL_ARG_TABLES(naive_fwd, FCL_NAIVE_FWD_ARGS)
FCL_ARG_TABLES(naive_ref_rows, FCL_NAIVE_REF_ROWS_ARGS)
FCL_ARG_TABLES(compare_rows, FCL_COMPARE_ROWS_ARGS)
FCL_ARG_TABLES(kv_append, FCL_KV_APPEND_ARGS)
FCL_ARG_TABLES(softmax_rows, FCL_SOFTMAX_ROWS_ARGS)
FCL_ARG_TABLES(convert, FCL_CONVERT_ARGS)

static const char *dtype_define(flashcl_dtype t)
{
    return t == FLASHCL_DTYPE_F16 ? "-DFLASHCL_DTYPE_F16" : t == FLASHCL_DTYPE_BF16 ? "-DFLASHCL_DTYPE_BF16" : "-DFLASHCL_DTYPE_F32";
}

/*
 * What becomes a -D and what a runtime argument (cl/common.cl lists the switches): a feature that
 * costs inside a kernel's key loop is compiled in only when the problem has it, so a problem without
 * it runs no code for it; sizes, strides, the window's bounds, the cap and the split count stay
 * arguments, so that problems differing only in them share one program. Switches that are off are left
 * out of the options (their defaults are off), which keeps the cache keys of plain problems short.
 */
static size_t feature_defines(const flashcl_problem *p, int flash, char *buf, size_t n)
{
    const struct {
        const char *name;
        int value;
    } f[] = {
        {"HAS_WINDOW", flash && (p->causal || p->window)}, /* naive keeps the window at run time */
        {"HAS_SOFTCAP", flash && p->softcap > 0.0f},
        {"HAS_ALIBI", p->alibi != 0},
        {"HAS_MASK", p->attn_mask != 0},
        {"MASK_KIND", p->attn_mask ? p->mask_dtype : 0},
        {"HAS_KPM", p->key_padding != 0},
        {"HAS_SINKS", p->sinks != 0},
        {"VARLEN", p->varlen != 0},
        {"KV_CACHE", p->kv_cache != 0},
        {"KV_APPEND", p->kv_cache && p->kv_append},
        {"PAGE_SIZE", p->kv_cache ? p->page_size : 0},
        {"CACHE_IDX", p->kv_cache && p->cache_batch_idx},
        {"LEFTPAD", p->kv_cache && p->cache_leftpad},
        {"WIDE_POSITIONS", fcl_wide_positions(p)},
        {"KV_FORMAT", p->kv_cache ? p->kv_format : 0},
        {"KV_DTYPE", fcl_kv_mixed(p) ? p->kv_dtype : 0},
        {"KV_SCALE_F16", p->kv_cache && p->kv_format == FLASHCL_KV_INT8 && p->kv_scale_dtype == FLASHCL_DTYPE_F16},
        {"TOP_LEFT", p->alignment == FLASHCL_ALIGN_TOP_LEFT && (p->causal || p->window || p->alibi)},
    };
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof f / sizeof f[0]; ++i)
        if (f[i].value && len < n)
            len += (size_t)snprintf(buf + len, n - len, " -D%s=%d", f[i].name, f[i].value);
    return len;
}

/* " -DHEAD_DIM_V=n" where V's and O's head dim is not head_dim (cl/common.cl defaults it), else "". */
static void dim_v_define(const flashcl_problem *p, char *buf, size_t n)
{
    if (fcl_head_dim_v(p) != p->head_dim)
        snprintf(buf, n, " -DHEAD_DIM_V=%d", (int)fcl_head_dim_v(p));
    else
        buf[0] = '\0';
}

/* " -DFCL_SUB_GROUP=n" where the config asks for a sub-group size (cl/common.cl SUB_GROUP_ATTR), else "". */
static void sub_group_define(const flashcl_config *c, char *buf, size_t n)
{
    if (c->sub_group > 0)
        snprintf(buf, n, " -DFCL_SUB_GROUP=%d", c->sub_group);
    else
        buf[0] = '\0';
}

static void flash_fwd_options(const flashcl_problem *p, const flashcl_config *c, char *buf, size_t n)
{
    char features[256], gqa[32] = "";
    feature_defines(p, 1, features, sizeof features);
    if (c->gqa_pack > 1)
        snprintf(gqa, sizeof gqa, " -DGQA_PACK=%d", c->gqa_pack);
    char sg[32], dv[32];
    sub_group_define(c, sg, sizeof sg);
    dim_v_define(p, dv, sizeof dv);
    snprintf(buf, n,
             "-cl-std=CL1.2 %s -DHEAD_DIM=%d%s -DBLOCK_M=%d -DBLOCK_N=%d -DTM=%d -DCG=%d -DD_CHUNK=%d -DV_CHUNK=%d%s%s%s%s",
             dtype_define(p->dtype), p->head_dim, dv, c->block_m, c->block_n, c->rows_per_item, c->threads_per_row,
             c->d_chunk, c->v_chunk, features, c->kv_splits > 1 ? " -DSPLIT_KV=1" : "", gqa, sg);
}

/* Whether every row a strides triple places starts at a multiple of 8 elements (16-byte pieces). */
static int rows_of_8(const flashcl_strides *s)
{
    return s->batch % 8 == 0 && s->seq % 8 == 0 && s->head % 8 == 0;
}

/* Whether every Q, K and V row starts at a multiple of 8 elements (16-byte loads and copies). */
int fcl_rows_aligned(const flashcl_problem *p)
{
    return rows_of_8(&p->q_strides) && rows_of_8(&p->k_strides) && rows_of_8(&p->v_strides);
}

int fcl_out_aligned(const flashcl_problem *p)
{
    return rows_of_8(&p->o_strides);
}

static void flash_mma_options(const flashcl_problem *p, const flashcl_config *c, char *buf, size_t n)
{
    const int mt = c->rows_per_item == 4 ? 2 : 1; /* m16 tiles a warp (rows_per_item: a lane's rows; as
                                                     src/tiles.c's mma_tiles_per_warp) */
    char dv[32];
    dim_v_define(p, dv, sizeof dv);
    snprintf(buf, n,
             "-cl-std=CL1.2 %s -DHEAD_DIM=%d%s -DBLOCK_N=%d -DWARPS=%d -DFCL_PTX=%d -DFAST_EXP2=%d -DROWS_ALIGNED=%d%s%s%s%s%s%s",
             dtype_define(p->dtype), p->head_dim, dv, c->block_n, c->block_m / (16 * mt), c->mma == 1, c->mma == 1,
             fcl_rows_aligned(p), p->causal || p->window ? (p->alignment == FLASHCL_ALIGN_TOP_LEFT ? " -DHAS_WINDOW=1 -DTOP_LEFT=1" : " -DHAS_WINDOW=1") : "",
             fcl_wide_positions(p) ? " -DWIDE_POSITIONS=1" : "", mt > 1 ? " -DMT=2" : "",
             c->v_chunk == 2 * c->block_n ? " -DKV_STAGES=2" : "", /* (src/tiles.c's mma_stages) */
             fcl_out_aligned(p) ? " -DO_ALIGNED=1" : "", p->sinks ? " -DHAS_SINKS=1" : "");
}

/* Whether a flash_wgmma config has the producer warpgroup (cl/flash_wgmma.cl's WG_PRODUCER): its
 * work-group is the consumers' 2 x block_m work-items and 128 more. */
int fcl_wgmma_producer(const flashcl_config *c)
{
    return c->mma == 3 && c->work_group_size == 2 * c->block_m + 128;
}

/* flash_wgmma: block_m / 64 warpgroups, and the producer warpgroup where the work-group has its 128
 * work-items; on the matrix units its program is finished for sm_90a (-DFCL_SM90A=1: src/program.c),
 * emulated (mma 4) it is not. */
static void flash_wgmma_options(const flashcl_problem *p, const flashcl_config *c, char *buf, size_t n)
{
    snprintf(buf, n, "-cl-std=CL1.2 %s -DHEAD_DIM=%d -DBLOCK_N=%d -DWARPGROUPS=%d -DFCL_PTX=%d -DFAST_EXP2=%d%s%s%s%s%s%s",
             dtype_define(p->dtype), p->head_dim, c->block_n, c->block_m / 64, c->mma == 3, c->mma == 3,
             c->mma == 3 ? " -DFCL_SM90A=1" : "", fcl_wgmma_producer(c) ? " -DWG_PRODUCER=1" : "",
             p->head_dim >= 128 ? " -DSWIZZLE=1" : "", /* (128-byte swizzled tiles: NOTES, wgmma-16) */
             c->v_chunk == 3 * c->block_n   ? " -DKV_STAGES=3"
             : c->v_chunk == 2 * c->block_n ? " -DKV_STAGES=2"
                                            : "", /* (src/tiles.c's mma_stages) */
             p->causal || p->window ? (p->alignment == FLASHCL_ALIGN_TOP_LEFT ? " -DHAS_WINDOW=1 -DTOP_LEFT=1" : " -DHAS_WINDOW=1") : "",
             fcl_wide_positions(p) ? " -DWIDE_POSITIONS=1" : "");
}

/* The decode kernel's shape lives in the config's fields: block_m its rows, threads_per_row its team,
 * v_chunk its keys per team and step, work_group_size its work-group; decode 2 where the device's
 * shuffles are proven (the matrix-unit test compile: inline PTX). */
static void flash_decode_options(const flashcl_problem *p, const flashcl_config *c, char *buf, size_t n)
{
    char features[256];
    feature_defines(p, 1, features, sizeof features);
    /* (no FAST_EXP2: the hardware exp2 measured no faster here, decode-5) */
    char sg[32];
    sub_group_define(c, sg, sizeof sg);
    snprintf(buf, n, "-cl-std=CL1.2 %s -DHEAD_DIM=%d -DROWS=%d -DTEAM=%d -DKT=%d -DWG=%d -DFCL_PTX=%d%s%s%s",
             dtype_define(p->dtype), p->head_dim, c->block_m, c->threads_per_row, c->v_chunk, c->work_group_size,
             c->decode == 2, features, c->kv_splits > 1 ? " -DSPLIT_KV=1" : "", sg);
}

/* The matrix-unit decode kernel (decode 3, or 4 emulated): block_m its rows, work_group_size / 32 its
 * warps, v_chunk its keys a warp and step (16 per tile). */
static void flash_decode_mma_options(const flashcl_problem *p, const flashcl_config *c, char *buf, size_t n)
{
    char features[256];
    feature_defines(p, 1, features, sizeof features);
    snprintf(buf, n,
             "-cl-std=CL1.2 %s -DHEAD_DIM=%d -DROWS=%d -DWARPS=%d -DTILES=%d -DFCL_PTX=%d -DFAST_EXP2=%d -DROWS_ALIGNED=%d%s%s",
             dtype_define(p->dtype), p->head_dim, c->block_m, c->work_group_size / 32, c->v_chunk / 16,
             c->decode == 3, c->decode == 3, fcl_rows_aligned(p), features, c->kv_splits > 1 ? " -DSPLIT_KV=1" : "");
}

/* The naive kernels: d_chunk > 0 asks for the output columns in chunks of that many. */
static void naive_options(const flashcl_problem *p, const flashcl_config *c, char *buf, size_t n)
{
    char features[256], chunk[32] = "", dv[32];
    feature_defines(p, 0, features, sizeof features);
    if (c->d_chunk > 0 && c->d_chunk < fcl_head_dim_v(p)) /* (chunks of the output's columns) */
        snprintf(chunk, sizeof chunk, " -DNAIVE_CHUNK=%d", c->d_chunk);
    dim_v_define(p, dv, sizeof dv);
    snprintf(buf, n, "-cl-std=CL1.2 %s -DHEAD_DIM=%d%s%s%s", dtype_define(p->dtype), p->head_dim, dv, features, chunk);
}

static void combine_options(const flashcl_problem *p, const flashcl_config *c, char *buf, size_t n)
{
    (void)c;
    char dv[32];
    dim_v_define(p, dv, sizeof dv);
    snprintf(buf, n, "-cl-std=CL1.2 %s -DHEAD_DIM=%d%s%s", dtype_define(p->dtype), p->head_dim, dv,
             p->sinks ? " -DHAS_SINKS=1" : "");
}

static void append_options(const flashcl_problem *p, const flashcl_config *c, char *buf, size_t n)
{
    (void)c;
    char dv[32];
    dim_v_define(p, dv, sizeof dv);
    snprintf(buf, n, "-cl-std=CL1.2 %s -DHEAD_DIM=%d%s -DPAGE_SIZE=%d -DKV_FORMAT=%d -DKV_SCALE_F16=%d -DKV_DTYPE=%d%s",
             dtype_define(p->dtype), p->head_dim, dv, p->page_size, p->kv_format,
             p->kv_format == FLASHCL_KV_INT8 && p->kv_scale_dtype == FLASHCL_DTYPE_F16,
             fcl_kv_mixed(p) ? p->kv_dtype : 0, p->cache_batch_idx ? " -DCACHE_IDX=1" : "");
}

/* Standard attention's softmax work-group is the config's work_group_size (a power of two). */
static void standard_options(const flashcl_problem *p, const flashcl_config *c, char *buf, size_t n)
{
    snprintf(buf, n, "-cl-std=CL1.2 %s -DWG=%d%s%s", dtype_define(p->dtype), c->work_group_size,
             fcl_wide_positions(p) ? " -DWIDE_POSITIONS=1" : "",
             p->alignment == FLASHCL_ALIGN_TOP_LEFT && (p->causal || p->window) ? " -DTOP_LEFT=1" : "");
}

#define FLASH_PARTS "common.cl geometry.cl scores.cl softmax.cl "
#define NAIVE_PARTS "common.cl geometry.cl scores.cl naive.cl"
#define STANDARD_PARTS "common.cl geometry.cl standard.cl"
#define DEF(entry, sources, options, tag)                                                                  \
    {entry, sources, options, tag##_names, tag##_kinds, (int)(sizeof tag##_names / sizeof tag##_names[0])}

static const fcl_kernel_def kernel_table[FCL_KERNEL_COUNT] = {
    [FCL_K_FLASH_FWD] = DEF("flash_fwd", FLASH_PARTS "flash_fwd.cl", flash_fwd_options, flash_fwd),
    [FCL_K_FLASH_MMA] = DEF("flash_mma", FLASH_PARTS "mma.cl flash_mma.cl", flash_mma_options, flash_mma),
    [FCL_K_FLASH_WGMMA] = DEF("flash_wgmma", FLASH_PARTS "mma.cl wgmma.cl flash_wgmma.cl", flash_wgmma_options, flash_mma),
    [FCL_K_FLASH_DECODE] = DEF("flash_decode", FLASH_PARTS "decode.cl flash_decode.cl", flash_decode_options, flash_decode),
    [FCL_K_FLASH_DECODE_MMA] = DEF("flash_decode_mma", FLASH_PARTS "mma.cl decode.cl flash_decode_mma.cl",
                                   flash_decode_mma_options, flash_decode),
    [FCL_K_FLASH_COMBINE] = DEF("flash_combine", "common.cl flash_combine.cl", combine_options, flash_combine),
    [FCL_K_NAIVE_FWD] = DEF("naive_fwd", NAIVE_PARTS, naive_options, naive_fwd),
    [FCL_K_NAIVE_REF_ROWS] = DEF("naive_ref_rows", NAIVE_PARTS, naive_options, naive_ref_rows),
    [FCL_K_COMPARE_ROWS] = DEF("compare_rows", NAIVE_PARTS, naive_options, compare_rows),
    [FCL_K_KV_APPEND] = DEF("kv_append", "common.cl geometry.cl kvcache.cl", append_options, kv_append),
    [FCL_K_SOFTMAX_ROWS] = DEF("softmax_rows", STANDARD_PARTS, standard_options, softmax_rows),
    [FCL_K_TO_F32] = DEF("to_f32", STANDARD_PARTS, standard_options, convert),
    [FCL_K_FROM_F32] = DEF("from_f32", STANDARD_PARTS, standard_options, convert),
};

const fcl_kernel_def *fcl_kernel_def_of(fcl_kernel_id id)
{
    return (unsigned)id < FCL_KERNEL_COUNT ? &kernel_table[id] : NULL;
}

fcl_kernel_id fcl_config_kernel(const flashcl_config *c)
{
    if (c->algorithm == FLASHCL_ALGO_NAIVE)
        return FCL_K_NAIVE_FWD;
    if (c->decode)
        return c->decode >= 3 ? FCL_K_FLASH_DECODE_MMA : FCL_K_FLASH_DECODE;
    return c->mma >= 3 ? FCL_K_FLASH_WGMMA : c->mma ? FCL_K_FLASH_MMA : FCL_K_FLASH_FWD;
}

void fcl_kernel_options(fcl_kernel_id id, const flashcl_problem *p, const flashcl_config *c, char *buf, size_t n)
{
    kernel_table[id].options(p, c, buf, n);
}

flashcl_status fcl_kernel_create(flashcl_context *ctx, fcl_kernel_id id, const flashcl_problem *p,
                                 const flashcl_config *c, cl_kernel *out, char *options, size_t options_len)
{
    const fcl_kernel_def *def = &kernel_table[id];
    char opts[512];
    def->options(p, c, opts, sizeof opts);
    if (options)
        fcl_strlcpy(options, opts, options_len);
    cl_program prog;
    flashcl_status st = fcl_get_program(ctx, def->sources, opts, &prog);
    if (st != FLASHCL_SUCCESS)
        return st;
    cl_int err;
    *out = clCreateKernel(prog, def->entry, &err);
    if (!*out) {
        char what[96];
        snprintf(what, sizeof what, "clCreateKernel(%s)", def->entry);
        return fcl_fail_cl(ctx, err, what);
    }
    return FLASHCL_SUCCESS;
}

fcl_args fcl_args_of(cl_kernel kernel, fcl_kernel_id id)
{
    return (fcl_args){.kernel = kernel, .id = id, .err = CL_SUCCESS, .failed = -1};
}

static void set(fcl_args *a, int index, fcl_arg_kind kind, size_t size, const void *value)
{
    if (a->err != CL_SUCCESS)
        return;
    const fcl_kernel_def *def = &kernel_table[a->id];
    cl_int err = index < 0 || index >= def->n_args || def->arg_kinds[index] != kind
                     ? CL_INVALID_ARG_SIZE /* a host bug: the table says otherwise */
                     : clSetKernelArg(a->kernel, (cl_uint)index, size, value);
    if (err != CL_SUCCESS) {
        a->err = err;
        a->failed = index;
    }
}

void fcl_arg_mem(fcl_args *a, int index, cl_mem value)
{
    set(a, index, FCL_ARG_MEM, sizeof value, &value);
}
void fcl_arg_int(fcl_args *a, int index, cl_int value)
{
    set(a, index, FCL_ARG_INT, sizeof value, &value);
}
void fcl_arg_long(fcl_args *a, int index, cl_long value)
{
    set(a, index, FCL_ARG_LONG, sizeof value, &value);
}
void fcl_arg_float(fcl_args *a, int index, cl_float value)
{
    set(a, index, FCL_ARG_FLOAT, sizeof value, &value);
}

flashcl_status fcl_args_check(flashcl_context *ctx, const fcl_args *a, const char *what)
{
    if (a->err == CL_SUCCESS)
        return FLASHCL_SUCCESS;
    const fcl_kernel_def *def = &kernel_table[a->id];
    char call[160];
    snprintf(call, sizeof call, "%s%sclSetKernelArg(%s, %s)", what ? what : "", what ? ": " : "", def->entry,
             a->failed >= 0 && a->failed < def->n_args ? def->arg_names[a->failed] : "?");
    return fcl_fail_cl(ctx, a->err, call);
}

/* naive_fwd and naive_ref_rows share the problem's part of their parameters (ATTN_PARAMS), at the
 * same positions: one binding for both. */
_Static_assert((int)NF_seq_q == (int)NR_seq_q && (int)NF_num_pages == (int)NR_num_pages && (int)NF_V == (int)NR_V &&
                   (int)NF_v_scale_off - (int)NF_q_off == 11 && (int)NR_v_scale_off - (int)NR_q_off == 11,
               "naive_fwd and naive_ref_rows must take the problem's arguments at the same positions");

void fcl_bind_naive_problem(fcl_args *a, const flashcl_problem *p, const resolved_layout *L)
{
    int32_t win_left, win_right;
    fcl_visible_window(p, &win_left, &win_right);
    fcl_arg_int(a, NF_seq_q, p->seq_q);
    fcl_arg_int(a, NF_seq_kv, p->seq_kv);
    fcl_arg_int(a, NF_heads_q, p->heads_q);
    fcl_arg_int(a, NF_group, p->heads_q / p->heads_kv);
    fcl_arg_float(a, NF_scale, fcl_effective_scale(p));
    fcl_arg_int(a, NF_win_left, win_left);
    fcl_arg_int(a, NF_win_right, win_right);
    fcl_arg_float(a, NF_softcap, p->softcap);
    FCL_ARG_STRIDES(a, NF_q, L->q);
    FCL_ARG_STRIDES(a, NF_k, L->k);
    FCL_ARG_STRIDES(a, NF_v, L->v);
    fcl_arg_int(a, NF_alibi_per_batch, p->alibi == 2);
    FCL_ARG_STRIDES(a, NF_m, L->mask);
    fcl_arg_int(a, NF_total_q, p->varlen ? (cl_int)p->total_q : 0);
    fcl_arg_int(a, NF_total_kv, p->varlen ? (cl_int)p->total_kv : 0);
    fcl_arg_int(a, NF_batch, p->batch);
    fcl_arg_int(a, NF_cache_batch, L->cache_batch);
    fcl_arg_int(a, NF_max_pages, L->max_pages);
    fcl_arg_int(a, NF_num_pages, p->kv_cache && p->page_size ? p->num_pages : 1);
}

void fcl_bind_naive_inputs(fcl_args *a, const flashcl_tensors *t, int q_off_index, const fcl_offsets *off)
{
    /* Optional inputs are read only when compiled in; q stands in for absent ones. */
    fcl_arg_mem(a, NF_Q, t->q);
    fcl_arg_mem(a, NF_K, t->k);
    fcl_arg_mem(a, NF_V, t->v);
    fcl_arg_mem(a, NF_alibi, t->alibi_slopes ? t->alibi_slopes : t->q);
    fcl_arg_mem(a, NF_mask, t->mask ? t->mask : t->q);
    fcl_arg_mem(a, NF_kpm, t->key_padding ? t->key_padding : t->q);
    fcl_arg_mem(a, NF_cu_q, t->cu_seqlens_q ? t->cu_seqlens_q : t->q);
    fcl_arg_mem(a, NF_cu_k, t->cu_seqlens_k ? t->cu_seqlens_k : t->q);
    fcl_arg_mem(a, NF_cache_lens, t->cache_seqlens ? t->cache_seqlens : t->q);
    fcl_arg_mem(a, NF_bt, t->block_table ? t->block_table : t->q);
    fcl_arg_mem(a, NF_k_scale, t->k_scale ? t->k_scale : t->q);
    fcl_arg_mem(a, NF_v_scale, t->v_scale ? t->v_scale : t->q);
    fcl_arg_mem(a, NF_sinks, t->sinks ? t->sinks : t->q);
    fcl_arg_mem(a, NF_cache_idx, t->cache_batch_idx ? t->cache_batch_idx : t->q);
    fcl_arg_mem(a, NF_leftpad, t->cache_leftpad ? t->cache_leftpad : t->q);
    /* the offsets, in cl/naive.cl's INPUT_OFFSET_PARAMS order, from q_off_index (NF_q_off, NR_q_off) */
    const cl_long offs[15] = {off->q,    off->k,    off->v,          off->alibi, off->mask,    off->kpm,    off->cu_q,
                              off->cu_k, off->cache_lens, off->bt,   off->k_scale, off->v_scale, off->sinks,
                              off->cache_idx, off->leftpad};
    for (int i = 0; i < 15; ++i)
        fcl_arg_long(a, q_off_index + i, offs[i]);
}
