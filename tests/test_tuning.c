/* SPDX-License-Identifier: MIT */
/*
 * test_tuning.c: the tuning database without a device: lookup from the most to the least specific
 * identity (device, arch, vendor, then the heuristic), the user's file over the shipped table, entries
 * that do not fit the problem ignored, corrupt files reported and survived, and store() replacing an
 * entry atomically.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char path[256];

static void write_file(const char *text)
{
    snprintf(path, sizeof path, "/tmp/flashcl-test-tuning-%ld.db", (long)getpid());
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static flashcl_device_profile h200(void)
{
    flashcl_device_profile p;
    memset(&p, 0, sizeof p);
    strcpy(p.name, "NVIDIA H200");
    strcpy(p.arch, "sm_90");
    p.vendor = FLASHCL_VENDOR_NVIDIA;
    p.local_mem_size = 48 * 1024;
    p.local_mem_static = 232448; /* as the compile probes find it (the shipped d=128 entry needs more than 48 KiB) */
    p.local_mem_per_cu = 233472;
    p.nv_cc_major = 9;
    p.max_work_group_size = 1024;
    p.wg_multiple = 32;
    return p;
}

static flashcl_problem problem(int d)
{
    flashcl_problem p;
    flashcl_problem_default(&p);
    p.head_dim = d;
    p.seq_q = p.seq_kv = 4096;
    return p;
}

