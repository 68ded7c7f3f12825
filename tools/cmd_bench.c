/*
 * cmd_bench.c: `flashcl bench`: flash, naive and standard attention side by side in one process on
 * the same inputs: each validated against the naive kernel, timed (median of profiling events, warm-up
 * and compilation excluded), with TFLOP/s, speedups and the extra device memory each allocated.
 * Output: a table, JSON, CSV and an SVG plot.
 */
#include "cli.h"
#include "commands.h"
#include "hostmath.h"
#include "plot.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_SHAPES 256
#define N_ALGOS 3

static void usage(FILE *f)
{
    fprintf(f,
            "usage: flashcl bench [options]\n"
            "Runs flash, naive and standard attention on the same random inputs, validates each against\n"
            "the naive kernel and times it (median of profiling events after warm-up).\n"
            "  --device SEL       \"P:D\" or a name substring (default: $FLASHCL_DEVICE, a GPU, a CPU)\n"
            "  --path P           flash kernel: auto, portable, mma, decode or wgmma (see flashcl run --help)\n"
            "  --preset NAME      fa2: B*N = 16384 tokens, hidden 2048 (d=64 H=32, d=128 H=16),\n"
            "                     N = 512 ... 16384, causal and not; long: N = 32768, 65536, d=128, H=16, B=1\n"
            "  -n, --seq LIST     sequence lengths (seq_q = seq_kv), comma-separated, instead of a preset\n"
            "  -d, --dim LIST     head dims (default 128); heads default to 2048 / d\n"
            "  -H, --heads N      query heads; -b, --batch N (default tokens / N, at least 1)\n"
            "  --tokens T         B*N for presets and lists (default 16384)\n"
            "  --max-n N          leave out longer sequences (for slow devices)\n"
            "  --causal           causal only; --both: causal and not (presets do both)\n"
            "  --top-left         masks, windows and ALiBi aligned top-left (query i at key i)\n"
            "  --decode           one query per sequence against the N keys (a decode step); --seq-q Q: Q\n"
            "                     queries; with -b and -H for the batch and heads\n"
            "  --heads-kv N       key/value heads (GQA), dividing the query heads\n"
            "  --dim-v N          V's and O's head dim on every shape (problem.head_dim_v; default: -d)\n"
            "  --varlen           packed sequences of lengths N/2 .. N (seeded, the first at N); standard\n"
            "                     attention has none and is not run\n"
            "  --paged PAGE       K/V as a full KV cache in pages of PAGE rows (a multiple of 16), the block\n"
            "                     table a fixed shuffle; standard attention has no cache and is not run\n"
            "  --kv-dtype F       K/V in a float type of their own (f32, f16, bf16; Q and O in --dtype), or\n"
            "                     as a full KV cache quantized: int8, int8-f16 (fp16 scales), fp8e4m3 or\n"
            "                     fp8e5m2 (decode shapes; GB/s counts the cache's bytes and int8 scales)\n"
            "  --window L,R       a sliding window on every shape (see flashcl run --help); FLOPs count\n"
            "                     only the pairs inside it\n"
            "  --softcap C        scores become C * tanh(scores / C), every shape\n"
            "  --kv-splits N      split-KV on every shape (0: chosen from the device, 1: never)\n"
            "  --sinks L          attention sinks (logit L for every query head), every shape; standard\n"
            "                     attention has none and is reported as not run\n"
            "  --alibi            ALiBi biases (slopes 2^(-8(h+1)/H)), every shape; standard attention has\n"
            "                     none and is reported as not run\n"
            "  --dtype T          f32, f16 or bf16 (default f32)\n"
            "  --algos LIST       flash,naive,standard (default all three)\n"
            "  --iters N          timed runs (default 10, fewer when a run is slower than --max-seconds/N)\n"
            "  --warmup N         untimed runs first (default 2)\n"
            "  --max-seconds S    time budget per algorithm and shape (default 10)\n"
            "  --json FILE, --csv FILE, --plot FILE.svg   also write these ('-' for stdout)\n"
            "GB/s in the table: the bytes of the caller's Q, K, V and O over the median time (for a decode\n"
            "step, nearly all of it the K/V cache read once).\n"
            "exit status: 0 ok (a standard attention that cannot allocate is a result), 1 an error or a\n"
            "validation failure, 2 bad usage\n");
}

typedef struct result {
    flashcl_problem p;
    int algo;
    int ran;            /* 0: not run (see note) */
    int error;          /* not run for an error (a bad shape, a failure); not: standard attention refusing
                           the problem's features or short of memory for its n x n scores (a result) */
    char note[200];     /* why not, or "" */
    double median, min, max, tflops;
    int runs, host_clock;
    uint64_t extra_bytes, io_bytes; /* beyond the caller's buffers; the caller's Q, K, V, O */
    char kernel[32];                /* the plan's kernel ("flash_fwd", "flash_mma", ...) */
    int validated, passed;
    int64_t rows_checked;
    double max_rel_error;
} result;

static int parse_list(const char *opt, const char *val, long lo, long hi, long *out, int max, int *n)
{
    if (!val) {
        fprintf(stderr, "flashcl bench: %s needs a value\n", opt);
        return 0;
    }
    char buf[512];
    snprintf(buf, sizeof buf, "%s", val);
    *n = 0;
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        if (*n == max || !cli_int(opt, tok, lo, hi, &out[*n]))
            return 0;
        ++*n;
    }
    return *n > 0;
}

