/* SPDX-License-Identifier: MIT */
/*
 * npy.c: the .npy reader and writer (see npy.h). The header is a Python dict literal; this parser
 * accepts what NumPy writes (keys in any order, spaces, a trailing comma) and nothing looser: the three keys
 * once each and no other, False or True exactly, the braces.
 */
#include "npy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int fail(char *err, size_t n, const char *msg)
{
    snprintf(err, n, "%s", msg);
    return -1;
}

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t'))
        ++p;
    return p;
}

/* The header dict's keys: NumPy requires these three and no other (a duplicate, which Python's dict would
 * give the last value of, is refused rather than guessed). */
static const char *const keys[3] = {"descr", "fortran_order", "shape"};

/* Whether the word w (n characters) starts at p and ends there: a delimiter or the header's end follows
 * ("Falsey" is no False). */
static int word_at(const char *p, const char *end, const char *w, size_t n)
{
    return (size_t)(end - p) >= n && !memcmp(p, w, n) && (p + n == end || (p[n] && strchr(" \t,}", p[n])));
}

int npy_parse(const unsigned char *b, size_t len, npy_array *out, char *err, size_t en)
{
    memset(out, 0, sizeof *out);
    if (len < 10 || memcmp(b, "\x93NUMPY", 6) != 0)
        return fail(err, en, "not a .npy file (bad magic)");
    const int major = b[6];
    size_t hlen, hstart;
    if (major == 1) {
        hlen = (size_t)b[8] | (size_t)b[9] << 8;
        hstart = 10;
    } else if (major == 2 || major == 3) {
        if (len < 12)
            return fail(err, en, "truncated header");
        hlen = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
        hstart = 12;
    } else {
        return fail(err, en, "unsupported .npy format version");
    }
    if (hlen > len - hstart)
        return fail(err, en, "truncated header");
    if (hlen > 65536)
        return fail(err, en, "header larger than 64 KiB");
    /* A NUL-terminated copy: the header's numbers are read with strtoll, which must not run past it. */
    char hbuf[65537];
    memcpy(hbuf, b + hstart, hlen);
    hbuf[hlen] = '\0';
    const char *h = hbuf, *end = h + hlen;

    /* The dict, key by key, as NumPy's literal_eval would read it: '{', 'key': value pairs separated by
     * commas (a trailing one allowed), '}', then only the padding and the newline. */
    const char *p = skip_ws(h, end);
    if (p >= end || *p != '{')
        return fail(err, en, "header is not a dict (no '{')");
    int seen[3] = {0, 0, 0};
    char msg[160];
    for (++p;;) {
        p = skip_ws(p, end);
        if (p >= end || *p == '\n') /* (the header's last character) */
            return fail(err, en, "header's dict is not closed (no '}')");
        if (*p == '}')
            break;
        const char *close = *p == '\'' || *p == '"' ? memchr(p + 1, *p, (size_t)(end - p - 1)) : NULL;
        if (!close)
            return fail(err, en, "bad header: expected a quoted key or '}'");
        const size_t klen = (size_t)(close - p - 1);
        int k = 0;
        while (k < 3 && !(strlen(keys[k]) == klen && !memcmp(p + 1, keys[k], klen)))
            ++k;
        if (k == 3) {
            snprintf(msg, sizeof msg, "unknown key '%.*s' in the header (NumPy's are descr, fortran_order and shape)",
                     klen > 32 ? 32 : (int)klen, p + 1);
            return fail(err, en, msg);
        }
        if (seen[k]++) {
            snprintf(msg, sizeof msg, "key '%s' given twice in the header", keys[k]);
            return fail(err, en, msg);
        }
        p = skip_ws(close + 1, end);
        if (p >= end || *p != ':') {
            snprintf(msg, sizeof msg, "bad header: no ':' after '%s'", keys[k]);
            return fail(err, en, msg);
        }
        p = skip_ws(p + 1, end);
        if (k == 0) { /* descr: a quoted type string */
            const char *d = p < end && (*p == '\'' || *p == '"') ? memchr(p + 1, *p, (size_t)(end - p - 1)) : NULL;
            if (p >= end || (*p != '\'' && *p != '"'))
                return fail(err, en, "bad 'descr' (a quoted type string)");
            if (!d)
                return fail(err, en, "unterminated 'descr'");
            const size_t n = (size_t)(d - p - 1);
            if (n != 3 || (memcmp(p + 1, "<f4", 3) && memcmp(p + 1, "<f2", 3) && memcmp(p + 1, "<u2", 3))) {
                snprintf(msg, sizeof msg, "unsupported dtype '%.*s' (float32 '<f4', float16 '<f2' or bf16 bits '<u2')",
                         n > 16 ? 16 : (int)n, p + 1);
                return fail(err, en, msg);
            }
            memcpy(out->descr, p + 1, 3);
            out->descr[3] = '\0';
            out->elem_size = p[3] == '4' ? 4 : 2;
            p = d + 1;
        } else if (k == 1) { /* fortran_order: False or True, exactly */
            if (word_at(p, end, "True", 4))
                return fail(err, en, "Fortran-order arrays are not supported (write C order, np.ascontiguousarray)");
            if (!word_at(p, end, "False", 5))
                return fail(err, en, "bad 'fortran_order' (False or True)");
            p += 5;
        } else { /* shape: a tuple of integers */
            const char *s = p;
            if (s >= end || *s != '(')
                return fail(err, en, "header has no 'shape' tuple");
            ++s;
            out->count = 1;
            for (;;) {
                s = skip_ws(s, end);
                if (s < end && *s == ')')
                    break;
                if (out->ndim == NPY_MAX_DIMS)
                    return fail(err, en, "too many dimensions");
                char *stop;
                long long v = strtoll(s, &stop, 10);
                if (stop == s || stop > end || v < 0 || v > (1LL << 40))
                    return fail(err, en, "bad 'shape'");
                out->shape[out->ndim++] = v;
                if (v && out->count > SIZE_MAX / (size_t)v)
                    return fail(err, en, "shape too large");
                out->count *= (size_t)v;
                s = skip_ws(stop, end);
                if (s < end && *s == ',')
                    ++s;
                else if (s >= end || *s != ')')
                    return fail(err, en, "bad 'shape'");
            }
            p = s + 1;
        }
        p = skip_ws(p, end);
        if (p < end && *p == ',')
            ++p;
        else if (p >= end || *p != '}') {
            snprintf(msg, sizeof msg, "bad header: expected ',' or '}' after the value of '%s'", keys[k]);
            return fail(err, en, msg);
        }
    }
    for (++p; p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'); ++p) /* (the padding, the newline) */
        ;
    if (p < end)
        return fail(err, en, "bad header: characters after the dict's '}'");
    if (!seen[0])
        return fail(err, en, "header has no 'descr'");
    if (!seen[1])
        return fail(err, en, "header has no 'fortran_order'");
    if (!seen[2])
        return fail(err, en, "header has no 'shape' tuple");
    const size_t data_start = hstart + hlen;
    if (out->count > SIZE_MAX / out->elem_size)
        return fail(err, en, "shape too large");
    const size_t bytes = out->count * out->elem_size;
    if (len - data_start < bytes)
        return fail(err, en, "truncated data: the file is shorter than its shape says");
    if (len - data_start > bytes)
        return fail(err, en, "trailing bytes after the data");
    out->data = malloc(bytes ? bytes : 1);
    if (!out->data)
        return fail(err, en, "out of memory");
    memcpy(out->data, b + data_start, bytes);
    return 0;
}

int npy_read(const char *path, npy_array *out, char *err, size_t en)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, en, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    unsigned char *buf = NULL;
    size_t len = 0, cap = 0, got;
    unsigned char chunk[1 << 16];
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (len + got > cap) {
            cap = (len + got) * 2;
            unsigned char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(f);
                return fail(err, en, "out of memory");
            }
            buf = nb;
        }
        memcpy(buf + len, chunk, got);
        len += got;
    }
    fclose(f);
    int rc = npy_parse(buf ? buf : (const unsigned char *)"", len, out, err, en);
    free(buf);
    return rc;
}

