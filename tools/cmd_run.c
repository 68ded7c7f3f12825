/* SPDX-License-Identifier: MIT */
/*
 * cmd_run.c: `flashcl run`: flash attention on random normal inputs on one device, timed with
 * profiling events (warm-up and compilation excluded) and validated against the naive kernel.
 */
#include "cli.h"
#include "commands.h"
#include "hostmath.h"
#include "npy.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: flashcl run [options]\n"
            "Runs flash attention on random N(0,1) inputs (tensors past 2^26 elements: uniform, variance 1),\n"
            "validated against the naive kernel.\n"
            "  --device SEL     \"P:D\" indices or a name substring (default: $FLASHCL_DEVICE, a GPU, a CPU)\n"
            "  --path P         flash kernel: auto (matrix units where the device and problem allow), portable,\n"
            "                   mma (the matrix-unit kernels: flash_mma, flash_decode_mma for decode steps;\n"
            "                   emulated without matrix units), decode (flash_decode), wgmma (flash_wgmma:\n"
            "                   Hopper's warpgroup MMA through sm_90a programs, emulated elsewhere), mfma\n"
            "                   (flash_mfma: AMD CDNA's matrix cores), wmma (flash_wmma: AMD RDNA3/4's) or dpas\n"
            "                   (flash_dpas: Intel's matrix engines), each emulated elsewhere ($FLASHCL_PATH)\n"
            CLI_CONFIG_HELP("    ", "                   ")
            "  -b, --batch N    batch (default 1)\n"
            "  -H, --heads N    query heads (default 8)\n"
            "  --heads-kv N     key/value heads, divides --heads (default: --heads)\n"
            "  -n, --seq N      seq_q = seq_kv = N (default 1024)\n"
            "  --seq-q N, --seq-kv N\n"
            "  --decode         a decode step: seq_q = 1 against the -n keys (unless --seq-q is given)\n"
            "  -d, --dim N      head dim, a multiple of 8 up to 256 (default 64)\n"
            "  --dim-v N        V's and O's head dim when it differs (problem.head_dim_v; default: --dim)\n"
            "  --dtype T        f32, f16 or bf16 (default f32)\n"
            "  --causal         causal mask, bottom-right aligned\n"
            "  --top-left       the causal mask, window and ALiBi aligned top-left (query i at key i,\n"
            "                   PyTorch's is_causal) instead of bottom-right\n"
            "  --window L,R     sliding window: query i sees keys i' - L .. i' + R (i' = i + seq_kv - seq_q;\n"
            "                   -1 leaves a side unbounded), FlashAttention's (left, right)\n"
            "  --softcap C      scores become C * tanh(scores / C) before the softmax\n"
            "  --scale S        the scores' scale (default 1/sqrt(dim))\n"
            "  --alibi          ALiBi biases, slopes 2^(-8(h+1)/H) for head h\n"
            "  --sinks L        attention sinks: logit L for every query head in each row's softmax\n"
            "                   denominator (gpt-oss; -inf: none)\n"
            "  --kv-splits N    split-KV: the keys of each (batch, head) over N work-groups, merged by\n"
            "                   log-sum-exp (default 0: chosen from the device for decode shapes; 1: never)\n"
            "  --precision P    fp32 data's products: fp32 (default), tf32x3 (three TF32 products each on\n"
            "                   NVIDIA's matrix units: about fp32's accuracy) or tf32 (one: fp16's)\n"
            "  --fp8 F          fp8 attention: Q, K and V as E4M3 or E5M2 bytes (e4m3, e5m2), O in --dtype\n"
            "                   (problem.qkv_format; the portable kernel)\n"
            "  --descale K      with --fp8: descale factors, one a tensor or one a (batch, KV head) and\n"
            "                   tensor (tensor, head), drawn from 0.5 .. 2 (seeded)\n"
            "  --kv-cache       K/V are a cache of --seq-kv rows per sequence, filled to lengths drawn from\n"
            "                   half to all of it (seeded); --append: the step's --seq-q rows appended first\n"
            "  --paged PAGE     the cache in pages of PAGE rows (a multiple of 16), shuffled block table\n"
            "  --kv-dtype F     K and V in f32, f16 or bf16 (Q and O in --dtype), or the cache quantized:\n"
            "                   int8 (fp32 scale per row and KV head), int8-f16 (fp16\n"
            "                   scales), fp8e4m3 or fp8e5m2 (decode steps, --seq-q <= 16; see flashcl.h)\n"
            "  --varlen         packed sequences: the batch's query and key lengths drawn from N/2..N\n"
            "                   (seeded), Q/K/V/O (total, heads, dim) with cu_seqlens\n"
            "  --lse            also compute the log-sum-exp (validated with O; on .npy files: --lse FILE)\n"
            "  --algo A         flash (default), naive, or standard (CLBlast GEMMs, n x n memory)\n"
            "  --naive          the same as --algo naive\n"
            "  --iters N        timed runs (default 10); --warmup N (default 2)\n"
            "  --no-validate    skip the validated run\n"
            "  --seed N         input seed (default 1)\n"
            "  --json           machine-readable output\n"
            "\n"
            "usage: flashcl run --q Q.npy --k K.npy --v V.npy --out O.npy [--lse LSE.npy (or --lse-out)]\n"
            "                   [--causal]\n"
            "                   [--top-left] [--window L,R] [--softcap C] [--scale S] [--bf16] [--validate]\n"
            "                   [--device SEL] [--path P] [--config SPEC] [--precision P]\n"
            "                   [--json]\n"
            "Runs attention on .npy files of shape (batch, seq, heads, dim), float32 or float16 (bf16 as\n"
            "uint16 with --bf16), C order; GQA follows from the head counts, V's dim may differ from Q's\n"
            "and K's (O takes V's). O is written in the input dtype, LSE as float32 (batch, heads, seq_q).\n"
            "Nothing is written when anything fails.\n"
            "\n"
            "exit status: 0 ok, 1 a flashcl or file error, 2 bad usage, 3 validation failed\n");
}

typedef struct run_opts {
    const char *device;
    int path; /* -1: $FLASHCL_PATH */
    const char *q_path, *k_path, *v_path, *out_path, *lse_path;
    int npy, bf16;
    flashcl_problem problem;
    flashcl_algorithm algo;
    int validate, json;
    long iters, warmup, seed;
    int has_config; /* --config: the flash tiles forced (config) */
    flashcl_config config;
} run_opts;

enum {
    OPT_HEADS_KV = CLI_OPT_BASE, OPT_SEQ_Q, OPT_SEQ_KV, OPT_DIM_V, OPT_ITERS, OPT_WARMUP, OPT_SEED, OPT_Q, OPT_K,
    OPT_V, OPT_OUT, OPT_LSE, OPT_LSE_OUT, OPT_SCALE, OPT_VARLEN, OPT_DECODE, OPT_KV_CACHE, OPT_APPEND, OPT_PAGED,
    OPT_KV_DTYPE, OPT_BF16, OPT_VALIDATE, OPT_NO_VALIDATE, OPT_DTYPE, OPT_DEVICE, OPT_PATH, OPT_CAUSAL,
    OPT_TOP_LEFT, OPT_NAIVE, OPT_ALGO, OPT_JSON
};

