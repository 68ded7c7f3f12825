/*
 * enqueue.c: the hot path. Checks the caller's buffers and events against the plan (nothing is
 * launched on bad input), sets the buffer arguments and launches; validation mode runs after.
 */
#include "kernels.h"

#include <stdlib.h>

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
        (st = check_optional(ctx, t->v_new, p->kv_cache && p->kv_append, "v_new", "kv_append", L->kv_new_bytes)) ||
        (st = check_optional(ctx, t->k_scale, p->kv_format == FLASHCL_KV_INT8, "k_scale", "kv_format (int8)",
                             L->kv_scale_bytes)) ||
        (st = check_optional(ctx, t->v_scale, p->kv_format == FLASHCL_KV_INT8, "v_scale", "kv_format (int8)",
                             L->kv_scale_bytes)))
        return st;
    validate_or_return(ctx, !t->k_new || (t->k_new != k && t->k_new != v && t->v_new != k && t->v_new != v),
                       FLASHCL_INVALID_ARGUMENT, "flashcl_plan_enqueue: k_new or v_new aliases the cache it is appended to");
    const cl_mem ins[14] = {q, k, v, t->alibi_slopes, t->mask, t->key_padding, t->cu_seqlens_q, t->cu_seqlens_k,
                            t->cache_seqlens, t->block_table, t->k_new, t->v_new, t->k_scale, t->v_scale};
    for (int i = 0; i < 14; ++i)
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

    const int validate = fcl_context_validating(ctx);
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

/* The flash or naive kernel: the buffer arguments, then the launch (after kv_append when the step's
 * keys go into the cache first, and followed by flash_combine under split-KV). */
