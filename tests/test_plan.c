/* SPDX-License-Identifier: MIT */
/*
 * test_plan.c: contexts and plans on a real device: bad input to every public function gets the
 * documented status and a message naming the argument, and nothing is launched (the poisoned
 * output stays poisoned); the device profile; the plan's configuration fits what the compiled
 * kernel reports.
 */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static flashcl_problem small_problem(void)
{
    flashcl_problem p;
    flashcl_problem_default(&p);
    p.batch = 2;
    p.heads_q = 4;
    p.heads_kv = 2;
    p.seq_q = 33;
    p.seq_kv = 47;
    p.head_dim = 32;
    return p;
}

/* Default settings with the disk cache off and the kernel path forced; path_context: a context of them. */
static flashcl_settings path_settings(int path)
{
    flashcl_settings s;
    flashcl_settings_default(&s);
    s.disk_cache = 0;
    s.path = path;
    return s;
}

static flashcl_context *path_context(int path)
{
    const flashcl_settings s = path_settings(path);
    flashcl_context *ctx = NULL;
    ck_assert_int_eq(flashcl_context_create(tu_context, tu_device, tu_queue, &s, &ctx), FLASHCL_SUCCESS);
    return ctx;
}

/* Q, K and V of a plan's sizes, filled with N(0,1) values from one host block. */
static void upload_inputs(const size_t sz[5], uint64_t seed, cl_mem *q, cl_mem *k, cl_mem *v)
{
    size_t most = sz[0] > sz[1] ? sz[0] : sz[1];
    most = most > sz[2] ? most : sz[2]; /* (V may be the widest: head_dim_v) */
    float *host = malloc(most);
    ck_assert_ptr_nonnull(host);
    hm_rng rng;
    hm_rng_seed(&rng, seed);
    hm_fill_normal(host, FLASHCL_DTYPE_F32, most / 4, &rng, 1.0);
    *q = tu_buffer(sz[0], host);
    *k = tu_buffer(sz[1], host);
    *v = tu_buffer(sz[2], host);
    free(host); /* tu_buffer's writes are blocking */
}

static int still_poisoned(cl_mem o, size_t bytes)
{
    unsigned char *h = tu_read(o, bytes);
    int ok = 1;
    for (size_t i = 0; i < bytes; ++i)
        ok &= h[i] == 0xff;
    free(h);
    return ok;
}

/* A refused enqueue: the status expected, the message naming `word`, nothing launched (o, o_bytes still
 * poisoned). */
static void expect_refused(flashcl_context *ctx, int c, flashcl_status st, flashcl_status expect, const char *word,
                           cl_mem o, size_t o_bytes)
{
    ck_assert_msg(st == expect, "case %d: %s (%s)", c, flashcl_status_name(st), flashcl_context_last_error(ctx));
    ck_assert_msg(strstr(flashcl_context_last_error(ctx), word) != NULL, "case %d: '%s' lacks '%s'", c,
                  flashcl_context_last_error(ctx), word);
    ck_assert_int_eq(clFinish(tu_queue), CL_SUCCESS);
    ck_assert_msg(still_poisoned(o, o_bytes), "case %d: something was launched", c);
}

/* Aliases the handles do not show: O as a sub-buffer over V's bytes; under kv_append, Q inside the K cache that
 * the append writes (case 1), k_new and v_new kept apart from it, and the same tensors apart accepted (case 2);
 * K and V the same tensor, which the append would write twice (case 3); an int8 cache's scales, which the append
 * writes too, in one buffer (case 4: V's row scale would replace K's); V one row after K in one buffer with K's
 * strides (case 5: V's rows over K's next ones); V with padded rows over K's bytes (case 6: strides that differ,
 * which the check does not take apart). An interleaved cache (one buffer, apart elements) is accepted and checked
 * against float64 in test_edges. */
START_TEST(test_enqueue_alias_views)
{
    flashcl_context *ctx = tu_context_create();
    flashcl_problem p = small_problem();
    if (_i) {
        p.batch = 1;
        p.seq_q = 1;
        p.kv_cache = 1;
        p.kv_append = 1;
        if (_i == 4)
            p.kv_format = FLASHCL_KV_INT8;
        if (_i == 6) /* (V's rows 8 elements longer than K's) */
            p.v_strides = (flashcl_strides){(int64_t)p.seq_kv * (p.heads_kv * p.head_dim + 8),
                                            p.heads_kv * p.head_dim + 8, p.head_dim};
    }
    flashcl_plan *plan = NULL;
    ck_assert_int_eq(flashcl_plan_create(ctx, &p, &plan), FLASHCL_SUCCESS);
    size_t sz[5];
    flashcl_plan_buffer_sizes(plan, &sz[0], &sz[1], &sz[2], &sz[3], &sz[4]);
    struct flashcl_offsets bytes;
    ck_assert_int_eq(flashcl_plan_tensor_bytes(plan, &bytes), FLASHCL_SUCCESS);
    const size_t knew_bytes = (size_t)bytes.k_new, vnew_bytes = (size_t)bytes.v_new;
    cl_mem q, k, v;
    upload_inputs(sz, 11, &q, &k, &v);
    cl_mem o = tu_buffer(sz[3], NULL);
    const int32_t len = 20; /* (the cache's rows before the step's) */
    cl_mem lens = tu_buffer(sizeof len, &len), knew = tu_buffer(knew_bytes ? knew_bytes : 4, NULL),
           vnew = tu_buffer(vnew_bytes ? vnew_bytes : 4, NULL),
           scales = tu_buffer(bytes.k_scale ? (size_t)bytes.k_scale : 4, NULL);
    flashcl_tensors t = {.q = q, .k = k, .v = v, .o = o};
    if (_i) {
        t.cache_seqlens = lens;
        t.k_new = knew;
        t.v_new = vnew;
    }
    cl_int err;
    cl_mem parent = NULL, views[2] = {NULL, NULL};
    flashcl_status st;
    if (_i == 0) { /* V and O: sub-buffers over the same first bytes of one buffer */
        parent = tu_buffer(sz[2] > sz[3] ? sz[2] : sz[3], NULL);
        const cl_buffer_region r[2] = {{0, sz[2]}, {0, sz[3]}};
        for (int i = 0; i < 2; ++i) {
            views[i] = clCreateSubBuffer(parent, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &r[i], &err);
            ck_assert_int_eq(err, CL_SUCCESS);
        }
        ck_assert_int_eq(clEnqueueCopyBuffer(tu_queue, v, views[0], 0, 0, sz[2], 0, NULL, NULL), CL_SUCCESS);
        t.v = views[0];
        t.o = views[1];
        st = flashcl_plan_enqueue_tensors(plan, &t, 0, NULL, NULL);
        const char *msg = flashcl_context_last_error(ctx);
        ck_assert_msg(st == FLASHCL_INVALID_ARGUMENT && strstr(msg, "o aliases an input buffer (v)"), "%s: %s",
                      flashcl_status_name(st), msg);
    } else if (_i == 3) { /* V: K's buffer at K's offset and strides */
        t.v = k;
        st = flashcl_plan_enqueue_tensors(plan, &t, 0, NULL, NULL);
        expect_refused(ctx, _i, st, FLASHCL_INVALID_ARGUMENT, "k and v are the same tensor", o, sz[3]);
    } else if (_i == 5 || _i == 6) { /* V in K's buffer: one row after K's start (5), or at its start (6) */
        const size_t row = (size_t)p.heads_kv * p.head_dim * sizeof(float);
        parent = tu_buffer(sz[1] + sz[2] + row, NULL);
        t.k = t.v = parent;
        t.offsets.v = _i == 5 ? row : 0;
        st = flashcl_plan_enqueue_tensors(plan, &t, 0, NULL, NULL);
        expect_refused(ctx, _i, st, FLASHCL_INVALID_ARGUMENT,
                       _i == 5 ? "k and v (offsets 0 and 256 of one buffer, the same strides) share elements"
                               : "k and v share bytes of one buffer with different strides",
                       o, sz[3]);
    } else if (_i == 4) { /* k_scale and v_scale: one buffer */
        t.k_scale = t.v_scale = scales;
        st = flashcl_plan_enqueue_tensors(plan, &t, 0, NULL, NULL);
        expect_refused(ctx, _i, st, FLASHCL_INVALID_ARGUMENT,
                       "v_scale aliases the cache that kv_append writes (k_scale)", o, sz[3]);
    } else if (_i == 1) { /* Q: the K cache's row 20, the one the append writes */
        t.q = k;
        t.offsets.q = (uint64_t)len * p.heads_kv * p.head_dim * sizeof(float);
        st = flashcl_plan_enqueue_tensors(plan, &t, 0, NULL, NULL);
        expect_refused(ctx, _i, st, FLASHCL_INVALID_ARGUMENT, "q aliases the cache that kv_append writes (k)", o,
                       sz[3]);
    } else {
        ck_assert_int_eq(flashcl_plan_enqueue_tensors(plan, &t, 0, NULL, NULL), FLASHCL_SUCCESS);
        ck_assert_int_eq(clFinish(tu_queue), CL_SUCCESS);
        ck_assert(!still_poisoned(o, sz[3]));
    }
    for (int i = 0; i < 2; ++i)
        if (views[i])
            clReleaseMemObject(views[i]);
    if (parent)
        clReleaseMemObject(parent);
    cl_mem all[8] = {q, k, v, o, lens, knew, vnew, scales};
    for (int i = 0; i < 8; ++i)
        clReleaseMemObject(all[i]);
    flashcl_plan_destroy(&plan);
    flashcl_context_destroy(&ctx);
}
END_TEST

START_TEST(test_context_bad_input)
{
    flashcl_context *ctx = (flashcl_context *)0x1;
    ck_assert_int_eq(flashcl_context_create(NULL, tu_device, tu_queue, NULL, &ctx), FLASHCL_INVALID_ARGUMENT);
    ck_assert_ptr_null(ctx);
    ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(NULL), "context is NULL"));
    ck_assert_int_eq(flashcl_context_create(tu_context, NULL, tu_queue, NULL, &ctx), FLASHCL_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(NULL), "device is NULL"));
    ck_assert_int_eq(flashcl_context_create(tu_context, tu_device, NULL, NULL, &ctx), FLASHCL_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(NULL), "queue is NULL"));
    ck_assert_int_eq(flashcl_context_create(tu_context, tu_device, tu_queue, NULL, NULL), FLASHCL_INVALID_ARGUMENT);

    /* Malformed environment values are refused by name, not read as "on" (FLASHCL_VALIDATE=maybe) or as
     * the digits they start with (FLASHCL_LOCAL_MEM_LIMIT=48M was 48 bytes); nothing is left behind. */
    char *env_kept[3] = {NULL, NULL, NULL}; /* (the configuration's own values, restored after) */
    static const char *const env[3][2] = {{"FLASHCL_VALIDATE", "maybe"}, {"FLASHCL_CACHE", "2"},
                                          {"FLASHCL_LOCAL_MEM_LIMIT", "48 MiB"}};
    for (int i = 0; i < 3; ++i) {
        env_kept[i] = getenv(env[i][0]) ? strdup(getenv(env[i][0])) : NULL;
        setenv(env[i][0], env[i][1], 1);
        ck_assert_int_eq(flashcl_context_create(tu_context, tu_device, tu_queue, NULL, &ctx), FLASHCL_INVALID_ARGUMENT);
        ck_assert_ptr_null(ctx);
        ck_assert_msg(strstr(flashcl_context_last_error(NULL), env[i][0]) != NULL, "%s", flashcl_context_last_error(NULL));
        unsetenv(env[i][0]);
    }
    setenv("FLASHCL_LOCAL_MEM_LIMIT", "48M", 1);
    ck_assert_int_eq(flashcl_context_create(tu_context, tu_device, tu_queue, NULL, &ctx), FLASHCL_SUCCESS);
    flashcl_policy env_policy;
    ck_assert_int_eq(flashcl_context_policy(ctx, &env_policy), FLASHCL_SUCCESS);
    ck_assert_uint_eq(env_policy.local_mem_limit, 48u << 20);
    flashcl_context_destroy(&ctx);
    for (int i = 0; i < 3; ++i) {
        if (env_kept[i])
            setenv(env[i][0], env_kept[i], 1);
        else
            unsetenv(env[i][0]);
        free(env_kept[i]);
    }

    /* A queue of another context. */
    cl_int err;
    cl_context other = clCreateContext(NULL, 1, &tu_device, NULL, NULL, &err);
    ck_assert_ptr_nonnull(other);
    cl_command_queue oq = clCreateCommandQueue(other, tu_device, 0, &err);
    ck_assert_int_eq(flashcl_context_create(tu_context, tu_device, oq, NULL, &ctx), FLASHCL_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(NULL), "queue does not belong"));
    clReleaseCommandQueue(oq);
    clReleaseContext(other);

    ck_assert_int_eq(flashcl_context_create_default("no such device name anywhere", NULL, &ctx), FLASHCL_NO_DEVICE);
    ck_assert_ptr_null(ctx);
    ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(NULL), "no such device name anywhere"));
    ck_assert_int_eq(flashcl_context_create_default("99:99", NULL, &ctx), FLASHCL_NO_DEVICE);

    /* The kernel path: a settings value out of range, an unknown $FLASHCL_PATH (named in the
     * message); a valid one lands in the profile. */
    flashcl_settings s;
    flashcl_settings_default(&s);
    s.path = FLASHCL_PATH_DPAS + 1; /* (past the last path: 8) */
    ck_assert_int_eq(flashcl_context_create(tu_context, tu_device, tu_queue, &s, &ctx), FLASHCL_INVALID_ARGUMENT);
    ck_assert_ptr_null(ctx);
    ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(NULL), "settings.path = 8"));
    s.path = -1;
    const char *saved = getenv("FLASHCL_PATH");
    char keep[64] = "";
    if (saved)
        snprintf(keep, sizeof keep, "%s", saved);
    setenv("FLASHCL_PATH", "tensorcores", 1);
    ck_assert_int_eq(flashcl_context_create(tu_context, tu_device, tu_queue, &s, &ctx), FLASHCL_INVALID_ARGUMENT);
    ck_assert_ptr_null(ctx);
    ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(NULL), "FLASHCL_PATH=\"tensorcores\""));
    setenv("FLASHCL_PATH", "portable", 1);
    ck_assert_int_eq(flashcl_context_create(tu_context, tu_device, tu_queue, &s, &ctx), FLASHCL_SUCCESS);
    flashcl_policy policy;
    ck_assert_int_eq(flashcl_context_policy(ctx, &policy), FLASHCL_SUCCESS);
    ck_assert_int_eq(policy.path, FLASHCL_PATH_PORTABLE);
    flashcl_context_destroy(&ctx);
    if (saved)
        setenv("FLASHCL_PATH", keep, 1);
    else
        unsetenv("FLASHCL_PATH");

    flashcl_context_destroy(NULL);
    flashcl_context *null_ctx = NULL;
    flashcl_context_destroy(&null_ctx);
}
END_TEST

START_TEST(test_context_retains_objects)
{
    flashcl_context *ctx = tu_context_create();
    cl_uint refs = 0;
    clGetCommandQueueInfo(tu_queue, CL_QUEUE_REFERENCE_COUNT, sizeof refs, &refs, NULL);
    ck_assert_uint_ge(refs, 2);
    cl_command_queue q;
    flashcl_context_cl_objects(ctx, NULL, NULL, &q);
    ck_assert_ptr_eq(q, tu_queue);
    flashcl_context_destroy(&ctx);
    ck_assert_ptr_null(ctx);
    cl_uint after = 0;
    clGetCommandQueueInfo(tu_queue, CL_QUEUE_REFERENCE_COUNT, sizeof after, &after, NULL);
    ck_assert_uint_eq(after, refs - 1);
}
END_TEST