static const struct option longopts[] = {
    {"batch", required_argument, NULL, 'b'}, {"heads", required_argument, NULL, 'H'},
    {"heads-kv", required_argument, NULL, OPT_HEADS_KV}, {"seq", required_argument, NULL, 'n'},
    {"seq-q", required_argument, NULL, OPT_SEQ_Q}, {"seq-kv", required_argument, NULL, OPT_SEQ_KV},
    {"dim", required_argument, NULL, 'd'}, {"dim-v", required_argument, NULL, OPT_DIM_V},
    {"iters", required_argument, NULL, OPT_ITERS}, {"warmup", required_argument, NULL, OPT_WARMUP},
    {"seed", required_argument, NULL, OPT_SEED}, {"q", required_argument, NULL, OPT_Q},
    {"k", required_argument, NULL, OPT_K}, {"v", required_argument, NULL, OPT_V},
    {"out", required_argument, NULL, OPT_OUT}, {"lse", optional_argument, NULL, OPT_LSE},
    {"lse-out", required_argument, NULL, OPT_LSE_OUT}, {"scale", required_argument, NULL, OPT_SCALE},
    {"varlen", no_argument, NULL, OPT_VARLEN}, {"decode", no_argument, NULL, OPT_DECODE},
    {"kv-cache", no_argument, NULL, OPT_KV_CACHE}, {"append", no_argument, NULL, OPT_APPEND},
    {"paged", required_argument, NULL, OPT_PAGED}, {"kv-dtype", required_argument, NULL, OPT_KV_DTYPE},
    {"bf16", no_argument, NULL, OPT_BF16}, {"validate", no_argument, NULL, OPT_VALIDATE},
    {"no-validate", no_argument, NULL, OPT_NO_VALIDATE}, {"dtype", required_argument, NULL, OPT_DTYPE},
    {"device", required_argument, NULL, OPT_DEVICE}, {"path", required_argument, NULL, OPT_PATH},
    {"causal", no_argument, NULL, OPT_CAUSAL}, {"top-left", no_argument, NULL, OPT_TOP_LEFT},
    {"naive", no_argument, NULL, OPT_NAIVE}, {"algo", required_argument, NULL, OPT_ALGO},
    {"json", no_argument, NULL, OPT_JSON}, {"help", no_argument, NULL, 'h'},
    CLI_MASK_LONGOPTS, CLI_CONFIG_LONGOPT, {NULL, 0, NULL, 0}};

static int32_t *shape_field(flashcl_problem *p, int c)
{
    switch (c) {
    case 'b': return &p->batch;
    case 'H': return &p->heads_q;
    case OPT_HEADS_KV: return &p->heads_kv;
    case OPT_SEQ_Q: return &p->seq_q;
    case 'd': return &p->head_dim;
    case OPT_DIM_V: return &p->head_dim_v;
    }
    return &p->seq_kv; /* (-n, --seq-kv) */
}

/* One option's value into *o (or the problem); 0 after a message on a bad value. */
static int parse_value(int c, const char *val, run_opts *o)
{
    flashcl_problem *p = &o->problem;
    const char *name = cli_option_name(longopts, c);
    long v = 0;
    switch (c) {
    case 'b': case 'H': case 'n': case 'd': case OPT_HEADS_KV: case OPT_SEQ_Q: case OPT_SEQ_KV: case OPT_DIM_V: {
        int32_t *field = shape_field(p, c);
        if (!cli_int(name, val, 1, c == 'd' || c == OPT_DIM_V ? 4096 : c == 'H' || c == OPT_HEADS_KV ? 1L << 20 : 1L << 30,
                     &v))
            return 0;
        *field = (int32_t)v;
        if (c == 'n') /* (--seq-q and --seq-kv, wherever they are, take precedence: see parse) */
            p->seq_q = (int32_t)v;
        return 1;
    }
    case OPT_ITERS: return cli_int(name, val, 1, 100000, &o->iters);
    case OPT_WARMUP: return cli_int(name, val, 0, 100000, &o->warmup);
    case OPT_SEED: return cli_int(name, val, 0, LONG_MAX, &o->seed);
    case OPT_PAGED:
        if (!cli_int(name, val, 16, 1 << 20, &v))
            return 0;
        if (v % 16) {
            fprintf(stderr, "flashcl run: --paged %ld: the page size must be a multiple of 16\n", v);
            return 0;
        }
        p->kv_cache = 1;
        p->page_size = (int32_t)v;
        return 1;
    case OPT_SCALE: {
        char *end;
        if ((p->scale = strtof(val, &end), end == val || *end || !(p->scale > 0.0f) || isinf(p->scale))) {
            fprintf(stderr, "flashcl run: --scale %s: expected a number above 0\n", val);
            return 0;
        }
        return 1;
    }
    case OPT_KV_DTYPE: return cli_kv_format(val, p);
    case OPT_DTYPE: return cli_dtype(val, &p->dtype);
    case CLI_OPT_CONFIG: return (o->has_config = cli_config("run", val, &o->config));
    case OPT_PATH: {
        flashcl_path path;
        if (flashcl_path_parse(val, &path) != FLASHCL_SUCCESS) {
            fprintf(stderr, "flashcl run: --path %s: expected auto, portable, mma, decode, wgmma, mfma, wmma or dpas\n", val);
            return 0;
        }
        o->path = (int)path;
        return 1;
    }
    case OPT_ALGO:
        if (!strcmp(val, "flash") || !strcmp(val, "naive") || !strcmp(val, "standard")) {
            o->algo = val[0] == 'f' ? FLASHCL_ALGO_FLASH : val[0] == 'n' ? FLASHCL_ALGO_NAIVE : FLASHCL_ALGO_STANDARD;
            return 1;
        }
        fprintf(stderr, "flashcl run: --algo %s: expected flash, naive or standard\n", val);
        return 0;
    }
    return cli_mask_option("run", c, val, p);
}

/* The files of a .npy run: an output that is an input, or the other output, would be destroyed (or half
 * of the result lost): refused, naming both options. 0 when none is. */
static int outputs_clash(const run_opts *o)
{
    const char *const in[4] = {o->q_path, o->k_path, o->v_path, o->out_path};
    static const char *const in_name[4] = {"--q", "--k", "--v", "--out"};
    const char *const out[2] = {o->out_path, o->lse_path};
    static const char *const out_name[2] = {"--out", "--lse"};
    for (int w = 0; w < 2; ++w)
        for (int r = 0; r < 3 + w; ++r)
            if (out[w] && in[r] && cli_same_file(out[w], in[r])) {
                fprintf(stderr, "flashcl run: %s %s and %s %s are the same file: %s\n", in_name[r], in[r], out_name[w],
                        out[w], r < 3 ? "the output would overwrite an input" : "one output would overwrite the other");
                return 1;
            }
    return 0;
}

