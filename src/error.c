/* SPDX-License-Identifier: MIT */
/*
 * error.c: status strings, OpenCL error names, and each thread's last-error message per context.
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

/* The last failure is kept per thread: two threads failing at once on one context each read their
 * own message back. Failures without a context (its creation, a NULL context) go to one buffer. */
static _Thread_local char thread_errmsg[1024];
static _Thread_local cl_int thread_cl_error;

/* Failures on a context go to the thread's record of that context. A thread keeps records of its
 * last few contexts, most recently written first (the oldest is reused past FCL_THREAD_RECORDS); a
 * record names its context by address and serial, because a context destroyed by another thread may
 * be followed by a new one at the same address. The records are freed when the thread exits. */
#define FCL_THREAD_RECORDS 8 /* the header promises 8 */
typedef struct error_record {
    const flashcl_context *ctx;
    uint64_t serial;
    cl_int cl_err;
    char *msg;
    struct error_record *next;
} error_record;

/* Where a context's message goes when no record can be allocated. */
static _Thread_local struct {
    const flashcl_context *ctx;
    uint64_t serial;
    cl_int cl_err;
    char msg[512];
} thread_spare;

static pthread_once_t records_once = PTHREAD_ONCE_INIT;
static pthread_key_t records_key;
static atomic_int records_ready;

static void free_records(void *head)
{
    for (error_record *r = head, *next; r; r = next) {
        next = r->next;
        free(r->msg);
        free(r);
    }
}

static void make_records_key(void)
{
    atomic_store(&records_ready, pthread_key_create(&records_key, free_records) == 0);
}

/* A library unloaded while other threads run must not leave their exit calling free_records. */
__attribute__((destructor)) static void delete_records_key(void)
{
    if (atomic_exchange(&records_ready, 0))
        pthread_key_delete(records_key);
}

static error_record *thread_records(void)
{
    pthread_once(&records_once, make_records_key);
    return atomic_load(&records_ready) ? pthread_getspecific(records_key) : NULL;
}

static int is_record_of(const error_record *r, const flashcl_context *ctx)
{
    return r->ctx == ctx && r->serial == ctx->serial;
}

/* Unlinks and returns ctx's record from the list at *head, or NULL. */
static error_record *take_record(error_record **head, const flashcl_context *ctx)
{
    for (error_record **link = head; *link; link = &(*link)->next)
        if (is_record_of(*link, ctx)) {
            error_record *r = *link;
            *link = r->next;
            return r;
        }
    return NULL;
}

static const error_record *find_record(const flashcl_context *ctx)
{
    for (const error_record *r = thread_records(); r; r = r->next)
        if (is_record_of(r, ctx))
            return r;
    return NULL;
}

/* The message in a buffer of its own (a caller may format the previous message into the next). */
static char *format_message(const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, again);
    va_end(again);
    if (n < 0)
        return NULL;
    size_t len = (size_t)n < FLASHCL_ERRMSG_MAX ? (size_t)n : FLASHCL_ERRMSG_MAX - 1;
    char *msg = malloc(len + 1);
    if (msg) {
        va_copy(again, ap);
        vsnprintf(msg, len + 1, fmt, again);
        va_end(again);
    }
    return msg;
}

/* A record for one more context: past FCL_THREAD_RECORDS, the one written longest ago. */
static error_record *new_record(error_record **head)
{
    size_t n = 1;
    error_record **last = head;
    if (*last) {
        for (; (*last)->next; last = &(*last)->next)
            ++n;
        if (n >= FCL_THREAD_RECORDS) {
            error_record *r = *last;
            *last = NULL;
            return r;
        }
    }
    return calloc(1, sizeof(error_record));
}

static void set_context_message(const flashcl_context *ctx, cl_int cl_err, const char *fmt, va_list ap)
{
    error_record *head = thread_records();
    error_record *rec = take_record(&head, ctx);
    if (!rec && atomic_load(&records_ready))
        rec = new_record(&head);
    char *msg = rec ? format_message(fmt, ap) : NULL;
    if (msg) {
        free(rec->msg);
        *rec = (error_record){ctx, ctx->serial, cl_err, msg, head};
        /* Fails only on the thread's first record (the key had no value): nothing else is lost. */
        if (pthread_setspecific(records_key, rec) == 0) {
            if (thread_spare.ctx == ctx)
                thread_spare.ctx = NULL;
            return;
        }
        rec->next = NULL;
    } else if (rec) {
        pthread_setspecific(records_key, head);
    }
    if (rec) {
        free(rec->msg);
        free(rec);
    }
    /* Out of host memory: the message goes to the thread's spare record, cut to its size. */
    vsnprintf(thread_spare.msg, sizeof thread_spare.msg, fmt, ap);
    thread_spare.ctx = ctx;
    thread_spare.serial = ctx->serial;
    thread_spare.cl_err = cl_err;
}

static void set_message(flashcl_context *ctx, cl_int cl_err, const char *fmt, va_list ap)
{
    if (ctx) {
        set_context_message(ctx, cl_err, fmt, ap);
        return;
    }
    vsnprintf(thread_errmsg, sizeof thread_errmsg, fmt, ap);
    thread_cl_error = cl_err;
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

void fcl_forget_errors(const flashcl_context *ctx)
{
    error_record *head = thread_records();
    error_record *rec = take_record(&head, ctx);
    if (rec) {
        free(rec->msg);
        free(rec);
        pthread_setspecific(records_key, head); /* the key has a value already: cannot fail */
    }
    if (thread_spare.ctx == ctx)
        thread_spare.ctx = NULL;
}

const char *flashcl_context_last_error(const flashcl_context *ctx)
{
    if (!ctx)
        return thread_errmsg;
    const error_record *r = find_record(ctx);
    if (r)
        return r->msg;
    if (thread_spare.ctx == ctx && thread_spare.serial == ctx->serial)
        return thread_spare.msg;
    return "";
}

cl_int flashcl_context_last_cl_error(const flashcl_context *ctx)
{
    if (!ctx)
        return thread_cl_error;
    const error_record *r = find_record(ctx);
    if (r)
        return r->cl_err;
    if (thread_spare.ctx == ctx && thread_spare.serial == ctx->serial)
        return thread_spare.cl_err;
    return CL_SUCCESS;
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

/* (internal.h: environment flags, refused by name when malformed) */
flashcl_status fcl_env_flag(const char *who, const char *name, int fallback, int *out)
{
    static const char *const off[] = {"0", "off", "no", "false"}, *const on[] = {"1", "on", "yes", "true"};
    const char *s = getenv(name);
    *out = fallback;
    if (!s || !*s)
        return FLASHCL_SUCCESS;
    for (int i = 0; i < 4; ++i)
        if (!strcmp(s, off[i]) || !strcmp(s, on[i])) {
            *out = !strcmp(s, on[i]);
            return FLASHCL_SUCCESS;
        }
    return fcl_fail(NULL, FLASHCL_INVALID_ARGUMENT, "%s: %s=\"%.40s\": use 1, on, yes, true or 0, off, no, false", who,
                    name, s);
}
