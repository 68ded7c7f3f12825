/* SPDX-License-Identifier: MIT */
/*
 * testutil.h: what the Check suites share: running a suite once per OpenCL device (filtered by
 * FLASHCL_TEST_PLATFORM, a substring of "platform / device"), exit 77 when no device matches, and
 * small helpers for buffers and problems.
 */
#ifndef FLASHCL_TESTUTIL_H
#define FLASHCL_TESTUTIL_H

#include "flashcl.h"
#include "hostmath.h"

#include <check.h>

/* The device the current suite run is on (valid inside tests). */
extern cl_context tu_context;
extern cl_device_id tu_device;
extern cl_command_queue tu_queue;
extern char tu_device_label[512];

/*
 * Runs make_suite()'s suite once per matching device, or once with no device when needs_device is 0.
 * Returns the process exit status: 0 all passed, 1 a failure, 77 no device (skipped).
 */
int tu_run(Suite *(*make_suite)(void), int needs_device);

/* Whether a "platform / device" label contains filter, case-insensitively (NULL or "" matches all). */
int tu_matches(const char *label, const char *filter);

/* A flashcl context on the current device with test settings (disk cache off, validation off). */
flashcl_context *tu_context_create(void);

/* A buffer of `bytes` filled from host (or with the byte 0xff, a NaN in every dtype, when NULL). */
cl_mem tu_buffer(size_t bytes, const void *host);
/* Reads a whole buffer (from its placement offset, below) into a new malloc'd block. */
void *tu_read(cl_mem m, size_t bytes);

/* Placement: with tu_offsets(unit), unit nonzero, every tu_buffer from then on puts its contents at an
 * offset inside a larger buffer, a different multiple of unit for each buffer (unit * 1..9), between
 * margins of the byte 0xa5; tu_offset_of(m) is that offset (0 for a buffer made otherwise) and
 * tu_check_margins() asserts that no margin of any placed buffer was written. tu_offsets(0) ends it. */
void tu_offsets(size_t unit);
size_t tu_offset_of(cl_mem m);
void tu_check_margins(void);

/* A config's kernel as one number, for tables and assertions: the matrix-unit prefill kernels 1
 * (flash_mma), 2 (emulated), 3 (flash_wgmma), 4 (emulated), 5 (flash_mfma), 6 (emulated), 7 (flash_wmma),
 * 8 (emulated), 9 (flash_dpas), 10 (emulated), else 0; the decode kernels 1 (flash_decode,
 * team sums through local memory), 2 (by shuffles), 3 (flash_decode_mma), 4 (emulated), else 0. */
static inline int cfg_mma(const flashcl_config *c)
{
    return c->kernel == FLASHCL_KERNEL_MMA     ? (c->emulated ? 2 : 1)
           : c->kernel == FLASHCL_KERNEL_WGMMA ? (c->emulated ? 4 : 3)
           : c->kernel == FLASHCL_KERNEL_MFMA  ? (c->emulated ? 6 : 5)
           : c->kernel == FLASHCL_KERNEL_WMMA  ? (c->emulated ? 8 : 7)
           : c->kernel == FLASHCL_KERNEL_DPAS  ? (c->emulated ? 10 : 9)
                                               : 0;
}
static inline int cfg_decode(const flashcl_config *c)
{
    return c->kernel == FLASHCL_KERNEL_DECODE ? (c->shuffles ? 2 : 1)
           : c->kernel == FLASHCL_KERNEL_DECODE_MMA ? (c->emulated ? 4 : 3)
                                                    : 0;
}

#endif
