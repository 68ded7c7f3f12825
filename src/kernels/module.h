/* SPDX-License-Identifier: MIT */
/*
 * module.h: what a kernel module exports (src/kernels/<kernel>.c, one a kernel): which problems the
 * kernel takes and why not, its tile choice and local memory, its override check, its build options,
 * its constant and buffer binding and its grid. src/tiles.c holds only the order of preference among
 * them; src/plan.c and src/enqueue.c call through the table (src/kernels/table.c), never a switch on the
 * kernel. Design reasons: docs/design/<kernel>.md.
 */
#ifndef FLASHCL_KERNEL_MODULE_H
#define FLASHCL_KERNEL_MODULE_H

#include "../kernels.h"
#include "../../cl/layout.h"

/* Split-KV's scratch for one launch: the partial outputs and their log-sum-exps (op_off, lp_off in
 * floats into `mem`); without splits q stands in and nothing reads it. */
typedef struct fcl_scratch {
    cl_mem mem;
    cl_long op_off, lp_off;
    cl_mem counters; /* flash_decode_mma's merge in the kernel: the row blocks' counters (the plan's), or NULL */
} fcl_scratch;

typedef struct fcl_kernel_module {
    fcl_kernel_id id;
    const char *name; /* "portable", "mma", "wgmma", "mfma", "wmma", "dpas", "decode", "decode_mma", "naive", "combine", "append" */
    /* Whether the kernel takes the problem (the path and the device aside); if not, why. NULL: any. */
    int (*takes)(const flashcl_problem *p, char *why, size_t n);
    /* Its shape within the choice's limits: 1 with cfg's shape fields set, or 0 with why. NULL: none. */
    int (*choose)(const flashcl_device_profile *pr, const fcl_choice *ch, const flashcl_problem *p,
                  flashcl_config *cfg, char *why, size_t n);
    /* Local memory of a config, Q's and K's head dim d, V's dv; 0 for one that cannot run. NULL: none. */
    uint64_t (*local_bytes)(int32_t d, int32_t dv, const flashcl_config *c);
    /* An override config's check: 1 with c normalised to the kernel's fields, or 0 with why (a sentence
     * that follows "the context's override config"). NULL: no override takes this kernel. */
    int (*override)(const flashcl_device_profile *pr, const fcl_choice *ch, const flashcl_problem *p,
                    flashcl_config *c, char *why, size_t n);
    /* The floats a work-item keeps in registers (what a shrink after a spill makes smaller). NULL: not
     * shrunk that way. */
    int64_t (*register_block)(const flashcl_config *c, int32_t head_dim_v);
    void (*options)(const flashcl_problem *p, const flashcl_config *c, char *buf, size_t n);
    /* The arguments fixed at plan time, and those of each enqueue. NULL: none. */
    void (*bind_constants)(fcl_args *a, const flashcl_plan *pl);
    void (*bind_buffers)(fcl_args *a, const flashcl_plan *pl, const flashcl_tensors *t, const fcl_scratch *s);
    /* The launch's work sizes. NULL: the plan sets them. */
    void (*grid)(const flashcl_plan *pl, size_t global[2], size_t local[2]);
} fcl_kernel_module;

extern const fcl_kernel_module fcl_portable_module, fcl_mma_module, fcl_wgmma_module, fcl_mfma_module, fcl_wmma_module, fcl_dpas_module,
    fcl_decode_module,
    fcl_decode_mma_module, fcl_naive_module, fcl_combine_module, fcl_append_module, fcl_standard_module;

/* The module of a kernel (src/kernels/table.c): the naive validator's kernels are the naive module's,
 * standard attention's softmax and conversions the standard module's. */
const fcl_kernel_module *fcl_module_of(fcl_kernel_id id);
/* A config's local memory by its kernel's module (Q's and K's head dim d, V's dv); 0 for one that cannot
 * run (src/kernels/table.c). */
uint64_t fcl_config_local_bytes(int32_t d, int32_t dv, const flashcl_config *c);

/* Shared by the modules' options (src/kernels.c): the dtype's -D, the problem's feature switches (flash:
 * the window compiled in), " -DHEAD_DIM_V=n" where V's head dim is not Q's, " -DFCL_SUB_GROUP=n". */
const char *fcl_dtype_define(flashcl_dtype t);
size_t fcl_feature_defines(const flashcl_problem *p, int flash, char *buf, size_t n);
void fcl_dim_v_define(const flashcl_problem *p, char *buf, size_t n);
void fcl_sub_group_define(const flashcl_config *c, char *buf, size_t n);

