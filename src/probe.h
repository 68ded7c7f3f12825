/* SPDX-License-Identifier: MIT */
/*
 * probe.h: the device probes (probe.c): what a device's driver does not report, found by building and
 * running small programs. The profile query (device.c) runs them; each bypasses the program caches (its
 * programs are not a plan's), and the costly ones keep their result in the disk cache.
 */
#ifndef FLASHCL_PROBE_H
#define FLASHCL_PROBE_H

#include "internal.h"

/* 1 when the device compiles cl/flash_mma.cl with FCL_PTX=1 in `context` (a test compile, outside any
 * cache); 0 for devices other than NVIDIA of compute capability 8.0+, or when it does not. */
int fcl_probe_matrix_units(cl_context context, cl_device_id device, const flashcl_device_profile *pr);
/* 1 where a tiny program finished for sm_90a (ptx.h: a marked wgmma.fence and a marked register move)
 * builds, runs and gives the right answer on the device (NVIDIA, compute capability 9.x, matrix units
 * proven); the result kept in the disk cache once per device and driver. *why: the reason where it is 0. */
int fcl_probe_sm90a_cached(cl_context context, cl_device_id device, const flashcl_device_profile *pr,
                           const char *cache_dir, const char **why);
/* AMD's matrix cores flashcl has a kernel for, by the arch from CL_DEVICE_NAME and the wave size:
 * FLASHCL_KERNEL_MFMA on CDNA (gfx90a, gfx940-942, gfx950; wavefronts of 64), FLASHCL_KERNEL_WMMA on RDNA3/4
 * (gfx11, gfx12; wavefronts of 32); 0 elsewhere. */
int fcl_amd_matrix_kind(const flashcl_device_profile *pr);
/* The matrix probe program of kind (FLASHCL_KERNEL_MFMA or _WMMA: the instruction on small integers, each
 * lane checking its accumulators) built with `options` (-DFCL_AMD_MMA=1: the built-in; 0: emulated, any
 * device, for the tests, with -DWMMA_GFX=11 or 12 for the layout) and run on one work-group of a wave: 1
 * where it built, ran and every lane's answer was right. */
int fcl_probe_amd_program(cl_context context, cl_device_id device, int kind, const char *options);
/* 1 where the device has AMD matrix cores flashcl has a kernel for (fcl_amd_matrix_kind), that kernel
 * builds with the built-in (its smallest configuration, a plan's options) and the probe program runs right;
 * else 0 with *why. */
int fcl_probe_amd(cl_context context, cl_device_id device, const flashcl_device_profile *pr, const char **why);
/* The DPAS layout an Intel GPU's matrix engines take (16 on Xe-HPC and Xe2: 128 KiB of local memory; else
 * 8) where it lists cl_intel_subgroup_matrix_multiply_accumulate; 0 elsewhere. */
int fcl_intel_dpas_sg(const flashcl_device_profile *pr);
/* The DPAS probe program for sub-groups of sg (the instruction on small integers, each work-item checking
 * its results) built with `options` (-DFCL_INTEL_MMA=1: the built-ins; 0: emulated, any device) and, where
 * run is nonzero, run on one sub-group: 1 where it built (and ran, every answer right). */
int fcl_probe_dpas_program(cl_context context, cl_device_id device, int sg, const char *options, int run);
/* 1 where the Intel GPU lists the extension (fcl_intel_dpas_sg), flash_dpas builds with its built-ins (the
 * smallest configuration, a plan's options) and the probe program runs right; in Intel's AUB mode
 * ($SetCommandStreamReceiver set: nothing runs) where both build. Else 0 with *why. */
int fcl_probe_dpas(cl_context context, cl_device_id device, const flashcl_device_profile *pr, const char **why);

/* The largest multiple of `step` in [lo, hi] that `fits` (monotone, true at lo): a binary search. */
uint64_t fcl_search_limit(uint64_t lo, uint64_t hi, uint64_t step, int (*fits)(void *arg, uint64_t bytes), void *arg);
/* The local memory a work-group's static __local arrays may take on `device`: the largest array up to
 * `hi` bytes that builds (compile probes, a binary search to 4 bytes above the reported size), run once
 * (4 work-groups reading what their neighbours wrote), and counted with the compiler's own bytes as the
 * kernel reports them (232448 on the H200: ptxas's limit on the sum); the reported size when that run
 * fails. *builds (may be NULL): programs built; *trusted (may be NULL): 0 when that run failed (a result
 * not to be kept). */
uint64_t fcl_probe_static_local(cl_context context, cl_device_id device, const flashcl_device_profile *pr,
                                uint64_t hi, int *builds, int *trusted);
/* fcl_probe_static_local's result from `cache_dir` (an entry per device, driver and bounds), else probed
 * and stored there when trusted (NULL: probed every time). *builds: 0 when the cache answered. */
uint64_t fcl_static_local_cached(cl_context context, cl_device_id device, const flashcl_device_profile *pr,
                                 uint64_t hi, const char *cache_dir, int *builds);

#endif