/* The public chooser with the context's profile and policy gives exactly the configuration a plan runs
 * (unless the plan had to shrink after compiling, which it says), for prefill and decode, fp32 and fp16,
 * with and without the shipped tuning table. */
START_TEST(test_public_chooser_is_the_plans)
{
    flashcl_settings s;
    flashcl_settings_default(&s);
    s.disk_cache = 0;
    s.tuning_db = _i; /* 0: heuristic only; 1: the shipped table and the user's file */
    flashcl_context *ctx = NULL;
    ck_assert_int_eq(flashcl_context_create(tu_context, tu_device, tu_queue, &s, &ctx), FLASHCL_SUCCESS);
    flashcl_policy policy;
    ck_assert_int_eq(flashcl_context_policy(NULL, &policy), FLASHCL_INVALID_ARGUMENT);
    ck_assert_int_eq(flashcl_context_policy(ctx, NULL), FLASHCL_INVALID_ARGUMENT);
    ck_assert_int_eq(flashcl_context_policy(ctx, &policy), FLASHCL_SUCCESS);
    ck_assert(policy.tuning_db == flashcl_context_tuning_db(ctx));
    for (int k = 0; k < 4; ++k) {
        flashcl_problem p = small_problem();
        p.head_dim = k & 1 ? 128 : 64;
        p.dtype = k & 2 ? FLASHCL_DTYPE_F16 : FLASHCL_DTYPE_F32;
        p.seq_q = k == 3 ? 1 : 100;
        p.seq_kv = 300;
        p.heads_q = 8;
        p.heads_kv = 2;
        flashcl_config chosen, planned;
        ck_assert_int_eq(flashcl_choose_config_policy(flashcl_context_profile(ctx), &policy, &p, FLASHCL_ALGO_FLASH,
                                                      &chosen),
                         FLASHCL_SUCCESS);
        flashcl_plan *plan = NULL;
        ck_assert_int_eq(flashcl_plan_create(ctx, &p, &plan), FLASHCL_SUCCESS);
        ck_assert_int_eq(flashcl_plan_config(plan, &planned), FLASHCL_SUCCESS);
        if (!strstr(planned.source, "shrunk"))
            ck_assert_msg(!memcmp(&chosen, &planned, sizeof chosen), "case %d: chosen %s %dx%d, planned %s %dx%d", k,
                          chosen.kernel_name, chosen.block_m, chosen.block_n, planned.kernel_name, planned.block_m,
                          planned.block_n);
        flashcl_plan_destroy(&plan);
    }
    flashcl_context_destroy(&ctx);
}
END_TEST

START_TEST(test_profile)
{
    flashcl_context *ctx = tu_context_create();
    const flashcl_device_profile *pr = flashcl_context_profile(ctx);
    ck_assert_uint_gt(pr->local_mem_size, 0);
    ck_assert_uint_ge(pr->max_work_group_size, 1);
    ck_assert_uint_ge(pr->wg_multiple, 1);
    ck_assert(strlen(pr->name) > 0);
    /* The static local memory probe: what static arrays may take, at least the reported size (more only
     * on NVIDIA GPUs); a compute unit holds at least one work-group's worth. */
    ck_assert_uint_ge(pr->local_mem_static, pr->local_mem_size);
    if (pr->vendor != FLASHCL_VENDOR_NVIDIA || pr->is_cpu)
        ck_assert_uint_eq(pr->local_mem_static, pr->local_mem_size);
    ck_assert_uint_ge(pr->local_mem_per_cu, pr->local_mem_size);
    /* The budget tiles get is the policy's: at most 64 KiB and the device's size, or past them what
     * static arrays may take within half a compute unit; and the user's cap. */
    flashcl_problem p = small_problem();
    flashcl_config c;
    ck_assert_int_eq(flashcl_context_choose_config(ctx, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    if (c.local_mem_budget > 65536 || c.local_mem_budget > pr->local_mem_size) {
        ck_assert(!pr->is_cpu);
        ck_assert_uint_le(c.local_mem_budget, pr->local_mem_static);
        ck_assert_uint_le(c.local_mem_budget, pr->local_mem_per_cu / 2);
    }
    const char *cap = getenv("FLASHCL_LOCAL_MEM_LIMIT");
    if (cap && *cap)
        ck_assert_uint_le(c.local_mem_budget, strtoull(cap, NULL, 10));
    flashcl_context_destroy(&ctx);
}
END_TEST

START_TEST(test_plan_bad_input)
{
    flashcl_context *ctx = tu_context_create();
    flashcl_problem p = small_problem();
    flashcl_plan *plan = (flashcl_plan *)0x1;
    ck_assert_int_eq(flashcl_plan_create(NULL, &p, &plan), FLASHCL_INVALID_ARGUMENT);
    ck_assert_int_eq(flashcl_plan_create(ctx, NULL, &plan), FLASHCL_INVALID_ARGUMENT);
    ck_assert_ptr_null(plan);
    ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(ctx), "problem is NULL"));
    ck_assert_int_eq(flashcl_plan_create(ctx, &p, NULL), FLASHCL_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(ctx), "out is NULL"));
    ck_assert_int_eq(flashcl_plan_create_algo(ctx, &p, (flashcl_algorithm)7, &plan), FLASHCL_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(ctx), "algorithm"));
    p.heads_q = 5;
    ck_assert_int_eq(flashcl_plan_create(ctx, &p, &plan), FLASHCL_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(ctx), "problem.heads_q = 5"));
    p = small_problem();
    p.head_dim = 36;
    ck_assert_int_eq(flashcl_plan_create(ctx, &p, &plan), FLASHCL_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(ctx), "problem.head_dim = 36"));
    ck_assert_ptr_null(plan);

    flashcl_config cfg;
    ck_assert_int_eq(flashcl_plan_config(NULL, &cfg), FLASHCL_INVALID_ARGUMENT);
    ck_assert_int_eq(flashcl_plan_problem(NULL, &p), FLASHCL_INVALID_ARGUMENT);
    flashcl_validation rep;
    ck_assert_int_eq(flashcl_plan_last_validation(NULL, &rep), FLASHCL_INVALID_ARGUMENT);
    flashcl_plan_destroy(NULL);
    flashcl_context_destroy(&ctx);
}
END_TEST

/* Each case breaks one enqueue argument; the status, a word of the message, and nothing launched. */
START_TEST(test_enqueue_bad_input)
{
    flashcl_context *ctx = tu_context_create();
    flashcl_problem p = small_problem();
    p.return_lse = _i >= 6;
    flashcl_plan *plan = NULL;
    ck_assert_int_eq(flashcl_plan_create(ctx, &p, &plan), FLASHCL_SUCCESS);
    size_t sz[5];
    flashcl_plan_buffer_sizes(plan, &sz[0], &sz[1], &sz[2], &sz[3], &sz[4]);
    cl_mem q, k, v;
    upload_inputs(sz, 5, &q, &k, &v);
    cl_mem o = tu_buffer(sz[3], NULL), lse = tu_buffer(sz[4] ? sz[4] : 4, NULL);
    cl_mem small = tu_buffer(sz[1] - 4, NULL);
    cl_int err;
    cl_context other = clCreateContext(NULL, 1, &tu_device, NULL, NULL, &err);
    cl_mem foreign = clCreateBuffer(other, CL_MEM_READ_WRITE, sz[3], NULL, &err);
    cl_event ev = NULL;
    flashcl_status st = FLASHCL_SUCCESS, expect = FLASHCL_INVALID_ARGUMENT;
    const char *word = NULL;
    switch (_i) {
    case 0: st = flashcl_plan_enqueue(plan, NULL, k, v, o, NULL, 0, NULL, NULL); word = "q is NULL"; break;
    case 1: st = flashcl_plan_enqueue(plan, q, small, v, o, NULL, 0, NULL, NULL); word = "k holds";
            expect = FLASHCL_BUFFER_TOO_SMALL; break;
    case 2: st = flashcl_plan_enqueue(plan, q, k, v, foreign, NULL, 0, NULL, NULL); word = "another OpenCL context"; break;
    case 3: st = flashcl_plan_enqueue(plan, q, k, v, q, NULL, 0, NULL, NULL); word = "aliases"; break;
    case 4: st = flashcl_plan_enqueue(plan, q, k, v, o, NULL, 2, NULL, NULL); word = "num_events_in_wait_list"; break;
    case 5: st = flashcl_plan_enqueue(plan, q, k, v, o, lse, 0, NULL, NULL); word = "return_lse is 0"; break;
    case 6: st = flashcl_plan_enqueue(plan, q, k, v, o, NULL, 0, NULL, &ev); word = "lse is NULL"; break;
    case 7: st = flashcl_plan_enqueue(NULL, q, k, v, o, lse, 0, NULL, NULL); word = "plan is NULL"; break;
    }
    ck_assert_msg(st == expect, "case %d: %s (%s)", _i, flashcl_status_name(st), flashcl_context_last_error(ctx));
    const char *msg = _i == 7 ? flashcl_context_last_error(NULL) : flashcl_context_last_error(ctx);
    ck_assert_msg(strstr(msg, word) != NULL, "case %d: message '%s' lacks '%s'", _i, msg, word);
    ck_assert_ptr_null(ev);
    ck_assert_int_eq(clFinish(tu_queue), CL_SUCCESS);
    ck_assert_msg(still_poisoned(o, sz[3]), "case %d: something was launched", _i);

    /* And the same plan still works with good arguments. */
    st = flashcl_plan_enqueue(plan, q, k, v, o, p.return_lse ? lse : NULL, 0, NULL, &ev);
    ck_assert_int_eq(st, FLASHCL_SUCCESS);
    ck_assert_ptr_nonnull(ev);
    ck_assert_int_eq(clWaitForEvents(1, &ev), CL_SUCCESS);
    clReleaseEvent(ev);
    ck_assert(!still_poisoned(o, sz[3]));

    cl_mem all[7] = {q, k, v, o, lse, small, foreign};
    for (int i = 0; i < 7; ++i)
        clReleaseMemObject(all[i]);
    clReleaseContext(other);
    flashcl_plan_destroy(&plan);
    ck_assert_ptr_null(plan);
    flashcl_context_destroy(&ctx);
}
END_TEST

/* A wait list is honoured: the kernel waits for a user event before reading its inputs. */
START_TEST(test_wait_list)
{
    flashcl_context *ctx = tu_context_create();
    flashcl_problem p = small_problem();
    flashcl_plan *plan = NULL;
    ck_assert_int_eq(flashcl_plan_create(ctx, &p, &plan), FLASHCL_SUCCESS);
    size_t sz[5];
    flashcl_plan_buffer_sizes(plan, &sz[0], &sz[1], &sz[2], &sz[3], &sz[4]);
    cl_mem q, k, v, o = tu_buffer(sz[3], NULL);
    upload_inputs(sz, 9, &q, &k, &v);
    cl_int err;
    cl_event gate = clCreateUserEvent(tu_context, &err);
    cl_event done = NULL;
    ck_assert_int_eq(flashcl_plan_enqueue(plan, q, k, v, o, NULL, 1, &gate, &done), FLASHCL_SUCCESS);
    cl_int status = 0;
    clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
    ck_assert_int_ne(status, CL_COMPLETE);
    clSetUserEventStatus(gate, CL_COMPLETE);
    ck_assert_int_eq(clWaitForEvents(1, &done), CL_SUCCESS);
    clReleaseEvent(done);
    clReleaseEvent(gate);
    ck_assert(!still_poisoned(o, sz[3]));
    cl_mem all[4] = {q, k, v, o};
    for (int i = 0; i < 4; ++i)
        clReleaseMemObject(all[i]);
    flashcl_plan_destroy(&plan);
    flashcl_context_destroy(&ctx);
}
END_TEST

/* What the plan chose fits what the compiled kernel reports, and the resolved problem is filled. */
START_TEST(test_config_fits)
{
    flashcl_context *ctx = tu_context_create();
    const flashcl_device_profile *pr = flashcl_context_profile(ctx);
    flashcl_problem p = small_problem();
    p.head_dim = _i < 7 ? 8 * (1 + _i * 5) : _i == 7 ? 192 : 64; /* 8, 48, 88, 128, 168, 208, 248 */
    p.head_dim_v = _i == 7 ? 128 : _i == 8 ? 256 : 0; /* then V's own head dim, narrower and wider */
    const int dv = p.head_dim_v ? p.head_dim_v : p.head_dim;
    p.seq_q = p.seq_kv = 500;
    flashcl_plan *plan = NULL;
    ck_assert_int_eq(flashcl_plan_create(ctx, &p, &plan), FLASHCL_SUCCESS);
    flashcl_config c;
    ck_assert_int_eq(flashcl_plan_config(plan, &c), FLASHCL_SUCCESS);
    ck_assert_str_eq(c.kernel_name, "flash_fwd");
    ck_assert_uint_le(c.local_mem_bytes, c.local_mem_budget);
    ck_assert_uint_le((size_t)c.work_group_size, pr->max_work_group_size);
    ck_assert(strlen(c.reason) > 0);
    /* The kernel's layout comment and flashcl_flash_local_mem_bytes agree with the compiler: it never
     * reports less than the formula (an undercount could choose a tile that does not fit). */
    if (dv == p.head_dim) /* (the public formula is at one head dim) */
        ck_assert_uint_eq(c.local_mem_bytes, flashcl_flash_local_mem_bytes(p.head_dim, &c));
    flashcl_kernel_info ki;
    ck_assert_int_eq(flashcl_plan_kernel_info(plan, &ki), FLASHCL_SUCCESS);
    if (ki.local_mem_bytes)
        ck_assert_msg(ki.local_mem_bytes >= c.local_mem_bytes, "d=%d: compiler reports %llu B, formula %llu B",
                      p.head_dim, (unsigned long long)ki.local_mem_bytes, (unsigned long long)c.local_mem_bytes);
    printf("  d=%-3d dv=%-3d %s: formula %llu B, compiled kernel %llu B\n", p.head_dim, dv, c.source,
           (unsigned long long)c.local_mem_bytes, (unsigned long long)ki.local_mem_bytes);
    flashcl_problem r;
    flashcl_plan_problem(plan, &r);
    ck_assert(fabsf(r.scale - 1.0f / sqrtf((float)p.head_dim)) < 1e-7f);
    ck_assert_int_eq(r.q_strides.head, p.head_dim);
    ck_assert_int_eq(r.k_strides.seq, (int64_t)p.heads_kv * p.head_dim);
    ck_assert_int_eq(r.v_strides.seq, (int64_t)p.heads_kv * dv);
    flashcl_plan_destroy(&plan);
    flashcl_context_destroy(&ctx);
}
END_TEST

/* A flash_wgmma plan's local memory: the public formula's, and the compiled kernel's within a KiB above it
 * (where the driver reports it); returns the compiled kernel's figure (0: not reported). */
static uint64_t wgmma_formula_holds(flashcl_plan *plan, const flashcl_problem *p, const flashcl_config *c)
{
    ck_assert_uint_eq(c->local_mem_bytes, flashcl_flash_local_mem_bytes(p->head_dim, c));
    flashcl_kernel_info ki;
    ck_assert_int_eq(flashcl_plan_kernel_info(plan, &ki), FLASHCL_SUCCESS);
    if (ki.local_mem_bytes)
        ck_assert_msg(ki.local_mem_bytes >= c->local_mem_bytes && ki.local_mem_bytes <= c->local_mem_bytes + 1024,
                      "d=%d %dx%d: compiler reports %llu B, formula %llu B", p->head_dim, c->block_m, c->block_n,
                      (unsigned long long)ki.local_mem_bytes, (unsigned long long)c->local_mem_bytes);
    return ki.local_mem_bytes;
}

