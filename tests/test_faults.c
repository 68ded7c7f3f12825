/* SPDX-License-Identifier: MIT */
/*
 * test_faults.c: what the caller gets when the driver fails. The fault layer (tests/fault/clfault.c,
 * preloaded) makes one OpenCL call return an error: a kernel launch refused (CL_OUT_OF_RESOURCES, as a
 * lost or overloaded queue gives), an allocation refused (CL_MEM_OBJECT_ALLOCATION_FAILURE), a kernel
 * that cannot be created, a read-back that fails. Each must come back as a status and a message that
 * names the call; nothing may be half-done (no plan, no event), and the same plan or context must work
 * again, correctly, once the fault is gone. And a compile held in the layer for as long as a test needs:
 * meanwhile other plans on the same context are created and run (compiles hold no lock), and threads
 * waiting for a build that fails all get its log. Without the layer (sanitizer builds) the suite skips.
 */
#define _GNU_SOURCE
#include "testutil.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef void (*arm_fn)(const char *fn, cl_int err, int skip, int count);
typedef int (*fired_fn)(void);
typedef void (*hold_fn)(int max_ms);
typedef void (*release_fn)(void);
static arm_fn clfault_arm;
static fired_fn clfault_fired;
static hold_fn clfault_hold_build;
static release_fn clfault_release_build;
static fired_fn clfault_build_state;
static fired_fn clfault_build_count;
typedef void (*fake_gpu_fn)(int on);
typedef void (*fake_private_fn)(unsigned long bytes, int count);
static fake_gpu_fn clfault_fake_gpu;
static fake_private_fn clfault_fake_private;

enum { BUILD_NOT_REACHED, BUILD_HELD, BUILD_RELEASED, BUILD_TIMED_OUT };

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

/* A plan created in a thread of its own: what it got, and the message and OpenCL code it read right
 * after (the last error is per thread). */
typedef struct plan_job {
    flashcl_context *ctx;
    flashcl_problem problem;
    flashcl_plan *plan;
    flashcl_status status;
    cl_int cl_error;
    char message[8192];
} plan_job;

static void *create_plan(void *arg)
{
    plan_job *job = arg;
    job->status = flashcl_plan_create(job->ctx, &job->problem, &job->plan);
    if (job->status) {
        snprintf(job->message, sizeof job->message, "%s", flashcl_context_last_error(job->ctx));
        job->cl_error = flashcl_context_last_cl_error(job->ctx);
    }
    return NULL;
}

/* Waits (1 ms steps, at most max_ms) until the held build is reached; returns the layer's state. */
static int wait_for_held_build(int max_ms)
{
    const struct timespec ms = {0, 1000000};
    for (int waited = 0; clfault_build_state() == BUILD_NOT_REACHED && waited < max_ms; ++waited)
        nanosleep(&ms, NULL);
    return clfault_build_state();
}

/* One plan's compile, held in the layer, does not stop another plan on the same context from being
 * created from the cached program, enqueued and finished: B's whole run happens while A's build is
 * still held (ordering, not timing: the layer lets A's build go only when the test says so, or after
 * two minutes, when the library made B wait for it and the test fails). */
/* A plan on `p` (path `path`), its config, and a validated run (the shrunk kernel is still right). */
static flashcl_config plan_config(const flashcl_problem *p, flashcl_path path)
{
    flashcl_settings s;
    flashcl_settings_default(&s);
    s.disk_cache = 0;
    s.validate = 1;
    s.path = path;
    fixture f;
    memset(&f, 0, sizeof f);
    ck_assert_int_eq(flashcl_context_create(tu_context, tu_device, tu_queue, &s, &f.ctx), FLASHCL_SUCCESS);
    ck_assert_msg(flashcl_plan_create(f.ctx, p, &f.plan) == FLASHCL_SUCCESS, "%s", flashcl_context_last_error(f.ctx));
    const size_t nq = (size_t)p->seq_q * p->heads_q * p->head_dim, nk = (size_t)p->seq_kv * p->heads_kv * p->head_dim;
    float *host = malloc((nq > nk ? nq : nk) * sizeof(float));
    hm_rng rng;
    hm_rng_seed(&rng, 11);
    cl_mem *in[3] = {&f.q, &f.k, &f.v};
    for (int i = 0; i < 3; ++i) {
        hm_fill_normal(host, FLASHCL_DTYPE_F32, i ? nk : nq, &rng, 1.0);
        *in[i] = tu_buffer((i ? nk : nq) * sizeof(float), host);
    }
    free(host);
    f.o = tu_buffer(nq * sizeof(float), NULL);
    f.lse = tu_buffer((size_t)p->seq_q * p->heads_q * sizeof(float), NULL);
    ck_assert_msg(flashcl_plan_enqueue(f.plan, f.q, f.k, f.v, f.o, f.lse, 0, NULL, NULL) == FLASHCL_SUCCESS, "%s",
                  flashcl_context_last_error(f.ctx));
    flashcl_validation r;
    flashcl_plan_last_validation(f.plan, &r);
    ck_assert(r.ran && r.passed && r.rows_checked > 0);
    flashcl_config c;
    flashcl_plan_config(f.plan, &c);
    teardown(&f);
    return c;
}