static void fill_buffer(cl_command_queue queue, cl_mem m, size_t bytes, flashcl_dtype t, hm_rng *rng)
{
    /* One chunk of 2^24 normals, repeated over larger buffers: drawing normals on the host for the
     * gigabytes of a long decode cache took most of a benchmark's minute, and timing needs no fresh
     * randomness (validation compares against the same repeated data). */
    const size_t es = flashcl_dtype_size(t), chunk = (size_t)1 << 24;
    void *h = malloc(chunk * es);
    if (!h)
        return;
    hm_fill_normal(h, t, bytes / es < chunk ? bytes / es : chunk, rng, 1.0);
    for (size_t off = 0; off < bytes / es; off += chunk) {
        const size_t n = bytes / es - off < chunk ? bytes / es - off : chunk;
        clEnqueueWriteBuffer(queue, m, CL_TRUE, off * es, n * es, h, 0, NULL, NULL);
    }
    free(h);
}

/* A quantized cache: one chunk of 2^24 bytes of about N(0, 1) values, repeated as fill_buffer does. */
static void fill_kv_buffer(cl_command_queue queue, cl_mem m, size_t bytes, flashcl_kv_format f, hm_rng *rng)
{
    const size_t chunk = (size_t)1 << 24;
    uint8_t *h = malloc(chunk);
    if (!h)
        return;
    hm_fill_kv(h, f, bytes < chunk ? bytes : chunk, rng, 1.0);
    for (size_t off = 0; off < bytes; off += chunk)
        clEnqueueWriteBuffer(queue, m, CL_TRUE, off, bytes - off < chunk ? bytes - off : chunk, h, 0, NULL, NULL);
    free(h);
}

/* --varlen: the sequences' lengths, drawn from N/2 to N (the first at N) by a generator seeded with
 * the shape, so that the shape's totals and its run agree. cu_q and cu_k hold batch + 1 entries. */
static void varlen_lengths(const flashcl_problem *p, int32_t *cu_q, int32_t *cu_k)
{
    hm_rng r;
    hm_rng_seed(&r, (uint64_t)p->batch * 1000003u + (uint64_t)p->seq_q * 31u + (uint64_t)p->seq_kv);
    cu_q[0] = cu_k[0] = 0;
    for (int b = 0; b < p->batch; ++b) {
        const int32_t lq = b == 0 ? p->seq_q : (p->seq_q + 1) / 2 + (int32_t)(hm_rng_uniform(&r) * (p->seq_q / 2));
        const int32_t lk = b == 0 ? p->seq_kv : (p->seq_kv + 1) / 2 + (int32_t)(hm_rng_uniform(&r) * (p->seq_kv / 2));
        cu_q[b + 1] = cu_q[b] + (lq < p->seq_q ? lq : p->seq_q);
        cu_k[b + 1] = cu_k[b] + (lk < p->seq_kv ? lk : p->seq_kv);
    }
}

/* FLOPs of a shape: packed sequences count their own lengths. */
static double shape_flops(const flashcl_problem *p)
{
    if (!p->varlen)
        return cli_flops(p);
    int32_t *cu = malloc(2 * ((size_t)p->batch + 1) * sizeof *cu);
    if (!cu)
        return cli_flops(p);
    varlen_lengths(p, cu, cu + p->batch + 1);
    const double f = cli_flops_packed(p, cu, cu + p->batch + 1);
    free(cu);
    return f;
}

