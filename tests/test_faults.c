/*
 * test_faults.c: what the caller gets when the driver fails. The fault layer (tests/fault/clfault.c,
 * preloaded) makes one OpenCL call return an error: a kernel launch refused (CL_OUT_OF_RESOURCES, as a
 * lost or overloaded queue gives), an allocation refused (CL_MEM_OBJECT_ALLOCATION_FAILURE), a kernel
 * that cannot be created, a read-back that fails. Each must come back as a status and a message that
 * names the call; nothing may be half-done (no plan, no event), and the same plan or context must work
 * again, correctly, once the fault is gone. Without the layer (sanitizer builds) the suite skips.
 */
#define _GNU_SOURCE
#include "testutil.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*arm_fn)(const char *fn, cl_int err, int skip, int count);
typedef int (*fired_fn)(void);
static arm_fn clfault_arm;
static fired_fn clfault_fired;

typedef struct fixture {
    flashcl_context *ctx;
    flashcl_plan *plan;
    cl_mem q, k, v, o, lse;
} fixture;

static flashcl_problem problem(void)
{
    flashcl_problem p;
    flashcl_problem_default(&p);
    p.batch = 1;
    p.heads_q = 2;
    p.heads_kv = 2;
    p.seq_q = 70;
    p.seq_kv = 90;
    p.head_dim = 32;
    p.return_lse = 1;
    return p;
}

/* Buffers for `p` (random inputs, poisoned outputs) and a context with validation as asked. */
static void setup(fixture *f, const flashcl_problem *p, int validate)
{
    memset(f, 0, sizeof *f);
    flashcl_settings s;
    flashcl_settings_default(&s);
    s.disk_cache = 0;
    s.validate = validate;
    ck_assert_int_eq(flashcl_context_create(tu_context, tu_device, tu_queue, &s, &f->ctx), FLASHCL_SUCCESS);
    const size_t n = (size_t)p->seq_kv * p->heads_kv * p->head_dim;
    float *host = malloc(n * sizeof(float));
    hm_rng rng;
    hm_rng_seed(&rng, 5);
    cl_mem *in[3] = {&f->q, &f->k, &f->v};
    for (int i = 0; i < 3; ++i) {
        hm_fill_normal(host, FLASHCL_DTYPE_F32, n, &rng, 1.0);
        *in[i] = tu_buffer(n * sizeof(float), host); /* seq_kv >= seq_q: big enough for Q too */
    }
    f->o = tu_buffer((size_t)p->seq_q * p->heads_q * p->head_dim * sizeof(float), NULL);
    f->lse = tu_buffer((size_t)p->seq_q * p->heads_q * sizeof(float), NULL);
    free(host);
}

static void teardown(fixture *f)
{
    cl_mem all[5] = {f->q, f->k, f->v, f->o, f->lse};
    for (int i = 0; i < 5; ++i)
        if (all[i])
            clReleaseMemObject(all[i]);
    flashcl_plan_destroy(&f->plan);
    flashcl_context_destroy(&f->ctx);
}

/* The plan runs and validates once the fault is gone (validation compares with the naive kernel). */
static void check_recovers(fixture *f)
{
    clfault_arm(NULL, 0, 0, 0);
    const int was = flashcl_context_validation(f->ctx);
    flashcl_context_set_validation(f->ctx, 1);
    flashcl_status st = flashcl_plan_enqueue(f->plan, f->q, f->k, f->v, f->o, f->lse, 0, NULL, NULL);
    ck_assert_msg(st == FLASHCL_SUCCESS, "after the fault: %s", flashcl_context_last_error(f->ctx));
    flashcl_validation r;
    flashcl_plan_last_validation(f->plan, &r);
    ck_assert(r.ran && r.passed && r.rows_checked > 0);
    flashcl_context_set_validation(f->ctx, was);
}