/* The decode kernel's register block: 8 floats of each packed row's Q and output and of each key's K
 * and V a step, and the rows x keys scores (src/kernels/decode.c). */
static long decode_block(const flashcl_config *c)
{
    return 8L * (2 * c->block_m + 2 * c->keys_per_step) + (long)c->block_m * c->keys_per_step;
}

/* A GPU compiler that kept a kernel's register block in private memory (CL_KERNEL_PRIVATE_MEM_SIZE > 0,
 * faked here): the plan asks the chooser for a smaller block, says why in the config, and runs right;
 * always reported, it stops at the smallest; a CPU's report (its stack frame) changes nothing. For the
 * decode kernel (rows x keys a step) and the portable kernel (output and score block). */
START_TEST(test_private_memory_shrinks)
{
    flashcl_problem d;
    flashcl_problem_default(&d);
    d.heads_q = 16;
    d.heads_kv = 2; /* 8 packed rows */
    d.seq_q = 1;
    d.seq_kv = 300;
    d.head_dim = 64;
    d.return_lse = 1;
    flashcl_problem pf = problem();
    const struct {
        const flashcl_problem *p;
        flashcl_path path;
    } cases[2] = {{&d, FLASHCL_PATH_DECODE}, {&pf, FLASHCL_PATH_PORTABLE}};
    for (int i = 0; i < 2; ++i) {
        clfault_fake_private(4096, 1000); /* a CPU: its report does not count */
        const flashcl_config c0 = plan_config(cases[i].p, cases[i].path);
        ck_assert_ptr_null(strstr(c0.reason, "private memory"));
        clfault_fake_gpu(1);
        clfault_fake_private(512, 2); /* the first builds of each plan only (rusticl shrinks a work-group first) */
        const flashcl_config c1 = plan_config(cases[i].p, cases[i].path);
        ck_assert_msg(strstr(c1.reason, "512 B of private memory"), "%s", c1.reason);
        ck_assert_str_eq(c1.kernel_name, c0.kernel_name);
        if (i == 0)
            ck_assert(decode_block(&c1) < decode_block(&c0));
        else
            ck_assert(c1.rows_per_item * (c1.block_n + 64) / c1.threads_per_row <
                      c0.rows_per_item * (c0.block_n + 64) / c0.threads_per_row);
        clfault_fake_private(512, 1000); /* every build: down to the smallest block, then kept */
        const flashcl_config c3 = plan_config(cases[i].p, cases[i].path);
        ck_assert_str_eq(c3.kernel_name, c0.kernel_name);
        printf("  %s: %dx%d (%d rows/item) -> %dx%d (%d) -> %dx%d (%d)\n", c0.kernel_name, c0.block_m, c0.v_chunk,
               c0.rows_per_item, c1.block_m, c1.v_chunk, c1.rows_per_item, c3.block_m, c3.v_chunk, c3.rows_per_item);
        clfault_fake_gpu(0);
        clfault_fake_private(0, -1);
    }
}
END_TEST

START_TEST(test_compile_does_not_block)
{
    flashcl_problem pb = problem();
    fixture f;
    setup(&f, &pb, 0);
    ck_assert_int_eq(flashcl_plan_create(f.ctx, &pb, &f.plan), FLASHCL_SUCCESS); /* B's program, cached */
    flashcl_plan_destroy(&f.plan);
    flashcl_stats before, after;
    flashcl_context_stats(f.ctx, &before);

    plan_job a = {.ctx = f.ctx, .problem = problem()};
    a.problem.head_dim = 64; /* another program: a new compile */
    clfault_hold_build(120000);
    pthread_t ta;
    ck_assert_int_eq(pthread_create(&ta, NULL, create_plan, &a), 0);
    const int reached = wait_for_held_build(120000);

    flashcl_status st = flashcl_plan_create(f.ctx, &pb, &f.plan);
    if (st == FLASHCL_SUCCESS)
        st = flashcl_plan_enqueue(f.plan, f.q, f.k, f.v, f.o, f.lse, 0, NULL, NULL);
    if (st == FLASHCL_SUCCESS && clFinish(tu_queue) != CL_SUCCESS)
        st = FLASHCL_OPENCL_ERROR;
    const int while_b_finished = clfault_build_state();
    flashcl_context_stats(f.ctx, &after);

    clfault_release_build();
    pthread_join(ta, NULL);
    ck_assert_msg(reached == BUILD_HELD, "plan A never reached a compile (state %d)", reached);
    ck_assert_msg(st == FLASHCL_SUCCESS, "plan B: %s", flashcl_context_last_error(f.ctx));
    ck_assert_msg(while_b_finished == BUILD_HELD,
                  "plan B finished only after A's compile was let go (state %d): B waited for A's compile",
                  while_b_finished);
    ck_assert_int_eq(clfault_build_state(), BUILD_RELEASED);
    ck_assert_msg(a.status == FLASHCL_SUCCESS, "plan A: %s", a.message);
    ck_assert_uint_eq(after.programs_built, before.programs_built); /* B compiled nothing ... */
    ck_assert_uint_gt(after.program_cache_hits, before.program_cache_hits); /* ... it was served */
    flashcl_context_stats(f.ctx, &after);
    ck_assert_uint_gt(after.programs_built, before.programs_built); /* A's compile counted */
    printf("  plan B created, enqueued and finished while plan A's compile was held\n");
    flashcl_plan_destroy(&a.plan);
    teardown(&f);
}
END_TEST

