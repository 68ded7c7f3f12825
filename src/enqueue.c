/* SPDX-License-Identifier: MIT */
/*
 * enqueue.c: the hot path. Checks the caller's buffers and events against the plan (nothing is
 * launched on bad input), sets the buffer arguments and launches; validation mode runs after.
 */
#include "kernels/module.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The public call the enqueue in progress on this thread came through, which its messages name (the
 * three calls share one body; a plan is enqueued by one thread at a time). */
static _Thread_local const char *enqueue_who = "flashcl_plan_enqueue_on";

/* A buffer argument is usable when it is a buffer of the plan's context, large enough for the tensor
 * at its offset (bytes, a multiple of the element size `elem`). */
static flashcl_status check_buffer_at(flashcl_context *ctx, cl_mem m, const char *name, uint64_t need, uint64_t offset,
                                      size_t elem)
{
    validate_or_return(ctx, m, FLASHCL_INVALID_ARGUMENT, "%s: %s is NULL", enqueue_who, name);
    cl_context mctx = NULL;
    size_t size = 0;
    cl_mem_object_type type = 0;
    cl_int err = clGetMemObjectInfo(m, CL_MEM_TYPE, sizeof type, &type, NULL);
    if (err == CL_SUCCESS)
        err = clGetMemObjectInfo(m, CL_MEM_CONTEXT, sizeof mctx, &mctx, NULL);
    if (err == CL_SUCCESS)
        err = clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof size, &size, NULL);
    validate_or_return(ctx, err == CL_SUCCESS, FLASHCL_INVALID_ARGUMENT,
                       "%s: %s is not a valid cl_mem (%s)", enqueue_who, name, fcl_cl_error_name(err));
    validate_or_return(ctx, type == CL_MEM_OBJECT_BUFFER, FLASHCL_INVALID_ARGUMENT,
                       "%s: %s is not a buffer", enqueue_who, name);
    validate_or_return(ctx, mctx == ctx->cl_ctx, FLASHCL_INVALID_ARGUMENT,
                       "%s: %s belongs to another OpenCL context", enqueue_who, name);
    validate_or_return(ctx, offset % elem == 0, FLASHCL_INVALID_ARGUMENT,
                       "%s: tensors.offsets.%s = %llu is not a multiple of its element size (%zu "
                       "bytes)", enqueue_who,
                       name, (unsigned long long)offset, elem);
    validate_or_return(ctx, offset <= size && size - offset >= need, FLASHCL_BUFFER_TOO_SMALL,
                       offset ? "%s: %s holds %zu bytes, the problem needs %llu from offset %llu"
                              : "%s: %s holds %zu bytes, the problem needs %llu",
                       enqueue_who, name, size, (unsigned long long)need, (unsigned long long)offset);
    return FLASHCL_SUCCESS;
}


static flashcl_status launch_kernel(flashcl_plan *pl, const flashcl_tensors *t, int bound, int in_order,
                                    cl_uint num_events, const cl_event *wait_list, cl_event *done);

/* A tensors struct's buffers, q to workspace in its order (the same type, one after another), then its
 * offsets (uint64_t): compared and held field by field, never with the padding a target may put between */
#define N_TENSOR_MEMS ((int)(offsetof(flashcl_tensors, workspace) / sizeof(cl_mem)) + 1)
_Static_assert(offsetof(flashcl_tensors, q) == 0 && offsetof(flashcl_tensors, workspace) % sizeof(cl_mem) == 0,
               "flashcl_tensors: its cl_mem fields first, one after another");

static const cl_mem *tensor_mems(const flashcl_tensors *t)
{
    return (const cl_mem *)(const void *)t;
}

static int same_tensors(const flashcl_tensors *a, const flashcl_tensors *b)
{
    return !memcmp(a, b, (size_t)N_TENSOR_MEMS * sizeof(cl_mem)) &&
           !memcmp(&a->offsets, &b->offsets, sizeof a->offsets);
}

/* t as the plan reads it: a workspace that a plan needing none ignores (never checked: a stale handle there
 * is the caller's right) left out, so that it is neither held nor compared */
static flashcl_tensors as_read(const flashcl_plan *pl, const flashcl_tensors *t)
{
    flashcl_tensors r = *t;
    if (!pl->ws_bytes) {
        r.workspace = NULL;
        r.offsets.workspace = 0;
    }
    return r;
}

static void release_mems(const flashcl_tensors *t)
{
    for (int i = 0; i < N_TENSOR_MEMS; ++i)
        if (tensor_mems(t)[i])
            clReleaseMemObject(tensor_mems(t)[i]);
}

void flashcl_plan_release_tensors(flashcl_plan *plan)
{
    if (plan && plan->bound)
        release_mems(&plan->bound_tensors);
    if (plan)
        plan->bound = 0;
}

/* After t's arguments were set on the plan's kernels: t becomes the bound tensors, its buffers held */
static void bind(flashcl_plan *pl, const flashcl_tensors *t)
{
    for (int i = 0; i < N_TENSOR_MEMS; ++i)
        if (tensor_mems(t)[i])
            clRetainMemObject(tensor_mems(t)[i]);
    pl->bound_tensors = *t;
    pl->bound = 1;
}