/* Options that apply to one kind of run only, or contradict each other: refused (exit 2) naming both. */
static int check_options(const char *seen, const run_opts *o)
{
    /* .npy files bring their own shape, dtype and data: the options that describe random inputs, or how
     * often to time them, would be silently ignored there */
    static const int random_only[] = {'b', 'H', OPT_HEADS_KV, 'n', OPT_SEQ_Q, OPT_SEQ_KV, 'd', OPT_DIM_V, OPT_DTYPE,
                                      OPT_DECODE, OPT_VARLEN, OPT_KV_CACHE, OPT_APPEND, OPT_PAGED, OPT_KV_DTYPE,
                                      CLI_OPT_ALIBI, CLI_OPT_SINKS, CLI_OPT_KV_SPLITS, OPT_ITERS, OPT_WARMUP, OPT_SEED,
                                      OPT_ALGO, OPT_NAIVE, OPT_NO_VALIDATE, CLI_OPT_FP8, CLI_OPT_DESCALE};
    for (size_t k = 0; o->npy && k < sizeof random_only / sizeof *random_only; ++k)
        if (seen[random_only[k]]) {
            fprintf(stderr, "flashcl run: %s applies to random inputs; a run on .npy files takes its shape, dtype and "
                            "data from the files (see flashcl run --help)\n", cli_option_name(longopts, random_only[k]));
            return 2;
        }
    if (!o->npy && seen[OPT_BF16]) {
        fprintf(stderr, "flashcl run: --bf16 applies to .npy files (--q ...), whose uint16 it reads as bf16; random "
                        "inputs in bf16 are --dtype bf16\n");
        return 2;
    }
    if (o->npy && seen[OPT_LSE] && !o->lse_path)
        return cli_conflict("run", "--lse without a file", "--q", "on .npy files LSE is written to --lse FILE");
    if (seen[OPT_NAIVE] && seen[OPT_ALGO] && o->algo != FLASHCL_ALGO_NAIVE)
        return cli_conflict("run", "--naive", o->algo == FLASHCL_ALGO_FLASH ? "--algo flash" : "--algo standard",
                            "--naive is --algo naive");
    if (seen[OPT_VALIDATE] && seen[OPT_NO_VALIDATE])
        return cli_conflict("run", "--validate", "--no-validate", "give one");
    if (seen['n'] && seen[OPT_SEQ_Q] && seen[OPT_SEQ_KV])
        return cli_conflict("run", "--seq (-n)", "--seq-q with --seq-kv", "-n sets both lengths");
    if (!o->npy && o->problem.page_size) { /* the pool: every sequence's pages and one sequence's more (run_random) */
        const flashcl_problem *p = &o->problem;
        const int64_t pages = ((int64_t)p->seq_kv + p->page_size - 1) / p->page_size;
        const int64_t pool = ((int64_t)p->batch + 1) * pages;
        if (pool > INT32_MAX) {
            fprintf(stderr, "flashcl run: -b %d with --seq-kv %d in --paged %d pages: a pool of %lld pages, past "
                            "2^31-1 (problem.num_pages is int32)\n",
                    p->batch, p->seq_kv, p->page_size, (long long)pool);
            return 2;
        }
    }
    if (o->npy && (!o->q_path || !o->k_path || !o->v_path || !o->out_path)) {
        fprintf(stderr, "flashcl run: --q, --k, --v and --out are all needed to run on .npy files\n");
        return 2;
    }
    if (o->npy && (!*o->out_path || (o->lse_path && !*o->lse_path))) {
        fprintf(stderr, "flashcl run: %s: an empty path\n",
                *o->out_path ? seen[OPT_LSE_OUT] ? "--lse-out" : "--lse" : "--out");
        return 2;
    }
    return o->npy && outputs_clash(o) ? 2 : -1;
}

/* Returns -1 to go on, else the exit status (0 after --help). */
static int parse(int argc, char **argv, run_opts *o)
{
    flashcl_problem *p = &o->problem;
    memset(o, 0, sizeof *o);
    flashcl_problem_default(p);
    p->heads_q = 8;
    p->heads_kv = 0;
    p->seq_q = p->seq_kv = 1024;
    o->path = -1;
    o->algo = FLASHCL_ALGO_FLASH;
    o->validate = 1;
    o->iters = 10;
    o->warmup = 2;
    o->seed = 1;
    char seen[CLI_OPT_END] = {0};
    int32_t seq_q = 0, seq_kv = 0; /* --seq-q, --seq-kv: over -n, in whichever order */
    for (int c; (c = cli_getopt("run", argc, argv, "b:H:n:d:h", longopts)) != -1;) {
        if (c == CLI_BAD_OPTION)
            return 2;
        seen[c] = 1;
        const char **file = c == OPT_Q ? &o->q_path : c == OPT_K ? &o->k_path : c == OPT_V ? &o->v_path
                          : c == OPT_OUT ? &o->out_path : c == OPT_LSE_OUT || c == OPT_LSE ? &o->lse_path : NULL;
        if (c == OPT_LSE && !optarg && optind < argc && argv[optind][0] != '-')
            optarg = argv[optind++]; /* ("--lse FILE" as well as "--lse=FILE"; a bare --lse asks for LSE) */
        if (file && optarg) {
            *file = optarg;
            continue;
        }
        switch (c) {
        case 'h':
            usage(stdout);
            return 0;
        case OPT_LSE: p->return_lse = 1; break;
        case OPT_VARLEN: p->varlen = 1; break;
        case OPT_DECODE: break;
        case OPT_KV_CACHE: p->kv_cache = 1; break;
        case OPT_APPEND: p->kv_cache = p->kv_append = 1; break;
        case OPT_BF16: o->bf16 = 1; break;
        case OPT_VALIDATE: o->validate = 1; break;
        case OPT_NO_VALIDATE: o->validate = 0; break;
        case OPT_DEVICE: o->device = optarg; break;
        case OPT_CAUSAL: p->causal = 1; break;
        case OPT_TOP_LEFT: p->alignment = FLASHCL_ALIGN_TOP_LEFT; break;
        case OPT_NAIVE: o->algo = FLASHCL_ALGO_NAIVE; break;
        case OPT_JSON: o->json = 1; break;
        default:
            if (!parse_value(c, optarg, o))
                return 2;
            if (c == OPT_SEQ_Q || c == OPT_SEQ_KV)
                *(c == OPT_SEQ_Q ? &seq_q : &seq_kv) = *(c == OPT_SEQ_Q ? &p->seq_q : &p->seq_kv);
        }
    }
    if (seq_q)
        p->seq_q = seq_q;
    if (seq_kv)
        p->seq_kv = seq_kv;
    if (seen[OPT_DECODE] && !seq_q) /* one query a sequence, unless --seq-q said how many */
        p->seq_q = 1;
    if (!p->heads_kv)
        p->heads_kv = p->heads_q;
    o->npy = o->q_path || o->k_path || o->v_path || o->out_path || o->lse_path;
    o->validate &= !o->npy || seen[OPT_VALIDATE]; /* on .npy files, validation is asked for with --validate */
    return check_options(seen, o);
}

/* ------------------------------------------------------------------------------------------------ */
/* Failures. Each is said on stderr as it happens and kept here, so that --json can end the run with one
 * document on stdout however it ends: the status, the message and the validation report. */

static struct {
    const char *status; /* a flashcl_status name, or FILE_ERROR for a .npy file the command cannot use */
    char message[1024];
    int64_t output_nonfinite, input_nonfinite; /* -1: not counted */
    flashcl_validation report;                 /* (report.ran: a validated run happened) */
    int printed;                               /* the run's own JSON, with the status, is out */
} failure = {.output_nonfinite = -1, .input_nonfinite = -1};

static int fail(const char *status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(failure.message, sizeof failure.message, fmt, ap);
    va_end(ap);
    failure.status = status;
    fprintf(stderr, "flashcl run: %s\n", failure.message);
    return 1;
}

/* A flashcl call that failed: its status and the context's message. */
static int fail_lib(const flashcl_context *ctx, const char *what, flashcl_status st)
{
    const char *msg = flashcl_context_last_error(ctx);
    return fail(flashcl_status_name(st), "%s: %s (%s)%s%s", what, flashcl_status_string(st), flashcl_status_name(st),
                msg && *msg ? ": " : "", msg ? msg : "");
}

static int64_t count_nonfinite(const void *data, flashcl_dtype t, size_t n)
{
    int64_t k = 0;
    for (size_t i = 0; i < n; ++i)
        k += !isfinite(hm_load(data, t, i));
    return k;
}

/*
 * A failed validation in words, with the counts that make it readable: report.nan_count counts outputs that
 * are non-finite where the naive kernel's are finite (a kernel's own NaN), so a NaN or inf in the inputs,
 * which makes both non-finite, counts 0 there; the output's and the inputs' own counts say what happened.
 */
