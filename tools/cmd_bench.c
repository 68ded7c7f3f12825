/* SPDX-License-Identifier: MIT */
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

#define MAX_SEQS 32 /* -n's lengths */
#define MAX_DIMS 8  /* -d's head dims */
#define MAX_SHAPES (MAX_SEQS * MAX_DIMS * 2) /* every length and dim, causal and not: none can be left out */
#define N_ALGOS 3

static void usage(FILE *f)
{
    fprintf(f,
            "usage: flashcl bench [options]\n"
            "Runs flash, naive and standard attention on the same random inputs, validates each against\n"
            "the naive kernel and times it (median of profiling events after warm-up).\n"
            "  --device SEL       \"P:D\" or a name substring (default: $FLASHCL_DEVICE, a GPU, a CPU)\n"
            "  --path P           flash kernel: auto, portable, mma, decode, wgmma, mfma, wmma or dpas (see\n"
            "                     flashcl run --help)\n"
            CLI_CONFIG_HELP("      ", "                     ")
            "  --preset NAME      fa2: B*N = 16384 tokens, hidden 2048 (d=64 H=32, d=128 H=16),\n"
            "                     N = 512 ... 16384, causal and not; long: N = 32768, 65536, d=128, H=16, B=1;\n"
            "                     serving: B=4 N=4096 Hq=32 Hkv=8 d=128 fp16 causal, plain and with one\n"
            "                     feature a shape (--varlen, --paged 16, --softcap 50, --alibi, --window\n"
            "                     1024,0, --sinks 0.5, a boolean mask, key padding), d=80, d=96, d=192 over\n"
            "                     d_v=128 (H=16), chunked prefill (--seq-q 1024 over 16384 keys in\n"
            "                     pages of 16), and packed sequences over pages of 16 (--varlen --paged 16)\n"
            "  --only NAMES       the serving preset's shapes named (comma-separated): plain, varlen, paged,\n"
            "                     softcap, alibi, window, sinks, mask, key-padding, d80, d96, d192, chunked,\n"
            "                     varlen-paged\n"
            "  -n, --seq LIST     sequence lengths (seq_q = seq_kv), comma-separated, instead of a preset\n"
            "  -d, --dim LIST     head dims (default 128); heads default to 2048 / d\n"
            "  -H, --heads N      query heads; -b, --batch N (default tokens / N, at least 1)\n"
            "  --tokens T         B*N for presets and lists (default 16384), not with -b\n"
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
            "  --precision P      fp32 shapes' products: fp32 (default), tf32x3 or tf32 (see flashcl run\n"
            "                     --help)\n"
            "  --fp8 F            fp8 attention on every shape: Q, K and V as e4m3 or e5m2 bytes, O in --dtype;\n"
            "                     --descale tensor|head: their descale factors (see flashcl run --help);\n"
            "                     standard attention has none and is reported as not run\n"
            "  --sinks L          attention sinks (logit L for every query head), every shape; standard\n"
            "                     attention has none and is reported as not run\n"
            "  --alibi            ALiBi biases (slopes 2^(-8(h+1)/H)), every shape; standard attention has\n"
            "                     none and is reported as not run\n"
            "  --dtype T          f32, f16 or bf16 (default f32)\n"
            "  --algos LIST       flash,naive,standard (default all three)\n"
            "  --iters N          timed runs (default 10)\n"
            "  --warmup N         untimed runs first (default 2)\n"
            "  --max-seconds S    a budget for the whole bench, in seconds (fractions allowed; default none),\n"
            "                     counted from the first measurement (compiles, validation and timing alike):\n"
            "                     once spent, no new measurement (an algorithm on a shape) starts, and the one\n"
            "                     under way times only the runs that fit (at least one); what was left out or\n"
            "                     cut is said on stderr and in the outputs (\"not started: ...\", \"runs\")\n"
            "  --json FILE, --csv FILE, --plot FILE.svg   also write these ('-': stdout, which then holds\n"
            "                     only that format, the table going to stderr); the JSON and CSV files are\n"
            "                     rewritten after every measurement, whole (\"complete\": false until the last);\n"
            "                     --plot draws time over N a head dim and mask (not with --preset serving)\n"
            "GB/s in the table: the bytes of the caller's Q, K, V and O over the median time (for a decode\n"
            "step, nearly all of it the K/V cache read once). The JSON and CSV also hold the host's side,\n"
            "medians in microseconds: host_enqueue_us, the enqueue call alone, and host_step_us, from the\n"
            "enqueue to clFinish (what a loop that waits on each step pays), each step on an idle in-order\n"
            "queue without profiling and no event asked for, as an engine's loop runs (host_queue \"plain\";\n"
            "\"profiling\": the timed queue's, with an event, for runs over 5 ms or where no such queue could\n"
            "be made); the JSON alone, device_us (with device_us_min and _max): the device's time alone, from\n"
            "the end of a buffer fill that keeps the queue busy while the step is enqueued to the step's\n"
            "end, where the median above holds the enqueue call on an idle queue (flash steps up to 5 ms; null for\n"
            "others, where events give no times, or where the fill ended first in over half the steps);\n"
            "device_pad_bytes: that fill's size (the bytes written before each step, which may evict the\n"
            "step's inputs from the device's cache; filled up to 16 times over where the host lagged);\n"
            "device_b2b_us (and _min, _max): the time a step adds\n"
            "to a busy queue, 8 steps enqueued behind fills of that pad and run back to back, each reading\n"
            "what the one before left in the cache (a CUDA graph's replays' way: bench/anchors/\n"
            "sdpa_decode.py); null as device_us, or where over 16 fills would be needed or the fills ended\n"
            "first in over half the rounds.\n"
            "The JSON names each algorithm's kernel and its tiles: kernel, block_m, block_n, work_group,\n"
            "kv_stages and persistent (the plan's flashcl_config).\n"
            "exit status: 0 ok (a standard attention that cannot allocate is a result), 1 an error or a\n"
            "validation failure, 2 bad usage\n");
}

typedef struct result {
    flashcl_problem p;
    int algo;
    int done;           /* measured, refused or left out: in the outputs */
    int ran;            /* 0: not run (see note) */
    int error;          /* not run for an error (a bad shape, a failure); not: standard attention refusing
                           the problem's features or short of memory for its n x n scores (a result) */
    char note[200];     /* why not, or "" */
    double median, min, max, tflops;
    cli_host_times host; /* the host's side: the enqueue call, and enqueue to completion (us) */
    int runs, host_clock;
    uint64_t extra_bytes, io_bytes; /* beyond the caller's buffers; the caller's Q, K, V, O */
    char kernel[32];                /* the plan's kernel ("flash_fwd", "flash_mma", ...) */
    int32_t block_m, block_n, work_group, kv_stages; /* its tiles (flashcl_config; 0: none known) */
    int32_t persistent;                              /* flash_wgmma's persistent work-groups (0: a block each) */
    int validated, passed;
    int64_t rows_checked;
    double max_rel_error;
} result;

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
 * the shape, so that the shape's totals and its run agree. cu_q and cu_k hold batch + 1 entries. 0 where
 * a total passes 2^31-1 (cu_seqlens are int32; the entries are then incomplete), else 1. */
