/* SPDX-License-Identifier: MIT */
/*
 * test_threads.c: one context used from several threads at once: plans created and enqueued
 * concurrently on one queue, and several contexts on one cl_context with a queue each; every result
 * is validated against the naive kernel. And files written at once: the disk cache by two processes
 * and by several threads, the tuning database by several threads: no torn file, no lost entry of the
 * threads' database, no temporary file left behind, and what they wrote loads. Last errors kept per
 * thread, and the override and validation changed while another thread plans.
 */
#include "testutil.h"

#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define THREADS 4
#define ROUNDS 3

typedef struct worker {
    flashcl_context *ctx;
    int index;
    int failures;
    char message[512];
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    cl_context clctx;
    flashcl_context_cl_objects(w->ctx, &clctx, NULL, NULL);
    for (int round = 0; round < ROUNDS; ++round) {
        flashcl_problem p;
        flashcl_problem_default(&p);
        p.heads_q = 2;
        p.heads_kv = 1;
        p.seq_q = 30 + 7 * w->index;
        p.seq_kv = 50 + 11 * round;
        p.head_dim = 16 * (1 + (w->index + round) % 4); /* threads build different programs, and the same */
        p.causal = round % 2;
        flashcl_plan *plan = NULL;
        flashcl_status st = flashcl_plan_create(w->ctx, &p, &plan);
        if (st) {
            snprintf(w->message, sizeof w->message, "plan: %s", flashcl_status_name(st));
            w->failures++;
            continue;
        }
        size_t sz[5];
        flashcl_plan_buffer_sizes(plan, &sz[0], &sz[1], &sz[2], &sz[3], &sz[4]);
        hm_rng rng;
        hm_rng_seed(&rng, (uint64_t)(w->index * 100 + round));
        cl_mem b[4];
        cl_int err = CL_SUCCESS;
        for (int i = 0; i < 4; ++i) {
            float *h = malloc(sz[i]);
            hm_fill_normal(h, FLASHCL_DTYPE_F32, sz[i] / 4, &rng, 1.0);
            b[i] = clCreateBuffer(clctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sz[i], h, &err);
            free(h);
        }
        st = flashcl_plan_enqueue(plan, b[0], b[1], b[2], b[3], NULL, 0, NULL, NULL);
        flashcl_validation rep;
        flashcl_plan_last_validation(plan, &rep);
        if (st || !rep.ran || !rep.passed) {
            snprintf(w->message, sizeof w->message, "enqueue: %s, validation ran %d passed %d", flashcl_status_name(st),
                     rep.ran, rep.passed);
            w->failures++;
        }
        for (int i = 0; i < 4; ++i)
            clReleaseMemObject(b[i]);
        flashcl_plan_destroy(&plan);
    }
    return NULL;
}

static flashcl_context *validating_context(cl_command_queue queue)
{
    flashcl_settings s;
    flashcl_settings_default(&s);
    s.disk_cache = 0;
    s.validate = 1;
    flashcl_context *ctx = NULL;
    ck_assert_int_eq(flashcl_context_create(tu_context, tu_device, queue, &s, &ctx), FLASHCL_SUCCESS);
    return ctx;
}

/* _i = 0: every thread on one context and its queue; 1: a context and a queue per thread. */
START_TEST(test_concurrent_plans)
{
    flashcl_context *shared = validating_context(tu_queue);
    worker w[THREADS];
    cl_command_queue queues[THREADS] = {0};
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; ++i) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].index = i;
        if (_i == 0) {
            w[i].ctx = shared;
        } else {
            cl_int err;
            queues[i] = clCreateCommandQueue(tu_context, tu_device, 0, &err);
            ck_assert_ptr_nonnull(queues[i]);
            w[i].ctx = validating_context(queues[i]);
        }
    }
    for (int i = 0; i < THREADS; ++i)
        ck_assert_int_eq(pthread_create(&t[i], NULL, work, &w[i]), 0);
    for (int i = 0; i < THREADS; ++i)
        pthread_join(t[i], NULL);
    for (int i = 0; i < THREADS; ++i) {
        ck_assert_msg(w[i].failures == 0, "thread %d: %d failures, last: %s", i, w[i].failures, w[i].message);
        if (_i == 1) {
            flashcl_context_destroy(&w[i].ctx);
            clReleaseCommandQueue(queues[i]);
        }
    }
    if (_i == 0) {
        /* The threads built each distinct program once: as many as the same work done in one thread. */
        flashcl_stats concurrent, sequential;
        flashcl_context_stats(shared, &concurrent);
        flashcl_context *alone = validating_context(tu_queue);
        for (int i = 0; i < THREADS; ++i) {
            worker one = {alone, i, 0, ""};
            work(&one);
            ck_assert_int_eq(one.failures, 0);
        }
        flashcl_context_stats(alone, &sequential);
        ck_assert_uint_eq(concurrent.programs_built, sequential.programs_built);
        flashcl_context_destroy(&alone);
    }
    flashcl_context_destroy(&shared);
}
END_TEST