/* An override of flash_wgmma's tiles, 128 rows over bn-key tiles in two stages: where `refused`, refused by name
 * (the error holding why1 and why2 where given), nothing built; else a plan whose tiles the compiled kernel holds,
 * by the formula, or where local memory is short of the emulation's or a limit is set, the refusal that says so.
 * Returns the override, set on the context. */
static flashcl_config wgmma_tiles_override(flashcl_context *ctx, const flashcl_problem *p, const flashcl_config *c,
                                           int32_t bn, int refused, const char *why1, const char *why2)
{
    flashcl_config o = *c;
    o.kernel = FLASHCL_KERNEL_WGMMA;
    o.block_m = 128;
    o.block_n = bn;
    o.kv_stages = 2;
    o.producer = -1;
    o.persistent = 0;
    ck_assert_int_eq(flashcl_context_override_config(ctx, &o), FLASHCL_SUCCESS);
    flashcl_plan *plan = NULL;
    const flashcl_status st = flashcl_plan_create(ctx, p, &plan);
    const char *err = flashcl_context_last_error(ctx);
    if (refused) {
        ck_assert_int_eq(st, FLASHCL_INVALID_ARGUMENT);
        ck_assert_ptr_null(plan);
        ck_assert_msg(strstr(err, why1) && (!why2 || strstr(err, why2)), "%s", err);
    } else if (st != FLASHCL_SUCCESS) {
        ck_assert_int_eq(st, FLASHCL_INVALID_ARGUMENT);
        ck_assert_msg(strstr(err, "the limit is") &&
                          (flashcl_context_profile(ctx)->local_mem_size < 65536 || getenv("FLASHCL_LOCAL_MEM_LIMIT")),
                      "%s", err);
        printf("  d=%d 128x%d: %s\n", p->head_dim, (int)bn, err);
    } else {
        flashcl_config w;
        ck_assert_int_eq(flashcl_plan_config(plan, &w), FLASHCL_SUCCESS);
        ck_assert_msg(w.kernel == FLASHCL_KERNEL_WGMMA && w.block_n == bn && w.block_m == 128, "%s %dx%d",
                      w.kernel_name, w.block_m, w.block_n);
        wgmma_formula_holds(plan, p, &w);
        flashcl_plan_destroy(&plan);
    }
    return o;
}

/* flash_wgmma's local-memory formula (src/tiles.c wgmma_bytes, the kernel's layout comment) against the
 * compiled kernel, emulated here (P's tile and the exchange area included): two warpgroups at d=64, one
 * at d=128, each with 16-bit and with fp8 operands (byte tiles, V's transposed, the staging tile); the
 * budget recorded covers what the tiles take. Where the device's local memory is short of
 * the emulation's tiles (rusticl), the fallback and its reason. */
START_TEST(test_wgmma_fits)
{
    flashcl_settings s;
    flashcl_settings_default(&s);
    s.path = FLASHCL_PATH_WGMMA;
    flashcl_context *ctx = NULL;
    ck_assert_int_eq(flashcl_context_create(tu_context, tu_device, tu_queue, &s, &ctx), FLASHCL_SUCCESS);
    flashcl_problem p = small_problem();
    p.dtype = FLASHCL_DTYPE_F16;
    p.head_dim = _i & 1 ? 128 : 64;
    p.qkv_format = _i & 2 ? FLASHCL_KV_FP8_E4M3 : 0;
    p.seq_q = p.seq_kv = 500;
    flashcl_plan *plan = NULL;
    ck_assert_int_eq(flashcl_plan_create(ctx, &p, &plan), FLASHCL_SUCCESS);
    flashcl_config c;
    ck_assert_int_eq(flashcl_plan_config(plan, &c), FLASHCL_SUCCESS);
    if (cfg_mma(&c) < 3) {
        ck_assert_msg(strstr(c.path_reason, "not wgmma (needs") && strstr(c.path_reason, "B of local memory"),
                      "d=%d: %s: %s", p.head_dim, c.kernel_name, c.path_reason);
        printf("  d=%d: %s\n", p.head_dim, c.path_reason);
    } else {
        ck_assert_str_eq(c.kernel_name, "flash_wgmma");
        ck_assert_uint_le(c.local_mem_bytes, c.local_mem_budget);
        const uint64_t compiled = wgmma_formula_holds(plan, &p, &c);
        printf("  d=%d%s %dx%d: formula %llu B, compiled kernel %llu B\n", p.head_dim, p.qkv_format ? " fp8" : "",
               c.block_m, c.block_n, (unsigned long long)c.local_mem_bytes, (unsigned long long)compiled);
    }
    flashcl_plan_destroy(&plan);
    /* an override of flash_wgmma's tiles that it does not have (96 rows; kernel 10): refused, nothing built */
    flashcl_config o = c;
    o.kernel = FLASHCL_KERNEL_WGMMA;
    o.block_m = 96;
    o.block_n = 64;
    ck_assert_int_eq(flashcl_context_override_config(ctx, &o), FLASHCL_SUCCESS);
    ck_assert_int_eq(flashcl_plan_create(ctx, &p, &plan), FLASHCL_INVALID_ARGUMENT);
    ck_assert_ptr_null(plan);
    ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(ctx), "flash_wgmma takes block_m 64 or 128"));
    if (p.head_dim != 64) { /* three warpgroups (192 rows) only at head dims 64 */
        o.block_m = 192;
        ck_assert_int_eq(flashcl_context_override_config(ctx, &o), FLASHCL_SUCCESS);
        ck_assert_int_eq(flashcl_plan_create(ctx, &p, &plan), FLASHCL_INVALID_ARGUMENT);
        ck_assert_ptr_null(plan);
        ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(ctx), "192 at head dims 64"));
    }
    o.kernel = (flashcl_kernel)10; /* (past the last kernel) */
    ck_assert_int_eq(flashcl_context_override_config(ctx, &o), FLASHCL_SUCCESS);
    ck_assert_int_eq(flashcl_plan_create(ctx, &p, &plan), FLASHCL_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(ctx), "kernel = 10"));
    /* the producer warpgroup where it cannot run (one K/V stage; emulated), a producer of neither value,
     * three stages past the kernel's: refused by name, nothing built */
    o = c;
    o.kernel = FLASHCL_KERNEL_WGMMA;
    o.block_m = 128;
    o.block_n = 64;
    o.kv_stages = 1;
    const int32_t bad_producer[] = {1, 2, 0}, bad_stages[] = {1, 1, 4};
    for (int i = 0; i < 3; ++i) {
        o.producer = bad_producer[i];
        o.kv_stages = bad_stages[i];
        ck_assert_int_eq(flashcl_context_override_config(ctx, &o), FLASHCL_SUCCESS);
        ck_assert_int_eq(flashcl_plan_create(ctx, &p, &plan), FLASHCL_INVALID_ARGUMENT);
        ck_assert_ptr_null(plan);
        ck_assert_msg(strstr(flashcl_context_last_error(ctx), "producer -1 (where it fits)") &&
                          strstr(flashcl_context_last_error(ctx), "producer warpgroup"),
                      "%s", flashcl_context_last_error(ctx));
    }
    /* 192-key tiles (docs/design/wgmma.md, wgmma-192): with 16-bit operands a plan whose tiles the compiled
     * kernel holds, by the formula (or, where local memory is short of the emulation's or a limit is set,
     * the refusal that says so); with fp8 operands, 192 rows, or key padding (a lane's keep bits of a tile
     * are one word): refused by name, before local memory is counted, nothing built */
    o = wgmma_tiles_override(ctx, &p, &c, 192, p.qkv_format != 0, "192 with block_m up to 128",
                             "16-bit operands");
    if (!p.qkv_format) {
        flashcl_problem kp = p;
        kp.key_padding = 1;
        ck_assert_int_eq(flashcl_plan_create(ctx, &kp, &plan), FLASHCL_INVALID_ARGUMENT);
        ck_assert_ptr_null(plan);
        ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(ctx), "no boolean mask or key padding"));
    }
    if (p.head_dim == 64 && !p.qkv_format) {
        o.block_m = 192;
        ck_assert_int_eq(flashcl_context_override_config(ctx, &o), FLASHCL_SUCCESS);
        ck_assert_int_eq(flashcl_plan_create(ctx, &p, &plan), FLASHCL_INVALID_ARGUMENT);
        ck_assert_ptr_null(plan);
        ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(ctx), "192 with block_m up to 128"));
    }
    /* 80-key tiles (docs/design/wgmma.md, wgmma-80): from head dim 80 with 16-bit operands as 192's; at d=64
     * (unswizzled tiles, whose copies take 32 rows a pass) and with fp8 operands refused by name, nothing built */
    wgmma_tiles_override(ctx, &p, &c, 80, p.qkv_format || p.head_dim < 80, "(80 from head dim 80 with 16-bit operands",
                         NULL);
    /* persistent work-groups: a negative count, and fp8 operands (whose descale factors are a block's own):
     * refused by name, nothing built */
    o = c;
    o.kernel = FLASHCL_KERNEL_WGMMA;
    o.block_m = 128;
    o.block_n = 64;
    o.kv_stages = 2;
    o.producer = -1;
    o.persistent = p.qkv_format ? 4 : -1;
    ck_assert_int_eq(flashcl_context_override_config(ctx, &o), FLASHCL_SUCCESS);
    ck_assert_int_eq(flashcl_plan_create(ctx, &p, &plan), FLASHCL_INVALID_ARGUMENT);
    ck_assert_ptr_null(plan);
    ck_assert_msg(strstr(flashcl_context_last_error(ctx), "persistent 0 (a work-group a row block)") &&
                      (!p.qkv_format || strstr(flashcl_context_last_error(ctx), "fp8 Q, K and V")),
                  "%s", flashcl_context_last_error(ctx));
    flashcl_context_destroy(&ctx);
}
END_TEST

/* Standard attention: its n x n scores are counted as extra memory; when they cannot exist, the plan
 * says so with the bytes needed, and nothing else happens. */
START_TEST(test_standard_memory)
{
    flashcl_context *ctx = tu_context_create();
    flashcl_problem p = small_problem();
    flashcl_plan *plan = NULL;
    ck_assert_int_eq(flashcl_plan_create_algo(ctx, &p, FLASHCL_ALGO_STANDARD, &plan), FLASHCL_SUCCESS);
    /* The score matrices, plus at most an alignment's padding per chunk they are cut into. */
    const uint64_t scores = (uint64_t)2 * 4 * 33 * 47 * sizeof(float);
    ck_assert_uint_ge(flashcl_plan_extra_device_bytes(plan), scores);
    ck_assert_uint_le(flashcl_plan_extra_device_bytes(plan), scores + 8 * 1024);
    flashcl_plan_destroy(&plan);
    p.dtype = FLASHCL_DTYPE_F16; /* plus fp32 copies of Q, K, V and O */
    ck_assert_int_eq(flashcl_plan_create_algo(ctx, &p, FLASHCL_ALGO_STANDARD, &plan), FLASHCL_SUCCESS);
    const uint64_t copies = (uint64_t)4 * (2 * (2 * 33 * 4 * 32) + 2 * (2 * 47 * 2 * 32));
    ck_assert_uint_ge(flashcl_plan_extra_device_bytes(plan), scores + copies);
    ck_assert_uint_le(flashcl_plan_extra_device_bytes(plan), scores + copies + 8 * 1024);
    flashcl_plan_destroy(&plan);

    p = small_problem();
    p.batch = 1;
    p.heads_q = p.heads_kv = 1;
    p.seq_q = p.seq_kv = 1 << 20; /* 4 TiB of scores */
    ck_assert_int_eq(flashcl_plan_create_algo(ctx, &p, FLASHCL_ALGO_STANDARD, &plan), FLASHCL_OUT_OF_DEVICE_MEMORY);
    ck_assert_ptr_null(plan);
    ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(ctx), "4398046511104 bytes"));
    /* The same problem planned as flash needs nothing extra. */
    ck_assert_int_eq(flashcl_plan_create(ctx, &p, &plan), FLASHCL_SUCCESS);
    ck_assert_uint_eq(flashcl_plan_extra_device_bytes(plan), 0);
    flashcl_plan_destroy(&plan);
    flashcl_context_destroy(&ctx);
}
END_TEST

/* A program whose required work-group size is not the one its plan launches (a defect of flashcl's: 568d126
 * made flash_wgmma's so on the GPU) fails the plan with BUILD_FAILED, the kernel and both sizes named, and no
 * plan; here made so by redefining the decode kernel's WG in the context's extra build options (to a size
 * its first plan did not take: on rusticl the chooser's 128 may have shrunk). */
START_TEST(test_plan_required_work_group)
{
    flashcl_problem p = small_problem();
    p.seq_q = 1;
    p.seq_kv = 300;
    flashcl_settings s = path_settings(FLASHCL_PATH_DECODE);
    flashcl_context *ctx = path_context(FLASHCL_PATH_DECODE);
    flashcl_plan *plan = NULL;
    ck_assert_int_eq(flashcl_plan_create(ctx, &p, &plan), FLASHCL_SUCCESS);
    flashcl_config c;
    flashcl_plan_config(plan, &c);
    flashcl_plan_destroy(&plan);
    flashcl_context_destroy(&ctx);
    ck_assert_str_eq(c.kernel_name, "flash_decode");
    const int other = c.work_group_size == 64 ? 32 : 64;
    char opts[512], want[96];
    const char *env = getenv("FLASHCL_BUILD_OPTIONS"); /* (which extra_build_options replaces: kept) */
    snprintf(opts, sizeof opts, "%s -DWG=%d", env ? env : "", other); /* (after the plan's: the last holds) */
    s.extra_build_options = opts;
    ck_assert_int_eq(flashcl_context_create(tu_context, tu_device, tu_queue, &s, &ctx), FLASHCL_SUCCESS);
    plan = (flashcl_plan *)&c; /* (poisoned: a failed create leaves NULL) */
    ck_assert_int_eq(flashcl_plan_create(ctx, &p, &plan), FLASHCL_BUILD_FAILED);
    ck_assert_ptr_null(plan);
    snprintf(want, sizeof want, "flash_decode's program requires work-groups of %d work-items", other);
    const char *msg = flashcl_context_last_error(ctx);
    ck_assert_msg(strstr(msg, want) && strstr(msg, "its plan launches"), "message: %s", msg);
    flashcl_context_destroy(&ctx);
}
END_TEST