static void expect_failure(fixture *f, flashcl_status st, flashcl_status want, const char *call, const char *err)
{
    const char *msg = flashcl_context_last_error(f->ctx);
    ck_assert_msg(st == want, "status %s, want %s: %s", flashcl_status_name(st), flashcl_status_name(want), msg);
    ck_assert_msg(strstr(msg, call) != NULL, "message does not name %s: %s", call, msg);
    if (err)
        ck_assert_msg(strstr(msg, err) != NULL, "message does not name %s: %s", err, msg);
    ck_assert_int_ge(clfault_fired(), 1);
    printf("  %-27s -> %s: %.160s\n", call, flashcl_status_name(st), msg);
}

/* A kernel launch refused: every algorithm reports it, hands out no event, and runs again after. */
START_TEST(test_launch_refused)
{
    static const flashcl_algorithm algos[] = {FLASHCL_ALGO_FLASH, FLASHCL_ALGO_NAIVE, FLASHCL_ALGO_STANDARD};
    const flashcl_algorithm algo = algos[_i];
    if (!flashcl_algorithm_available(algo))
        return;
    flashcl_problem p = problem();
    fixture f;
    setup(&f, &p, 0);
    ck_assert_int_eq(flashcl_plan_create_algo(f.ctx, &p, algo, &f.plan), FLASHCL_SUCCESS);
    cl_event ev = NULL;
    clfault_arm("clEnqueueNDRangeKernel", CL_OUT_OF_RESOURCES, 0, 1);
    flashcl_status st = flashcl_plan_enqueue(f.plan, f.q, f.k, f.v, f.o, f.lse, 0, NULL, &ev);
    /* Standard attention's first launch is CLBlast's GEMM: the message names it and the error. */
    expect_failure(&f, st, FLASHCL_OUT_OF_DEVICE_MEMORY,
                   algo == FLASHCL_ALGO_STANDARD ? "CLBlastSgemmBatched" : "clEnqueueNDRangeKernel",
                   "CL_OUT_OF_RESOURCES");
    ck_assert_ptr_null(ev);
    ck_assert_int_eq(flashcl_context_last_cl_error(f.ctx), CL_OUT_OF_RESOURCES);
    clFinish(tu_queue);
    check_recovers(&f);
    teardown(&f);
}
END_TEST

/* Validation mode: the naive reference's launch refused, then its read-back lost. */
START_TEST(test_validation_faults)
{
    flashcl_problem p = problem();
    fixture f;
    setup(&f, &p, 1);
    ck_assert_int_eq(flashcl_plan_create(f.ctx, &p, &f.plan), FLASHCL_SUCCESS);
    static const char *calls[] = {"clEnqueueNDRangeKernel", "clEnqueueReadBuffer", "clCreateBuffer"};
    static const char *named[] = {"naive_ref_rows", "reading the comparison back", "clCreateBuffer"};
    const int skip = _i == 0 ? 1 : 0; /* the flash launch goes through; the reference's fails */
    if (_i < 2) /* the validation scratch exists from a first run; the third case fails creating it */
        ck_assert_int_eq(flashcl_plan_enqueue(f.plan, f.q, f.k, f.v, f.o, f.lse, 0, NULL, NULL), FLASHCL_SUCCESS);
    clfault_arm(calls[_i], _i == 2 ? CL_MEM_OBJECT_ALLOCATION_FAILURE : CL_OUT_OF_RESOURCES, skip, 1);
    cl_event ev = NULL;
    flashcl_status st = flashcl_plan_enqueue(f.plan, f.q, f.k, f.v, f.o, f.lse, 0, NULL, &ev);
    expect_failure(&f, st, FLASHCL_OUT_OF_DEVICE_MEMORY, named[_i], NULL);
    if (ev) /* the flash run itself was enqueued: its event is the caller's (include/flashcl.h) */
        clReleaseEvent(ev);
    flashcl_validation r;
    flashcl_plan_last_validation(f.plan, &r);
    ck_assert(!r.passed);
    clFinish(tu_queue);
    check_recovers(&f);
    teardown(&f);
}
END_TEST

