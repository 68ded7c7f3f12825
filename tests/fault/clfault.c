/* SPDX-License-Identifier: MIT */
/*
 * clfault.c: a fault-injecting OpenCL layer for the tests. Preloaded (LD_PRELOAD) in front of the ICD
 * loader, it passes every call through except the one it was armed for, which returns the armed error
 * instead of reaching the driver. Tests arm it through clfault_arm(), found with dlsym: a test that
 * cannot find it (the layer is not preloaded, as under the sanitizer builds) skips.
 *
 * Faults: clEnqueueNDRangeKernel, clCreateBuffer, clWaitForEvents, clFinish, clCreateKernel,
 * clEnqueueReadBuffer, clGetDeviceInfo, clBuildProgram. And a slow compile: clfault_hold_build() makes
 * the next clBuildProgram wait until the test releases it, so a test knows a compile is in progress
 * (and stays in progress) for as long as it needs, however slow or loaded the machine.
 * And fake reports: clfault_fake_private() makes CL_KERNEL_PRIVATE_MEM_SIZE report a size (a GPU
 * compiler that kept registers in memory), clfault_fake_gpu() makes CL_DEVICE_TYPE say GPU.
 */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <dlfcn.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

static char armed_fn[64];
static cl_int armed_err;
static atomic_int skip_calls, fail_calls, fired;

/* Makes the call named `fn` fail with `err` after `skip` successful calls, `count` times (0 disarms). */
void clfault_arm(const char *fn, cl_int err, int skip, int count)
{
    atomic_store(&fail_calls, 0);
    strncpy(armed_fn, fn ? fn : "", sizeof armed_fn - 1);
    armed_err = err;
    atomic_store(&skip_calls, skip);
    atomic_store(&fired, 0);
    atomic_store(&fail_calls, fn ? count : 0);
}

/* How many calls failed since the last clfault_arm. */
int clfault_fired(void)
{
    return atomic_load(&fired);
}

static int should_fail(const char *fn, cl_int *err)
{
    if (atomic_load(&fail_calls) <= 0 || strcmp(fn, armed_fn) != 0)
        return 0;
    if (atomic_fetch_sub(&skip_calls, 1) > 0)
        return 0;
    if (atomic_fetch_sub(&fail_calls, 1) <= 0)
        return 0;
    atomic_fetch_add(&fired, 1);
    *err = armed_err;
    return 1;
}

/* The held build: 0 none reached yet, 1 waiting, 2 passed on when released, 3 passed on at the time limit. */
static atomic_int hold_armed, hold_state, hold_released, hold_max_ms;
static atomic_int builds; /* clBuildProgram calls since clfault_hold_build */

/* The next clBuildProgram (of any thread) waits, before reaching the driver, until clfault_release_build
 * or until max_ms have passed (so a library that never lets the test release it cannot hang it). */
void clfault_hold_build(int max_ms)
{
    atomic_store(&hold_state, 0);
    atomic_store(&hold_released, 0);
    atomic_store(&hold_max_ms, max_ms);
    atomic_store(&builds, 0);
    atomic_store(&hold_armed, 1);
}

void clfault_release_build(void)
{
    atomic_store(&hold_released, 1);
}

int clfault_build_state(void)
{
    return atomic_load(&hold_state);
}

int clfault_build_count(void)
{
    return atomic_load(&builds);
}

static void hold_if_armed(void)
{
    if (!atomic_exchange(&hold_armed, 0))
        return;
    atomic_store(&hold_state, 1);
    const struct timespec ms = {0, 1000000};
    int waited = 0;
    while (!atomic_load(&hold_released) && waited < atomic_load(&hold_max_ms)) {
        nanosleep(&ms, NULL);
        ++waited;
    }
    atomic_store(&hold_state, atomic_load(&hold_released) ? 2 : 3);
}

#define REAL(fn) ((__typeof__(&fn))dlsym(RTLD_NEXT, #fn))

CL_API_ENTRY cl_int CL_API_CALL clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k, cl_uint dim,
                                                       const size_t *off, const size_t *global,
                                                       const size_t *local, cl_uint nw, const cl_event *wl,
                                                       cl_event *ev)
{
    cl_int err;
    if (should_fail("clEnqueueNDRangeKernel", &err))
        return err;
    return REAL(clEnqueueNDRangeKernel)(q, k, dim, off, global, local, nw, wl, ev);
}

