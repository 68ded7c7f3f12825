/* SPDX-License-Identifier: MIT */
/*
 * test_cache.c: the program caches. A second plan of the same shape does not recompile (memory
 * cache); a new context on the same cache directory loads binaries instead of compiling (disk
 * cache); a torn or corrupt cache file is detected, rebuilt and rewritten, never loaded; the disk
 * cache can be turned off; program blobs saved from one context load into another, whose plans then
 * compile nothing and compute the same bits, and damaged or foreign blobs load nothing.
 */
#include "testutil.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char cache_dir[256];

static void make_cache_dir(void)
{
    snprintf(cache_dir, sizeof cache_dir, "/tmp/flashcl-test-cache-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(cache_dir));
}

static void remove_cache_dir(void)
{
    DIR *d = opendir(cache_dir);
    if (d) {
        struct dirent *e;
        char path[600];
        while ((e = readdir(d)))
            if (e->d_name[0] != '.') {
                snprintf(path, sizeof path, "%s/%s", cache_dir, e->d_name);
                unlink(path);
            }
        closedir(d);
    }
    rmdir(cache_dir);
}

static flashcl_context *context_with_cache(int disk)
{
    flashcl_settings s;
    flashcl_settings_default(&s);
    s.disk_cache = disk;
    s.cache_dir = cache_dir;
    s.validate = 0;
    flashcl_context *ctx = NULL;
    ck_assert_int_eq(flashcl_context_create(tu_context, tu_device, tu_queue, &s, &ctx), FLASHCL_SUCCESS);
    return ctx;
}

static flashcl_problem problem(void)
{
    flashcl_problem p;
    flashcl_problem_default(&p);
    p.seq_q = p.seq_kv = 64;
    p.head_dim = 24;
    return p;
}

static flashcl_stats plan_once(flashcl_context *ctx)
{
    flashcl_problem p = problem();
    flashcl_plan *plan = NULL;
    flashcl_status st = flashcl_plan_create(ctx, &p, &plan);
    ck_assert_msg(st == FLASHCL_SUCCESS, "%s", flashcl_context_last_error(ctx));
    flashcl_plan_destroy(&plan);
    flashcl_stats s;
    flashcl_context_stats(ctx, &s);
    return s;
}

static int count_files(void)
{
    int n = 0;
    DIR *d = opendir(cache_dir);
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += strstr(e->d_name, ".bin") != NULL && strstr(e->d_name, ".tmp") == NULL;
    closedir(d);
    return n;
}

/* One enqueue of a plan of p on fixed inputs; the output's bytes (the caller frees them). */
static unsigned char *run_once(flashcl_context *ctx, const flashcl_problem *p, size_t *o_bytes)
{
    flashcl_plan *plan = NULL;
    ck_assert_int_eq(flashcl_plan_create(ctx, p, &plan), FLASHCL_SUCCESS);
    size_t sz[5];
    flashcl_plan_buffer_sizes(plan, &sz[0], &sz[1], &sz[2], &sz[3], &sz[4]);
    const size_t n = sz[0] > sz[1] ? sz[0] : sz[1];
    float *host = malloc(n);
    for (size_t i = 0; i < n / 4; ++i)
        host[i] = (float)((i * 2654435761u) % 1000) / 500.0f - 1.0f;
    cl_mem q = tu_buffer(sz[0], host), k = tu_buffer(sz[1], host), v = tu_buffer(sz[2], host), o = tu_buffer(sz[3], NULL);
    ck_assert_int_eq(flashcl_plan_enqueue(plan, q, k, v, o, NULL, 0, NULL, NULL), FLASHCL_SUCCESS);
    unsigned char *out = tu_read(o, sz[3]);
    *o_bytes = sz[3];
    cl_mem all[4] = {q, k, v, o};
    for (int i = 0; i < 4; ++i)
        clReleaseMemObject(all[i]);
    free(host);
    flashcl_plan_destroy(&plan);
    return out;
}

/* A context's programs as a blob, into a second context (no disk cache): its plans build nothing, load
 * from the blob, and compute the same output bit for bit. The size query, a buffer too small. */
START_TEST(test_program_blob)
{
    flashcl_context *a = context_with_cache(0);
    flashcl_problem p1 = problem(), p2 = problem();
    p2.causal = 1;
    p2.head_dim = 32;
    const flashcl_problem both[2] = {p1, p2};
    ck_assert_int_eq(flashcl_context_precompile(a, both, 2), FLASHCL_SUCCESS);
    flashcl_stats sa;
    flashcl_context_stats(a, &sa);
    ck_assert_uint_ge(sa.programs_built, 2);
    size_t ob1 = 0, ob2 = 0;
    unsigned char *ref1 = run_once(a, &p1, &ob1), *ref2 = run_once(a, &p2, &ob2);
    flashcl_stats sa2;
    flashcl_context_stats(a, &sa2);
    ck_assert_uint_eq(sa2.programs_built, sa.programs_built); /* precompiled: nothing built by the plans */

    size_t size = 0;
    ck_assert_int_eq(flashcl_context_save_programs(a, NULL, &size), FLASHCL_SUCCESS);
    ck_assert_uint_gt(size, 64);
    unsigned char *blob = malloc(size);
    size_t small = size - 1;
    ck_assert_int_eq(flashcl_context_save_programs(a, blob, &small), FLASHCL_BUFFER_TOO_SMALL);
    ck_assert_uint_eq(small, size);
    ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(a), "the blob is"));
    size_t got = size;
    ck_assert_int_eq(flashcl_context_save_programs(a, blob, &got), FLASHCL_SUCCESS);
    ck_assert_uint_eq(got, size);

    flashcl_context *b = context_with_cache(0);
    size_t loaded = 0;
    ck_assert_int_eq(flashcl_context_load_programs(b, blob, size, &loaded), FLASHCL_SUCCESS);
    ck_assert_uint_eq(loaded, sa.programs_built);
    size_t again = 99;
    ck_assert_int_eq(flashcl_context_load_programs(b, blob, size, &again), FLASHCL_SUCCESS);
    ck_assert_uint_eq(again, 0); /* already there */
    size_t b1 = 0, b2 = 0;
    unsigned char *out1 = run_once(b, &p1, &b1), *out2 = run_once(b, &p2, &b2);
    flashcl_stats sb;
    flashcl_context_stats(b, &sb);
    ck_assert_uint_eq(sb.programs_built, 0);
    ck_assert_uint_eq(sb.programs_from_blob, loaded);
    ck_assert_uint_ge(sb.program_cache_hits, 2);
    ck_assert(b1 == ob1 && b2 == ob2);
    ck_assert_int_eq(memcmp(out1, ref1, ob1), 0);
    ck_assert_int_eq(memcmp(out2, ref2, ob2), 0);
    free(out1);
    free(out2);
    free(ref1);
    free(ref2);
    free(blob);
    flashcl_context_destroy(&b);
    flashcl_context_destroy(&a);
}
END_TEST