/* An optional input: present iff the problem asks for it, then checked like the others (an absent one
 * has no offset). */
static flashcl_status check_optional(flashcl_context *ctx, cl_mem m, int wanted, const char *name,
                                     const char *field, uint64_t need, uint64_t offset, size_t elem)
{
    if (wanted) {
        validate_or_return(ctx, m, FLASHCL_INVALID_ARGUMENT,
                           "%s: problem.%s is set but %s is NULL (pass it with "
                           "flashcl_plan_enqueue_tensors)", enqueue_who,
                           field, name);
        return check_buffer_at(ctx, m, name, need, offset, elem);
    }
    validate_or_return(ctx, !m, FLASHCL_INVALID_ARGUMENT, "%s: %s given but problem.%s is 0", enqueue_who,
                       name, field);
    validate_or_return(ctx, !offset, FLASHCL_INVALID_ARGUMENT,
                       "%s: tensors.offsets.%s = %llu for a tensor the problem does not have", enqueue_who, name,
                       (unsigned long long)offset);
    return FLASHCL_SUCCESS;
}

/* Packed queries over a KV cache take their keys' lengths from cache_seqlens: no cu_seqlens_k. */
static flashcl_status check_cu_k(flashcl_context *ctx, cl_mem cu_k, const flashcl_problem *p)
{
    validate_or_return(ctx, !(cu_k && p->varlen && p->kv_cache), FLASHCL_INVALID_ARGUMENT,
                       "%s: cu_seqlens_k given with varlen over a KV cache (the keys are cache_seqlens'; pass NULL)",
                       enqueue_who);
    return FLASHCL_SUCCESS;
}

/* The queue of this enqueue: the context's, or the caller's, of the same cl_context and device. */
static flashcl_status check_queue(flashcl_context *ctx, cl_command_queue queue)
{
    cl_context qctx = NULL;
    cl_device_id qdev = NULL;
    cl_int err = clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof qctx, &qctx, NULL);
    if (err == CL_SUCCESS)
        err = clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof qdev, &qdev, NULL);
    validate_or_return(ctx, err == CL_SUCCESS, FLASHCL_INVALID_ARGUMENT,
                       "flashcl_plan_enqueue_on: queue is not a valid command queue (%s)", fcl_cl_error_name(err));
    validate_or_return(ctx, qctx == ctx->cl_ctx, FLASHCL_INVALID_ARGUMENT,
                       "flashcl_plan_enqueue_on: queue belongs to another OpenCL context");
    validate_or_return(ctx, qdev == ctx->device, FLASHCL_INVALID_ARGUMENT,
                       "flashcl_plan_enqueue_on: queue is for another device than the context's");
    return FLASHCL_SUCCESS;
}

/* A tensor's bytes in its buffer, for the alias checks. */
typedef struct region {
    cl_mem m;
    uint64_t offset, bytes;
    const char *name;
} region;

static int overlap(const region *a, const region *b)
{
    return a->m && a->m == b->m && a->offset < b->offset + b->bytes && b->offset < a->offset + a->bytes;
}

/* A sub-buffer's region as its parent buffer's bytes (clCreateSubBuffer: one level), so that two views of one
 * buffer are compared where they lie. */
static void in_parent(region *r)
{
    cl_mem parent = NULL;
    size_t off = 0;
    if (r->m && clGetMemObjectInfo(r->m, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof parent, &parent, NULL) == CL_SUCCESS &&
        parent && clGetMemObjectInfo(r->m, CL_MEM_OFFSET, sizeof off, &off, NULL) == CL_SUCCESS) {
        r->m = parent;
        r->offset += off;
    }
}

/* Every buffer the problem takes is there, large enough past its offset, its offset a multiple of its
 * element; the ones it does not take are absent; the matrix-unit kernels' 16-byte starts. */