/* The choice under a policy with this database, the portable path and a local-memory cap (0: none). */
static flashcl_config choose_capped(const flashcl_device_profile *pr, const flashcl_problem *p,
                                    const flashcl_tuning_db *db, uint64_t cap)
{
    const flashcl_policy policy = {.path = FLASHCL_PATH_AUTO, .local_mem_limit = cap, .tuning_db = db};
    flashcl_config c;
    ck_assert_int_eq(flashcl_choose_config_policy(pr, &policy, p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    return c;
}

static flashcl_config choose(const flashcl_device_profile *pr, const flashcl_problem *p, const flashcl_tuning_db *db)
{
    return choose_capped(pr, p, db, 0);
}

START_TEST(test_lookup_order)
{
    write_file("# three levels for d=64\n"
               "vendor=nvidia head_dim=64 : block_m=16 block_n=16 tpr=2 rows=1 dchunk=64 vchunk=4\n"
               "vendor=nvidia arch=sm_90 head_dim=64 : block_m=32 block_n=16 tpr=2 rows=1 dchunk=64 vchunk=4\n"
               "vendor=nvidia arch=sm_90 device=\"NVIDIA H200\" head_dim=64 dtype=f32 : block_m=64 block_n=8 tpr=2 rows=1 dchunk=64 vchunk=4\n"
               "vendor=amd head_dim=64 : block_m=8 block_n=8 tpr=1 rows=1 dchunk=64 vchunk=4\n");
    flashcl_tuning_db *db = NULL;
    ck_assert_int_eq(flashcl_tuning_db_load(path, 0, &db), FLASHCL_SUCCESS);
    ck_assert_str_eq(flashcl_tuning_db_warnings(db), "");
    ck_assert_uint_eq(flashcl_tuning_db_size(db), 4);
    flashcl_device_profile pr = h200();
    flashcl_problem p = problem(64);

    flashcl_config c = choose(&pr, &p, db);
    ck_assert_str_eq(c.source, "tuning-db:user:device");
    ck_assert_int_eq(c.block_m, 64);
    ck_assert_int_eq(c.block_n, 8);
    ck_assert_int_eq(c.work_group_size, 128);
    ck_assert_uint_eq(c.local_mem_bytes, flashcl_flash_local_mem_bytes(64, &c));

    p.dtype = FLASHCL_DTYPE_F16; /* the device entry pins f32: the arch entry answers */
    c = choose(&pr, &p, db);
    ck_assert_str_eq(c.source, "tuning-db:user:arch");
    ck_assert_int_eq(c.block_m, 32);

    strcpy(pr.arch, "sm_80"); /* another architecture of the vendor */
    c = choose(&pr, &p, db);
    ck_assert_str_eq(c.source, "tuning-db:user:vendor");
    ck_assert_int_eq(c.block_m, 16);

    pr.vendor = FLASHCL_VENDOR_INTEL; /* nothing for this vendor */
    c = choose(&pr, &p, db);
    ck_assert_str_eq(c.source, "heuristic");

    pr = h200();
    p = problem(128); /* no entry for d=128 */
    c = choose(&pr, &p, db);
    ck_assert_str_eq(c.source, "heuristic");
    flashcl_tuning_db_destroy(&db);
    ck_assert_ptr_null(db);
    unlink(path);
}
END_TEST

/* The user's file beats the shipped table at the same level; the shipped table has H200 entries. */
START_TEST(test_user_over_shipped)
{
    flashcl_device_profile pr = h200();
    flashcl_problem p = problem(128);
    p.seq_q = p.seq_kv = 4096;
    write_file("");
    flashcl_tuning_db *shipped = NULL;
    ck_assert_int_eq(flashcl_tuning_db_load(path, 1, &shipped), FLASHCL_SUCCESS);
    ck_assert_uint_gt(flashcl_tuning_db_size(shipped), 0);
    flashcl_config c = choose(&pr, &p, shipped);
    ck_assert_str_eq(c.source, "tuning-db:shipped:device");
    flashcl_tuning_db_destroy(&shipped);

    write_file("vendor=nvidia arch=sm_90 device=\"NVIDIA H200\" head_dim=128 : block_m=16 block_n=16 tpr=4 rows=1 dchunk=128 vchunk=4\n");
    flashcl_tuning_db *both = NULL;
    ck_assert_int_eq(flashcl_tuning_db_load(path, 1, &both), FLASHCL_SUCCESS);
    c = choose(&pr, &p, both);
    ck_assert_str_eq(c.source, "tuning-db:user:device");
    ck_assert_int_eq(c.block_m, 16);
    flashcl_tuning_db_destroy(&both);
    unlink(path);
}
END_TEST

/* An entry that does not fit (tpr not dividing, too much local memory for this device's cap) is
 * passed over rather than planned: for the next entry that fits, else the heuristic. */
START_TEST(test_entry_must_fit)
{
    write_file("vendor=nvidia head_dim=64 : block_m=64 block_n=64 tpr=2 rows=1 dchunk=64 vchunk=4\n"
               "vendor=nvidia head_dim=40 : block_m=32 block_n=16 tpr=16 rows=1 dchunk=40 vchunk=4\n");
    flashcl_tuning_db *db = NULL;
    flashcl_tuning_db_load(path, 0, &db);
    flashcl_device_profile pr = h200();
    flashcl_problem p = problem(64);
    flashcl_config c = choose_capped(&pr, &p, db, 16 * 1024);
    ck_assert_str_eq(c.source, "heuristic");
    ck_assert_uint_le(c.local_mem_bytes, 16 * 1024);
    p = problem(40);
    pr = h200();
    c = choose(&pr, &p, db);
    ck_assert_str_eq(c.source, "heuristic");
    flashcl_tuning_db_destroy(&db);

    /* A more specific entry that does not fit passes to the next one that does, not to the heuristic */
    write_file("vendor=nvidia head_dim=64 : block_m=32 block_n=16 tpr=4 rows=2 dchunk=32 vchunk=16\n"
               "vendor=nvidia arch=sm_90 head_dim=64 : block_m=64 block_n=64 tpr=2 rows=1 dchunk=64 vchunk=4\n");
    flashcl_tuning_db_load(path, 0, &db);
    p = problem(64);
    c = choose_capped(&pr, &p, db, 16 * 1024);
    ck_assert_msg(!strcmp(c.source, "tuning-db:user:vendor") && c.block_m == 32 && c.threads_per_row == 4, "%s %dx%d",
                  c.source, c.block_m, c.block_n);
    flashcl_tuning_db_destroy(&db);
    unlink(path);
}
END_TEST

/* An entry that breaks the kernel's own rules is refused at load, with a warning naming the rule, so it
 * cannot hide a good entry of the same class behind it. */
START_TEST(test_bad_entry_skipped_at_load)
{
    write_file("vendor=nvidia head_dim=64 : block_m=7 block_n=16 tpr=2 rows=4 dchunk=64 vchunk=4\n"
               "vendor=nvidia head_dim=64 : block_m=32 block_n=16 tpr=8 rows=4 dchunk=64 vchunk=16\n"
               "vendor=nvidia head_dim=64 : block_m=32 block_n=16 tpr=2 rows=1 dchunk=12 vchunk=4\n");
    flashcl_tuning_db *db = NULL;
    ck_assert_int_eq(flashcl_tuning_db_load(path, 0, &db), FLASHCL_SUCCESS);
    ck_assert_uint_eq(flashcl_tuning_db_size(db), 1);
    const char *w = flashcl_tuning_db_warnings(db);
    ck_assert_msg(strstr(w, ":1: ") && strstr(w, "rows must divide block_m"), "%s", w);
    ck_assert_msg(strstr(w, ":3: ") && strstr(w, "dchunk must be a multiple of 4 dividing head_dim"), "%s", w);
    flashcl_device_profile pr = h200();
    flashcl_problem p = problem(64);
    flashcl_config c = choose(&pr, &p, db);
    ck_assert_msg(strcmp(c.source, "heuristic") != 0 && c.block_m == 32 && c.threads_per_row == 8, "%s %dx%d",
                  c.source, c.block_m, c.block_n);
    flashcl_tuning_db_destroy(&db);
    unlink(path);
}
END_TEST

/* Garbage of every kind: reported line by line, never a crash, the good lines still used. */
START_TEST(test_corrupt_file)
{
    static const char bad[] = "vendor=nvidia head_dim=64 : block_m=32 block_n=16 tpr=2 rows=1 dchunk=64 vchunk=4\n"
                              "this is not an entry\n"
                              "vendor=nvidia head_dim=65 : block_m=32 block_n=16 tpr=2 rows=1 dchunk=8 vchunk=4\n"
                              "vendor=nvidia head_dim=64 block_m=32\n"
                              "vendor=nvidia head_dim=64 : block_m=-3 block_n=16 tpr=2 rows=1 dchunk=64 vchunk=4\n"
                              "vendor=nvidia device=\"unterminated head_dim=64 : block_m=1 block_n=8 tpr=1 rows=1 dchunk=64 vchunk=4\n"
                              "vendor=nvidia head_dim=64 : block_m=32 block_n=16 tpr=2 rows=1 dchunk=64 vchunk=4 extra\n"
                              "vendor=nvidia head_dim=64 colour=blue : block_m=32 block_n=16 tpr=2 rows=1 dchunk=64 vchunk=4\n"
                              "vendor=nvidia head_dim=64 : block_m=32 block_n=16 tpr=2 kv_shared=0\n"
                              "\x01\x02\xff\xfe binary\n";
    write_file(bad);
    flashcl_tuning_db *db = NULL;
    ck_assert_int_eq(flashcl_tuning_db_load(path, 0, &db), FLASHCL_SUCCESS);
    ck_assert_uint_eq(flashcl_tuning_db_size(db), 1);
    const char *w = flashcl_tuning_db_warnings(db);
    int lines = 0;
    for (const char *q = w; *q; ++q)
        lines += *q == '\n';
    ck_assert_int_eq(lines, 9);
    ck_assert_ptr_nonnull(strstr(w, ":2: "));
    ck_assert_ptr_nonnull(strstr(w, "run flashcl tune again")); /* an entry for the earlier kernel */
    flashcl_tuning_db_destroy(&db);

    /* A directory where the file should be, and a missing file: empty database, no crash. */
    ck_assert_int_eq(flashcl_tuning_db_load("/tmp", 0, &db), FLASHCL_SUCCESS);
    ck_assert_uint_eq(flashcl_tuning_db_size(db), 0);
    flashcl_tuning_db_destroy(&db);
    ck_assert_int_eq(flashcl_tuning_db_load("/nonexistent/flashcl/tuning.db", 0, &db), FLASHCL_SUCCESS);
    ck_assert_str_eq(flashcl_tuning_db_warnings(db), "");
    flashcl_tuning_db_destroy(&db);
    ck_assert_int_eq(flashcl_tuning_db_load(NULL, 0, NULL), FLASHCL_INVALID_ARGUMENT);
    unlink(path);
}
END_TEST

START_TEST(test_store_replaces)
{
    snprintf(path, sizeof path, "/tmp/flashcl-test-store-%ld/sub/tuning.db", (long)getpid());
    flashcl_device_profile pr = h200();
    flashcl_problem p = problem(96);
    flashcl_config c = {0};
    c.block_m = 32;
    c.block_n = 16;
    c.threads_per_row = 4;
    c.rows_per_item = 2;
    c.d_chunk = 32;
    c.v_chunk = 16;
    ck_assert_int_eq(flashcl_tuning_db_store(path, &pr, &p, &c, "first"), FLASHCL_SUCCESS);
    c.block_m = 16;
    ck_assert_int_eq(flashcl_tuning_db_store(path, &pr, &p, &c, "second\nwith a newline"), FLASHCL_SUCCESS);
    p.dtype = FLASHCL_DTYPE_BF16;
    c.block_m = 8;
    ck_assert_int_eq(flashcl_tuning_db_store(path, &pr, &p, &c, NULL), FLASHCL_SUCCESS);
    p.head_dim_v = 32; /* (entries are keyed by one head dim: refused, the file untouched) */
    ck_assert_int_eq(flashcl_tuning_db_store(path, &pr, &p, &c, NULL), FLASHCL_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(NULL), "problem.head_dim_v = 32"));
    p.head_dim_v = 0;
    flashcl_tuning_db *db = NULL;
    flashcl_tuning_db_load(path, 0, &db);
    ck_assert_str_eq(flashcl_tuning_db_warnings(db), "");
    ck_assert_uint_eq(flashcl_tuning_db_size(db), 2); /* f32 replaced, bf16 added */
    p.dtype = FLASHCL_DTYPE_F32;
    flashcl_config got = choose(&pr, &p, db);
    ck_assert_int_eq(got.block_m, 16);
    ck_assert_str_eq(got.source, "tuning-db:user:device");
    p.dtype = FLASHCL_DTYPE_BF16;
    ck_assert_int_eq(choose(&pr, &p, db).block_m, 8);
    flashcl_tuning_db_destroy(&db);
    unlink(path);
    ck_assert_int_eq(flashcl_tuning_db_store(NULL, &pr, &p, &c, NULL), FLASHCL_INVALID_ARGUMENT);
    /* A file that cannot be written: a status and a message, nothing half-written. */
    ck_assert_int_eq(flashcl_tuning_db_store("/proc/flashcl/tuning.db", &pr, &p, &c, NULL), FLASHCL_CACHE_ERROR);
    ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(NULL), "cannot write"));
}
END_TEST

