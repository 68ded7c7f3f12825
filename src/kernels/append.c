/* SPDX-License-Identifier: MIT */
/*
 * append.c: the KV cache append kernel's module (cl/kvcache.cl): a step's new keys and values written
 * into the cache (contiguous or paged, converted or quantized) before the attention that reads them.
 * Design reasons: docs/design/decode.md (the cache).
 */
#include "module.h"

#include <stdio.h>

static void append_options(const flashcl_problem *p, const flashcl_config *c, char *buf, size_t n)
{
    (void)c;
    char dv[32];
    fcl_dim_v_define(p, dv, sizeof dv);
    snprintf(buf, n, "-cl-std=CL1.2 %s -DHEAD_DIM=%d%s -DPAGE_SIZE=%d -DKV_FORMAT=%d -DKV_SCALE_F16=%d -DKV_DTYPE=%d%s",
             fcl_dtype_define(p->dtype), p->head_dim, dv, p->page_size, p->kv_format,
             p->kv_format == FLASHCL_KV_INT8 && p->kv_scale_dtype == FLASHCL_DTYPE_F16,
             fcl_kv_mixed(p) ? p->kv_dtype : 0, p->cache_batch_idx ? " -DCACHE_IDX=1" : "");
}

/* A work-item per element of the wider of K's and V's rows; for an int8 cache per (row, KV head): its
 * scale spans the row. */
static cl_long append_items(const flashcl_problem *p)
{
    const int32_t dv = fcl_head_dim_v(p), wide = dv > p->head_dim ? dv : p->head_dim;
    return (cl_long)p->batch * p->seq_q * p->heads_kv * (p->kv_format == FLASHCL_KV_INT8 ? 1 : wide);
}

static void append_constants(fcl_args *a, const flashcl_plan *pl)
{
    const flashcl_problem *p = &pl->problem;
    const resolved_layout *L = &pl->layout;
    fcl_arg_int(a, KA_seq_new, p->seq_q);
    fcl_arg_int(a, KA_heads_kv, p->heads_kv);
    fcl_arg_int(a, KA_cache_batch, L->cache_batch);
    fcl_arg_int(a, KA_seq_kv, p->seq_kv);
    fcl_arg_int(a, KA_max_pages, L->max_pages);
    fcl_arg_int(a, KA_num_pages, p->page_size ? p->num_pages : 1);
    FCL_ARG_STRIDES(a, KA_k, L->k);
    FCL_ARG_STRIDES(a, KA_v, L->v);
    fcl_arg_long(a, KA_total, append_items(p));
}

static void append_buffers(fcl_args *a, const flashcl_plan *pl, const flashcl_tensors *t, const fcl_scratch *s)
{
    (void)s;
    const fcl_offsets *off = &pl->off;
    fcl_arg_mem(a, KA_K, t->k);
    fcl_arg_mem(a, KA_V, t->v);
    fcl_arg_mem(a, KA_K_NEW, t->k_new);
    fcl_arg_mem(a, KA_V_NEW, t->v_new);
    fcl_arg_mem(a, KA_cache_lens, t->cache_seqlens);
    fcl_arg_mem(a, KA_bt, FCL_OPT(t, block_table));
    fcl_arg_mem(a, KA_K_SCALE, FCL_OPT(t, k_scale));
    fcl_arg_mem(a, KA_V_SCALE, FCL_OPT(t, v_scale));
    fcl_arg_long(a, KA_k_off, off->k);
    fcl_arg_long(a, KA_v_off, off->v);
    fcl_arg_long(a, KA_k_new_off, off->k_new);
    fcl_arg_long(a, KA_v_new_off, off->v_new);
    fcl_arg_long(a, KA_cache_lens_off, off->cache_lens);
    fcl_arg_long(a, KA_bt_off, off->bt);
    fcl_arg_long(a, KA_k_scale_off, off->k_scale);
    fcl_arg_long(a, KA_v_scale_off, off->v_scale);
    fcl_arg_mem(a, KA_cache_idx, FCL_OPT(t, cache_batch_idx));
    fcl_arg_long(a, KA_cache_idx_off, off->cache_idx);
}

static void append_grid(const flashcl_plan *pl, size_t global[2], size_t local[2])
{
    local[0] = 64;
    local[1] = 1;
    global[0] = ((size_t)append_items(&pl->problem) + 63) / 64 * 64;
    global[1] = 1;
}

const fcl_kernel_module fcl_append_module = {
    .id = FCL_K_KV_APPEND,
    .name = "append",
    .options = append_options,
    .bind_constants = append_constants,
    .bind_buffers = append_buffers,
    .grid = append_grid,
};
