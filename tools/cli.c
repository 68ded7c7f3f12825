/* SPDX-License-Identifier: MIT */
/*
 * cli.c: the helpers the flashcl command's subcommands share (see cli.h): option parsing, failure
 * messages, JSON strings, timing from profiling events, FLOP counts and mask and tile descriptions.
 */
#define _XOPEN_SOURCE 700 /* realpath (X/Open, beyond the project's POSIX 2008) */

#include "cli.h"
#include "npy.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int cli_getopt(const char *cmd, int argc, char **argv, const char *shorts, const struct option *longs)
{
    /* '+': stop at the first word that is no option (no reordering: a stray word is an error, not
     * silently moved); ':': a missing value returns ':' instead of a message of getopt's own. */
    char spec[64];
    snprintf(spec, sizeof spec, "+:%s", shorts);
    opterr = 0;
    const int at = optind;
    const int c = getopt_long(argc, argv, spec, longs, NULL);
    const char *word = at < argc ? argv[at] : "";
    if (c == -1 && optind < argc)
        fprintf(stderr, "flashcl %s: unexpected argument '%s' (see flashcl %s --help)\n", cmd, argv[optind], cmd);
    else if (c == ':')
        fprintf(stderr, "flashcl %s: %s needs a value\n", cmd, word);
    else if (c == '?' && optopt && !strncmp(word, "--", 2) && strchr(word, '='))
        fprintf(stderr, "flashcl %s: %.*s takes no value\n", cmd, (int)(strchr(word, '=') - word), word);
    else if (c == '?')
        fprintf(stderr, "flashcl %s: unknown or ambiguous option '%s' (see flashcl %s --help)\n", cmd, word, cmd);
    else
        return c;
    return c == -1 && optind >= argc ? -1 : CLI_BAD_OPTION;
}

const char *cli_option_name(const struct option *longs, int code)
{
    static _Thread_local char name[64];
    snprintf(name, sizeof name, "-%c", code > 0 && code < 128 ? code : '?');
    for (; longs->name; ++longs)
        if (longs->val == code) {
            if (code < 128)
                snprintf(name, sizeof name, "--%s (-%c)", longs->name, code);
            else
                snprintf(name, sizeof name, "--%s", longs->name);
            break;
        }
    return name;
}

int cli_conflict(const char *cmd, const char *a, const char *b, const char *why)
{
    fprintf(stderr, "flashcl %s: %s and %s conflict: %s\n", cmd, a, b, why);
    return 2;
}

int cli_seconds(const char *opt, const char *value, double *out)
{
    char *end = NULL;
    const double s = value ? strtod(value, &end) : 0.0;
    if (!value || end == value || *end || !(s > 0.0) || s > 1e9) {
        fprintf(stderr, "flashcl: %s %s: expected a number of seconds above 0 (fractions allowed)\n", opt,
                value ? value : "(missing)");
        return 0;
    }
    *out = s;
    return 1;
}

#ifdef _WIN32 /* (no realpath there, and no inode numbers in stat: paths are compared) */
#define realpath(path, out) _fullpath((out), (path), PATH_MAX)
#endif

/* `path` with its directory resolved (the file itself need not exist), into buf; the path as given where
 * the directory does not resolve. */
static void resolved(const char *path, char *buf, size_t n)
{
    const char *slash = strrchr(path, '/');
    char dir[PATH_MAX], real[PATH_MAX];
    if (slash)
        snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    else
        snprintf(dir, sizeof dir, ".");
    if (realpath(dir, real))
        snprintf(buf, n, "%s/%s", real, slash ? slash + 1 : path);
    else
        snprintf(buf, n, "%s", path);
}

int cli_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    const int ha = stat(a, &sa) == 0, hb = stat(b, &sb) == 0;
#ifndef _WIN32
    if (ha && hb)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
#endif
    if (ha != hb) /* (one of them is there, the other not: two files) */
        return 0;
    char ra[PATH_MAX + 256], rb[PATH_MAX + 256];
    resolved(a, ra, sizeof ra);
    resolved(b, rb, sizeof rb);
    return !strcmp(ra, rb);
}

int cli_int(const char *opt, const char *value, long min, long max, long *out)
{
    if (!value) {
        fprintf(stderr, "flashcl: %s needs a value\n", opt);
        return 0;
    }
    char *end;
    errno = 0;
    long v = strtol(value, &end, 10);
    if (errno || end == value || *end || v < min || v > max) {
        fprintf(stderr, "flashcl: %s %s: expected an integer from %ld to %ld\n", opt, value, min, max);
        return 0;
    }
    *out = v;
    return 1;
}

int cli_int_list(const char *cmd, const char *opt, const char *val, long min, long max, long *out, int most, int *n)
{
    *n = 0;
    if (!val || !*val) {
        fprintf(stderr, "flashcl %s: %s needs a value: integers from %ld to %ld, comma-separated\n", cmd, opt, min,
                max);
        return 0;
    }
    for (const char *tok = val;; ++tok) {
        const char *comma = strchr(tok, ',');
        const size_t len = comma ? (size_t)(comma - tok) : strlen(tok);
        char item[64];
        if (*n == most) {
            fprintf(stderr, "flashcl %s: %s %s: too many values; it takes at most %d\n", cmd, opt, val, most);
            return 0;
        }
        if (len == 0 || len >= sizeof item) {
            fprintf(stderr, "flashcl %s: %s %s: %s\n", cmd, opt, val, len ? "a value too long" : "an empty value");
            return 0;
        }
        memcpy(item, tok, len);
        item[len] = '\0';
        if (!cli_int(opt, item, min, max, &out[*n]))
            return 0;
        ++*n;
        if (!comma)
            return 1;
        tok = comma;
    }
}