static int fail_validation(const flashcl_validation *r, int64_t out_nonfinite, int64_t in_nonfinite)
{
    failure.report = *r;
    failure.output_nonfinite = out_nonfinite;
    failure.input_nonfinite = in_nonfinite;
    char inputs[96] = "";
    if (in_nonfinite > 0)
        snprintf(inputs, sizeof inputs, "; the inputs hold %lld (the naive kernel's result is non-finite there too)",
                 (long long)in_nonfinite);
    return fail("VALIDATION_FAILED",
                "validation failed: %lld elements of the %lld checked rows are outside the tolerance; the output holds "
                "%lld non-finite values (NaN or inf), %lld of them where the naive kernel's result is finite%s; worst "
                "row %lld col %d: got %g, naive %g (atol %.3g x row scale, rtol %.3g)",
                (long long)r->failures, (long long)r->rows_checked, (long long)out_nonfinite, (long long)r->nan_count,
                inputs, (long long)r->worst_row, (int)r->worst_col, r->worst_out, r->worst_ref, r->atol, r->rtol);
}

static void json_validation(const flashcl_validation *r)
{
    if (!r || !r->ran) {
        printf("null");
        return;
    }
    printf("{\"passed\": %s, \"rows_checked\": %lld, \"rows_total\": %lld, \"failures\": %lld, \"nan_count\": %lld, ",
           r->passed ? "true" : "false", (long long)r->rows_checked, (long long)r->rows_total, (long long)r->failures,
           (long long)r->nan_count);
    const char *names[6] = {"max_abs_error", "max_rel_error", "worst_out", "worst_ref", "atol", "rtol"};
    const double values[6] = {r->max_abs_error, r->max_rel_error, r->worst_out, r->worst_ref, r->atol, r->rtol};
    for (int i = 0; i < 6; ++i) {
        printf("\"%s\": ", names[i]);
        cli_json_number(stdout, values[i]);
        printf(", ");
    }
    printf("\"worst_row\": %lld, \"worst_col\": %d}", (long long)r->worst_row, (int)r->worst_col);
}

/* The status and message of the run (a failure's, or SUCCESS), as the leading fields of its JSON. */
static void json_status(void)
{
    printf("\"status\": \"%s\", \"message\": ", failure.status ? failure.status : "SUCCESS");
    cli_json_string(stdout, failure.message);
    if (failure.output_nonfinite >= 0)
        printf(", \"output_nonfinite\": %lld", (long long)failure.output_nonfinite);
    if (failure.input_nonfinite >= 0)
        printf(", \"input_nonfinite\": %lld", (long long)failure.input_nonfinite);
}

/* --json when the run ended before its result: the one document on stdout. */
static void json_failure(void)
{
    printf("{");
    json_status();
    printf(", \"validation\": ");
    json_validation(&failure.report);
    printf("}\n");
}

/* The timed runs' figures. */
typedef struct run_timing {
    double plan_ms, median, min, max;
    long runs;
    int host_clock;
    double tflops;
} run_timing;

/* --json: the run, its configuration, times and validation report (null when none ran). */
static void print_json(const flashcl_device_profile *dev, const flashcl_problem *p, const flashcl_config *cfg,
                       const run_timing *t, const flashcl_validation *report)
{
    printf("{");
    json_status();
    printf(", \"device\": ");
    cli_json_string(stdout, dev->name);
    printf(", \"platform\": ");
    cli_json_string(stdout, dev->platform_name);
    printf(", \"driver\": ");
    cli_json_string(stdout, dev->driver_version);
    printf(",\n \"problem\": {\"batch\": %d, \"heads_q\": %d, \"heads_kv\": %d, \"seq_q\": %d, \"seq_kv\": %d, "
           "\"head_dim\": %d, \"head_dim_v\": %d, \"dtype\": \"%s\", \"causal\": %s, \"scale\": ",
           p->batch, p->heads_q, p->heads_kv, p->seq_q, p->seq_kv, p->head_dim, p->head_dim_v ? p->head_dim_v : p->head_dim,
           flashcl_dtype_name(p->dtype), p->causal ? "true" : "false");
    cli_json_number(stdout, (double)p->scale);
    printf(", \"window\": %s, \"window_left\": %d, \"window_right\": %d, \"softcap\": ", p->window ? "true" : "false",
           p->window_left, p->window_right);
    cli_json_number(stdout, (double)p->softcap);
    printf(", \"alibi\": %d, \"varlen\": %s, \"total_q\": %lld, \"total_kv\": %lld, \"precision\": \"%s\", "
           "\"qkv_format\": \"%s\", \"fp8_descale\": \"%s\",\n  \"alignment\": \"%s\", \"sinks\": ",
           p->alibi, p->varlen ? "true" : "false", (long long)(p->varlen ? p->total_q : (int64_t)p->batch * p->seq_q),
           (long long)(p->varlen ? p->total_kv : (int64_t)p->batch * p->seq_kv),
           flashcl_precision_name((flashcl_precision)p->precision),
           flashcl_kv_format_name((flashcl_kv_format)p->qkv_format),
           p->fp8_descale == FLASHCL_DESCALE_HEAD ? "head" : p->fp8_descale ? "tensor" : "none",
           p->alignment == FLASHCL_ALIGN_TOP_LEFT ? "top_left" : "bottom_right");
    if (p->sinks) /* (the logit every query head's sink has here: --sinks) */
        cli_json_number(stdout, cli_sink_logit);
    else
        printf("null");
    printf(", \"kv_cache\": %s, \"kv_append\": %s, \"page_size\": %d, \"num_pages\": %d, \"kv_format\": \"%s\", "
           "\"kv_dtype\": \"%s\"},\n",
           p->kv_cache ? "true" : "false", p->kv_append ? "true" : "false", p->page_size, p->num_pages,
           flashcl_kv_format_name((flashcl_kv_format)p->kv_format),
           flashcl_dtype_name(p->kv_dtype ? (flashcl_dtype)(p->kv_dtype - 1) : p->dtype));
    printf(" \"config\": {\"kernel\": \"%s\", \"block_m\": %d, \"block_n\": %d, \"threads_per_row\": %d, "
           "\"rows_per_item\": %d, \"d_chunk\": %d, \"v_chunk\": %d, \"kv_splits\": %d, \"work_group_size\": %d, "
           "\"local_mem_bytes\": %llu, \"local_mem_budget\": %llu, \"source\": \"%s\", \"reason\": ",
           cfg->kernel_name, cfg->block_m, cfg->block_n, cfg->threads_per_row, cfg->rows_per_item, cfg->d_chunk, cfg->v_chunk,
           cfg->kv_splits, cfg->work_group_size, (unsigned long long)cfg->local_mem_bytes,
           (unsigned long long)cfg->local_mem_budget, cfg->source);
    cli_json_string(stdout, cfg->reason);
    printf(", \"module\": \"%s\", \"emulated\": %d, \"kv_stages\": %d, \"m_tiles\": %d, \"producer\": %d, "
           "\"team\": %d, \"keys_per_step\": %d, \"shuffles\": %d, \"tf32\": %d, \"persistent\": %d, \"gqa_pack\": %d, "
           "\"path_reason\": ",
           flashcl_kernel_name(cfg->kernel), cfg->emulated, cfg->kv_stages, cfg->m_tiles, cfg->producer, cfg->team,
           cfg->keys_per_step, cfg->shuffles, cfg->tf32, cfg->persistent, cfg->gqa_pack);
    cli_json_string(stdout, cfg->path_reason);
    printf("},\n \"plan_ms\": ");
    cli_json_number(stdout, t->plan_ms);
    printf(", \"time_ms\": {\"median\": ");
    cli_json_number(stdout, t->median);
    printf(", \"min\": ");
    cli_json_number(stdout, t->min);
    printf(", \"max\": ");
    cli_json_number(stdout, t->max);
    printf(", \"runs\": %ld}, \"clock\": \"%s\", \"tflops\": ", t->runs, t->host_clock ? "host" : "events");
    cli_json_number(stdout, t->tflops);
    printf(",\n \"validation\": ");
    json_validation(report);
    printf("}\n");
    failure.printed = 1;
}