static flashcl_status check_tensors(flashcl_plan *pl, const flashcl_tensors *t)
{
    flashcl_context *ctx = pl->ctx;
    const cl_mem q = t->q, k = t->k, v = t->v, o = t->o, lse = t->lse;
    const flashcl_problem *p = &pl->problem;
    const resolved_layout *L = &pl->layout;
    const struct flashcl_offsets *of = &t->offsets;
    const size_t es = flashcl_dtype_size((flashcl_dtype)p->dtype), ek = fcl_kv_elem(p),
                 escale = fcl_kv_scale_elem(p);
    flashcl_status st;
    if ((st = check_buffer_at(ctx, q, "q", L->q_bytes, of->q, fcl_q_elem(p))) ||
        (st = check_buffer_at(ctx, k, "k", L->k_bytes, of->k, ek)) ||
        (st = check_buffer_at(ctx, v, "v", L->v_bytes, of->v, ek)) ||
        (st = check_buffer_at(ctx, o, "o", L->o_bytes, of->o, es)))
        return st;
    if (p->return_lse) {
        if ((st = check_buffer_at(ctx, lse, "lse", L->lse_bytes, of->lse, sizeof(float))))
            return st;
    } else {
        validate_or_return(ctx, !lse, FLASHCL_INVALID_ARGUMENT,
                           "%s: lse given but problem.return_lse is 0", enqueue_who);
        validate_or_return(ctx, !of->lse, FLASHCL_INVALID_ARGUMENT,
                           "%s: tensors.offsets.lse = %llu but problem.return_lse is 0", enqueue_who,
                           (unsigned long long)of->lse);
    }
    if ((st = check_optional(ctx, t->alibi_slopes, p->alibi != 0, "alibi_slopes", "alibi", L->alibi_bytes,
                             of->alibi_slopes, sizeof(float))) ||
        (st = check_optional(ctx, t->sinks, p->sinks != 0, "sinks", "sinks", L->sinks_bytes, of->sinks,
                             sizeof(float))) ||
        (st = check_optional(ctx, t->cache_batch_idx, p->cache_batch_idx != 0, "cache_batch_idx", "cache_batch_idx",
                             L->cache_batch_idx_bytes, of->cache_batch_idx, sizeof(int32_t))) ||
        (st = check_optional(ctx, t->cache_leftpad, p->cache_leftpad != 0, "cache_leftpad", "cache_leftpad",
                             L->cache_leftpad_bytes, of->cache_leftpad, sizeof(int32_t))) ||
        (st = check_optional(ctx, t->descale, p->fp8_descale != 0, "descale", "fp8_descale", L->descale_bytes,
                             of->descale, sizeof(float))) ||
        (t->workspace && pl->ws_bytes &&
         (st = check_buffer_at(ctx, t->workspace, "workspace", pl->ws_bytes, of->workspace, sizeof(float)))) ||
        (st = check_optional(ctx, t->mask, p->attn_mask != 0, "mask", "attn_mask", L->mask_bytes, of->mask,
                             fcl_mask_elem(p))) ||
        (st = check_optional(ctx, t->key_padding, p->key_padding != 0, "key_padding", "key_padding",
                             L->key_padding_bytes, of->key_padding, 1)) ||
        (st = check_optional(ctx, t->cu_seqlens_q, p->varlen != 0, "cu_seqlens_q", "varlen", L->cu_seqlens_bytes,
                             of->cu_seqlens_q, sizeof(cl_int))) ||
        (st = check_cu_k(ctx, t->cu_seqlens_k, p)) ||
        (st = check_optional(ctx, t->cu_seqlens_k, p->varlen && !p->kv_cache, "cu_seqlens_k", "varlen",
                             L->cu_seqlens_bytes, of->cu_seqlens_k, sizeof(cl_int))) ||
        (st = check_optional(ctx, t->cache_seqlens, p->kv_cache != 0, "cache_seqlens", "kv_cache",
                             L->cache_seqlens_bytes, of->cache_seqlens, sizeof(cl_int))) ||
        (st = check_optional(ctx, t->block_table, p->kv_cache && p->page_size, "block_table", "page_size",
                             L->block_table_bytes, of->block_table, sizeof(cl_int))) ||
        (st = check_optional(ctx, t->k_new, p->kv_cache && p->kv_append, "k_new", "kv_append", L->kv_new_bytes,
                             of->k_new, es)) ||
        (st = check_optional(ctx, t->v_new, p->kv_cache && p->kv_append, "v_new", "kv_append", L->v_new_bytes,
                             of->v_new, es)) ||
        (st = check_optional(ctx, t->k_scale, p->kv_format == FLASHCL_KV_INT8, "k_scale", "kv_format (int8)",
                             L->kv_scale_bytes, of->k_scale, escale)) ||
        (st = check_optional(ctx, t->v_scale, p->kv_format == FLASHCL_KV_INT8, "v_scale", "kv_format (int8)",
                             L->kv_scale_bytes, of->v_scale, escale)))
        return st;
    /* The matrix-unit kernels built for 16-byte row copies (strides multiples of 8 elements) need
     * 16-byte aligned tensor starts too. */
    if ((pl->kernel_id == FCL_K_FLASH_MMA || pl->kernel_id == FCL_K_FLASH_WGMMA || pl->kernel_id == FCL_K_FLASH_MFMA ||
         pl->kernel_id == FCL_K_FLASH_WMMA || pl->kernel_id == FCL_K_FLASH_DPAS ||
         pl->kernel_id == FCL_K_FLASH_DECODE_MMA) &&
        fcl_rows_aligned(p)) {
        const uint64_t offs[3] = {of->q, of->k, of->v};
        static const char *const names[3] = {"q", "k", "v"};
        for (int i = 0; i < 3; ++i)
            validate_or_return(ctx, offs[i] % 16 == 0, FLASHCL_INVALID_ARGUMENT,
                               "%s: tensors.offsets.%s = %llu is not a multiple of 16 bytes, "
                               "which the plan's kernel (%s, 16-byte row copies) needs for Q, K and V", enqueue_who,
                               names[i], (unsigned long long)offs[i], pl->config.kernel_name);
    }
    /* flash_mma and flash_wgmma built for 16-byte output chunks (O's strides multiples of 8 elements): O's
     * start too. */
    const int o_chunks = (pl->kernel_id == FCL_K_FLASH_MMA && fcl_out_aligned(p)) ||
                         (pl->kernel_id == FCL_K_FLASH_WGMMA && fcl_wgmma_o_staged(p));
    validate_or_return(ctx, !o_chunks || of->o % 16 == 0,
                       FLASHCL_INVALID_ARGUMENT,
                       "%s: tensors.offsets.o = %llu is not a multiple of 16 bytes, which the plan's "
                       "kernel (%s, 16-byte output chunks) needs for O", enqueue_who, (unsigned long long)of->o, pl->config.kernel_name);
    return FLASHCL_SUCCESS;
}