void npy_write_target(npy_staged *w, const char *path, mode_t *mode)
{
    struct stat st;
    w->in_place = 0;
    *mode = 0;
    snprintf(w->path, sizeof w->path, "%s", path);
#ifndef _WIN32 /* (no symbolic links to follow there, and no permissions to keep) */
    /* Link by link (readlink, not realpath: a dangling link's target is the file to create, not the link to
     * replace); 40 hops at most, as the kernel's ELOOP limit */
    for (int hops = 0; hops < 40 && lstat(w->path, &st) == 0 && S_ISLNK(st.st_mode); ++hops) {
        char to[4096], next[sizeof w->path];
        const ssize_t n = readlink(w->path, to, sizeof to - 1);
        if (n < 0)
            break;
        to[n] = '\0';
        const char *slash = strrchr(w->path, '/'); /* (a relative target is relative to the link's directory) */
        const int len = to[0] == '/' || !slash ? snprintf(next, sizeof next, "%s", to)
                        : snprintf(next, sizeof next, "%.*s/%s", (int)(slash - w->path), w->path, to);
        if (len < 0 || (size_t)len >= sizeof next)
            break; /* (too long a name: the link itself, as before) */
        memcpy(w->path, next, sizeof next);
    }
#endif
    if (stat(w->path, &st) == 0) {
        w->in_place = !S_ISREG(st.st_mode);
#ifndef _WIN32
        *mode = st.st_mode & 07777;
#endif
    }
    if (w->in_place)
        snprintf(w->tmp, sizeof w->tmp, "%s", w->path);
    else
        snprintf(w->tmp, sizeof w->tmp, "%s.tmp.%ld", w->path, (long)getpid());
}