/* The flash kernels' grid (src/kernels.c): row tiles of the (packed) query rows x (batch, head, split). */
void fcl_flash_grid(const flashcl_plan *pl, size_t global[2], size_t local[2]);

/* What one module takes from another, and the chooser (src/tiles.c) from the modules. */
int fcl_mma_takes(const flashcl_problem *p, char *why, size_t n);   /* mma.c; wgmma's start */
const char *fcl_mma_shape_refusal(const flashcl_problem *p); /* mma.c: its shape checks (NULL: taken) */
void fcl_mma_constants(fcl_args *a, const flashcl_plan *pl);       /* mma.c; wgmma takes flash_mma's */
void fcl_mma_buffers(fcl_args *a, const flashcl_plan *pl, const flashcl_tensors *t, const fcl_scratch *s);
int fcl_decode_takes(const flashcl_problem *p, char *why, size_t n); /* decode.c; decode_mma's start */
void fcl_decode_constants(fcl_args *a, const flashcl_plan *pl);      /* decode_mma takes flash_decode's */
void fcl_decode_buffers(fcl_args *a, const flashcl_plan *pl, const flashcl_tensors *t, const fcl_scratch *s);
int fcl_decode_mma_fuses(const flashcl_config *c); /* decode_mma.c: whether it merges its splits itself */
/* portable.c: whether the portable kernel's tiles in cfg (from any source) suit the problem and fit the
 * limits; if not, why. */
int fcl_portable_fits(const flashcl_device_profile *pr, const flashcl_problem *p, uint64_t budget, size_t max_wg,
                      const flashcl_config *cfg, char *why, size_t why_len);

/* The matrix-unit kernels' K/V stages (cl/flash_mma.cl's and cl/flash_wgmma.cl's KV_STAGES; 0 reads as 1). */
static inline int32_t fcl_mma_stages(const flashcl_config *c)
{
    return c->kv_stages > 1 ? c->kv_stages : 1;
}

/* The matrix units a profile's probe proved (matrix_units, by vendor): on an Intel GPU its matrix engines
 * (DPAS: flash_dpas); on an AMD device AMD's matrix cores
 * through clang's built-ins (wavefronts of 64: CDNA's MFMA, flash_mfma; of 32: RDNA3/4's WMMA,
 * flash_wmma), elsewhere NVIDIA's (mma.sync and shfl from inline PTX: flash_mma, the decode kernels'
 * shuffles; 2: sm_90a programs too, flash_wgmma). */
static inline int fcl_ptx_units(const flashcl_device_profile *pr)
{
    return pr->vendor == FLASHCL_VENDOR_AMD || pr->vendor == FLASHCL_VENDOR_INTEL ? 0 : pr->matrix_units;
}
/* Intel's matrix engines (DPAS through cl_intel_subgroup_matrix_multiply_accumulate: flash_dpas) */
static inline int fcl_dpas_units(const flashcl_device_profile *pr)
{
    return pr->vendor == FLASHCL_VENDOR_INTEL && !pr->is_cpu && pr->matrix_units > 0;
}
static inline int fcl_mfma_units(const flashcl_device_profile *pr)
{
    return pr->vendor == FLASHCL_VENDOR_AMD && pr->matrix_units > 0 && pr->wg_multiple == 64;
}
static inline int fcl_wmma_units(const flashcl_device_profile *pr)
{
    return pr->vendor == FLASHCL_VENDOR_AMD && pr->matrix_units > 0 && pr->wg_multiple == 32;
}

/* Intel GPUs, and among them Xe-HPC (128 KiB of local memory: pvc): what IGC's register budget asks of
 * the choice (tools/vendor_check.sh). */
static inline int fcl_intel_gpu(const flashcl_device_profile *pr)
{
    return pr->vendor == FLASHCL_VENDOR_INTEL && !pr->is_cpu;
}
static inline int fcl_intel_xe_hpc(const flashcl_device_profile *pr)
{
    return fcl_intel_gpu(pr) && pr->local_mem_size >= 128 * 1024;
}

/* log2(e): the flash kernels take the scale and the cap in base 2 (exp2 in their loops). */
static inline cl_float fcl_log2e(void)
{
    return 1.4426950408889634f;
}

/* Binds an optional buffer: the tensor's, or q (never read: the kernel reads it only when compiled in). */
#define FCL_OPT(t, member) ((t)->member ? (t)->member : (t)->q)

#endif
