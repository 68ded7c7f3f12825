/* SPDX-License-Identifier: MIT */
/*
 * kernels.c: the kernel table (source parts, entry point, arguments by name), the argument binder every
 * launch goes through, and the pieces of build options the kernel modules (src/kernels/) share.
 */
#include "kernels.h"

#include <stdio.h>
#include <string.h>

#define FCL_NAME(name, kind, decl) #name,
#define FCL_KIND(name, kind, decl) FCL_ARG_##kind,
#define FCL_ARG_TABLES(tag, LIST)                                                                          \
    static const char *const tag##_names[] = {LIST(FCL_NAME, FCL_NAME)};                                   \
    static const fcl_arg_kind tag##_kinds[] = {LIST(FCL_KIND, FCL_KIND)};
FCL_ARG_TABLES(flash_fwd, FCL_FLASH_FWD_ARGS)
FCL_ARG_TABLES(flash_mma, FCL_FLASH_MMA_ARGS)
FCL_ARG_TABLES(flash_combine, FCL_FLASH_COMBINE_ARGS)
FCL_ARG_TABLES(flash_decode, FCL_FLASH_DECODE_ARGS)
FCL_ARG_TABLES(naive_fwd, FCL_NAIVE_FWD_ARGS)
FCL_ARG_TABLES(naive_ref_rows, FCL_NAIVE_REF_ROWS_ARGS)
FCL_ARG_TABLES(compare_rows, FCL_COMPARE_ROWS_ARGS)
FCL_ARG_TABLES(kv_append, FCL_KV_APPEND_ARGS)
FCL_ARG_TABLES(softmax_rows, FCL_SOFTMAX_ROWS_ARGS)
FCL_ARG_TABLES(to_f32, FCL_TO_F32_ARGS)
FCL_ARG_TABLES(from_f32, FCL_FROM_F32_ARGS)

const char *fcl_dtype_define(flashcl_dtype t)
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
size_t fcl_feature_defines(const flashcl_problem *p, int flash, char *buf, size_t n)
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
        {"KV_FORMAT", p->qkv_format ? p->qkv_format : p->kv_cache ? p->kv_format : 0},
        {"Q_FORMAT", p->qkv_format},
        {"FP8_DESCALE", p->qkv_format ? p->fp8_descale : 0},
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
void fcl_dim_v_define(const flashcl_problem *p, char *buf, size_t n)
{
    if (fcl_head_dim_v(p) != p->head_dim)
        snprintf(buf, n, " -DHEAD_DIM_V=%d", (int)fcl_head_dim_v(p));
    else
        buf[0] = '\0';
}

/* " -DFCL_SUB_GROUP=n" where the config asks for a sub-group size (cl/common.cl SUB_GROUP_ATTR), else "". */
void fcl_sub_group_define(const flashcl_config *c, char *buf, size_t n)
{
    if (c->sub_group > 0)
        snprintf(buf, n, " -DFCL_SUB_GROUP=%d", c->sub_group);
    else
        buf[0] = '\0';
}

/* Whether every row a strides triple places starts at a multiple of n elements. */
static int rows_of(const flashcl_strides *s, int64_t n)
{
    return s->batch % n == 0 && s->seq % n == 0 && s->head % n == 0;
}

/* Whether every Q, K and V row starts at a multiple of 16 bytes (16-byte loads and copies): 8 elements of
 * 16 bits, 16 of fp8 attention's bytes. */
int fcl_rows_aligned(const flashcl_problem *p)
{
    const int64_t n = p->qkv_format ? 16 : 8;
    return rows_of(&p->q_strides, n) && rows_of(&p->k_strides, n) && rows_of(&p->v_strides, n);
}

int fcl_out_aligned(const flashcl_problem *p)
{
    return rows_of(&p->o_strides, 8);
}