/* Blobs that are not right load nothing and say why: not a blob, cut short (in its header and in a
 * program), another device's, a program of other kernel sources (skipped, the rest loaded); NULL
 * arguments; precompile names the problem that fails. */
START_TEST(test_program_blob_refused)
{
    flashcl_context *a = context_with_cache(0);
    flashcl_problem p = problem();
    ck_assert_int_eq(flashcl_context_precompile(a, &p, 1), FLASHCL_SUCCESS);
    size_t size = 0;
    ck_assert_int_eq(flashcl_context_save_programs(a, NULL, &size), FLASHCL_SUCCESS);
    unsigned char *blob = malloc(size), *bad = malloc(size);
    ck_assert_int_eq(flashcl_context_save_programs(a, blob, &size), FLASHCL_SUCCESS);
    const size_t magic = strlen("FLASHCL-PROGRAMS 1\n");
    uint32_t id_len;
    memcpy(&id_len, blob + magic, 4);
    const size_t first_key = magic + 4 + id_len + 4; /* the first program's key length */
    uint32_t key_len;
    memcpy(&key_len, blob + first_key, 4);
    const size_t first_hash = first_key + 4 + key_len;

    flashcl_context *b = context_with_cache(0);
    size_t loaded = 7;
    static const struct {
        size_t cut;            /* load this many bytes (0: all) */
        size_t flip;           /* flip a byte here (0: none) */
        flashcl_status expect;
        const char *word;
    } cases[] = {
        {0, 1, FLASHCL_INVALID_ARGUMENT, "not a flashcl program blob"},
        {0, 0, FLASHCL_UNSUPPORTED, "this context's device is"}, /* (the identity's first byte, below) */
        {10, 0, FLASHCL_INVALID_ARGUMENT, "not a flashcl program blob"},
        {0, 0, FLASHCL_INVALID_ARGUMENT, "cut short"}, /* (the header: cut below) */
        {0, 0, FLASHCL_INVALID_ARGUMENT, "cut short or damaged in program 1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
        memcpy(bad, blob, size);
        size_t n = cases[i].cut ? cases[i].cut : size;
        if (cases[i].flip)
            bad[cases[i].flip] ^= 0x20;
        if (i == 1)
            bad[magic + 4] ^= 0x01;
        if (i == 3)
            n = magic + 4 + id_len - 1;
        if (i == 4)
            n = first_hash + 3;
        ck_assert_int_eq(flashcl_context_load_programs(b, bad, n, &loaded), cases[i].expect);
        ck_assert_msg(strstr(flashcl_context_last_error(b), cases[i].word) != NULL, "case %zu: %s", i,
                      flashcl_context_last_error(b));
        ck_assert_uint_eq(loaded, 0);
    }
    /* the first program's source hash changed: skipped, not an error */
    memcpy(bad, blob, size);
    bad[first_hash] ^= 0x01;
    ck_assert_int_eq(flashcl_context_load_programs(b, bad, size, &loaded), FLASHCL_SUCCESS);
    uint32_t count;
    memcpy(&count, blob + magic + 4 + id_len, 4);
    ck_assert_uint_eq(loaded, count - 1);
    ck_assert_int_eq(flashcl_context_load_programs(b, NULL, size, &loaded), FLASHCL_INVALID_ARGUMENT);
    ck_assert_int_eq(flashcl_context_load_programs(NULL, blob, size, NULL), FLASHCL_INVALID_ARGUMENT);
    ck_assert_int_eq(flashcl_context_save_programs(a, blob, NULL), FLASHCL_INVALID_ARGUMENT);
    /* precompile names the problem that fails */
    flashcl_problem two[2] = {p, p};
    two[1].head_dim = 0;
    ck_assert_int_ne(flashcl_context_precompile(a, two, 2), FLASHCL_SUCCESS);
    ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(a), "problems[1]"));
    ck_assert_int_eq(flashcl_context_precompile(a, NULL, 1), FLASHCL_INVALID_ARGUMENT);
    ck_assert_int_eq(flashcl_context_precompile(a, NULL, 0), FLASHCL_SUCCESS);
    free(blob);
    free(bad);
    flashcl_context_destroy(&b);
    flashcl_context_destroy(&a);
}
END_TEST

