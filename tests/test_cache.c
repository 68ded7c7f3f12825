/*
 * test_cache.c: the program caches. A second plan of the same shape does not recompile (memory
 * cache); a new context on the same cache directory loads binaries instead of compiling (disk
 * cache); a torn or corrupt cache file is detected, rebuilt and rewritten, never loaded; the disk
 * cache can be turned off.
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
    flashcl_stats a = plan_once(first);
    const uint64_t n = a.programs_built;
    ck_assert_uint_ge(n, 1);
    ck_assert_uint_eq(a.disk_cache_writes, n);
    ck_assert_int_eq(count_files(), (int)n);
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
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run(make_suite, 1);
}