/* Two processes fill one cache directory at the same time; then a third loads it. */
START_TEST(test_two_processes_one_cache)
{
    const char *tool = getenv("FLASHCL_TOOL");
    ck_assert_msg(tool != NULL, "FLASHCL_TOOL is not set");
    char dir[] = "/tmp/flashcl-cache-race-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "for i in 1 2; do FLASHCL_CACHE_DIR=%s FLASHCL_TUNING_DB=/nonexistent '%s' run --device '%s' -n 64 -d 48 "
             "--iters 1 --warmup 0 > /dev/null 2>&1 & done; wait",
             dir, tool, tu_device_label);
    ck_assert_int_eq(system(cmd), 0);
    int bins = 0, temps = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while ((e = readdir(d))) {
        bins += strstr(e->d_name, ".bin") && !strstr(e->d_name, ".tmp");
        temps += strstr(e->d_name, ".tmp") != NULL;
    }
    closedir(d);
    ck_assert_int_ge(bins, 2); /* the flash program and the naive one (validation) */
    ck_assert_int_eq(temps, 0);

    flashcl_settings s;
    flashcl_settings_default(&s);
    s.cache_dir = dir;
    s.disk_cache = 1;
    s.tuning_db_path = "/nonexistent";
    flashcl_context *ctx = NULL;
    ck_assert_int_eq(flashcl_context_create(tu_context, tu_device, tu_queue, &s, &ctx), FLASHCL_SUCCESS);
    flashcl_problem p;
    flashcl_problem_default(&p);
    p.heads_q = p.heads_kv = 8;
    p.seq_q = p.seq_kv = 64;
    p.head_dim = 48;
    flashcl_plan *plan = NULL;
    ck_assert_int_eq(flashcl_plan_create(ctx, &p, &plan), FLASHCL_SUCCESS);
    flashcl_stats st;
    flashcl_context_stats(ctx, &st);
    ck_assert_uint_eq(st.disk_cache_rejected, 0);
    ck_assert_uint_eq(st.programs_built, 0);
    ck_assert_uint_ge(st.programs_from_disk, 1);
    flashcl_plan_destroy(&plan);
    flashcl_context_destroy(&ctx);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* ---- The last error per thread, and the settings changed while other threads use the context ---- */

#define FAIL_ROUNDS 20000

typedef struct failer {
    flashcl_context *ctx;
    int heads_q; /* odd: not a multiple of heads_kv 2, so every plan is refused naming it */
    int wrong;
    char message[512];
} failer;

static void *fail_repeatedly(void *arg)
{
    failer *f = arg;
    char want[64];
    snprintf(want, sizeof want, "problem.heads_q = %d ", f->heads_q);
    flashcl_problem p;
    flashcl_problem_default(&p);
    p.heads_q = f->heads_q;
    p.heads_kv = 2;
    for (int i = 0; i < FAIL_ROUNDS; ++i) {
        flashcl_plan *plan = NULL;
        flashcl_status st = flashcl_plan_create(f->ctx, &p, &plan);
        const char *msg = flashcl_context_last_error(f->ctx);
        int own = st == FLASHCL_INVALID_ARGUMENT && strstr(msg, want) &&
                  flashcl_context_last_cl_error(f->ctx) == CL_SUCCESS;
        if (!own && !f->wrong++)
            snprintf(f->message, sizeof f->message, "round %d: %s: '%.300s'", i, flashcl_status_name(st), msg);
    }
    return NULL;
}