START_TEST(test_memory_cache)
{
    make_cache_dir();
    flashcl_context *ctx = context_with_cache(0);
    flashcl_stats a = plan_once(ctx);
    ck_assert_uint_ge(a.programs_built, 1); /* more than 1 when the plan had to shrink its tiles */
    flashcl_stats b = plan_once(ctx);
    ck_assert_uint_eq(b.programs_built, a.programs_built); /* not again */
    ck_assert_uint_ge(b.program_cache_hits, 1);
    ck_assert_ptr_null(flashcl_context_cache_dir(ctx));
    ck_assert_int_eq(count_files(), 0); /* disk cache off: nothing written */
    flashcl_context_destroy(&ctx);
    remove_cache_dir();
}
END_TEST

START_TEST(test_disk_cache)
{
    make_cache_dir();
    flashcl_context *first = context_with_cache(1);
    ck_assert_str_eq(flashcl_context_cache_dir(first), cache_dir);
    /* The device profile's own entries (NVIDIA's static local memory probe), written before any plan. */
    const int profile_files = count_files();
    flashcl_stats a = plan_once(first);
    const uint64_t n = a.programs_built;
    ck_assert_uint_ge(n, 1);
    ck_assert_uint_eq(a.disk_cache_writes, n);
    ck_assert_int_eq(count_files(), profile_files + (int)n);
    flashcl_context_destroy(&first);

    flashcl_context *second = context_with_cache(1);
    flashcl_stats b = plan_once(second);
    ck_assert_uint_eq(b.programs_built, 0);
    ck_assert_uint_eq(b.programs_from_disk, n);
    flashcl_context_destroy(&second);
    remove_cache_dir();
}
END_TEST

