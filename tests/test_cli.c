/*
 * test_cli.c: the flashcl command end to end on the current device: `run` on .npy files writes what
 * the library computes for the same inputs, refuses bad files and writes nothing then; `tiles --json`
 * reports the plan's configuration; `tune --dry-run` lists candidates; every subcommand has --help.
 * The command's path comes from FLASHCL_TOOL (set by meson).
 */
#include "testutil.h"
#include "npy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[128];

/* Runs the command with the current device selected (unless `device` is 0); returns its exit status,
 * output in *out. */
static int run_tool_on(const char *args, int device, char **out)
{
    const char *tool = getenv("FLASHCL_TOOL");
    ck_assert_msg(tool != NULL, "FLASHCL_TOOL is not set");
    char cmd[4096], outfile[200];
    snprintf(outfile, sizeof outfile, "%s/out.txt", dir);
    snprintf(cmd, sizeof cmd, "FLASHCL_CACHE=0 FLASHCL_TUNING_DB=%s/none.db '%s' %s %s%s%s > %s 2>&1", dir, tool, args,
             device ? "--device '" : "", device ? tu_device_label : "", device ? "'" : "", outfile);
    int st = system(cmd);
    FILE *f = fopen(outfile, "rb");
    static char buf[1 << 16];
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[n] = '\0';
    if (f)
        fclose(f);
    if (out)
        *out = buf;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int run_tool(const char *args, char **out)
{
    return run_tool_on(args, 1, out);
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
    snprintf(args, sizeof args, "bench -n 64,96 -d 32 --tokens 96 --both --iters 2 --warmup 1 --max-seconds 1 "
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
    ck_assert_msg(strstr(out, "-n applies to random inputs") != NULL, "%s", out);
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
    static const char *bad[] = {"run --window 3", "run --softcap -1", "run --paged 20", "run --kv-splits 2000",
                                "bench --paged 8", "run --sinks x1", "bench --sinks", "run --kv-dtype f64",
                                "run --dim-v 0", "bench --dim-v x"};
    static const char *named[] = {"--window 3", "--softcap -1", "--paged 20", "--kv-splits 2000", "--paged",
                                  "--sinks x1", "--sinks", "--kv-dtype f64", "--dim-v", "--dim-v"};
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

static Suite *make_suite(void)
{
    Suite *s = suite_create("cli");
    TCase *tc = tcase_create("cli");
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, test_run_npy_matches_library, 0, 3);
    tcase_add_loop_test(tc, test_run_npy_refuses, 0, 4);
    tcase_add_test(tc, test_run_npy_dim_v);
    tcase_add_test(tc, test_command_edges);
    tcase_add_test(tc, test_tiles_json_is_the_plan);
    tcase_add_test(tc, test_tune_dry_run);
    tcase_add_test(tc, test_bench_small);
    tcase_add_test(tc, test_path_option);
    tcase_add_test(tc, test_help_and_usage_errors);
    tcase_add_test(tc, test_inference_options);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run(make_suite, 1);
}