int cli_config(const char *cmd, const char *spec, flashcl_config *c)
{
    enum { PORTABLE = 1 << FLASHCL_KERNEL_PORTABLE, MMA = 1 << FLASHCL_KERNEL_MMA, WGMMA = 1 << FLASHCL_KERNEL_WGMMA,
           MFMA = 1 << FLASHCL_KERNEL_MFMA, WMMA = 1 << FLASHCL_KERNEL_WMMA, DPAS = 1 << FLASHCL_KERNEL_DPAS };
    static const struct {
        const char *key;
        size_t off;
        long min, max;
        unsigned kernels; /* the kernels whose override reads it */
    } fields[] = {
        {"block_m", offsetof(flashcl_config, block_m), 1, 1024, PORTABLE | MMA | WGMMA | MFMA | WMMA | DPAS},
        {"block_n", offsetof(flashcl_config, block_n), 1, 1024, PORTABLE | MMA | WGMMA | MFMA | WMMA | DPAS},
        {"threads_per_row", offsetof(flashcl_config, threads_per_row), 1, 1024, PORTABLE},
        {"rows_per_item", offsetof(flashcl_config, rows_per_item), 1, 64, PORTABLE},
        {"d_chunk", offsetof(flashcl_config, d_chunk), 1, 1024, PORTABLE},
        {"v_chunk", offsetof(flashcl_config, v_chunk), 1, 1024, PORTABLE},
        {"kv_stages", offsetof(flashcl_config, kv_stages), 0, 4, MMA | WGMMA},
        {"m_tiles", offsetof(flashcl_config, m_tiles), 0, 2, MMA},
        {"producer", offsetof(flashcl_config, producer), -1, 1, WGMMA},
        {"persistent", offsetof(flashcl_config, persistent), 0, 1 << 20, WGMMA},
        {"sub_group", offsetof(flashcl_config, sub_group), 0, 128, DPAS},
    };
    static const flashcl_kernel kernels[] = {FLASHCL_KERNEL_PORTABLE, FLASHCL_KERNEL_MMA,  FLASHCL_KERNEL_WGMMA,
                                             FLASHCL_KERNEL_MFMA,     FLASHCL_KERNEL_WMMA, FLASHCL_KERNEL_DPAS};
    enum { N_FIELDS = sizeof fields / sizeof *fields };
    memset(c, 0, sizeof *c);
    c->producer = -1; /* (flash_wgmma: where it fits) */
    unsigned seen = 0; /* (bit N_FIELDS: kernel) */
    const char *p = spec ? spec : "";
    do {
        const char *comma = strchr(p, ','), *stop = comma ? comma : p + strlen(p), *eq = memchr(p, '=', (size_t)(stop - p));
        char key[32], val[32];
        const size_t kn = eq ? (size_t)(eq - p) : 0, vn = eq ? (size_t)(stop - eq - 1) : 0;
        if (!eq || !kn || !vn || kn >= sizeof key || vn >= sizeof val) {
            fprintf(stderr, "flashcl %s: --config: '%.*s' is not KEY=VALUE (SPEC: KEY=VALUE,... with no empty item)\n",
                    cmd, (int)(stop - p), p);
            return 0;
        }
        memcpy(key, p, kn);
        key[kn] = '\0';
        memcpy(val, eq + 1, vn);
        val[vn] = '\0';
        size_t f = 0;
        while (f < N_FIELDS && strcmp(key, fields[f].key))
            ++f;
        if (f == N_FIELDS && strcmp(key, "kernel")) {
            fprintf(stderr,
                    "flashcl %s: --config: no field '%s' (kernel, block_m, block_n, threads_per_row, rows_per_item, "
                    "d_chunk, v_chunk, kv_stages, m_tiles, producer, persistent, sub_group)\n",
                    cmd, key);
            return 0;
        }
        if (seen & (1u << f)) {
            fprintf(stderr, "flashcl %s: --config: '%s' given twice\n", cmd, key);
            return 0;
        }
        seen |= 1u << f;
        if (f == N_FIELDS) { /* kernel */
            size_t k = 0;
            while (k < sizeof kernels / sizeof *kernels && strcmp(val, flashcl_kernel_name(kernels[k])))
                ++k;
            if (k == sizeof kernels / sizeof *kernels) {
                fprintf(stderr, "flashcl %s: --config kernel=%s: expected portable, mma, wgmma, mfma, wmma or dpas\n",
                        cmd, val);
                return 0;
            }
            c->kernel = kernels[k];
        } else {
            char opt[48];
            snprintf(opt, sizeof opt, "--config %s", key);
            long v;
            if (!cli_int(opt, val, fields[f].min, fields[f].max, &v))
                return 0;
            *(int32_t *)((char *)c + fields[f].off) = (int32_t)v;
        }
        p = comma ? comma + 1 : NULL;
    } while (p);
    for (size_t f = 0; f < N_FIELDS; ++f) /* (a field the kernel does not read would be dropped unsaid) */
        if ((seen & (1u << f)) && !(fields[f].kernels & (1u << c->kernel))) {
            fprintf(stderr, "flashcl %s: --config %s: kernel=%s does not read it\n", cmd, fields[f].key,
                    flashcl_kernel_name(c->kernel));
            return 0;
        }
    return 1;
}

int cli_apply_config(flashcl_context *ctx, int has, const flashcl_config *c)
{
    const flashcl_status st = has ? flashcl_context_override_config(ctx, c) : FLASHCL_SUCCESS;
    return st ? cli_fail(ctx, "setting --config", st) : 0;
}