/* An override that does not fit a problem is refused by name; kernel_info refuses NULL and standard. */
START_TEST(test_override_and_kernel_info)
{
    flashcl_context *ctx = tu_context_create();
    flashcl_problem p = small_problem(); /* head_dim 32 */
    flashcl_config c = {0};
    c.block_m = 16;
    c.block_n = 16;
    c.rows_per_item = 2;
    c.d_chunk = 32;
    c.v_chunk = 16;
    c.threads_per_row = 3; /* does not divide 32 */
    ck_assert_int_eq(flashcl_context_override_config(ctx, &c), FLASHCL_SUCCESS);
    flashcl_plan *plan = NULL;
    ck_assert_int_eq(flashcl_plan_create(ctx, &p, &plan), FLASHCL_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(ctx), "override"));
    ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(ctx), "threads_per_row 3"));
    ck_assert_ptr_null(plan);
    c.threads_per_row = 2;
    c.rows_per_item = 3; /* does not divide block_m 16 */
    flashcl_context_override_config(ctx, &c);
    ck_assert_int_eq(flashcl_plan_create(ctx, &p, &plan), FLASHCL_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(ctx), "rows_per_item 3"));
    c.rows_per_item = 2;
    c.d_chunk = 12; /* a multiple of 4 that does not divide 32 */
    flashcl_context_override_config(ctx, &c);
    ck_assert_int_eq(flashcl_plan_create(ctx, &p, &plan), FLASHCL_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(ctx), "d_chunk 12"));
    c.d_chunk = 16;
    c.v_chunk = 6; /* not a multiple of 4 */
    flashcl_context_override_config(ctx, &c);
    ck_assert_int_eq(flashcl_plan_create(ctx, &p, &plan), FLASHCL_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(ctx), "v_chunk 6"));
    c.v_chunk = 16;
    /* Tiles past what this device has: an override may take what a CPU reports (PoCL: 512 KiB to 2 MiB
     * by host), past the chooser's budget, so at d=256 block_n and then block_m grow (to 1024 at most,
     * the kernel's limit) until the tiles need more than that. */
    const flashcl_device_profile *pr = flashcl_context_profile(ctx);
    const uint64_t device_most = pr->local_mem_size > pr->local_mem_static ? pr->local_mem_size : pr->local_mem_static;
    p.head_dim = 256;
    c.block_m = 256;
    c.rows_per_item = 16; /* (64 work-items at block_m 1024) */
    for (c.block_n = 64; c.block_n < 1024 && flashcl_flash_local_mem_bytes(p.head_dim, &c) <= device_most; c.block_n *= 2)
        ;
    while (c.block_m < 1024 && flashcl_flash_local_mem_bytes(p.head_dim, &c) <= device_most)
        c.block_m *= 2;
    ck_assert_uint_gt(flashcl_flash_local_mem_bytes(p.head_dim, &c), device_most);
    flashcl_context_override_config(ctx, &c);
    ck_assert_int_eq(flashcl_plan_create(ctx, &p, &plan), FLASHCL_INVALID_ARGUMENT); /* local memory */
    ck_assert_msg(strstr(flashcl_context_last_error(ctx), "local memory"), "%s", flashcl_context_last_error(ctx));
    p.head_dim = 32;
    c.rows_per_item = 2;
    c.block_m = 8;
    c.block_n = 16;
    flashcl_context_override_config(ctx, &c);
    ck_assert_int_eq(flashcl_plan_create(ctx, &p, &plan), FLASHCL_SUCCESS);
    flashcl_config got;
    flashcl_plan_config(plan, &got);
    ck_assert_str_eq(got.source, "override");
    ck_assert_int_eq(got.block_m, 8);
    flashcl_kernel_info ki;
    ck_assert_int_eq(flashcl_plan_kernel_info(plan, &ki), FLASHCL_SUCCESS);
    ck_assert_uint_ge(ki.max_work_group_size, 16);
    ck_assert_int_eq(flashcl_plan_kernel_info(plan, NULL), FLASHCL_INVALID_ARGUMENT);
    ck_assert_int_eq(flashcl_plan_kernel_info(NULL, &ki), FLASHCL_INVALID_ARGUMENT);
    flashcl_plan_destroy(&plan);
    flashcl_context_override_config(ctx, NULL);
    ck_assert_int_eq(flashcl_context_override_config(NULL, NULL), FLASHCL_INVALID_ARGUMENT);
    if (flashcl_algorithm_available(FLASHCL_ALGO_STANDARD)) {
        ck_assert_int_eq(flashcl_plan_create_algo(ctx, &p, FLASHCL_ALGO_STANDARD, &plan), FLASHCL_SUCCESS);
        ck_assert_int_eq(flashcl_plan_kernel_info(plan, &ki), FLASHCL_UNSUPPORTED);
        flashcl_plan_destroy(&plan);
    }
    flashcl_context_destroy(&ctx);

    /* A config of the matrix-unit kernel given back as an override (its mma field set, as
     * flashcl_context_choose_config returned it; once the plan built flash_mma.cl and asked it for
     * "flash_fwd"): the matrix-unit kernel with its rows and keys; with mma 0 the portable kernel's
     * tiles, whatever else the struct holds. */
    ctx = path_context(FLASHCL_PATH_MMA);
    p.dtype = FLASHCL_DTYPE_F16;
    ck_assert_int_eq(flashcl_context_choose_config(ctx, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_int_ne(cfg_mma(&c), 0);
    c.block_m = 16; /* a struct that still says mma: the matrix-unit kernel with these rows and keys */
    c.m_tiles = 1;
    c.kv_stages = 1;
    c.block_n = 16;
    c.threads_per_row = 4;
    c.rows_per_item = 2;
    c.d_chunk = 32;
    c.v_chunk = 16;
    memset(c.path_reason, 'x', sizeof c.path_reason); /* unterminated */
    ck_assert_int_eq(flashcl_context_override_config(ctx, &c), FLASHCL_SUCCESS);
    ck_assert_msg(flashcl_plan_create(ctx, &p, &plan) == FLASHCL_SUCCESS, "%s", flashcl_context_last_error(ctx));
    flashcl_plan_config(plan, &got);
    ck_assert_str_eq(got.kernel_name, "flash_mma");
    ck_assert_int_eq(got.block_m, 16);
    ck_assert_int_eq(got.block_n, 16);
    ck_assert_ptr_nonnull(memchr(got.path_reason, 0, sizeof got.path_reason));
    ck_assert_ptr_nonnull(strstr(got.path_reason, "override"));
    flashcl_plan_destroy(&plan);
    c.kernel = FLASHCL_KERNEL_PORTABLE; /* the same tiles as the portable kernel's */
    ck_assert_int_eq(flashcl_context_override_config(ctx, &c), FLASHCL_SUCCESS);
    ck_assert_msg(flashcl_plan_create(ctx, &p, &plan) == FLASHCL_SUCCESS, "%s", flashcl_context_last_error(ctx));
    flashcl_plan_config(plan, &got);
    ck_assert_str_eq(got.kernel_name, "flash_fwd");
    ck_assert_int_eq(cfg_mma(&got), 0);
    ck_assert_ptr_nonnull(strstr(got.path_reason, "override"));
    flashcl_plan_destroy(&plan);
    c.kernel = FLASHCL_KERNEL_MMA; /* matrix-unit tiles it does not take: refused by name */
    c.block_m = 24;
    ck_assert_int_eq(flashcl_context_override_config(ctx, &c), FLASHCL_SUCCESS);
    ck_assert_int_eq(flashcl_plan_create(ctx, &p, &plan), FLASHCL_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(ctx), "block_m 16 to 128"));
    /* a small override where the chooser's own shape does not fit: d=256 in 48 KiB (its 64-row tiles
     * need more) takes 16 x 16 (26624 B with Q's block apart) */
    flashcl_context *small = NULL;
    flashcl_settings s48 = path_settings(FLASHCL_PATH_MMA);
    s48.local_mem_limit = 49152;
    ck_assert_int_eq(flashcl_context_create(tu_context, tu_device, tu_queue, &s48, &small), FLASHCL_SUCCESS);
    flashcl_problem big = p;
    big.head_dim = 256;
    c.block_m = 16;
    c.block_n = 16;
    c.rows_per_item = 2;
    ck_assert_int_eq(flashcl_context_override_config(small, &c), FLASHCL_SUCCESS);
    ck_assert_msg(flashcl_plan_create(small, &big, &plan) == FLASHCL_SUCCESS, "%s", flashcl_context_last_error(small));
    flashcl_plan_config(plan, &got);
    ck_assert_msg(cfg_mma(&got) != 0 || strstr(got.source, "shrunk"), "%s: %s", got.kernel_name, got.path_reason);
    flashcl_plan_destroy(&plan);
    flashcl_context_destroy(&small);
    p.dtype = FLASHCL_DTYPE_F32; /* a problem the matrix units do not take */
    c.block_m = 16;
    ck_assert_int_eq(flashcl_context_override_config(ctx, &c), FLASHCL_SUCCESS);
    ck_assert_int_eq(flashcl_plan_create(ctx, &p, &plan), FLASHCL_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(ctx), "matrix-unit kernel"));
    flashcl_context_destroy(&ctx);
}
END_TEST

/* A wait list holding a NULL event or another context's event is refused before anything is enqueued,
 * for the flash plan and the standard one alike (drivers differ: PoCL accepts both, then waits forever). */
START_TEST(test_bad_wait_list)
{
    flashcl_context *ctx = tu_context_create();
    flashcl_problem p = small_problem();
    const flashcl_algorithm algo = _i ? FLASHCL_ALGO_STANDARD : FLASHCL_ALGO_FLASH;
    flashcl_plan *plan = NULL;
    ck_assert_int_eq(flashcl_plan_create_algo(ctx, &p, algo, &plan), FLASHCL_SUCCESS);
    size_t sz[5];
    flashcl_plan_buffer_sizes(plan, &sz[0], &sz[1], &sz[2], &sz[3], &sz[4]);
    cl_mem q, k, v, o = tu_buffer(sz[3], NULL);
    upload_inputs(sz, 13, &q, &k, &v);
    cl_int err;
    cl_context other = clCreateContext(NULL, 1, &tu_device, NULL, NULL, &err);
    cl_event list[2] = {NULL, clCreateUserEvent(other, &err)};
    ck_assert_ptr_nonnull(list[1]);
    flashcl_status st = flashcl_plan_enqueue(plan, q, k, v, o, NULL, 1, &list[0], NULL);
    ck_assert_int_eq(st, FLASHCL_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(ctx), "event_wait_list[0] is NULL"));
    st = flashcl_plan_enqueue(plan, q, k, v, o, NULL, 1, &list[1], NULL);
    ck_assert_int_eq(st, FLASHCL_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(ctx), "another OpenCL context"));
    clSetUserEventStatus(list[1], CL_COMPLETE);
    clReleaseEvent(list[1]);
    clReleaseContext(other);
    ck_assert_int_eq(clFinish(tu_queue), CL_SUCCESS);
    ck_assert(still_poisoned(o, sz[3]));
    cl_mem all[4] = {q, k, v, o};
    for (int i = 0; i < 4; ++i)
        clReleaseMemObject(all[i]);
    flashcl_plan_destroy(&plan);
    flashcl_context_destroy(&ctx);
}
END_TEST

/* Past 2^31 elements: a plan of B*H*N*d = 2^32 elements is made (nothing is allocated) and its buffer
 * sizes are exact 64-bit products. */
START_TEST(test_sizes_past_2_31)
{
    flashcl_context *ctx = tu_context_create();
    flashcl_problem p;
    flashcl_problem_default(&p);
    p.heads_q = 32;
    p.heads_kv = 8;
    p.seq_q = 1 << 21;
    p.seq_kv = 1 << 21;
    p.head_dim = 64;
    p.dtype = FLASHCL_DTYPE_F16;
    p.return_lse = 1;
    flashcl_plan *plan = NULL;
    ck_assert_int_eq(flashcl_plan_create(ctx, &p, &plan), FLASHCL_SUCCESS);
    size_t sz[5];
    flashcl_plan_buffer_sizes(plan, &sz[0], &sz[1], &sz[2], &sz[3], &sz[4]);
    ck_assert_uint_eq(sz[0], (size_t)1 << 33); /* 2^21 x 32 x 64 halves */
    ck_assert_uint_eq(sz[1], (size_t)1 << 31);
    ck_assert_uint_eq(sz[3], (size_t)1 << 33);
    ck_assert_uint_eq(sz[4], (size_t)1 << 28); /* 32 x 2^21 floats */
    flashcl_plan_destroy(&plan);
    flashcl_context_destroy(&ctx);
}
END_TEST

/* In a build without CLBlast, standard attention is refused by name (CI builds one: .ci/run). */
START_TEST(test_standard_unavailable)
{
    flashcl_context *ctx = tu_context_create();
    flashcl_problem p = small_problem();
    flashcl_plan *plan = NULL;
    ck_assert_int_eq(flashcl_plan_create_algo(ctx, &p, FLASHCL_ALGO_STANDARD, &plan), FLASHCL_UNSUPPORTED);
    ck_assert_ptr_null(plan);
    ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(ctx), "CLBlast"));
    flashcl_context_destroy(&ctx);
}
END_TEST

/* flashcl_plan_enqueue_tensors: a problem with ALiBi, a mask and key padding; each optional buffer
 * missing, unasked for, too small or aliasing the output is refused by name, nothing launched. */
START_TEST(test_enqueue_tensors_bad_input)
{
    flashcl_context *ctx = tu_context_create();
    flashcl_problem p = small_problem();
    p.alibi = 2;
    p.attn_mask = 1;
    p.key_padding = 1;
    flashcl_plan *plan = NULL;
    ck_assert_int_eq(flashcl_plan_create(ctx, &p, &plan), FLASHCL_SUCCESS);
    size_t sz[5];
    flashcl_plan_buffer_sizes(plan, &sz[0], &sz[1], &sz[2], &sz[3], &sz[4]);
    cl_mem q, k, v;
    upload_inputs(sz, 5, &q, &k, &v);
    const size_t n_slopes = (size_t)p.batch * p.heads_q, n_mask = (size_t)p.batch * p.heads_q * p.seq_q * p.seq_kv;
    float *host = calloc(n_mask, sizeof(float)); /* zero mask, zero slopes: plain attention */
    unsigned char *pad = calloc((size_t)p.batch * p.seq_kv, 1);
    cl_mem o = tu_buffer(sz[3], NULL), slopes = tu_buffer(n_slopes * 4, host), mask = tu_buffer(n_mask * 4, host);
    cl_mem kpm = tu_buffer((size_t)p.batch * p.seq_kv, pad), short_mask = tu_buffer(n_mask * 4 - 4, host);
    flashcl_tensors t = {.q = q, .k = k, .v = v, .o = o, .alibi_slopes = slopes, .mask = mask, .key_padding = kpm};
    flashcl_status st = FLASHCL_SUCCESS, expect = FLASHCL_INVALID_ARGUMENT;
    const char *word = NULL;
    switch (_i) {
    case 0: t.alibi_slopes = NULL; word = "problem.alibi is set but alibi_slopes is NULL"; break;
    case 1: t.mask = short_mask; expect = FLASHCL_BUFFER_TOO_SMALL; word = "mask holds"; break;
    case 2: t.key_padding = o; word = "aliases"; break;
    case 3: t.lse = slopes; word = "return_lse is 0"; break;
    case 4: st = flashcl_plan_enqueue_tensors(plan, NULL, 0, NULL, NULL); word = "tensors is NULL"; break;
    case 5: st = flashcl_plan_enqueue(plan, q, k, v, o, NULL, 0, NULL, NULL); word = "flashcl_plan_enqueue_tensors"; break;
    }
    if (_i < 4)
        st = flashcl_plan_enqueue_tensors(plan, &t, 0, NULL, NULL);
    expect_refused(ctx, _i, st, expect, word, o, sz[3]);

    /* A problem without them refuses them. */
    flashcl_problem plain = small_problem();
    flashcl_plan *plain_plan = NULL;
    ck_assert_int_eq(flashcl_plan_create(ctx, &plain, &plain_plan), FLASHCL_SUCCESS);
    flashcl_tensors extra = {.q = q, .k = k, .v = v, .o = o, .alibi_slopes = slopes};
    ck_assert_int_eq(flashcl_plan_enqueue_tensors(plain_plan, &extra, 0, NULL, NULL), FLASHCL_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(ctx), "alibi_slopes given but problem.alibi is 0"));

    /* The good call runs. */
    t = (flashcl_tensors){.q = q, .k = k, .v = v, .o = o, .alibi_slopes = slopes, .mask = mask, .key_padding = kpm};
    ck_assert_int_eq(flashcl_plan_enqueue_tensors(plan, &t, 0, NULL, NULL), FLASHCL_SUCCESS);
    ck_assert_int_eq(clFinish(tu_queue), CL_SUCCESS);
    ck_assert(!still_poisoned(o, sz[3]));

    cl_mem all[9] = {q, k, v, o, slopes, mask, kpm, short_mask, NULL};
    for (int i = 0; all[i]; ++i)
        clReleaseMemObject(all[i]);
    free(host);
    free(pad);
    flashcl_plan_destroy(&plain_plan);
    flashcl_plan_destroy(&plan);
    flashcl_context_destroy(&ctx);
}
END_TEST