static cl_command_queue queue_of(flashcl_context *ctx)
{
    cl_command_queue q = NULL;
    flashcl_context_cl_objects(ctx, NULL, NULL, &q);
    return q;
}

static cl_mem make_buffer(cl_context c, size_t bytes, const void *init, cl_int *err)
{
    return clCreateBuffer(c, CL_MEM_READ_WRITE | (init ? CL_MEM_COPY_HOST_PTR : 0), bytes ? bytes : 4,
                          (void *)init, err);
}

static int run_npy(run_opts *o);

static int run_random(run_opts o);

int cmd_run(int argc, char **argv)
{
    run_opts o;
    const int parsed = parse(argc, argv, &o);
    if (parsed >= 0)
        return parsed;
    const int rc = o.npy ? run_npy(&o) : run_random(o);
    if (rc && o.json && !failure.printed)
        json_failure();
    return rc;
}

/* Random inputs of the options' shape: a validated run, then the timed runs. */
static int run_random(run_opts o)
{
    flashcl_problem *p = &o.problem;
    /* --varlen: lengths from seq/2 to seq, the first sequence at the maximum. */
    int32_t *cu[2] = {NULL, NULL};
    cl_mem cu_m[2] = {NULL, NULL};
    if (p->varlen) {
        hm_rng lr;
        hm_rng_seed(&lr, (uint64_t)o.seed * 7919u + 17u);
        const int32_t maxlen[2] = {p->seq_q, p->seq_kv};
        for (int s = 0; s < 2; ++s) {
            cu[s] = calloc((size_t)p->batch + 1, sizeof(int32_t));
            if (!cu[s]) {
                free(cu[0]);
                return fail("OUT_OF_HOST_MEMORY", "out of host memory");
            }
            int64_t total = 0; /* (in 64 bits: the sum of int32 lengths passes 2^31-1, cu_seqlens' limit) */
            for (int b = 0; b < p->batch; ++b) {
                const int32_t half = (maxlen[s] + 1) / 2;
                const int32_t len = b == 0 ? maxlen[s] : half + (int32_t)(hm_rng_uniform(&lr) * (maxlen[s] - half + 1));
                total += len > maxlen[s] ? maxlen[s] : len;
                if (total > INT32_MAX) {
                    free(cu[0]);
                    free(cu[1]);
                    fail("INVALID_ARGUMENT", "--varlen: -b %d sequences of %s lengths %d/2 .. %d hold more than 2^31-1 "
                         "rows (cu_seqlens are int32): fewer or shorter sequences", p->batch, s ? "key" : "query",
                         maxlen[s], maxlen[s]);
                    return 2;
                }
                cu[s][b + 1] = (int32_t)total;
            }
        }
        p->total_q = cu[0][p->batch];
        p->total_kv = p->kv_cache ? 0 : cu[1][p->batch]; /* (over a KV cache the keys are cache_seqlens') */
    }
    /* --kv-cache: fill lengths from half the room to all of it (room: the capacity less the appended
     * rows), the first sequence full; --paged: every page of every sequence in a pool with spare
     * pages, in a shuffled order. */
    int32_t *cache_lens = NULL, *block_table = NULL;
    int32_t max_pages = 0;
    if (p->kv_cache) {
        hm_rng lr;
        hm_rng_seed(&lr, (uint64_t)o.seed * 104729u + 3u);
        const int32_t room = p->kv_append ? (p->seq_kv > p->seq_q ? p->seq_kv - p->seq_q : 0) : p->seq_kv;
        cache_lens = calloc((size_t)p->batch, sizeof *cache_lens);
        if (p->page_size) {
            max_pages = (p->seq_kv + p->page_size - 1) / p->page_size;
            p->num_pages = p->batch * max_pages + max_pages; /* (at most 2^31-1: check_options) */
            block_table = calloc((size_t)p->batch * max_pages, sizeof *block_table);
        }
        if (!cache_lens || (p->page_size && !block_table)) {
            free(cache_lens);
            free(block_table);
            return fail("OUT_OF_HOST_MEMORY", "out of host memory");
        }
        for (int b = 0; b < p->batch; ++b)
            cache_lens[b] = b == 0 ? room : room / 2 + (int32_t)(hm_rng_uniform(&lr) * (room - room / 2 + 1));
        if (p->page_size) { /* a random permutation of the pool, its first batch * max_pages pages used */
            int32_t *perm = malloc((size_t)p->num_pages * sizeof *perm);
            if (perm) {
                for (int e = 0; e < p->num_pages; ++e)
                    perm[e] = e;
                for (int e = p->num_pages - 1; e > 0; --e) {
                    int r = (int)(hm_rng_uniform(&lr) * (e + 1));
                    r = r > e ? e : r; /* the uniform value can round up to 1.0 */
                    const int32_t tmp = perm[e];
                    perm[e] = perm[r];
                    perm[r] = tmp;
                }
                memcpy(block_table, perm, (size_t)p->batch * max_pages * sizeof *block_table);
                free(perm);
            }
        }
    }

    flashcl_settings settings;
    flashcl_settings_default(&settings);
    settings.path = o.path;
    settings.validate = 0; /* the validated run below is separate from the timed runs */
    flashcl_context *ctx = NULL;
    flashcl_plan *plan = NULL;
    cl_mem bufs[5] = {0}, alibi = NULL, sinks_m = NULL, lens_m = NULL, bt_m = NULL, knew_m = NULL, vnew_m = NULL, ks_m = NULL,
           vs_m = NULL, descale_m = NULL;
    void *host[3] = {0}, *out = NULL;
    flashcl_validation report = {0};
    flashcl_status st = flashcl_context_create_default(o.device, &settings, &ctx);
    if (st)
        return fail_lib(NULL, "opening a device", st);
    if (cli_apply_config(ctx, o.has_config, &o.config)) {
        flashcl_context_destroy(&ctx);
        return 1;
    }
    const flashcl_device_profile *dev = flashcl_context_profile(ctx);

    int rc = 1;
    struct timespec t0, t1;
    /* (a first run compiles its kernels: seconds on a GPU, tens of seconds on a small CPU) */
    fprintf(stderr, "flashcl run: planning on %s (kernels compiled once, then loaded from the cache)...\n",
            dev->name);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    st = flashcl_plan_create_algo(ctx, p, o.algo, &plan);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (st) {
        fail_lib(ctx, "creating the plan", st);
        goto done;
    }
    const double plan_ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) * 1e-6;
    flashcl_config cfg;
    flashcl_plan_config(plan, &cfg);
    flashcl_plan_problem(plan, p);

    size_t sz[5];
    flashcl_plan_buffer_sizes(plan, &sz[0], &sz[1], &sz[2], &sz[3], &sz[4]);
    cl_context clctx;
    cl_command_queue queue;
    flashcl_context_cl_objects(ctx, &clctx, NULL, &queue);
    hm_rng rng;
    hm_rng_seed(&rng, (uint64_t)o.seed);
    const size_t es = flashcl_dtype_size(p->dtype);
    for (int i = 0; i < 3; ++i) {
        host[i] = malloc(sz[i]);
        if (!host[i]) {
            fail("OUT_OF_HOST_MEMORY", "out of host memory for inputs (%zu bytes)", sz[i]);
            goto done;
        }
        /* Past 2^26 elements, uniform values of variance 1: a normal costs a log and a cos each,
         * minutes for the billions of a test past 2^31. */
        if (p->qkv_format || (i > 0 && p->kv_format)) /* fp8 attention, a quantized cache: a byte an element */
            hm_fill_kv(host[i], (flashcl_kv_format)(p->qkv_format ? p->qkv_format : p->kv_format), sz[i], &rng, 1.0);
        else { /* (K and V in their own dtype: --kv-dtype f32|f16|bf16) */
            const flashcl_dtype t = i && p->kv_dtype ? (flashcl_dtype)(p->kv_dtype - 1) : p->dtype;
            const size_t n = sz[i] / flashcl_dtype_size(t);
            if (n > ((size_t)1 << 26))
                hm_fill_unit_uniform(host[i], t, n, &rng);
            else
                hm_fill_normal(host[i], t, n, &rng, 1.0);
        }
    }
    cl_int err = CL_SUCCESS;
    for (int i = 0; i < 5 && err == CL_SUCCESS; ++i)
        if (i < 4 || sz[4])
            bufs[i] = make_buffer(clctx, sz[i], i < 3 ? host[i] : NULL, &err);
    if (err == CL_SUCCESS && p->alibi)
        alibi = cli_alibi_slopes(clctx, p, &err);
    if (err == CL_SUCCESS && p->sinks)
        sinks_m = cli_sinks(clctx, p, &err);
    if (err == CL_SUCCESS && p->fp8_descale)
        descale_m = cli_descale(clctx, p, &rng, &err);
    for (int s = 0; s < (p->kv_cache ? 1 : 2) && err == CL_SUCCESS && p->varlen; ++s)
        cu_m[s] = make_buffer(clctx, ((size_t)p->batch + 1) * sizeof(int32_t), cu[s], &err);
    if (err == CL_SUCCESS && p->kv_cache)
        lens_m = make_buffer(clctx, (size_t)p->batch * sizeof(int32_t), cache_lens, &err);
    if (err == CL_SUCCESS && p->page_size)
        bt_m = make_buffer(clctx, (size_t)p->batch * max_pages * sizeof(int32_t), block_table, &err);
    if (err == CL_SUCCESS && p->kv_format == FLASHCL_KV_INT8) {
        ks_m = cli_kv_scales(clctx, p, &rng, &err);
        if (err == CL_SUCCESS)
            vs_m = cli_kv_scales(clctx, p, &rng, &err);
    }
    const size_t dv = (size_t)(p->head_dim_v ? p->head_dim_v : p->head_dim);
    if (err == CL_SUCCESS && p->kv_append && p->kv_format) { /* the step's rows, in the problem's dtype */
        const size_t n = (size_t)p->batch * p->seq_q * p->heads_kv * p->head_dim;
        void *h = malloc(n * es);
        if (!h)
            err = CL_OUT_OF_HOST_MEMORY;
        for (int m = 0; m < 2 && err == CL_SUCCESS; ++m) {
            hm_fill_normal(h, p->dtype, n, &rng, 1.0);
            *(m ? &vnew_m : &knew_m) = make_buffer(clctx, n * es, h, &err);
        }
        free(h);
    } else if (err == CL_SUCCESS && p->kv_append) { /* the step's rows: the first seq_q rows' worth of K/V values */
        const size_t n = (size_t)p->batch * p->seq_q * p->heads_kv * p->head_dim * es;
        const size_t nv = (size_t)p->batch * p->seq_q * p->heads_kv * dv * es;
        knew_m = make_buffer(clctx, n, NULL, &err);
        if (err == CL_SUCCESS)
            vnew_m = make_buffer(clctx, nv, NULL, &err);
        if (err == CL_SUCCESS)
            err = clEnqueueCopyBuffer(queue_of(ctx), bufs[1], knew_m, 0, 0, n < sz[1] ? n : sz[1], 0, NULL, NULL);
        if (err == CL_SUCCESS)
            err = clEnqueueCopyBuffer(queue_of(ctx), bufs[2], vnew_m, 0, 0, nv < sz[2] ? nv : sz[2], 0, NULL, NULL);
    }
    if (err != CL_SUCCESS) {
        fail("OPENCL_ERROR", "allocating device buffers failed (OpenCL error %d)", (int)err);
        goto done;
    }
    const flashcl_tensors tensors = {.q = bufs[0], .k = bufs[1], .v = bufs[2], .o = bufs[3], .lse = bufs[4],
                                     .alibi_slopes = alibi, .cu_seqlens_q = cu_m[0], .cu_seqlens_k = cu_m[1],
                                     .cache_seqlens = lens_m, .block_table = bt_m, .k_new = knew_m, .v_new = vnew_m,
                                     .k_scale = ks_m, .v_scale = vs_m, .sinks = sinks_m, .descale = descale_m};

    /* Validated run first: it also compiles the naive kernel outside the timed runs. (Not for the naive
     * algorithm: it would be compared with itself.) */
    if (o.validate && o.algo != FLASHCL_ALGO_NAIVE) {
        flashcl_context_set_validation(ctx, 1);
        st = flashcl_plan_enqueue_tensors(plan, &tensors, 0, NULL, NULL);
        flashcl_context_set_validation(ctx, 0);
        flashcl_plan_last_validation(plan, &report);
        if (st && st != FLASHCL_VALIDATION_FAILED) {
            fail_lib(ctx, "validated run", st);
            goto done;
        }
        if (st == FLASHCL_VALIDATION_FAILED) { /* (the inputs are random normals: finite) */
            if (!(out = malloc(sz[3])) ||
                clEnqueueReadBuffer(queue, bufs[3], CL_TRUE, 0, sz[3], out, 0, NULL, NULL) != CL_SUCCESS) {
                fail("OPENCL_ERROR", "reading the output back failed");
                goto done;
            }
            fail_validation(&report, count_nonfinite(out, p->dtype, sz[3] / es), 0);
        }
    }

    double med, tmin, tmax;
    int host_clock = 0;
    st = cli_time_plan(plan, &tensors, o.warmup, o.iters, &med, &tmin, &tmax, &host_clock, NULL);
    if (st) {
        fail_lib(ctx, "timed runs", st);
        goto done;
    }
    double flops = p->varlen ? cli_flops_packed(p, cu[0], cu[1]) : cli_flops(p);
    if (p->kv_cache) { /* each sequence's own key count, not the capacity */
        flashcl_problem one = *p;
        one.batch = 1;
        one.varlen = 0;
        flops = 0;
        for (int b = 0; b < p->batch; ++b) {
            const int64_t n = (int64_t)cache_lens[b] + (p->kv_append ? p->seq_q : 0);
            one.seq_kv = (int32_t)(n < p->seq_kv ? n : p->seq_kv);
            if (p->varlen) /* (packed queries: sequence b's own) */
                one.seq_q = cu[0][b + 1] - cu[0][b];
            flops += one.seq_kv > 0 ? cli_flops(&one) : 0.0;
        }
    }
    const double tflops = flops / (med * 1e-3) / 1e12;

    if (o.json) {
        const run_timing timing = {plan_ms, med, tmin, tmax, o.iters, host_clock, tflops};
        print_json(dev, p, &cfg, &timing, &report);
    } else {
        printf("device      %s / %s (driver %s)\n", dev->platform_name, dev->name, dev->driver_version);
        char mask[96];
        printf("problem     B=%d Hq=%d Hkv=%d Sq=%d Sk=%d d=%d %s %s", p->batch, p->heads_q, p->heads_kv, p->seq_q,
               p->seq_kv, p->head_dim, flashcl_dtype_name(p->dtype), cli_mask_name(p, mask, sizeof mask));
        if (p->head_dim_v && p->head_dim_v != p->head_dim)
            printf(", V and O of head dim %d", p->head_dim_v);
        if (p->kv_dtype && p->kv_dtype - 1 != (int)p->dtype)
            printf(", K and V in %s", flashcl_dtype_name((flashcl_dtype)(p->kv_dtype - 1)));
        if (p->qkv_format)
            printf(", Q, K and V %s%s", flashcl_kv_format_name((flashcl_kv_format)p->qkv_format),
                   p->fp8_descale == FLASHCL_DESCALE_HEAD ? " with descale factors a (batch, KV head)"
                   : p->fp8_descale                     ? " with descale factors a tensor"
                                                        : "");
        if (p->varlen && p->kv_cache)
            printf(", packed queries: %lld rows in all (Sq the longest)", (long long)p->total_q);
        else if (p->varlen)
            printf(", packed: %lld query and %lld key rows in all (Sq, Sk the longest)", (long long)p->total_q,
                   (long long)p->total_kv);
        if (p->kv_cache)
            printf(", a KV cache of %d rows a sequence (filled to seeded lengths)%s%s", p->seq_kv,
                   p->kv_append ? ", the step's rows appended first" : "", p->kv_format ? ", quantized" : "");
        if (p->page_size)
            printf(", in pages of %d rows (%d pages, a shuffled block table)", p->page_size, p->num_pages);
        printf("\n");
        if (o.algo == FLASHCL_ALGO_FLASH) {
            printf("kernel      %s: block_m=%d block_n=%d threads/row=%d rows/item=%d d_chunk=%d v_chunk=%d kv_splits=%d "
                   "gqa_pack=%d work-group=%d, local memory %llu of %llu B\n",
                   cfg.kernel_name, cfg.block_m, cfg.block_n, cfg.threads_per_row, cfg.rows_per_item, cfg.d_chunk,
                   cfg.v_chunk, cfg.kv_splits, cfg.gqa_pack, cfg.work_group_size,
                   (unsigned long long)cfg.local_mem_bytes, (unsigned long long)cfg.local_mem_budget);
            printf("            %s: %s\n", cfg.source, cfg.reason);
            printf("path        %s\n", cfg.path_reason);
        } else { /* (no tiles: the config's tile fields mean nothing here) */
            printf("algorithm   %s: %s\n", flashcl_algorithm_name(o.algo), cfg.reason);
        }
        flashcl_stats stats;
        flashcl_context_stats(ctx, &stats);
        printf("plan        %.1f ms (tile choice; %llu programs compiled, %llu loaded from the disk cache); extra device "
               "memory %llu B\n",
               plan_ms, (unsigned long long)stats.programs_built, (unsigned long long)stats.programs_from_disk,
               (unsigned long long)flashcl_plan_extra_device_bytes(plan)); /* (after the runs) */
        char rate[32];
        printf("time        median %.3f ms (min %.3f, max %.3f) over %ld runs, %s; %s\n", med, tmin, tmax, o.iters,
               host_clock ? "host clock (the driver's profiling events read 0)" : "profiling events",
               cli_flop_rate(tflops, rate, sizeof rate));
        if (o.algo == FLASHCL_ALGO_NAIVE)
            printf("validation  not run: the naive kernel is the validator itself (tests/test_flash checks it "
                   "against float64)\n");
        else if (o.validate)
            printf("validation  %s: %lld of %lld rows checked against the naive kernel, max abs error %.3e, "
                   "max rel error %.3e (tolerance atol %.2e x row scale + rtol %.2e), %lld failures%s\n",
                   report.passed ? "PASS" : "FAIL", (long long)report.rows_checked, (long long)report.rows_total,
                   report.max_abs_error, report.max_rel_error, report.atol, report.rtol, (long long)report.failures,
                   report.passed ? "" : "; see the message above");
        else
            printf("validation  skipped (--no-validate)\n");
    }
    rc = (o.validate && !report.passed && o.algo != FLASHCL_ALGO_NAIVE) ? 3 : 0;