int cli_dtype(const char *value, flashcl_dtype *out)
{
    if (value && (!strcmp(value, "f32") || !strcmp(value, "fp32") || !strcmp(value, "float32")))
        *out = FLASHCL_DTYPE_F32;
    else if (value && (!strcmp(value, "f16") || !strcmp(value, "fp16") || !strcmp(value, "float16")))
        *out = FLASHCL_DTYPE_F16;
    else if (value && (!strcmp(value, "bf16") || !strcmp(value, "bfloat16")))
        *out = FLASHCL_DTYPE_BF16;
    else {
        fprintf(stderr, "flashcl: --dtype %s: expected f32, f16 or bf16\n", value ? value : "(missing)");
        return 0;
    }
    return 1;
}

int cli_kv_format(const char *value, flashcl_problem *p)
{
    static const struct {
        const char *name;
        flashcl_kv_format format;
        flashcl_dtype scale;
    } f[] = {{"plain", FLASHCL_KV_PLAIN, FLASHCL_DTYPE_F32},
             {"int8", FLASHCL_KV_INT8, FLASHCL_DTYPE_F32},
             {"int8-f16", FLASHCL_KV_INT8, FLASHCL_DTYPE_F16},
             {"fp8e4m3", FLASHCL_KV_FP8_E4M3, FLASHCL_DTYPE_F32},
             {"fp8e5m2", FLASHCL_KV_FP8_E5M2, FLASHCL_DTYPE_F32}};
    for (size_t i = 0; value && i < sizeof f / sizeof f[0]; ++i)
        if (!strcmp(value, f[i].name)) {
            p->kv_format = f[i].format;
            p->kv_scale_dtype = f[i].scale;
            p->kv_cache |= f[i].format != FLASHCL_KV_PLAIN;
            return 1;
        }
    static const char *const floats[3] = {"f32", "f16", "bf16"}; /* K and V in their own float type */
    for (int i = 0; value && i < 3; ++i)
        if (!strcmp(value, floats[i])) {
            p->kv_dtype = i + 1; /* (FLASHCL_KV_DTYPE_F32 ...) */
            return 1;
        }
    fprintf(stderr, "flashcl: --kv-dtype %s: expected f32, f16, bf16, plain, int8, int8-f16, fp8e4m3 or fp8e5m2\n",
            value ? value : "(missing)");
    return 0;
}

size_t cli_kv_scale_count(const flashcl_problem *p)
{
    if (p->kv_format != FLASHCL_KV_INT8)
        return 0;
    return (p->page_size ? (size_t)p->num_pages * (size_t)p->page_size : (size_t)p->batch * (size_t)p->seq_kv) *
           (size_t)p->heads_kv;
}

cl_mem cli_kv_scales(cl_context ctx, const flashcl_problem *p, hm_rng *rng, cl_int *err)
{
    const size_t n = cli_kv_scale_count(p), es = flashcl_dtype_size(p->kv_scale_dtype);
    void *s = malloc(n * es);
    if (!s) {
        *err = CL_OUT_OF_HOST_MEMORY;
        return NULL;
    }
    for (size_t i = 0; i < n; ++i) /* about 1/32: int8 values of about 32 become about 1 */
        hm_store(s, p->kv_scale_dtype, i, (float)((0.75 + 0.5 * hm_rng_uniform(rng)) / 32.0));
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * es, s, err);
    free(s);
    return m;
}

cl_mem cli_descale(cl_context ctx, const flashcl_problem *p, hm_rng *rng, cl_int *err)
{
    const size_t n = 3 * (p->fp8_descale == FLASHCL_DESCALE_HEAD ? (size_t)p->batch * (size_t)p->heads_kv : 1);
    float *s = malloc(n * sizeof *s);
    if (!s) {
        *err = CL_OUT_OF_HOST_MEMORY;
        return NULL;
    }
    for (size_t i = 0; i < n; ++i)
        s[i] = (float)(0.5 + 1.5 * hm_rng_uniform(rng));
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * sizeof *s, s, err);
    free(s);
    return m;
}

int cli_fail(const flashcl_context *ctx, const char *what, flashcl_status st)
{
    const char *msg = flashcl_context_last_error(ctx);
    fprintf(stderr, "flashcl: %s: %s (%s)%s%s\n", what, flashcl_status_string(st), flashcl_status_name(st),
            msg && *msg ? ": " : "", msg ? msg : "");
    return 1;
}

/* The length of the well-formed UTF-8 sequence at s (1 to 4), or 0: a stray continuation byte, a truncated
 * sequence, an overlong form, a surrogate or a code point past U+10FFFF (RFC 3629's table). */
static int utf8_length(const unsigned char *s)
{
    const unsigned char c = s[0];
    /* (C0 and C1 lead only overlong forms; F5 and up, past U+10FFFF) */
    const int n = c < 0x80 ? 1 : c < 0xc2 ? 0 : c <= 0xdf ? 2 : c <= 0xef ? 3 : c <= 0xf4 ? 4 : 0;
    /* the second byte's range: narrower after E0 (overlong), ED (surrogates), F0 (overlong), F4 (past U+10FFFF) */
    const unsigned char lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
    const unsigned char hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
    if (n > 1 && (s[1] < lo || s[1] > hi))
        return 0;
    for (int i = 2; i < n; ++i)
        if (s[i] < 0x80 || s[i] > 0xbf)
            return 0;
    return n;
}

void cli_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *u = (const unsigned char *)s; u && *u;) {
        const unsigned char c = *u;
        const int n = utf8_length(u);
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else if (n)
            fwrite(u, 1, (size_t)n, f);
        else /* (a byte of no well-formed sequence: JSON text is UTF-8) */
            fputs("\\ufffd", f);
        u += n ? n : 1;
    }
    fputc('"', f);
}

