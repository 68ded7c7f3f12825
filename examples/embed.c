/* SPDX-License-Identifier: MIT */
/*
 * embed.c: how an application embeds flashcl with its own OpenCL context, queue and buffers.
 * It makes its own context, uploads Q, K and V, plans once, enqueues twice with a wait list and an
 * output event, and checks one output row against a float64 computation of its own.
 * Exit status: 0 on success, 1 on an error, 77 when there is no OpenCL device.
 */
#include <flashcl.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define B 1
#define H 4
#define N 200
#define D 64

int main(void)
{
    /* 1. The application's own OpenCL objects: the first device of the first platform that has one. */
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
    cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);

    /* 2. Its own buffers, (batch, seq, heads, dim) like FlashAttention's. */
    const size_t count = (size_t)B * N * H * D;
    float *q = malloc(count * sizeof *q), *k = malloc(count * sizeof *k), *v = malloc(count * sizeof *v);
    float *o = malloc(count * sizeof *o);
    unsigned seed = 12345;
    for (size_t i = 0; i < count; ++i) {
        seed = seed * 1103515245u + 12345u;
        q[i] = (float)((seed >> 8) % 2001) / 1000.0f - 1.0f;
        k[i] = (float)((seed >> 4) % 1999) / 1000.0f - 1.0f;
        v[i] = (float)((seed >> 12) % 2003) / 1000.0f - 1.0f;
    }
    cl_mem qb = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, count * 4, q, &err);
    cl_mem kb = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, count * 4, k, &err);
    cl_mem vb = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, count * 4, v, &err);
    cl_mem ob = clCreateBuffer(context, CL_MEM_WRITE_ONLY, count * 4, NULL, &err);

    /* 3. flashcl on those objects: a context (it retains them), a plan built once. */
    flashcl_context *fcl = NULL;
    flashcl_plan *plan = NULL;
    int rc = 1;
    flashcl_status st = flashcl_context_create(context, device, queue, NULL, &fcl);
    if (st != FLASHCL_SUCCESS) {
        fprintf(stderr, "flashcl_context_create: %s: %s\n", flashcl_status_string(st), flashcl_context_last_error(NULL));
        goto done;
    }
    flashcl_problem problem;
    flashcl_problem_default(&problem);
    problem.batch = B;
    problem.heads_q = problem.heads_kv = H;
    problem.seq_q = problem.seq_kv = N;
    problem.head_dim = D;
    problem.causal = 1;
    st = flashcl_plan_create(fcl, &problem, &plan);
    if (st != FLASHCL_SUCCESS) {
        fprintf(stderr, "flashcl_plan_create: %s: %s\n", flashcl_status_string(st), flashcl_context_last_error(fcl));
        goto done;
    }

    /* 4. Enqueue like any OpenCL command: the second run waits on the first's event. */
    cl_event first = NULL, second = NULL;
    st = flashcl_plan_enqueue(plan, qb, kb, vb, ob, NULL, 0, NULL, &first);
    if (st == FLASHCL_SUCCESS)
        st = flashcl_plan_enqueue(plan, qb, kb, vb, ob, NULL, 1, &first, &second);
    if (st != FLASHCL_SUCCESS) {
        fprintf(stderr, "flashcl_plan_enqueue: %s: %s\n", flashcl_status_string(st), flashcl_context_last_error(fcl));
        goto done;
    }
    clEnqueueReadBuffer(queue, ob, CL_TRUE, 0, count * 4, o, 1, &second, NULL);
    clReleaseEvent(first);
    clReleaseEvent(second);

    /* 5. Check the last query of head 1 (which sees every key) against float64. */
    const int h = 1, i = N - 1;
    const double scale = 1.0 / sqrt((double)D);
    double s[N], m = -INFINITY, l = 0.0, worst = 0.0;
    for (int j = 0; j < N; ++j) {
        double dot = 0.0;
        for (int d = 0; d < D; ++d)
            dot += (double)q[((size_t)i * H + h) * D + d] * k[((size_t)j * H + h) * D + d];
        s[j] = dot * scale;
        m = s[j] > m ? s[j] : m;
    }
    for (int j = 0; j < N; ++j)
        l += exp(s[j] - m);
    for (int d = 0; d < D; ++d) {
        double ref = 0.0;
        for (int j = 0; j < N; ++j)
            ref += exp(s[j] - m) / l * v[((size_t)j * H + h) * D + d];
        const double err = fabs(ref - o[((size_t)i * H + h) * D + d]);
        worst = err > worst ? err : worst;
    }
    printf("flashcl %s on the application's context: max error %.2e on row %d of head %d\n",
           flashcl_version_string(), worst, i, h);
    rc = worst < 1e-5 ? 0 : 1;
done:
    flashcl_plan_destroy(&plan);
    flashcl_context_destroy(&fcl);
    clReleaseMemObject(qb);
    clReleaseMemObject(kb);
    clReleaseMemObject(vb);
    clReleaseMemObject(ob);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    free(q);
    free(k);
    free(v);
    free(o);
    return rc;
}