done:
    for (int i = 0; i < 5; ++i)
        if (bufs[i])
            clReleaseMemObject(bufs[i]);
    if (alibi)
        clReleaseMemObject(alibi);
    if (sinks_m)
        clReleaseMemObject(sinks_m);
    for (int s = 0; s < 2; ++s) {
        if (cu_m[s])
            clReleaseMemObject(cu_m[s]);
        free(cu[s]);
    }
    cl_mem extra[7] = {lens_m, bt_m, knew_m, vnew_m, ks_m, vs_m, descale_m};
    for (int e = 0; e < 7; ++e)
        if (extra[e])
            clReleaseMemObject(extra[e]);
    free(cache_lens);
    free(block_table);
    for (int i = 0; i < 3; ++i)
        free(host[i]);
    free(out);
    flashcl_plan_destroy(&plan);
    flashcl_context_destroy(&ctx);
    return rc;
}

/* ------------------------------------------------------------------------------------------------ */

static int npy_dtype(const npy_array *a, int bf16, flashcl_dtype *t, const char *name, const char *path)
{
    if (!strcmp(a->descr, "<f4") && !bf16)
        *t = FLASHCL_DTYPE_F32;
    else if (!strcmp(a->descr, "<f2") && !bf16)
        *t = FLASHCL_DTYPE_F16;
    else if (!strcmp(a->descr, "<u2") && bf16)
        *t = FLASHCL_DTYPE_BF16;
    else {
        fail("FILE_ERROR", "%s %s: dtype %s %s", name, path, a->descr,
                bf16 ? "does not hold bf16 bits (--bf16 wants uint16, '<u2')"
                     : !strcmp(a->descr, "<u2") ? "is uint16: pass --bf16 if it holds bf16 bits" : "is not supported");
        return 0;
    }
    if (a->ndim != 4) {
        fail("FILE_ERROR", "%s %s: %d dimensions, expected 4 (batch, seq, heads, dim)", name, path, a->ndim);
        return 0;
    }
    return 1;
}