/* Every way a file can be bad: truncated, a flipped byte in the binary, another key, garbage. */
START_TEST(test_corrupt_file_rebuilt)
{
    make_cache_dir();
    flashcl_context *first = context_with_cache(1);
    const uint64_t n = plan_once(first).programs_built;
    flashcl_context_destroy(&first);

    /* Damage every file the plan wrote. */
    DIR *d = opendir(cache_dir);
    struct dirent *e;
    char path[600];
    while ((e = readdir(d))) {
        if (!strstr(e->d_name, ".bin"))
            continue;
        snprintf(path, sizeof path, "%s/%s", cache_dir, e->d_name);
        FILE *f = fopen(path, "r+b");
        ck_assert_ptr_nonnull(f);
        fseek(f, 0, SEEK_END);
        long size = ftell(f);
        switch (_i) {
        case 0: /* torn write: the second half missing */
            ck_assert_int_eq(ftruncate(fileno(f), size / 2), 0);
            break;
        case 1: /* one byte of the binary flipped */
            fseek(f, size - 10, SEEK_SET);
            {
                int c = fgetc(f);
                fseek(f, size - 10, SEEK_SET);
                fputc(c ^ 0x5a, f);
            }
            break;
        case 2: /* a key byte changed (another device or options under this name) */
            fseek(f, 40, SEEK_SET);
            fputc('#', f);
            break;
        case 3: /* garbage */
            fseek(f, 0, SEEK_SET);
            for (int i = 0; i < 64; ++i)
                fputc(i * 37, f);
            break;
        }
        fclose(f);
    }
    closedir(d);

    flashcl_context *second = context_with_cache(1);
    flashcl_stats b = plan_once(second);
    ck_assert_uint_eq(b.disk_cache_rejected, n);
    ck_assert_uint_eq(b.programs_from_disk, 0);
    ck_assert_uint_eq(b.programs_built, n);
    ck_assert_uint_eq(b.disk_cache_writes, n); /* rewritten whole */
    flashcl_context_destroy(&second);

    flashcl_context *third = context_with_cache(1);
    flashcl_stats c = plan_once(third);
    ck_assert_uint_eq(c.programs_from_disk, n);
    ck_assert_uint_eq(c.programs_built, 0);
    flashcl_context_destroy(&third);
    remove_cache_dir();
}
END_TEST

/* A directory that cannot be created: flashcl compiles and works on without the cache. */
START_TEST(test_unwritable_dir)
{
    snprintf(cache_dir, sizeof cache_dir, "/proc/flashcl-cannot-write-here");
    flashcl_context *ctx = context_with_cache(1);
    flashcl_stats a = plan_once(ctx);
    ck_assert_uint_ge(a.programs_built, 1);
    ck_assert_uint_eq(a.disk_cache_writes, 0);
    ck_assert_uint_eq(a.disk_cache_write_failures, a.programs_built); /* counted; stderr said so once */
    flashcl_context_destroy(&ctx);
}
END_TEST

/* A build failure comes back as BUILD_FAILED with the compiler's log in the message. */
START_TEST(test_build_failure_log)
{
    flashcl_settings s;
    flashcl_settings_default(&s);
    s.disk_cache = 0;
    s.extra_build_options = "-DFLASHCL_DEBUG_SCALE=this_identifier_does_not_exist";
    flashcl_context *ctx = NULL;
    ck_assert_int_eq(flashcl_context_create(tu_context, tu_device, tu_queue, &s, &ctx), FLASHCL_SUCCESS);
    flashcl_problem p = problem();
    flashcl_plan *plan = NULL;
    flashcl_status st = flashcl_plan_create(ctx, &p, &plan);
    ck_assert_int_eq(st, FLASHCL_BUILD_FAILED);
    ck_assert_ptr_null(plan);
    const char *msg = flashcl_context_last_error(ctx);
    ck_assert_ptr_nonnull(strstr(msg, "building flash_fwd.cl"));
    ck_assert_ptr_nonnull(strstr(msg, "this_identifier_does_not_exist"));
    ck_assert_int_eq(flashcl_context_last_cl_error(ctx), CL_BUILD_PROGRAM_FAILURE);
    flashcl_context_destroy(&ctx);
}
END_TEST

static Suite *make_suite(void)
{
    Suite *s = suite_create("cache");
    TCase *tc = tcase_create("cache");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_memory_cache);
    tcase_add_test(tc, test_disk_cache);
    tcase_add_loop_test(tc, test_corrupt_file_rebuilt, 0, 4);
    tcase_add_test(tc, test_unwritable_dir);
    tcase_add_test(tc, test_build_failure_log);
    tcase_add_test(tc, test_program_blob);
    tcase_add_test(tc, test_program_blob_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run(make_suite, 1);
}