int npy_write_staged(npy_staged *w, const char *path, const char *descr, int ndim, const int64_t *shape,
                     const void *data, char *err, size_t en)
{
    char dict[512];
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    size_t count = 1;
    for (int i = 0; i < ndim; ++i) {
        n += snprintf(dict + n, sizeof dict - (size_t)n, "%lld%s", (long long)shape[i], ndim == 1 ? "," : i + 1 < ndim ? ", " : "");
        count *= (size_t)shape[i];
    }
    n += snprintf(dict + n, sizeof dict - (size_t)n, "), }");
    /* Pad with spaces so that the data starts on a 64-byte boundary, newline last (NumPy's rule). */
    size_t total = 10 + (size_t)n + 1;
    size_t pad = (64 - total % 64) % 64;
    const size_t hlen = (size_t)n + pad + 1;
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hlen & 0xff), (unsigned char)(hlen >> 8)};
    const size_t elem = descr[2] == '4' ? 4 : 2;
    mode_t mode;
    npy_write_target(w, path, &mode);
    FILE *f = fopen(w->tmp, "wb");
    if (!f) {
        snprintf(err, en, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    int ok = fwrite(pre, 1, 10, f) == 10 && fwrite(dict, 1, (size_t)n, f) == (size_t)n;
    for (size_t i = 0; i < pad && ok; ++i)
        ok = fputc(' ', f) != EOF;
    ok = ok && fputc('\n', f) != EOF && fwrite(data, elem, count, f) == count;
    ok = (fclose(f) == 0) && ok;
    const int saved = errno;
#ifndef _WIN32
    if (ok && mode && !w->in_place && chmod(w->tmp, mode) != 0)
        ok = 0;
#else
    (void)mode;
#endif
    if (!ok) {
        const int why = saved ? saved : errno;
        if (!w->in_place)
            remove(w->tmp);
        snprintf(err, en, "cannot write %s: %s", path, why ? strerror(why) : "short write");
        return -1;
    }
    return 0;
}

int npy_commit(npy_staged *w, char *err, size_t en)
{
#ifdef _WIN32 /* (rename does not replace a file there) */
    if (!w->in_place)
        remove(w->path);
#endif
    if (w->in_place || rename(w->tmp, w->path) == 0)
        return 0;
    snprintf(err, en, "cannot write %s: %s", w->path, strerror(errno));
    remove(w->tmp);
    return -1;
}

void npy_discard(npy_staged *w)
{
    if (!w->in_place)
        remove(w->tmp);
}

int npy_write(const char *path, const char *descr, int ndim, const int64_t *shape, const void *data, char *err,
              size_t en)
{
    npy_staged w;
    return npy_write_staged(&w, path, descr, ndim, shape, data, err, en) != 0 ? -1 : npy_commit(&w, err, en);
}

void npy_free(npy_array *a)
{
    free(a->data);
    a->data = NULL;
}
