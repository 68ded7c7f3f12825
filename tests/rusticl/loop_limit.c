/* SPDX-License-Identifier: MIT */
/*
 * loop_limit.c: minimal reproducer of Mesa llvmpipe's loop limiter (rusticl, Mesa 22.3): a work-item
 * stops iterating after 65535 loop iterations and carries on with wrong values, silently.
 * Build: cc loop_limit.c -lOpenCL -o loop_limit; run: RUSTICL_ENABLE=llvmpipe ./loop_limit
 * Expected: every line prints sum == n. Seen on rusticl/llvmpipe: sum stops at 65535.
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *src =
    "__kernel void count(const int n, __global float *out)\n"
    "{\n"
    "    float s = 0.0f;\n"
    "    for (int i = 0; i < n; ++i)\n"
    "        s += 1.0f;\n"
    "    out[get_global_id(0)] = s;\n"
    "}\n";

int main(void)
{
    cl_platform_id plats[8];
    cl_uint np = 0;
    clGetPlatformIDs(8, plats, &np);
    for (cl_uint p = 0; p < np; ++p) {
        char name[256] = "";
        clGetPlatformInfo(plats[p], CL_PLATFORM_NAME, sizeof name, name, NULL);
        cl_device_id dev;
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 1, &dev, &nd) != CL_SUCCESS || !nd)
            continue;
        cl_int err;
        cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
        cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
        cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
        clBuildProgram(prog, 1, &dev, "", NULL, NULL);
        cl_kernel k = clCreateKernel(prog, "count", &err);
        cl_mem out = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof(float), NULL, &err);
        const cl_int ns[] = {1000, 65535, 65536, 100000};
        for (int i = 0; i < 4; ++i) {
            float s = -1.0f;
            size_t one = 1;
            clSetKernelArg(k, 0, sizeof(cl_int), &ns[i]);
            clSetKernelArg(k, 1, sizeof(cl_mem), &out);
            clEnqueueNDRangeKernel(q, k, 1, NULL, &one, NULL, 0, NULL, NULL);
            clEnqueueReadBuffer(q, out, CL_TRUE, 0, sizeof s, &s, 0, NULL, NULL);
            printf("%-30s n=%-7d sum=%-9.0f %s\n", name, (int)ns[i], (double)s, s == (float)ns[i] ? "ok" : "WRONG");
        }
        clReleaseMemObject(out);
        clReleaseKernel(k);
        clReleaseProgram(prog);
        clReleaseCommandQueue(q);
        clReleaseContext(ctx);
    }
    return 0;
}