/* Whether K and V, with the same strides in one buffer at byte offsets ko and vo, share an element: the two as one
 * tensor of a fourth dimension, extent 2 and stride their distance (a whole number of elements), overlap
 * (head dims d and d_v: the larger one's columns) */
static int kv_overlap(const flashcl_plan *pl, uint64_t ko, uint64_t vo)
{
    const resolved_layout *L = &pl->layout;
    const uint64_t elem = fcl_kv_elem(&pl->problem), dist = ko > vo ? ko - vo : vo - ko;
    if (dist % elem || dist / elem > (uint64_t)INT64_MAX)
        return 1;
    const int64_t d = pl->problem.head_dim > fcl_head_dim_v(&pl->problem) ? pl->problem.head_dim
                                                                            : fcl_head_dim_v(&pl->problem);
    const int64_t strides[4] = {L->k.batch, L->k.seq, L->k.head, (int64_t)(dist / elem)};
    const int64_t extents[4] = {L->kv_batches, L->kv_rows, pl->problem.heads_kv, 2};
    return fcl_layout_overlaps(strides, extents, 4, d);
}

static flashcl_status check_aliasing(flashcl_plan *pl, const flashcl_tensors *t)
{
    flashcl_context *ctx = pl->ctx;
    const cl_mem q = t->q, k = t->k, v = t->v, o = t->o, lse = t->lse;
    const resolved_layout *L = &pl->layout;
    const struct flashcl_offsets *of = &t->offsets;
    /* What is written (o, lse; the cache's K and V under kv_append) overlaps nothing it is computed from:
     * the same buffer (or sub-buffers of one) and overlapping byte ranges (tensors of one pooled buffer at
     * apart offsets do not). */
    region in[18] = {{q, of->q, L->q_bytes, "q"},
                     {k, of->k, L->k_bytes, "k"},
                     {v, of->v, L->v_bytes, "v"},
                     {t->alibi_slopes, of->alibi_slopes, L->alibi_bytes, "alibi_slopes"},
                     {t->mask, of->mask, L->mask_bytes, "mask"},
                     {t->key_padding, of->key_padding, L->key_padding_bytes, "key_padding"},
                     {t->cu_seqlens_q, of->cu_seqlens_q, L->cu_seqlens_bytes, "cu_seqlens_q"},
                     {t->cu_seqlens_k, of->cu_seqlens_k, L->cu_seqlens_bytes, "cu_seqlens_k"},
                     {t->cache_seqlens, of->cache_seqlens, L->cache_seqlens_bytes, "cache_seqlens"},
                     {t->block_table, of->block_table, L->block_table_bytes, "block_table"},
                     {t->k_new, of->k_new, L->kv_new_bytes, "k_new"},
                     {t->v_new, of->v_new, L->v_new_bytes, "v_new"},
                     {t->k_scale, of->k_scale, L->kv_scale_bytes, "k_scale"},
                     {t->v_scale, of->v_scale, L->kv_scale_bytes, "v_scale"},
                     {t->sinks, of->sinks, L->sinks_bytes, "sinks"},
                     {t->cache_batch_idx, of->cache_batch_idx, L->cache_batch_idx_bytes, "cache_batch_idx"},
                     {t->cache_leftpad, of->cache_leftpad, L->cache_leftpad_bytes, "cache_leftpad"},
                     {t->descale, of->descale, L->descale_bytes, "descale"}};
    region out_o = {o, of->o, L->o_bytes, "o"}, out_lse = {lse, of->lse, L->lse_bytes, "lse"};
    for (int i = 0; i < 18; ++i)
        in_parent(&in[i]);
    in_parent(&out_o);
    in_parent(&out_lse);
    for (int i = 0; i < 18; ++i)
        for (int w = 0; w < 2; ++w) {
            const region *out = w ? &out_lse : &out_o;
            validate_or_return(ctx, !overlap(out, &in[i]), FLASHCL_INVALID_ARGUMENT,
                               "%s: %s aliases an input buffer (%s)", enqueue_who, out->name, in[i].name);
        }
    validate_or_return(ctx, !overlap(&out_lse, &out_o), FLASHCL_INVALID_ARGUMENT, "%s: lse aliases o", enqueue_who);
    if (t->workspace && pl->ws_bytes) { /* the workspace is written too: apart from every other tensor */
        region ws = {t->workspace, of->workspace, pl->ws_bytes, "workspace"};
        in_parent(&ws);
        for (int i = 0; i < 18; ++i)
            validate_or_return(ctx, !overlap(&ws, &in[i]), FLASHCL_INVALID_ARGUMENT,
                               "%s: workspace aliases an input buffer (%s)", enqueue_who, in[i].name);
        validate_or_return(ctx, !overlap(&ws, &out_o) && !overlap(&ws, &out_lse), FLASHCL_INVALID_ARGUMENT,
                           "%s: workspace aliases an output (%s)", enqueue_who, overlap(&ws, &out_o) ? "o" : "lse");
    }
    if (!pl->problem.kv_cache || !pl->problem.kv_append)
        return FLASHCL_SUCCESS;
    /* What the append writes: the cache's K and V, and an int8 cache's scales (in[12], in[13]), each apart
     * from every other input. K and V are compared by extent only with the others: a cache that interleaves
     * them is two tensors whose rows each write their own; but an element of both would take V's row over
     * K's (kv_overlap). */
    const int written[4] = {1, 2, 12, 13}, n_written = pl->problem.kv_format == FLASHCL_KV_INT8 ? 4 : 2;
    validate_or_return(ctx, !(in[1].m == in[2].m && in[1].offset == in[2].offset && !memcmp(&L->k, &L->v, sizeof L->k)),
                       FLASHCL_INVALID_ARGUMENT, "%s: k and v are the same tensor, which kv_append writes twice",
                       enqueue_who);
    validate_or_return(ctx, !overlap(&in[1], &in[2]) || !memcmp(&L->k, &L->v, sizeof L->k), FLASHCL_INVALID_ARGUMENT,
                       "%s: k and v share bytes of one buffer with different strides, which kv_append writes: give "
                       "them the same strides (an interleaved cache) or apart bytes",
                       enqueue_who);
    validate_or_return(ctx, !overlap(&in[1], &in[2]) || !kv_overlap(pl, in[1].offset, in[2].offset),
                       FLASHCL_INVALID_ARGUMENT,
                       "%s: k and v (offsets %llu and %llu of one buffer, the same strides) share elements, which "
                       "kv_append would write twice",
                       enqueue_who, (unsigned long long)in[1].offset, (unsigned long long)in[2].offset);
    for (int w = 0; w < n_written; ++w) {
        const int c = written[w];
        for (int i = 0; i < 18; ++i)
            validate_or_return(ctx, i == c || (c <= 2 && i <= 2 && i >= 1) || !overlap(&in[c], &in[i]),
                               FLASHCL_INVALID_ARGUMENT,
                               i == 10 || i == 11 ? "%s: %s aliases the cache it is appended to (%s)"
                                                  : "%s: %s aliases the cache that kv_append writes (%s)",
                               enqueue_who, in[i].name, in[c].name);
    }
    return FLASHCL_SUCCESS;
}