CL_API_ENTRY cl_mem CL_API_CALL clCreateBuffer(cl_context c, cl_mem_flags flags, size_t size, void *host,
                                               cl_int *errcode)
{
    cl_int err;
    if (should_fail("clCreateBuffer", &err)) {
        if (errcode)
            *errcode = err;
        return NULL;
    }
    return REAL(clCreateBuffer)(c, flags, size, host, errcode);
}

CL_API_ENTRY cl_int CL_API_CALL clWaitForEvents(cl_uint n, const cl_event *events)
{
    cl_int err;
    if (should_fail("clWaitForEvents", &err)) {
        REAL(clWaitForEvents)(n, events); /* the work still drains; only the report is lost */
        return err;
    }
    return REAL(clWaitForEvents)(n, events);
}

CL_API_ENTRY cl_int CL_API_CALL clFinish(cl_command_queue q)
{
    cl_int err;
    if (should_fail("clFinish", &err)) {
        REAL(clFinish)(q);
        return err;
    }
    return REAL(clFinish)(q);
}

CL_API_ENTRY cl_kernel CL_API_CALL clCreateKernel(cl_program p, const char *name, cl_int *errcode)
{
    cl_int err;
    if (should_fail("clCreateKernel", &err)) {
        if (errcode)
            *errcode = err;
        return NULL;
    }
    return REAL(clCreateKernel)(p, name, errcode);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueReadBuffer(cl_command_queue q, cl_mem m, cl_bool blocking, size_t off,
                                                    size_t size, void *ptr, cl_uint nw, const cl_event *wl,
                                                    cl_event *ev)
{
    cl_int err;
    if (should_fail("clEnqueueReadBuffer", &err)) {
        REAL(clFinish)(q);
        return err;
    }
    return REAL(clEnqueueReadBuffer)(q, m, blocking, off, size, ptr, nw, wl, ev);
}

static atomic_int fake_gpu, fake_private_on, fake_private_left;
static atomic_ulong fake_private_bytes;

/* While on: CL_DEVICE_TYPE reports CL_DEVICE_TYPE_GPU. */
void clfault_fake_gpu(int on)
{
    atomic_store(&fake_gpu, on);
}

/* While on (count >= 0): the next `count` CL_KERNEL_PRIVATE_MEM_SIZE queries report `bytes`, the later
 * ones 0; count < 0 passes the queries through again. */
void clfault_fake_private(unsigned long bytes, int count)
{
    atomic_store(&fake_private_bytes, bytes);
    atomic_store(&fake_private_left, count);
    atomic_store(&fake_private_on, count >= 0);
}

CL_API_ENTRY cl_int CL_API_CALL clGetDeviceInfo(cl_device_id d, cl_device_info what, size_t size, void *value,
                                                size_t *size_ret)
{
    cl_int err;
    if (should_fail("clGetDeviceInfo", &err))
        return err;
    err = REAL(clGetDeviceInfo)(d, what, size, value, size_ret);
    if (err == CL_SUCCESS && what == CL_DEVICE_TYPE && value && size >= sizeof(cl_device_type) && atomic_load(&fake_gpu))
        *(cl_device_type *)value = CL_DEVICE_TYPE_GPU;
    return err;
}

CL_API_ENTRY cl_int CL_API_CALL clGetKernelWorkGroupInfo(cl_kernel k, cl_device_id d, cl_kernel_work_group_info what,
                                                         size_t size, void *value, size_t *size_ret)
{
    const cl_int err = REAL(clGetKernelWorkGroupInfo)(k, d, what, size, value, size_ret);
    if (err == CL_SUCCESS && what == CL_KERNEL_PRIVATE_MEM_SIZE && value && size >= sizeof(cl_ulong) &&
        atomic_load(&fake_private_on))
        *(cl_ulong *)value = atomic_fetch_sub(&fake_private_left, 1) > 0 ? (cl_ulong)atomic_load(&fake_private_bytes) : 0;
    return err;
}

CL_API_ENTRY cl_int CL_API_CALL clBuildProgram(cl_program p, cl_uint n, const cl_device_id *devices,
                                               const char *options,
                                               void(CL_CALLBACK *notify)(cl_program, void *), void *user)
{
    cl_int err;
    atomic_fetch_add(&builds, 1);
    hold_if_armed();
    if (should_fail("clBuildProgram", &err))
        return err;
    return REAL(clBuildProgram)(p, n, devices, options, notify, user);
}