/* Plan creation: a kernel object refused, and standard attention's score buffers refused. No plan. */
START_TEST(test_plan_creation_faults)
{
    flashcl_problem p = problem();
    fixture f;
    setup(&f, &p, 0);
    clfault_arm("clCreateKernel", CL_OUT_OF_HOST_MEMORY, 0, 1);
    flashcl_status st = flashcl_plan_create(f.ctx, &p, &f.plan);
    expect_failure(&f, st, FLASHCL_OUT_OF_HOST_MEMORY, "clCreateKernel", NULL);
    ck_assert_ptr_null(f.plan);
    clfault_arm(NULL, 0, 0, 0);
    ck_assert_int_eq(flashcl_plan_create(f.ctx, &p, &f.plan), FLASHCL_SUCCESS);
    check_recovers(&f);
    flashcl_plan_destroy(&f.plan);

    if (flashcl_algorithm_available(FLASHCL_ALGO_STANDARD)) {
        clfault_arm("clCreateBuffer", CL_MEM_OBJECT_ALLOCATION_FAILURE, 0, 1);
        st = flashcl_plan_create_algo(f.ctx, &p, FLASHCL_ALGO_STANDARD, &f.plan);
        expect_failure(&f, st, FLASHCL_OUT_OF_DEVICE_MEMORY, "score matrices", "CL_MEM_OBJECT_ALLOCATION_FAILURE");
        ck_assert_ptr_null(f.plan);
        clfault_arm(NULL, 0, 0, 0);
        ck_assert_int_eq(flashcl_plan_create_algo(f.ctx, &p, FLASHCL_ALGO_STANDARD, &f.plan), FLASHCL_SUCCESS);
        check_recovers(&f);
    }
    teardown(&f);
}
END_TEST

/* Context creation: a device query refused. No context, a message; the next creation works. */
START_TEST(test_device_query_refused)
{
    flashcl_settings s;
    flashcl_settings_default(&s);
    s.disk_cache = 0;
    flashcl_context *ctx = NULL;
    clfault_arm("clGetDeviceInfo", CL_OUT_OF_RESOURCES, 2, 1);
    flashcl_status st = flashcl_context_create(tu_context, tu_device, tu_queue, &s, &ctx);
    const char *msg = flashcl_context_last_error(NULL);
    ck_assert_msg(st == FLASHCL_OUT_OF_DEVICE_MEMORY || st == FLASHCL_OPENCL_ERROR, "%s: %s",
                  flashcl_status_name(st), msg);
    ck_assert_ptr_null(ctx);
    ck_assert_int_ge(clfault_fired(), 1);
    ck_assert_msg(strstr(msg, "CL_OUT_OF_RESOURCES") != NULL, "%s", msg);
    printf("  %-27s -> %s: %.160s\n", "clGetDeviceInfo", flashcl_status_name(st), msg);
    clfault_arm(NULL, 0, 0, 0);
    ck_assert_int_eq(flashcl_context_create(tu_context, tu_device, tu_queue, &s, &ctx), FLASHCL_SUCCESS);
    flashcl_context_destroy(&ctx);
}
END_TEST

static Suite *make_suite(void)
{
    Suite *s = suite_create("faults");
    TCase *tc = tcase_create("driver");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, test_launch_refused, 0, 3);
    tcase_add_loop_test(tc, test_validation_faults, 0, 3);
    tcase_add_test(tc, test_plan_creation_faults);
    tcase_add_test(tc, test_device_query_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    clfault_arm = (arm_fn)dlsym(RTLD_DEFAULT, "clfault_arm");
    clfault_fired = (fired_fn)dlsym(RTLD_DEFAULT, "clfault_fired");
    if (!clfault_arm || !clfault_fired) {
        fprintf(stderr, "test_faults: the fault layer is not preloaded (LD_PRELOAD=libclfault.so); skipped\n");
        return 77;
    }
    return tu_run(make_suite, 1);
}
