/* SPDX-License-Identifier: MIT */
/*
 * ptx.c: the finishing of NVIDIA's PTX for sm_90a, a text rewrite (ptx.h): the program builder
 * (program.c) and the sm_90a probe (probe.c) build the finished text again. Nothing here calls OpenCL.
 */
#include "ptx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int ptx_ident_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Where a kernel's body says "//SM90A-THREADS n": the entry's header made to fix the register count at
 * the entry, which setmaxnreg needs (ptxas ignores it otherwise, C7508): ".reqntid n, 1, 1" unless the
 * header has a thread count (NVIDIA's compiler writes the required work-group size as one), and
 * ".minnctapersm 1" unless it has that or a register count (a thread count alone left a small kernel's
 * count open: docs/design/wgmma.md). Works on the NUL-terminated text *buf of *n bytes (without the NUL),
 * reallocating it; returns 0 with the reason for a mark outside an entry. */
static int ptx_entry_threads(unsigned char **buf, size_t *n, const char **why)
{
    static const char mark[] = "//SM90A-THREADS ";
    for (size_t from = 0;;) {
        char *text = (char *)*buf;
        char *m = strstr(text + from, mark);
        if (!m)
            return 1;
        const long threads = strtol(m + sizeof mark - 1, NULL, 10);
        char *entry = NULL;
        for (char *e = strstr(text, ".entry "); e && e < m; e = strstr(e + 1, ".entry "))
            entry = e;
        char *brace = entry ? strstr(entry, "\n{") : NULL;
        if (threads < 1 || threads > 1024 || !brace || brace > m) {
            *why = "a thread-count mark (//SM90A-THREADS) outside a kernel's body, or not a count";
            return 0;
        }
        from = (size_t)(m - text) + sizeof mark - 1;
        int counted = 0, fixed = 0;
        for (const char *d = entry; d < brace; ++d) {
            counted |= !strncmp(d, ".reqntid", 8) || !strncmp(d, ".maxntid", 8);
            fixed |= !strncmp(d, ".minnctapersm", 13) || !strncmp(d, ".maxnreg", 8);
        }
        char directive[64] = "";
        int dl = 0;
        if (!counted)
            dl += snprintf(directive, sizeof directive, "\n.reqntid %ld, 1, 1", threads);
        if (!fixed)
            dl += snprintf(directive + dl, sizeof directive - (size_t)dl, "\n.minnctapersm 1");
        if (dl == 0)
            continue;
        const size_t at = (size_t)(brace - text); /* (an offset: realloc may move the text) */
        unsigned char *grown = realloc(*buf, *n + (size_t)dl + 1);
        if (!grown) {
            *why = "out of host memory";
            return 0;
        }
        memmove(grown + at + dl, grown + at, *n + 1 - at);
        memcpy(grown + at, directive, (size_t)dl);
        *buf = grown;
        *n += (size_t)dl;
        from += (size_t)dl;
    }
}

unsigned char *fcl_ptx_finish_sm90a(const unsigned char *ptx, size_t len, size_t *out_len, int *marks,
                                    const char **why)
{
    static const char mark[] = "//SM90A ", target[] = ".target sm_90";
    const size_t mark_len = sizeof mark - 1, target_len = sizeof target - 1;
    *marks = 0;
    *why = NULL;
    while (len > 0 && ptx[len - 1] == '\0') /* (NVIDIA's binary size counts its NUL) */
        --len;
    if (memchr(ptx, '\0', len)) {
        *why = "the program binary is not PTX text (a NUL inside it)";
        return NULL;
    }
    unsigned char *out = malloc(len + 2); /* the text, one more byte for the 'a', the NUL */
    if (!out) {
        *why = "out of host memory";
        return NULL;
    }
    size_t n = 0;
    int targets = 0;
    for (size_t i = 0; i < len;) {
        if (len - i >= mark_len && !memcmp(ptx + i, mark, mark_len)) {
            i += mark_len;
            ++*marks;
            continue;
        }
        if ((i == 0 || ptx[i - 1] == '\n') && len - i >= target_len && !memcmp(ptx + i, target, target_len)) {
            const unsigned char next = i + target_len < len ? ptx[i + target_len] : '\n';
            if (next == 'a' && (i + target_len + 1 >= len || !ptx_ident_char(ptx[i + target_len + 1]))) {
                ++targets; /* already sm_90a */
            } else if (!ptx_ident_char(next)) {
                if (targets++ == 0) {
                    memcpy(out + n, target, target_len);
                    n += target_len;
                    out[n++] = 'a';
                    i += target_len;
                    continue;
                }
            }
        }
        out[n++] = ptx[i++];
    }
    if (targets != 1) {
        free(out);
        *why = targets ? "the PTX has more than one .target directive" : "the PTX is not for .target sm_90";
        return NULL;
    }
    out[n] = '\0';
    if (!ptx_entry_threads(&out, &n, why)) {
        free(out);
        return NULL;
    }
    *out_len = n + 1;
    return out;
}

int fcl_options_sm90a(const char *options)
{
    return options && strstr(options, "-DFCL_SM90A=1") != NULL;
}