/* Two threads failing on one context at once each read back their own message, every time. */
START_TEST(test_last_error_per_thread)
{
    flashcl_context *ctx = tu_context_create();
    failer f[2] = {{ctx, 5, 0, ""}, {ctx, 7, 0, ""}};
    pthread_t t[2];
    for (int i = 0; i < 2; ++i)
        ck_assert_int_eq(pthread_create(&t[i], NULL, fail_repeatedly, &f[i]), 0);
    for (int i = 0; i < 2; ++i)
        pthread_join(t[i], NULL);
    for (int i = 0; i < 2; ++i)
        ck_assert_msg(f[i].wrong == 0, "thread %d read %d foreign or missing messages; first: %s", i, f[i].wrong,
                      f[i].message);
    /* This thread never failed on ctx. */
    ck_assert_str_eq(flashcl_context_last_error(ctx), "");
    flashcl_context_destroy(&ctx);
}
END_TEST

typedef struct stale_reader {
    flashcl_context *first, *second;
    pthread_barrier_t *barrier;
    char before[512], after[512];
    cl_int after_code;
} stale_reader;

static void *fail_then_read_next(void *arg)
{
    stale_reader *r = arg;
    flashcl_problem p;
    flashcl_problem_default(&p);
    p.heads_q = 5;
    p.heads_kv = 2;
    flashcl_plan *plan = NULL;
    flashcl_plan_create(r->first, &p, &plan);
    snprintf(r->before, sizeof r->before, "%s", flashcl_context_last_error(r->first));
    pthread_barrier_wait(r->barrier); /* the main thread destroys first and makes second */
    pthread_barrier_wait(r->barrier);
    snprintf(r->after, sizeof r->after, "%s", flashcl_context_last_error(r->second));
    r->after_code = flashcl_context_last_cl_error(r->second);
    return NULL;
}

/* A context made after another was destroyed (perhaps at its address) starts without a message in
 * every thread; and a thread failing on more contexts than it keeps records of never reads another
 * context's message. */
START_TEST(test_last_error_lifetimes)
{
    pthread_barrier_t barrier;
    ck_assert_int_eq(pthread_barrier_init(&barrier, NULL, 2), 0);
    stale_reader r = {tu_context_create(), NULL, &barrier, "", "", 0};
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, fail_then_read_next, &r), 0);
    pthread_barrier_wait(&barrier);
    flashcl_problem p;
    flashcl_problem_default(&p);
    p.heads_q = 7;
    p.heads_kv = 2;
    flashcl_plan *plan = NULL;
    ck_assert_int_eq(flashcl_plan_create(r.first, &p, &plan), FLASHCL_INVALID_ARGUMENT);
    flashcl_context_destroy(&r.first);
    r.second = tu_context_create();
    ck_assert_str_eq(flashcl_context_last_error(r.second), "");
    pthread_barrier_wait(&barrier);
    pthread_join(t, NULL);
    pthread_barrier_destroy(&barrier);
    ck_assert_ptr_nonnull(strstr(r.before, "problem.heads_q = 5 "));
    ck_assert_msg(r.after[0] == '\0', "the new context shows '%s'", r.after);
    ck_assert_int_eq(r.after_code, CL_SUCCESS);
    flashcl_context_destroy(&r.second);

    enum { N = 12 };
    flashcl_context *many[N];
    for (int i = 0; i < N; ++i) {
        many[i] = tu_context_create();
        p.heads_q = 2 * i + 101;
        ck_assert_int_eq(flashcl_plan_create(many[i], &p, &plan), FLASHCL_INVALID_ARGUMENT);
    }
    for (int i = 0; i < N; ++i) {
        char want[64];
        snprintf(want, sizeof want, "problem.heads_q = %d ", 2 * i + 101);
        const char *msg = flashcl_context_last_error(many[i]);
        ck_assert_msg(msg[0] == '\0' || strstr(msg, want), "context %d shows '%s'", i, msg);
        if (i >= N - 8) /* the header promises the last eight */
            ck_assert_msg(strstr(msg, want), "context %d lost its message", i);
    }
    for (int i = 0; i < N; ++i)
        flashcl_context_destroy(&many[i]);
}
END_TEST

typedef struct toggler {
    flashcl_context *ctx;
    flashcl_config override;
    atomic_int started, stop;
    long toggles;
} toggler;