/* The file's text, whole (a test's own small files) */
static char *slurp(const char *file)
{
    FILE *f = fopen(file, "rb");
    ck_assert_ptr_nonnull(f);
    static char buf[8192];
    const size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

/* store() keeps every line and entry of the file it changes: a last line with no newline (a comment, an entry)
 * gets one before the new entry (the entry was glued onto it: lost, and the old one with it); a file named through
 * a symbolic link is changed where it lies, the link kept, and keeps its mode; a comment longer than an entry
 * holds still ends its line. */
START_TEST(test_store_keeps_the_file)
{
    flashcl_device_profile pr = h200();
    flashcl_problem p = problem(96);
    flashcl_config c = {.block_m = 32, .block_n = 16, .threads_per_row = 4, .rows_per_item = 2, .d_chunk = 32,
                        .v_chunk = 16};
    static const char *const tails[2] = {
        "# notes, no newline",
        "vendor=nvidia head_dim=64 : block_m=32 block_n=16 tpr=8 rows=4 dchunk=64 vchunk=16"};
    for (int i = 0; i < 2; ++i) {
        char text[256];
        snprintf(text, sizeof text, "vendor=nvidia head_dim=128 : block_m=32 block_n=16 tpr=8 rows=4 dchunk=64 "
                                    "vchunk=16\n%s", tails[i]);
        write_file(text);
        ck_assert_int_eq(flashcl_tuning_db_store(path, &pr, &p, &c, "new"), FLASHCL_SUCCESS);
        flashcl_tuning_db *db = NULL;
        ck_assert_int_eq(flashcl_tuning_db_load(path, 0, &db), FLASHCL_SUCCESS);
        ck_assert_msg(flashcl_tuning_db_size(db) == (size_t)(2 + i) && !*flashcl_tuning_db_warnings(db),
                      "tail %d: %zu entries, warnings '%s'\n%s", i, flashcl_tuning_db_size(db),
                      flashcl_tuning_db_warnings(db), slurp(path));
        flashcl_tuning_db_destroy(&db);
        unlink(path);
    }

    /* through a link (relative, from the link's directory), mode 0600 */
    char dir[128], real[192], link[192];
    snprintf(dir, sizeof dir, "/tmp/flashcl-test-link-%ld", (long)getpid());
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    snprintf(real, sizeof real, "%s/real.db", dir);
    snprintf(link, sizeof link, "%s/link.db", dir);
    FILE *f = fopen(real, "wb");
    ck_assert_ptr_nonnull(f);
    fputs("vendor=nvidia head_dim=128 : block_m=32 block_n=16 tpr=8 rows=4 dchunk=64 vchunk=16\n", f);
    fclose(f);
    ck_assert_int_eq(chmod(real, 0600), 0);
    ck_assert_int_eq(symlink("real.db", link), 0);
    char long_comment[1000];
    memset(long_comment, 'x', sizeof long_comment - 1);
    long_comment[sizeof long_comment - 1] = '\0';
    ck_assert_int_eq(flashcl_tuning_db_store(link, &pr, &p, &c, long_comment), FLASHCL_SUCCESS);
    p.dtype = FLASHCL_DTYPE_BF16; /* (a second entry after the long one: on a line of its own) */
    ck_assert_int_eq(flashcl_tuning_db_store(link, &pr, &p, &c, NULL), FLASHCL_SUCCESS);
    struct stat st;
    ck_assert_int_eq(lstat(link, &st), 0);
    ck_assert_msg(S_ISLNK(st.st_mode), "the link was replaced by a file");
    ck_assert_int_eq(stat(real, &st), 0);
    ck_assert_int_eq((int)(st.st_mode & 0777), 0600);
    flashcl_tuning_db *db = NULL;
    ck_assert_int_eq(flashcl_tuning_db_load(real, 0, &db), FLASHCL_SUCCESS);
    ck_assert_msg(flashcl_tuning_db_size(db) == 3 && !*flashcl_tuning_db_warnings(db), "%zu entries, '%s'",
                  flashcl_tuning_db_size(db), flashcl_tuning_db_warnings(db));
    flashcl_tuning_db_destroy(&db);
    unlink(link);
    unlink(real);
    rmdir(dir);
}
END_TEST

/* A vendor flashcl does not name (an entry that could never match) and a field given twice: reported, skipped */
START_TEST(test_entry_fields_checked)
{
    write_file("vendor=nvidai head_dim=64 : block_m=32 block_n=16 tpr=8 rows=4 dchunk=64 vchunk=16\n"
               "vendor=nvidia dtype=f32 dtype=f16 head_dim=64 : block_m=32 block_n=16 tpr=8 rows=4 dchunk=64 vchunk=16\n"
               "vendor=nvidia head_dim=64 : block_m=32 block_n=16 tpr=8 rows=4 dchunk=64 vchunk=16 block_m=64\n"
               "vendor=nvidia head_dim=64 : block_m=32 block_n=16 tpr=8 rows=4 dchunk=64 vchunk=16\n");
    flashcl_tuning_db *db = NULL;
    ck_assert_int_eq(flashcl_tuning_db_load(path, 0, &db), FLASHCL_SUCCESS);
    ck_assert_uint_eq(flashcl_tuning_db_size(db), 1);
    const char *w = flashcl_tuning_db_warnings(db);
    ck_assert_msg(strstr(w, ":1: ") && strstr(w, "match field"), "%s", w);
    ck_assert_msg(strstr(w, ":2: a field given twice") && strstr(w, ":3: a field given twice"), "%s", w);
    flashcl_tuning_db_destroy(&db);
    unlink(path);
}
END_TEST

static Suite *make_suite(void)
{
    Suite *s = suite_create("tuning");
    TCase *tc = tcase_create("db");
    tcase_add_test(tc, test_lookup_order);
    tcase_add_test(tc, test_user_over_shipped);
    tcase_add_test(tc, test_entry_must_fit);
    tcase_add_test(tc, test_bad_entry_skipped_at_load);
    tcase_add_test(tc, test_corrupt_file);
    tcase_add_test(tc, test_store_replaces);
    tcase_add_test(tc, test_store_keeps_the_file);
    tcase_add_test(tc, test_entry_fields_checked);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run(make_suite, 0);
}
