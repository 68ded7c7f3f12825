/*
 * cmd_run.c: `flashcl run`: flash attention on random normal inputs on one device, timed with
 * profiling events (warm-up and compilation excluded) and validated against the naive kernel.
 */
#include "cli.h"
#include "hostmath.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: flashcl run [options]\n"
            "Runs flash attention on random N(0,1) inputs, validated against the naive kernel.\n"
            "  --device SEL     \"P:D\" indices or a name substring (default: $FLASHCL_DEVICE, a GPU, a CPU)\n"
            "  -b, --batch N    batch (default 1)\n"
            "  -H, --heads N    query heads (default 8)\n"
            "  --heads-kv N     key/value heads, divides --heads (default: --heads)\n"
            "  -n, --seq N      seq_q = seq_kv = N (default 1024)\n"
            "  --seq-q N, --seq-kv N\n"
            "  -d, --dim N      head dim, a multiple of 8 up to 256 (default 64)\n"
            "  --dtype T        f32, f16 or bf16 (default f32)\n"
            "  --causal         causal mask, bottom-right aligned\n"
            "  --lse            also write the log-sum-exp\n"
            "  --naive          run the naive kernel instead of the flash kernel\n"
            "  --iters N        timed runs (default 10); --warmup N (default 2)\n"
            "  --no-validate    skip the validated run\n"
            "  --seed N         input seed (default 1)\n"
            "  --json           machine-readable output\n");
}

typedef struct run_opts {
    const char *device;
    flashcl_problem problem;
    int naive, validate, json;
    long iters, warmup, seed;
} run_opts;