static void run_shape(flashcl_context *ctx, const flashcl_problem *p, const int *algos, long iters, long warmup,
                      double max_seconds, result *res)
{
    cl_context clctx;
    cl_command_queue queue;
    flashcl_context_cl_objects(ctx, &clctx, NULL, &queue);
    flashcl_plan *plans[N_ALGOS] = {0};
    for (int a = 0; a < N_ALGOS; ++a) {
        result *r = &res[a];
        memset(r, 0, sizeof *r);
        r->p = *p;
        r->algo = a;
        if (!algos[a]) {
            snprintf(r->note, sizeof r->note, "not asked for");
            continue;
        }
        if (!flashcl_algorithm_available((flashcl_algorithm)a)) {
            snprintf(r->note, sizeof r->note, "not available: needs CLBlast (built without it, or not loadable)");
            continue;
        }
        flashcl_status st = flashcl_plan_create_algo(ctx, p, (flashcl_algorithm)a, &plans[a]);
        if (st) {
            snprintf(r->note, sizeof r->note, "%s: %s", flashcl_status_name(st), flashcl_context_last_error(ctx));
            r->error = !(a == FLASHCL_ALGO_STANDARD && (st == FLASHCL_UNSUPPORTED || st == FLASHCL_OUT_OF_DEVICE_MEMORY));
            continue;
        }
        /* (before any run: a split-KV plan's scratch, which its first run allocates, counted too) */
        r->extra_bytes = flashcl_plan_extra_device_bytes(plans[a]) + flashcl_plan_workspace_bytes(plans[a]);
        flashcl_config cfg;
        if (flashcl_plan_config(plans[a], &cfg) == FLASHCL_SUCCESS)
            snprintf(r->kernel, sizeof r->kernel, "%s", cfg.kernel);
    }
    flashcl_plan *any = plans[0] ? plans[0] : plans[1] ? plans[1] : plans[2];
    if (!any)
        return;
    size_t sz[5];
    flashcl_plan_buffer_sizes(any, &sz[0], &sz[1], &sz[2], &sz[3], &sz[4]);
    cl_mem b[4] = {0};
    cl_int err = CL_SUCCESS;
    for (int i = 0; i < 4 && err == CL_SUCCESS; ++i)
        b[i] = clCreateBuffer(clctx, CL_MEM_READ_WRITE, sz[i], NULL, &err);
    if (err != CL_SUCCESS) {
        for (int a = 0; a < N_ALGOS; ++a)
            if (plans[a]) {
                snprintf(res[a].note, sizeof res[a].note, "could not allocate the inputs (OpenCL error %d)", (int)err);
                res[a].error = 1;
                flashcl_plan_destroy(&plans[a]);
            }
        for (int i = 0; i < 4; ++i)
            if (b[i])
                clReleaseMemObject(b[i]);
        return;
    }
    cl_mem alibi = p->alibi ? cli_alibi_slopes(clctx, p, &err) : NULL;
    cl_mem sinks_m = p->sinks && err == CL_SUCCESS ? cli_sinks(clctx, p, &err) : NULL;
    /* --paged: a full cache (every sequence's N keys) in pages, the block table a fixed shuffle of
     * the pool (e -> 7e + 1 mod the page count, which 7 does not divide: a permutation). */
    cl_mem lens_m = NULL, bt_m = NULL, cu_m[2] = {NULL, NULL};
    if (p->varlen && err == CL_SUCCESS) {
        int32_t *cu = malloc(2 * ((size_t)p->batch + 1) * sizeof *cu);
        if (cu) {
            varlen_lengths(p, cu, cu + p->batch + 1);
            for (int s = 0; s < 2 && err == CL_SUCCESS; ++s)
                cu_m[s] = clCreateBuffer(clctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                         ((size_t)p->batch + 1) * sizeof *cu, cu + s * (p->batch + 1), &err);
            free(cu);
        } else {
            err = CL_OUT_OF_HOST_MEMORY;
        }
    }
    if (p->kv_cache && err == CL_SUCCESS) {
        const int32_t max_pages = p->page_size ? (p->seq_kv + p->page_size - 1) / p->page_size : 0;
        int32_t *lens = malloc((size_t)p->batch * sizeof *lens);
        int32_t *table = malloc((size_t)p->batch * max_pages * sizeof *table);
        if (lens && table) {
            for (int i = 0; i < p->batch; ++i)
                lens[i] = p->seq_kv;
            for (int e = 0; e < p->batch * max_pages; ++e)
                table[e] = (int32_t)(((int64_t)e * 7 + 1) % p->num_pages);
            lens_m = clCreateBuffer(clctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, (size_t)p->batch * sizeof *lens,
                                    lens, &err);
            if (err == CL_SUCCESS && p->page_size)
                bt_m = clCreateBuffer(clctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                      (size_t)p->batch * max_pages * sizeof *table, table, &err);
        } else {
            err = CL_OUT_OF_HOST_MEMORY;
        }
        free(lens);
        free(table);
    }
    hm_rng rng;
    hm_rng_seed(&rng, (uint64_t)p->seq_q * 31 + p->head_dim);
    cl_mem ks_m = NULL, vs_m = NULL; /* an int8 cache's scales */
    if (p->kv_format == FLASHCL_KV_INT8 && err == CL_SUCCESS) {
        ks_m = cli_kv_scales(clctx, p, &rng, &err);
        if (err == CL_SUCCESS)
            vs_m = cli_kv_scales(clctx, p, &rng, &err);
    }
    const flashcl_tensors t = {.q = b[0], .k = b[1], .v = b[2], .o = b[3], .alibi_slopes = alibi,
                               .cache_seqlens = lens_m, .block_table = bt_m, .cu_seqlens_q = cu_m[0],
                               .cu_seqlens_k = cu_m[1], .k_scale = ks_m, .v_scale = vs_m, .sinks = sinks_m};
    const uint64_t scale_bytes = 2 * (uint64_t)cli_kv_scale_count(p) * flashcl_dtype_size(p->kv_scale_dtype);
    for (int a = 0; a < N_ALGOS; ++a)
        res[a].io_bytes = (uint64_t)sz[0] + sz[1] + sz[2] + sz[3] + scale_bytes;
    for (int i = 0; i < 3; ++i) {
        if (i > 0 && p->kv_format)
            fill_kv_buffer(queue, b[i], sz[i], (flashcl_kv_format)p->kv_format, &rng);
        else /* (K and V in their own dtype: --kv-dtype f32|f16|bf16) */
            fill_buffer(queue, b[i], sz[i], i && p->kv_dtype ? (flashcl_dtype)(p->kv_dtype - 1) : p->dtype, &rng);
    }

    for (int a = 0; a < N_ALGOS; ++a) {
        result *r = &res[a];
        if (!plans[a])
            continue;
        /* Validated run: the naive kernel recomputes a sample of rows and compares (not for the naive
         * algorithm itself: it would be compared with itself; its run here only builds it). */
        flashcl_context_set_validation(ctx, a != FLASHCL_ALGO_NAIVE);
        flashcl_status st = flashcl_plan_enqueue_tensors(plans[a], &t, 0, NULL, NULL);
        flashcl_context_set_validation(ctx, 0);
        flashcl_validation rep;
        flashcl_plan_last_validation(plans[a], &rep);
        if (st && st != FLASHCL_VALIDATION_FAILED) {
            snprintf(r->note, sizeof r->note, "%s: %s", flashcl_status_name(st), flashcl_context_last_error(ctx));
            r->error = 1;
            flashcl_plan_destroy(&plans[a]);
            continue;
        }
        r->validated = rep.ran;
        r->passed = a == FLASHCL_ALGO_NAIVE ? st == FLASHCL_SUCCESS : rep.passed;
        r->rows_checked = rep.rows_checked;
        r->max_rel_error = rep.max_rel_error;
        /* One timed probe decides how many runs fit the budget. */
        double med, mn, mx;
        int host_clock = 0;
        st = cli_time_plan(plans[a], &t, 0, 1, &med, &mn, &mx, &host_clock);
        long n = iters, w = warmup;
        if (st == FLASHCL_SUCCESS && med > 0) {
            const long fit = (long)(max_seconds * 1e3 / med);
            if (fit < n + w) {
                w = fit > 3 ? 1 : 0;
                n = fit - w > 3 ? fit - w : 3;
            }
            st = cli_time_plan(plans[a], &t, w, n, &r->median, &r->min, &r->max,
                               &r->host_clock);
        }
        if (st) {
            snprintf(r->note, sizeof r->note, "timing: %s: %s", flashcl_status_name(st), flashcl_context_last_error(ctx));
            r->error = 1;
        } else {
            r->ran = 1;
            r->runs = (int)n;
            r->tflops = shape_flops(p) / (r->median * 1e-3) / 1e12;
        }
        flashcl_plan_destroy(&plans[a]);
    }
    for (int i = 0; i < 4; ++i)
        clReleaseMemObject(b[i]);
    if (alibi)
        clReleaseMemObject(alibi);
    if (sinks_m)
        clReleaseMemObject(sinks_m);
    if (lens_m)
        clReleaseMemObject(lens_m);
    for (int s = 0; s < 2; ++s)
        if (cu_m[s])
            clReleaseMemObject(cu_m[s]);
    if (bt_m)
        clReleaseMemObject(bt_m);
    if (ks_m)
        clReleaseMemObject(ks_m);
    if (vs_m)
        clReleaseMemObject(vs_m);
}

