/*
 * error.c: status strings, OpenCL error names, and the per-context last-error message.
 * Every failure path in the library ends in fcl_fail() so the caller always gets a message.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *flashcl_status_string(flashcl_status status)
{
    switch (status) {
#define FLASHCL_STATUS_TEXT_(name, value, text) \
    case FLASHCL_##name:                        \
        return text;
        FLASHCL_STATUS_MAP(FLASHCL_STATUS_TEXT_)
#undef FLASHCL_STATUS_TEXT_
    }
    return "unknown status";
}

const char *flashcl_status_name(flashcl_status status)
{
    switch (status) {
#define FLASHCL_STATUS_NAME_(name, value, text) \
    case FLASHCL_##name:                        \
        return #name;
        FLASHCL_STATUS_MAP(FLASHCL_STATUS_NAME_)
#undef FLASHCL_STATUS_NAME_
    }
    return "UNKNOWN";
}

const char *fcl_cl_error_name(cl_int err)
{
    switch (err) {
#define E(x) \
    case x:  \
        return #x;
        E(CL_SUCCESS) E(CL_DEVICE_NOT_FOUND) E(CL_DEVICE_NOT_AVAILABLE) E(CL_COMPILER_NOT_AVAILABLE)
        E(CL_MEM_OBJECT_ALLOCATION_FAILURE) E(CL_OUT_OF_RESOURCES) E(CL_OUT_OF_HOST_MEMORY)
        E(CL_PROFILING_INFO_NOT_AVAILABLE) E(CL_MEM_COPY_OVERLAP) E(CL_BUILD_PROGRAM_FAILURE)
        E(CL_MAP_FAILURE) E(CL_MISALIGNED_SUB_BUFFER_OFFSET) E(CL_COMPILE_PROGRAM_FAILURE)
        E(CL_LINKER_NOT_AVAILABLE) E(CL_LINK_PROGRAM_FAILURE) E(CL_INVALID_VALUE)
        E(CL_INVALID_DEVICE_TYPE) E(CL_INVALID_PLATFORM) E(CL_INVALID_DEVICE) E(CL_INVALID_CONTEXT)
        E(CL_INVALID_QUEUE_PROPERTIES) E(CL_INVALID_COMMAND_QUEUE) E(CL_INVALID_HOST_PTR)
        E(CL_INVALID_MEM_OBJECT) E(CL_INVALID_BINARY) E(CL_INVALID_BUILD_OPTIONS) E(CL_INVALID_PROGRAM)
        E(CL_INVALID_PROGRAM_EXECUTABLE) E(CL_INVALID_KERNEL_NAME) E(CL_INVALID_KERNEL_DEFINITION)
        E(CL_INVALID_KERNEL) E(CL_INVALID_ARG_INDEX) E(CL_INVALID_ARG_VALUE) E(CL_INVALID_ARG_SIZE)
        E(CL_INVALID_KERNEL_ARGS) E(CL_INVALID_WORK_DIMENSION) E(CL_INVALID_WORK_GROUP_SIZE)
        E(CL_INVALID_WORK_ITEM_SIZE) E(CL_INVALID_GLOBAL_OFFSET) E(CL_INVALID_EVENT_WAIT_LIST)
        E(CL_INVALID_EVENT) E(CL_INVALID_OPERATION) E(CL_INVALID_BUFFER_SIZE)
        E(CL_INVALID_GLOBAL_WORK_SIZE) E(CL_INVALID_PROPERTY)
#undef E
    }
    return "CL_UNKNOWN_ERROR";
}

flashcl_status fcl_status_from_cl(cl_int err)
{
    switch (err) {
    case CL_SUCCESS:
        return FLASHCL_SUCCESS;
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
    case CL_OUT_OF_RESOURCES:
        return FLASHCL_OUT_OF_DEVICE_MEMORY;
    case CL_OUT_OF_HOST_MEMORY:
        return FLASHCL_OUT_OF_HOST_MEMORY;
    case CL_BUILD_PROGRAM_FAILURE:
        return FLASHCL_BUILD_FAILED;
    default:
        return FLASHCL_OPENCL_ERROR;
    }
}

/* Failures that happen before a context exists (context creation) are kept per thread. */
static _Thread_local char thread_errmsg[1024];
static _Thread_local cl_int thread_cl_error;

static void set_message(flashcl_context *ctx, cl_int cl_err, const char *fmt, va_list ap)
{
    if (!ctx) {
        vsnprintf(thread_errmsg, sizeof thread_errmsg, fmt, ap);
        thread_cl_error = cl_err;
        return;
    }
    pthread_mutex_lock(&ctx->err_lock);
    vsnprintf(ctx->errmsg, sizeof ctx->errmsg, fmt, ap);
    ctx->last_cl_error = cl_err;
    pthread_mutex_unlock(&ctx->err_lock);
}

static void set_message_cl(flashcl_context *ctx, cl_int cl_err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_message(ctx, cl_err, fmt, ap);
    va_end(ap);
}

flashcl_status fcl_fail(flashcl_context *ctx, flashcl_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_message(ctx, CL_SUCCESS, fmt, ap);
    va_end(ap);
    return status;
}

flashcl_status fcl_fail_code(flashcl_context *ctx, flashcl_status status, cl_int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_message(ctx, err, fmt, ap);
    va_end(ap);
    return status;
}

flashcl_status fcl_fail_cl(flashcl_context *ctx, cl_int err, const char *what)
{
    set_message_cl(ctx, err, "%s failed: %s (%d)", what, fcl_cl_error_name(err), (int)err);
    return fcl_status_from_cl(err);
}

const char *flashcl_context_last_error(const flashcl_context *ctx)
{
    return ctx ? ctx->errmsg : thread_errmsg;
}

cl_int flashcl_context_last_cl_error(const flashcl_context *ctx)
{
    return ctx ? ctx->last_cl_error : thread_cl_error;
}

char *fcl_strdup(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

void fcl_strlcpy(char *dst, const char *src, size_t n)
{
    if (!n)
        return;
    size_t len = src ? strlen(src) : 0;
    if (len >= n)
        len = n - 1;
    if (len)
        memcpy(dst, src, len);
    dst[len] = '\0';
}