void cli_json_number(FILE *f, double x)
{
    if (!isfinite(x)) {
        fputs("null", f);
        return;
    }
    char buf[32];
    for (int digits = 15; digits <= 17; ++digits) {
        snprintf(buf, sizeof buf, "%.*g", digits, x);
        if (strtod(buf, NULL) == x)
            break;
    }
    fputs(buf, f);
}

int cli_write_file(const char *cmd, const char *path, void (*write)(FILE *f, void *arg), void *arg)
{
    npy_staged w; /* (npy_write's rule: through symbolic links, in place for a device or a pipe, the mode kept) */
    mode_t mode;
    npy_write_target(&w, path, &mode);
    FILE *f = fopen(w.tmp, "w");
    if (!f) {
        fprintf(stderr, "flashcl %s: cannot write %s: %s\n", cmd, w.tmp, strerror(errno));
        return -1;
    }
    write(f, arg);
    int failed = ferror(f) | fclose(f);
#ifndef _WIN32
    failed = failed || (mode && !w.in_place && chmod(w.tmp, mode) != 0);
#endif
    char err[4200 + 64];
    if (!failed && npy_commit(&w, err, sizeof err) == 0)
        return 0;
    if (failed) {
        fprintf(stderr, "flashcl %s: cannot write %s: %s\n", cmd, path, strerror(errno));
        npy_discard(&w);
    } else {
        fprintf(stderr, "flashcl %s: %s\n", cmd, err);
    }
    return -1;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void cli_stats(double *v, int n, double *median, double *min, double *max)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    *min = v[0];
    *max = v[n - 1];
    *median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double us_between(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) * 1e6 + (double)(b->tv_nsec - a->tv_nsec) * 1e-3;
}

/* A pad buffer whose fill lasts want_us or more on the queue: *pad (released and remade) of *bytes, doubling
 * from what *bytes holds up to `most`; 1 where such a fill was found, its duration in *fill_us. */
static int size_pad(cl_context ctx, cl_command_queue queue, size_t most, double want_us, cl_mem *pad, size_t *bytes,
                    double *fill_us)
{
    for (; *bytes <= most; *bytes *= 2) {
        cl_int err;
        if (*pad)
            clReleaseMemObject(*pad);
        *pad = clCreateBuffer(ctx, CL_MEM_READ_WRITE, *bytes, NULL, &err);
        if (!*pad)
            return 0;
        cl_ulong f0 = 0, f1 = 0;
        const cl_uint zero = 0;
        cl_event fill = NULL;
        for (int r = 0; r < 2; ++r) { /* (the second: the first fill of a buffer may place it) */
            if (fill)
                clReleaseEvent(fill);
            fill = NULL;
            if (clEnqueueFillBuffer(queue, *pad, &zero, sizeof zero, 0, *bytes, 0, NULL, &fill) != CL_SUCCESS ||
                clWaitForEvents(1, &fill) != CL_SUCCESS)
                break;
        }
        const int ok = fill && clGetEventProfilingInfo(fill, CL_PROFILING_COMMAND_START, sizeof f0, &f0, NULL) ==
                                   CL_SUCCESS &&
                       clGetEventProfilingInfo(fill, CL_PROFILING_COMMAND_END, sizeof f1, &f1, NULL) == CL_SUCCESS &&
                       f1 > f0 && (double)(f1 - f0) * 1e-3 >= want_us;
        if (fill)
            clReleaseEvent(fill);
        if (ok) {
            *fill_us = (double)(f1 - f0) * 1e-3;
            return 1;
        }
    }
    return 0;
}

/* cli_time_plan's device time alone: `iters` samples (up to twice as many tries and four more, after `pwarm`)
 * into gt, the fill sized to last three of the profiling queue's enqueue calls (prof_enq_us) and 20 us more,
 * and repeated twice as often after a try where it ended before the step was flushed (a host slower than its
 * median: a loaded CPU, a sanitizer); host's device_us set where at least half the samples had the queue held.
 * Then the steps back to back (device_b2b_us): CLI_B2B_STEPS of them enqueued behind the same pad's fill
 * repeated to last as many enqueue calls and 20 us more (one fill of 256 MiB lasts 163 us on the H100, under
 * eight calls of 13: decode-mma-25), the fills doubled in the same way (at most CLI_B2B_FILLS), as a CUDA
 * graph's replays run; the figure (the last one's end - the first one's) / (CLI_B2B_STEPS - 1), a round
 * counted where the last fill was still running once the last step was flushed (so the device never waited
 * on the host between them); each step after the first reads the inputs the one before left in the device's
 * cache. */
