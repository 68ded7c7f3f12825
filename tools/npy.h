/* SPDX-License-Identifier: MIT */
/*
 * npy.h: reading and writing NumPy .npy files (format versions 1 to 3), little-endian float32,
 * float16 and uint16 (bf16 bits), C order. Every malformed file gets a message, never a crash.
 */
#ifndef FLASHCL_NPY_H
#define FLASHCL_NPY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define NPY_MAX_DIMS 8

typedef struct npy_array {
    char descr[8]; /* "<f4", "<f2" or "<u2" */
    size_t elem_size;
    int ndim;
    int64_t shape[NPY_MAX_DIMS];
    size_t count; /* product of the shape */
    void *data;   /* count * elem_size bytes, malloc'd */
} npy_array;

/* Parses a whole .npy file held in memory. Returns 0 and fills *out (data copied), or -1 with err. */
int npy_parse(const unsigned char *bytes, size_t len, npy_array *out, char *err, size_t err_len);
/* Reads a file; same contract. */
int npy_read(const char *path, npy_array *out, char *err, size_t err_len);
/* Writes a file atomically (temporary name, then rename): nothing is left behind on failure. Through a
 * symbolic link its target is written (the link stays; a dangling link's target is created); a FIFO or a
 * device is written in place; a replaced file keeps its permissions. */
int npy_write(const char *path, const char *descr, int ndim, const int64_t *shape, const void *data, char *err,
              size_t err_len);
/* The same in two steps, so that several files are written all or none: npy_write_staged writes the
 * temporary file, then npy_commit renames it into place or npy_discard removes it. */
typedef struct npy_staged {
    char path[4096], tmp[4200];
    int in_place;
} npy_staged;
int npy_write_staged(npy_staged *w, const char *path, const char *descr, int ndim, const int64_t *shape,
                     const void *data, char *err, size_t err_len);
int npy_commit(npy_staged *w, char *err, size_t err_len);
void npy_discard(npy_staged *w);
/* Where a write of `path` lands, by npy_write's rule (the command's other files share it: cli_write_file):
 * w->path the file, through symbolic links; w->tmp the temporary name beside it, or w->path itself where
 * w->in_place (an existing file that is not a regular one); *mode an existing file's permissions, which
 * its replacement keeps (0: none). Commit or discard as above. */
void npy_write_target(npy_staged *w, const char *path, mode_t *mode);
void npy_free(npy_array *a);

#endif