static flashcl_status check_wait_list(flashcl_context *ctx, cl_uint num_events, const cl_event *wait_list)
{
    validate_or_return(ctx, (num_events == 0) == (wait_list == NULL), FLASHCL_INVALID_ARGUMENT,
                       "%s: num_events_in_wait_list = %u but event_wait_list is %s", enqueue_who,
                       num_events, wait_list ? "not NULL" : "NULL");
    /* Drivers differ here (PoCL accepts a NULL event, or another context's, and then waits forever):
     * check the events ourselves so that a bad list is refused the same way everywhere. */
    for (cl_uint i = 0; i < num_events; ++i) {
        cl_context ectx = NULL;
        validate_or_return(ctx,
                           wait_list[i] && clGetEventInfo(wait_list[i], CL_EVENT_CONTEXT, sizeof ectx, &ectx, NULL) ==
                                               CL_SUCCESS && ectx == ctx->cl_ctx,
                           FLASHCL_INVALID_ARGUMENT,
                           "%s: event_wait_list[%u] is %s", enqueue_who, i,
                           !wait_list[i] ? "NULL" : ectx ? "an event of another OpenCL context" : "not a valid event");
    }

    return FLASHCL_SUCCESS;
}

/* The caller's byte offsets as the kernels take them: elements of each buffer. */
static fcl_offsets element_offsets(const flashcl_problem *p, const struct flashcl_offsets *of)
{
    const size_t es = flashcl_dtype_size((flashcl_dtype)p->dtype), ek = fcl_kv_elem(p),
                 escale = fcl_kv_scale_elem(p);
    return (fcl_offsets){.q = (cl_long)(of->q / fcl_q_elem(p)), .k = (cl_long)(of->k / ek), .v = (cl_long)(of->v / ek),
                            .o = (cl_long)(of->o / es), .lse = (cl_long)(of->lse / sizeof(float)),
                            .alibi = (cl_long)(of->alibi_slopes / sizeof(float)),
                            .mask = (cl_long)(of->mask / fcl_mask_elem(p)), .kpm = (cl_long)of->key_padding,
                            .cu_q = (cl_long)(of->cu_seqlens_q / sizeof(cl_int)),
                            .cu_k = (cl_long)(of->cu_seqlens_k / sizeof(cl_int)),
                            .cache_lens = (cl_long)(of->cache_seqlens / sizeof(cl_int)),
                            .bt = (cl_long)(of->block_table / sizeof(cl_int)), .k_new = (cl_long)(of->k_new / es),
                            .v_new = (cl_long)(of->v_new / es), .k_scale = (cl_long)(of->k_scale / escale),
                            .v_scale = (cl_long)(of->v_scale / escale), .sinks = (cl_long)(of->sinks / sizeof(float)),
                            .ws = (cl_long)(of->workspace / sizeof(float)),
                            .cache_idx = (cl_long)(of->cache_batch_idx / sizeof(int32_t)),
                            .leftpad = (cl_long)(of->cache_leftpad / sizeof(int32_t)),
                            .descale = (cl_long)(of->descale / sizeof(float))};
}