static int varlen_lengths(const flashcl_problem *p, int32_t *cu_q, int32_t *cu_k)
{
    hm_rng r;
    hm_rng_seed(&r, (uint64_t)p->batch * 1000003u + (uint64_t)p->seq_q * 31u + (uint64_t)p->seq_kv);
    cu_q[0] = cu_k[0] = 0;
    int64_t tq = 0, tk = 0; /* (in 64 bits: the sums of int32 lengths pass int32) */
    for (int b = 0; b < p->batch; ++b) {
        const int32_t lq = b == 0 ? p->seq_q : (p->seq_q + 1) / 2 + (int32_t)(hm_rng_uniform(&r) * (p->seq_q / 2));
        const int32_t lk = b == 0 ? p->seq_kv : (p->seq_kv + 1) / 2 + (int32_t)(hm_rng_uniform(&r) * (p->seq_kv / 2));
        tq += lq < p->seq_q ? lq : p->seq_q;
        tk += lk < p->seq_kv ? lk : p->seq_kv;
        if (tq > INT32_MAX || tk > INT32_MAX)
            return 0;
        cu_q[b + 1] = (int32_t)tq;
        cu_k[b + 1] = (int32_t)tk;
    }
    return 1;
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

/* The inputs of one shape, which its algorithms share. */
typedef struct shape_inputs {
    cl_mem b[4], alibi, sinks, lens, bt, cu[2], ks, vs; /* Q, K, V, O; ALiBi slopes, sinks; the cache's; int8 scales */
    cl_mem mask, kpm; /* the serving preset's boolean mask and key padding */
    cl_mem descale;   /* fp8 attention's descale factors (--fp8, --descale) */
    size_t sz[5];
    flashcl_tensors t;
} shape_inputs;

static void inputs_release(shape_inputs *in)
{
    cl_mem all[] = {in->b[0], in->b[1], in->b[2], in->b[3], in->alibi, in->sinks, in->lens, in->bt, in->cu[0],
                    in->cu[1], in->ks, in->vs, in->mask, in->kpm, in->descale};
    for (size_t i = 0; i < sizeof all / sizeof *all; ++i)
        if (all[i])
            clReleaseMemObject(all[i]);
    memset(in, 0, sizeof *in);
}

/* A shape's inputs, sized by `plan` (any of its algorithms' plans), filled with random normals. */
static cl_int inputs_create(flashcl_context *ctx, const flashcl_problem *p, flashcl_plan *plan, shape_inputs *in)
{
    cl_context clctx;
    cl_command_queue queue;
    flashcl_context_cl_objects(ctx, &clctx, NULL, &queue);
    memset(in, 0, sizeof *in);
    size_t *sz = in->sz;
    flashcl_plan_buffer_sizes(plan, &sz[0], &sz[1], &sz[2], &sz[3], &sz[4]);
    cl_int err = CL_SUCCESS;
    for (int i = 0; i < 4 && err == CL_SUCCESS; ++i)
        in->b[i] = clCreateBuffer(clctx, CL_MEM_READ_WRITE, sz[i], NULL, &err);
    if (err == CL_SUCCESS && p->alibi)
        in->alibi = cli_alibi_slopes(clctx, p, &err);
    if (err == CL_SUCCESS && p->sinks)
        in->sinks = cli_sinks(clctx, p, &err);
    /* (packed over a KV cache: the key lengths drawn are the cache's fill, cu_seqlens_k not passed) */
    int32_t *cu = p->varlen ? malloc(2 * ((size_t)p->batch + 1) * sizeof *cu) : NULL;
    if (p->varlen && err == CL_SUCCESS) {
        if (cu) {
            varlen_lengths(p, cu, cu + p->batch + 1);
            for (int s = 0; s < (p->kv_cache ? 1 : 2) && err == CL_SUCCESS; ++s)
                in->cu[s] = clCreateBuffer(clctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                           ((size_t)p->batch + 1) * sizeof *cu, cu + s * (p->batch + 1), &err);
        } else {
            err = CL_OUT_OF_HOST_MEMORY;
        }
    }
    /* --paged: a full cache (every sequence's N keys) in pages, the block table a fixed shuffle of
     * the pool (e -> 7e + 1 mod the page count, which 7 does not divide: a permutation). */
    if (p->kv_cache && err == CL_SUCCESS) {
        const int32_t max_pages = p->page_size ? (p->seq_kv + p->page_size - 1) / p->page_size : 0;
        int32_t *lens = malloc((size_t)p->batch * sizeof *lens);
        int32_t *table = malloc((size_t)p->batch * max_pages * sizeof *table + 1);
        if (lens && table) {
            for (int i = 0; i < p->batch; ++i)
                lens[i] = p->varlen ? cu[p->batch + 2 + i] - cu[p->batch + 1 + i] : p->seq_kv;
            for (int e = 0; e < p->batch * max_pages; ++e)
                table[e] = (int32_t)(((int64_t)e * 7 + 1) % p->num_pages);
            in->lens = clCreateBuffer(clctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, (size_t)p->batch * sizeof *lens,
                                      lens, &err);
            if (err == CL_SUCCESS && p->page_size)
                in->bt = clCreateBuffer(clctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                        (size_t)p->batch * max_pages * sizeof *table, table, &err);
        } else {
            err = CL_OUT_OF_HOST_MEMORY;
        }
        free(lens);
        free(table);
    }
    free(cu);
    hm_rng rng;
    hm_rng_seed(&rng, (uint64_t)p->seq_q * 31 + p->head_dim);
    /* The serving preset's masks: one boolean (seq_q, seq_kv) mask for every batch and head (a key removed
     * with probability 1/16), and key padding of each sequence's last eighth of keys. */
    if (p->attn_mask && err == CL_SUCCESS) {
        const size_t n = (size_t)p->seq_q * p->seq_kv;
        uint8_t *m = malloc(n);
        if (m) {
            for (size_t i = 0; i < n; ++i)
                m[i] = hm_rng_uniform(&rng) >= 1.0 / 16;
            in->mask = clCreateBuffer(clctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n, m, &err);
            free(m);
        } else {
            err = CL_OUT_OF_HOST_MEMORY;
        }
    }
    if (p->key_padding && err == CL_SUCCESS) {
        const size_t n = (size_t)p->batch * p->seq_kv;
        uint8_t *m = malloc(n);
        if (m) {
            for (size_t i = 0; i < n; ++i)
                m[i] = (int64_t)(i % (size_t)p->seq_kv) >= p->seq_kv - p->seq_kv / 8;
            in->kpm = clCreateBuffer(clctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n, m, &err);
            free(m);
        } else {
            err = CL_OUT_OF_HOST_MEMORY;
        }
    }
    if (p->kv_format == FLASHCL_KV_INT8 && err == CL_SUCCESS) {
        in->ks = cli_kv_scales(clctx, p, &rng, &err);
        if (err == CL_SUCCESS)
            in->vs = cli_kv_scales(clctx, p, &rng, &err);
    }
    if (p->fp8_descale && err == CL_SUCCESS)
        in->descale = cli_descale(clctx, p, &rng, &err);
    for (int i = 0; i < 3 && err == CL_SUCCESS; ++i) {
        if (p->qkv_format || (i > 0 && p->kv_format)) /* fp8 attention, a quantized cache: a byte an element */
            fill_kv_buffer(queue, in->b[i], sz[i], (flashcl_kv_format)(p->qkv_format ? p->qkv_format : p->kv_format),
                           &rng);
        else /* (K and V in their own dtype: --kv-dtype f32|f16|bf16) */
            fill_buffer(queue, in->b[i], sz[i], i && p->kv_dtype ? (flashcl_dtype)(p->kv_dtype - 1) : p->dtype, &rng);
    }
    in->t = (flashcl_tensors){.q = in->b[0], .k = in->b[1], .v = in->b[2], .o = in->b[3], .alibi_slopes = in->alibi,
                              .cache_seqlens = in->lens, .block_table = in->bt, .cu_seqlens_q = in->cu[0],
                              .cu_seqlens_k = in->cu[1], .k_scale = in->ks, .v_scale = in->vs, .sinks = in->sinks,
                              .mask = in->mask, .key_padding = in->kpm, .descale = in->descale};
    if (err != CL_SUCCESS)
        inputs_release(in);
    return err;
}

/* --algos LIST: a comma-separated subset of flash, naive, standard; anything else is a usage error. */
static int parse_algos(const char *val, int algos[N_ALGOS])
{
    static const char *const names[N_ALGOS] = {"flash", "naive", "standard"};
    memset(algos, 0, N_ALGOS * sizeof *algos);
    int any = 0;
    for (const char *p = val;;) {
        const size_t n = strcspn(p, ",");
        if (!n) { /* (as cli_int_list: "flash," is no list) */
            fprintf(stderr, "flashcl bench: --algos %s: an empty value\n", val);
            return 0;
        }
        int known = 0;
        for (int a = 0; a < N_ALGOS; ++a)
            if (n == strlen(names[a]) && !strncmp(p, names[a], n))
                known = algos[a] = any = 1;
        if (!known) {
            fprintf(stderr, "flashcl bench: --algos %s: '%.*s' is not flash, naive or standard\n", val, (int)n, p);
            return 0;
        }
        if (!p[n])
            return any;
        p += n + 1;
    }
}

static const char *mask_name(const flashcl_problem *p)
{
    return p->causal ? "causal" : "full";
}

/* What the options ask for. */
typedef struct bench_opts {
    const char *device, *preset, *json_path, *csv_path, *plot_path;
    const char *only; /* --only: the serving preset's shapes to run (NULL: all) */
    long seqs[MAX_SEQS], dims[MAX_DIMS], heads, batch, tokens, max_n, iters, warmup;
    int n_seqs, n_dims, causal_mode; /* 0 full, 1 causal, 2 both */
    int top_left, path;              /* --path: flash kernel (-1: $FLASHCL_PATH) */
    int has_config;                  /* --config: the flash tiles forced (config) */
    flashcl_config config;
    long decode_q;                   /* --decode / --seq-q: queries per step against N keys */
    long heads_kv, dim_v, paged;     /* --heads-kv (GQA), --dim-v, --paged PAGE (a full paged cache) */
    flashcl_problem kv_fmt;          /* --kv-dtype: kv_dtype, kv_format and kv_scale_dtype */
    flashcl_problem masks;           /* --window, --softcap, --alibi, --sinks, --kv-splits: every shape */
    int varlen;                      /* --varlen: packed sequences of lengths N/2 .. N */
    double max_seconds;              /* 0: no budget */
    int algos[N_ALGOS];
    flashcl_dtype dtype;
} bench_opts;

static int serving_only(const char *list, int k);

/* One bench: its options, device, results (n_shapes x N_ALGOS), budget and where the outputs stand. */
typedef struct bench_run {
    const bench_opts *o;
    const flashcl_device_profile *pr;
    result *res;
    int n_res;
    struct timespec start;  /* when the first measurement started */
    int not_started, cut;   /* measurements the budget left out, and those it gave fewer timed runs */
    int complete;           /* every measurement done (or left out): the outputs are final */
    char date[32], command[1024];
} bench_run;

static double elapsed_s(const bench_run *run)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - run->start.tv_sec) + (now.tv_nsec - run->start.tv_nsec) * 1e-9;
}

