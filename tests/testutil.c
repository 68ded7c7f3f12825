/* SPDX-License-Identifier: MIT */
/*
 * testutil.c: per-device suite runner and buffer helpers for the Check suites (see testutil.h).
 */
#include "testutil.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cl_context tu_context;
cl_device_id tu_device;
cl_command_queue tu_queue;
char tu_device_label[512];

int tu_matches(const char *label, const char *filter)
{
    if (!filter || !*filter)
        return 1;
    size_t n = strlen(filter);
    for (const char *h = label; *h; ++h) {
        size_t i = 0;
        while (i < n && h[i] && tolower((unsigned char)h[i]) == tolower((unsigned char)filter[i]))
            ++i;
        if (i == n)
            return 1;
    }
    return 0;
}

static int run_once(Suite *(*make_suite)(void))
{
    SRunner *sr = srunner_create(make_suite());
    srunner_set_fork_status(sr, CK_NOFORK); /* OpenCL runtimes do not survive fork() */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed;
}

int tu_run(Suite *(*make_suite)(void), int needs_device)
{
    if (!needs_device)
        return run_once(make_suite) ? 1 : 0;
    const char *filter = getenv("FLASHCL_TEST_PLATFORM");
    cl_uint np = 0;
    if (clGetPlatformIDs(0, NULL, &np) != CL_SUCCESS || np == 0) {
        printf("SKIP: no OpenCL platform\n");
        return 77;
    }
    cl_platform_id plats[16];
    if (np > 16)
        np = 16;
    clGetPlatformIDs(np, plats, NULL);
    int devices = 0, failed = 0;
    for (cl_uint p = 0; p < np; ++p) {
        cl_device_id devs[16];
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 16, devs, &nd) != CL_SUCCESS)
            continue;
        if (nd > 16)
            nd = 16;
        char pname[256] = "";
        clGetPlatformInfo(plats[p], CL_PLATFORM_NAME, sizeof pname - 1, pname, NULL);
        for (cl_uint d = 0; d < nd; ++d) {
            char dname[256] = "";
            clGetDeviceInfo(devs[d], CL_DEVICE_NAME, sizeof dname - 1, dname, NULL);
            snprintf(tu_device_label, sizeof tu_device_label, "%s / %s", pname, dname);
            if (!tu_matches(tu_device_label, filter))
                continue;
            cl_int err;
            tu_context = clCreateContext(NULL, 1, &devs[d], NULL, NULL, &err);
            if (!tu_context)
                continue;
            tu_device = devs[d];
            tu_queue = clCreateCommandQueue(tu_context, tu_device, CL_QUEUE_PROFILING_ENABLE, &err);
            if (!tu_queue) {
                clReleaseContext(tu_context);
                continue;
            }
            ++devices;
            printf("=== device: %s\n", tu_device_label);
            fflush(stdout);
            failed += run_once(make_suite);
            clReleaseCommandQueue(tu_queue);
            clReleaseContext(tu_context);
        }
    }
    if (!devices) {
        printf("SKIP: no OpenCL device matches FLASHCL_TEST_PLATFORM='%s'\n", filter ? filter : "");
        return 77;
    }
    return failed ? 1 : 0;
}

flashcl_context *tu_context_create(void)
{
    flashcl_settings s;
    flashcl_settings_default(&s);
    s.disk_cache = 0;
    s.validate = 0;
    flashcl_context *ctx = NULL;
    flashcl_status st = flashcl_context_create(tu_context, tu_device, tu_queue, &s, &ctx);
    ck_assert_msg(st == FLASHCL_SUCCESS, "flashcl_context_create: %s", flashcl_status_string(st));
    return ctx;
}

/* The placed buffers (tu_offsets): each one's offset, contents' size and total size. */
#define TU_MAX_PLACED 64
static struct {
    cl_mem m;
    size_t offset, bytes, total;
} placed[TU_MAX_PLACED];
static size_t n_placed, place_unit;
static const unsigned char margin_byte = 0xa5;

void tu_offsets(size_t unit)
{
    place_unit = unit;
    n_placed = 0;
}

size_t tu_offset_of(cl_mem m)
{
    for (size_t i = 0; i < n_placed; ++i)
        if (placed[i].m == m)
            return placed[i].offset;
    return 0;
}

cl_mem tu_buffer(size_t bytes, const void *host)
{
    cl_int err;
    const size_t offset = place_unit ? place_unit * (1 + n_placed % 9) : 0;
    const size_t total = (bytes ? bytes : 4) + (place_unit ? offset + 64 : 0);
    cl_mem m = clCreateBuffer(tu_context, CL_MEM_READ_WRITE, total, NULL, &err);
    ck_assert_msg(m != NULL, "clCreateBuffer(%zu) failed: %d", total, (int)err);
    if (place_unit) {
        ck_assert_uint_lt(n_placed, TU_MAX_PLACED);
        placed[n_placed].m = m;
        placed[n_placed].offset = offset;
        placed[n_placed].bytes = bytes;
        placed[n_placed].total = total;
        ++n_placed;
        err = clEnqueueFillBuffer(tu_queue, m, &margin_byte, 1, 0, total, 0, NULL, NULL);
        ck_assert_msg(err == CL_SUCCESS, "filling the margins failed: %d", (int)err);
    }
    if (host) {
        err = clEnqueueWriteBuffer(tu_queue, m, CL_TRUE, offset, bytes, host, 0, NULL, NULL);
    } else {
        const unsigned char poison = 0xff;
        const size_t n = bytes ? bytes : place_unit ? 0 : 4; /* (a placed empty tensor is all margin) */
        err = n ? clEnqueueFillBuffer(tu_queue, m, &poison, 1, offset, n, 0, NULL, NULL) : CL_SUCCESS;
        if (err == CL_SUCCESS)
            err = clFinish(tu_queue);
    }
    ck_assert_msg(err == CL_SUCCESS, "initialising a buffer failed: %d", (int)err);
    return m;
}

void tu_check_margins(void)
{
    for (size_t i = 0; i < n_placed; ++i) {
        unsigned char *h = malloc(placed[i].total);
        ck_assert_ptr_nonnull(h);
        cl_int err = clEnqueueReadBuffer(tu_queue, placed[i].m, CL_TRUE, 0, placed[i].total, h, 0, NULL, NULL);
        ck_assert_msg(err == CL_SUCCESS, "clEnqueueReadBuffer failed: %d", (int)err);
        for (size_t b = 0; b < placed[i].total; ++b)
            if (b < placed[i].offset || b >= placed[i].offset + placed[i].bytes)
                ck_assert_msg(h[b] == margin_byte, "buffer %zu (tensor at offset %zu, %zu bytes): byte %zu outside "
                              "the tensor was written (0x%02x)", i, placed[i].offset, placed[i].bytes, b, h[b]);
        free(h);
    }
}

void *tu_read(cl_mem m, size_t bytes)
{
    void *h = malloc(bytes ? bytes : 1);
    ck_assert_ptr_nonnull(h);
    cl_int err = clEnqueueReadBuffer(tu_queue, m, CL_TRUE, tu_offset_of(m), bytes, h, 0, NULL, NULL);
    ck_assert_msg(err == CL_SUCCESS, "clEnqueueReadBuffer failed: %d", (int)err);
    return h;
}
