/* SPDX-License-Identifier: MIT */
/*
 * test_cli.c: the flashcl command end to end on the current device: `run` on .npy files writes what
 * the library computes for the same inputs, refuses bad files and writes nothing then; `tiles --json`
 * reports the plan's configuration; `tune --dry-run` lists candidates; every subcommand has --help;
 * options in every spelling, conflicts and clashing files refused before any work; JSON that parses
 * (Python's json module) on success and failure; bench's budget, stdout and partial outputs; tune's noise
 * policy (its pure decision, from tools/cmd_tune.c itself). The command's path comes from FLASHCL_TOOL
 * (set by meson).
 */
/* The command's own helpers and tune's decision, compiled in (first: cli.c sets the feature macros). */
#include "cli.c"
#include "cmd_tune.c"

#include "testutil.h"
#include "npy.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char dir[128];

/* Runs the command, `env` (assignments, or "") in front of it, with the current device selected (unless
 * `device` is 0); returns its exit status, stdout and stderr together in *out, or stdout alone there and
 * stderr in *err when err is not NULL. */
static int run_tool_full(const char *env, const char *args, int device, char **out, char **err)
{
    const char *tool = getenv("FLASHCL_TOOL");
    ck_assert_msg(tool != NULL, "FLASHCL_TOOL is not set");
    char cmd[4096], outfile[200], errfile[200];
    snprintf(outfile, sizeof outfile, "%s/out.txt", dir);
    snprintf(errfile, sizeof errfile, "%s/err.txt", dir);
    snprintf(cmd, sizeof cmd, "FLASHCL_CACHE=0 FLASHCL_TUNING_DB=%s/none.db %s '%s' %s %s%s%s > %s 2>%s", dir, env, tool,
             args, device ? "--device '" : "", device ? tu_device_label : "", device ? "'" : "", outfile,
             err ? errfile : "&1");
    int st = system(cmd);
    static char buf[2][1 << 16];
    const char *files[2] = {outfile, errfile};
    for (int k = 0; k < 1 + (err != NULL); ++k) {
        FILE *f = fopen(files[k], "rb");
        size_t n = f ? fread(buf[k], 1, sizeof buf[k] - 1, f) : 0;
        buf[k][n] = '\0';
        if (f)
            fclose(f);
    }
    if (out)
        *out = buf[0];
    if (err)
        *err = buf[1];
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int run_tool_on(const char *args, int device, char **out)
{
    return run_tool_full("", args, device, out, NULL);
}

static int run_tool(const char *args, char **out)
{
    return run_tool_on(args, 1, out);
}

/* Whether `path` holds one JSON document (NaN and Infinity refused: JSON has neither, though Python's
 * json module reads them by default) for which the Python expression `expr` (over it, d) is true. */
static int json_holds(const char *path, const char *expr)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "python3 -c 'import json, sys\n"
             "def bad(c): raise ValueError(\"a non-finite number: \" + c)\n"
             "d = json.load(open(sys.argv[1]), parse_constant=bad)\n"
             "sys.exit(0 if (%s) else 1)' '%s'",
             expr, path);
    return system(cmd) == 0;
}

/* A file's first 64 KiB, for messages. */
static const char *file_text(const char *path)
{
    static char buf[1 << 16];
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[n] = '\0';
    if (f)
        fclose(f);
    return buf;
}

/* A whole file's bytes (malloc'd; NULL and 0 where it cannot be read) */
static unsigned char *file_bytes(const char *path, size_t *n)
{
    *n = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    unsigned char *b = malloc(1 << 20);
    *n = fread(b, 1, 1 << 20, f);
    fclose(f);
    return b;
}

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/flashcl-cli-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static void write_inputs(flashcl_dtype t, const int64_t qs[4], const int64_t ks[4], void *host[3])
{
    static const char *descr[] = {"<f4", "<f2", "<u2"};
    const char *names[3] = {"q", "k", "v"};
    hm_rng rng;
    hm_rng_seed(&rng, 21);
    for (int i = 0; i < 3; ++i) {
        const int64_t *s = i ? ks : qs;
        const size_t count = (size_t)(s[0] * s[1] * s[2] * s[3]);
        host[i] = malloc(count * flashcl_dtype_size(t));
        hm_fill_normal(host[i], t, count, &rng, 1.0);
        char path[256], err[256];
        snprintf(path, sizeof path, "%s/%s.npy", dir, names[i]);
        ck_assert_int_eq(npy_write(path, descr[t], 4, s, host[i], err, sizeof err), 0);
    }
}

/* The command's output equals the library's on the same inputs, bit for bit (same device, same
 * kernel), and LSE has the documented shape. GQA comes from the head counts. */