static void *toggle_settings(void *arg)
{
    toggler *g = arg;
    atomic_store(&g->started, 1);
    while (!atomic_load(&g->stop)) {
        flashcl_context_override_config(g->ctx, &g->override);
        flashcl_context_set_validation(g->ctx, 1);
        sched_yield();
        flashcl_context_override_config(g->ctx, NULL);
        flashcl_context_set_validation(g->ctx, 0);
        sched_yield();
        ++g->toggles;
    }
    return NULL;
}

static int same_tiles(const flashcl_config *a, const flashcl_config *b)
{
    return a->block_m == b->block_m && a->block_n == b->block_n && a->threads_per_row == b->threads_per_row &&
           a->rows_per_item == b->rows_per_item && a->d_chunk == b->d_chunk && a->v_chunk == b->v_chunk &&
           a->work_group_size == b->work_group_size && cfg_mma(a) == cfg_mma(b) && strcmp(a->source, b->source) == 0;
}

static flashcl_config plan_config(flashcl_context *ctx, const flashcl_problem *p)
{
    flashcl_plan *plan = NULL;
    ck_assert_int_eq(flashcl_plan_create(ctx, p, &plan), FLASHCL_SUCCESS);
    flashcl_config c;
    flashcl_plan_config(plan, &c);
    flashcl_plan_destroy(&plan);
    return c;
}

/* The override and validation change in one thread while another creates and enqueues plans: every
 * plan has either the override's config or the heuristic's, never a mix, and every enqueue works. */
START_TEST(test_settings_while_planning)
{
    flashcl_context *ctx = tu_context_create();
    flashcl_problem p;
    flashcl_problem_default(&p);
    p.heads_q = 4;
    p.heads_kv = 2;
    p.seq_q = 33;
    p.seq_kv = 47;
    p.head_dim = 32;
    toggler g = {.ctx = ctx};
    g.override.block_m = 8;
    g.override.block_n = 16;
    g.override.threads_per_row = 2;
    g.override.rows_per_item = 2;
    g.override.d_chunk = 16;
    g.override.v_chunk = 16;
    const flashcl_config heuristic = plan_config(ctx, &p);
    flashcl_context_override_config(ctx, &g.override);
    const flashcl_config forced = plan_config(ctx, &p);
    flashcl_context_override_config(ctx, NULL);
    ck_assert_str_eq(forced.source, "override");
    ck_assert_msg(!same_tiles(&heuristic, &forced), "pick an override that differs from the heuristic");

    flashcl_plan *plan = NULL;
    ck_assert_int_eq(flashcl_plan_create(ctx, &p, &plan), FLASHCL_SUCCESS);
    size_t sz[5];
    flashcl_plan_buffer_sizes(plan, &sz[0], &sz[1], &sz[2], &sz[3], &sz[4]);
    flashcl_plan_destroy(&plan);
    hm_rng rng;
    hm_rng_seed(&rng, 7);
    cl_mem b[4];
    for (int i = 0; i < 4; ++i) {
        float *h = malloc(sz[i]);
        hm_fill_normal(h, FLASHCL_DTYPE_F32, sz[i] / 4, &rng, 1.0);
        b[i] = tu_buffer(sz[i], h);
        free(h);
    }

    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, toggle_settings, &g), 0);
    while (!atomic_load(&g.started))
        sched_yield();
    /* Until both configs came often enough (with two busy cores the toggler may run seldom). */
    int seen[2] = {0, 0}, validated = 0, round = 0;
    for (; round < 3000 && (seen[0] < 20 || seen[1] < 20); ++round) {
        sched_yield();
        flashcl_status st = flashcl_plan_create(ctx, &p, &plan);
        ck_assert_msg(st == FLASHCL_SUCCESS, "round %d: %s", round, flashcl_context_last_error(ctx));
        flashcl_config c;
        flashcl_plan_config(plan, &c);
        int is_override = same_tiles(&c, &forced);
        ck_assert_msg(is_override || same_tiles(&c, &heuristic),
                      "round %d: a config that is neither: %s block_m %d block_n %d tpr %d rows %d", round, c.source,
                      c.block_m, c.block_n, c.threads_per_row, c.rows_per_item);
        seen[is_override]++;
        st = flashcl_plan_enqueue(plan, b[0], b[1], b[2], b[3], NULL, 0, NULL, NULL);
        ck_assert_msg(st == FLASHCL_SUCCESS, "round %d: enqueue: %s", round, flashcl_context_last_error(ctx));
        flashcl_validation rep;
        flashcl_plan_last_validation(plan, &rep);
        ck_assert_msg(!rep.ran || rep.passed, "round %d: validation failed", round);
        validated += rep.ran;
        flashcl_plan_destroy(&plan);
    }
    atomic_store(&g.stop, 1);
    pthread_join(t, NULL);
    ck_assert_int_eq(clFinish(tu_queue), CL_SUCCESS);
    printf("  settings toggled %ld times: %d plans with the override, %d with the heuristic, %d enqueues validated\n",
           g.toggles, seen[1], seen[0], validated);
    ck_assert_msg(seen[0] && seen[1], "the settings never changed between two plans in %d rounds", round);
    for (int i = 0; i < 4; ++i)
        clReleaseMemObject(b[i]);
    flashcl_context_destroy(&ctx);
}
END_TEST