/* --algos LIST: a comma-separated subset of flash, naive, standard; anything else is a usage error. */
static int parse_algos(const char *val, int algos[N_ALGOS])
{
    static const char *const names[N_ALGOS] = {"flash", "naive", "standard"};
    memset(algos, 0, N_ALGOS * sizeof *algos);
    int any = 0;
    for (const char *p = val; *p;) {
        const size_t n = strcspn(p, ",");
        int known = 0;
        for (int a = 0; a < N_ALGOS; ++a)
            if (n == strlen(names[a]) && !strncmp(p, names[a], n))
                known = algos[a] = any = 1;
        if (!known) {
            fprintf(stderr, "flashcl bench: --algos %s: '%.*s' is not flash, naive or standard\n", val, (int)n, p);
            return 0;
        }
        p += n + (p[n] == ',');
    }
    if (!any)
        fprintf(stderr, "flashcl bench: --algos needs some of flash,naive,standard\n");
    return any;
}

static FILE *open_out(const char *path)
{
    if (!strcmp(path, "-"))
        return stdout;
    FILE *f = fopen(path, "w");
    if (!f)
        fprintf(stderr, "flashcl bench: cannot write %s: %s\n", path, strerror(errno));
    return f;
}

static void close_out(FILE *f)
{
    if (f && f != stdout)
        fclose(f);
}

/* Whether `path` (NULL: none; "-": stdout) can be written; says why not on stderr. */
static int writable(const char *path)
{
    const char *why = path && strcmp(path, "-") ? cli_unwritable(path) : NULL;
    if (why)
        fprintf(stderr, "flashcl bench: cannot write %s: %s\n", path, why);
    return why == NULL;
}

static const char *mask_name(const flashcl_problem *p)
{
    return p->causal ? "causal" : "full";
}