START_TEST(test_run_npy_matches_library)
{
    setup();
    const flashcl_dtype t = (flashcl_dtype)_i;
    const int64_t qs[4] = {2, 37, 4, 32}, ks[4] = {2, 50, 2, 32};
    void *host[3];
    write_inputs(t, qs, ks, host);
    char args[1024], *out;
    snprintf(args, sizeof args, "run --q %s/q.npy --k %s/k.npy --v %s/v.npy --out %s/o.npy --lse %s/lse.npy --causal %s",
             dir, dir, dir, dir, dir, t == FLASHCL_DTYPE_BF16 ? "--bf16 --validate" : "--validate");
    ck_assert_msg(run_tool(args, &out) == 0, "%s", out);

    flashcl_settings s;
    flashcl_settings_default(&s);
    s.disk_cache = 0;
    s.tuning_db_path = "/nonexistent/none.db"; /* as the command: the shipped table, no user file */
    flashcl_context *ctx = NULL;
    ck_assert_int_eq(flashcl_context_create(tu_context, tu_device, tu_queue, &s, &ctx), FLASHCL_SUCCESS);
    flashcl_problem p;
    flashcl_problem_default(&p);
    p.batch = 2;
    p.seq_q = 37;
    p.heads_q = 4;
    p.seq_kv = 50;
    p.heads_kv = 2;
    p.head_dim = 32;
    p.dtype = t;
    p.causal = 1;
    p.return_lse = 1;
    flashcl_plan *plan = NULL;
    ck_assert_int_eq(flashcl_plan_create(ctx, &p, &plan), FLASHCL_SUCCESS);
    size_t sz[5];
    flashcl_plan_buffer_sizes(plan, &sz[0], &sz[1], &sz[2], &sz[3], &sz[4]);
    cl_mem q = tu_buffer(sz[0], host[0]), k = tu_buffer(sz[1], host[1]), v = tu_buffer(sz[2], host[2]);
    cl_mem o = tu_buffer(sz[3], NULL), l = tu_buffer(sz[4], NULL);
    ck_assert_int_eq(flashcl_plan_enqueue(plan, q, k, v, o, l, 0, NULL, NULL), FLASHCL_SUCCESS);
    void *lib_o = tu_read(o, sz[3]), *lib_l = tu_read(l, sz[4]);

    npy_array oa, la;
    char path[256], err[256];
    snprintf(path, sizeof path, "%s/o.npy", dir);
    ck_assert_msg(npy_read(path, &oa, err, sizeof err) == 0, "%s", err);
    snprintf(path, sizeof path, "%s/lse.npy", dir);
    ck_assert_msg(npy_read(path, &la, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(oa.ndim, 4);
    ck_assert_int_eq(oa.shape[1], 37);
    ck_assert_int_eq(oa.shape[2], 4);
    ck_assert_str_eq(la.descr, "<f4");
    ck_assert_int_eq(la.ndim, 3);
    ck_assert_int_eq(la.shape[0], 2);
    ck_assert_int_eq(la.shape[1], 4);
    ck_assert_int_eq(la.shape[2], 37);
    ck_assert_mem_eq(oa.data, lib_o, sz[3]);
    ck_assert_mem_eq(la.data, lib_l, sz[4]);

    npy_free(&oa);
    npy_free(&la);
    free(lib_o);
    free(lib_l);
    cl_mem all[5] = {q, k, v, o, l};
    for (int i = 0; i < 5; ++i)
        clReleaseMemObject(all[i]);
    for (int i = 0; i < 3; ++i)
        free(host[i]);
    flashcl_plan_destroy(&plan);
    flashcl_context_destroy(&ctx);
    teardown();
}
END_TEST

/* V of its own head dim (problem.head_dim_v): O takes V's dim, validated against the naive kernel. */
START_TEST(test_run_npy_dim_v)
{
    setup();
    const int64_t qs[4] = {2, 20, 4, 32}, ks[4] = {2, 30, 2, 32}, vs[4] = {2, 30, 2, 16};
    void *host[3];
    write_inputs(FLASHCL_DTYPE_F32, qs, ks, host);
    hm_rng rng;
    hm_rng_seed(&rng, 5);
    float *v = malloc(2 * 30 * 2 * 16 * sizeof *v);
    hm_fill_normal(v, FLASHCL_DTYPE_F32, 2 * 30 * 2 * 16, &rng, 1.0);
    char args[1024], path[256], err[256], *out;
    snprintf(path, sizeof path, "%s/v.npy", dir);
    ck_assert_int_eq(npy_write(path, "<f4", 4, vs, v, err, sizeof err), 0);
    snprintf(args, sizeof args, "run --q %s/q.npy --k %s/k.npy --v %s/v.npy --out %s/o.npy --validate --json", dir, dir,
             dir, dir);
    ck_assert_msg(run_tool(args, &out) == 0, "%s", out);
    ck_assert_msg(strstr(out, "\"head_dim_v\": 16") && strstr(out, "\"validated\": true"), "%s", out);
    npy_array oa;
    snprintf(path, sizeof path, "%s/o.npy", dir);
    ck_assert_msg(npy_read(path, &oa, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(oa.shape[0], 2);
    ck_assert_int_eq(oa.shape[1], 20);
    ck_assert_int_eq(oa.shape[2], 4);
    ck_assert_int_eq(oa.shape[3], 16);
    npy_free(&oa);
    free(v);
    for (int i = 0; i < 3; ++i)
        free(host[i]);
    teardown();
}
END_TEST

/* --precision reaches a run on .npy files (it was once dropped there): flash_mma's three TF32 products,
 * validated, and said in the JSON. */
START_TEST(test_run_npy_precision)
{
    setup();
    const int64_t qs[4] = {1, 24, 2, 32}, ks[4] = {1, 40, 2, 32};
    void *host[3];
    write_inputs(FLASHCL_DTYPE_F32, qs, ks, host);
    char args[1024], *out;
    snprintf(args, sizeof args,
             "run --q %s/q.npy --k %s/k.npy --v %s/v.npy --out %s/o.npy --path mma --precision tf32x3 --validate --json",
             dir, dir, dir, dir);
    ck_assert_msg(run_tool(args, &out) == 0, "%s", out);
    ck_assert_msg(strstr(out, "\"precision\": \"tf32x3\"") && strstr(out, "\"kernel\": \"flash_mma\"") &&
                      strstr(out, "\"tf32\": 3") && strstr(out, "\"validated\": true"),
                  "%s", out);
    for (int i = 0; i < 3; ++i)
        free(host[i]);
    teardown();
}
END_TEST

/* Bad inputs: a clear message, a nonzero exit, and no output file. */
START_TEST(test_run_npy_refuses)
{
    setup();
    const int64_t qs[4] = {1, 8, 2, 16}, ks[4] = {1, 8, 2, 16};
    void *host[3];
    write_inputs(FLASHCL_DTYPE_F32, qs, ks, host);
    char args[1024], path[256], *out;
    const char *expect = NULL;
    switch (_i) {
    case 0: /* K's head count does not divide Q's */
    {
        const int64_t bad[4] = {1, 8, 3, 16};
        char err[256];
        snprintf(path, sizeof path, "%s/k.npy", dir);
        float *z = calloc(8 * 3 * 16, sizeof *z);
        npy_write(path, "<f4", 4, bad, z, err, sizeof err);
        snprintf(path, sizeof path, "%s/v.npy", dir);
        npy_write(path, "<f4", 4, bad, z, err, sizeof err);
        free(z);
        expect = "heads_q";
        break;
    }
    case 1: /* truncated V */
        snprintf(path, sizeof path, "%s/v.npy", dir);
        ck_assert_int_eq(truncate(path, 100), 0);
        expect = "truncated";
        break;
    case 2: /* uint16 without --bf16 */
    {
        char err[256];
        snprintf(path, sizeof path, "%s/q.npy", dir);
        npy_write(path, "<u2", 4, qs, host[0], err, sizeof err);
        expect = "--bf16";
        break;
    }
    case 3: /* not a .npy file */
        snprintf(path, sizeof path, "%s/k.npy", dir);
        {
            FILE *f = fopen(path, "wb");
            fputs("hello", f);
            fclose(f);
        }
        expect = "magic";
        break;
    }
    snprintf(args, sizeof args, "run --q %s/q.npy --k %s/k.npy --v %s/v.npy --out %s/o.npy --lse %s/lse.npy", dir, dir,
             dir, dir, dir);
    const int rc = run_tool(args, &out);
    ck_assert_msg(rc == 1, "case %d: exit %d: %s", _i, rc, out);
    ck_assert_msg(strstr(out, expect) != NULL, "case %d: '%s' lacks '%s'", _i, out, expect);
    snprintf(path, sizeof path, "%s/o.npy", dir);
    ck_assert_msg(access(path, F_OK) != 0, "case %d: o.npy was written", _i);
    snprintf(path, sizeof path, "%s/lse.npy", dir);
    ck_assert_msg(access(path, F_OK) != 0, "case %d: lse.npy was written", _i);
    for (int i = 0; i < 3; ++i)
        free(host[i]);
    teardown();
}
END_TEST

START_TEST(test_tiles_json_is_the_plan)
{
    setup();
    char *out;
    ck_assert_int_eq(run_tool("tiles -d 96 --dtype f16 -n 300 --json", &out), 0);
    ck_assert_ptr_nonnull(strstr(out, "\"configs\": ["));
    flashcl_settings s;
    flashcl_settings_default(&s);
    s.disk_cache = 0;
    s.tuning_db_path = "/nonexistent/none.db";
    flashcl_context *ctx = NULL;
    ck_assert_int_eq(flashcl_context_create(tu_context, tu_device, tu_queue, &s, &ctx), FLASHCL_SUCCESS);
    flashcl_problem p;
    flashcl_problem_default(&p);
    p.head_dim = 96;
    p.dtype = FLASHCL_DTYPE_F16;
    p.seq_q = p.seq_kv = 300;
    flashcl_config c;
    ck_assert_int_eq(flashcl_context_choose_config(ctx, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    char expect[128];
    snprintf(expect, sizeof expect, "\"block_m\": %d, \"block_n\": %d, \"threads_per_row\": %d,", c.block_m, c.block_n,
             c.threads_per_row);
    ck_assert_msg(strstr(out, expect) != NULL, "'%s' not in %s", expect, out);
    ck_assert_int_eq(run_tool("tiles --all", &out), 0);
    ck_assert_ptr_nonnull(strstr(out, "\n256  bf16"));
    flashcl_context_destroy(&ctx);
    teardown();
}
END_TEST

/* tiles takes --precision as run does: a TF32 precision on f16 data refused (it was once dropped, exit 0);
 * under --all only the f32 rows take it, as documented. */
START_TEST(test_tiles_precision)
{
    setup();
    char *out;
    ck_assert_int_eq(run_tool("tiles -d 64 -n 64 --dtype f16 --precision tf32", &out), 1);
    ck_assert_msg(strstr(out, "a TF32 precision is for fp32") != NULL, "%s", out);
    ck_assert_int_eq(run_tool("run -d 64 -n 64 --dtype f16 --precision tf32", &out), 1);
    ck_assert_msg(strstr(out, "a TF32 precision is for fp32") != NULL, "%s", out);
    ck_assert_int_eq(run_tool("tiles -d 64 -n 64 --precision tf32", &out), 0);
    ck_assert_int_eq(run_tool("tiles --all -n 64 --precision tf32", &out), 0);
    ck_assert_ptr_null(strstr(out, "error:"));
    teardown();
}
END_TEST

START_TEST(test_tune_dry_run)
{
    setup();
    char *out;
    ck_assert_int_eq(run_tool("tune --dry-run -d 64,128 --dtype f32,f16", &out), 0);
    ck_assert_ptr_nonnull(strstr(out, "class  d=64 f32"));
    ck_assert_ptr_nonnull(strstr(out, "class  d=128 f16"));
    ck_assert_ptr_nonnull(strstr(out, "<- heuristic"));
    ck_assert_ptr_nonnull(strstr(out, " candidates;"));
    char path[256];
    snprintf(path, sizeof path, "%s/none.db", dir);
    ck_assert_msg(access(path, F_OK) != 0, "a dry run wrote the database");
    teardown();
}
END_TEST

/* A small bench: every algorithm this build has runs, validates, and lands in the JSON and the plot. */
START_TEST(test_bench_small)
{
    setup();
    char args[512], *out, path[256];
    snprintf(args, sizeof args, "bench -n 64,96 -d 32 --tokens 96 --both --iters 2 --warmup 1 "
                                "--json %s/b.json --csv %s/b.csv --plot %s/b.svg", dir, dir, dir);
    ck_assert_msg(run_tool(args, &out) == 0, "%s", out);
    ck_assert_ptr_nonnull(strstr(out, "| flash "));
    snprintf(path, sizeof path, "%s/b.json", dir);
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    static char json[1 << 16];
    size_t n = fread(json, 1, sizeof json - 1, f);
    json[n] = '\0';
    fclose(f);
    int passed = 0;
    for (const char *q = json; (q = strstr(q, "\"passed\": true")); ++q)
        ++passed;
    const int algos = 2 + flashcl_algorithm_available(FLASHCL_ALGO_STANDARD);
    ck_assert_int_eq(passed, 4 * algos); /* 2 lengths x 2 masks */
    ck_assert_ptr_null(strstr(json, "\"passed\": false"));
    snprintf(path, sizeof path, "%s/b.svg", dir);
    ck_assert_int_eq(access(path, F_OK), 0);
    snprintf(path, sizeof path, "%s/b.csv", dir);
    ck_assert_int_eq(access(path, F_OK), 0);
    teardown();
}
END_TEST

START_TEST(test_help_and_usage_errors)
{
    setup();
    static const char *cmds[] = {"run", "devices", "tiles", "tune", "bench"};
    char args[64], *out;
    for (int i = 0; i < 5; ++i) {
        snprintf(args, sizeof args, "%s --help", cmds[i]);
        ck_assert_int_eq(run_tool(args, &out), 0);
        ck_assert_ptr_nonnull(strstr(out, "usage: flashcl"));
    }
    ck_assert_int_eq(run_tool("run --dtype f64", &out), 2);
    ck_assert_ptr_nonnull(strstr(out, "--dtype f64"));
    ck_assert_int_eq(run_tool("tiles -d", &out), 2);
    ck_assert_int_eq(run_tool("frobnicate", &out), 2);
    ck_assert_int_eq(run_tool("run -d 12 -n 8", &out), 1); /* a library refusal: head dim */
    ck_assert_ptr_nonnull(strstr(out, "problem.head_dim = 12"));
    /* lists: an empty item, too many; a window side missing; an output that is a directory, before any run */
    ck_assert_int_eq(run_tool("bench -n 128,,256", &out), 2);
    ck_assert_ptr_nonnull(strstr(out, "--seq (-n) 128,,256: an empty value"));
    ck_assert_int_eq(run_tool("tune --dry-run -d 8,16,24,32,40,48,56,64,72,80,88,96,104,112,120,128,136", &out), 2);
    ck_assert_ptr_nonnull(strstr(out, "takes at most 16"));
    ck_assert_int_eq(run_tool("run -n 8 --window ,5", &out), 2);
    ck_assert_ptr_nonnull(strstr(out, "--window ,5"));
    char bench[300];
    snprintf(bench, sizeof bench, "bench -n 16 -H 1 -d 8 --iters 1 --json %s", dir);
    ck_assert_int_ne(run_tool(bench, &out), 0);
    ck_assert_msg(strstr(out, "a directory") && !strstr(out, "median"), "%s", out); /* (no run) */
    teardown();
}
END_TEST

/* Outputs of `run` on .npy files: all or none (an LSE that cannot be written leaves an earlier O as it was), a
 * symbolic link written through (the link stays), a replaced file's permissions kept. */
START_TEST(test_run_npy_outputs_kept)
{
    setup();
    const int64_t qs[4] = {1, 8, 2, 16};
    void *host[3];
    write_inputs(FLASHCL_DTYPE_F32, qs, qs, host);
    char args[1200], o[256], link_o[256], *out;
    snprintf(o, sizeof o, "%s/o.npy", dir);
    snprintf(link_o, sizeof link_o, "%s/o-link.npy", dir);
    snprintf(args, sizeof args, "run --q %s/q.npy --k %s/k.npy --v %s/v.npy --out %s", dir, dir, dir, o);
    ck_assert_msg(run_tool(args, &out) == 0, "%s", out);
    ck_assert_int_eq(chmod(o, 0640), 0);
    size_t n_before, n_now;
    unsigned char *before = file_bytes(o, &n_before), *now;
    snprintf(args, sizeof args, "run --q %s/q.npy --k %s/k.npy --v %s/v.npy --out %s --lse %s/none/l.npy --scale 0.5",
             dir, dir, dir, o, dir);
    ck_assert_msg(run_tool(args, &out) == 1 && strstr(out, "none/l.npy"), "%s", out);
    now = file_bytes(o, &n_now); /* (the first run's O, not the second's) */
    ck_assert_msg(n_now == n_before && !memcmp(now, before, n_now), "O changed");
    free(now);
    ck_assert_int_eq(symlink("o.npy", link_o), 0);
    snprintf(args, sizeof args, "run --q %s/q.npy --k %s/k.npy --v %s/v.npy --out %s --scale 0.5", dir, dir, dir,
             link_o);
    ck_assert_msg(run_tool(args, &out) == 0, "%s", out);
    struct stat st;
    ck_assert_int_eq(lstat(link_o, &st), 0);
    ck_assert_msg(S_ISLNK(st.st_mode), "the link was replaced");
    ck_assert_int_eq(stat(o, &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0640);
    now = file_bytes(o, &n_now); /* (the second run's O, through the link) */
    ck_assert_msg(n_now == n_before && memcmp(now, before, n_now), "O not rewritten through the link");
    free(now);
    free(before);
    for (int i = 0; i < 3; ++i)
        free(host[i]);
    teardown();
}
END_TEST

/* bench's --json and --csv written as run's outputs are: through a symbolic link (the link stays), a replaced
 * file's permissions kept, a dangling link's target created; and run's --out through a dangling link. They were
 * once replaced by regular files (and run's dangling --out link too). */
START_TEST(test_outputs_through_links)
{
    setup();
    char args[1200], json[256], csv[256], link_json[256], link_csv[256], made[256], *out;
    snprintf(json, sizeof json, "%s/b.json", dir);
    snprintf(link_json, sizeof link_json, "%s/b-link.json", dir);
    snprintf(csv, sizeof csv, "%s/made.csv", dir);
    snprintf(link_csv, sizeof link_csv, "%s/b-link.csv", dir);
    FILE *f = fopen(json, "w");
    fputs("{}\n", f);
    fclose(f);
    ck_assert_int_eq(chmod(json, 0640), 0);
    ck_assert_int_eq(symlink("b.json", link_json), 0);
    ck_assert_int_eq(symlink("made.csv", link_csv), 0); /* (dangling) */
    snprintf(args, sizeof args, "bench -n 16 -H 1 -b 1 -d 8 --algos flash --iters 1 --warmup 0 --json %s --csv %s",
             link_json, link_csv);
    ck_assert_msg(run_tool(args, &out) == 0, "%s", out);
    struct stat st;
    ck_assert_msg(lstat(link_json, &st) == 0 && S_ISLNK(st.st_mode), "the --json link was replaced");
    ck_assert_msg(lstat(link_csv, &st) == 0 && S_ISLNK(st.st_mode), "the dangling --csv link was replaced");
    ck_assert_int_eq(stat(json, &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0640);
    ck_assert_msg(json_holds(json, "d[\"complete\"] and len(d[\"results\"]) == 1"), "%s", file_text(json));
    ck_assert_msg(!strncmp(file_text(csv), "algo,", 5), "%s", file_text(csv));

    const int64_t qs[4] = {1, 8, 2, 16};
    void *host[3];
    write_inputs(FLASHCL_DTYPE_F32, qs, qs, host);
    snprintf(link_json, sizeof link_json, "%s/o-link.npy", dir);
    snprintf(made, sizeof made, "%s/o-made.npy", dir);
    ck_assert_int_eq(symlink("o-made.npy", link_json), 0);
    snprintf(args, sizeof args, "run --q %s/q.npy --k %s/k.npy --v %s/v.npy --out %s", dir, dir, dir, link_json);
    ck_assert_msg(run_tool(args, &out) == 0, "%s", out);
    ck_assert_msg(lstat(link_json, &st) == 0 && S_ISLNK(st.st_mode), "the dangling --out link was replaced");
    npy_array oa;
    char err[256];
    ck_assert_msg(npy_read(made, &oa, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(oa.shape[1], 8);
    npy_free(&oa);
    for (int i = 0; i < 3; ++i)
        free(host[i]);
    teardown();
}
END_TEST

/* run on .npy files checks its output paths before any work (they were once checked only when writing, after
 * the computation): an empty one is bad usage (exit 2), one that cannot be written exits 1, as bench's do.
 * The missing --q shows the order: the outputs are said first. */
START_TEST(test_run_npy_outputs_checked_first)
{
    setup();
    static const struct {
        const char *outs, *expect;
        int rc;
    } cases[] = {
        {"--out ''", "--out: an empty path", 2},
        {"--out %s/o.npy --lse=", "--lse: an empty path", 2},
        {"--out %s/o.npy --lse-out ''", "--lse-out: an empty path", 2},
        {"--out %s/none/o.npy", "none/o.npy: ", 1},
        {"--out %s/o.npy --lse %s/none/l.npy", "none/l.npy: ", 1},
        {"--out %s --json", "a directory", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
        char outs[512], args[1200], *out;
        snprintf(outs, sizeof outs, cases[i].outs, dir, dir);
        snprintf(args, sizeof args, "run --q %s/missing.npy --k %s/k.npy --v %s/v.npy %s", dir, dir, dir, outs);
        const int rc = run_tool(args, &out);
        ck_assert_msg(rc == cases[i].rc && strstr(out, cases[i].expect) && !strstr(out, "missing.npy"),
                      "%s: exit %d: %s", args, rc, out);
    }
    teardown();
}
END_TEST

/* Values that were once taken in part: a list's trailing empty item (as cli_int_list refuses one), a softcap so
 * small that float makes it 0 (no softcap). Usage errors, before any work. */
START_TEST(test_values_not_dropped)
{
    setup();
    static const struct {
        const char *args, *expect;
    } cases[] = {
        {"bench --algos flash, -n 64", "--algos flash,: an empty value"},
        {"bench --algos , -n 64", "--algos ,: an empty value"},
        {"bench --preset serving --only plain,", "--only plain,: an empty value"},
        {"bench -n 64,", "--seq (-n) 64,: an empty value"},
        {"run --softcap 1e-50 -n 8", "--softcap 1e-50: too small for a float"},
        {"bench --softcap 1e-60 -n 8", "--softcap 1e-60: too small for a float"},
    };
    char *out;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
        const int rc = run_tool(cases[i].args, &out);
        ck_assert_msg(rc == 2 && strstr(out, cases[i].expect) && !strstr(out, "[1/") && !strstr(out, "planning"),
                      "%s: exit %d: %s", cases[i].args, rc, out);
    }
    teardown();
}
END_TEST

/* The command's edges: strict option lists, conflicting options and output paths refused before any work
 * (exit 2, or 1 for a path that cannot be written), failures counted in the exit status, exact JSON
 * FLOP counts, `run --decode`, `devices --device`, errors with their reasons. */
START_TEST(test_command_edges)
{
    setup();
    char *out, args[512];
    ck_assert_int_eq(run_tool("bench --algos flash,bogus -n 64", &out), 2);
    ck_assert_msg(strstr(out, "'bogus'") != NULL, "%s", out);
    ck_assert_int_eq(run_tool("bench --heads-kv 3 -H 2 -n 64 -d 32 --iters 1 --algos flash", &out), 1);
    ck_assert_msg(strstr(out, "heads_kv = 3") != NULL, "%s", out);
    ck_assert_int_eq(run_tool("bench -n 64 --preset fa2", &out), 2);
    ck_assert_msg(strstr(out, "--preset fa2 sets the sequence lengths") != NULL, "%s", out);
    /* --only: the serving preset's shapes by name, each name checked, nothing run otherwise */
    ck_assert_int_eq(run_tool("bench --preset serving --only plain,maks", &out), 2);
    ck_assert_msg(strstr(out, "'maks' is none of the serving preset's shapes") != NULL, "%s", out);
    ck_assert_int_eq(run_tool("bench -n 64 --only plain", &out), 2);
    ck_assert_msg(strstr(out, "--only names shapes of --preset serving") != NULL, "%s", out);
    flashcl_device_profile pr;
    ck_assert_int_eq(flashcl_device_profile_query(tu_device, &pr), FLASHCL_SUCCESS);
    if (pr.is_cpu) { /* a GPU preset on a CPU: said before it starts, and an earlier result left whole */
        char keep[256];
        snprintf(keep, sizeof keep, "%s/keep.json", dir);
        FILE *k = fopen(keep, "w");
        fputs("{\"earlier\": 1}\n", k);
        fclose(k);
        snprintf(args, sizeof args, "bench --preset fa2 --json %s", keep);
        ck_assert_int_eq(run_tool(args, &out), 2);
        ck_assert_msg(strstr(out, "--max-n") != NULL && strstr(out, "[1/") == NULL, "%s", out);
        k = fopen(keep, "r");
        char back[64] = "";
        ck_assert_ptr_nonnull(fgets(back, sizeof back, k));
        fclose(k);
        ck_assert_str_eq(back, "{\"earlier\": 1}\n");
    }
    ck_assert_int_eq(run_tool("bench -n 64 -d 32 --json /nonexistent/dir/x.json", &out), 1);
    ck_assert_msg(strstr(out, "cannot write /nonexistent/dir/x.json") && strstr(out, "[1/") == NULL, "%s", out);
    ck_assert_int_eq(run_tool("bench -n 64 --plot out.png", &out), 2);
    ck_assert_msg(strstr(out, "FILE.svg") != NULL, "%s", out);
    /* 4 * B * H * N^2 * d with B = 16384 / 64 = 256 tokens' worth, H = 2: exactly 268435456 */
    snprintf(args, sizeof args, "bench -n 64 -d 32 -H 2 --iters 1 --algos flash,naive --json %s/b.json", dir);
    ck_assert_msg(run_tool(args, &out) == 0, "%s", out);
    ck_assert_msg(strstr(out, "validator") != NULL, "naive is not validated against itself: %s", out);
    char path[256];
    snprintf(path, sizeof path, "%s/b.json", dir);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    char json[8192];
    json[fread(json, 1, sizeof json - 1, f)] = '\0';
    fclose(f);
    ck_assert_msg(strstr(json, "\"flops\": 268435456,") != NULL, "%s", json);
    ck_assert_int_eq(run_tool("run --decode -n 96 -d 32 -H 4 --heads-kv 2 --iters 1", &out), 0);
    ck_assert_msg(strstr(out, "Sq=1 Sk=96") && strstr(out, "validation  PASS"), "%s", out);
    ck_assert_int_eq(run_tool("run -n 64 -d 32 -H 2 --iters 1 --algo naive", &out), 0);
    ck_assert_msg(strstr(out, "the naive kernel is the validator itself") != NULL, "%s", out);
    ck_assert_int_eq(run_tool("run --q a.npy --k b.npy --v c.npy --out o.npy -n 64", &out), 2);
    ck_assert_msg(strstr(out, "--seq (-n) applies to random inputs") != NULL, "%s", out);
    ck_assert_int_eq(run_tool("run --q /nonexistent/q.npy --k b.npy --v c.npy --out o.npy", &out), 1);
    ck_assert_msg(strstr(out, "No such file or directory") != NULL, "%s", out);
    ck_assert_int_eq(run_tool("devices", &out), 0); /* (run_tool adds --device: the test's device) */
    ck_assert_msg(strstr(out, "0:0") || strstr(out, ":"), "%s", out);
    ck_assert_int_eq(run_tool_on("devices --device no-such-device-anywhere", 0, &out), 1);
    ck_assert_msg(strstr(out, "no device matches") != NULL, "%s", out);
    ck_assert_int_eq(run_tool("tiles -d 12", &out), 1); /* the library's refusal, on stderr too */
    ck_assert_msg(strstr(out, "flashcl tiles: problem.head_dim = 12") != NULL, "%s", out);
    ck_assert_int_eq(run_tool("tune -d 32 -n 64 --db /nonexistent/dir/x.db", &out), 1);
    ck_assert_msg(strstr(out, "nothing was timed") != NULL, "%s", out);
    teardown();
}
END_TEST

/* The inference options of `run` and `bench`: each runs validated against the naive kernel (exit 0,
 * "PASS"), bad values are usage errors (exit 2) that name the option. */
START_TEST(test_inference_options)
{
    setup();
    static const char *runs[] = {
        "run -n 96 -d 32 -H 2 --iters 1 --window 16,0 --softcap 20",
        "run -n 96 -d 32 -H 4 --heads-kv 2 --iters 1 --alibi --causal",
        "run -n 80 -d 32 -H 2 -b 3 --iters 1 --varlen --causal",
        "run --seq-q 3 --seq-kv 200 -d 32 -H 2 -b 2 --iters 1 --paged 32 --append --kv-splits 3",
        "run --seq-q 1 --seq-kv 150 -d 64 -H 2 --iters 1 --kv-cache --causal",
        "run --seq-q 40 --seq-kv 90 -d 32 -H 2 --iters 1 --causal --top-left --alibi",
        "run --seq-q 40 --seq-kv 20 -d 32 -H 2 --iters 1 --causal --sinks 2.5",
        "run --seq-q 1 --seq-kv 300 -d 64 -H 4 --heads-kv 2 --iters 1 --kv-cache --sinks 1 --kv-splits 3",
        "run -n 64 -d 32 -H 2 --iters 1 --kv-dtype f16 --causal",
        "run --seq-q 1 --seq-kv 200 -d 64 -H 4 --iters 1 --kv-cache --append --kv-dtype bf16 --dtype f16",
        "run --seq-q 40 --seq-kv 90 -d 64 --dim-v 32 -H 2 --iters 1 --causal",
        "run --seq-q 2 --seq-kv 200 -d 32 --dim-v 64 -H 4 --heads-kv 2 --iters 1 --kv-cache --append --dtype f16",
    };
    char *out;
    for (size_t i = 0; i < sizeof runs / sizeof *runs; ++i) {
        ck_assert_msg(run_tool(runs[i], &out) == 0, "%s: %s", runs[i], out);
        ck_assert_msg(strstr(out, "validation  PASS") != NULL, "%s: %s", runs[i], out);
    }
    ck_assert_int_eq(run_tool("bench --decode -n 300 -d 32 -H 4 --heads-kv 2 --paged 16 --algos flash,naive --iters 1", &out),
                     0);
    ck_assert_ptr_nonnull(strstr(out, "pass"));
    ck_assert_int_eq(run_tool("bench -n 96 -d 32 -b 3 -H 2 --varlen --causal --algos flash,naive --iters 1", &out), 0);
    ck_assert_ptr_nonnull(strstr(out, "pass"));
    /* sinks: flash and naive validated, standard attention named as not taking them (or not built) */
    ck_assert_int_eq(run_tool("bench -n 96 -d 32 -H 2 --sinks 3 --iters 1", &out), 0);
    ck_assert_msg(strstr(out, "pass") && strstr(out, flashcl_algorithm_available(FLASHCL_ALGO_STANDARD)
                                                         ? "standard attention has no attention sinks"
                                                         : "not available: needs CLBlast"),
                  "%s", out);
    /* V's own head dim: every algorithm validated (standard attention's GEMMs take it too) */
    ck_assert_int_eq(run_tool("bench -n 96 -d 64 --dim-v 32 -b 2 -H 2 --iters 1", &out), 0);
    ck_assert_msg(strstr(out, "FAIL") == NULL && strstr(out, "ERROR") == NULL && strstr(out, "pass"), "%s", out);
    ck_assert_int_eq(run_tool("run -n 64 -d 32 --dim-v 12 --iters 1", &out), 1); /* the library's refusal */
    ck_assert_msg(strstr(out, "problem.head_dim_v = 12") != NULL, "%s", out);
    /* --precision: fp32 on the matrix-unit kernel's TF32 products, forced (emulated here), said in the JSON;
     * with 16-bit data the library's refusal names the field */
    ck_assert_int_eq(run_tool_full("FLASHCL_PATH=mma", "run -n 40 -d 64 -H 2 --iters 1 --precision tf32x3 --json", 1,
                                   &out, NULL),
                     0);
    ck_assert_msg(strstr(out, "\"precision\": \"tf32x3\"") && strstr(out, "\"tf32\": 3") &&
                      strstr(out, "\"kernel\": \"flash_mma\"") && strstr(out, "\"passed\": true"),
                  "%s", out);
    ck_assert_int_eq(run_tool("run -n 40 -d 64 --dtype f16 --iters 1 --precision tf32", &out), 1);
    ck_assert_msg(strstr(out, "problem.precision = tf32") != NULL, "%s", out);
    /* --fp8, --descale: fp8 attention validated, said in the text and the JSON; with a V head dim of its own
     * the library's refusal names the field; bench runs it and reports standard attention not run */
    ck_assert_int_eq(run_tool("run -n 48 -d 32 -H 4 --heads-kv 2 -b 2 --dtype bf16 --causal --iters 1 --fp8 e4m3 "
                              "--descale head --json",
                              &out),
                     0);
    ck_assert_msg(strstr(out, "\"qkv_format\": \"fp8e4m3\"") && strstr(out, "\"fp8_descale\": \"head\"") &&
                      strstr(out, "\"passed\": true"),
                  "%s", out);
    /* the inference features in run's JSON as in its text: the alignment, the sinks' logit, the paged cache */
    ck_assert_int_eq(run_tool("run -n 48 -d 32 -H 2 -b 2 --causal --top-left --sinks 0.5 --kv-cache --paged 16 "
                              "--iters 1 --json",
                              &out),
                     0);
    ck_assert_msg(strstr(out, "\"alignment\": \"top_left\"") && strstr(out, "\"sinks\": 0.5") &&
                      strstr(out, "\"kv_cache\": true") && strstr(out, "\"page_size\": 16") &&
                      strstr(out, "\"gqa_pack\": ") && strstr(out, "\"passed\": true"),
                  "%s", out);
    ck_assert_int_eq(run_tool("run -n 48 -d 32 -H 2 --causal --top-left --iters 1", &out), 0);
    ck_assert_msg(strstr(out, "causal top-left") && strstr(out, "PASS"), "%s", out);
    ck_assert_int_eq(run_tool("run -n 40 -d 32 --iters 1 --fp8 e5m2 --descale tensor", &out), 0);
    ck_assert_msg(strstr(out, "Q, K and V fp8e5m2 with descale factors a tensor") && strstr(out, "PASS"), "%s", out);
    ck_assert_int_eq(run_tool("run -n 40 -d 32 --dim-v 16 --iters 1 --fp8 e4m3", &out), 1);
    ck_assert_msg(strstr(out, "problem.qkv_format = fp8e4m3 with head_dim_v") != NULL, "%s", out);
    ck_assert_int_eq(run_tool_full("FLASHCL_PATH=mma", "tiles -d 64 --dtype f16 --fp8 e4m3", 1, &out, NULL), 0);
    ck_assert_msg(strstr(out, "flash_fwd") && strstr(out, "fp8 Q, K and V"), "%s", out); /* (the reason named) */
    ck_assert_int_eq(run_tool("bench -n 40 -d 32 -H 2 -b 1 --iters 1 --fp8 e4m3", &out), 0);
    ck_assert_msg(strstr(out, "pass") && !strstr(out, "FAIL") &&
                      strstr(out, flashcl_algorithm_available(FLASHCL_ALGO_STANDARD) ? "standard attention has no fp8"
                                                                                     : "not available"),
                  "%s", out);
    static const char *bad[] = {"run --window 3", "run --softcap -1", "run --paged 20", "run --kv-splits 2000",
                                "bench --paged 8", "run --sinks x1", "bench --sinks", "run --kv-dtype f64",
                                "run --dim-v 0", "bench --dim-v x", "run --precision fp16", "run --fp8 e3m4",
                                "bench --descale row"};
    static const char *named[] = {"--window 3", "--softcap -1", "--paged 20", "--kv-splits 2000", "--paged",
                                  "--sinks x1", "--sinks", "--kv-dtype f64", "--dim-v", "--dim-v", "--precision fp16",
                                  "--fp8 e3m4", "--descale row"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; ++i) {
        ck_assert_msg(run_tool(bad[i], &out) == 2, "%s: %s", bad[i], out);
        ck_assert_msg(strstr(out, named[i]) != NULL, "%s: %s", bad[i], out);
    }
    teardown();
}
END_TEST

/* --path: the matrix-unit kernel forced (emulated without matrix units) runs validated and says so;
 * tiles names the kernel and why; a bad value is a usage error naming the option. */
START_TEST(test_path_option)
{
    setup();
    char *out;
    ck_assert_msg(run_tool("run -n 80 -d 32 -H 2 --dtype f16 --causal --iters 1 --path mma", &out) == 0, "%s", out);
    ck_assert_msg(strstr(out, "kernel      flash_mma") && strstr(out, "validation  PASS"), "%s", out);
    ck_assert_msg(run_tool("run -n 80 -d 32 -H 2 --dtype f16 --iters 1 --path portable", &out) == 0, "%s", out);
    ck_assert_msg(strstr(out, "kernel      flash_fwd") && strstr(out, "path        portable: the path is forced"),
                  "%s", out);
    ck_assert_int_eq(run_tool("tiles -d 64 --dtype bf16 --path mma --json", &out), 0);
    ck_assert_msg(strstr(out, "\"kernel\": \"flash_mma\"") && strstr(out, "\"path_reason\""), "%s", out);
    ck_assert_int_eq(run_tool("tiles -d 64 --dtype f32 --path mma", &out), 0); /* fp32: portable, and why */
    ck_assert_msg(strstr(out, "path: portable: fp32 storage"), "%s", out);
    static const char *bad[] = {"run --path gpu", "bench --path", "tiles --path tensor"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; ++i) {
        ck_assert_msg(run_tool(bad[i], &out) == 2, "%s: %s", bad[i], out);
        ck_assert_msg(strstr(out, "--path") != NULL, "%s: %s", bad[i], out);
    }
    teardown();
}
END_TEST

/* --config forces one kernel's tiles (flashcl_context_override_config) in run, bench and tiles: what runs
 * is what was asked for, validated; a field the kernel needs and was not given fails the plan naming it;
 * a malformed SPEC exits 2 naming the option and the field. */
START_TEST(test_config_option)
{
    setup();
    char *out;
    const char *tiles = "kernel=portable,block_m=16,block_n=16,threads_per_row=4,rows_per_item=1,d_chunk=32,v_chunk=16";
    char args[512];
    snprintf(args, sizeof args, "run -n 80 -d 32 -H 2 --iters 1 --config %s", tiles);
    ck_assert_msg(run_tool(args, &out) == 0, "%s", out);
    ck_assert_msg(strstr(out, "kernel      flash_fwd: block_m=16 block_n=16 threads/row=4 rows/item=1 d_chunk=32 "
                              "v_chunk=16") &&
                      strstr(out, "validation  PASS") && strstr(out, "set by flashcl_context_override_config"),
                  "%s", out);
    snprintf(args, sizeof args, "bench -n 80 -d 32 -H 2 -b 1 --iters 1 --algos flash --json - --config %s", tiles);
    ck_assert_msg(run_tool(args, &out) == 0, "%s", out);
    ck_assert_msg(strstr(out, "\"block_m\": 16") && strstr(out, "\"block_n\": 16") && strstr(out, "\"passed\": true"),
                  "%s", out);
    snprintf(args, sizeof args, "tiles -d 32 --json --config %s", tiles);
    ck_assert_msg(run_tool(args, &out) == 0, "%s", out);
    ck_assert_msg(strstr(out, "\"block_m\": 16, \"block_n\": 16, \"threads_per_row\": 4,") &&
                      strstr(out, "\"source\": \"override\""),
                  "%s", out);
    /* the matrix-unit kernel's own tiles (emulated where the device has none) */
    ck_assert_msg(run_tool("run -n 80 -d 32 -H 2 --dtype f16 --iters 1 --path mma --config kernel=mma,block_m=32,block_n=32",
                           &out) == 0,
                  "%s", out);
    ck_assert_msg(strstr(out, "kernel      flash_mma: block_m=32 block_n=32") && strstr(out, "validation  PASS"), "%s",
                  out);
    /* a field the portable kernel needs, left out: the plan fails and says which */
    ck_assert_int_eq(run_tool("run -n 80 -d 32 -H 2 --iters 1 --config kernel=portable,block_m=16,block_n=16,"
                              "threads_per_row=4",
                              &out),
                     1);
    ck_assert_msg(strstr(out, "rows_per_item 0: must be 1 to 64"), "%s", out);
    static const struct {
        const char *args, *says;
    } bad[] = {{"run --config block_m", "'block_m' is not KEY=VALUE"},
               {"bench --config foo=1", "no field 'foo'"},
               {"tiles --config block_m=x", "--config block_m x"},
               {"tiles --config kernel=decode", "kernel=decode: expected portable, mma, wgmma"},
               {"run --config producer=2", "--config producer 2"},
               {"tiles --config ,", "'' is not KEY=VALUE"},
               {"tiles --config block_m=16,block_m=32", "'block_m' given twice"},
               {"run --config kernel=mma,block_m=32,threads_per_row=4", "threads_per_row: kernel=mma does not read it"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; ++i) {
        ck_assert_msg(run_tool(bad[i].args, &out) == 2, "%s: %s", bad[i].args, out);
        ck_assert_msg(strstr(out, bad[i].says) != NULL, "%s: %s", bad[i].args, out);
    }
    teardown();
}
END_TEST

/* An output that is an input, or the other output, is refused (exit 2, both options named) before anything
 * runs, whether the paths are spelled alike, differ (./k.npy), are hard or symbolic links, or name files
 * that do not exist yet; the input is left as it was. */
START_TEST(test_run_npy_output_clash)
{
    setup();
    const int64_t qs[4] = {1, 8, 2, 16};
    void *host[3];
    write_inputs(FLASHCL_DTYPE_F32, qs, qs, host);
    char q[256], link_k[256], link_v[256];
    snprintf(q, sizeof q, "%s/q.npy", dir);
    const size_t q_bytes = (size_t)(8 * 2 * 16 * 4);
    char *held = malloc(q_bytes + 256);
    FILE *f = fopen(q, "rb");
    const size_t held_n = fread(held, 1, q_bytes + 256, f);
    fclose(f);
    snprintf(link_k, sizeof link_k, "%s/hard.npy", dir);
    snprintf(link_v, sizeof link_v, "%s/soft.npy", dir);
    char kpath[256], vpath[256];
    snprintf(kpath, sizeof kpath, "%s/k.npy", dir);
    snprintf(vpath, sizeof vpath, "%s/v.npy", dir);
    ck_assert_int_eq(link(kpath, link_k), 0);
    ck_assert_int_eq(symlink(vpath, link_v), 0);
    static const struct {
        const char *out, *lse, *a, *b;
    } cases[] = {
        {"q.npy", "q.npy", "--q", "--out"},     /* the report's case: both outputs onto Q */
        {"o.npy", "./o.npy", "--out", "--lse"}, /* two outputs, neither there yet */
        {"./k.npy", NULL, "--k", "--out"},
        {"hard.npy", NULL, "--k", "--out"},     /* K by a hard link */
        {"o.npy", "soft.npy", "--v", "--lse"},  /* V by a symbolic link */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
        char args[1024], lse[300] = "", *out;
        if (cases[i].lse)
            snprintf(lse, sizeof lse, "--lse %s/%s", dir, cases[i].lse);
        snprintf(args, sizeof args, "run --q %s/q.npy --k %s/k.npy --v %s/v.npy --out %s/%s %s", dir, dir, dir, dir,
                 cases[i].out, lse);
        ck_assert_msg(run_tool(args, &out) == 2, "case %zu: %s", i, out);
        ck_assert_msg(strstr(out, cases[i].a) && strstr(out, cases[i].b) && strstr(out, "same file"), "case %zu: %s",
                      i, out);
        ck_assert_msg(strstr(out, "planning") == NULL, "case %zu ran: %s", i, out);
    }
    f = fopen(q, "rb");
    char *now = malloc(q_bytes + 256);
    ck_assert_uint_eq(fread(now, 1, q_bytes + 256, f), held_n);
    fclose(f);
    ck_assert_mem_eq(now, held, held_n);
    char o[256];
    snprintf(o, sizeof o, "%s/o.npy", dir);
    ck_assert_msg(access(o, F_OK) != 0, "o.npy was written");
    free(now);
    free(held);
    for (int i = 0; i < 3; ++i)
        free(host[i]);
    teardown();
}
END_TEST

/* Options that contradict each other are usage errors naming both, before any work. */
START_TEST(test_conflicting_options)
{
    setup();
    char json[300], same[600];
    snprintf(json, sizeof json, "%s/x.json", dir);
    snprintf(same, sizeof same, "bench -n 64 --json %s --csv %s/../%s/x.json", json, dir, strrchr(dir, '/') + 1);
    const struct {
        const char *args, *a, *b;
    } cases[] = {
        {"run --naive --algo flash", "--naive", "--algo flash"},
        {"run --no-validate --validate", "--validate", "--no-validate"},
        {"run -n 64 --seq-q 4 --seq-kv 8", "--seq", "--seq-q"},
        {"bench --causal --both -n 64", "--causal", "--both"},
        {"bench --preset fa2 --both", "--preset fa2", "--both"},
        {"bench --preset long --tokens 8", "--preset long", "--tokens"},
        {"bench --preset serving --softcap 30", "--preset serving", "--softcap"},
        {"bench --preset serving -b 2", "--preset serving", "-b"},
        {"bench -n 64 --json - --csv -", "--json", "--csv"},
        {same, "--json", "--csv"},
        {"tiles --all -d 64", "--all", "--dim"},
        {"tiles --all --dtype f16", "--all", "--dtype"},
        {"tune -d 64 -H 4 --gqa 3 --dry-run", "--gqa", "--heads"},
        {"run --q a.npy --k b.npy --v c.npy --out o.npy --lse", "--lse", "--q"},
        {"bench -n 64 -b 2 --tokens 64", "--tokens", "-b"}, /* (--tokens was dropped unsaid) */
        {"bench --preset serving --plot x.svg", "--preset serving", "--plot"}, /* (one panel of one length) */
    };
    char *out;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
        ck_assert_msg(run_tool(cases[i].args, &out) == 2, "%s: %s", cases[i].args, out);
        ck_assert_msg(strstr(out, cases[i].a) && strstr(out, cases[i].b), "%s: %s", cases[i].args, out);
        ck_assert_msg(!strstr(out, "[1/") && !strstr(out, "planning") && !strstr(out, "class "), "%s ran: %s",
                      cases[i].args, out);
    }
    ck_assert_msg(access(json, F_OK) != 0, "x.json was written");
    teardown();
}
END_TEST

/* getopt_long everywhere: --opt=value as well as --opt value, short options glued (-d64), and the usage
 * errors getopt finds (a flag given a value, a stray word, a missing value) named. No kernel is built. */
START_TEST(test_option_spellings)
{
    setup();
    char *out;
    ck_assert_int_eq(run_tool("tiles -d 64 --dtype f16 -n 300 --gqa 2 --json", &out), 0);
    char *spaced = strdup(out);
    static const char *same[] = {"tiles --dim=64 --dtype=f16 --seq=300 --gqa=2 --json",
                                 "tiles -d64 --dtype f16 -n300 --gqa 2 --json"};
    for (size_t i = 0; i < 2; ++i) {
        ck_assert_msg(run_tool(same[i], &out) == 0, "%s: %s", same[i], out);
        ck_assert_msg(!strcmp(out, spaced), "%s:\n%s\nvs\n%s", same[i], out, spaced);
    }
    free(spaced);
    ck_assert_int_eq(run_tool("tune --dry-run --dim=64 --dtype=f32,f16 --seq=64 --gqa=2", &out), 0);
    ck_assert_msg(strstr(out, "class  d=64 f16 non-causal Sq=64 Sk=64") && strstr(out, "Hq=32 Hkv=16"), "%s", out);
    ck_assert_int_eq(run_tool("run --window=3", &out), 2); /* the value reached --window's own check */
    ck_assert_msg(strstr(out, "--window 3: expected LEFT,RIGHT"), "%s", out);
    ck_assert_int_eq(run_tool("run --kv-dtype=f64", &out), 2);
    ck_assert_msg(strstr(out, "--kv-dtype f64"), "%s", out);
    static const char *bad[] = {"run --causal=1", "bench stray", "tiles --dim", "run --frobnicate", "devices --json=1"};
    static const char *says[] = {"--causal takes no value", "unexpected argument 'stray'", "--dim", "'--frobnicate'",
                                 "--json takes no value"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; ++i) {
        ck_assert_msg(run_tool(bad[i], &out) == 2, "%s: %s", bad[i], out);
        ck_assert_msg(strstr(out, says[i]) != NULL, "%s: %s", bad[i], out);
    }
    teardown();
}
END_TEST

/* flashcl --help names every environment variable the library and the command read: those in the sources
 * (read where the test finds them beside itself), else the list as of this test. */
START_TEST(test_help_lists_environment)
{
    setup();
    char *help;
    ck_assert_int_eq(run_tool_on("--help", 0, &help), 0);
    char *text = strdup(help);
    char src[512], cmd[1200], names[4096] = "";
    snprintf(src, sizeof src, "%s", __FILE__); /* (.../tests/test_cli.c: the source root is its directory's parent) */
    char *slash = strrchr(src, '/');
    if (slash)
        strcpy(slash, "/..");
    else
        strcpy(src, "..");
    snprintf(cmd, sizeof cmd, "grep -rhoE '\"FLASHCL_[A-Z0-9_]+\"' '%s/src' '%s/tools' 2>/dev/null | tr -d '\"' | sort -u",
             src, src);
    FILE *p = popen(cmd, "r");
    const size_t n = p ? fread(names, 1, sizeof names - 1, p) : 0;
    names[n] = '\0';
    if (p)
        pclose(p);
    if (!strstr(names, "FLASHCL_DEVICE")) /* (the sources are not beside the test) */
        snprintf(names, sizeof names, "FLASHCL_DEVICE\nFLASHCL_PATH\nFLASHCL_VALIDATE\nFLASHCL_CACHE\nFLASHCL_CACHE_DIR\n"
                                      "FLASHCL_TUNING_DB\nFLASHCL_LOCAL_MEM_LIMIT\nFLASHCL_BUILD_OPTIONS\n"
                                      "FLASHCL_BUILD_LOG\nFLASHCL_STANDARD_CHUNK_FLOATS\n");
    for (char *name = strtok(names, "\n"); name; name = strtok(NULL, "\n")) {
        char line[96];
        snprintf(line, sizeof line, "  %s ", name); /* (one line each: the name, then what it does) */
        ck_assert_msg(strstr(text, line) != NULL, "flashcl --help lacks %s:\n%s", name, text);
    }
    ck_assert_msg(strstr(text, "FLASHCL_TUNING_DB") && strstr(text, "XDG_CONFIG_HOME"), "%s", text);
    free(text);
    teardown();
}
END_TEST

/* bench --json -: stdout is the JSON alone (the table on stderr), which parses, with numbers that keep
 * their digits (a CPU's TFLOP/s is no 0.0000), the decode shape's real lengths, the kernel's tiles, the
 * host's side and the device's time alone;
 * the progress line says Sq=4 Sk=64 for --decode --seq-q 4 -n 64. */
START_TEST(test_bench_json_stdout)
{
    setup();
    char *out, *err, path[256];
    const int rc = run_tool_full("", "bench --decode --seq-q=4 --seq=64 -d 16 -H 2 -b 1 --algos=flash --iters 2 "
                                     "--warmup 0 --json=-", 1, &out, &err);
    ck_assert_msg(rc == 0, "%s%s", out, err);
    ck_assert_msg(strstr(err, "Sq=4 Sk=64") && strstr(err, "| flash"), "%s", err);
    ck_assert_msg(!strstr(out, "| flash") && out[0] == '{', "stdout is not the JSON alone:\n%s", out);
    snprintf(path, sizeof path, "%s/out.txt", dir);
    ck_assert_msg(json_holds(path, "d[\"complete\"] and len(d[\"results\"]) == 1 and d[\"results\"][0][\"seq_q\"] == 4 and "
                                   "d[\"results\"][0][\"seq\"] == 64 and d[\"results\"][0][\"tflops\"] > 0 and "
                                   "d[\"results\"][0][\"gb_per_s\"] > 0 and d[\"results\"][0][\"passed\"] and "
                                   "0 < d[\"results\"][0][\"host_enqueue_us\"] <= d[\"results\"][0][\"host_step_us\"] and "
                                   "0 < d[\"results\"][0][\"device_us_min\"] <= d[\"results\"][0][\"device_us\"] <= "
                                   "d[\"results\"][0][\"device_us_max\"] and "
                                   "d[\"results\"][0][\"device_pad_bytes\"] >= 1048576 and "
                                   "0 < d[\"results\"][0][\"device_b2b_us_min\"] <= "
                                   "d[\"results\"][0][\"device_b2b_us\"] <= "
                                   "d[\"results\"][0][\"device_b2b_us_max\"] and "
                                   "d[\"results\"][0][\"kernel\"] and min(d[\"results\"][0][k] for k in (\"block_m\", "
                                   "\"block_n\", \"work_group\")) >= 1"),
                  "%s", out);
    teardown();
}
END_TEST

/* run --json parses, on success (random inputs) and on failure: NaN in Q makes O NaN where the naive
 * kernel's result is NaN too; the message counts the output's and the inputs' non-finite values (not the
 * report's 0, which counts only outputs non-finite where the reference is finite), the JSON carries the
 * status, the message and the report, and nothing is written. */
START_TEST(test_run_json_and_nan)
{
    setup();
    char *out, *err, path[256], args[1024];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    ck_assert_int_eq(run_tool_full("", "run -n 32 -d 16 -H 2 --iters 2 --warmup 0 --json", 1, &out, &err), 0);
    ck_assert_msg(json_holds(path, "d[\"status\"] == \"SUCCESS\" and d[\"tflops\"] > 0 and d[\"validation\"][\"passed\"] "
                                   "and d[\"time_ms\"][\"median\"] > 0"),
                  "%s", out);
    const int64_t qs[4] = {1, 8, 2, 16};
    void *host[3];
    write_inputs(FLASHCL_DTYPE_F32, qs, qs, host);
    ((float *)host[0])[0] = NAN; /* Q row 0 of head 0 */
    char q[256], e[256];
    snprintf(q, sizeof q, "%s/q.npy", dir);
    ck_assert_int_eq(npy_write(q, "<f4", 4, qs, host[0], e, sizeof e), 0);
    snprintf(args, sizeof args, "run --q=%s/q.npy --k=%s/k.npy --v=%s/v.npy --out=%s/o.npy --validate --json", dir, dir,
             dir, dir);
    ck_assert_msg(run_tool_full("", args, 1, &out, &err) == 3, "%s%s", out, err);
    ck_assert_msg(strstr(err, "the output holds 16 non-finite values") && strstr(err, "the inputs hold 1"), "%s", err);
    ck_assert_msg(json_holds(path, "d[\"status\"] == \"VALIDATION_FAILED\" and \"inputs hold 1\" in d[\"message\"] and "
                                   "d[\"input_nonfinite\"] == 1 and d[\"output_nonfinite\"] == 16 and "
                                   "d[\"validation\"][\"failures\"] == 16 and not d[\"validation\"][\"passed\"] and "
                                   "d[\"validation\"][\"max_abs_error\"] is None"),
                  "%s", out);
    snprintf(path, sizeof path, "%s/o.npy", dir);
    ck_assert_msg(access(path, F_OK) != 0, "o.npy was written");
    for (int i = 0; i < 3; ++i)
        free(host[i]);
    teardown();
}
END_TEST

/* --max-seconds: fractional, a budget for the whole bench; once spent no measurement starts, the outputs
 * say which were left out and which had fewer runs, and the exit status stays 0. Bad values are usage errors. */
START_TEST(test_bench_budget)
{
    setup();
    char *out, args[512], path[256];
    snprintf(path, sizeof path, "%s/b.json", dir);
    /* (1 ms: spent by the first plan's build, which still runs and is measured) */
    snprintf(args, sizeof args, "bench --seq=32,48 -d 16 -H 2 -b 1 --algos flash --max-seconds=0.001 --json %s", path);
    ck_assert_msg(run_tool(args, &out) == 0, "%s", out);
    ck_assert_msg(strstr(out, "budget was spent") && strstr(out, "flash not started"), "%s", out);
    ck_assert_msg(json_holds(path, "d[\"complete\"] and d[\"max_seconds\"] == 0.001 and d[\"not_started\"] == 1 and "
                                   "[r[\"ran\"] for r in d[\"results\"]] == [True, False] and "
                                   "d[\"results\"][0][\"runs\"] == 1 and "
                                   "d[\"results\"][1][\"note\"].startswith(\"not started\")"),
                  "%s", file_text(path));
    static const char *bad[] = {"bench --max-seconds 0", "bench --max-seconds -1", "bench --max-seconds nan",
                                "bench --max-seconds inf", "bench --max-seconds=1s"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; ++i) {
        ck_assert_msg(run_tool(bad[i], &out) == 2, "%s: %s", bad[i], out);
        ck_assert_msg(strstr(out, "--max-seconds") != NULL, "%s: %s", bad[i], out);
    }
    teardown();
}
END_TEST

/* A bench killed after its first shape leaves JSON (valid, "complete": false) and CSV files holding that
 * shape's result: the files are rewritten after every measurement. The second shape is long (N = 8192),
 * so the kill lands while it runs. The test waits for both files: the CSV is renamed into place after the
 * JSON, and on a GPU a kill between the two left no CSV (H200, 2026-12-04). */
START_TEST(test_bench_killed_keeps_results)
{
    setup();
    const char *tool = getenv("FLASHCL_TOOL");
    char json[256], csv[256], cmd[2048];
    snprintf(json, sizeof json, "%s/k.json", dir);
    snprintf(csv, sizeof csv, "%s/k.csv", dir);
    snprintf(cmd, sizeof cmd, "exec '%s' bench -n 32,8192 -d 16 -H 1 -b 1 --algos flash --iters 1 --warmup 0 --json %s "
                              "--csv %s --device '%s' > %s/out.txt 2>&1", tool, json, csv, tu_device_label, dir);
    const pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        setenv("FLASHCL_CACHE", "0", 1);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    int status = 0, waited = 0;
    for (int i = 0; i < 30000 && (access(json, F_OK) != 0 || access(csv, F_OK) != 0) &&
                    !(waited = waitpid(pid, &status, WNOHANG));
         ++i)
        nanosleep(&(struct timespec){0, 10000000}, NULL); /* (10 ms; 300 s at most) */
    if (!waited) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
    }
    snprintf(cmd, sizeof cmd, "%s/out.txt", dir);
    ck_assert_msg(WIFSIGNALED(status), "the bench ended before it was killed (status %d): %s", status, file_text(cmd));
    ck_assert_msg(json_holds(json, "not d[\"complete\"] and len(d[\"results\"]) == 1 and d[\"results\"][0][\"seq\"] == 32 "
                                   "and d[\"results\"][0][\"ran\"]"),
                  "%s", file_text(json));
    const char *text = file_text(csv);
    ck_assert_msg(!strncmp(text, "algo,", 5) && strstr(text, "\nflash,1,1,32,16,f32,0,") && !strstr(text, ",8192,"),
                  "%s", text);
    teardown();
}
END_TEST

/* tiles shows local memory against the budget the chooser had (FLASHCL_LOCAL_MEM_LIMIT here), and on a CPU
 * no work-groups a compute unit ("-", and why) where local memory bounds none. */
START_TEST(test_tiles_budget_and_groups)
{
    setup();
    char *out, path[256];
    ck_assert_int_eq(run_tool_full("FLASHCL_LOCAL_MEM_LIMIT=20000", "tiles -d 64", 1, &out, NULL), 0);
    ck_assert_msg(strstr(out, "/20000 ") != NULL, "%s", out);
    flashcl_device_profile pr;
    ck_assert_int_eq(flashcl_device_profile_query(tu_device, &pr), FLASHCL_SUCCESS);
    if (pr.is_cpu)
        ck_assert_msg(strstr(out, "     -  ") && strstr(out, "wg/cu -: a CPU"), "%s", out);
    ck_assert_int_eq(run_tool_full("FLASHCL_LOCAL_MEM_LIMIT=20000", "tiles -d 64 --json", 1, &out, NULL), 0);
    snprintf(path, sizeof path, "%s/out.txt", dir);
    ck_assert_msg(json_holds(path, pr.is_cpu ? "d[\"configs\"][0][\"local_mem_budget\"] == 20000 and "
                                               "d[\"configs\"][0][\"groups_per_cu_by_local_mem\"] is None and "
                                               "\"CPU\" in d[\"configs\"][0][\"groups_per_cu_note\"]"
                                             : "d[\"configs\"][0][\"local_mem_budget\"] == 20000 and "
                                               "d[\"configs\"][0][\"groups_per_cu_by_local_mem\"] >= 1"),
                  "%s", out);
    teardown();
}
END_TEST

/* Counts past int32 (a pool of pages, packed sequences' totals) refused by name, exit 2, before any work: they
 * once overflowed (a negative malloc, a pool of k pages for 2^32 + k, the library's refusal of negative totals). */
START_TEST(test_int32_limits)
{
    setup();
    static const struct {
        const char *args, *expect;
    } cases[] = {
        {"run -b 32768 -H 1 -d 8 --seq-kv 1048576 --seq-q 1 --kv-cache --paged 16 --no-validate --iters 1",
         "a pool of 2147549184 pages, past 2^31-1"},
        {"run -b 4096 -H 1 -d 8 -n 1048576 --varlen --no-validate", "--varlen: -b 4096 sequences"},
        {"bench -n 1048576 -d 8 -H 1 -b 4096 --varlen --algos flash", "--varlen: B=4096 sequences"},
        {"bench -n 1073741824 -d 8 -H 1 -b 65 --paged 16 --algos flash", "take 4362076160 pages, past 2^31-1"},
    };
    char *out;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
        const int rc = run_tool(cases[i].args, &out);
        ck_assert_msg(rc == 2 && strstr(out, cases[i].expect), "%s: exit %d: %s", cases[i].args, rc, out);
    }
    teardown();
}
END_TEST

/* Every shape the lists allow (32 lengths x 8 dims x 2 masks) is run or said not started: past 256 they
 * were once dropped unsaid. The budget leaves all but the first not started. */
START_TEST(test_bench_every_shape)
{
    setup();
    char args[1024], path[256], *out;
    int k = snprintf(args, sizeof args, "bench -n ");
    for (int i = 1; i <= 32; ++i)
        k += snprintf(args + k, sizeof args - (size_t)k, "%d%s", 16 * i, i < 32 ? "," : "");
    snprintf(args + k, sizeof args - (size_t)k, " -d 8,16,24,32,40,48,56,64 --both -H 1 -b 1 --algos flash --iters 1 "
                                                "--warmup 0 --max-seconds 0.001 --json %s/e.json", dir);
    ck_assert_msg(run_tool(args, &out) == 0, "%s", out);
    ck_assert_msg(strstr(out, ": 512 shapes") != NULL, "%.1000s", out);
    snprintf(path, sizeof path, "%s/e.json", dir);
    ck_assert_msg(json_holds(path, "len({(r[\"seq\"], r[\"head_dim\"], r[\"causal\"]) for r in d[\"results\"]}) == 512 "
                                   "and d[\"complete\"]"),
                  "%.1000s", file_text(path));
    teardown();
}
END_TEST

/* JSON strings stay valid JSON whatever bytes they hold: well-formed UTF-8 kept, every other byte \ufffd (raw
 * bytes of a Latin-1 path once made the document invalid); and so a run's --json with such a path. */
START_TEST(test_json_string_utf8)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"plain \"q\" \\ \t", "\"plain \\\"q\\\" \\\\ \\u0009\""},
        {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\""}, /* kept */
        {"a\xff" "b", "\"a\\ufffdb\""},                               /* no lead byte */
        {"\x80x", "\"\\ufffdx\""},                                     /* a stray continuation */
        {"\xc3", "\"\\ufffd\""},                                       /* cut at the end */
        {"\xe2\x82x", "\"\\ufffd\\ufffdx\""},                          /* cut before an ASCII byte */
        {"\xc0\xaf", "\"\\ufffd\\ufffd\""},                            /* overlong */
        {"\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\""},                 /* a surrogate */
        {"\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\""},      /* past U+10FFFF */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
        char *buf = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&buf, &n);
        ck_assert_ptr_nonnull(f);
        cli_json_string(f, cases[i].in);
        fclose(f);
        ck_assert_msg(!strcmp(buf, cases[i].out), "case %zu: %s, expected %s", i, buf, cases[i].out);
        free(buf);
    }
    setup();
    char args[1024], path[256], *out;
    snprintf(args, sizeof args, "run --q %s/q\xff.npy --k %s/k.npy --v %s/v.npy --out %s/o.npy --json", dir, dir, dir,
             dir);
    char *err;
    ck_assert_int_eq(run_tool_full("", args, 1, &out, &err), 1); /* (no such file) */
    snprintf(path, sizeof path, "%s/out.txt", dir);
    ck_assert_msg(json_holds(path, "d[\"status\"] == \"FILE_ERROR\" and \"q\\ufffd.npy\" in d[\"message\"]"), "%s",
                  out);
    teardown();
}
END_TEST

/* A candidate with only the figures the decision reads. */
static candidate timed(double min, double median, double max)
{
    candidate c;
    memset(&c, 0, sizeof c);
    c.min = min;
    c.median = median;
    c.max = max;
    return c;
}

/* tune's noise policy (tune_decide in tools/cmd_tune.c), case by case. */
START_TEST(test_tune_decision)
{
    candidate w = timed(1.0, 1.1, 1.2), r = timed(1.5, 1.6, 1.7), h = timed(2.0, 2.1, 2.2);
    ck_assert_int_eq(tune_decide(&w, &r, &h, 2), TUNE_STORE);     /* apart from both */
    ck_assert_int_eq(tune_decide(&w, NULL, &h, 0), TUNE_STORE);   /* no runner-up */
    ck_assert_int_eq(tune_decide(&h, &w, &h, 2), TUNE_HEURISTIC); /* the heuristic won */
    candidate close_h = timed(1.15, 1.3, 1.4);                    /* overlaps the winner */
    ck_assert_int_eq(tune_decide(&w, &r, &close_h, 1), TUNE_REPEAT);
    ck_assert_int_eq(tune_decide(&w, &r, &close_h, 0), TUNE_NOISE); /* still: nothing stored */
    ck_assert_int_eq(tune_decide(&w, &close_h, &h, 2), TUNE_REPEAT); /* the runner-up within the noise */
    ck_assert_int_eq(tune_decide(&w, &close_h, &h, 0), TUNE_STORE);  /* ... beats the heuristic: stored */
    candidate rejected = timed(0.5, 0.6, 0.7);
    rejected.verdict = "rejected: spills registers";
    ck_assert_int_eq(tune_decide(&w, &r, &rejected, 2), TUNE_STORE); /* the heuristic's tiles do not run */
    candidate touching = timed(1.2, 1.5, 1.9);                       /* min = the winner's max: overlaps */
    ck_assert_int_eq(tune_decide(&w, NULL, &touching, 0), TUNE_NOISE);
}
END_TEST

static Suite *make_suite(void)
{
    Suite *s = suite_create("cli");
    TCase *tc = tcase_create("cli");
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, test_run_npy_matches_library, 0, 3);
    tcase_add_loop_test(tc, test_run_npy_refuses, 0, 4);
    tcase_add_test(tc, test_run_npy_dim_v);
    tcase_add_test(tc, test_run_npy_precision);
    tcase_add_test(tc, test_command_edges);
    tcase_add_test(tc, test_tiles_json_is_the_plan);
    tcase_add_test(tc, test_tune_dry_run);
    tcase_add_test(tc, test_bench_small);
    tcase_add_test(tc, test_path_option);
    tcase_add_test(tc, test_config_option);
    tcase_add_test(tc, test_help_and_usage_errors);
    tcase_add_test(tc, test_inference_options);
    tcase_add_test(tc, test_run_npy_output_clash);
    tcase_add_test(tc, test_run_npy_outputs_kept);
    tcase_add_test(tc, test_conflicting_options);
    tcase_add_test(tc, test_option_spellings);
    tcase_add_test(tc, test_help_lists_environment);
    tcase_add_test(tc, test_bench_json_stdout);
    tcase_add_test(tc, test_run_json_and_nan);
    tcase_add_test(tc, test_bench_budget);
    tcase_add_test(tc, test_bench_killed_keeps_results);
    tcase_add_test(tc, test_tiles_budget_and_groups);
    tcase_add_test(tc, test_tune_decision);
    tcase_add_test(tc, test_int32_limits);
    tcase_add_test(tc, test_bench_every_shape);
    tcase_add_test(tc, test_json_string_utf8);
    tcase_add_test(tc, test_outputs_through_links);
    tcase_add_test(tc, test_tiles_precision);
    tcase_add_test(tc, test_run_npy_outputs_checked_first);
    tcase_add_test(tc, test_values_not_dropped);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run(make_suite, 1);
}