static void time_padded(flashcl_plan *plan, const flashcl_tensors *tensors, cl_command_queue queue, long pwarm,
                        long iters, double prof_enq_us, double *gt, cli_host_times *host)
{
    cl_mem pad = NULL;
    size_t pad_bytes = (size_t)1 << 20;
    cl_context pctx = NULL;
    cl_device_id pdev = NULL;
    cl_ulong max_alloc = 0;
    flashcl_context_cl_objects(flashcl_plan_context(plan), &pctx, &pdev, NULL);
    clGetDeviceInfo(pdev, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc, NULL);
    const size_t most = max_alloc / 4 < ((size_t)256 << 20) ? (size_t)(max_alloc / 4) : ((size_t)256 << 20);
    const cl_uint zero = 0;
    double fill_us = 0;
    int padded_ok = size_pad(pctx, queue, most, 3.0 * prof_enq_us + 20.0, &pad, &pad_bytes, &fill_us);
    long taken = 0;
    int lead = 1; /* (fills ahead of the step: doubled after a try where they ended before the step was flushed) */
    for (long i = 0; padded_ok && i < pwarm + 2 * iters + 4 && taken < iters; ++i) {
        cl_event fill = NULL, ev = NULL;
        cl_int fill_status = CL_COMPLETE;
        clFinish(queue);
        for (int f = 0; padded_ok && f < lead; ++f) /* (the last one's event) */
            padded_ok = clEnqueueFillBuffer(queue, pad, &zero, sizeof zero, 0, pad_bytes, 0, NULL,
                                            f == lead - 1 ? &fill : NULL) == CL_SUCCESS;
        padded_ok = padded_ok && clFlush(queue) == CL_SUCCESS &&
                    flashcl_plan_enqueue_tensors(plan, tensors, 0, NULL, &ev) == FLASHCL_SUCCESS &&
                    clFlush(queue) == CL_SUCCESS;
        if (padded_ok) /* (the fill still running: the step's commands were all submitted before it ended) */
            clGetEventInfo(fill, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof fill_status, &fill_status, NULL);
        cl_ulong start = 0, end = 0;
        padded_ok = padded_ok && clWaitForEvents(1, &ev) == CL_SUCCESS &&
                    clGetEventProfilingInfo(fill, CL_PROFILING_COMMAND_END, sizeof start, &start, NULL) == CL_SUCCESS &&
                    clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL) == CL_SUCCESS &&
                    end > start;
        if (ev)
            clReleaseEvent(ev);
        if (fill)
            clReleaseEvent(fill);
        if (padded_ok && i >= pwarm && fill_status != CL_COMPLETE)
            gt[taken++] = (double)(end - start) * 1e-3;
        else if (padded_ok && fill_status == CL_COMPLETE && lead < CLI_B2B_FILLS)
            lead *= 2;
    }
    clFinish(queue);
    if (padded_ok && taken * 2 >= iters) { /* (at least half the samples with the queue held) */
        cli_stats(gt, (int)taken, &host->device_us, &host->device_us_min, &host->device_us_max);
        host->device_pad_bytes = (double)pad_bytes;
    }
    /* back to back: fills of the same pad to outlast CLI_B2B_STEPS enqueue calls (at most CLI_B2B_FILLS);
     * up to CLI_B2B_ROUNDS rounds into gt */
    const double fills_want = padded_ok ? ceil((CLI_B2B_STEPS * prof_enq_us + 20.0) / fill_us) : 0;
    int fills = fills_want < 1 ? 1 : (int)fills_want;
    int b2b_ok = padded_ok && fills <= CLI_B2B_FILLS;
    const long rounds = iters < CLI_B2B_ROUNDS ? iters : CLI_B2B_ROUNDS;
    taken = 0;
    for (long i = 0; b2b_ok && i < 2 * rounds + 4 && taken < rounds; ++i) {
        cl_event fill = NULL, ev[CLI_B2B_STEPS] = {NULL};
        cl_int fill_status = CL_COMPLETE;
        clFinish(queue);
        for (int f = 0; b2b_ok && f < fills; ++f) /* (the last one's event) */
            b2b_ok = clEnqueueFillBuffer(queue, pad, &zero, sizeof zero, 0, pad_bytes, 0, NULL,
                                         f == fills - 1 ? &fill : NULL) == CL_SUCCESS;
        b2b_ok = b2b_ok && clFlush(queue) == CL_SUCCESS;
        for (int k = 0; b2b_ok && k < CLI_B2B_STEPS; ++k)
            b2b_ok = flashcl_plan_enqueue_tensors(plan, tensors, 0, NULL, &ev[k]) == FLASHCL_SUCCESS;
        b2b_ok = b2b_ok && clFlush(queue) == CL_SUCCESS;
        if (b2b_ok)
            clGetEventInfo(fill, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof fill_status, &fill_status, NULL);
        cl_ulong first = 0, last = 0;
        b2b_ok = b2b_ok && clWaitForEvents(1, &ev[CLI_B2B_STEPS - 1]) == CL_SUCCESS &&
                 clGetEventProfilingInfo(ev[0], CL_PROFILING_COMMAND_END, sizeof first, &first, NULL) == CL_SUCCESS &&
                 clGetEventProfilingInfo(ev[CLI_B2B_STEPS - 1], CL_PROFILING_COMMAND_END, sizeof last, &last, NULL) ==
                     CL_SUCCESS &&
                 last > first;
        for (int k = 0; k < CLI_B2B_STEPS; ++k)
            if (ev[k])
                clReleaseEvent(ev[k]);
        if (fill)
            clReleaseEvent(fill);
        if (b2b_ok && fill_status != CL_COMPLETE)
            gt[taken++] = (double)(last - first) * 1e-3 / (CLI_B2B_STEPS - 1);
        else if (b2b_ok && fills < CLI_B2B_FILLS) /* (the host was slower than its median: more lead) */
            fills = 2 * fills < CLI_B2B_FILLS ? 2 * fills : CLI_B2B_FILLS;
    }
    clFinish(queue);
    if (pad)
        clReleaseMemObject(pad);
    if (b2b_ok && taken * 2 >= rounds)
        cli_stats(gt, (int)taken, &host->device_b2b_us, &host->device_b2b_us_min, &host->device_b2b_us_max);
}