int cmd_bench(int argc, char **argv)
{
    const char *device = NULL, *preset = NULL, *json_path = NULL, *csv_path = NULL, *plot_path = NULL;
    long seqs[32], dims[8] = {128}, heads = 0, batch = 0, tokens = 16384, max_n = 0, iters = 10, warmup = 2;
    int n_seqs = 0, n_dims = 1, dims_given = 0, causal_mode = 0 /* 0 full, 1 causal, 2 both */, top_left = 0;
    long decode_q = 0;     /* --decode / --seq-q: queries per step against N keys */
    int path = -1;         /* --path: flash kernel (-1: $FLASHCL_PATH) */
    long heads_kv = 0;     /* --heads-kv: GQA */
    long dim_v = 0;        /* --dim-v: V's and O's head dim */
    long paged = 0;        /* --paged PAGE: K/V as a full paged cache */
    flashcl_problem kv_fmt; /* --kv-dtype: kv_format and kv_scale_dtype */
    memset(&kv_fmt, 0, sizeof kv_fmt);
    int varlen = 0;        /* --varlen: packed sequences of lengths N/2 .. N */
    flashcl_problem masks; /* --window and --softcap, applied to every shape */
    flashcl_problem_default(&masks);
    int mask_rc;
    double max_seconds = 10.0;
    int algos[N_ALGOS] = {1, 1, 1};
    flashcl_dtype dtype = FLASHCL_DTYPE_F32;
    long v;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        CLI_INT_OPTION("-H", "--heads", 1, 1L << 20, heads)
        CLI_INT_OPTION("-b", "--batch", 1, 1L << 20, batch)
        CLI_INT_OPTION("--tokens", NULL, 1, 1L << 30, tokens)
        CLI_INT_OPTION("--max-n", NULL, 1, 1L << 30, max_n)
        CLI_INT_OPTION("--iters", NULL, 1, 100000, iters)
        CLI_INT_OPTION("--warmup", NULL, 0, 100000, warmup)
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--path")) {
            flashcl_path fp;
            if (!val || flashcl_path_parse(val, &fp) != FLASHCL_SUCCESS) {
                fprintf(stderr, "flashcl bench: --path needs auto, portable, mma, decode or wgmma\n");
                return 2;
            }
            path = (int)fp;
            ++i;
        } else if (!strcmp(a, "--device") && val) {
            device = val;
            ++i;
        } else if ((mask_rc = cli_mask_option("bench", a, val, &masks)) != 0) {
            if (mask_rc == 2)
                return 2;
            i += mask_rc == 1;
        } else if (!strcmp(a, "--preset") && val) {
            if (strcmp(val, "fa2") && strcmp(val, "long")) {
                fprintf(stderr, "flashcl bench: --preset %s: expected fa2 or long\n", val);
                return 2;
            }
            preset = val;
            ++i;
        } else if (!strcmp(a, "-n") || !strcmp(a, "--seq")) {
            if (!parse_list(a, val, 1, 1L << 30, seqs, 32, &n_seqs))
                return 2;
            ++i;
        } else if (!strcmp(a, "-d") || !strcmp(a, "--dim")) {
            if (!parse_list(a, val, 8, 256, dims, 8, &n_dims))
                return 2;
            dims_given = 1;
            ++i;
        } else if (!strcmp(a, "--max-seconds")) {
            if (!cli_int(a, val, 1, 100000, &v))
                return 2;
            max_seconds = (double)v;
            ++i;
        } else if (!strcmp(a, "--dtype")) {
            if (!cli_dtype(val, &dtype))
                return 2;
            ++i;
        } else if (!strcmp(a, "--algos") && val) {
            if (!parse_algos(val, algos))
                return 2;
            ++i;
        } else if (!strcmp(a, "--causal")) {
            causal_mode = 1;
        } else if (!strcmp(a, "--top-left")) {
            top_left = 1;
        } else if (!strcmp(a, "--dim-v") && val) {
            if (!cli_int(a, val, 1, 4096, &dim_v))
                return 2;
            ++i;
        } else if (!strcmp(a, "--heads-kv") && val) {
            if (!cli_int(a, val, 1, 1 << 20, &heads_kv))
                return 2;
            ++i;
        } else if (!strcmp(a, "--paged") && val) {
            long v = 0;
            if (!cli_int(a, val, 16, 1 << 20, &v))
                return 2;
            if (v % 16) {
                fprintf(stderr, "flashcl bench: --paged %ld: the page size must be a multiple of 16\n", v);
                return 2;
            }
            paged = v;
            ++i;
        } else if (!strcmp(a, "--kv-dtype")) {
            if (!cli_kv_format(val, &kv_fmt))
                return 2;
            ++i;
        } else if (!strcmp(a, "--varlen")) {
            varlen = 1;
        } else if (!strcmp(a, "--decode")) {
            decode_q = 1;
        } else if (!strcmp(a, "--seq-q") && val) {
            long v = 0;
            if (!cli_int(a, val, 1, 1 << 20, &v))
                return 2;
            decode_q = v;
            ++i;
        } else if (!strcmp(a, "--both")) {
            causal_mode = 2;
        } else if (!strcmp(a, "--json") && val) {
            json_path = val;
            ++i;
        } else if (!strcmp(a, "--csv") && val) {
            csv_path = val;
            ++i;
        } else if (!strcmp(a, "--plot") && val) {
            plot_path = val;
            ++i;
        } else {
            fprintf(stderr, "flashcl bench: unknown option or missing value '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (preset && (n_seqs || dims_given)) {
        fprintf(stderr, "flashcl bench: --preset %s sets the sequence lengths and head dims: drop %s, or the preset\n",
                preset, n_seqs ? "-n" : "-d");
        return 2;
    }
    if (plot_path && (strlen(plot_path) < 4 || strcmp(plot_path + strlen(plot_path) - 4, ".svg"))) {
        fprintf(stderr, "flashcl bench: --plot %s: the plot is SVG, name it FILE.svg\n", plot_path);
        return 2;
    }
    /* The outputs before the work: a path that cannot be written fails now, not after the runs (checked,
     * not opened: a refusal below must not leave an earlier result truncated). */
    if (!writable(json_path) || !writable(csv_path) || !writable(plot_path))
        return 1;
    if (preset && !strcmp(preset, "fa2")) {
        static const long fa2[] = {512, 1024, 2048, 4096, 8192, 16384};
        n_seqs = 6;
        memcpy(seqs, fa2, sizeof fa2);
        dims[0] = 64;
        dims[1] = 128;
        n_dims = 2;
        causal_mode = 2;
    } else if (preset && !strcmp(preset, "long")) {
        seqs[0] = 32768;
        seqs[1] = 65536;
        n_seqs = 2;
        dims[0] = 128;
        n_dims = 1;
        tokens = 1; /* B = 1 */
        if (!heads)
            heads = 16;
    }
    if (!n_seqs) {
        seqs[0] = 4096;
        n_seqs = 1;
    }

    /* The shapes, in the order they run. */
    static flashcl_problem shapes[MAX_SHAPES];
    int n_shapes = 0;
    for (int di = 0; di < n_dims; ++di)
        for (int ci = 0; ci < 2; ++ci) {
            if ((causal_mode == 0 && ci == 1) || (causal_mode == 1 && ci == 0))
                continue;
            for (int si = 0; si < n_seqs && n_shapes < MAX_SHAPES; ++si) {
                if (max_n && seqs[si] > max_n)
                    continue;
                flashcl_problem *p = &shapes[n_shapes++];
                flashcl_problem_default(p);
                p->head_dim = (int32_t)dims[di];
                p->head_dim_v = (int32_t)dim_v; /* (0: the head dim) */
                p->seq_q = p->seq_kv = (int32_t)seqs[si];
                if (decode_q) /* decode: a few queries against the N keys of a cache */
                    p->seq_q = (int32_t)decode_q;
                p->heads_q = p->heads_kv = (int32_t)(heads ? heads : (2048 / dims[di] > 0 ? 2048 / dims[di] : 1));
                if (heads_kv)
                    p->heads_kv = (int32_t)heads_kv; /* must divide the query heads: the plan says so if not */
                p->batch = (int32_t)(batch ? batch : (tokens / seqs[si] > 0 ? tokens / seqs[si] : 1));
                if (varlen) { /* packed: the totals of the lengths this shape's run will use (after the batch) */
                    int32_t *cu = malloc(2 * ((size_t)p->batch + 1) * sizeof *cu);
                    if (cu) {
                        p->varlen = 1;
                        varlen_lengths(p, cu, cu + p->batch + 1);
                        p->total_q = cu[p->batch];
                        p->total_kv = cu[2 * p->batch + 1];
                        free(cu);
                    }
                }
                /* The pool: every sequence's pages (one more if 7 divides their count), sized after the
                 * batch is known (it was once sized for batch 1: a batch-8 run read one pool 8 times). */
                if (paged) {
                    p->kv_cache = 1;
                    p->page_size = (int32_t)paged;
                    const int64_t pages = (int64_t)p->batch * ((p->seq_kv + paged - 1) / paged);
                    p->num_pages = (int32_t)(pages % 7 ? pages : pages + 1);
                }
                p->dtype = dtype;
                p->causal = ci;
                p->alignment = top_left ? FLASHCL_ALIGN_TOP_LEFT : FLASHCL_ALIGN_BOTTOM_RIGHT;
                p->window = masks.window;
                p->window_left = masks.window_left;
                p->window_right = masks.window_right;
                p->softcap = masks.softcap;
                p->alibi = masks.alibi;
                p->sinks = masks.sinks;
                p->kv_splits = masks.kv_splits;
                p->kv_dtype = kv_fmt.kv_dtype;
                if (kv_fmt.kv_format) { /* a full cache (every sequence's N keys), quantized */
                    p->kv_cache = 1;
                    p->kv_format = kv_fmt.kv_format;
                    p->kv_scale_dtype = kv_fmt.kv_scale_dtype;
                }
            }
        }

    flashcl_context *ctx = NULL;
    flashcl_settings s;
    flashcl_settings_default(&s);
    s.validate = 0;
    s.path = path;
    flashcl_status st = flashcl_context_create_default(device, &s, &ctx);
    if (st)
        return cli_fail(NULL, "opening a device", st);
    const flashcl_device_profile *pr = flashcl_context_profile(ctx);
    /* A preset sized for GPUs on a CPU: hours of naive attention at N = 16384 (or 65536); say so before
     * anything runs and let the user bound it. */
    if (preset && pr->is_cpu && !max_n) {
        long longest = 0;
        for (int i = 0; i < n_shapes; ++i)
            longest = shapes[i].seq_kv > longest ? shapes[i].seq_kv : longest;
        if (longest > 4096) {
            fprintf(stderr,
                    "flashcl bench: --preset %s runs %d shapes up to N=%ld, hours on a CPU (%s); bound it with "
                    "--max-n (e.g. --max-n 2048) or pass -n and -d\n",
                    preset, n_shapes, longest, pr->name);
            flashcl_context_destroy(&ctx);
            return 2;
        }
    }
    char mask_desc[96] = "";
    if (masks.window || masks.softcap > 0.0f || masks.alibi || masks.sinks) {
        masks.causal = 0;
        cli_mask_name(&masks, mask_desc, sizeof mask_desc);
    }
    fprintf(stderr, "flashcl bench on %s / %s (driver %s): %d shapes%s%s\n", pr->platform_name, pr->name,
            pr->driver_version, n_shapes, mask_desc[0] ? ", every one with " : "", mask_desc[0] ? mask_desc + 5 : "");

    result *res = calloc((size_t)n_shapes * N_ALGOS, sizeof *res);
    if (!res) {
        flashcl_context_destroy(&ctx);
        return 1;
    }
    int rc = 0;
    for (int i = 0; i < n_shapes; ++i) {
        const flashcl_problem *p = &shapes[i];
        fprintf(stderr, "[%d/%d] B=%d H=%d N=%d d=%d %s %s ...", i + 1, n_shapes, p->batch, p->heads_q, p->seq_q,
                p->head_dim, flashcl_dtype_name(p->dtype), mask_name(p));
        fflush(stderr);
        run_shape(ctx, p, algos, iters, warmup, max_seconds, &res[i * N_ALGOS]);
        for (int a = 0; a < N_ALGOS; ++a) {
            const result *r = &res[i * N_ALGOS + a];
            if (r->ran)
                fprintf(stderr, " %s %.3f ms%s", flashcl_algorithm_name((flashcl_algorithm)a), r->median,
                        r->passed ? "" : " (VALIDATION FAILED)");
            if ((r->ran && !r->passed) || r->error)
                rc = 1;
        }
        fprintf(stderr, "\n");
    }

    /* The table. */
    printf("flashcl bench: %s / %s, driver %s; medians of profiling events, warm-up excluded\n", pr->platform_name,
           pr->name, pr->driver_version);
    /* Units that carry information: GFLOP/s and MB/s where every rate would print as 0 (a CPU). */
    int giga = 1, mega = 1;
    for (int i = 0; i < n_shapes * N_ALGOS; ++i)
        if (res[i].ran) {
            giga &= res[i].tflops < 0.1;
            mega &= (double)res[i].io_bytes / (res[i].median * 1e6) < 1.0;
        }
    const double rate_scale = giga ? 1e3 : 1.0, bytes_scale = mega ? 1e3 : 1.0;
    printf("%-5s %-4s %-6s %-4s %-6s | %-9s %10s %21s %8s %7s %12s %-10s | %8s %8s\n", "B", "H", "N", "d", "mask", "algo",
           "median ms", "spread (min-max) ms", giga ? "GFLOP/s" : "TFLOP/s", mega ? "MB/s" : "GB/s", "extra MiB",
           "validated", "vs std", "vs naive");
    for (int i = 0; i < n_shapes; ++i) {
        const result *row = &res[i * N_ALGOS];
        for (int a = 0; a < N_ALGOS; ++a) {
            const result *r = &row[a];
            if (!algos[a])
                continue;
            printf("%-5d %-4d %-6d %-4d %-6s | %-9s ", r->p.batch, r->p.heads_q, r->p.seq_kv, r->p.head_dim,
                   mask_name(&r->p), !strcmp(r->kernel, "flash_mma") ? "flash-mma" : flashcl_algorithm_name((flashcl_algorithm)a));
            if (!r->ran) {
                printf("%s\n", r->note);
                continue;
            }
            char spread[32], vs_std[16] = "", vs_naive[16] = "";
            snprintf(spread, sizeof spread, "%.3f-%.3f", r->min, r->max);
            if (a == FLASHCL_ALGO_FLASH && row[2].ran)
                snprintf(vs_std, sizeof vs_std, "%.2fx", row[2].median / r->median);
            if (a == FLASHCL_ALGO_FLASH && row[1].ran)
                snprintf(vs_naive, sizeof vs_naive, "%.2fx", row[1].median / r->median);
            printf("%10.3f %21s %8.2f %7.0f %12.1f %-10s | %8s %8s\n", r->median, spread, r->tflops * rate_scale,
                   (double)r->io_bytes / (r->median * 1e6) * bytes_scale, (double)r->extra_bytes / 1048576.0,
                   !r->validated && r->passed ? "validator" : r->passed ? "pass" : "FAIL", vs_std, vs_naive);
        }
    }

    char date[32];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
    if (json_path) {
        FILE *f = open_out(json_path);
        if (!f) {
            rc = 1;
        } else {
            fprintf(f, "{\"date\": \"%s\", \"device\": ", date);
            cli_json_string(f, pr->name);
            fprintf(f, ", \"platform\": ");
            cli_json_string(f, pr->platform_name);
            fprintf(f, ", \"driver\": ");
            cli_json_string(f, pr->driver_version);
            fprintf(f, ", \"flashcl\": \"%s\", \"command\": ", flashcl_version_string());
            char cmd[1024] = "flashcl";
            for (int i = 0; i < argc; ++i) {
                strncat(cmd, " ", sizeof cmd - strlen(cmd) - 1);
                strncat(cmd, argv[i], sizeof cmd - strlen(cmd) - 1);
            }
            cli_json_string(f, cmd);
            fprintf(f, ",\n \"results\": [");
            int first = 1;
            for (int i = 0; i < n_shapes * N_ALGOS; ++i) {
                const result *r = &res[i];
                if (!algos[r->algo])
                    continue;
                /* "seq" is N: the keys (the queries too, except for --decode / --seq-q) */
                fprintf(f, "%s\n  {\"algo\": \"%s\", \"batch\": %d, \"heads\": %d, \"seq\": %d, \"head_dim\": %d, "
                           "\"dtype\": \"%s\", \"causal\": %s, \"flops\": %.0f, \"ran\": %s, \"seq_q\": %d, "
                           "\"heads_kv\": %d, ",
                        first ? "" : ",", flashcl_algorithm_name((flashcl_algorithm)r->algo), r->p.batch, r->p.heads_q,
                        r->p.seq_kv, r->p.head_dim, flashcl_dtype_name(r->p.dtype), r->p.causal ? "true" : "false",
                        shape_flops(&r->p), r->ran ? "true" : "false", r->p.seq_q, r->p.heads_kv);
                if (r->p.head_dim_v)
                    fprintf(f, "\"head_dim_v\": %d, ", r->p.head_dim_v);
                if (r->p.window)
                    fprintf(f, "\"window_left\": %d, \"window_right\": %d, ", r->p.window_left, r->p.window_right);
                if (r->p.softcap > 0.0f)
                    fprintf(f, "\"softcap\": %.9g, ", (double)r->p.softcap);
                if (r->p.page_size)
                    fprintf(f, "\"page_size\": %d, ", r->p.page_size);
                if (r->p.kv_splits)
                    fprintf(f, "\"kv_splits\": %d, ", r->p.kv_splits);
                if (r->p.kv_format)
                    fprintf(f, "\"kv_format\": \"%s%s\", ", flashcl_kv_format_name((flashcl_kv_format)r->p.kv_format),
                            r->p.kv_format == FLASHCL_KV_INT8 && r->p.kv_scale_dtype == FLASHCL_DTYPE_F16 ? "-f16" : "");
                if (r->p.alibi)
                    fprintf(f, "\"alibi\": %d, ", r->p.alibi);
                if (r->p.sinks)
                    fprintf(f, "\"sinks\": %.9g, ", cli_sink_logit);
                if (r->p.varlen)
                    fprintf(f, "\"varlen\": true, \"total_q\": %lld, \"total_kv\": %lld, ", (long long)r->p.total_q,
                            (long long)r->p.total_kv);
                if (r->ran && r->kernel[0])
                    fprintf(f, "\"kernel\": \"%s\", ", r->kernel);
                if (r->ran)
                    fprintf(f, "\"median_ms\": %.6f, \"min_ms\": %.6f, \"max_ms\": %.6f, \"runs\": %d, \"clock\": \"%s\", "
                               "\"tflops\": %.4f, \"gb_per_s\": %.1f, \"extra_bytes\": %llu, \"io_bytes\": %llu, \"validated\": %s, "
                               "\"passed\": %s, \"rows_checked\": %lld, \"max_rel_error\": %.3e}",
                            r->median, r->min, r->max, r->runs, r->host_clock ? "host" : "events", r->tflops,
                            (double)r->io_bytes / (r->median * 1e6),
                            (unsigned long long)r->extra_bytes, (unsigned long long)r->io_bytes, r->validated ? "true" : "false",
                            r->passed ? "true" : "false", (long long)r->rows_checked, r->max_rel_error);
                else {
                    fprintf(f, "\"note\": ");
                    cli_json_string(f, r->note);
                    fprintf(f, "}");
                }
                first = 0;
            }
            fprintf(f, "\n]}\n");
            close_out(f);
        }
    }
    if (csv_path) {
        FILE *f = open_out(csv_path);
        if (!f) {
            rc = 1;
        } else {
            fprintf(f, "algo,batch,heads,seq,head_dim,dtype,causal,median_ms,min_ms,max_ms,runs,tflops,extra_bytes,passed,note\n");
            for (int i = 0; i < n_shapes * N_ALGOS; ++i) {
                const result *r = &res[i];
                if (!algos[r->algo])
                    continue;
                char note[200];
                snprintf(note, sizeof note, "%s", r->note);
                for (char *c = note; *c; ++c)
                    if (*c == ',' || *c == '"' || *c == '\n')
                        *c = ';';
                if (r->ran)
                    fprintf(f, "%s,%d,%d,%d,%d,%s,%d,%.6f,%.6f,%.6f,%d,%.4f,%llu,%d,\n",
                            flashcl_algorithm_name((flashcl_algorithm)r->algo), r->p.batch, r->p.heads_q, r->p.seq_kv,
                            r->p.head_dim, flashcl_dtype_name(r->p.dtype), r->p.causal, r->median, r->min, r->max,
                            r->runs, r->tflops, (unsigned long long)r->extra_bytes, r->passed);
                else
                    fprintf(f, "%s,%d,%d,%d,%d,%s,%d,,,,,,,,%s\n", flashcl_algorithm_name((flashcl_algorithm)r->algo),
                            r->p.batch, r->p.heads_q, r->p.seq_kv, r->p.head_dim, flashcl_dtype_name(r->p.dtype),
                            r->p.causal, note);
            }
            close_out(f);
        }
    }
    if (plot_path) {
        /* One panel pair (time, extra memory) per head dim and mask, one line per algorithm. */
        plot_series series[64];
        int ns = 0;
        for (int di = 0; di < n_dims; ++di)
            for (int c = 0; c < 2; ++c)
                for (int a = 0; a < N_ALGOS; ++a) {
                    if (!algos[a] || ns == 64)
                        continue;
                    plot_series *ps = &series[ns];
                    memset(ps, 0, sizeof *ps);
                    snprintf(ps->panel, sizeof ps->panel, "d=%ld %s", dims[di], c ? "causal" : "non-causal");
                    snprintf(ps->name, sizeof ps->name, "%s", flashcl_algorithm_name((flashcl_algorithm)a));
                    ps->style = a;
                    for (int i = 0; i < n_shapes; ++i) {
                        const result *r = &res[i * N_ALGOS + a];
                        if (r->p.head_dim != dims[di] || r->p.causal != c || ps->n == PLOT_MAX_POINTS)
                            continue;
                        ps->x[ps->n] = r->p.seq_q;
                        ps->time_ms[ps->n] = r->ran ? r->median : NAN;
                        ps->mem_bytes[ps->n] = r->ran ? (double)(r->extra_bytes + r->io_bytes) : NAN;
                        ps->n++;
                    }
                    if (ps->n)
                        ++ns;
                }
        char title[300];
        snprintf(title, sizeof title, "flashcl bench on %s (%s), %s, %s", pr->name, pr->driver_version,
                 flashcl_dtype_name(dtype), date);
        if (plot_svg(plot_path, title, series, ns) != 0) {
            fprintf(stderr, "flashcl bench: cannot write %s\n", plot_path);
            rc = 1;
        }
    }
    free(res);
    flashcl_context_destroy(&ctx);
    return rc;
}