/* Whether the budget is spent; then r is left out (a result that says so) and 1 returned. */
static int budget_spent(bench_run *run, result *r)
{
    if (!(run->o->max_seconds > 0.0) || elapsed_s(run) < run->o->max_seconds)
        return 0;
    snprintf(r->note, sizeof r->note, "not started: the --max-seconds %g budget was spent", run->o->max_seconds);
    r->done = 1;
    ++run->not_started;
    return 1;
}

static int save_outputs(bench_run *run);

/* What k timed runs cost, milliseconds: each per_run, and the first CLI_B2B_ROUNDS a round of steps back
 * to back (round_ms, 0 where there are none) */
static double runs_ms(long k, double per_run, double round_ms)
{
    return (double)k * per_run + (double)(k < CLI_B2B_ROUNDS ? k : CLI_B2B_ROUNDS) * round_ms;
}

/* One algorithm on a shape's inputs: the validated run, a timed probe, then as many of the asked-for
 * runs as the budget leaves room for. */
static void measure(bench_run *run, flashcl_context *ctx, flashcl_plan *plan, const flashcl_tensors *t, result *r)
{
    const int a = r->algo;
    /* Validated run: the naive kernel recomputes a sample of rows and compares (not for the naive
     * algorithm itself: it would be compared with itself; its run here only builds it). */
    flashcl_context_set_validation(ctx, a != FLASHCL_ALGO_NAIVE);
    flashcl_status st = flashcl_plan_enqueue_tensors(plan, t, 0, NULL, NULL);
    flashcl_context_set_validation(ctx, 0);
    flashcl_validation rep;
    flashcl_plan_last_validation(plan, &rep);
    if (st && st != FLASHCL_VALIDATION_FAILED) {
        snprintf(r->note, sizeof r->note, "%s: %s", flashcl_status_name(st), flashcl_context_last_error(ctx));
        r->error = 1;
        return;
    }
    r->validated = rep.ran;
    r->passed = a == FLASHCL_ALGO_NAIVE ? st == FLASHCL_SUCCESS : rep.passed;
    r->rows_checked = rep.rows_checked;
    r->max_rel_error = rep.max_rel_error;
    double med = 0, mn = 0, mx = 0;
    int host_clock = 0;
    st = cli_time_plan(plan, t, 0, 1, &med, &mn, &mx, &host_clock, &r->host);
    long n = run->o->iters, w = run->o->warmup;
    const double left_ms = run->o->max_seconds > 0.0 ? (run->o->max_seconds - elapsed_s(run)) * 1e3 : INFINITY;
    /* (the probe says how long a run takes; runs of up to 5 ms go twice, the second time for the host's side,
     * and a flash plan's a third time for the device's alone, each step behind a fill of three profiled
     * enqueue calls and 20 us, up to twice that once sized, and up to twice as many steps where the fill
     * ended first, then one round of CLI_B2B_STEPS steps back to back a timed run, up to CLI_B2B_ROUNDS,
     * each behind fills lasting as many such calls and 20 us (up to twice that once rounded to whole
     * fills) and tried up to twice: cli_time_plan. The profiled call counted as three plain ones, the
     * probe's figure.) */
    const double enq_us = r->host.enqueue_us > 0 ? r->host.enqueue_us : 0.0;
    const double pad_ms = 2e-3 * (9.0 * enq_us + 20.0);
    const int flash_short = med <= 5.0 && a == FLASHCL_ALGO_FLASH;
    const double per_run = med > 5.0 ? med : flash_short ? 2.0 * med + 2.0 * (med + pad_ms) : 2.0 * med;
    const double round_ms =
        flash_short ? 2.0 * (2e-3 * (3.0 * CLI_B2B_STEPS * enq_us + 20.0) + CLI_B2B_STEPS * med) : 0.0;
    if (st == FLASHCL_SUCCESS && med > 0 && left_ms < runs_ms(n + w, per_run, round_ms)) {
        long fit = 0;
        while (runs_ms(fit + 1, per_run, round_ms) <= left_ms)
            ++fit;
        w = fit > 3 ? 1 : 0;
        n = fit - w < run->o->iters ? fit - w : run->o->iters;
        if ((n > 1 ? n : 1) < run->o->iters) { /* (else only the warm-up was cut: no fewer timed runs) */
            snprintf(r->note, sizeof r->note, "timed runs cut from %ld to %ld by --max-seconds", run->o->iters,
                     n > 1 ? n : 1);
            ++run->cut;
        }
    }
    r->median = med; /* (the probe's, if no more runs fit) */
    r->min = mn;
    r->max = mx;
    r->host_clock = host_clock;
    if (st == FLASHCL_SUCCESS && n >= 1)
        st = cli_time_plan(plan, t, w, n, &r->median, &r->min, &r->max, &r->host_clock, &r->host);
    if (st) {
        snprintf(r->note, sizeof r->note, "timing: %s: %s", flashcl_status_name(st), flashcl_context_last_error(ctx));
        r->error = 1;
        return;
    }
    r->ran = 1;
    r->runs = (int)(n >= 1 ? n : 1);
    r->tflops = shape_flops(&r->p) / (r->median * 1e-3) / 1e12;
}

/* Every asked-for algorithm on one shape, the outputs saved after each. */
static void run_shape(bench_run *run, flashcl_context *ctx, const flashcl_problem *p, result *res)
{
    flashcl_plan *plans[N_ALGOS] = {0};
    for (int a = 0; a < N_ALGOS; ++a) {
        result *r = &res[a];
        memset(r, 0, sizeof *r);
        r->p = *p;
        r->algo = a;
        r->done = 1;
        if (!run->o->algos[a]) {
            snprintf(r->note, sizeof r->note, "not asked for");
        } else if (!flashcl_algorithm_available((flashcl_algorithm)a)) {
            snprintf(r->note, sizeof r->note, "not available: needs CLBlast (built without it, or not loadable)");
        } else if (!budget_spent(run, r)) {
            const flashcl_status st = flashcl_plan_create_algo(ctx, p, (flashcl_algorithm)a, &plans[a]);
            r->done = st != FLASHCL_SUCCESS;
            if (st) {
                snprintf(r->note, sizeof r->note, "%s: %s", flashcl_status_name(st), flashcl_context_last_error(ctx));
                r->error = !(a == FLASHCL_ALGO_STANDARD && (st == FLASHCL_UNSUPPORTED || st == FLASHCL_OUT_OF_DEVICE_MEMORY));
                continue;
            }
            /* (before any run: a split-KV plan's scratch, which its first run allocates, counted too) */
            r->extra_bytes = flashcl_plan_extra_device_bytes(plans[a]) + flashcl_plan_workspace_bytes(plans[a]);
            flashcl_config cfg;
            if (flashcl_plan_config(plans[a], &cfg) == FLASHCL_SUCCESS) {
                snprintf(r->kernel, sizeof r->kernel, "%s", cfg.kernel_name);
                r->block_m = cfg.block_m, r->block_n = cfg.block_n, r->kv_stages = cfg.kv_stages;
                r->work_group = (int32_t)cfg.work_group_size, r->persistent = cfg.persistent;
            }
        }
    }
    flashcl_plan *any = plans[0] ? plans[0] : plans[1] ? plans[1] : plans[2];
    shape_inputs in;
    const cl_int err = any ? inputs_create(ctx, p, any, &in) : CL_SUCCESS;
    const uint64_t scale_bytes = 2 * (uint64_t)cli_kv_scale_count(p) * flashcl_dtype_size(p->kv_scale_dtype);
    for (int a = 0; a < N_ALGOS; ++a) {
        result *r = &res[a];
        if (!plans[a])
            continue;
        if (err != CL_SUCCESS) {
            snprintf(r->note, sizeof r->note, "could not allocate the inputs (OpenCL error %d)", (int)err);
            r->error = 1;
        } else { /* (its plan made, the measurement is under way: the budget only cuts its timed runs) */
            r->io_bytes = (uint64_t)in.sz[0] + in.sz[1] + in.sz[2] + in.sz[3] + scale_bytes;
            measure(run, ctx, plans[a], &in.t, r);
        }
        r->done = 1;
        flashcl_plan_destroy(&plans[a]);
        save_outputs(run); /* (a file that cannot be written is said now, and counted by the last save) */
    }
    if (any && err == CL_SUCCESS)
        inputs_release(&in);
}