/* Names in dir: how many end in `suffix` (temporaries excluded), and how many are temporaries. */
static void count_files(const char *dir, const char *suffix, int *whole, int *temps)
{
    *whole = *temps = 0;
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    struct dirent *e;
    while ((e = readdir(d))) {
        const int temp = strstr(e->d_name, ".tmp") != NULL;
        *temps += temp;
        *whole += !temp && strstr(e->d_name, suffix) != NULL;
    }
    closedir(d);
}

typedef struct cache_writer {
    const char *dir;
    pthread_barrier_t *start;
    flashcl_status status;
    flashcl_stats stats;
} cache_writer;

static void *write_cache(void *arg)
{
    cache_writer *w = arg;
    flashcl_settings s;
    flashcl_settings_default(&s);
    s.cache_dir = w->dir;
    s.disk_cache = 1;
    s.validate = 0;
    s.tuning_db = 0;
    flashcl_context *ctx = NULL;
    w->status = flashcl_context_create(tu_context, tu_device, tu_queue, &s, &ctx);
    pthread_barrier_wait(w->start); /* every context exists: the compiles and writes start together */
    if (w->status)
        return NULL;
    flashcl_problem p;
    flashcl_problem_default(&p);
    p.seq_q = p.seq_kv = 40;
    p.head_dim = 40;
    flashcl_plan *plan = NULL;
    w->status = flashcl_plan_create(ctx, &p, &plan);
    flashcl_context_stats(ctx, &w->stats);
    flashcl_plan_destroy(&plan);
    flashcl_context_destroy(&ctx);
    return NULL;
}

/* Contexts in several threads compile the same programs into one cache directory at once: each entry
 * is written by every thread, through its own temporary file; the one that stays is whole. */
START_TEST(test_threads_one_cache)
{
    char dir[] = "/tmp/flashcl-cache-threads-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    cache_writer w[THREADS];
    pthread_t t[THREADS];
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, THREADS);
    for (int i = 0; i < THREADS; ++i) {
        w[i] = (cache_writer){.dir = dir, .start = &start};
        ck_assert_int_eq(pthread_create(&t[i], NULL, write_cache, &w[i]), 0);
    }
    for (int i = 0; i < THREADS; ++i)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&start);
    uint64_t written = 0;
    for (int i = 0; i < THREADS; ++i) {
        ck_assert_int_eq(w[i].status, FLASHCL_SUCCESS);
        ck_assert_uint_eq(w[i].stats.disk_cache_write_failures, 0);
        written += w[i].stats.disk_cache_writes;
    }
    int bins, temps;
    count_files(dir, ".bin", &bins, &temps);
    ck_assert_int_ge(bins, 1);
    ck_assert_int_eq(temps, 0);
    printf("  %d threads wrote %llu cache entries into %d files\n", THREADS, (unsigned long long)written, bins);

    /* What stayed loads: nothing rejected, nothing compiled. */
    cache_writer check = {.dir = dir, .start = &start};
    pthread_barrier_init(&start, NULL, 1);
    write_cache(&check);
    pthread_barrier_destroy(&start);
    ck_assert_int_eq(check.status, FLASHCL_SUCCESS);
    ck_assert_uint_eq(check.stats.disk_cache_rejected, 0);
    ck_assert_uint_eq(check.stats.programs_built, 0);
    /* (the directory also holds the device probes' results where the device has them: NVIDIA's static
     * local memory and sm_90a probes, two entries that are not programs) */
    ck_assert_uint_ge(check.stats.programs_from_disk, 1);
    ck_assert_uint_le(check.stats.programs_from_disk, (uint64_t)bins);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