flashcl_status cli_time_plan(flashcl_plan *plan, const flashcl_tensors *tensors, long warmup, long iters,
                             double *median, double *min, double *max, int *host_clock, cli_host_times *host)
{
    double *t = calloc((size_t)iters * 3, sizeof *t);
    if (!t)
        return FLASHCL_OUT_OF_HOST_MEMORY;
    double *const enq = t + iters, *const step = t + 2 * iters; /* (the host's side, microseconds) */
    int events_work = 1;
    flashcl_status st = FLASHCL_SUCCESS;
    cl_command_queue queue;
    flashcl_context_cl_objects(flashcl_plan_context(plan), NULL, NULL, &queue);
    for (long i = 0; i < warmup + iters && st == FLASHCL_SUCCESS; ++i) {
        /* A marker before the plan: its end is when the queue reaches the plan's first command, so
         * plans of several commands (standard attention) are timed whole. */
        struct timespec t0, t1, h0, h1;
        cl_event ev = NULL, mark = NULL;
        clFinish(queue);
        clock_gettime(CLOCK_MONOTONIC, &t0);
        if (clEnqueueMarkerWithWaitList(queue, 0, NULL, &mark) != CL_SUCCESS)
            mark = NULL;
        clock_gettime(CLOCK_MONOTONIC, &h0);
        st = flashcl_plan_enqueue_tensors(plan, tensors, 0, NULL, &ev);
        clock_gettime(CLOCK_MONOTONIC, &h1);
        if (st != CL_SUCCESS) {
            if (mark)
                clReleaseEvent(mark);
            break;
        }
        clWaitForEvents(1, &ev);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        cl_ulong start = 0, end = 0;
        if (!mark || clGetEventProfilingInfo(mark, CL_PROFILING_COMMAND_END, sizeof start, &start, NULL) != CL_SUCCESS ||
            clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL) != CL_SUCCESS || end <= start)
            events_work = 0;
        clReleaseEvent(ev);
        if (mark)
            clReleaseEvent(mark);
        if (i >= warmup) {
            t[i - warmup] = events_work ? (double)(end - start) * 1e-6 : us_between(&t0, &t1) * 1e-3;
            enq[i - warmup] = us_between(&h0, &h1);
            step[i - warmup] = us_between(&h0, &t1);
        }
    }
    /* The host's side as an engine's loop pays it: on an in-order queue without profiling, no event asked
     * for, the enqueue call and then clFinish (NVIDIA's driver takes 3.3 us to launch without an event
     * against 9.8 with one on a profiling queue: tools/enqueue_probe, docs/design/decode_mma.md); the same
     * count after at least one untimed step (the first on a new queue orders the plan's scratch after the
     * old one's), for steps of up to 5 ms (longer ones: the host's share is nothing, and the pass would
     * double a slow algorithm's time). Otherwise, or where the queue cannot be made or a step on it fails,
     * the profiling queue's figures above stay. */
    int plain_ok = 0;
    double kernel_ms = 0, lo_ms, hi_ms;
    if (st == FLASHCL_SUCCESS)
        cli_stats(t, (int)iters, &kernel_ms, &lo_ms, &hi_ms);
    double *pt = host && st == FLASHCL_SUCCESS && kernel_ms <= 5.0 ? calloc((size_t)iters * 2, sizeof *pt) : NULL;
    cl_command_queue plain = NULL;
    if (pt) {
        cl_context clctx = NULL;
        cl_device_id dev = NULL;
        cl_int qerr;
        flashcl_context_cl_objects(flashcl_plan_context(plan), &clctx, &dev, NULL);
        plain = clCreateCommandQueue(clctx, dev, 0, &qerr);
    }
    const long pwarm = warmup > 0 ? warmup : 1;
    plain_ok = plain != NULL;
    for (long i = 0; plain_ok && i < pwarm + iters; ++i) {
        struct timespec h0, h1, h2;
        clFinish(plain);
        clock_gettime(CLOCK_MONOTONIC, &h0);
        plain_ok = flashcl_plan_enqueue_on(plan, plain, tensors, 0, NULL, NULL) == FLASHCL_SUCCESS;
        clock_gettime(CLOCK_MONOTONIC, &h1);
        plain_ok = plain_ok && clFinish(plain) == CL_SUCCESS;
        clock_gettime(CLOCK_MONOTONIC, &h2);
        if (i >= pwarm) {
            pt[i - pwarm] = us_between(&h0, &h1);
            pt[iters + i - pwarm] = us_between(&h0, &h2);
        }
    }
    if (plain) {
        clFinish(plain);
        clReleaseCommandQueue(plain);
    }
    /* (the profiling queue's enqueue call, with its event, before the plain queue's replaces it: the
     * padded pass below enqueues so) */
    double prof_enq_us = 0;
    if (st == FLASHCL_SUCCESS) {
        double *e = malloc((size_t)iters * sizeof *e), lo, hi;
        if (e) {
            memcpy(e, enq, (size_t)iters * sizeof *e);
            cli_stats(e, (int)iters, &prof_enq_us, &lo, &hi);
            free(e);
        }
    }
    if (plain_ok) {
        memcpy(enq, pt, (size_t)iters * sizeof *enq);
        memcpy(step, pt + iters, (size_t)iters * sizeof *step);
    }
    free(pt);
    if (host) {
        host->plain_queue = plain_ok;
        host->device_us = host->device_us_min = host->device_us_max = NAN;
        host->device_b2b_us = host->device_b2b_us_min = host->device_b2b_us_max = NAN;
        host->device_pad_bytes = 0;
    }
    /* The device's time alone (short steps: where the enqueue call is a share of the marker-to-end figure
     * above, which holds it on an idle queue, docs/design/decode_mma.md, decode-mma-15 and -22): a fill of
     * a pad buffer before the step keeps the queue busy while the step is enqueued, so the step's first
     * command starts as soon as the fill ends; the figure is the fill's end to the step's end. The pad is
     * sized (doubling from 1 MiB, up to 256 MiB and a quarter of the largest buffer) until its fill lasts
     * three enqueue calls and 20 us more, and a sample counts only where the fill was still running once
     * the step was flushed (time_padded). (A user
     * event holding a marker does not serve: NVIDIA's driver releases what waits on it 1-3 ms late.) Flash
     * plans only: standard attention's GEMMs (CLBlast) may wait inside the enqueue. */
    flashcl_config gcfg;
    flashcl_plan_config(plan, &gcfg);
    double *gt = host && st == FLASHCL_SUCCESS && events_work && kernel_ms <= 5.0 &&
                         gcfg.algorithm == FLASHCL_ALGO_FLASH
                     ? calloc((size_t)iters, sizeof *gt)
                     : NULL;
    if (gt)
        time_padded(plan, tensors, queue, pwarm, iters, prof_enq_us, gt, host);
    free(gt);
    if (st == FLASHCL_SUCCESS) {
        cli_stats(t, (int)iters, median, min, max);
        double lo, hi;
        if (host) {
            cli_stats(enq, (int)iters, &host->enqueue_us, &lo, &hi);
            cli_stats(step, (int)iters, &host->step_us, &lo, &hi);
        }
    }
    *host_clock = !events_work;
    free(t);
    return st;
}