/* ------------------------------------------------------------------------------------------------ */
/* Outputs. The JSON and CSV files are rewritten whole after every measurement (cli_write_file: a new
 * file renamed over the old), so that a bench that is stopped leaves every result it had; the JSON says
 * "complete": false until the last. "-" (stdout) is written once, at the end. */

static void json_number_field(FILE *f, const char *name, double x)
{
    fprintf(f, "\"%s\": ", name);
    cli_json_number(f, x);
    fputs(", ", f);
}

static void json_result(FILE *f, const result *r)
{
    /* "seq" is N: the keys (the queries too, except for --decode / --seq-q) */
    fprintf(f, "{\"algo\": \"%s\", \"batch\": %d, \"heads\": %d, \"seq\": %d, \"head_dim\": %d, \"dtype\": \"%s\", "
               "\"causal\": %s, ",
            flashcl_algorithm_name((flashcl_algorithm)r->algo), r->p.batch, r->p.heads_q, r->p.seq_kv, r->p.head_dim,
            flashcl_dtype_name(r->p.dtype), r->p.causal ? "true" : "false");
    json_number_field(f, "flops", shape_flops(&r->p));
    fprintf(f, "\"ran\": %s, \"seq_q\": %d, \"heads_kv\": %d, ", r->ran ? "true" : "false", r->p.seq_q, r->p.heads_kv);
    if (r->p.head_dim_v)
        fprintf(f, "\"head_dim_v\": %d, ", r->p.head_dim_v);
    if (r->p.window)
        fprintf(f, "\"window_left\": %d, \"window_right\": %d, ", r->p.window_left, r->p.window_right);
    if (r->p.softcap > 0.0f)
        json_number_field(f, "softcap", (double)r->p.softcap);
    if (r->p.page_size)
        fprintf(f, "\"page_size\": %d, ", r->p.page_size);
    if (r->p.kv_splits)
        fprintf(f, "\"kv_splits\": %d, ", r->p.kv_splits);
    if (r->p.kv_dtype && r->p.kv_dtype - 1 != (int)r->p.dtype)
        fprintf(f, "\"kv_dtype\": \"%s\", ", flashcl_dtype_name((flashcl_dtype)(r->p.kv_dtype - 1)));
    if (r->p.precision)
        fprintf(f, "\"precision\": \"%s\", ", flashcl_precision_name((flashcl_precision)r->p.precision));
    if (r->p.qkv_format)
        fprintf(f, "\"qkv_format\": \"%s\", \"fp8_descale\": \"%s\", ",
                flashcl_kv_format_name((flashcl_kv_format)r->p.qkv_format),
                r->p.fp8_descale == FLASHCL_DESCALE_HEAD ? "head" : r->p.fp8_descale ? "tensor" : "none");
    if (r->p.kv_format)
        fprintf(f, "\"kv_format\": \"%s%s\", ", flashcl_kv_format_name((flashcl_kv_format)r->p.kv_format),
                r->p.kv_format == FLASHCL_KV_INT8 && r->p.kv_scale_dtype == FLASHCL_DTYPE_F16 ? "-f16" : "");
    if (r->p.alibi)
        fprintf(f, "\"alibi\": %d, ", r->p.alibi);
    if (r->p.sinks)
        json_number_field(f, "sinks", cli_sink_logit);
    if (r->p.attn_mask)
        fprintf(f, "\"mask\": \"%s\", ", r->p.mask_dtype == FLASHCL_MASK_BOOL ? "bool" : "additive");
    if (r->p.key_padding)
        fprintf(f, "\"key_padding\": true, ");
    if (r->p.varlen)
        fprintf(f, "\"varlen\": true, \"total_q\": %lld, \"total_kv\": %lld, ", (long long)r->p.total_q,
                (long long)r->p.total_kv);
    if (r->ran) {
        if (r->kernel[0])
            fprintf(f,
                    "\"kernel\": \"%s\", \"block_m\": %d, \"block_n\": %d, \"work_group\": %d, \"kv_stages\": %d, "
                    "\"persistent\": %d, ",
                    r->kernel, (int)r->block_m, (int)r->block_n, (int)r->work_group, (int)r->kv_stages,
                    (int)r->persistent);
        json_number_field(f, "median_ms", r->median);
        json_number_field(f, "min_ms", r->min);
        json_number_field(f, "max_ms", r->max);
        fprintf(f, "\"runs\": %d, \"clock\": \"%s\", ", r->runs, r->host_clock ? "host" : "events");
        json_number_field(f, "host_enqueue_us", r->host.enqueue_us);
        json_number_field(f, "host_step_us", r->host.step_us);
        fprintf(f, "\"host_queue\": \"%s\", ", r->host.plain_queue ? "plain" : "profiling");
        json_number_field(f, "device_us", r->host.device_us);
        json_number_field(f, "device_us_min", r->host.device_us_min);
        json_number_field(f, "device_us_max", r->host.device_us_max);
        json_number_field(f, "device_b2b_us", r->host.device_b2b_us);
        json_number_field(f, "device_b2b_us_min", r->host.device_b2b_us_min);
        json_number_field(f, "device_b2b_us_max", r->host.device_b2b_us_max);
        json_number_field(f, "device_pad_bytes", r->host.device_pad_bytes > 0 ? r->host.device_pad_bytes : NAN);
        json_number_field(f, "tflops", r->tflops);
        json_number_field(f, "gb_per_s", (double)r->io_bytes / (r->median * 1e6));
        fprintf(f, "\"extra_bytes\": %llu, \"io_bytes\": %llu, \"validated\": %s, \"passed\": %s, \"rows_checked\": %lld, ",
                (unsigned long long)r->extra_bytes, (unsigned long long)r->io_bytes, r->validated ? "true" : "false",
                r->passed ? "true" : "false", (long long)r->rows_checked);
        json_number_field(f, "max_rel_error", r->max_rel_error);
    }
    fprintf(f, "\"note\": ");
    cli_json_string(f, r->note);
    fprintf(f, "}");
}

static void write_json(FILE *f, void *arg)
{
    const bench_run *run = arg;
    const flashcl_device_profile *pr = run->pr;
    fprintf(f, "{\"date\": \"%s\", \"device\": ", run->date);
    cli_json_string(f, pr->name);
    fprintf(f, ", \"platform\": ");
    cli_json_string(f, pr->platform_name);
    fprintf(f, ", \"driver\": ");
    cli_json_string(f, pr->driver_version);
    fprintf(f, ", \"flashcl\": \"%s\", \"command\": ", flashcl_version_string());
    cli_json_string(f, run->command);
    fprintf(f, ",\n \"complete\": %s, \"max_seconds\": ", run->complete ? "true" : "false");
    cli_json_number(f, run->o->max_seconds > 0.0 ? run->o->max_seconds : NAN);
    fprintf(f, ", \"not_started\": %d, \"runs_cut\": %d,\n \"results\": [", run->not_started, run->cut);
    const char *sep = "";
    for (int i = 0; i < run->n_res; ++i)
        if (run->res[i].done && run->o->algos[run->res[i].algo]) {
            fprintf(f, "%s\n  ", sep);
            json_result(f, &run->res[i]);
            sep = ",";
        }
    fprintf(f, "\n]}\n");
}

