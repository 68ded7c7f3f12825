/*
 * enqueue_cost.c: where a decode step's time goes, kernel or host. For one plan (decode: B=8, Hq 32,
 * Hkv 8, d 128, fp16, cache ENQ_N keys; ENQ_SPLITS splits, 0 auto), per run:
 *   host   the wall time of the flashcl_plan_enqueue_tensors call (argument checks and binding, launches)
 *   marker flashcl bench's clock: a marker's end to the plan's last command's end, queue idle before
 *   gated  the same span with the commands already submitted behind a user event (engine-4: NVIDIA
 *          submits them only once the event completes, so this holds the driver's submission too)
 *   last   the plan's last command alone, its start to its end (with ENQ_SPLITS=1 the attention kernel)
 * Medians over ENQ_RUNS (200) after 20 warm-ups. Builds against any flashcl.h of ABI 0..2 (the calls it
 * makes have not changed): docs/gpu-runs/engine/run4.sh builds it against this tree and decode-mma-5's.
 */
#include <flashcl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return v[n / 2];
}

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

static double own_ms(cl_event ev)
{
    cl_ulong a = 0, b = 0;
    clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof a, &a, NULL);
    clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof b, &b, NULL);
    return (double)(b - a) * 1e-6;
}

static double span_ms(cl_event from, cl_event to)
{
    cl_ulong a = 0, b = 0;
    clGetEventProfilingInfo(from, CL_PROFILING_COMMAND_END, sizeof a, &a, NULL);
    clGetEventProfilingInfo(to, CL_PROFILING_COMMAND_END, sizeof b, &b, NULL);
    return (double)(b - a) * 1e-6;
}

int main(void)
{
    const int n_keys = getenv("ENQ_N") ? atoi(getenv("ENQ_N")) : 8192;
    const int splits = getenv("ENQ_SPLITS") ? atoi(getenv("ENQ_SPLITS")) : 0;
    const int runs = getenv("ENQ_RUNS") ? atoi(getenv("ENQ_RUNS")) : 200;
    flashcl_settings s;
    flashcl_settings_default(&s);
    s.validate = 0;
    flashcl_context *ctx = NULL;
    if (flashcl_context_create_default(getenv("ENQ_DEVICE") ? getenv("ENQ_DEVICE") : "NVIDIA", &s, &ctx) != FLASHCL_SUCCESS) {
        fprintf(stderr, "no device: %s\n", flashcl_context_last_error(NULL));
        return 77;
    }
    flashcl_problem p;
    flashcl_problem_default(&p);
    p.batch = 8;
    p.heads_q = 32;
    p.heads_kv = 8;
    p.seq_q = 1;
    p.seq_kv = n_keys;
    p.head_dim = 128;
    p.dtype = FLASHCL_DTYPE_F16;
    p.kv_splits = splits;
    flashcl_plan *plan = NULL;
    if (flashcl_plan_create(ctx, &p, &plan) != FLASHCL_SUCCESS) {
        fprintf(stderr, "plan: %s\n", flashcl_context_last_error(ctx));
        return 1;
    }
    flashcl_config cfg;
    flashcl_plan_config(plan, &cfg);
    size_t sz[5];
    flashcl_plan_buffer_sizes(plan, &sz[0], &sz[1], &sz[2], &sz[3], &sz[4]);
    cl_context cl;
    cl_command_queue queue;
    flashcl_context_cl_objects(ctx, &cl, NULL, &queue);
    cl_mem m[4];
    for (int i = 0; i < 4; ++i) {
        m[i] = clCreateBuffer(cl, CL_MEM_READ_WRITE, sz[i], NULL, NULL);
        const unsigned short one = 0x3c00; /* fp16 1.0 */
        clEnqueueFillBuffer(queue, m[i], &one, 2, 0, sz[i], 0, NULL, NULL);
    }
    flashcl_tensors t;
    memset(&t, 0, sizeof t);
    t.q = m[0], t.k = m[1], t.v = m[2], t.o = m[3];
    double *host = malloc(runs * sizeof *host), *marker = malloc(runs * sizeof *marker),
           *gated = malloc(runs * sizeof *gated), *last = malloc(runs * sizeof *last);
    for (int i = -20; i < runs; ++i) {
        /* the bench's way: the queue idle, a marker, the plan */
        clFinish(queue);
        cl_event mk = NULL, ev = NULL;
        clEnqueueMarkerWithWaitList(queue, 0, NULL, &mk);
        const double h0 = now_us();
        if (flashcl_plan_enqueue_tensors(plan, &t, 0, NULL, &ev) != FLASHCL_SUCCESS) {
            fprintf(stderr, "enqueue: %s\n", flashcl_context_last_error(ctx));
            return 1;
        }
        const double h1 = now_us();
        clWaitForEvents(1, &ev);
        if (i >= 0) {
            host[i] = h1 - h0;
            marker[i] = span_ms(mk, ev);
            last[i] = own_ms(ev);
        }
        clReleaseEvent(mk);
        clReleaseEvent(ev);
        /* gated: everything submitted behind a user event, then released */
        cl_event gate = clCreateUserEvent(cl, NULL), gm = NULL, gev = NULL;
        clEnqueueMarkerWithWaitList(queue, 1, &gate, &gm);
        flashcl_plan_enqueue_tensors(plan, &t, 0, NULL, &gev);
        clFlush(queue);
        clSetUserEventStatus(gate, CL_COMPLETE);
        clWaitForEvents(1, &gev);
        if (i >= 0)
            gated[i] = span_ms(gm, gev);
        clReleaseEvent(gate);
        clReleaseEvent(gm);
        clReleaseEvent(gev);
    }
    printf("N=%d %s %dx%d splits %d: host %.1f us, marker %.4f ms, gated %.4f ms, last %.4f ms (medians of %d)\n", n_keys,
           cfg.kernel, cfg.block_m, cfg.block_n, cfg.kv_splits, median(host, runs), median(marker, runs),
           median(gated, runs), median(last, runs), runs);
    for (int i = 0; i < 4; ++i)
        clReleaseMemObject(m[i]);
    flashcl_plan_destroy(&plan);
    flashcl_context_destroy(&ctx);
    return 0;
}