double cli_flops(const flashcl_problem *p)
{
    /* Only the computed pairs: row i sees keys [pos - left, pos + right] within [0, seq_kv), pos =
     * i + seq_kv - seq_q (i under top-left alignment), under the causal mask (right <= 0) and the
     * sliding window. */
    const int64_t left = p->window ? p->window_left : -1;
    int64_t right = p->window ? p->window_right : -1;
    if (p->causal)
        right = 0;
    double pairs = 0;
    for (int64_t i = 0; i < p->seq_q; ++i) {
        const int64_t pos = p->alignment == FLASHCL_ALIGN_TOP_LEFT ? i : i + p->seq_kv - p->seq_q;
        int64_t lo = left >= 0 ? pos - left : 0, hi = right >= 0 ? pos + right : p->seq_kv - 1;
        if (lo < 0)
            lo = 0;
        if (hi > p->seq_kv - 1)
            hi = p->seq_kv - 1;
        pairs += hi >= lo ? (double)(hi - lo + 1) : 0.0;
    }
    /* two multiply-adds a pair and column: Q·K^T over head_dim, P·V over V's head dim */
    return 2.0 * p->batch * p->heads_q * pairs * (p->head_dim + (p->head_dim_v ? p->head_dim_v : p->head_dim));
}

const char *cli_unwritable(const char *path)
{
    static _Thread_local char why[1200];
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return "a directory";
    if (access(path, F_OK) == 0) {
        if (access(path, W_OK) == 0)
            return NULL;
        snprintf(why, sizeof why, "%s", strerror(errno));
        return why;
    }
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *(slash == dir ? slash + 1 : slash) = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    struct stat sb;
    const char *reason = stat(dir, &sb) != 0 ? strerror(errno) : !S_ISDIR(sb.st_mode) ? "not a directory"
                         : access(dir, W_OK) != 0 ? strerror(errno) : NULL;
    if (!reason)
        return NULL;
    snprintf(why, sizeof why, "%s: %s", dir, reason);
    return why;
}

const char *cli_flop_rate(double tflops, char *buf, size_t n)
{
    if (tflops >= 0.1 || tflops == 0.0)
        snprintf(buf, n, "%.3f TFLOP/s", tflops);
    else /* (a CPU, or a tiny shape: TFLOP/s would print as 0.000) */
        snprintf(buf, n, "%.3f GFLOP/s", tflops * 1e3);
    return buf;
}

double cli_sink_logit;

/* A buffer of heads_q floats, value(h) each (NULL, *err set, on failure). */
static cl_mem per_head(cl_context ctx, const flashcl_problem *p, double (*value)(int h, int heads), cl_int *err)
{
    float *s = malloc((size_t)p->heads_q * sizeof(float));
    if (!s) {
        *err = CL_OUT_OF_HOST_MEMORY;
        return NULL;
    }
    for (int h = 0; h < p->heads_q; ++h)
        s[h] = (float)value(h, p->heads_q);
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, (size_t)p->heads_q * sizeof(float), s, err);
    free(s);
    return m;
}

static double sink_of(int h, int heads)
{
    (void)h, (void)heads;
    return cli_sink_logit;
}

static double alibi_slope_of(int h, int heads)
{
    return exp2(-8.0 * (h + 1) / heads);
}

cl_mem cli_sinks(cl_context ctx, const flashcl_problem *p, cl_int *err)
{
    return per_head(ctx, p, sink_of, err);
}

cl_mem cli_alibi_slopes(cl_context ctx, const flashcl_problem *p, cl_int *err)
{
    return per_head(ctx, p, alibi_slope_of, err);
}

double cli_flops_packed(const flashcl_problem *p, const int32_t *cu_q, const int32_t *cu_k)
{
    flashcl_problem one = *p;
    one.varlen = 0;
    one.batch = 1;
    double f = 0;
    for (int b = 0; b < p->batch; ++b) {
        one.seq_q = cu_q[b + 1] - cu_q[b];
        one.seq_kv = cu_k[b + 1] - cu_k[b];
        f += cli_flops(&one);
    }
    return f;
}

/* An option of two named values: *out the value named (1), or a message naming both (0). */
static int one_of(const char *cmd, const char *opt, const char *val, const char *a, int32_t va, const char *b,
                  int32_t vb, int32_t *out)
{
    if (val && (!strcmp(val, a) || !strcmp(val, b))) {
        *out = !strcmp(val, a) ? va : vb;
        return 1;
    }
    fprintf(stderr, "flashcl %s: %s %s: expected %s or %s\n", cmd, opt, val ? val : "(missing)", a, b);
    return 0;
}

