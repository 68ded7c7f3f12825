/* CLBlast's SGEMM on the NVIDIA OpenCL device, M = N = K = 8192 (the reference for what fp32 FMA work
 * reaches through NVIDIA's OpenCL compiler): median of 10 runs after 2 warm-ups, each from a marker's
 * start before the call to a marker's end after it (the event CLBlast returns is its last kernel's only).
 * Build: gcc -O2 sgemm.c -lclblast -lOpenCL */
#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <clblast_c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(void)
{
    cl_platform_id ps[8];
    cl_uint np = 0;
    cl_device_id dev = NULL;
    clGetPlatformIDs(8, ps, &np);
    for (cl_uint i = 0; i < np && !dev; ++i) {
        char name[256];
        clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
        if (strstr(name, "NVIDIA"))
            clGetDeviceIDs(ps[i], CL_DEVICE_TYPE_GPU, 1, &dev, NULL);
    }
    if (!dev)
        return 77;
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    cl_command_queue q = clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &err);
    const size_t n = 8192, bytes = n * n * sizeof(float);
    float *h = malloc(bytes);
    for (size_t i = 0; i < n * n; ++i)
        h[i] = (float)((i * 2654435761u) % 1000) / 1000.0f - 0.5f;
    cl_mem a = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, h, &err);
    cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, h, &err);
    cl_mem c = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    double ms[10];
    for (int i = -2; i < 10; ++i) {
        cl_event before, after;
        clEnqueueMarkerWithWaitList(q, 0, NULL, &before);
        const CLBlastStatusCode st = CLBlastSgemm(CLBlastLayoutRowMajor, CLBlastTransposeNo, CLBlastTransposeNo, n, n, n,
                                                  1.0f, a, 0, n, b, 0, n, 0.0f, c, 0, n, &q, NULL);
        if (st != CLBlastSuccess) {
            printf("CLBlastSgemm: %d\n", (int)st);
            return 1;
        }
        clEnqueueMarkerWithWaitList(q, 0, NULL, &after);
        clWaitForEvents(1, &after);
        cl_ulong t0, t1;
        clGetEventProfilingInfo(before, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL);
        clGetEventProfilingInfo(after, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL);
        clReleaseEvent(before);
        clReleaseEvent(after);
        if (i >= 0)
            ms[i] = (t1 - t0) * 1e-6;
    }
    qsort(ms, 10, sizeof ms[0], cmp);
    const double med = (ms[4] + ms[5]) / 2;
    printf("CLBlast SGEMM %zu^3: median %.3f ms (%.3f-%.3f), %.1f TFLOP/s\n", n, med, ms[0], ms[9],
           2.0 * n * n * n / med * 1e-9);
    return 0;
}