/* The caller's workspace (split-KV's scratch): its size from the plan, the same output with it as with
 * the plan's own memory (which the plan then allocates, and only then), refusals by name with nothing
 * launched (too small, an unaligned offset, aliasing an input or the output), ignored by a plan that
 * needs none. */
/* Split-KV's partial results past 2^64 bytes (2^52 rows of 1024 splits at head_dim_v 256; Q, K and V rows broadcast
 * so that their own sizes stay small): refused at plan creation by name, where the size wrapped to 0 before and
 * the enqueue would then have taken Q for the scratch */
START_TEST(test_workspace_overflow)
{
    flashcl_context *ctx = tu_context_create();
    flashcl_problem p;
    flashcl_problem_default(&p);
    p.batch = 1 << 23;
    p.heads_q = p.heads_kv = 1;
    p.seq_q = 1 << 29;
    p.seq_kv = 64;
    p.head_dim = 256;
    p.kv_splits = 1024;
    p.q_strides = p.k_strides = p.v_strides = (flashcl_strides){0, 0, 1};
    flashcl_plan *plan = (flashcl_plan *)0x1;
    const flashcl_status st = flashcl_plan_create(ctx, &p, &plan);
    ck_assert_msg(st == FLASHCL_INVALID_ARGUMENT && strstr(flashcl_context_last_error(ctx), "split-KV workspace"),
                  "%s: %s", flashcl_status_name(st), flashcl_context_last_error(ctx));
    ck_assert_ptr_null(plan);
    flashcl_context_destroy(&ctx);
}
END_TEST

START_TEST(test_enqueue_workspace)
{
    flashcl_context *ctx = tu_context_create();
    flashcl_problem p = small_problem();
    p.kv_splits = 3;
    flashcl_plan *plan = NULL;
    ck_assert_int_eq(flashcl_plan_create(ctx, &p, &plan), FLASHCL_SUCCESS);
    const uint64_t ws = flashcl_plan_workspace_bytes(plan);
    /* (splits, rows, head_dim + 1) fp32: rows = batch * heads_q * seq_q */
    ck_assert_uint_eq(ws, 3ull * p.batch * p.heads_q * p.seq_q * (p.head_dim + 1) * 4);
    ck_assert_uint_eq(flashcl_plan_extra_device_bytes(plan), 0);
    size_t sz[5];
    flashcl_plan_buffer_sizes(plan, &sz[0], &sz[1], &sz[2], &sz[3], &sz[4]);
    cl_mem q, k, v;
    upload_inputs(sz, 11, &q, &k, &v);
    cl_mem o1 = tu_buffer(sz[3], NULL), o2 = tu_buffer(sz[3], NULL), pool = tu_buffer((size_t)ws + 64, NULL);
    cl_mem small = tu_buffer((size_t)ws - 4, NULL);
    flashcl_tensors t = {.q = q, .k = k, .v = v, .o = o1, .workspace = pool};
    t.offsets.workspace = 64;
    ck_assert_int_eq(flashcl_plan_enqueue_tensors(plan, &t, 0, NULL, NULL), FLASHCL_SUCCESS);
    ck_assert_int_eq(clFinish(tu_queue), CL_SUCCESS);
    ck_assert_uint_eq(flashcl_plan_extra_device_bytes(plan), 0); /* nothing of its own */
    unsigned char *head = tu_read(pool, 64);
    for (int i = 0; i < 64; ++i)
        ck_assert_int_eq(head[i], 0xff); /* before the offset: untouched */
    free(head);
    flashcl_tensors own = {.q = q, .k = k, .v = v, .o = o2};
    ck_assert_int_eq(flashcl_plan_enqueue_tensors(plan, &own, 0, NULL, NULL), FLASHCL_SUCCESS);
    ck_assert_int_eq(clFinish(tu_queue), CL_SUCCESS);
    ck_assert_uint_eq(flashcl_plan_extra_device_bytes(plan), ws);
    unsigned char *r1 = tu_read(o1, sz[3]), *r2 = tu_read(o2, sz[3]);
    ck_assert(!still_poisoned(o1, sz[3]));
    ck_assert_int_eq(memcmp(r1, r2, sz[3]), 0);
    free(r1);
    free(r2);

    static const char *const words[4] = {"workspace holds", "tensors.offsets.workspace = 2",
                                         "workspace aliases an input buffer (q)", "workspace aliases an output (o)"};
    for (int i = 0; i < 4; ++i) { /* (one big buffer holding the workspace at 64 and Q or O at 0) */
        const size_t big_bytes = (size_t)ws + 64 > sz[0] + sz[3] ? (size_t)ws + 64 : sz[0] + sz[3];
        cl_mem o3 = tu_buffer(sz[3], NULL), big = tu_buffer(big_bytes, NULL);
        flashcl_tensors b = {.q = i == 2 ? big : q, .k = k, .v = v, .o = i == 3 ? big : o3,
                             .workspace = i == 0 ? small : i == 1 ? pool : big};
        b.offsets.workspace = i == 1 ? 2 : i >= 2 ? 64 : 0;
        const flashcl_status st = flashcl_plan_enqueue_tensors(plan, &b, 0, NULL, NULL);
        ck_assert_msg(st == (i == 0 ? FLASHCL_BUFFER_TOO_SMALL : FLASHCL_INVALID_ARGUMENT), "case %d: %s", i,
                      flashcl_context_last_error(ctx));
        ck_assert_msg(strstr(flashcl_context_last_error(ctx), words[i]) != NULL, "case %d: '%s' lacks '%s'", i,
                      flashcl_context_last_error(ctx), words[i]);
        ck_assert_int_eq(clFinish(tu_queue), CL_SUCCESS);
        ck_assert_msg(still_poisoned(o3, sz[3]) && still_poisoned(big, big_bytes), "case %d: something was launched", i);
        clReleaseMemObject(o3);
        clReleaseMemObject(big);
    }

    /* a plan without splits needs none, and ignores one */
    flashcl_problem plain = small_problem();
    plain.kv_splits = 1;
    flashcl_plan *plain_plan = NULL;
    ck_assert_int_eq(flashcl_plan_create(ctx, &plain, &plain_plan), FLASHCL_SUCCESS);
    ck_assert_uint_eq(flashcl_plan_workspace_bytes(plain_plan), 0);
    flashcl_tensors ignored = {.q = q, .k = k, .v = v, .o = o1, .workspace = small};
    ck_assert_int_eq(flashcl_plan_enqueue_tensors(plain_plan, &ignored, 0, NULL, NULL), FLASHCL_SUCCESS);
    ck_assert_int_eq(clFinish(tu_queue), CL_SUCCESS);
    ck_assert_uint_eq(flashcl_plan_workspace_bytes(NULL), 0);

    cl_mem all[8] = {q, k, v, o1, o2, pool, small, NULL};
    for (int i = 0; all[i]; ++i)
        clReleaseMemObject(all[i]);
    flashcl_plan_destroy(&plain_plan);
    flashcl_plan_destroy(&plan);
    flashcl_context_destroy(&ctx);
}
END_TEST

/* One split-KV plan with no caller workspace, enqueued twice with nothing ordering the two: on two
 * in-order queues, then on one out-of-order queue (where the device has one). Both enqueues use the
 * plan's own partial results, so the second must wait for the first (the plan chains them); each
 * output against float64. The problem is issue 30's: fp32, B=4, Hq=8, Hkv=2, one query over a full
 * 4096-key cache, 16 splits. And standard attention, whose GEMMs take no wait list, refuses an
 * out-of-order queue by name. */
START_TEST(test_shared_scratch_ordered)
{
    flashcl_context *ctx = tu_context_create();
    flashcl_problem p;
    flashcl_problem_default(&p);
    p.batch = 4, p.heads_q = 8, p.heads_kv = 2, p.seq_q = 1, p.seq_kv = 4096, p.head_dim = 64;
    p.kv_cache = 1, p.kv_splits = 16;
    flashcl_plan *plan = NULL;
    ck_assert_int_eq(flashcl_plan_create(ctx, &p, &plan), FLASHCL_SUCCESS);
    flashcl_config cfg;
    flashcl_plan_config(plan, &cfg);
    ck_assert_int_eq(cfg.kv_splits, 16);
    flashcl_plan_problem(plan, &p);
    size_t sz[5];
    flashcl_plan_buffer_sizes(plan, &sz[0], &sz[1], &sz[2], &sz[3], &sz[4]);
    hm_rng rng;
    hm_rng_seed(&rng, 30);
    float *host[4]; /* Q of A, Q of B, K, V */
    cl_mem m[4];
    for (int i = 0; i < 4; ++i) {
        const size_t bytes = sz[i < 2 ? 0 : i - 1];
        host[i] = malloc(bytes);
        ck_assert_ptr_nonnull(host[i]);
        hm_fill_normal(host[i], FLASHCL_DTYPE_F32, bytes / 4, &rng, 1.0);
        m[i] = tu_buffer(bytes, host[i]);
    }
    int32_t lens[4] = {4096, 4096, 4096, 4096};
    cl_mem lens_m = tu_buffer(sizeof lens, lens);
    const hm_extras x = {.cache_seqlens = lens};
    const int64_t rows = (int64_t)p.batch * p.heads_q;
    double *ref = malloc(2 * (size_t)rows * 64 * sizeof(double)), *scores = malloc(4096 * sizeof(double));
    ck_assert(ref && scores);
    for (int s = 0; s < 2; ++s)
        for (int64_t r = 0; r < rows; ++r)
            hm_reference_row_ex(&p, host[s], host[2], host[3], &x, r, ref + ((size_t)s * rows + r) * 64, scores);

    cl_command_queue_properties dev_props = 0;
    clGetDeviceInfo(tu_device, CL_DEVICE_QUEUE_PROPERTIES, sizeof dev_props, &dev_props, NULL);
    const int kinds = dev_props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE ? 2 : 1;
    if (kinds == 1)
        printf("  (%s has no out-of-order queues: the two in-order queues only)\n", tu_device_label);
    for (int kind = 0; kind < kinds; ++kind) {
        cl_int err;
        cl_command_queue qa = clCreateCommandQueue(tu_context, tu_device,
                                                   kind ? CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE : 0, &err);
        ck_assert_msg(qa, "clCreateCommandQueue: %d", (int)err);
        cl_command_queue qb = kind ? qa : clCreateCommandQueue(tu_context, tu_device, 0, &err);
        ck_assert_msg(qb, "clCreateCommandQueue: %d", (int)err);
        cl_mem o[2];
        for (int s = 0; s < 2; ++s) {
            o[s] = tu_buffer(sz[3], NULL);
            const flashcl_tensors t = {.q = m[s], .k = m[2], .v = m[3], .o = o[s], .cache_seqlens = lens_m};
            ck_assert_msg(flashcl_plan_enqueue_on(plan, s ? qb : qa, &t, 0, NULL, NULL) == FLASHCL_SUCCESS, "%s",
                          flashcl_context_last_error(ctx));
        }
        ck_assert_int_eq(clFinish(qb), CL_SUCCESS); /* (B's queue first: B waits on A's, which the plan flushed) */
        ck_assert_int_eq(clFinish(qa), CL_SUCCESS);
        for (int s = 0; s < 2; ++s) {
            float *got = tu_read(o[s], sz[3]);
            double worst = 0.0;
            for (int64_t i = 0; i < rows * 64; ++i) {
                const double e = fabs(got[i] - ref[(size_t)s * rows * 64 + i]);
                worst = isnan(e) || e > worst ? (isnan(e) ? INFINITY : e) : worst;
            }
            ck_assert_msg(worst < 1e-5, "%s queue%s, enqueue %c: max |err| %g against float64",
                          kind ? "one out-of-order" : "two in-order", kind ? "" : "s", "AB"[s], worst);
            free(got);
            clReleaseMemObject(o[s]);
        }
        if (kind && flashcl_algorithm_available(FLASHCL_ALGO_STANDARD)) {
            flashcl_problem sp = small_problem();
            flashcl_plan *standard = NULL;
            ck_assert_int_eq(flashcl_plan_create_algo(ctx, &sp, FLASHCL_ALGO_STANDARD, &standard), FLASHCL_SUCCESS);
            size_t ssz[5];
            flashcl_plan_buffer_sizes(standard, &ssz[0], &ssz[1], &ssz[2], &ssz[3], &ssz[4]);
            cl_mem sq, sk, sv, so = tu_buffer(ssz[3], NULL);
            upload_inputs(ssz, 7, &sq, &sk, &sv);
            const flashcl_tensors t = {.q = sq, .k = sk, .v = sv, .o = so};
            ck_assert_int_eq(flashcl_plan_enqueue_on(standard, qa, &t, 0, NULL, NULL), FLASHCL_UNSUPPORTED);
            ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(ctx), "flashcl_plan_enqueue_on: standard attention needs an in-order queue"));
            ck_assert(still_poisoned(so, ssz[3]));
            cl_mem all[4] = {sq, sk, sv, so};
            for (int i = 0; i < 4; ++i)
                clReleaseMemObject(all[i]);
            flashcl_plan_destroy(&standard);
        }
        if (qb != qa)
            clReleaseCommandQueue(qb);
        clReleaseCommandQueue(qa);
    }
    for (int i = 0; i < 4; ++i) {
        free(host[i]);
        clReleaseMemObject(m[i]);
    }
    clReleaseMemObject(lens_m);
    free(ref);
    free(scores);
    flashcl_plan_destroy(&plan);
    flashcl_context_destroy(&ctx);
}
END_TEST

/* flashcl_problem_default leaves heads_kv and seq_kv 0, the query side's: a problem that sets only heads_q
 * and seq_q is multi-head self-attention, not MQA over one key. flashcl_plan_tensor_bytes gives every
 * buffer's size (0 for those the problem has not). Each enqueue call's messages carry its own name. */
START_TEST(test_defaults_and_tensor_bytes)
{
    flashcl_context *ctx = tu_context_create();
    flashcl_problem p;
    flashcl_problem_default(&p);
    ck_assert_int_eq(p.heads_kv, 0);
    ck_assert_int_eq(p.seq_kv, 0);
    p.heads_q = 4;
    p.seq_q = 33;
    p.head_dim = 32;
    p.kv_cache = 1;
    p.kv_splits = 2;
    p.alibi = 1;
    flashcl_plan *plan = NULL;
    ck_assert_msg(flashcl_plan_create(ctx, &p, &plan) == FLASHCL_SUCCESS, "%s", flashcl_context_last_error(ctx));
    flashcl_problem got;
    flashcl_plan_problem(plan, &got);
    ck_assert_int_eq(got.heads_kv, 4);
    ck_assert_int_eq(got.seq_kv, 33);
    struct flashcl_offsets b;
    ck_assert_int_eq(flashcl_plan_tensor_bytes(plan, &b), FLASHCL_SUCCESS);
    size_t sz[5];
    flashcl_plan_buffer_sizes(plan, &sz[0], &sz[1], &sz[2], &sz[3], &sz[4]);
    ck_assert(b.q == sz[0] && b.k == sz[1] && b.v == sz[2] && b.o == sz[3] && b.lse == sz[4]);
    ck_assert_uint_eq(b.q, 33u * 4 * 32 * 4);
    ck_assert_uint_eq(b.k, 33u * 4 * 32 * 4); /* (the cache: seq_kv rows of heads_kv = heads_q heads) */
    ck_assert_uint_eq(b.alibi_slopes, 4 * sizeof(float));
    ck_assert_uint_eq(b.cache_seqlens, sizeof(int32_t));
    ck_assert_uint_eq(b.workspace, flashcl_plan_workspace_bytes(plan));
    ck_assert_uint_gt(b.workspace, 0);
    ck_assert(!b.mask && !b.key_padding && !b.cu_seqlens_q && !b.cu_seqlens_k && !b.block_table && !b.k_new &&
              !b.v_new && !b.k_scale && !b.v_scale && !b.sinks && !b.cache_batch_idx && !b.cache_leftpad);
    ck_assert_int_eq(flashcl_plan_tensor_bytes(plan, NULL), FLASHCL_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(ctx), "flashcl_plan_tensor_bytes: bytes is NULL"));
    ck_assert_int_eq(flashcl_plan_tensor_bytes(NULL, &b), FLASHCL_INVALID_ARGUMENT);

    const flashcl_tensors none = {0};
    ck_assert_int_eq(flashcl_plan_enqueue_tensors(plan, &none, 0, NULL, NULL), FLASHCL_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(ctx), "flashcl_plan_enqueue_tensors: q is NULL"));
    ck_assert_int_eq(flashcl_plan_enqueue_on(plan, NULL, &none, 0, NULL, NULL), FLASHCL_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(ctx), "flashcl_plan_enqueue_on: q is NULL"));
    ck_assert_int_eq(flashcl_plan_enqueue(plan, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL), FLASHCL_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(ctx), "flashcl_plan_enqueue: q is NULL"));
    flashcl_plan_destroy(&plan);
    flashcl_context_destroy(&ctx);
}
END_TEST