static int run_npy(run_opts *o)
{
    npy_array a[3];
    memset(a, 0, sizeof a);
    const char *paths[3] = {o->q_path, o->k_path, o->v_path}, *names[3] = {"--q", "--k", "--v"};
    flashcl_dtype types[3];
    char err[256];
    int rc = 1;
    flashcl_context *ctx = NULL;
    flashcl_plan *plan = NULL;
    cl_mem bufs[5] = {0};
    void *out = NULL;
    float *lse = NULL;
    /* The outputs before the work (checked, not opened: nothing is written unless all of it is) */
    const char *const outs[2] = {o->out_path, o->lse_path};
    for (int i = 0; i < 2; ++i) {
        const char *why = outs[i] ? cli_unwritable(outs[i]) : NULL;
        if (why)
            return fail("FILE_ERROR", "cannot write %s: %s", outs[i], why);
    }
    for (int i = 0; i < 3; ++i) {
        if (npy_read(paths[i], &a[i], err, sizeof err) != 0) {
            fail("FILE_ERROR", "%s %s: %s", names[i], paths[i], err);
            goto done;
        }
        if (!npy_dtype(&a[i], o->bf16, &types[i], names[i], paths[i]))
            goto done;
    }
    if (types[1] != types[0] || types[2] != types[0]) {
        fail("FILE_ERROR", "Q, K and V must have one dtype (got %s, %s, %s)", a[0].descr, a[1].descr,
                a[2].descr);
        goto done;
    }
    for (int d = 0; d < 3; ++d) /* (V's head dim may be its own: problem.head_dim_v) */
        if (a[1].shape[d] != a[2].shape[d]) {
            fail("FILE_ERROR", "K and V shapes differ in dimension %d (%lld vs %lld)", d,
                    (long long)a[1].shape[d], (long long)a[2].shape[d]);
            goto done;
        }
    if (a[0].shape[0] != a[1].shape[0] || a[0].shape[3] != a[1].shape[3]) {
        fail("FILE_ERROR", "Q (%lld, _, _, %lld) and K (%lld, _, _, %lld) must agree on batch and dim",
                (long long)a[0].shape[0], (long long)a[0].shape[3], (long long)a[1].shape[0], (long long)a[1].shape[3]);
        goto done;
    }
    for (int i = 0; i < 3; ++i)
        for (int d = 0; d < 4; ++d)
            if (a[i].shape[d] < 1 || a[i].shape[d] > INT32_MAX) {
                fail("FILE_ERROR", "%s %s: dimension %d is %lld", names[i], paths[i], d,
                        (long long)a[i].shape[d]);
                goto done;
            }

    flashcl_problem p;
    flashcl_problem_default(&p);
    p.batch = (int32_t)a[0].shape[0];
    p.seq_q = (int32_t)a[0].shape[1];
    p.heads_q = (int32_t)a[0].shape[2];
    p.head_dim = (int32_t)a[0].shape[3];
    p.seq_kv = (int32_t)a[1].shape[1];
    p.heads_kv = (int32_t)a[1].shape[2];
    p.head_dim_v = a[2].shape[3] != a[0].shape[3] ? (int32_t)a[2].shape[3] : 0;
    p.dtype = types[0];
    p.causal = o->problem.causal;
    p.window = o->problem.window;
    p.window_left = o->problem.window_left;
    p.window_right = o->problem.window_right;
    p.softcap = o->problem.softcap;
    p.alignment = o->problem.alignment;
    p.scale = o->problem.scale;
    p.return_lse = o->lse_path != NULL;
    p.precision = o->problem.precision;

    flashcl_settings settings;
    flashcl_settings_default(&settings);
    settings.path = o->path;
    settings.validate = o->validate;
    flashcl_status st = flashcl_context_create_default(o->device, &settings, &ctx);
    if (st) {
        fail_lib(NULL, "opening a device", st);
        goto done;
    }
    if (cli_apply_config(ctx, o->has_config, &o->config))
        goto done;
    if ((st = flashcl_plan_create(ctx, &p, &plan))) {
        fail_lib(ctx, "creating the plan", st);
        goto done;
    }
    size_t sz[5];
    flashcl_plan_buffer_sizes(plan, &sz[0], &sz[1], &sz[2], &sz[3], &sz[4]);
    cl_context clctx;
    cl_command_queue queue;
    flashcl_context_cl_objects(ctx, &clctx, NULL, &queue);
    cl_int e = CL_SUCCESS;
    for (int i = 0; i < 5 && e == CL_SUCCESS; ++i)
        if (i < 4 || sz[4])
            bufs[i] = clCreateBuffer(clctx, CL_MEM_READ_WRITE | (i < 3 ? CL_MEM_COPY_HOST_PTR : 0), sz[i],
                                     i < 3 ? a[i].data : NULL, &e);
    if (e != CL_SUCCESS) {
        fail("OPENCL_ERROR", "allocating device buffers failed (OpenCL error %d)", (int)e);
        goto done;
    }
    st = flashcl_plan_enqueue(plan, bufs[0], bufs[1], bufs[2], bufs[3], bufs[4], 0, NULL, NULL);
    flashcl_validation report;
    flashcl_plan_last_validation(plan, &report);
    failure.report = report;
    if (st && st != FLASHCL_VALIDATION_FAILED) {
        fail_lib(ctx, "enqueue", st);
        goto done;
    }
    out = malloc(sz[3]);
    lse = sz[4] ? malloc(sz[4]) : NULL;
    if (!out || (sz[4] && !lse)) {
        fail("OUT_OF_HOST_MEMORY", "out of host memory for the result (%zu bytes)", sz[3] + sz[4]);
        goto done;
    }
    e = clEnqueueReadBuffer(queue, bufs[3], CL_TRUE, 0, sz[3], out, 0, NULL, NULL);
    if (e == CL_SUCCESS && lse)
        e = clEnqueueReadBuffer(queue, bufs[4], CL_TRUE, 0, sz[4], lse, 0, NULL, NULL);
    if (e != CL_SUCCESS) {
        fail("OPENCL_ERROR", "reading the result failed (OpenCL error %d)", (int)e);
        goto done;
    }
    if (st == FLASHCL_VALIDATION_FAILED) { /* (nothing is written) */
        int64_t in_nonfinite = 0;
        for (int i = 0; i < 3; ++i)
            in_nonfinite += count_nonfinite(a[i].data, p.dtype, a[i].count);
        fail_validation(&report, count_nonfinite(out, p.dtype, sz[3] / a[0].elem_size), in_nonfinite);
        rc = 3;
        goto done;
    }
    const int64_t lse_shape[3] = {p.batch, p.heads_q, p.seq_q};
    const int64_t o_shape[4] = {p.batch, p.seq_q, p.heads_q, a[2].shape[3]}; /* (V's head dim) */
    { /* all or nothing: both written under temporary names, then both renamed (O's rename first) */
        npy_staged ws[2];
        int ok = npy_write_staged(&ws[0], o->out_path, a[0].descr, 4, o_shape, out, err, sizeof err) == 0;
        if (ok && lse && npy_write_staged(&ws[1], o->lse_path, "<f4", 3, lse_shape, lse, err, sizeof err) != 0) {
            npy_discard(&ws[0]);
            ok = 0;
        }
        if (ok && npy_commit(&ws[0], err, sizeof err) != 0) {
            if (lse)
                npy_discard(&ws[1]);
            ok = 0;
        }
        if (ok && lse && npy_commit(&ws[1], err, sizeof err) != 0)
            ok = 0;
        if (!ok) {
            fail("FILE_ERROR", "%s", err);
            goto done;
        }
    }
    flashcl_config cfg;
    flashcl_plan_config(plan, &cfg);
    if (o->json) {
        printf("{");
        json_status();
        printf(", \"out\": ");
        cli_json_string(stdout, o->out_path);
        printf(", \"batch\": %d, \"heads_q\": %d, \"heads_kv\": %d, \"seq_q\": %d, \"seq_kv\": %d, \"head_dim\": %d, "
               "\"head_dim_v\": %lld, \"dtype\": \"%s\", \"precision\": \"%s\", \"kernel\": \"%s\", \"tf32\": %d, "
               "\"block_m\": %d, \"block_n\": %d, \"validated\": %s, \"validation\": ",
               p.batch, p.heads_q, p.heads_kv, p.seq_q, p.seq_kv, p.head_dim, (long long)a[2].shape[3],
               flashcl_dtype_name(p.dtype), flashcl_precision_name((flashcl_precision)p.precision), cfg.kernel_name,
               cfg.tf32, cfg.block_m, cfg.block_n, report.ran ? "true" : "false");
        json_validation(&report);
        printf("}\n");
    } else {
        printf("wrote %s (%d, %d, %d, %lld) %s%s%s; %s tiles %dx%d%s\n", o->out_path, p.batch, p.seq_q, p.heads_q,
               (long long)a[2].shape[3], flashcl_dtype_name(p.dtype), lse ? " and " : "", lse ? o->lse_path : "", cfg.kernel_name,
               cfg.block_m, cfg.block_n, report.ran ? ", validated against the naive kernel" : "");
    }
    rc = 0;
done:
    for (int i = 0; i < 5; ++i)
        if (bufs[i])
            clReleaseMemObject(bufs[i]);
    for (int i = 0; i < 3; ++i)
        npy_free(&a[i]);
    free(out);
    free(lse);
    flashcl_plan_destroy(&plan);
    flashcl_context_destroy(&ctx);
    return rc;
}