static void write_csv(FILE *f, void *arg)
{
    const bench_run *run = arg;
    fprintf(f, "algo,batch,heads,seq,head_dim,dtype,causal,median_ms,min_ms,max_ms,runs,tflops,extra_bytes,passed,"
               "host_enqueue_us,host_step_us,note\n");
    for (int i = 0; i < run->n_res; ++i) {
        const result *r = &run->res[i];
        if (!r->done || !run->o->algos[r->algo])
            continue;
        char note[200];
        snprintf(note, sizeof note, "%s", r->note);
        for (char *c = note; *c; ++c)
            if (*c == ',' || *c == '"' || *c == '\n')
                *c = ';';
        fprintf(f, "%s,%d,%d,%d,%d,%s,%d,", flashcl_algorithm_name((flashcl_algorithm)r->algo), r->p.batch,
                r->p.heads_q, r->p.seq_kv, r->p.head_dim, flashcl_dtype_name(r->p.dtype), r->p.causal);
        if (r->ran)
            fprintf(f, "%.17g,%.17g,%.17g,%d,%.17g,%llu,%d,%.17g,%.17g,%s\n", r->median, r->min, r->max, r->runs,
                    r->tflops, (unsigned long long)r->extra_bytes, r->passed, r->host.enqueue_us, r->host.step_us, note);
        else
            fprintf(f, ",,,,,,,,,%s\n", note);
    }
}

static int is_stdout(const char *path)
{
    return path && !strcmp(path, "-");
}

/* The JSON and CSV files as they stand; stdout only once complete. 0, or -1 after a message. */
static int save_outputs(bench_run *run)
{
    const char *paths[2] = {run->o->json_path, run->o->csv_path};
    void (*writers[2])(FILE *, void *) = {write_json, write_csv};
    int rc = 0;
    for (int k = 0; k < 2; ++k) {
        if (!paths[k] || (is_stdout(paths[k]) && !run->complete))
            continue;
        if (is_stdout(paths[k]))
            writers[k](stdout, run);
        else
            rc |= cli_write_file("bench", paths[k], writers[k], run);
    }
    return rc;
}

static void print_table(FILE *out, const bench_run *run)
{
    const flashcl_device_profile *pr = run->pr;
    fprintf(out, "flashcl bench: %s / %s, driver %s; medians of profiling events, warm-up excluded\n",
            pr->platform_name, pr->name, pr->driver_version);
    /* Units that carry information: GFLOP/s and MB/s where every rate would print as 0 (a CPU). */
    int giga = 1, mega = 1;
    for (int i = 0; i < run->n_res; ++i)
        if (run->res[i].ran) {
            giga &= run->res[i].tflops < 0.1;
            mega &= (double)run->res[i].io_bytes / (run->res[i].median * 1e6) < 1.0;
        }
    const double rate_scale = giga ? 1e3 : 1.0, bytes_scale = mega ? 1e3 : 1.0;
    fprintf(out, "%-5s %-4s %-6s %-4s %-6s | %-9s %10s %21s %8s %7s %12s %-10s | %8s %8s\n", "B", "H", "N", "d", "mask",
            "algo", "median ms", "spread (min-max) ms", giga ? "GFLOP/s" : "TFLOP/s", mega ? "MB/s" : "GB/s",
            "extra MiB", "validated", "vs std", "vs naive");
    for (int i = 0; i < run->n_res; i += N_ALGOS) {
        const result *row = &run->res[i];
        for (int a = 0; a < N_ALGOS; ++a) {
            const result *r = &row[a];
            if (!run->o->algos[a])
                continue;
            fprintf(out, "%-5d %-4d %-6d %-4d %-6s | %-9s ", r->p.batch, r->p.heads_q, r->p.seq_kv, r->p.head_dim,
                    mask_name(&r->p),
                    !strcmp(r->kernel, "flash_mma") ? "flash-mma" : flashcl_algorithm_name((flashcl_algorithm)a));
            if (!r->ran) {
                fprintf(out, "%s\n", r->note);
                continue;
            }
            char spread[32], vs_std[16] = "", vs_naive[16] = "";
            snprintf(spread, sizeof spread, "%.3f-%.3f", r->min, r->max);
            if (a == FLASHCL_ALGO_FLASH && row[2].ran)
                snprintf(vs_std, sizeof vs_std, "%.2fx", row[2].median / r->median);
            if (a == FLASHCL_ALGO_FLASH && row[1].ran)
                snprintf(vs_naive, sizeof vs_naive, "%.2fx", row[1].median / r->median);
            fprintf(out, "%10.3f %21s %8.2f %7.0f %12.1f %-10s | %8s %8s\n", r->median, spread, r->tflops * rate_scale,
                    (double)r->io_bytes / (r->median * 1e6) * bytes_scale, (double)r->extra_bytes / 1048576.0,
                    !r->validated && r->passed ? "validator" : r->passed ? "pass" : "FAIL", vs_std, vs_naive);
        }
    }
}