/* One plan enqueued over two sets of inputs at different offsets in one pool and back (split-KV, so the
 * combine's and the workspace's offsets change too): each output equals what a fresh plan computes from
 * the same inputs, bit for bit (an argument left from the previous enqueue would read the other set). */
/* small_problem in two key splits (the combine's and the workspace's arguments too): its plan, its
 * buffers' sizes and its workspace's */
static flashcl_plan *split_plan(flashcl_context *ctx, flashcl_problem *p, size_t sz[5], size_t *ws)
{
    *p = small_problem();
    p->kv_splits = 2;
    flashcl_plan *plan = NULL;
    ck_assert_int_eq(flashcl_plan_create(ctx, p, &plan), FLASHCL_SUCCESS);
    flashcl_plan_buffer_sizes(plan, &sz[0], &sz[1], &sz[2], &sz[3], &sz[4]);
    *ws = (size_t)flashcl_plan_workspace_bytes(plan);
    return plan;
}

START_TEST(test_enqueue_rebinds)
{
    flashcl_context *ctx = tu_context_create();
    flashcl_problem p;
    size_t sz[5], ws;
    flashcl_plan *plan = split_plan(ctx, &p, sz, &ws);
    const size_t in = sz[0] + sz[1] + sz[2];
    /* the pool: set A's Q, K, V, then set B's at 256 bytes past them; two workspaces */
    const size_t b_at = in + 256, pool_bytes = b_at + in + 2 * ws + 64;
    float *host = malloc(pool_bytes);
    hm_rng rng;
    hm_rng_seed(&rng, 99);
    hm_fill_normal(host, FLASHCL_DTYPE_F32, pool_bytes / 4, &rng, 1.0);
    cl_mem pool = tu_buffer(pool_bytes, host);
    free(host);
    flashcl_tensors set[2];
    for (int s = 0; s < 2; ++s) {
        const size_t at = s ? b_at : 0;
        set[s] = (flashcl_tensors){.q = pool, .k = pool, .v = pool, .workspace = pool};
        set[s].offsets.q = at;
        set[s].offsets.k = at + sz[0];
        set[s].offsets.v = at + sz[0] + sz[1];
        set[s].offsets.workspace = b_at + in + (size_t)s * ws;
    }
    cl_mem out[3], ref[2];
    for (int i = 0; i < 3; ++i) { /* A, B, A again, through the one plan */
        out[i] = tu_buffer(sz[3], NULL);
        flashcl_tensors t = set[i == 1];
        t.o = out[i];
        ck_assert_int_eq(flashcl_plan_enqueue_tensors(plan, &t, 0, NULL, NULL), FLASHCL_SUCCESS);
    }
    for (int s = 0; s < 2; ++s) { /* each set through a plan of its own */
        flashcl_plan *fresh = NULL;
        ck_assert_int_eq(flashcl_plan_create(ctx, &p, &fresh), FLASHCL_SUCCESS);
        ref[s] = tu_buffer(sz[3], NULL);
        flashcl_tensors t = set[s];
        t.o = ref[s];
        ck_assert_int_eq(flashcl_plan_enqueue_tensors(fresh, &t, 0, NULL, NULL), FLASHCL_SUCCESS);
        ck_assert_int_eq(clFinish(tu_queue), CL_SUCCESS);
        flashcl_plan_destroy(&fresh);
    }
    ck_assert_int_eq(clFinish(tu_queue), CL_SUCCESS);
    unsigned char *r[2] = {tu_read(ref[0], sz[3]), tu_read(ref[1], sz[3])};
    ck_assert_int_ne(memcmp(r[0], r[1], sz[3]), 0); /* (the two sets differ) */
    for (int i = 0; i < 3; ++i) {
        unsigned char *o = tu_read(out[i], sz[3]);
        ck_assert_msg(memcmp(o, r[i == 1], sz[3]) == 0, "enqueue %d: not set %c's output", i, i == 1 ? 'B' : 'A');
        free(o);
        clReleaseMemObject(out[i]);
    }
    for (int s = 0; s < 2; ++s) {
        free(r[s]);
        clReleaseMemObject(ref[s]);
    }
    clReleaseMemObject(pool);
    flashcl_plan_destroy(&plan);
    flashcl_context_destroy(&ctx);
}
END_TEST

/* The same tensors again (decode-mma-13: neither checked nor set again): a step after the first writes the
 * same output, bit for bit, over a poisoned buffer (split-KV: the combine's arguments and the workspace held
 * too); the plan holds a reference to each buffer of its last enqueue until an enqueue with others,
 * flashcl_plan_release_tensors or its destruction releases it (the count back to the test's own); a refused
 * enqueue in between changes nothing; a workspace a plan ignores is not held. */
static cl_uint ref_count(cl_mem m)
{
    ck_assert_int_eq(clFinish(tu_queue), CL_SUCCESS);
    cl_uint n = 0;
    ck_assert_int_eq(clGetMemObjectInfo(m, CL_MEM_REFERENCE_COUNT, sizeof n, &n, NULL), CL_SUCCESS);
    return n;
}

/* The count once it has come down to `want` (a driver may drop its commands' references a little after
 * they finish: rusticl), or what it is after a second */
static cl_uint ref_count_settled(cl_mem m, cl_uint want)
{
    cl_uint n = ref_count(m);
    for (int i = 0; i < 100 && n > want; ++i) {
        nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
        n = ref_count(m);
    }
    return n;
}

START_TEST(test_enqueue_same_tensors)
{
    flashcl_context *ctx = tu_context_create();
    flashcl_problem p;
    size_t sz[5], ws;
    flashcl_plan *plan = split_plan(ctx, &p, sz, &ws);
    hm_rng rng;
    hm_rng_seed(&rng, 7);
    cl_mem in[2][3], out[2], wsb[2];
    for (int s = 0; s < 2; ++s) {
        for (int i = 0; i < 3; ++i) {
            float *h = malloc(sz[i]);
            hm_fill_normal(h, FLASHCL_DTYPE_F32, sz[i] / 4, &rng, 1.0);
            in[s][i] = tu_buffer(sz[i], h);
            free(h);
        }
        out[s] = tu_buffer(sz[3], NULL);
        wsb[s] = tu_buffer(ws, NULL);
    }
    const flashcl_tensors t[2] = {{.q = in[0][0], .k = in[0][1], .v = in[0][2], .o = out[0], .workspace = wsb[0]},
                                  {.q = in[1][0], .k = in[1][1], .v = in[1][2], .o = out[1], .workspace = wsb[1]}};
    const cl_uint held = ref_count(in[0][0]); /* (the test's own, and whatever the driver keeps) */
    float *poison = malloc(sz[3]);
    for (size_t i = 0; i < sz[3] / 4; ++i)
        poison[i] = NAN;
    unsigned char *first = NULL;
    for (int step = 0; step < 3; ++step) { /* set 0 three times: checked and set once, then as bound */
        ck_assert_int_eq(clEnqueueWriteBuffer(tu_queue, out[0], CL_TRUE, 0, sz[3], poison, 0, NULL, NULL), CL_SUCCESS);
        ck_assert_int_eq(flashcl_plan_enqueue_tensors(plan, &t[0], 0, NULL, NULL), FLASHCL_SUCCESS);
        ck_assert_int_eq(clFinish(tu_queue), CL_SUCCESS);
        unsigned char *o = tu_read(out[0], sz[3]);
        if (!first) {
            first = o;
            const float *f = (const float *)(const void *)first;
            for (size_t i = 0; i < sz[3] / 4; ++i)
                ck_assert_msg(isfinite(f[i]), "step 0: O[%zu] = %g", i, f[i]);
        } else {
            ck_assert_msg(memcmp(o, first, sz[3]) == 0, "step %d: not step 0's output", step);
            free(o);
        }
        /* the plan's hold on Q's buffer and the workspace (a driver's kernel may hold its arguments too: rusticl) */
        ck_assert_uint_ge(ref_count(in[0][0]), held + 1);
        ck_assert_uint_ge(ref_count(wsb[0]), held + 1);
        if (step == 1) { /* a refused enqueue between two steps: nothing launched, the bound tensors kept */
            flashcl_tensors bad = t[0];
            bad.o = NULL;
            ck_assert_int_eq(flashcl_plan_enqueue_tensors(plan, &bad, 0, NULL, NULL), FLASHCL_INVALID_ARGUMENT);
        }
    }
    /* the other set: set and held; the first set's buffers released */
    ck_assert_int_eq(flashcl_plan_enqueue_tensors(plan, &t[1], 0, NULL, NULL), FLASHCL_SUCCESS);
    ck_assert_uint_eq(ref_count_settled(in[0][0], held), held);
    ck_assert_uint_eq(ref_count_settled(out[0], held), held);
    ck_assert_uint_ge(ref_count(in[1][2]), held + 1);
    unsigned char *o1 = tu_read(out[1], sz[3]);
    ck_assert_int_ne(memcmp(o1, first, sz[3]), 0); /* (another set's inputs: another output) */
    free(o1);
    /* and the first set again, over a poisoned output: step 0's */
    ck_assert_int_eq(clEnqueueWriteBuffer(tu_queue, out[0], CL_TRUE, 0, sz[3], poison, 0, NULL, NULL), CL_SUCCESS);
    ck_assert_int_eq(flashcl_plan_enqueue_tensors(plan, &t[0], 0, NULL, NULL), FLASHCL_SUCCESS);
    unsigned char *o0 = tu_read(out[0], sz[3]);
    ck_assert_msg(memcmp(o0, first, sz[3]) == 0, "set 0 after set 1: not step 0's output");
    free(o0);
    /* the hold given up (flashcl_plan_release_tensors): the count back to the test's own; the next enqueue
     * of the same tensors checks and binds them again, and computes the same */
    const cl_uint before = ref_count(in[0][0]); /* (a driver's kernel may keep its arguments' own: rusticl) */
    flashcl_plan_release_tensors(plan);
    flashcl_plan_release_tensors(NULL);
    ck_assert_uint_eq(ref_count_settled(in[0][0], before - 1), before - 1);
    ck_assert_int_eq(clEnqueueWriteBuffer(tu_queue, out[0], CL_TRUE, 0, sz[3], poison, 0, NULL, NULL), CL_SUCCESS);
    ck_assert_int_eq(flashcl_plan_enqueue_tensors(plan, &t[0], 0, NULL, NULL), FLASHCL_SUCCESS);
    o0 = tu_read(out[0], sz[3]);
    ck_assert_msg(memcmp(o0, first, sz[3]) == 0, "set 0 after the release: not step 0's output");
    free(o0);
    ck_assert_uint_ge(ref_count(in[0][0]), held + 1);
    flashcl_plan_destroy(&plan);
    ck_assert_uint_eq(ref_count_settled(in[0][0], held), held); /* (the plan's hold released with it) */
    {   /* a plan that needs no workspace ignores one given, and does not hold it */
        flashcl_problem one = small_problem();
        flashcl_plan *solo = NULL;
        ck_assert_int_eq(flashcl_plan_create(ctx, &one, &solo), FLASHCL_SUCCESS);
        ck_assert_uint_eq(flashcl_plan_workspace_bytes(solo), 0);
        size_t s1[5];
        flashcl_plan_buffer_sizes(solo, &s1[0], &s1[1], &s1[2], &s1[3], &s1[4]);
        ck_assert(s1[0] <= sz[0] && s1[1] <= sz[1] && s1[2] <= sz[2] && s1[3] <= sz[3]);
        flashcl_tensors w = t[0];
        ck_assert_int_eq(flashcl_plan_enqueue_tensors(solo, &w, 0, NULL, NULL), FLASHCL_SUCCESS);
        ck_assert_uint_eq(ref_count_settled(wsb[0], held), held);
        ck_assert_uint_ge(ref_count(in[0][0]), held + 1);
        flashcl_plan_destroy(&solo);
    }
    free(first);
    free(poison);
    for (int s = 0; s < 2; ++s) {
        for (int i = 0; i < 3; ++i)
            clReleaseMemObject(in[s][i]);
        clReleaseMemObject(out[s]);
        clReleaseMemObject(wsb[s]);
    }
    flashcl_context_destroy(&ctx);
}
END_TEST

/* head_dim_v: V's and O's sizes and the workspace by V's head dim; a V or O sized by Q's head dim refused
 * where it is short, nothing launched; the matrix-unit path, forced, takes V's head dims that are multiples
 * of 32 and says why not the others; the decode path says why it takes none. */