static flashcl_status enqueue(flashcl_plan *pl, cl_command_queue queue, const flashcl_tensors *t, cl_uint num_events,
                              const cl_event *wait_list, cl_event *event)
{
    if (!pl)
        return fcl_fail(NULL, FLASHCL_INVALID_ARGUMENT, "%s: plan is NULL", enqueue_who);
    flashcl_context *ctx = pl->ctx;
    validate_or_return(ctx, t, FLASHCL_INVALID_ARGUMENT, "%s: tensors is NULL", enqueue_who);
    const flashcl_problem *p = &pl->problem;
    const struct flashcl_offsets *of = &t->offsets;
    flashcl_status st;
    const int validate = fcl_context_validating(ctx);
    /* The same tensors as the enqueue that set the kernels' arguments (checked then, their buffers held since):
     * neither checked nor set again, the step's host cost its launches (docs/design/decode_mma.md, decode-mma-13).
     * Not under validation, which runs other kernels, nor for standard attention, whose GEMMs take theirs. */
    const flashcl_tensors read = as_read(pl, t);
    const int bound = pl->bound && !validate && pl->config.algorithm != FLASHCL_ALGO_STANDARD &&
                      same_tensors(&pl->bound_tensors, &read);
    if ((queue && (st = check_queue(ctx, queue)) != FLASHCL_SUCCESS) ||
        (!bound &&
         ((st = check_tensors(pl, t)) != FLASHCL_SUCCESS || (st = check_aliasing(pl, t)) != FLASHCL_SUCCESS)) ||
        (st = check_wait_list(ctx, num_events, wait_list)) != FLASHCL_SUCCESS)
        return st;

    if (!queue)
        queue = ctx->queue;
    if (pl->config.algorithm == FLASHCL_ALGO_STANDARD) { /* CLBlast's GEMMs take no wait list: only a queue's
                                                            own order runs them after the softmax */
        cl_command_queue_properties props = 0;
        clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL);
        validate_or_return(ctx, !(props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE), FLASHCL_UNSUPPORTED,
                           "%s: standard attention needs an in-order queue (CLBlast's GEMMs take no wait "
                           "list), and this one is out of order",
                           enqueue_who);
    }
    /* The plan's own scratch (split-KV's partial results without tensors.workspace; standard attention's
     * scores; flash_decode_mma's merge counters) serves one enqueue at a time: this one waits on the last one
     * that used it, on whatever queue that was (flushed first, as OpenCL requires of an event waited on from
     * another queue), unless both are on the same in-order queue, whose order is the wait (no event, no
     * dependency to track: decode-mma-13). The last use's event, where its queue was in order, is a marker
     * enqueued there now. */
    const int own_scratch =
        pl->config.algorithm == FLASHCL_ALGO_STANDARD || (pl->ws_bytes && !t->workspace) || pl->fused_merge;
    const int same_order = own_scratch && pl->last_queue == queue && pl->last_in_order;
    cl_event chained[16], *waits = chained, marker = NULL;
    if (own_scratch && pl->last_queue && !same_order) {
        cl_event last = pl->last_use;
        if (!last && clEnqueueMarkerWithWaitList(pl->last_queue, 0, NULL, &marker) != CL_SUCCESS)
            marker = NULL;
        last = last ? last : marker;
        if (!last || (num_events + 1 > sizeof chained / sizeof *chained &&
                      !(waits = malloc((num_events + 1) * sizeof *waits)))) {
            if (marker)
                clReleaseEvent(marker);
            return last ? fcl_fail(ctx, FLASHCL_OUT_OF_HOST_MEMORY, "%s: out of host memory", enqueue_who)
                        : fcl_fail(ctx, FLASHCL_INVALID_ARGUMENT, "%s: clEnqueueMarkerWithWaitList on the queue of "
                                   "the plan's last enqueue failed (released while in use?)", enqueue_who);
        }
        if (pl->last_queue != queue && clFlush(pl->last_queue) != CL_SUCCESS) {
            if (waits != chained)
                free(waits);
            if (marker)
                clReleaseEvent(marker);
            return fcl_fail(ctx, FLASHCL_INVALID_ARGUMENT, "%s: clFlush of the queue of the plan's last enqueue failed "
                            "(released while in use?)", enqueue_who);
        }
        for (cl_uint i = 0; i < num_events; ++i)
            waits[i] = wait_list[i];
        waits[num_events++] = last;
        wait_list = waits;
    }
    /* whether this enqueue's queue runs in order: the last queue's, known, or asked once it changes (and
     * asked each time for a plan with a kernel before or after its own, the append or the merge, but no
     * scratch of its own: a query of the driver's, far cheaper than the event it can spare) */
    int in_order = 0;
    if (own_scratch || pl->combine || pl->append) {
        cl_command_queue_properties props = CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE;
        if (own_scratch && queue == pl->last_queue)
            in_order = pl->last_in_order;
        else if (clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL) == CL_SUCCESS)
            in_order = !(props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
    }
    pl->queue = queue;
    pl->off = element_offsets(p, of);
    cl_event done = NULL;
    cl_event *want_done = event || validate || (own_scratch && !in_order) ? &done : NULL;
    /* The arguments set below replace the bound ones, whatever comes of this enqueue: the plan is unbound
     * from here, its hold on the old buffers kept until the launch is issued (a caller may have released
     * its own handles to them) */
    const int held = !bound && pl->bound;
    const flashcl_tensors old = pl->bound_tensors;
    if (!bound)
        pl->bound = 0;
    if (pl->config.algorithm == FLASHCL_ALGO_STANDARD) {
        st = fcl_standard_enqueue(pl, t->q, t->k, t->v, t->o, t->lse, num_events, wait_list, want_done);
        if (st != FLASHCL_SUCCESS) /* (its GEMMs and softmax enqueued before the refusal: done before it returns) */
            clFinish(pl->queue);
    } else
        st = launch_kernel(pl, t, bound, in_order, num_events, wait_list, want_done);
    if (waits != chained)
        free(waits);
    if (marker)
        clReleaseEvent(marker);
    if (st == FLASHCL_SUCCESS && !bound && pl->config.algorithm != FLASHCL_ALGO_STANDARD)
        bind(pl, &read);
    if (held)
        release_mems(&old);
    if (st != FLASHCL_SUCCESS)
        return st;
    if (own_scratch) { /* the next enqueue that uses the scratch waits on this one: its event, or its queue's order */
        if (pl->last_use)
            clReleaseEvent(pl->last_use);
        pl->last_use = NULL;
        if (!in_order) {
            clRetainEvent(done);
            pl->last_use = done;
        }
        if (pl->last_queue != queue) {
            if (pl->last_queue)
                clReleaseCommandQueue(pl->last_queue);
            clRetainCommandQueue(queue);
            pl->last_queue = queue;
        }
        pl->last_in_order = in_order;
    }
    if (!event && !validate && done) {
        clReleaseEvent(done);
        done = NULL;
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

flashcl_status flashcl_plan_enqueue_on(flashcl_plan *pl, cl_command_queue queue, const flashcl_tensors *t,
                                       cl_uint num_events, const cl_event *wait_list, cl_event *event)
{
    enqueue_who = "flashcl_plan_enqueue_on";
    return enqueue(pl, queue, t, num_events, wait_list, event);
}

flashcl_status flashcl_plan_enqueue_tensors(flashcl_plan *pl, const flashcl_tensors *t, cl_uint num_events,
                                            const cl_event *wait_list, cl_event *event)
{
    enqueue_who = "flashcl_plan_enqueue_tensors";
    return enqueue(pl, NULL, t, num_events, wait_list, event);
}

flashcl_status flashcl_plan_enqueue(flashcl_plan *pl, cl_mem q, cl_mem k, cl_mem v, cl_mem o, cl_mem lse,
                                    cl_uint num_events, const cl_event *wait_list, cl_event *event)
{
    const flashcl_tensors t = {.q = q, .k = k, .v = v, .o = o, .lse = lse};
    enqueue_who = "flashcl_plan_enqueue";
    return enqueue(pl, NULL, &t, num_events, wait_list, event);
}

/* The flash or naive kernel: the buffer arguments (unless bound: set by an enqueue of the same tensors), then
 * the launch (after kv_append when the step's keys go into the cache first, and followed by flash_combine
 * under split-KV). */
static flashcl_status launch_kernel(flashcl_plan *pl, const flashcl_tensors *t, int bound, int in_order,
                                    cl_uint num_events, const cl_event *wait_list, cl_event *done)
{
    flashcl_context *ctx = pl->ctx;
    /* Split-KV's scratch: the caller's workspace, or the plan's own (allocated once, here). Without
     * splits the kernels never touch it and q stands in. */
    cl_mem scratch = t->q;
    cl_long op_off = 0;
    if (pl->ws_bytes && t->workspace) {
        scratch = t->workspace;
        op_off = pl->off.ws;
    } else if (pl->ws_bytes) {
        if (!pl->partial) {
            cl_int err;
            pl->partial = clCreateBuffer(ctx->cl_ctx, CL_MEM_READ_WRITE, (size_t)pl->ws_bytes, NULL, &err);
            if (!pl->partial)
                return fcl_fail_cl(ctx, err, "split-KV: allocating the partial results (or pass tensors.workspace)");
        }
        scratch = pl->partial;
    }
    /* flash_decode_mma's merge in the kernel: the counters, zeroed once, before the first step that uses them */
    cl_event zeroed = NULL;
    if (pl->fused_merge && !pl->counters) {
        cl_int err;
        cl_mem c = clCreateBuffer(ctx->cl_ctx, CL_MEM_READ_WRITE, pl->counter_slots * sizeof(cl_int), NULL, &err);
        if (!c)
            return fcl_fail_cl(ctx, err, "split-KV: allocating the merge's counters");
        const cl_int zero = 0;
        err = clEnqueueFillBuffer(pl->queue, c, &zero, sizeof zero, 0, pl->counter_slots * sizeof(cl_int), num_events,
                                  wait_list, &zeroed);
        if (err != CL_SUCCESS) {
            clReleaseMemObject(c);
            return fcl_fail_cl(ctx, err, "split-KV: clEnqueueFillBuffer(the merge's counters)");
        }
        pl->counters = c;
        num_events = 1;
        wait_list = &zeroed;
    }
    const fcl_scratch scr = {.mem = scratch,
                             .op_off = op_off,
                             .lp_off = op_off + (cl_long)pl->ws_lse_floats,
                             .counters = pl->counters};
    fcl_args a = fcl_args_of(pl->kernel, (fcl_kernel_id)pl->kernel_id);
    if (!bound)
        fcl_module_of((fcl_kernel_id)pl->kernel_id)->bind_buffers(&a, pl, t, &scr);
    flashcl_status st = fcl_args_check(ctx, &a, NULL);
    if (st != FLASHCL_SUCCESS) {
        if (zeroed)
            clReleaseEvent(zeroed);
        return st;
    }

    /* Every kernel's arguments, before any of the step's launches: a refused argument leaves nothing enqueued */
    if (pl->append) {
        fcl_args ap = fcl_args_of(pl->append, FCL_K_KV_APPEND);
        if (!bound)
            fcl_append_module.bind_buffers(&ap, pl, t, &scr);
        st = fcl_args_check(ctx, &ap, "kv_append");
    }
    if (pl->combine && st == FLASHCL_SUCCESS) {
        fcl_args c = fcl_args_of(pl->combine, FCL_K_FLASH_COMBINE);
        if (!bound)
            fcl_combine_module.bind_buffers(&c, pl, t, &scr);
        st = fcl_args_check(ctx, &c, "split-KV");
    }
    if (st != FLASHCL_SUCCESS) {
        if (zeroed)
            clReleaseEvent(zeroed);
        return st;
    }

    cl_int err;
    cl_event appended = NULL;
    if (pl->append) { /* the step's keys and values into the cache, then the attention after it */
        const size_t local = 64; /* (the attention after it: the queue's order where it is in order, else its event) */
        err = clEnqueueNDRangeKernel(pl->queue, pl->append, 1, NULL, &pl->append_global, &local, num_events,
                                     wait_list, in_order ? NULL : &appended);
        if (err != CL_SUCCESS) {
            if (zeroed)
                clReleaseEvent(zeroed);
            return fcl_fail_cl(ctx, err, "kv_append: clEnqueueNDRangeKernel");
        }
        num_events = appended ? 1 : 0;
        wait_list = appended ? &appended : NULL;
    }
    /* split-KV's merge kernel after the partial results: an in-order queue's order, else their event (an
     * event costs NVIDIA's driver 2-7 us of the enqueue call: tools/enqueue_probe) */
    cl_event partial = NULL;
    err = clEnqueueNDRangeKernel(pl->queue, pl->kernel, 2, NULL, pl->global, pl->local, num_events, wait_list,
                                 pl->combine ? (in_order ? NULL : &partial) : done);
    if (appended)
        clReleaseEvent(appended);
    if (zeroed)
        clReleaseEvent(zeroed);
    if (err != CL_SUCCESS) {
        if (pl->append) /* (the append was enqueued: done before the call returns, flashcl.h) */
            clFinish(pl->queue);
        return fcl_fail_cl(ctx, err, "clEnqueueNDRangeKernel");
    }
    if (pl->combine) { /* split-KV: merge the partial results, after them */
        err = clEnqueueNDRangeKernel(pl->queue, pl->combine, 1, NULL, &pl->combine_global, &pl->combine_local,
                                     partial ? 1 : 0, partial ? &partial : NULL, done);
        if (partial)
            clReleaseEvent(partial);
        if (err != CL_SUCCESS) {
            clFinish(pl->queue); /* (the split kernel, and the append before it, done before the call returns) */
            return fcl_fail_cl(ctx, err, "split-KV: clEnqueueNDRangeKernel(flash_combine)");
        }
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