static int write_plot(const bench_run *run)
{
    /* One panel pair (time, extra memory) per head dim and mask, one line per algorithm. */
    const bench_opts *o = run->o;
    plot_series series[64];
    int ns = 0;
    for (int di = 0; di < o->n_dims; ++di)
        for (int c = 0; c < 2; ++c)
            for (int a = 0; a < N_ALGOS; ++a) {
                if (!o->algos[a] || ns == 64)
                    continue;
                plot_series *ps = &series[ns];
                memset(ps, 0, sizeof *ps);
                snprintf(ps->panel, sizeof ps->panel, "d=%ld %s", o->dims[di], c ? "causal" : "non-causal");
                snprintf(ps->name, sizeof ps->name, "%s", flashcl_algorithm_name((flashcl_algorithm)a));
                ps->style = a;
                for (int i = a; i < run->n_res; i += N_ALGOS) {
                    const result *r = &run->res[i];
                    if (r->p.head_dim != o->dims[di] || r->p.causal != c || ps->n == PLOT_MAX_POINTS)
                        continue;
                    ps->x[ps->n] = o->decode_q ? r->p.seq_kv : r->p.seq_q; /* (N: decode's keys, as the table's) */
                    ps->time_ms[ps->n] = r->ran ? r->median : NAN;
                    ps->mem_bytes[ps->n] = r->ran ? (double)(r->extra_bytes + r->io_bytes) : NAN;
                    ps->n++;
                }
                if (ps->n)
                    ++ns;
            }
    char title[300];
    snprintf(title, sizeof title, "flashcl bench on %s (%s), %s, %s", run->pr->name, run->pr->driver_version,
             flashcl_dtype_name(o->dtype), run->date);
    if (plot_svg(o->plot_path, title, series, ns) != 0) {
        fprintf(stderr, "flashcl bench: cannot write %s\n", o->plot_path);
        return 1;
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------------ */
/* Options. */

enum {
    OPT_TOKENS = CLI_OPT_BASE, OPT_MAX_N, OPT_ITERS, OPT_WARMUP, OPT_PATH, OPT_DEVICE, OPT_PRESET, OPT_ONLY, OPT_MAX_SECONDS,
    OPT_DTYPE, OPT_ALGOS, OPT_CAUSAL, OPT_TOP_LEFT, OPT_DIM_V, OPT_HEADS_KV, OPT_PAGED, OPT_KV_DTYPE, OPT_VARLEN,
    OPT_DECODE, OPT_SEQ_Q, OPT_BOTH, OPT_JSON, OPT_CSV, OPT_PLOT
};

static const struct option longopts[] = {
    {"heads", required_argument, NULL, 'H'}, {"batch", required_argument, NULL, 'b'},
    {"seq", required_argument, NULL, 'n'}, {"dim", required_argument, NULL, 'd'},
    {"tokens", required_argument, NULL, OPT_TOKENS}, {"max-n", required_argument, NULL, OPT_MAX_N},
    {"iters", required_argument, NULL, OPT_ITERS}, {"warmup", required_argument, NULL, OPT_WARMUP},
    {"path", required_argument, NULL, OPT_PATH}, {"device", required_argument, NULL, OPT_DEVICE},
    {"preset", required_argument, NULL, OPT_PRESET}, {"only", required_argument, NULL, OPT_ONLY}, {"max-seconds", required_argument, NULL, OPT_MAX_SECONDS},
    {"dtype", required_argument, NULL, OPT_DTYPE}, {"algos", required_argument, NULL, OPT_ALGOS},
    {"causal", no_argument, NULL, OPT_CAUSAL}, {"both", no_argument, NULL, OPT_BOTH},
    {"top-left", no_argument, NULL, OPT_TOP_LEFT}, {"dim-v", required_argument, NULL, OPT_DIM_V},
    {"heads-kv", required_argument, NULL, OPT_HEADS_KV}, {"paged", required_argument, NULL, OPT_PAGED},
    {"kv-dtype", required_argument, NULL, OPT_KV_DTYPE}, {"varlen", no_argument, NULL, OPT_VARLEN},
    {"decode", no_argument, NULL, OPT_DECODE}, {"seq-q", required_argument, NULL, OPT_SEQ_Q},
    {"json", required_argument, NULL, OPT_JSON}, {"csv", required_argument, NULL, OPT_CSV},
    {"plot", required_argument, NULL, OPT_PLOT}, {"help", no_argument, NULL, 'h'},
    CLI_MASK_LONGOPTS, CLI_CONFIG_LONGOPT, {NULL, 0, NULL, 0}};

/* One option's value into *o; 0 after a message on a bad value. */
static int parse_value(int c, const char *val, bench_opts *o)
{
    const char *name = cli_option_name(longopts, c);
    switch (c) {
    case 'H': return cli_int(name, val, 1, 1L << 20, &o->heads);
    case 'b': return cli_int(name, val, 1, 1L << 20, &o->batch);
    case OPT_TOKENS: return cli_int(name, val, 1, 1L << 30, &o->tokens);
    case OPT_MAX_N: return cli_int(name, val, 1, 1L << 30, &o->max_n);
    case OPT_ITERS: return cli_int(name, val, 1, 100000, &o->iters);
    case OPT_WARMUP: return cli_int(name, val, 0, 100000, &o->warmup);
    case OPT_DIM_V: return cli_int(name, val, 1, 4096, &o->dim_v);
    case OPT_HEADS_KV: return cli_int(name, val, 1, 1 << 20, &o->heads_kv);
    case OPT_SEQ_Q: return cli_int(name, val, 1, 1 << 20, &o->decode_q);
    case 'n': return cli_int_list("bench", name, val, 1, 1L << 30, o->seqs, MAX_SEQS, &o->n_seqs);
    case 'd': return cli_int_list("bench", name, val, 8, 256, o->dims, MAX_DIMS, &o->n_dims);
    case OPT_MAX_SECONDS: return cli_seconds(name, val, &o->max_seconds);
    case OPT_DTYPE: return cli_dtype(val, &o->dtype);
    case OPT_ALGOS: return parse_algos(val, o->algos);
    case OPT_KV_DTYPE: return cli_kv_format(val, &o->kv_fmt);
    case CLI_OPT_CONFIG: return (o->has_config = cli_config("bench", val, &o->config));
    case OPT_PAGED:
        if (!cli_int(name, val, 16, 1 << 20, &o->paged))
            return 0;
        if (o->paged % 16)
            fprintf(stderr, "flashcl bench: --paged %ld: the page size must be a multiple of 16\n", o->paged);
        return o->paged % 16 == 0;
    case OPT_PATH: {
        flashcl_path fp;
        if (flashcl_path_parse(val, &fp) != FLASHCL_SUCCESS) {
            fprintf(stderr, "flashcl bench: --path %s: expected auto, portable, mma, decode, wgmma, mfma, wmma or dpas\n", val);
            return 0;
        }
        o->path = (int)fp;
        return 1;
    }
    case OPT_ONLY:
        o->only = val;
        return serving_only(val, -1);
    case OPT_PRESET:
        o->preset = val;
        if (strcmp(val, "fa2") && strcmp(val, "long") && strcmp(val, "serving"))
            fprintf(stderr, "flashcl bench: --preset %s: expected fa2, long or serving\n", val);
        return !strcmp(val, "fa2") || !strcmp(val, "long") || !strcmp(val, "serving");
    }
    return cli_mask_option("bench", c, val, &o->masks);
}

/* Whether `path` (NULL: none; "-": stdout) can be written; says why not on stderr. */
static int writable(const char *path)
{
    const char *why = path && !is_stdout(path) ? cli_unwritable(path) : NULL;
    if (why)
        fprintf(stderr, "flashcl bench: cannot write %s: %s\n", path, why);
    return why == NULL;
}

/* Options that contradict each other, and outputs that would overwrite each other: refused (exit 2). */
static int check_options(const char *seen, const bench_opts *o)
{
    if (seen[OPT_CAUSAL] && seen[OPT_BOTH])
        return cli_conflict("bench", "--causal", "--both", "--both runs causal and non-causal");
    if (o->preset && (o->n_seqs || seen['d'])) {
        fprintf(stderr, "flashcl bench: --preset %s sets the sequence lengths and head dims: drop %s, or the preset\n",
                o->preset, o->n_seqs ? "-n" : "-d");
        return 2;
    }
    if (o->preset && !strcmp(o->preset, "fa2") && (seen[OPT_CAUSAL] || seen[OPT_BOTH]))
        return cli_conflict("bench", "--preset fa2", seen[OPT_CAUSAL] ? "--causal" : "--both",
                            "the preset runs causal and non-causal");
    if (o->preset && !strcmp(o->preset, "serving")) { /* (its shapes set every one of these) */
        static const struct {
            int opt;
            const char *name;
        } fixed[] = {{'H', "-H"}, {'b', "-b"}, {OPT_HEADS_KV, "--heads-kv"}, {OPT_DIM_V, "--dim-v"},
                     {OPT_TOKENS, "--tokens"}, {OPT_DTYPE, "--dtype"}, {OPT_CAUSAL, "--causal"}, {OPT_BOTH, "--both"},
                     {OPT_VARLEN, "--varlen"}, {OPT_PAGED, "--paged"}, {OPT_DECODE, "--decode"},
                     {OPT_SEQ_Q, "--seq-q"}, {OPT_KV_DTYPE, "--kv-dtype"}, {CLI_OPT_WINDOW, "--window"},
                     {CLI_OPT_SOFTCAP, "--softcap"}, {CLI_OPT_ALIBI, "--alibi"}, {CLI_OPT_SINKS, "--sinks"}};
        for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; ++i)
            if (seen[fixed[i].opt])
                return cli_conflict("bench", "--preset serving", fixed[i].name,
                                    "the preset sets the shape and each shape's feature");
    }
    if (o->only && !(o->preset && !strcmp(o->preset, "serving"))) {
        fprintf(stderr, "flashcl bench: --only names shapes of --preset serving: add it, or drop --only\n");
        return 2;
    }
    if (seen[OPT_TOKENS] && seen['b']) /* (B = tokens / N only where -b is not given: one would be dropped) */
        return cli_conflict("bench", "--tokens", "--batch (-b)", "-b sets the batch that --tokens would derive");
    if (o->preset && !strcmp(o->preset, "long") && seen[OPT_TOKENS])
        return cli_conflict("bench", "--preset long", "--tokens", "the preset runs one sequence a batch (B = 1)");
    if (o->preset && !strcmp(o->preset, "serving") && o->plot_path) /* (the plot's lines run over N, its panels d) */
        return cli_conflict("bench", "--preset serving", "--plot",
                            "the preset's shapes share one length and differ in features, which the plot's "
                            "lines over N do not show: its table, --json and --csv do");
    if (o->plot_path && (strlen(o->plot_path) < 4 || strcmp(o->plot_path + strlen(o->plot_path) - 4, ".svg"))) {
        fprintf(stderr, "flashcl bench: --plot %s: the plot is SVG, name it FILE.svg\n", o->plot_path);
        return 2;
    }
    const char *out[3] = {o->json_path, o->csv_path, o->plot_path};
    static const char *const names[3] = {"--json", "--csv", "--plot"};
    for (int i = 0; i < 3; ++i)
        for (int j = i + 1; j < 3; ++j)
            if (out[i] && out[j] && (is_stdout(out[i]) ? is_stdout(out[j]) : !is_stdout(out[j]) && cli_same_file(out[i], out[j])))
                return cli_conflict("bench", names[i], names[j], is_stdout(out[i]) ? "both would go to stdout"
                                                                                    : "both would write one file");
    return -1;
}

/* Returns -1 to go on, else the exit status (0 after --help). */
static int parse(int argc, char **argv, bench_opts *o)
{
    memset(o, 0, sizeof *o);
    o->dims[0] = 128;
    o->n_dims = 1;
    o->tokens = 16384;
    o->iters = 10;
    o->warmup = 2;
    o->path = -1;
    o->dtype = FLASHCL_DTYPE_F32;
    o->algos[0] = o->algos[1] = o->algos[2] = 1;
    flashcl_problem_default(&o->masks);
    char seen[CLI_OPT_END] = {0};
    for (int c; (c = cli_getopt("bench", argc, argv, "H:b:n:d:h", longopts)) != -1;) {
        if (c == CLI_BAD_OPTION)
            return 2;
        seen[c] = 1;
        switch (c) {
        case 'h': usage(stdout); return 0;
        case OPT_DEVICE: o->device = optarg; break;
        case OPT_CAUSAL: o->causal_mode = 1; break;
        case OPT_BOTH: o->causal_mode = 2; break;
        case OPT_TOP_LEFT: o->top_left = 1; break;
        case OPT_VARLEN: o->varlen = 1; break;
        case OPT_DECODE: break;
        case OPT_JSON: o->json_path = optarg; break;
        case OPT_CSV: o->csv_path = optarg; break;
        case OPT_PLOT: o->plot_path = optarg; break;
        default:
            if (!parse_value(c, optarg, o))
                return 2;
        }
    }
    if (seen[OPT_DECODE] && !o->decode_q) /* (--seq-q Q: Q queries a step, --decode or not) */
        o->decode_q = 1;
    return check_options(seen, o);
}

/* Shape (dim, causal, seq) of the options' lists, with every option that applies to all shapes; 0 after a
 * message where its packed totals or its pool of pages pass int32 (the problem's fields, cu_seqlens). */
static int make_shape(const bench_opts *o, long dim, int causal, long seq, flashcl_problem *p)
{
    flashcl_problem_default(p);
    p->head_dim = (int32_t)dim;
    p->head_dim_v = (int32_t)o->dim_v; /* (0: the head dim) */
    p->seq_q = p->seq_kv = (int32_t)seq;
    if (o->decode_q) /* decode: a few queries against the N keys of a cache */
        p->seq_q = (int32_t)o->decode_q;
    p->heads_q = p->heads_kv = (int32_t)(o->heads ? o->heads : (2048 / dim > 0 ? 2048 / dim : 1));
    if (o->heads_kv)
        p->heads_kv = (int32_t)o->heads_kv; /* must divide the query heads: the plan says so if not */
    p->batch = (int32_t)(o->batch ? o->batch : (o->tokens / seq > 0 ? o->tokens / seq : 1));
    if (o->varlen) { /* packed: the totals of the lengths this shape's run will use (after the batch) */
        int32_t *cu = malloc(2 * ((size_t)p->batch + 1) * sizeof *cu);
        if (cu) {
            p->varlen = 1;
            const int fits = varlen_lengths(p, cu, cu + p->batch + 1);
            p->total_q = cu[p->batch];
            p->total_kv = cu[2 * p->batch + 1];
            free(cu);
            if (!fits) {
                fprintf(stderr, "flashcl bench: --varlen: B=%d sequences of N=%ld (lengths N/2 .. N) hold more than "
                                "2^31-1 rows (cu_seqlens are int32): a smaller -b or --tokens, or shorter -n\n",
                        p->batch, seq);
                return 0;
            }
        }
    }
    /* The pool: every sequence's pages (one more if 7 divides their count), sized after the batch is
     * known (it was once sized for batch 1: a batch-8 run read one pool 8 times). */
    if (o->paged) {
        p->kv_cache = 1;
        p->page_size = (int32_t)o->paged;
        const int64_t pages = (int64_t)p->batch * ((p->seq_kv + o->paged - 1) / o->paged);
        if ((pages % 7 ? pages : pages + 1) > INT32_MAX) {
            fprintf(stderr, "flashcl bench: --paged %ld: B=%d sequences of N=%d keys take %lld pages, past 2^31-1 "
                            "(problem.num_pages is int32): a smaller -b or --tokens, or larger pages\n",
                    o->paged, p->batch, p->seq_kv, (long long)pages);
            return 0;
        }
        p->num_pages = (int32_t)(pages % 7 ? pages : pages + 1);
        if (p->varlen)
            p->total_kv = 0; /* (packed queries over the cache: its fill is the drawn key lengths) */
    }
    p->dtype = o->dtype;
    p->causal = causal;
    p->alignment = o->top_left ? FLASHCL_ALIGN_TOP_LEFT : FLASHCL_ALIGN_BOTTOM_RIGHT;
    p->window = o->masks.window;
    p->window_left = o->masks.window_left;
    p->window_right = o->masks.window_right;
    p->softcap = o->masks.softcap;
    p->alibi = o->masks.alibi;
    p->sinks = o->masks.sinks;
    p->kv_splits = o->masks.kv_splits;
    p->precision = p->dtype == FLASHCL_DTYPE_F32 ? o->masks.precision : FLASHCL_PRECISION_FP32; /* (fp32 rows only) */
    p->qkv_format = o->masks.qkv_format;
    p->fp8_descale = o->masks.fp8_descale;
    p->kv_dtype = o->kv_fmt.kv_dtype;
    if (o->kv_fmt.kv_format) { /* a full cache (every sequence's N keys), quantized */
        p->kv_cache = 1;
        p->kv_format = o->kv_fmt.kv_format;
        p->kv_scale_dtype = o->kv_fmt.kv_scale_dtype;
    }
    return 1;
}

/* The serving preset's shape names (--only), in its order. */
static const char *const serving_names[] = {"plain", "varlen",  "paged", "softcap", "alibi",  "window",  "sinks",
                                            "mask",  "key-padding", "d80", "d96", "d192", "chunked", "varlen-paged"};
#define N_SERVING_NAMES ((int)(sizeof serving_names / sizeof *serving_names))

/* Whether --only's list names serving shape k; k < 0: whether every name in it is one (after a message
 * naming the first that is not). */
static int serving_only(const char *list, int k)
{
    for (const char *p = list;;) {
        const size_t len = strcspn(p, ",");
        if (k < 0 && !len) { /* (as cli_int_list: "plain," is no list) */
            fprintf(stderr, "flashcl bench: --only %s: an empty value\n", list);
            return 0;
        }
        int found = -1;
        for (int i = 0; i < N_SERVING_NAMES; ++i)
            if (strlen(serving_names[i]) == len && !strncmp(p, serving_names[i], len))
                found = i;
        if (k < 0 && found < 0) {
            fprintf(stderr, "flashcl bench: --only %s: '%.*s' is none of the serving preset's shapes (plain, "
                            "varlen, paged, softcap, alibi, window, sinks, mask, key-padding, d80, d96, d192, "
                            "chunked, varlen-paged)\n", list, (int)len, p);
            return 0;
        }
        if (k >= 0 && found == k)
            return 1;
        if (!p[len])
            return k < 0;
        p += len + 1;
    }
}

/* The serving preset (its shapes' count, -1 as make_shapes): what an engine sends (B=4, N=4096, Hq=32, Hkv=8,
 * d=128, fp16, causal), plain and with one feature a shape, head dims 80, 96 and 192 over 128 (16 heads), and
 * chunked prefill (1024 new queries over a cache of 16384 keys in pages of 16), and packed sequences over a
 * paged cache (their queries packed, each sequence's keys its pages, pages of 16). */
static int serving_shapes(const bench_opts *o, flashcl_problem *shapes)
{
    enum { PLAIN, VARLEN, PAGED, SOFTCAP, ALIBI, WINDOW, SINKS, MASK, KEY_PADDING, D80, D96, D192, CHUNKED, VARLEN_PAGED,
           N_SERVING };
    _Static_assert(N_SERVING == N_SERVING_NAMES, "a name for each serving shape");
    int n = 0;
    for (int k = 0; k < N_SERVING; ++k) {
        bench_opts v = *o;
        long dim = 128, seq = 4096;
        v.dtype = FLASHCL_DTYPE_F16;
        v.batch = 4;
        v.heads = 32;
        v.heads_kv = 8;
        v.varlen = k == VARLEN || k == VARLEN_PAGED;
        v.paged = k == PAGED || k == CHUNKED || k == VARLEN_PAGED ? 16 : 0;
        v.masks.softcap = k == SOFTCAP ? 50.0f : 0.0f;
        v.masks.alibi = k == ALIBI;
        v.masks.sinks = k == SINKS;
        if (k == WINDOW) {
            v.masks.window = 1;
            v.masks.window_left = 1024;
            v.masks.window_right = 0;
        }
        if (k == D80 || k == D96)
            dim = k == D80 ? 80 : 96;
        if (k == D192) {
            dim = 192;
            v.dim_v = 128;
            v.heads = v.heads_kv = 16;
        }
        if (k == CHUNKED) {
            seq = 16384;
            v.decode_q = 1024;
        }
        if ((o->max_n && seq > o->max_n) || (o->only && !serving_only(o->only, k)))
            continue;
        flashcl_problem *p = &shapes[n++];
        if (!make_shape(&v, dim, 1, seq, p))
            return -1;
        if (k == MASK) { /* one boolean (seq_q, seq_kv) mask for every batch and head */
            p->attn_mask = 1;
            p->mask_dtype = FLASHCL_MASK_BOOL;
            p->mask_strides_explicit = 1;
            p->mask_strides = (flashcl_strides){0, p->seq_kv, 0};
        }
        p->key_padding = k == KEY_PADDING;
    }
    cli_sink_logit = 0.5; /* (the sinks shape's logit, gpt-oss-like) */
    return n;
}

/* The shapes, in the order they run; their count (-1 after a message: a shape past int32's fields). */
static int make_shapes(bench_opts *o, flashcl_problem *shapes)
{
    if (o->preset && !strcmp(o->preset, "serving"))
        return serving_shapes(o, shapes);
    if (o->preset && !strcmp(o->preset, "fa2")) {
        static const long fa2[] = {512, 1024, 2048, 4096, 8192, 16384};
        o->n_seqs = 6;
        memcpy(o->seqs, fa2, sizeof fa2);
        o->dims[0] = 64;
        o->dims[1] = 128;
        o->n_dims = 2;
        o->causal_mode = 2;
    } else if (o->preset && !strcmp(o->preset, "long")) {
        o->seqs[0] = 32768;
        o->seqs[1] = 65536;
        o->n_seqs = 2;
        o->dims[0] = 128;
        o->n_dims = 1;
        o->tokens = 1; /* B = 1 */
        if (!o->heads)
            o->heads = 16;
    }
    if (!o->n_seqs) {
        o->seqs[0] = 4096;
        o->n_seqs = 1;
    }
    int n = 0;
    for (int di = 0; di < o->n_dims; ++di)
        for (int ci = 0; ci < 2; ++ci) {
            if ((o->causal_mode == 0 && ci == 1) || (o->causal_mode == 1 && ci == 0))
                continue;
            for (int si = 0; si < o->n_seqs; ++si) /* (at most MAX_SHAPES) */
                if ((!o->max_n || o->seqs[si] <= o->max_n) &&
                    !make_shape(o, o->dims[di], ci, o->seqs[si], &shapes[n++]))
                    return -1;
        }
    return n;
}

/* A preset sized for GPUs on a CPU: hours of naive attention at N = 16384 (or 65536); said before anything
 * runs, for the user to bound it. 0 when it is not that. */
static int preset_too_long(const bench_opts *o, const flashcl_device_profile *pr, const flashcl_problem *shapes, int n)
{
    long longest = 0;
    for (int i = 0; i < n; ++i)
        longest = shapes[i].seq_kv > longest ? shapes[i].seq_kv : longest;
    if (!o->preset || !pr->is_cpu || o->max_n || longest <= 4096)
        return 0;
    fprintf(stderr, "flashcl bench: --preset %s runs %d shapes up to N=%ld, hours on a CPU (%s); bound it with --max-n "
                    "(e.g. --max-n 2048) or pass -n and -d\n", o->preset, n, longest, pr->name);
    return 1;
}

/* The progress line of shape i (stderr), ended by the algorithms' times. */
static void progress(int i, int n, const flashcl_problem *p)
{
    char seq[48];
    if (p->seq_q == p->seq_kv)
        snprintf(seq, sizeof seq, "N=%d", p->seq_kv);
    else
        snprintf(seq, sizeof seq, "Sq=%d Sk=%d", p->seq_q, p->seq_kv);
    fprintf(stderr, "[%d/%d] B=%d H=%d %s d=%d %s %s ...", i + 1, n, p->batch, p->heads_q, seq, p->head_dim,
            flashcl_dtype_name(p->dtype), mask_name(p));
    fflush(stderr);
}

int cmd_bench(int argc, char **argv)
{
    bench_opts o;
    const int parsed = parse(argc, argv, &o);
    if (parsed >= 0)
        return parsed;
    /* The outputs before the work: a path that cannot be written fails now, not after the runs (checked,
     * not opened: a refusal below must not leave an earlier result truncated). */
    if (!writable(o.json_path) || !writable(o.csv_path) || !writable(o.plot_path))
        return 1;
    static flashcl_problem shapes[MAX_SHAPES];
    const int n_shapes = make_shapes(&o, shapes);
    if (n_shapes < 0)
        return 2;
    if (!n_shapes) {
        fprintf(stderr, "flashcl bench: --max-n %ld leaves out every sequence length\n", o.max_n);
        return 2;
    }
    flashcl_context *ctx = NULL;
    flashcl_settings s;
    flashcl_settings_default(&s);
    s.validate = 0;
    s.path = o.path;
    flashcl_status st = flashcl_context_create_default(o.device, &s, &ctx);
    if (st)
        return cli_fail(NULL, "opening a device", st);
    if (cli_apply_config(ctx, o.has_config, &o.config)) {
        flashcl_context_destroy(&ctx);
        return 1;
    }
    const flashcl_device_profile *pr = flashcl_context_profile(ctx);
    bench_run run = {.o = &o, .pr = pr, .n_res = n_shapes * N_ALGOS};
    run.res = preset_too_long(&o, pr, shapes, n_shapes) ? NULL : calloc((size_t)run.n_res, sizeof *run.res);
    if (!run.res) {
        flashcl_context_destroy(&ctx);
        return o.preset ? 2 : 1;
    }
    time_t now = time(NULL);
    strftime(run.date, sizeof run.date, "%Y-%m-%d", gmtime(&now));
    snprintf(run.command, sizeof run.command, "flashcl");
    for (int i = 0; i < argc; ++i) {
        strncat(run.command, " ", sizeof run.command - strlen(run.command) - 1);
        strncat(run.command, argv[i], sizeof run.command - strlen(run.command) - 1);
    }
    char mask_desc[96] = "";
    if (o.masks.window || o.masks.softcap > 0.0f || o.masks.alibi || o.masks.sinks) {
        o.masks.causal = 0;
        cli_mask_name(&o.masks, mask_desc, sizeof mask_desc);
    }
    fprintf(stderr, "flashcl bench on %s / %s (driver %s): %d shapes%s%s\n", pr->platform_name, pr->name,
            pr->driver_version, n_shapes, mask_desc[0] ? ", every one with " : "", mask_desc[0] ? mask_desc + 5 : "");

    int rc = 0;
    clock_gettime(CLOCK_MONOTONIC, &run.start); /* (the budget counts from the first measurement) */
    for (int i = 0; i < n_shapes; ++i) {
        progress(i, n_shapes, &shapes[i]);
        run_shape(&run, ctx, &shapes[i], &run.res[i * N_ALGOS]);
        for (int a = 0; a < N_ALGOS; ++a) {
            const result *r = &run.res[i * N_ALGOS + a];
            if (r->ran)
                fprintf(stderr, " %s %.3f ms%s", flashcl_algorithm_name((flashcl_algorithm)a), r->median,
                        r->passed ? "" : " (VALIDATION FAILED)");
            else if (o.algos[a] && !strncmp(r->note, "not started", 11))
                fprintf(stderr, " %s not started", flashcl_algorithm_name((flashcl_algorithm)a));
            if ((r->ran && !r->passed) || r->error)
                rc = 1;
        }
        fprintf(stderr, "\n");
    }
    run.complete = 1;
    if (run.not_started || run.cut)
        fprintf(stderr, "flashcl bench: the --max-seconds %g budget was spent after %.1f s: %d measurements not "
                        "started, %d with fewer timed runs than --iters (their notes say so)\n",
                o.max_seconds, elapsed_s(&run), run.not_started, run.cut);
    /* The table for people: on stdout, unless the JSON or the CSV goes there (then stderr: one format a stream). */
    print_table(is_stdout(o.json_path) || is_stdout(o.csv_path) ? stderr : stdout, &run);
    if (save_outputs(&run) != 0)
        rc = 1;
    if (o.plot_path && write_plot(&run) != 0)
        rc = 1;
    free(run.res);
    flashcl_context_destroy(&ctx);
    return rc;
}