START_TEST(test_head_dim_v)
{
    flashcl_context *ctx = tu_context_create();
    flashcl_problem p = small_problem(); /* head_dim 32 */
    p.head_dim_v = 48;
    p.kv_splits = 2;
    flashcl_plan *plan = NULL;
    ck_assert_int_eq(flashcl_plan_create(ctx, &p, &plan), FLASHCL_SUCCESS);
    size_t sz[5];
    flashcl_plan_buffer_sizes(plan, &sz[0], &sz[1], &sz[2], &sz[3], &sz[4]);
    const size_t es = flashcl_dtype_size(p.dtype);
    ck_assert_uint_eq(sz[0], (size_t)p.batch * p.seq_q * p.heads_q * 32 * es);
    ck_assert_uint_eq(sz[1], (size_t)p.batch * p.seq_kv * p.heads_kv * 32 * es);
    ck_assert_uint_eq(sz[2], (size_t)p.batch * p.seq_kv * p.heads_kv * 48 * es);
    ck_assert_uint_eq(sz[3], (size_t)p.batch * p.seq_q * p.heads_q * 48 * es);
    ck_assert_uint_eq(flashcl_plan_workspace_bytes(plan), 2ull * p.batch * p.heads_q * p.seq_q * (48 + 1) * 4);
    flashcl_problem got;
    flashcl_plan_problem(plan, &got);
    ck_assert_int_eq(got.v_strides.head, 48); /* (batch, seq, heads, head_dim_v) */
    ck_assert_int_eq(got.o_strides.seq, (int64_t)p.heads_q * 48);
    cl_mem q, k, v;
    upload_inputs(sz, 5, &q, &k, &v);
    cl_mem o = tu_buffer(sz[3], NULL), short_v = tu_buffer(sz[2] - es, NULL), short_o = tu_buffer(sz[3] - es, NULL);
    ck_assert_int_eq(flashcl_plan_enqueue(plan, q, k, short_v, o, NULL, 0, NULL, NULL), FLASHCL_BUFFER_TOO_SMALL);
    expect_refused(ctx, 0, FLASHCL_BUFFER_TOO_SMALL, FLASHCL_BUFFER_TOO_SMALL, "v holds", o, sz[3]);
    ck_assert_int_eq(flashcl_plan_enqueue(plan, q, k, v, short_o, NULL, 0, NULL, NULL), FLASHCL_BUFFER_TOO_SMALL);
    expect_refused(ctx, 1, FLASHCL_BUFFER_TOO_SMALL, FLASHCL_BUFFER_TOO_SMALL, "o holds", short_o, sz[3] - es);
    ck_assert_int_eq(flashcl_plan_enqueue(plan, q, k, v, o, NULL, 0, NULL, NULL), FLASHCL_SUCCESS);
    ck_assert_int_eq(clFinish(tu_queue), CL_SUCCESS);
    ck_assert(!still_poisoned(o, sz[3]));
    cl_mem all[6] = {q, k, v, o, short_v, short_o};
    for (int i = 0; i < 6; ++i)
        clReleaseMemObject(all[i]);
    flashcl_plan_destroy(&plan);
    flashcl_context_destroy(&ctx);

    /* The matrix-unit kernel forced: 64 over 32 on it, 64 over 40 portable; the decode kernel forced:
     * portable. With the reasons. */
    for (int path = FLASHCL_PATH_MMA; path <= FLASHCL_PATH_DECODE + 1; ++path) {
        ctx = path_context(path > FLASHCL_PATH_DECODE ? FLASHCL_PATH_MMA : path);
        flashcl_problem f = small_problem();
        f.dtype = FLASHCL_DTYPE_F16;
        f.head_dim = 64;
        f.head_dim_v = path > FLASHCL_PATH_DECODE ? 40 : 32;
        f.seq_q = path == FLASHCL_PATH_DECODE ? 1 : 64;
        flashcl_config c;
        ck_assert_int_eq(flashcl_context_choose_config(ctx, &f, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
        if (path == FLASHCL_PATH_MMA) {
            ck_assert_msg(cfg_mma(&c) != 0, "64 over 32: %s (%s)", c.kernel_name, c.path_reason);
            /* its local memory by both head dims: K's rows of 64 + 8, V's of 32 + 8 */
            ck_assert_uint_lt(c.local_mem_bytes, flashcl_flash_local_mem_bytes(64, &c));
        } else {
            ck_assert_msg(!cfg_mma(&c) && !cfg_decode(&c) && !strcmp(c.kernel_name, "flash_fwd"), "path %d: %s", path, c.kernel_name);
            ck_assert_msg(strstr(c.path_reason, "head_dim_v") != NULL, "path %d: reason '%s'", path, c.path_reason);
        }
        flashcl_context_destroy(&ctx);
    }
}
END_TEST

/* cache_batch_idx and cache_leftpad: their buffers missing, too small, unasked for; nothing launched. */
START_TEST(test_enqueue_cache_options_bad_input)
{
    flashcl_context *ctx = tu_context_create();
    flashcl_problem p = small_problem();
    p.kv_cache = 1;
    p.cache_batch_idx = 1;
    p.cache_batch = 3;
    p.cache_leftpad = 1;
    flashcl_plan *plan = NULL;
    ck_assert_int_eq(flashcl_plan_create(ctx, &p, &plan), FLASHCL_SUCCESS);
    size_t sz[5];
    flashcl_plan_buffer_sizes(plan, &sz[0], &sz[1], &sz[2], &sz[3], &sz[4]);
    /* K/V: the cache's 3 sequences */
    ck_assert_uint_eq(sz[1], 3ull * p.seq_kv * p.heads_kv * p.head_dim * 4);
    cl_mem q, k, v;
    upload_inputs(sz, 12, &q, &k, &v);
    const int32_t lens[2] = {20, 30}, idx[2] = {2, 0}, pad[2] = {3, 0};
    cl_mem o = tu_buffer(sz[3], NULL), lens_m = tu_buffer(sizeof lens, lens), idx_m = tu_buffer(sizeof idx, idx);
    cl_mem pad_m = tu_buffer(sizeof pad, pad), short_m = tu_buffer(4, pad);
    flashcl_tensors t = {.q = q, .k = k, .v = v, .o = o, .cache_seqlens = lens_m, .cache_batch_idx = idx_m,
                         .cache_leftpad = pad_m};
    flashcl_status expect = FLASHCL_INVALID_ARGUMENT;
    const char *word = NULL;
    switch (_i) {
    case 0: t.cache_batch_idx = NULL; word = "problem.cache_batch_idx is set but cache_batch_idx is NULL"; break;
    case 1: t.cache_leftpad = short_m; expect = FLASHCL_BUFFER_TOO_SMALL; word = "cache_leftpad holds"; break;
    case 2: t.cache_leftpad = o; word = "aliases"; break;
    }
    const flashcl_status st = flashcl_plan_enqueue_tensors(plan, &t, 0, NULL, NULL);
    expect_refused(ctx, _i, st, expect, word, o, sz[3]);
    /* the good call runs; a problem without the options refuses their buffers */
    t = (flashcl_tensors){.q = q, .k = k, .v = v, .o = o, .cache_seqlens = lens_m, .cache_batch_idx = idx_m,
                          .cache_leftpad = pad_m};
    ck_assert_int_eq(flashcl_plan_enqueue_tensors(plan, &t, 0, NULL, NULL), FLASHCL_SUCCESS);
    ck_assert_int_eq(clFinish(tu_queue), CL_SUCCESS);
    ck_assert(!still_poisoned(o, sz[3]));
    flashcl_problem plain = small_problem();
    plain.kv_cache = 1;
    flashcl_plan *plain_plan = NULL;
    ck_assert_int_eq(flashcl_plan_create(ctx, &plain, &plain_plan), FLASHCL_SUCCESS);
    flashcl_tensors extra = {.q = q, .k = k, .v = v, .o = o, .cache_seqlens = lens_m, .cache_leftpad = pad_m};
    ck_assert_int_eq(flashcl_plan_enqueue_tensors(plain_plan, &extra, 0, NULL, NULL), FLASHCL_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(ctx), "cache_leftpad given but problem.cache_leftpad is 0"));
    cl_mem all[9] = {q, k, v, o, lens_m, idx_m, pad_m, short_m, NULL};
    for (int i = 0; all[i]; ++i)
        clReleaseMemObject(all[i]);
    flashcl_plan_destroy(&plain_plan);
    flashcl_plan_destroy(&plan);
    flashcl_context_destroy(&ctx);
}
END_TEST

/* Packed queries over a KV cache (chunked prefill): Q/O sized by total_q, K/V by the cache; no
 * cu_seqlens_k (refused by name, nothing launched), and the good call writes every output row. */
START_TEST(test_enqueue_varlen_cache)
{
    flashcl_context *ctx = tu_context_create();
    flashcl_problem p = small_problem();
    p.kv_cache = 1;
    p.varlen = 1;
    p.total_q = 40; /* sequences of 33 and 7 queries */
    flashcl_plan *plan = NULL;
    ck_assert_msg(flashcl_plan_create(ctx, &p, &plan) == FLASHCL_SUCCESS, "%s", flashcl_context_last_error(ctx));
    size_t sz[5];
    flashcl_plan_buffer_sizes(plan, &sz[0], &sz[1], &sz[2], &sz[3], &sz[4]);
    ck_assert_uint_eq(sz[0], 40ull * p.heads_q * p.head_dim * 4);
    ck_assert_uint_eq(sz[1], 2ull * p.seq_kv * p.heads_kv * p.head_dim * 4);
    cl_mem q, k, v;
    upload_inputs(sz, 13, &q, &k, &v);
    const int32_t cu[3] = {0, 33, 40}, lens[2] = {47, 20};
    cl_mem o = tu_buffer(sz[3], NULL), cu_m = tu_buffer(sizeof cu, cu), lens_m = tu_buffer(sizeof lens, lens);
    flashcl_tensors t = {.q = q, .k = k, .v = v, .o = o, .cu_seqlens_q = cu_m, .cu_seqlens_k = cu_m,
                         .cache_seqlens = lens_m};
    expect_refused(ctx, 0, flashcl_plan_enqueue_tensors(plan, &t, 0, NULL, NULL), FLASHCL_INVALID_ARGUMENT,
                   "cu_seqlens_k given with varlen over a KV cache", o, sz[3]);
    t.cu_seqlens_k = NULL;
    ck_assert_int_eq(flashcl_plan_enqueue_tensors(plan, &t, 0, NULL, NULL), FLASHCL_SUCCESS);
    ck_assert_int_eq(clFinish(tu_queue), CL_SUCCESS);
    float *out = tu_read(o, sz[3]); /* (every element written: finite, no poison left) */
    for (size_t i = 0; i < sz[3] / sizeof(float); ++i)
        ck_assert_msg(isfinite(out[i]), "O[%zu] = %g", i, (double)out[i]);
    free(out);
    cl_mem all[7] = {q, k, v, o, cu_m, lens_m, NULL};
    for (int i = 0; all[i]; ++i)
        clReleaseMemObject(all[i]);
    flashcl_plan_destroy(&plan);
    flashcl_context_destroy(&ctx);
}
END_TEST

/* Attention sinks: the buffer missing, too small, unasked for, aliasing the output, at an unaligned
 * offset; standard attention refuses the problem by name. Nothing launched. */
START_TEST(test_enqueue_sinks_bad_input)
{
    flashcl_context *ctx = tu_context_create();
    flashcl_problem p = small_problem();
    p.sinks = 1;
    flashcl_plan *plan = NULL, *std_plan = NULL;
    ck_assert_int_eq(flashcl_plan_create(ctx, &p, &plan), FLASHCL_SUCCESS);
    if (flashcl_algorithm_available(FLASHCL_ALGO_STANDARD)) {
        ck_assert_int_eq(flashcl_plan_create_algo(ctx, &p, FLASHCL_ALGO_STANDARD, &std_plan), FLASHCL_UNSUPPORTED);
        ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(ctx), "attention sinks (problem.sinks)"));
    }
    size_t sz[5];
    flashcl_plan_buffer_sizes(plan, &sz[0], &sz[1], &sz[2], &sz[3], &sz[4]);
    cl_mem q, k, v;
    upload_inputs(sz, 6, &q, &k, &v);
    const float logits[4] = {1.0f, 2.0f, 3.0f, 4.0f}; /* heads_q = 4 */
    cl_mem o = tu_buffer(sz[3], NULL), sinks = tu_buffer(sizeof logits, logits), short_sinks = tu_buffer(12, logits);
    flashcl_tensors t = {.q = q, .k = k, .v = v, .o = o, .sinks = sinks};
    flashcl_status expect = FLASHCL_INVALID_ARGUMENT;
    const char *word = NULL;
    switch (_i) {
    case 0: t.sinks = NULL; word = "problem.sinks is set but sinks is NULL"; break;
    case 1: t.sinks = short_sinks; expect = FLASHCL_BUFFER_TOO_SMALL; word = "sinks holds"; break;
    case 2: t.sinks = o; word = "aliases"; break;
    case 3: t.offsets.sinks = 2; word = "tensors.offsets.sinks = 2"; break;
    case 4: t.offsets.sinks = 4; expect = FLASHCL_BUFFER_TOO_SMALL; word = "sinks"; break;
    }
    const flashcl_status st = flashcl_plan_enqueue_tensors(plan, &t, 0, NULL, NULL);
    expect_refused(ctx, _i, st, expect, word, o, sz[3]);
    /* a problem without sinks refuses the buffer */
    flashcl_problem plain = small_problem();
    flashcl_plan *plain_plan = NULL;
    ck_assert_int_eq(flashcl_plan_create(ctx, &plain, &plain_plan), FLASHCL_SUCCESS);
    flashcl_tensors extra = {.q = q, .k = k, .v = v, .o = o, .sinks = sinks};
    ck_assert_int_eq(flashcl_plan_enqueue_tensors(plain_plan, &extra, 0, NULL, NULL), FLASHCL_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(ctx), "sinks given but problem.sinks is 0"));
    cl_mem all[7] = {q, k, v, o, sinks, short_sinks, NULL};
    for (int i = 0; all[i]; ++i)
        clReleaseMemObject(all[i]);
    flashcl_plan_destroy(&plain_plan);
    flashcl_plan_destroy(&plan);
    flashcl_context_destroy(&ctx);
}
END_TEST


/* Offsets and queues refused before anything is launched: an offset that is not a multiple of the
 * element size, a tensor past its buffer's end from its offset, an offset for a tensor the problem does
 * not have, a queue of another context, Q at 8 bytes under the matrix-unit kernel's 16-byte copies, O at 8
 * bytes under flash_mma's and flash_wgmma's 16-byte output chunks (case 7: flash_wgmma, emulated, where
 * the device's local memory holds its tiles; on rusticl's it does not, the portable kernel takes the plan,
 * and O at 8 bytes is then accepted and written there). */