int cli_mask_option(const char *cmd, int code, const char *val, flashcl_problem *p)
{
    char *end = NULL;
    const char *v = val ? val : "(missing)";
    switch (code) {
    case CLI_OPT_ALIBI:
        p->alibi = 1;
        return 1;
    case CLI_OPT_WINDOW: {
        long l = 0, r = 0;
        const char *right = NULL;
        if (!val || (l = strtol(val, &end, 10), end == val || *end != ',') ||
            (right = end + 1, r = strtol(right, &end, 10), end == right || *end) || l < -1 || r < -1 ||
            l > INT32_MAX || r > INT32_MAX) {
            fprintf(stderr, "flashcl %s: --window %s: expected LEFT,RIGHT, each >= 0 or -1 (unbounded)\n", cmd, v);
            return 0;
        }
        p->window = 1;
        p->window_left = (int32_t)l;
        p->window_right = (int32_t)r;
        return 1;
    }
    case CLI_OPT_KV_SPLITS: {
        const long n = val ? strtol(val, &end, 10) : -1;
        if (!val || end == val || *end || n < 0 || n > 1024) {
            fprintf(stderr, "flashcl %s: --kv-splits %s: expected 0 (chosen) to 1024\n", cmd, v);
            return 0;
        }
        p->kv_splits = (int32_t)n;
        return 1;
    }
    case CLI_OPT_PRECISION:
        for (int k = 0; k <= FLASHCL_PRECISION_TF32; ++k)
            if (val && !strcmp(val, flashcl_precision_name((flashcl_precision)k))) {
                p->precision = k;
                return 1;
            }
        fprintf(stderr, "flashcl %s: --precision %s: expected fp32, tf32x3 or tf32\n", cmd, v);
        return 0;
    case CLI_OPT_FP8:
        return one_of(cmd, "--fp8", val, "e4m3", FLASHCL_KV_FP8_E4M3, "e5m2", FLASHCL_KV_FP8_E5M2, &p->qkv_format);
    case CLI_OPT_DESCALE:
        return one_of(cmd, "--descale", val, "tensor", FLASHCL_DESCALE_TENSOR, "head", FLASHCL_DESCALE_HEAD,
                      &p->fp8_descale);
    case CLI_OPT_SINKS: {
        const double l = val ? strtod(val, &end) : 0.0;
        if (!val || end == val || *end || isnan(l) || l > 1e30) {
            fprintf(stderr, "flashcl %s: --sinks %s: expected a logit (a number, or -inf)\n", cmd, v);
            return 0;
        }
        p->sinks = 1;
        cli_sink_logit = l;
        return 1;
    }
    case CLI_OPT_SOFTCAP: {
        const float c = val ? strtof(val, &end) : 0.0f;
        if (!val || end == val || *end || !(c >= 0.0f) || isinf(c)) {
            fprintf(stderr, "flashcl %s: --softcap %s: expected a number >= 0\n", cmd, v);
            return 0;
        }
        if (c == 0.0f && strtod(val, NULL) > 0.0) { /* (0 is no softcap: a tiny cap must not turn it off unsaid) */
            fprintf(stderr, "flashcl %s: --softcap %s: too small for a float (it would be 0, no softcap)\n", cmd, v);
            return 0;
        }
        p->softcap = c;
        return 1;
    }
    }
    return 0;
}

const char *cli_mask_name(const flashcl_problem *p, char *buf, size_t n)
{
    int k = snprintf(buf, n, "%s", p->causal ? "causal" : "full");
    if (p->window && k >= 0 && (size_t)k < n)
        k += snprintf(buf + k, n - (size_t)k, " window %d,%d", p->window_left, p->window_right);
    if ((p->causal || p->window) && p->alignment == FLASHCL_ALIGN_TOP_LEFT && k >= 0 && (size_t)k < n)
        k += snprintf(buf + k, n - (size_t)k, " top-left"); /* (bottom-right, the default, unsaid) */
    if (p->softcap > 0.0f && k >= 0 && (size_t)k < n)
        k += snprintf(buf + k, n - (size_t)k, " softcap %g", (double)p->softcap);
    if (p->alibi && k >= 0 && (size_t)k < n)
        k += snprintf(buf + k, n - (size_t)k, " alibi");
    if (p->sinks && k >= 0 && (size_t)k < n)
        snprintf(buf + k, n - (size_t)k, " sinks %g", cli_sink_logit);
    return buf;
}

const char *cli_tiles(const flashcl_config *c, char *buf, size_t n)
{
    int k = snprintf(buf, n, "%dx%d tpr%d r%d dc%d vc%d", c->block_m, c->block_n, c->threads_per_row,
                     c->rows_per_item, c->d_chunk, c->v_chunk);
    if (c->kv_splits > 1 && k >= 0 && (size_t)k < n)
        k += snprintf(buf + k, n - (size_t)k, " splits%d", c->kv_splits);
    if (c->gqa_pack > 1 && k >= 0 && (size_t)k < n)
        snprintf(buf + k, n - (size_t)k, " pack%d", c->gqa_pack);
    return buf;
}

uint64_t cli_tile_budget(const flashcl_device_profile *pr, const flashcl_policy *policy)
{
    flashcl_problem small;
    flashcl_problem_default(&small);
    flashcl_config c;
    return flashcl_choose_config_policy(pr, policy, &small, FLASHCL_ALGO_FLASH, &c) == FLASHCL_SUCCESS
               ? c.local_mem_budget
               : 0;
}