static flashcl_status launch_kernel(flashcl_plan *pl, const flashcl_tensors *t, cl_uint num_events,
                                    const cl_event *wait_list, cl_event *done)
{
    flashcl_context *ctx = pl->ctx;
    fcl_args a = fcl_args_of(pl->kernel, (fcl_kernel_id)pl->kernel_id);
    switch ((fcl_kernel_id)pl->kernel_id) {
    case FCL_K_FLASH_FWD:
        /* Optional inputs are read only when compiled in; q stands in for absent ones. */
        fcl_arg_mem(&a, FA_Q, t->q);
        fcl_arg_mem(&a, FA_K, t->k);
        fcl_arg_mem(&a, FA_V, t->v);
        fcl_arg_mem(&a, FA_O, t->o);
        fcl_arg_mem(&a, FA_LSE, t->lse);
        fcl_arg_mem(&a, FA_ALIBI, t->alibi_slopes ? t->alibi_slopes : t->q);
        fcl_arg_mem(&a, FA_MASK, t->mask ? t->mask : t->q);
        fcl_arg_mem(&a, FA_KPM, t->key_padding ? t->key_padding : t->q);
        fcl_arg_mem(&a, FA_CU_Q, t->cu_seqlens_q ? t->cu_seqlens_q : t->q);
        fcl_arg_mem(&a, FA_CU_K, t->cu_seqlens_k ? t->cu_seqlens_k : t->q);
        fcl_arg_mem(&a, FA_CACHE_LENS, t->cache_seqlens ? t->cache_seqlens : t->q);
        fcl_arg_mem(&a, FA_BT, t->block_table ? t->block_table : t->q);
        break;
    case FCL_K_FLASH_DECODE:
    case FCL_K_FLASH_DECODE_MMA:
        fcl_arg_mem(&a, DE_Q, t->q);
        fcl_arg_mem(&a, DE_K, t->k);
        fcl_arg_mem(&a, DE_V, t->v);
        fcl_arg_mem(&a, DE_O, t->o);
        fcl_arg_mem(&a, DE_LSE, t->lse);
        fcl_arg_mem(&a, DE_ALIBI, t->alibi_slopes ? t->alibi_slopes : t->q);
        fcl_arg_mem(&a, DE_KPM, t->key_padding ? t->key_padding : t->q);
        fcl_arg_mem(&a, DE_CACHE_LENS, t->cache_seqlens ? t->cache_seqlens : t->q);
        fcl_arg_mem(&a, DE_BT, t->block_table ? t->block_table : t->q);
        fcl_arg_mem(&a, DE_K_SCALE, t->k_scale ? t->k_scale : t->q);
        fcl_arg_mem(&a, DE_V_SCALE, t->v_scale ? t->v_scale : t->q);
        break;
    case FCL_K_FLASH_MMA:
        fcl_arg_mem(&a, MA_Q, t->q);
        fcl_arg_mem(&a, MA_K, t->k);
        fcl_arg_mem(&a, MA_V, t->v);
        fcl_arg_mem(&a, MA_O, t->o);
        fcl_arg_mem(&a, MA_LSE, t->lse);
        break;
    default: /* FCL_K_NAIVE_FWD */
        fcl_bind_naive_inputs(&a, t);
        fcl_arg_mem(&a, NF_O, t->o);
        fcl_arg_mem(&a, NF_LSE, t->lse);
        break;
    }
    flashcl_status st = fcl_args_check(ctx, &a, NULL);
    if (st != FLASHCL_SUCCESS)
        return st;

    cl_int err;
    cl_event appended = NULL;
    if (pl->append) { /* the step's keys and values into the cache, then the attention after it */
        fcl_args ap = fcl_args_of(pl->append, FCL_K_KV_APPEND);
        fcl_arg_mem(&ap, KA_K, t->k);
        fcl_arg_mem(&ap, KA_V, t->v);
        fcl_arg_mem(&ap, KA_K_NEW, t->k_new);
        fcl_arg_mem(&ap, KA_V_NEW, t->v_new);
        fcl_arg_mem(&ap, KA_cache_lens, t->cache_seqlens);
        fcl_arg_mem(&ap, KA_bt, t->block_table ? t->block_table : t->q);
        fcl_arg_mem(&ap, KA_K_SCALE, t->k_scale ? t->k_scale : t->q);
        fcl_arg_mem(&ap, KA_V_SCALE, t->v_scale ? t->v_scale : t->q);
        if ((st = fcl_args_check(ctx, &ap, "kv_append")) != FLASHCL_SUCCESS)
            return st;
        const size_t local = 64;
        err = clEnqueueNDRangeKernel(ctx->queue, pl->append, 1, NULL, &pl->append_global, &local, num_events,
                                     wait_list, &appended);
        if (err != CL_SUCCESS)
            return fcl_fail_cl(ctx, err, "kv_append: clEnqueueNDRangeKernel");
        num_events = 1;
        wait_list = &appended;
    }
    cl_event partial = NULL;
    err = clEnqueueNDRangeKernel(ctx->queue, pl->kernel, 2, NULL, pl->global, pl->local, num_events, wait_list,
                                 pl->combine ? &partial : done);
    if (appended)
        clReleaseEvent(appended);
    if (err != CL_SUCCESS)
        return fcl_fail_cl(ctx, err, "clEnqueueNDRangeKernel");
    if (pl->combine) { /* split-KV: merge the partial results, after them (the queue may be out of order) */
        fcl_args c = fcl_args_of(pl->combine, FCL_K_FLASH_COMBINE);
        fcl_arg_mem(&c, FC_O, t->o);
        fcl_arg_mem(&c, FC_LSE, t->lse);
        st = fcl_args_check(ctx, &c, "split-KV");
        err = st != FLASHCL_SUCCESS ? CL_SUCCESS
                                    : clEnqueueNDRangeKernel(ctx->queue, pl->combine, 1, NULL, &pl->combine_global,
                                                             &pl->combine_local, 1, &partial, done);
        clReleaseEvent(partial);
        if (st != FLASHCL_SUCCESS)
            return st;
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