START_TEST(test_enqueue_offsets_bad_input)
{
    flashcl_settings set;
    flashcl_settings_default(&set);
    set.disk_cache = 0;
    set.validate = 0;
    set.path = _i == 7 ? FLASHCL_PATH_WGMMA : _i >= 5 ? FLASHCL_PATH_MMA : -1;
    flashcl_context *ctx = NULL;
    ck_assert_int_eq(flashcl_context_create(tu_context, tu_device, tu_queue, &set, &ctx), FLASHCL_SUCCESS);
    flashcl_problem p = small_problem();
    if (_i >= 5) {
        p.dtype = FLASHCL_DTYPE_F16;
        p.head_dim = 64;
    }
    flashcl_plan *plan = NULL;
    ck_assert_int_eq(flashcl_plan_create(ctx, &p, &plan), FLASHCL_SUCCESS);
    int portable_o = 0; /* case 7 where flash_wgmma's tiles do not fit: the portable kernel's 4-byte stores */
    if (_i >= 5) {
        flashcl_config c;
        flashcl_plan_config(plan, &c);
        portable_o = _i == 7 && !strcmp(c.kernel_name, "flash_fwd");
        if (portable_o)
            printf("case 7: flash_fwd takes it on this device (%s); O at 8 bytes must run\n", c.path_reason);
        else
            ck_assert_str_eq(c.kernel_name, _i == 7 ? "flash_wgmma" : "flash_mma");
    }
    size_t sz[5];
    flashcl_plan_buffer_sizes(plan, &sz[0], &sz[1], &sz[2], &sz[3], &sz[4]);
    cl_mem q, k, v;
    upload_inputs(sz, 7, &q, &k, &v);
    if (_i >= 5) { /* fp16 values (upload_inputs writes fp32 bits) */
        unsigned short *h16 = malloc(sz[0] > sz[1] ? sz[0] : sz[1]);
        hm_rng rng;
        hm_rng_seed(&rng, 8);
        hm_fill_normal(h16, FLASHCL_DTYPE_F16, (sz[0] > sz[1] ? sz[0] : sz[1]) / 2, &rng, 1.0);
        const cl_mem in[3] = {q, k, v};
        for (int i = 0; i < 3; ++i)
            ck_assert_int_eq(clEnqueueWriteBuffer(tu_queue, in[i], CL_TRUE, 0, sz[i], h16, 0, NULL, NULL), CL_SUCCESS);
        free(h16);
    }
    cl_mem o = tu_buffer(sz[3] + 64, NULL), big = tu_buffer(sz[0] + 64, NULL);
    cl_int err;
    cl_context other = clCreateContext(NULL, 1, &tu_device, NULL, NULL, &err);
    cl_command_queue foreign = clCreateCommandQueue(other, tu_device, 0, &err);
    flashcl_tensors t = {.q = q, .k = k, .v = v, .o = o};
    cl_command_queue queue = NULL;
    flashcl_status expect = FLASHCL_INVALID_ARGUMENT;
    const char *word = NULL;
    switch (_i) {
    case 0: t.offsets.q = 2; word = "tensors.offsets.q = 2 is not a multiple of its element size (4 bytes)"; break;
    case 1: t.offsets.o = 128; expect = FLASHCL_BUFFER_TOO_SMALL; word = "from offset 128"; break;
    case 2: t.offsets.lse = 4; word = "offsets.lse = 4 but problem.return_lse is 0"; break;
    case 3: t.offsets.mask = 4; word = "offsets.mask = 4 for a tensor the problem does not have"; break;
    case 4: queue = foreign; word = "queue belongs to another OpenCL context"; break;
    case 5: t.q = big; t.offsets.q = 8; word = "tensors.offsets.q = 8 is not a multiple of 16 bytes"; break;
    case 6:
    case 7: t.offsets.o = 8; word = "tensors.offsets.o = 8 is not a multiple of 16 bytes"; break;
    }
    if (portable_o)
        expect = FLASHCL_SUCCESS;
    const flashcl_status st = flashcl_plan_enqueue_on(plan, queue, &t, 0, NULL, NULL);
    ck_assert_msg(st == expect, "case %d: %s (%s)", _i, flashcl_status_name(st), flashcl_context_last_error(ctx));
    ck_assert_int_eq(clFinish(tu_queue), CL_SUCCESS);
    if (portable_o) { /* written from byte 8, the first 8 untouched */
        unsigned char *h8 = tu_read(o, sz[3] + 64);
        int written8 = 0;
        for (size_t i = 0; i < sz[3] + 64; ++i) {
            if (i < 8)
                ck_assert_int_eq(h8[i], 0xff);
            else if (i < sz[3] + 8)
                written8 |= h8[i] != 0xff;
        }
        ck_assert(written8);
        free(h8);
        clReleaseMemObject(o); /* (poisoned again for the run at offset 64 below) */
        o = tu_buffer(sz[3] + 64, NULL);
    } else {
        ck_assert_msg(strstr(flashcl_context_last_error(ctx), word) != NULL, "case %d: '%s' lacks '%s'", _i,
                      flashcl_context_last_error(ctx), word);
        ck_assert_msg(still_poisoned(o, sz[3] + 64), "case %d: something was launched", _i);
    }
    /* at offset 64, on its own queue: the result written there, the first 64 bytes untouched */
    t = (flashcl_tensors){.q = q, .k = k, .v = v, .o = o};
    t.offsets.o = 64;
    cl_command_queue q2 = clCreateCommandQueue(tu_context, tu_device, 0, &err);
    ck_assert_int_eq(flashcl_plan_enqueue_on(plan, q2, &t, 0, NULL, NULL), FLASHCL_SUCCESS);
    ck_assert_int_eq(clFinish(q2), CL_SUCCESS);
    unsigned char *h = tu_read(o, sz[3] + 64);
    for (size_t i = 0; i < 64; ++i)
        ck_assert_int_eq(h[i], 0xff);
    int written = 0;
    for (size_t i = 64; i < sz[3] + 64; ++i)
        written |= h[i] != 0xff;
    ck_assert(written);
    free(h);
    clReleaseCommandQueue(q2);
    clReleaseCommandQueue(foreign);
    clReleaseContext(other);
    cl_mem all[5] = {q, k, v, o, big};
    for (int i = 0; i < 5; ++i)
        clReleaseMemObject(all[i]);
    flashcl_plan_destroy(&plan);
    flashcl_context_destroy(&ctx);
}
END_TEST

/* fp8 attention on flash_wgmma (forced; emulated here): its rows are copied in 16-byte pieces, so Q's, K's
 * and V's offsets must be multiples of 16 bytes; 8 (a multiple of the byte element and of the portable
 * kernel's 4-byte loads) is refused with the tensor named and nothing launched, and 16 runs. Where the
 * device's local memory is short of the emulation's tiles (rusticl), the portable kernel takes both. */
START_TEST(test_enqueue_fp8_offsets)
{
    flashcl_context *ctx = path_context(FLASHCL_PATH_WGMMA);
    flashcl_problem p = small_problem();
    p.dtype = FLASHCL_DTYPE_F16;
    p.head_dim = 64;
    p.qkv_format = FLASHCL_KV_FP8_E4M3;
    flashcl_plan *plan = NULL;
    ck_assert_int_eq(flashcl_plan_create(ctx, &p, &plan), FLASHCL_SUCCESS);
    flashcl_config cfg;
    flashcl_plan_config(plan, &cfg);
    size_t sz[5];
    flashcl_plan_buffer_sizes(plan, &sz[0], &sz[1], &sz[2], &sz[3], &sz[4]);
    const size_t n = sz[0] > sz[1] ? sz[0] : sz[1];
    unsigned char *host = malloc(n + 16);
    ck_assert_ptr_nonnull(host);
    for (size_t i = 0; i < n + 16; ++i) /* (E4M3 bytes of magnitude 2^-3 .. 60, no NaN) */
        host[i] = (unsigned char)((i * 37u) % 0x48u + 0x20u) | (unsigned char)(i & 0x80u);
    cl_mem in = tu_buffer(n + 16, host), out = tu_buffer(sz[3], NULL);
    flashcl_tensors t = {.q = in, .k = in, .v = in, .o = out};
    t.offsets.q = t.offsets.v = 16;
    t.offsets.k = 8;
    if (cfg.kernel == FLASHCL_KERNEL_WGMMA) {
        ck_assert_int_eq(flashcl_plan_enqueue_tensors(plan, &t, 0, NULL, NULL), FLASHCL_INVALID_ARGUMENT);
        ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(ctx), "offsets.k"));
        ck_assert_int_eq(clFinish(tu_queue), CL_SUCCESS);
        ck_assert(still_poisoned(out, sz[3]));
        t.offsets.k = 16;
    } else {
        ck_assert_ptr_nonnull(strstr(cfg.path_reason, "not wgmma"));
    }
    ck_assert_int_eq(flashcl_plan_enqueue_tensors(plan, &t, 0, NULL, NULL), FLASHCL_SUCCESS);
    ck_assert_int_eq(clFinish(tu_queue), CL_SUCCESS);
    ck_assert(!still_poisoned(out, sz[3]));
    free(host);
    clReleaseMemObject(in);
    clReleaseMemObject(out);
    flashcl_plan_destroy(&plan);
    flashcl_context_destroy(&ctx);
}
END_TEST

/* fp16 tensors at offsets that are multiples of 2 bytes and of no more (the portable kernel's vector
 * loads need only the element's alignment): the same output, bit for bit, as at offset 0. Where the
 * default plan is the matrix-unit kernel (16-byte row copies), such an offset is refused with the
 * tensor named, nothing launched, and the portable path takes it. */
START_TEST(test_enqueue_unaligned_offsets)
{
    flashcl_context *ctx = tu_context_create();
    flashcl_problem p = small_problem();
    p.dtype = FLASHCL_DTYPE_F16;
    p.causal = 1;
    flashcl_plan *plan = NULL;
    ck_assert_int_eq(flashcl_plan_create(ctx, &p, &plan), FLASHCL_SUCCESS);
    flashcl_config cfg;
    flashcl_plan_config(plan, &cfg);
    if (cfg_mma(&cfg)) {
        size_t sz[5];
        flashcl_plan_buffer_sizes(plan, &sz[0], &sz[1], &sz[2], &sz[3], &sz[4]);
        cl_mem in = tu_buffer(sz[0] + 16, NULL), out = tu_buffer(sz[3], NULL);
        flashcl_tensors t = {.q = in, .k = in, .v = in, .o = out};
        t.offsets.k = 2;
        ck_assert_int_eq(flashcl_plan_enqueue_tensors(plan, &t, 0, NULL, NULL), FLASHCL_INVALID_ARGUMENT);
        ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(ctx), "offsets.k"));
        ck_assert_int_eq(clFinish(tu_queue), CL_SUCCESS);
        ck_assert(still_poisoned(out, sz[3]));
        clReleaseMemObject(in);
        clReleaseMemObject(out);
        flashcl_plan_destroy(&plan);
        flashcl_context_destroy(&ctx);
        ctx = path_context(FLASHCL_PATH_PORTABLE);
        ck_assert_int_eq(flashcl_plan_create(ctx, &p, &plan), FLASHCL_SUCCESS);
    }
    size_t sz[5];
    flashcl_plan_buffer_sizes(plan, &sz[0], &sz[1], &sz[2], &sz[3], &sz[4]);
    const size_t n = sz[0] > sz[1] ? sz[0] : sz[1];
    unsigned char *host = malloc(n + 16);
    hm_rng rng;
    hm_rng_seed(&rng, 99);
    hm_fill_normal(host + 16, FLASHCL_DTYPE_F16, n / 2, &rng, 1.0);
    memcpy(host, host + 16, 16);
    cl_mem in = tu_buffer(n + 16, host); /* Q, K and V from one buffer: at 16 and at 2, 6, 10 */
    cl_mem o0 = tu_buffer(sz[3], NULL), o1 = tu_buffer(sz[3] + 2, NULL);
    flashcl_tensors a = {.q = in, .k = in, .v = in, .o = o0};
    a.offsets.q = a.offsets.k = a.offsets.v = 16;
    ck_assert_int_eq(flashcl_plan_enqueue_tensors(plan, &a, 0, NULL, NULL), FLASHCL_SUCCESS);
    /* the same values 14, 10 and 6 bytes earlier: a copy of the first 16 bytes shifted */
    unsigned char *shifted = malloc(n + 16);
    memset(shifted, 0, 2);
    memcpy(shifted + 2, host + 16, n);
    cl_mem in2 = tu_buffer(n + 16, NULL);
    ck_assert_int_eq(clEnqueueWriteBuffer(tu_queue, in2, CL_TRUE, 0, n + 16, shifted, 0, NULL, NULL), CL_SUCCESS);
    flashcl_tensors b = {.q = in2, .k = in2, .v = in2, .o = o1};
    b.offsets.q = b.offsets.k = b.offsets.v = 2;
    b.offsets.o = 2;
    ck_assert_int_eq(flashcl_plan_enqueue_tensors(plan, &b, 0, NULL, NULL), FLASHCL_SUCCESS);
    ck_assert_int_eq(clFinish(tu_queue), CL_SUCCESS);
    unsigned char *r0 = tu_read(o0, sz[3]), *r1 = tu_read(o1, sz[3] + 2);
    ck_assert(!still_poisoned(o0, sz[3]));
    ck_assert_int_eq(memcmp(r0, r1 + 2, sz[3]), 0);
    ck_assert(r1[0] == 0xff && r1[1] == 0xff);
    free(r0);
    free(r1);
    free(host);
    free(shifted);
    cl_mem all[4] = {in, in2, o0, o1};
    for (int i = 0; i < 4; ++i)
        clReleaseMemObject(all[i]);
    flashcl_plan_destroy(&plan);
    flashcl_context_destroy(&ctx);
}
END_TEST

/* Packed sequences with cu_seqlens that lie (past the totals, decreasing): the kernels clamp them to
 * the buffers, so the run completes, reads and writes nothing outside, and rows outside every
 * sequence are zeros. */
START_TEST(test_varlen_bad_cu_seqlens)
{
    flashcl_context *ctx = tu_context_create();
    flashcl_problem p = small_problem();
    p.varlen = 1;
    p.total_q = 60;
    p.total_kv = 80;
    flashcl_plan *plan = NULL;
    ck_assert_int_eq(flashcl_plan_create_algo(ctx, &p, _i ? FLASHCL_ALGO_NAIVE : FLASHCL_ALGO_FLASH, &plan),
                     FLASHCL_SUCCESS);
    size_t sz[5];
    flashcl_plan_buffer_sizes(plan, &sz[0], &sz[1], &sz[2], &sz[3], &sz[4]);
    cl_mem q, k, v;
    upload_inputs(sz, 9, &q, &k, &v);
    const int32_t bad_q[3] = {0, 1000000, 5}, bad_k[3] = {-7, 40, 2000000000};
    cl_mem o = tu_buffer(sz[3], NULL), cq = tu_buffer(sizeof bad_q, bad_q), ck = tu_buffer(sizeof bad_k, bad_k);
    const flashcl_tensors t = {.q = q, .k = k, .v = v, .o = o, .cu_seqlens_q = cq, .cu_seqlens_k = ck};
    ck_assert_int_eq(flashcl_plan_enqueue_tensors(plan, &t, 0, NULL, NULL), FLASHCL_SUCCESS);
    ck_assert_int_eq(clFinish(tu_queue), CL_SUCCESS);
    float *out = tu_read(o, sz[3]);
    size_t finite = 0;
    for (size_t i = 0; i < sz[3] / sizeof(float); ++i)
        finite += isfinite(out[i]) != 0;
    ck_assert_uint_gt(finite, 0); /* the clamped first sequence was computed */
    free(out);
    cl_mem all[6] = {q, k, v, o, cq, ck};
    for (int i = 0; i < 6; ++i)
        clReleaseMemObject(all[i]);
    flashcl_plan_destroy(&plan);
    flashcl_context_destroy(&ctx);
}
END_TEST

static Suite *make_suite(void)
{
    Suite *s = suite_create("plan");
    TCase *tc = tcase_create("api");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_context_bad_input);
    tcase_add_test(tc, test_context_retains_objects);
    tcase_add_test(tc, test_profile);
    tcase_add_loop_test(tc, test_public_chooser_is_the_plans, 0, 2);
    tcase_add_test(tc, test_plan_bad_input);
    tcase_add_loop_test(tc, test_enqueue_bad_input, 0, 8);
    tcase_add_loop_test(tc, test_enqueue_alias_views, 0, 7);
    tcase_add_test(tc, test_wait_list);
    tcase_add_loop_test(tc, test_enqueue_tensors_bad_input, 0, 6);
    tcase_add_loop_test(tc, test_enqueue_sinks_bad_input, 0, 5);
    tcase_add_test(tc, test_enqueue_workspace);
    tcase_add_test(tc, test_workspace_overflow);
    tcase_add_test(tc, test_head_dim_v);
    tcase_add_test(tc, test_enqueue_rebinds);
    tcase_add_test(tc, test_enqueue_same_tensors);
    tcase_add_test(tc, test_shared_scratch_ordered);
    tcase_add_test(tc, test_defaults_and_tensor_bytes);
    tcase_add_loop_test(tc, test_enqueue_cache_options_bad_input, 0, 3);
    tcase_add_test(tc, test_enqueue_varlen_cache);
    tcase_add_loop_test(tc, test_enqueue_offsets_bad_input, 0, 8);
    tcase_add_test(tc, test_enqueue_unaligned_offsets);
    tcase_add_test(tc, test_enqueue_fp8_offsets);
    tcase_add_loop_test(tc, test_varlen_bad_cu_seqlens, 0, 2);
    tcase_add_loop_test(tc, test_config_fits, 0, 9);
    tcase_add_loop_test(tc, test_wgmma_fits, 0, 4);
    tcase_add_test(tc, test_override_and_kernel_info);
    tcase_add_test(tc, test_plan_required_work_group);
    /* the flash plan, and the standard one where this build has it */
    tcase_add_loop_test(tc, test_bad_wait_list, 0, flashcl_algorithm_available(FLASHCL_ALGO_STANDARD) ? 2 : 1);
    tcase_add_test(tc, test_sizes_past_2_31);
    if (flashcl_algorithm_available(FLASHCL_ALGO_STANDARD))
        tcase_add_test(tc, test_standard_memory);
    else
        tcase_add_test(tc, test_standard_unavailable);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run(make_suite, 1);
}