#define STORE_THREADS 8
#define STORE_ROUNDS 25

typedef struct db_writer {
    const char *path;
    int index;
    int failures;
    char message[512];
} db_writer;

static void *store_entries(void *arg)
{
    db_writer *w = arg;
    flashcl_device_profile pr;
    memset(&pr, 0, sizeof pr);
    pr.vendor = FLASHCL_VENDOR_POCL;
    strcpy(pr.name, "thread test device");
    flashcl_problem p;
    flashcl_problem_default(&p);
    p.head_dim = 8 * (w->index + 1); /* one key per thread; each thread replaces its own entry */
    flashcl_config c = {.block_n = 16, .threads_per_row = 4, .rows_per_item = 1, .d_chunk = 8, .v_chunk = 8};
    for (int round = 1; round <= STORE_ROUNDS; ++round) {
        c.block_m = round;
        if (flashcl_tuning_db_store(w->path, &pr, &p, &c, "test_threads") != FLASHCL_SUCCESS) {
            w->failures++;
            snprintf(w->message, sizeof w->message, "%s", flashcl_context_last_error(NULL));
        }
    }
    return NULL;
}

/* Threads of one process store into one tuning database at once: every store works, the file is whole,
 * holds each thread's last entry (none lost), and no temporary file is left. */
START_TEST(test_threads_one_tuning_db)
{
    char dir[] = "/tmp/flashcl-tuning-threads-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char sub[64], path[96];
    snprintf(sub, sizeof sub, "%s/sub", dir);
    snprintf(path, sizeof path, "%s/tuning.db", sub);
    db_writer w[STORE_THREADS];
    pthread_t t[STORE_THREADS];
    for (int i = 0; i < STORE_THREADS; ++i) {
        w[i] = (db_writer){.path = path, .index = i};
        ck_assert_int_eq(pthread_create(&t[i], NULL, store_entries, &w[i]), 0);
    }
    for (int i = 0; i < STORE_THREADS; ++i)
        pthread_join(t[i], NULL);
    for (int i = 0; i < STORE_THREADS; ++i)
        ck_assert_msg(w[i].failures == 0, "thread %d: %d stores failed: %s", i, w[i].failures, w[i].message);
    int files, temps;
    count_files(sub, "tuning.db", &files, &temps);
    ck_assert_int_eq(files, 1);
    ck_assert_int_eq(temps, 0);

    flashcl_tuning_db *db = NULL;
    ck_assert_int_eq(flashcl_tuning_db_load(path, 0, &db), FLASHCL_SUCCESS);
    ck_assert_str_eq(flashcl_tuning_db_warnings(db), "");
    ck_assert_uint_eq(flashcl_tuning_db_size(db), STORE_THREADS);
    flashcl_tuning_db_destroy(&db);
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    char text[16384];
    const size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    for (int i = 0; i < STORE_THREADS; ++i) {
        char key[32], last[32];
        snprintf(key, sizeof key, " head_dim=%d ", 8 * (i + 1));
        snprintf(last, sizeof last, " block_m=%d ", STORE_ROUNDS);
        const char *line = strstr(text, key);
        ck_assert_msg(line != NULL, "thread %d's entry is missing:\n%s", i, text);
        const char *end = strchr(line, '\n');
        ck_assert_msg(end && strstr(line, last) && strstr(line, last) < end, "thread %d's last entry: %.200s", i,
                      line);
    }
    unlink(path);
    rmdir(sub);
    rmdir(dir);
}
END_TEST

static Suite *make_suite(void)
{
    Suite *s = suite_create("threads");
    TCase *tc = tcase_create("threads");
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, test_concurrent_plans, 0, 2);
    tcase_add_test(tc, test_two_processes_one_cache);
    tcase_add_test(tc, test_last_error_per_thread);
    tcase_add_test(tc, test_last_error_lifetimes);
    tcase_add_test(tc, test_settings_while_planning);
    tcase_add_test(tc, test_threads_one_cache);
    tcase_add_test(tc, test_threads_one_tuning_db);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run(make_suite, 1);
}