static int parse(int argc, char **argv, run_opts *o)
{
    flashcl_problem *p = &o->problem;
    flashcl_problem_default(p);
    p->heads_q = 8;
    p->heads_kv = 0;
    p->seq_q = p->seq_kv = 1024;
    o->device = NULL;
    o->naive = 0;
    o->validate = 1;
    o->json = 0;
    o->iters = 10;
    o->warmup = 2;
    o->seed = 1;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        long v;
#define INTOPT(name1, name2, lo, hi, dst)                                 \
    if (!strcmp(a, name1) || !strcmp(a, name2)) {                         \
        if (!cli_int(a, val, lo, hi, &v))                                 \
            return 2;                                                     \
        dst = v;                                                          \
        ++i;                                                              \
        continue;                                                         \
    }
        INTOPT("-b", "--batch", 1, 1L << 30, p->batch)
        INTOPT("-H", "--heads", 1, 1L << 20, p->heads_q)
        INTOPT("--heads-kv", "--heads-kv", 1, 1L << 20, p->heads_kv)
        if (!strcmp(a, "-n") || !strcmp(a, "--seq")) {
            if (!cli_int(a, val, 1, 1L << 30, &v))
                return 2;
            p->seq_q = p->seq_kv = (int32_t)v;
            ++i;
            continue;
        }
        INTOPT("--seq-q", "--seq-q", 1, 1L << 30, p->seq_q)
        INTOPT("--seq-kv", "--seq-kv", 1, 1L << 30, p->seq_kv)
        INTOPT("-d", "--dim", 1, 4096, p->head_dim)
        INTOPT("--iters", "--iters", 1, 100000, o->iters)
        INTOPT("--warmup", "--warmup", 0, 100000, o->warmup)
        INTOPT("--seed", "--seed", 0, 1L << 62, o->seed)
#undef INTOPT
        if (!strcmp(a, "--dtype")) {
            if (!cli_dtype(val, &p->dtype))
                return 2;
            ++i;
        } else if (!strcmp(a, "--device")) {
            if (!val) {
                fprintf(stderr, "flashcl: --device needs a value\n");
                return 2;
            }
            o->device = val;
            ++i;
        } else if (!strcmp(a, "--causal")) {
            p->causal = 1;
        } else if (!strcmp(a, "--lse")) {
            p->return_lse = 1;
        } else if (!strcmp(a, "--naive")) {
            o->naive = 1;
        } else if (!strcmp(a, "--no-validate")) {
            o->validate = 0;
        } else if (!strcmp(a, "--json")) {
            o->json = 1;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "flashcl run: unknown option '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (!p->heads_kv)
        p->heads_kv = p->heads_q;
    return -1;
}

static cl_mem make_buffer(cl_context c, size_t bytes, const void *init, cl_int *err)
{
    return clCreateBuffer(c, CL_MEM_READ_WRITE | (init ? CL_MEM_COPY_HOST_PTR : 0), bytes ? bytes : 4,
                          (void *)init, err);
}

int cmd_run(int argc, char **argv)
{
    run_opts o;
    int rc = parse(argc, argv, &o);
    if (rc >= 0)
        return rc;
    flashcl_problem *p = &o.problem;

    flashcl_settings settings;
    flashcl_settings_default(&settings);
    settings.validate = 0; /* the validated run below is separate from the timed runs */
    flashcl_context *ctx = NULL;
    flashcl_plan *plan = NULL;
    cl_mem bufs[5] = {0};
    void *host[3] = {0};
    double *times = NULL;
    flashcl_status st = flashcl_context_create_default(o.device, &settings, &ctx);
    if (st)
        return cli_fail(NULL, "opening a device", st);
    const flashcl_device_profile *dev = flashcl_context_profile(ctx);

    rc = 1;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    st = flashcl_plan_create_algo(ctx, p, o.naive ? FLASHCL_ALGO_NAIVE : FLASHCL_ALGO_FLASH, &plan);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (st) {
        cli_fail(ctx, "creating the plan", st);
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
            fprintf(stderr, "flashcl: out of host memory for inputs (%zu bytes)\n", sz[i]);
            goto done;
        }
        hm_fill_normal(host[i], p->dtype, sz[i] / es, &rng, 1.0);
    }
    cl_int err = CL_SUCCESS;
    for (int i = 0; i < 5 && err == CL_SUCCESS; ++i)
        if (i < 4 || sz[4])
            bufs[i] = make_buffer(clctx, sz[i], i < 3 ? host[i] : NULL, &err);
    if (err != CL_SUCCESS) {
        fprintf(stderr, "flashcl: allocating device buffers failed (OpenCL error %d)\n", (int)err);
        goto done;
    }

    /* Validated run first: it also compiles the naive kernel outside the timed runs. */
    flashcl_validation report = {0};
    if (o.validate) {
        flashcl_context_set_validation(ctx, 1);
        st = flashcl_plan_enqueue(plan, bufs[0], bufs[1], bufs[2], bufs[3], bufs[4], 0, NULL, NULL);
        flashcl_context_set_validation(ctx, 0);
        flashcl_plan_last_validation(plan, &report);
        if (st && st != FLASHCL_VALIDATION_FAILED) {
            cli_fail(ctx, "validated run", st);
            goto done;
        }
    }

    times = calloc((size_t)o.iters, sizeof *times);
    if (!times)
        goto done;
    for (long i = 0; i < o.warmup + o.iters; ++i) {
        cl_event ev;
        st = flashcl_plan_enqueue(plan, bufs[0], bufs[1], bufs[2], bufs[3], bufs[4], 0, NULL, &ev);
        if (st) {
            cli_fail(ctx, "enqueue", st);
            goto done;
        }
        clWaitForEvents(1, &ev);
        cl_ulong start = 0, end = 0;
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL);
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL);
        clReleaseEvent(ev);
        if (i >= o.warmup)
            times[i - o.warmup] = (double)(end - start) * 1e-6;
    }
    double med, tmin, tmax;
    cli_stats(times, (int)o.iters, &med, &tmin, &tmax);
    /* FLOPs as FlashAttention counts them: 4*B*H*Sq*Sk*d, only computed pairs under a causal mask. */
    double pairs = (double)p->seq_q * p->seq_kv;
    if (p->causal) {
        pairs = 0;
        for (int64_t i = 0; i < p->seq_q; ++i) {
            int64_t last = i + p->seq_kv - p->seq_q;
            if (last >= p->seq_kv)
                last = p->seq_kv - 1;
            if (last >= 0)
                pairs += (double)(last + 1);
        }
    }
    const double flops = 4.0 * p->batch * p->heads_q * pairs * p->head_dim;
    const double tflops = flops / (med * 1e-3) / 1e12;

    if (o.json) {
        printf("{\"device\": ");
        cli_json_string(stdout, dev->name);
        printf(", \"platform\": ");
        cli_json_string(stdout, dev->platform_name);
        printf(", \"driver\": ");
        cli_json_string(stdout, dev->driver_version);
        printf(",\n \"problem\": {\"batch\": %d, \"heads_q\": %d, \"heads_kv\": %d, \"seq_q\": %d, \"seq_kv\": %d, "
               "\"head_dim\": %d, \"dtype\": \"%s\", \"causal\": %s, \"scale\": %.9g},\n",
               p->batch, p->heads_q, p->heads_kv, p->seq_q, p->seq_kv, p->head_dim, flashcl_dtype_name(p->dtype),
               p->causal ? "true" : "false", (double)p->scale);
        printf(" \"config\": {\"kernel\": \"%s\", \"block_m\": %d, \"block_n\": %d, \"threads_per_row\": %d, "
               "\"work_group_size\": %d, \"local_mem_bytes\": %llu, \"local_mem_budget\": %llu, \"reason\": ",
               cfg.kernel, cfg.block_m, cfg.block_n, cfg.threads_per_row, cfg.work_group_size,
               (unsigned long long)cfg.local_mem_bytes, (unsigned long long)cfg.local_mem_budget);
        cli_json_string(stdout, cfg.reason);
        printf("},\n \"plan_ms\": %.3f, \"time_ms\": {\"median\": %.6f, \"min\": %.6f, \"max\": %.6f, \"runs\": %ld}, "
               "\"tflops\": %.4f,\n",
               plan_ms, med, tmin, tmax, o.iters, tflops);
        if (o.validate)
            printf(" \"validation\": {\"passed\": %s, \"rows_checked\": %lld, \"rows_total\": %lld, "
                   "\"max_abs_error\": %.3e, \"max_rel_error\": %.3e, \"failures\": %lld, \"nan_count\": %lld}}\n",
                   report.passed ? "true" : "false", (long long)report.rows_checked, (long long)report.rows_total,
                   report.max_abs_error, report.max_rel_error, (long long)report.failures,
                   (long long)report.nan_count);
        else
            printf(" \"validation\": null}\n");
    } else {
        printf("device      %s / %s (driver %s)\n", dev->platform_name, dev->name, dev->driver_version);
        printf("problem     B=%d Hq=%d Hkv=%d Sq=%d Sk=%d d=%d %s%s\n", p->batch, p->heads_q, p->heads_kv, p->seq_q,
               p->seq_kv, p->head_dim, flashcl_dtype_name(p->dtype), p->causal ? " causal" : "");
        printf("kernel      %s: block_m=%d block_n=%d threads/row=%d work-group=%d, local memory %llu of %llu B\n",
               cfg.kernel, cfg.block_m, cfg.block_n, cfg.threads_per_row, cfg.work_group_size,
               (unsigned long long)cfg.local_mem_bytes, (unsigned long long)cfg.local_mem_budget);
        printf("            %s\n", cfg.reason);
        printf("plan        %.1f ms (tile choice and program build or cache load)\n", plan_ms);
        printf("time        median %.3f ms (min %.3f, max %.3f) over %ld runs, profiling events; %.3f TFLOP/s\n",
               med, tmin, tmax, o.iters, tflops);
        if (o.validate)
            printf("validation  %s: %lld of %lld rows checked against the naive kernel, max abs error %.3e, "
                   "max rel error %.3e (tolerance atol %.2e x row scale + rtol %.2e), %lld failures, %lld NaN\n",
                   report.passed ? "PASS" : "FAIL", (long long)report.rows_checked, (long long)report.rows_total,
                   report.max_abs_error, report.max_rel_error, report.atol, report.rtol, (long long)report.failures,
                   (long long)report.nan_count);
        else
            printf("validation  skipped (--no-validate)\n");
    }
    rc = (o.validate && !report.passed) ? 3 : 0;
done:
    for (int i = 0; i < 5; ++i)
        if (bufs[i])
            clReleaseMemObject(bufs[i]);
    for (int i = 0; i < 3; ++i)
        free(host[i]);
    free(times);
    flashcl_plan_destroy(&plan);
    flashcl_context_destroy(&ctx);
    return rc;
}
