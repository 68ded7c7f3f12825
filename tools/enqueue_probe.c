/* SPDX-License-Identifier: MIT */
/*
 * enqueue_probe.c: what an OpenCL driver's host side costs, apart from flashcl: clSetKernelArg for a
 * buffer, an int and a 256-byte struct; clGetMemObjectInfo of a buffer's size; clEnqueueNDRangeKernel of an empty kernel with and without an
 * event, on a profiling queue and a plain one; and the round trip from enqueue to the event's completion
 * for one empty kernel, two in order (a split step and its combine), a marker, and a kernel with
 * flash_decode_mma's 15 buffers and a 256-byte struct, with and without its buffers set again first; and
 * the profiling events' start to end of the empty kernel, alone and over a decode step's grid, and
 * behind a fill that keeps the queue busy (flashcl bench's device_us).
 * Medians over many calls, in microseconds, with the 10th and 90th percentiles. docs/design/decode_mma.md
 * (the host's side of a step) reads it beside `flashcl bench --decode`'s host_enqueue_us and
 * host_step_us. Not installed.
 *
 *   enqueue_probe [DEVICE] [--json]   DEVICE: as flashcl's --device ("P:D" or a case-insensitive
 *                                     substring of "platform / device"; default $FLASHCL_DEVICE, a GPU)
 */
#include <flashcl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { REPS = 2000, BATCH = 50, N_MEM = 15 };

static const char source[] =
    "typedef struct { int v[64]; } blob;\n"
    "__kernel void empty(__global int *a) { if (get_global_id(0) == 1u << 30) a[0] = 1; }\n"
    "__kernel void wide(__global int *a0, __global int *a1, __global int *a2, __global int *a3,\n"
    "  __global int *a4, __global int *a5, __global int *a6, __global int *a7, __global int *a8,\n"
    "  __global int *a9, __global int *a10, __global int *a11, __global int *a12, __global int *a13,\n"
    "  __global int *a14, const int n, const blob b)\n"
    "{ if (get_global_id(0) == 1u << 30) a0[0] = n + b.v[3] + a14[0]; }\n";

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

static int cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct {
    const char *name, *what;
    double p10, median, p90;
} stat;

static stat summarize(const char *name, const char *what, double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return (stat){name, what, v[n / 10], v[n / 2], v[n - 1 - n / 10]};
}

#define CHECK(x, what)                                                                                             \
    do {                                                                                                           \
        cl_int e_ = (x);                                                                                           \
        if (e_ != CL_SUCCESS) {                                                                                    \
            fprintf(stderr, "enqueue_probe: %s failed (%d)\n", what, (int)e_);                                     \
            return 1;                                                                                              \
        }                                                                                                          \
    } while (0)

int main(int argc, char **argv)
{
    const char *sel = NULL;
    int json = 0;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--json"))
            json = 1;
        else if (argv[i][0] == '-') {
            const int help = !strcmp(argv[i], "--help") || !strcmp(argv[i], "-h");
            fprintf(help ? stdout : stderr,
                    "usage: enqueue_probe [DEVICE] [--json]\n"
                    "the host's cost of OpenCL calls on one device (DEVICE: \"P:D\" or a substring of \"platform /\n"
                    "device\"; default $FLASHCL_DEVICE, a GPU, a CPU): clSetKernelArg, clEnqueueNDRangeKernel of an\n"
                    "empty kernel, and the round trip from enqueue to completion; medians of %d calls in\n"
                    "microseconds, with p10 and p90\n",
                    REPS);
            return help ? 0 : 2;
        } else
            sel = argv[i];
    }
    /* (flashcl picks the device as its command does; every call timed below is OpenCL's alone) */
    flashcl_context *fctx = NULL;
    const flashcl_status fst = flashcl_context_create_default(sel, NULL, &fctx);
    if (fst != FLASHCL_SUCCESS) {
        fprintf(stderr, "enqueue_probe: %s\n", flashcl_context_last_error(NULL));
        return fst == FLASHCL_NO_DEVICE ? 77 : 1;
    }
    cl_device_id dev;
    cl_context ctx;
    flashcl_context_cl_objects(fctx, &ctx, &dev, NULL);
    char full[420];
    snprintf(full, sizeof full, "%s / %s", flashcl_context_profile(fctx)->platform_name,
             flashcl_context_profile(fctx)->name);
    cl_int err;
    cl_command_queue qp = clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &err);
    CHECK(err, "clCreateCommandQueue (profiling)");
    cl_command_queue qn = clCreateCommandQueue(ctx, dev, 0, &err);
    CHECK(err, "clCreateCommandQueue");
    const char *src = source;
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err, "clCreateProgramWithSource");
    CHECK(clBuildProgram(prog, 1, &dev, "", NULL, NULL), "clBuildProgram");
    cl_kernel empty = clCreateKernel(prog, "empty", &err);
    CHECK(err, "clCreateKernel(empty)");
    cl_kernel wide = clCreateKernel(prog, "wide", &err);
    CHECK(err, "clCreateKernel(wide)");
    cl_mem buf[N_MEM];
    for (int i = 0; i < N_MEM; ++i) {
        buf[i] = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4096, NULL, &err);
        CHECK(err, "clCreateBuffer");
    }
    const int n = 7;
    int blob[64] = {0};
    for (int i = 0; i < N_MEM; ++i)
        CHECK(clSetKernelArg(wide, (cl_uint)i, sizeof(cl_mem), &buf[i]), "clSetKernelArg(wide)");
    CHECK(clSetKernelArg(wide, N_MEM, sizeof n, &n), "clSetKernelArg(n)");
    CHECK(clSetKernelArg(wide, N_MEM + 1, sizeof blob, blob), "clSetKernelArg(blob)");
    CHECK(clSetKernelArg(empty, 0, sizeof(cl_mem), &buf[0]), "clSetKernelArg(empty)");
    const size_t global = 32, local = 32;

    static double v[REPS];
    stat s[20];
