/* SPDX-License-Identifier: MIT */
/*
 * ptx.h: Hopper's sm_90a instructions (wgmma, setmaxnreg) from OpenCL C. NVIDIA's OpenCL compiles for
 * .target sm_90, where ptxas refuses them, so a kernel writes each inside a PTX comment marked "//SM90A "
 * (the compiler still substitutes its operands) and the program's PTX is finished before its second
 * build: the marks removed, the target set to sm_90a, and where a kernel's body says "//SM90A-THREADS n"
 * its entry given the thread count that setmaxnreg needs (ptx.c). A text rewrite only: the callers build
 * the finished text (program.c for the kernels, probe.c for the sm_90a probe).
 */
#ifndef FLASHCL_PTX_H
#define FLASHCL_PTX_H

#include <stddef.h>

/* The finished text (malloc'd, NUL-terminated, *out_len its length with the NUL, as NVIDIA's binaries
 * count it) of the program binary ptx (len bytes), and the number of marks removed in *marks; or NULL
 * with the reason in *why when the text is not PTX for sm_90 or sm_90a. */
unsigned char *fcl_ptx_finish_sm90a(const unsigned char *ptx, size_t len, size_t *out_len, int *marks,
                                    const char **why);
/* Whether a program is built with the finishing step: its options ask for it (-DFCL_SM90A=1). */
int fcl_options_sm90a(const char *options);

#endif