/* A build that fails, held while a second thread asks for the same program: both get BUILD_FAILED and
 * the compiler's log (the second one either waited for the first's build or, arriving late, built
 * itself; the layer counts the builds, which says which). The next plan tries again. */
START_TEST(test_failed_build_reaches_waiters)
{
    flashcl_settings s;
    flashcl_settings_default(&s);
    s.disk_cache = 0;
    s.extra_build_options = "-DFLASHCL_DEBUG_SCALE=this_identifier_does_not_exist";
    flashcl_context *ctx = NULL;
    ck_assert_int_eq(flashcl_context_create(tu_context, tu_device, tu_queue, &s, &ctx), FLASHCL_SUCCESS);
    plan_job jobs[2] = {{.ctx = ctx, .problem = problem()}, {.ctx = ctx, .problem = problem()}};
    pthread_t t[2];
    clfault_hold_build(120000);
    ck_assert_int_eq(pthread_create(&t[0], NULL, create_plan, &jobs[0]), 0);
    ck_assert_int_eq(wait_for_held_build(120000), BUILD_HELD);
    ck_assert_int_eq(pthread_create(&t[1], NULL, create_plan, &jobs[1]), 0);
    const struct timespec settle = {0, 300 * 1000000}; /* time for the second to start waiting; not asserted */
    nanosleep(&settle, NULL);
    clfault_release_build();
    for (int i = 0; i < 2; ++i) {
        pthread_join(t[i], NULL);
        ck_assert_msg(jobs[i].status == FLASHCL_BUILD_FAILED, "thread %d: %s: %s", i,
                      flashcl_status_name(jobs[i].status), jobs[i].message);
        ck_assert_msg(strstr(jobs[i].message, "building flash_fwd.cl") != NULL, "%s", jobs[i].message);
        ck_assert_msg(strstr(jobs[i].message, "this_identifier_does_not_exist") != NULL, "%s", jobs[i].message);
        ck_assert_ptr_null(jobs[i].plan);
        ck_assert_int_eq(jobs[i].cl_error, CL_BUILD_PROGRAM_FAILURE); /* each thread reads its own code */
    }
    ck_assert_int_eq(flashcl_context_last_cl_error(ctx), CL_SUCCESS); /* this thread never failed on ctx */
    printf("  both threads got the build log (the second %s)\n",
           clfault_build_count() == 1 ? "waited for the first's build" : "built again");
    plan_job again = {.ctx = ctx, .problem = problem()};
    create_plan(&again);
    ck_assert_int_eq(again.status, FLASHCL_BUILD_FAILED); /* tried again, not a remembered failure */
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
    tcase_add_test(tc, test_private_memory_shrinks);
    tcase_add_test(tc, test_compile_does_not_block);
    tcase_add_test(tc, test_failed_build_reaches_waiters);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    clfault_arm = (arm_fn)dlsym(RTLD_DEFAULT, "clfault_arm");
    clfault_fired = (fired_fn)dlsym(RTLD_DEFAULT, "clfault_fired");
    clfault_hold_build = (hold_fn)dlsym(RTLD_DEFAULT, "clfault_hold_build");
    clfault_release_build = (release_fn)dlsym(RTLD_DEFAULT, "clfault_release_build");
    clfault_build_state = (fired_fn)dlsym(RTLD_DEFAULT, "clfault_build_state");
    clfault_build_count = (fired_fn)dlsym(RTLD_DEFAULT, "clfault_build_count");
    clfault_fake_gpu = (fake_gpu_fn)dlsym(RTLD_DEFAULT, "clfault_fake_gpu");
    clfault_fake_private = (fake_private_fn)dlsym(RTLD_DEFAULT, "clfault_fake_private");
    if (!clfault_arm || !clfault_fired || !clfault_hold_build || !clfault_release_build || !clfault_build_state ||
        !clfault_build_count || !clfault_fake_gpu || !clfault_fake_private) {
        fprintf(stderr, "test_faults: the fault layer is not preloaded (LD_PRELOAD=libclfault.so); skipped\n");
        return 77;
    }
    return tu_run(make_suite, 1);
}