#define FLASH_PARTS "args.h layout.h common.cl geometry.cl scores.cl softmax.cl "
#define NAIVE_PARTS "args.h common.cl geometry.cl scores.cl naive.cl"
#define STANDARD_PARTS "args.h common.cl geometry.cl standard.cl"
#define DEF(entry, sources, tag)                                                                           \
    {entry, sources, tag##_names, tag##_kinds, (int)(sizeof tag##_names / sizeof tag##_names[0])}

static const fcl_kernel_def kernel_table[FCL_KERNEL_COUNT] = {
    [FCL_K_FLASH_FWD] = DEF("flash_fwd", FLASH_PARTS "flash_fwd.cl", flash_fwd),
    [FCL_K_FLASH_MMA] = DEF("flash_mma", FLASH_PARTS "mma.cl flash_mma.cl", flash_mma),
    [FCL_K_FLASH_WGMMA] = DEF("flash_wgmma", FLASH_PARTS "mma.cl wgmma.cl flash_wgmma.cl", flash_mma),
    [FCL_K_FLASH_MFMA] = DEF("flash_mfma", FLASH_PARTS "mma.cl mfma.cl kvtile.cl flash_amd.cl", flash_mma),
    [FCL_K_FLASH_WMMA] = DEF("flash_wmma", FLASH_PARTS "mma.cl wmma.cl kvtile.cl flash_amd.cl", flash_mma),
    [FCL_K_FLASH_DPAS] = DEF("flash_dpas", FLASH_PARTS "mma.cl dpas.cl kvtile.cl flash_dpas.cl", flash_mma),
    [FCL_K_FLASH_DECODE] = DEF("flash_decode", FLASH_PARTS "decode.cl flash_decode.cl", flash_decode),
    [FCL_K_FLASH_DECODE_MMA] = DEF("flash_decode_mma", FLASH_PARTS "mma.cl decode.cl flash_decode_mma.cl", flash_decode),
    [FCL_K_FLASH_COMBINE] = DEF("flash_combine", "args.h common.cl flash_combine.cl", flash_combine),
    [FCL_K_NAIVE_FWD] = DEF("naive_fwd", NAIVE_PARTS, naive_fwd),
    [FCL_K_NAIVE_REF_ROWS] = DEF("naive_ref_rows", NAIVE_PARTS, naive_ref_rows),
    [FCL_K_COMPARE_ROWS] = DEF("compare_rows", NAIVE_PARTS, compare_rows),
    [FCL_K_KV_APPEND] = DEF("kv_append", "args.h common.cl geometry.cl kvcache.cl", kv_append),
    [FCL_K_SOFTMAX_ROWS] = DEF("softmax_rows", STANDARD_PARTS, softmax_rows),
    [FCL_K_TO_F32] = DEF("to_f32", STANDARD_PARTS, to_f32),
    [FCL_K_FROM_F32] = DEF("from_f32", STANDARD_PARTS, from_f32),
};

const fcl_kernel_def *fcl_kernel_def_of(fcl_kernel_id id)
{
    return (unsigned)id < FCL_KERNEL_COUNT ? &kernel_table[id] : NULL;
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
void fcl_arg_params(fcl_args *a, int index, const fcl_params *value)
{
    set(a, index, FCL_ARG_PARAMS, sizeof *value, value);
}
void fcl_arg_offsets(fcl_args *a, int index, const fcl_kernel_offsets *value)
{
    set(a, index, FCL_ARG_OFFSETS, sizeof *value, value);
}

/* No padding in the structs the kernels take by value (cl/args.h says why). */
#define FCL_SIZE_L_(n) +8
#define FCL_SIZE_I_(n) +4
_Static_assert(sizeof(fcl_params) == 0 FCL_PARAM_FIELDS(FCL_SIZE_L_, FCL_SIZE_I_, FCL_SIZE_I_), "fcl_params is padded");
_Static_assert(sizeof(fcl_kernel_offsets) == 0 FCL_OFFSET_FIELDS(FCL_SIZE_L_), "fcl_kernel_offsets is padded");

void fcl_params_of(const flashcl_plan *pl, fcl_params *prm)
{
    const flashcl_problem *p = &pl->problem;
    const resolved_layout *L = &pl->layout;
    int32_t win_left, win_right;
    fcl_visible_window(p, &win_left, &win_right);
    const cl_float log2e = 1.4426950408889634f;
    *prm = (fcl_params){
        .q_sb = L->q.batch, .q_ss = L->q.seq, .q_sh = L->q.head, .k_sb = L->k.batch, .k_ss = L->k.seq,
        .k_sh = L->k.head, .v_sb = L->v.batch, .v_ss = L->v.seq, .v_sh = L->v.head, .o_sb = L->o.batch,
        .o_ss = L->o.seq, .o_sh = L->o.head, .m_sb = L->mask.batch, .m_ss = L->mask.seq, .m_sh = L->mask.head,
        .rows_total = (cl_long)(L->row_groups * L->group_rows), .seq_q = p->seq_q, .seq_kv = p->seq_kv,
        .heads_q = p->heads_q, .group = p->heads_q / p->heads_kv, .win_left = win_left, .win_right = win_right,
        .write_lse = p->return_lse != 0, .alibi_per_batch = p->alibi == 2,
        .total_q = p->varlen ? (cl_int)p->total_q : 0, .total_kv = p->varlen ? (cl_int)p->total_kv : 0,
        .n_splits = pl->config.kv_splits > 1 ? pl->config.kv_splits : 1, .max_pages = L->max_pages,
        .num_pages = p->kv_cache && p->page_size ? p->num_pages : 1, .cache_batch = L->cache_batch,
        .batch = p->batch, .scale = fcl_effective_scale(p), .scale_log2 = fcl_effective_scale(p) * log2e,
        .softcap = p->softcap, .softcap_log2 = p->softcap * log2e};
}

void fcl_kernel_offsets_of(const fcl_offsets *off, cl_long op_off, cl_long lp_off, fcl_kernel_offsets *out)
{
    *out = (fcl_kernel_offsets){
        .q_off = off->q, .k_off = off->k, .v_off = off->v, .o_off = off->o, .lse_off = off->lse,
        .alibi_off = off->alibi, .mask_off = off->mask, .kpm_off = off->kpm, .cu_q_off = off->cu_q,
        .cu_k_off = off->cu_k, .cache_lens_off = off->cache_lens, .bt_off = off->bt, .k_new_off = off->k_new,
        .v_new_off = off->v_new, .k_scale_off = off->k_scale, .v_scale_off = off->v_scale,
        .sinks_off = off->sinks, .op_off = op_off, .lp_off = lp_off, .cache_idx_off = off->cache_idx,
        .leftpad_off = off->leftpad, .descale_off = off->descale};
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

void fcl_flash_grid(const flashcl_plan *pl, size_t global[2], size_t local[2])
{
    /* row tiles of the (packed) query rows x (batch, query head or KV head when packed, split) */
    const flashcl_problem *p = &pl->problem;
    const size_t pack = pl->config.gqa_pack > 1 ? (size_t)pl->config.gqa_pack : 1;
    const size_t tiles = ((size_t)p->seq_q * pack + pl->config.block_m - 1) / pl->config.block_m;
    local[0] = (size_t)pl->config.work_group_size;
    local[1] = 1;
    global[0] = tiles * local[0];
    global[1] = (size_t)p->batch * p->heads_q / pack * (size_t)(pl->config.kv_splits > 1 ? pl->config.kv_splits : 1);
}

/* The key splits a flash configuration takes (its kernel, rows, keys a step and GQA packing set): tiles.c's
 * finisher, and the matrix-unit decode kernel's chooser, whose tiles depend on them (decode_mma.c). */
int32_t fcl_choose_splits(const flashcl_device_profile *pr, const flashcl_problem *p, const flashcl_config *cfg)
{
    if (p->kv_splits > 0)
        return p->kv_splits;
    /* Split the keys only where the direct grid leaves compute units idle (docs/design/tiles.md): prefill
     * wants two work-groups a compute unit and four key tiles a split; a decode step 32 work-groups a
     * compute unit and two tiles a split; the matrix-unit decode kernel one wave of two work-groups a
     * compute unit, or of one of eight warps, never past it, four steps a split (of the work-group's keys,
     * or of four warps' keys at eight warps). At most 1024. */
    const uint64_t pack = cfg->gqa_pack > 1 ? (uint64_t)cfg->gqa_pack : 1;
    const uint64_t blocks = ((uint64_t)p->seq_q * pack + (uint64_t)cfg->block_m - 1) / (uint64_t)cfg->block_m;
    const uint64_t groups = blocks * (uint64_t)p->batch * (uint64_t)p->heads_q / pack;
    const int decode = fcl_is_decode(p);
    const uint64_t cus = pr->compute_units ? pr->compute_units : 1;
    if (cfg->kernel == FLASHCL_KERNEL_DECODE_MMA) {
        /* (two work-groups an SM of four warps or fewer, one of eight; a split at least four steps of the
         * work-group's keys, or of four warps' keys at eight) */
        const uint64_t warps = cfg->work_group_size > 0 ? (uint64_t)cfg->work_group_size / 32 : 4;
        uint64_t splits = (warps >= 8 ? 1u : 2u) * cus / groups;
        const uint64_t step = warps > 4 ? (uint64_t)cfg->block_n * 4 / warps : (uint64_t)cfg->block_n;
        const uint64_t by_keys = (uint64_t)p->seq_kv / (4u * step);
        if (splits > by_keys)
            splits = by_keys;
        return splits < 1 ? 1 : splits > 1024 ? 1024 : (int32_t)splits;
    }
    const uint64_t want = (decode ? 32u : 2u) * cus;
    if (groups >= want)
        return 1;
    uint64_t splits = (want + groups - 1) / groups;
    const uint64_t by_keys = (uint64_t)p->seq_kv / ((decode ? 2u : 4u) * (uint64_t)cfg->block_n);
    if (splits > by_keys)
        splits = by_keys;
    if (splits > 1024)
        splits = 1024;
    return splits < 1 ? 1 : (int32_t)splits;
}
