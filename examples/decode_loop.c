/* SPDX-License-Identifier: MIT */
/*
 * decode_loop.c: a decode loop as an inference engine runs it. Every tensor of the step lives at an
 * offset inside one pooled buffer (no sub-buffers: the offsets are not multiples of the device's base
 * alignment); the host's writes go on one queue and the attention on a second, ordered by events; one
 * plan serves every step (the KV cache grows through cache_seqlens, the step's key and value rows are
 * appended by the plan itself). The queries, the step's new rows and the output are fp32 and the cache
 * fp16 (problem.kv_dtype: ggml's layout), the new rows rounded to fp16 on their way in. The keys are
 * split over work-groups (split-KV), whose scratch is the engine's too: a workspace in the same pool,
 * sized by the plan. After the last step the output is
 * checked against a float64 computation over the host's copy of the cache.
 * Exit status: 0 on success, 1 on an error, 77 when there is no OpenCL device.
 */
#include <flashcl.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define B 2      /* sequences in the batch */
#define HQ 8     /* query heads */
#define HKV 2    /* key/value heads (GQA: 4 query heads a KV head) */
#define D 64     /* head dim */
#define CAP 96   /* cache capacity, rows per sequence */
#define STEPS 24 /* decode steps */

/* fp16 <-> float for the host side (round to nearest even; no subnormal inputs here). */
static uint16_t to_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    const uint32_t sign = (x >> 16) & 0x8000u;
    int32_t e = (int32_t)((x >> 23) & 0xff) - 127 + 15;
    uint32_t m = x & 0x7fffffu;
    if (e <= 0)
        return (uint16_t)sign;
    uint32_t h = sign | ((uint32_t)e << 10) | (m >> 13);
    const uint32_t rest = m & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
        ++h;
    return (uint16_t)h;
}
static float from_half(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ffu;
    const uint32_t x = e ? sign | ((e - 15 + 127) << 23) | (m << 13) : sign;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

static float uniform(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return (float)((*seed >> 8) % 20001) / 10000.0f - 1.0f;
}

int main(void)
{
    cl_platform_id platforms[8];
    cl_uint np = 0;
    cl_device_id device = NULL;
    if (clGetPlatformIDs(8, platforms, &np) != CL_SUCCESS)
        np = 0;
    for (cl_uint i = 0; i < np && !device; ++i)
        if (clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_ALL, 1, &device, NULL) != CL_SUCCESS)
            device = NULL;
    if (!device) {
        printf("no OpenCL device: skipped\n");
        return 77;
    }
    cl_int err;
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    cl_command_queue host_q = clCreateCommandQueue(context, device, 0, &err); /* uploads and downloads */
    cl_command_queue attn_q = clCreateCommandQueue(context, device, 0, &err); /* the attention */

    const size_t cache_n = (size_t)B * CAP * HKV * D, q_n = (size_t)B * HQ * D, new_n = (size_t)B * HKV * D;
    enum { K_CACHE, V_CACHE, Q, K_NEW, V_NEW, O, LENS, WS, N_TENSORS };
    size_t at[N_TENSORS], pool_bytes = 0;
    cl_mem pool = NULL;

    flashcl_context *fcl = NULL;
    flashcl_plan *plan = NULL;
    int rc = 1;
    uint16_t *kc = calloc(cache_n, 2), *vc = calloc(cache_n, 2);
    float *q = malloc(q_n * 4), *kn = malloc(new_n * 4), *vn = malloc(new_n * 4), *o = malloc(q_n * 4);
    flashcl_status st = flashcl_context_create(context, device, attn_q, NULL, &fcl);
    if (st != FLASHCL_SUCCESS) {
        fprintf(stderr, "flashcl_context_create: %s\n", flashcl_context_last_error(NULL));
        goto done;
    }

    /* One plan for every step: one query a sequence against a cache of CAP rows, filled to
     * cache_seqlens, the step's rows appended first. */
    flashcl_problem p;
    flashcl_problem_default(&p);
    p.batch = B;
    p.heads_q = HQ;
    p.heads_kv = HKV;
    p.seq_q = 1;
    p.seq_kv = CAP;
    p.head_dim = D;
    p.dtype = FLASHCL_DTYPE_F32;          /* Q, the new rows, O */
    p.kv_dtype = FLASHCL_KV_DTYPE_F16;    /* the cache */
    p.kv_cache = 1;
    p.kv_append = 1;
    p.causal = 1;
    p.kv_splits = 4; /* each sequence's keys over 4 work-groups, merged after */
    if ((st = flashcl_plan_create(fcl, &p, &plan)) != FLASHCL_SUCCESS) {
        fprintf(stderr, "flashcl_plan_create: %s\n", flashcl_context_last_error(fcl));
        goto done;
    }

    /* The pool: K and V caches (B, CAP, HKV, D), the step's Q (B, 1, HQ, D), its new K and V rows
     * (B, 1, HKV, D), the output, the cache lengths and the plan's workspace; each tensor 144 bytes
     * after the previous one's end (a multiple of 16, as every kernel accepts, but not of the base
     * alignment sub-buffers need). The plan allocates nothing of its own. */
    const size_t bytes[N_TENSORS] = {cache_n * 2, cache_n * 2, q_n * 4, new_n * 4, new_n * 4, q_n * 4, B * 4,
                                     (size_t)flashcl_plan_workspace_bytes(plan)};
    for (int i = 0; i < N_TENSORS; ++i) {
        at[i] = pool_bytes + 144;
        pool_bytes = at[i] + bytes[i];
    }
    pool = clCreateBuffer(context, CL_MEM_READ_WRITE, pool_bytes, NULL, &err);
    if (!pool) {
        fprintf(stderr, "clCreateBuffer(%zu): %d\n", pool_bytes, (int)err);
        goto done;
    }
    flashcl_tensors t = {.q = pool, .k = pool, .v = pool, .o = pool, .cache_seqlens = pool, .k_new = pool,
                         .v_new = pool, .workspace = pool};
    t.offsets.q = at[Q];
    t.offsets.k = at[K_CACHE];
    t.offsets.v = at[V_CACHE];
    t.offsets.o = at[O];
    t.offsets.cache_seqlens = at[LENS];
    t.offsets.k_new = at[K_NEW];
    t.offsets.v_new = at[V_NEW];
    t.offsets.workspace = at[WS];

    unsigned seed = 7;
    int32_t lens[B] = {3, 11}; /* prompts of different lengths already in the cache */
    for (int b = 0; b < B; ++b)
        for (int j = 0; j < lens[b]; ++j)
            for (int e = 0; e < HKV * D; ++e) {
                kc[((size_t)b * CAP + j) * HKV * D + e] = to_half(uniform(&seed));
                vc[((size_t)b * CAP + j) * HKV * D + e] = to_half(uniform(&seed));
            }
    clEnqueueWriteBuffer(host_q, pool, CL_TRUE, at[K_CACHE], bytes[K_CACHE], kc, 0, NULL, NULL);
    clEnqueueWriteBuffer(host_q, pool, CL_TRUE, at[V_CACHE], bytes[V_CACHE], vc, 0, NULL, NULL);

    for (int step = 0; step < STEPS; ++step) {
        /* The step's inputs, written on the host queue; the attention on its own queue after them. */
        for (size_t i = 0; i < q_n; ++i)
            q[i] = uniform(&seed);
        for (size_t i = 0; i < new_n; ++i) {
            kn[i] = uniform(&seed);
            vn[i] = uniform(&seed);
        }
        cl_event written[4], attended = NULL;
        clEnqueueWriteBuffer(host_q, pool, CL_FALSE, at[Q], bytes[Q], q, 0, NULL, &written[0]);
        clEnqueueWriteBuffer(host_q, pool, CL_FALSE, at[K_NEW], bytes[K_NEW], kn, 0, NULL, &written[1]);
        clEnqueueWriteBuffer(host_q, pool, CL_FALSE, at[V_NEW], bytes[V_NEW], vn, 0, NULL, &written[2]);
        clEnqueueWriteBuffer(host_q, pool, CL_FALSE, at[LENS], bytes[LENS], lens, 0, NULL, &written[3]);
        clFlush(host_q);
        st = flashcl_plan_enqueue_on(plan, attn_q, &t, 4, written, &attended);
        for (int i = 0; i < 4; ++i)
            clReleaseEvent(written[i]);
        if (st != FLASHCL_SUCCESS) {
            fprintf(stderr, "step %d: flashcl_plan_enqueue_on: %s\n", step, flashcl_context_last_error(fcl));
            goto done;
        }
        clEnqueueReadBuffer(host_q, pool, CL_TRUE, at[O], bytes[O], o, 1, &attended, NULL);
        clReleaseEvent(attended);
        /* the host's copy of the cache follows: the new rows went in at lens[b], rounded to fp16 */
        for (int b = 0; b < B; ++b) {
            for (int e = 0; e < HKV * D; ++e) {
                kc[((size_t)b * CAP + lens[b]) * HKV * D + e] = to_half(kn[(size_t)b * HKV * D + e]);
                vc[((size_t)b * CAP + lens[b]) * HKV * D + e] = to_half(vn[(size_t)b * HKV * D + e]);
            }
            ++lens[b];
        }
    }

    /* The last step's output against float64 over the host's cache (lens now counts its row). */
    double worst = 0.0;
    for (int b = 0; b < B; ++b)
        for (int h = 0; h < HQ; ++h) {
            const int hk = h / (HQ / HKV), n = lens[b];
            double s[CAP], m = -INFINITY, l = 0.0;
            for (int j = 0; j < n; ++j) {
                double dot = 0.0;
                for (int d = 0; d < D; ++d)
                    dot += (double)q[((size_t)b * HQ + h) * D + d] * from_half(kc[(((size_t)b * CAP + j) * HKV + hk) * D + d]);
                s[j] = dot / sqrt((double)D);
                m = s[j] > m ? s[j] : m;
            }
            for (int j = 0; j < n; ++j)
                l += exp(s[j] - m);
            for (int d = 0; d < D; ++d) {
                double ref = 0.0;
                for (int j = 0; j < n; ++j)
                    ref += exp(s[j] - m) / l * from_half(vc[(((size_t)b * CAP + j) * HKV + hk) * D + d]);
                const double e = fabs(ref - o[((size_t)b * HQ + h) * D + d]);
                worst = e > worst ? e : worst;
            }
        }
    printf("flashcl %s: %d decode steps (fp32 queries, an fp16 cache) on a second queue, every tensor and the "
           "%llu-byte split-KV workspace at "
           "an offset in one pooled buffer (%zu bytes; the plan allocated %llu of its own): max error %.2e after the "
           "last (caches of %d and %d rows)\n",
           flashcl_version_string(), STEPS, (unsigned long long)flashcl_plan_workspace_bytes(plan), pool_bytes,
           (unsigned long long)flashcl_plan_extra_device_bytes(plan), worst, lens[0], lens[1]);
    /* (fp32 output: float32 arithmetic's error only) */
    rc = worst < 1e-4 && flashcl_plan_workspace_bytes(plan) > 0 && flashcl_plan_extra_device_bytes(plan) == 0 ? 0 : 1;
done:
    flashcl_plan_destroy(&plan);
    flashcl_context_destroy(&fcl);
    if (pool)
        clReleaseMemObject(pool);
    clReleaseCommandQueue(attn_q);
    clReleaseCommandQueue(host_q);
    clReleaseContext(context);
    free(kc);
    free(vc);
    free(q);
    free(kn);
    free(vn);
    free(o);
    return rc;
}