#define PUSH(x)                                                                                              \
    do {                                                                                                     \
        if (ns == (int)(sizeof s / sizeof *s)) {                                                             \
            fprintf(stderr, "enqueue_probe: more results than the table's %d\n", (int)(sizeof s / sizeof *s)); \
            return 1;                                                                                        \
        }                                                                                                    \
        s[ns++] = (x);                                                                                       \
    } while (0)
    int ns = 0;
    /* clSetKernelArg: batches of BATCH calls, a call's mean per batch */
    for (int kind = 0; kind < 3; ++kind) {
        for (int r = 0; r < REPS / BATCH + 10; ++r) {
            const double t0 = now_us();
            for (int i = 0; i < BATCH; ++i) {
                cl_int e = kind == 0   ? clSetKernelArg(wide, (cl_uint)(i % N_MEM), sizeof(cl_mem), &buf[(i + r) % N_MEM])
                           : kind == 1 ? clSetKernelArg(wide, N_MEM, sizeof n, &n)
                                       : clSetKernelArg(wide, N_MEM + 1, sizeof blob, blob);
                CHECK(e, "clSetKernelArg");
            }
            if (r >= 10)
                v[r - 10] = (now_us() - t0) / BATCH;
        }
        static const char *names[3] = {"set_arg_buffer", "set_arg_int", "set_arg_struct256"};
        static const char *whats[3] = {"clSetKernelArg of a cl_mem", "clSetKernelArg of an int",
                                       "clSetKernelArg of a 256-byte struct"};
        PUSH(summarize(names[kind], whats[kind], v, REPS / BATCH));
    }
    for (int i = 0; i < N_MEM; ++i) /* (the batches above moved them: back in place) */
        CHECK(clSetKernelArg(wide, (cl_uint)i, sizeof(cl_mem), &buf[i]), "clSetKernelArg(wide)");
    /* clGetMemObjectInfo (an enqueue's check of a buffer: its size, context and type), batches as above */
    for (int r = 0; r < REPS / BATCH + 10; ++r) {
        const double t0 = now_us();
        for (int i = 0; i < BATCH; ++i) {
            size_t size = 0;
            CHECK(clGetMemObjectInfo(buf[i % N_MEM], CL_MEM_SIZE, sizeof size, &size, NULL), "clGetMemObjectInfo");
        }
        if (r >= 10)
            v[r - 10] = (now_us() - t0) / BATCH;
    }
    PUSH(summarize("mem_info", "clGetMemObjectInfo of a cl_mem's size", v, REPS / BATCH));
    /* the enqueue call alone: an empty kernel, the queue drained every BATCH calls outside the timing */
    for (int kind = 0; kind < 4; ++kind) {
        cl_command_queue q = kind >= 2 ? qn : qp;
        for (int r = 0; r < REPS + 100; ++r) {
            if (r % BATCH == 0)
                clFinish(q);
            cl_event ev = NULL;
            const double t0 = now_us();
            CHECK(clEnqueueNDRangeKernel(q, empty, 1, NULL, &global, &local, 0, NULL, kind == 0 || kind == 3 ? NULL : &ev),
                  "clEnqueueNDRangeKernel");
            const double t1 = now_us();
            if (ev)
                clReleaseEvent(ev);
            if (r >= 100)
                v[r - 100] = t1 - t0;
        }
        clFinish(q);
        static const char *names[4] = {"enqueue", "enqueue_event", "enqueue_event_plain_queue", "enqueue_plain_queue"};
        static const char *whats[4] = {"clEnqueueNDRangeKernel, no event (profiling queue)",
                                       "clEnqueueNDRangeKernel with an event (profiling queue)",
                                       "clEnqueueNDRangeKernel with an event (queue without profiling)",
                                       "clEnqueueNDRangeKernel, no event (queue without profiling)"};
        PUSH(summarize(names[kind], whats[kind], v, REPS));
    }
    /* round trips from the first call to the event's completion, on an idle queue (as flashcl bench's
     * host_step_us) */
    for (int kind = 0; kind < 6; ++kind) {
        cl_command_queue q = kind == 4 ? qn : qp;
        for (int r = 0; r < REPS / 2 + 50; ++r) {
            clFinish(q);
            cl_event ev = NULL;
            const double t0 = now_us();
            if (kind == 2)
                CHECK(clEnqueueMarkerWithWaitList(q, 0, NULL, &ev), "clEnqueueMarkerWithWaitList");
            else {
                if (kind == 3)
                    for (int i = 0; i < N_MEM; ++i)
                        CHECK(clSetKernelArg(wide, (cl_uint)i, sizeof(cl_mem), &buf[(i + r) % N_MEM]), "clSetKernelArg");
                if (kind == 1)
                    CHECK(clEnqueueNDRangeKernel(q, empty, 1, NULL, &global, &local, 0, NULL, NULL), "enqueue");
                CHECK(clEnqueueNDRangeKernel(q, kind == 3 || kind == 5 ? wide : empty, 1, NULL, &global, &local, 0, NULL, &ev),
                      "clEnqueueNDRangeKernel");
            }
            CHECK(clWaitForEvents(1, &ev), "clWaitForEvents");
            const double t1 = now_us();
            clReleaseEvent(ev);
            if (r >= 50)
                v[r - 50] = t1 - t0;
        }
        static const char *names[6] = {"step_one", "step_two", "step_marker", "step_15_buffers", "step_one_plain_queue",
                                       "step_wide"};
        static const char *whats[6] = {
            "enqueue to completion: one empty kernel", "enqueue to completion: two empty kernels in order",
            "enqueue to completion: a marker", "15 buffers set, then one kernel to completion",
            "enqueue to completion: one empty kernel (queue without profiling)",
            "enqueue to completion: the 15-buffer kernel, its arguments as they were"};
        PUSH(summarize(names[kind], whats[kind], v, REPS / 2));
    }
    /* the kernel's own time as profiling events give it (CL_PROFILING_COMMAND_START to END, which
     * `flashcl bench`'s kernel figures are), of an empty kernel: one work-group of 32, and a decode step's
     * grid (128 work-groups of 128: batch 1 x 8192's 16 splits of 8 KV heads) */
    for (int kind = 0; kind < 2; ++kind) {
        const size_t g = kind ? 128 * 128 : 32, l = kind ? 128 : 32;
        for (int r = 0; r < REPS / 2 + 50; ++r) {
            cl_event ev = NULL;
            CHECK(clEnqueueNDRangeKernel(qp, empty, 1, NULL, &g, &l, 0, NULL, &ev), "clEnqueueNDRangeKernel");
            CHECK(clWaitForEvents(1, &ev), "clWaitForEvents");
            cl_ulong t0 = 0, t1 = 0;
            CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL), "profiling start");
            CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL), "profiling end");
            clReleaseEvent(ev);
            if (r >= 50)
                v[r - 50] = (double)(t1 - t0) * 1e-3;
        }
        PUSH(summarize(kind ? "kernel_grid" : "kernel_empty",
                            kind ? "profiling start to end: the empty kernel, 128 work-groups of 128"
                                 : "profiling start to end: the empty kernel, one work-group of 32",
                            v, REPS / 2));
    }
    /* flashcl bench's device_us: a fill of a pad buffer keeps the queue busy while the kernel is enqueued,
     * the fill's end to the kernel's end: the empty kernel's own time plus the gap between two commands
     * on a busy queue. The pad doubles from 1 MiB (up to 256 MiB and a quarter of the largest buffer)
     * until its fill lasts 50 us; a sample counts only where the fill was still running once the kernel
     * was flushed. */
    {
        cl_mem pad = NULL;
        size_t pad_bytes = (size_t)1 << 20;
        const cl_uint zero = 0;
        int sized = 0;
        cl_ulong max_alloc = 0;
        clGetDeviceInfo(dev, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc, NULL);
        const size_t most = max_alloc / 4 < ((size_t)256 << 20) ? (size_t)(max_alloc / 4) : ((size_t)256 << 20);
        for (; !sized && pad_bytes <= most; pad_bytes *= 2) {
            cl_int err;
            if (pad)
                clReleaseMemObject(pad);
            pad = clCreateBuffer(ctx, CL_MEM_READ_WRITE, pad_bytes, NULL, &err);
            CHECK(err, "clCreateBuffer (pad)");
            cl_ulong t0 = 0, t1 = 0;
            for (int r = 0; r < 2; ++r) { /* (the second fill: the first may place the buffer) */
                cl_event fill = NULL;
                CHECK(clEnqueueFillBuffer(qp, pad, &zero, sizeof zero, 0, pad_bytes, 0, NULL, &fill),
                      "clEnqueueFillBuffer");
                CHECK(clWaitForEvents(1, &fill), "clWaitForEvents");
                CHECK(clGetEventProfilingInfo(fill, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL), "profiling start");
                CHECK(clGetEventProfilingInfo(fill, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL), "profiling end");
                clReleaseEvent(fill);
            }
            sized = t1 > t0 && (double)(t1 - t0) * 1e-3 >= 50.0;
            if (sized)
                break;
        }
        int taken = 0;
        for (int r = 0; sized && r < REPS + 50 && taken < REPS / 2; ++r) {
            cl_event fill = NULL, ev = NULL;
            const size_t g = 32, l = 32;
            cl_int status = CL_COMPLETE;
            CHECK(clEnqueueFillBuffer(qp, pad, &zero, sizeof zero, 0, pad_bytes, 0, NULL, &fill),
                  "clEnqueueFillBuffer");
            CHECK(clFlush(qp), "clFlush");
            CHECK(clEnqueueNDRangeKernel(qp, empty, 1, NULL, &g, &l, 0, NULL, &ev), "clEnqueueNDRangeKernel");
            CHECK(clFlush(qp), "clFlush");
            CHECK(clGetEventInfo(fill, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL),
                  "clGetEventInfo");
            CHECK(clWaitForEvents(1, &ev), "clWaitForEvents");
            cl_ulong t0 = 0, t1 = 0;
            CHECK(clGetEventProfilingInfo(fill, CL_PROFILING_COMMAND_END, sizeof t0, &t0, NULL), "profiling end");
            CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL), "profiling end");
            clReleaseEvent(fill);
            clReleaseEvent(ev);
            if (r >= 50 && status != CL_COMPLETE)
                v[taken++] = (double)(t1 - t0) * 1e-3;
        }
        if (pad)
            clReleaseMemObject(pad);
        if (taken > 0)
            PUSH(summarize("kernel_padded", "a busy queue's fill end to the empty kernel's end (flashcl bench's device_us)",
                           v, taken));
    }
    if (json) {
        printf("{\"device\": \"%s\", \"reps\": %d, \"results\": [", full, REPS);
        for (int i = 0; i < ns; ++i)
            printf("%s\n  {\"name\": \"%s\", \"what\": \"%s\", \"p10_us\": %.3f, \"median_us\": %.3f, \"p90_us\": %.3f}",
                   i ? "," : "", s[i].name, s[i].what, s[i].p10, s[i].median, s[i].p90);
        printf("\n]}\n");
    } else {
        printf("enqueue_probe: %s (medians, p10-p90, microseconds)\n", full);
        for (int i = 0; i < ns; ++i)
            printf("  %-26s %9.3f  [%.3f-%.3f]  %s\n", s[i].name, s[i].median, s[i].p10, s[i].p90, s[i].what);
    }
    for (int i = 0; i < N_MEM; ++i)
        clReleaseMemObject(buf[i]);
    clReleaseKernel(empty);
    clReleaseKernel(wide);
    clReleaseProgram(prog);
    clReleaseCommandQueue(qp);
    clReleaseCommandQueue(qn);
    flashcl_context_destroy(&fctx);
    return 0;
}
