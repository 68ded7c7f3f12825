/* SPDX-License-Identifier: MIT */
/*
 * table.c: the kernel modules by kernel, and what every launch asks of them: the kernel a configuration
 * runs, its build options, and its compiled kernel (a cached program or a compile).
 */
#include "module.h"

#include <stdio.h>

const fcl_kernel_module *fcl_module_of(fcl_kernel_id id)
{
    switch (id) {
    case FCL_K_FLASH_FWD:
        return &fcl_portable_module;
    case FCL_K_FLASH_MMA:
        return &fcl_mma_module;
    case FCL_K_FLASH_WGMMA:
        return &fcl_wgmma_module;
    case FCL_K_FLASH_MFMA:
        return &fcl_mfma_module;
    case FCL_K_FLASH_WMMA:
        return &fcl_wmma_module;
    case FCL_K_FLASH_DPAS:
        return &fcl_dpas_module;
    case FCL_K_FLASH_DECODE:
        return &fcl_decode_module;
    case FCL_K_FLASH_DECODE_MMA:
        return &fcl_decode_mma_module;
    case FCL_K_FLASH_COMBINE:
        return &fcl_combine_module;
    case FCL_K_NAIVE_FWD:
    case FCL_K_NAIVE_REF_ROWS:
    case FCL_K_COMPARE_ROWS:
        return &fcl_naive_module;
    case FCL_K_KV_APPEND:
        return &fcl_append_module;
    case FCL_K_SOFTMAX_ROWS:
    case FCL_K_TO_F32:
    case FCL_K_FROM_F32:
        return &fcl_standard_module;
    case FCL_KERNEL_COUNT:
        break;
    }
    return NULL;
}

fcl_kernel_id fcl_config_kernel(const flashcl_config *c)
{
    if (c->algorithm == FLASHCL_ALGO_NAIVE)
        return FCL_K_NAIVE_FWD;
    switch (c->kernel) {
    case FLASHCL_KERNEL_MMA:
        return FCL_K_FLASH_MMA;
    case FLASHCL_KERNEL_WGMMA:
        return FCL_K_FLASH_WGMMA;
    case FLASHCL_KERNEL_MFMA:
        return FCL_K_FLASH_MFMA;
    case FLASHCL_KERNEL_WMMA:
        return FCL_K_FLASH_WMMA;
    case FLASHCL_KERNEL_DPAS:
        return FCL_K_FLASH_DPAS;
    case FLASHCL_KERNEL_DECODE:
        return FCL_K_FLASH_DECODE;
    case FLASHCL_KERNEL_DECODE_MMA:
        return FCL_K_FLASH_DECODE_MMA;
    default:
        return FCL_K_FLASH_FWD;
    }
}

void fcl_kernel_options(fcl_kernel_id id, const flashcl_problem *p, const flashcl_config *c, char *buf, size_t n)
{
    fcl_module_of(id)->options(p, c, buf, n);
}

flashcl_status fcl_kernel_create(flashcl_context *ctx, fcl_kernel_id id, const flashcl_problem *p,
                                 const flashcl_config *c, cl_kernel *out, char *options, size_t options_len)
{
    const fcl_kernel_def *def = fcl_kernel_def_of(id);
    char opts[512];
    fcl_kernel_options(id, p, c, opts, sizeof opts);
    if (options)
        fcl_strlcpy(options, opts, options_len);
    cl_program prog;
    flashcl_status st = fcl_get_program(ctx, def->sources, opts, &prog);
    if (st != FLASHCL_SUCCESS)
        return st;
    cl_int err;
    *out = clCreateKernel(prog, def->entry, &err);
    if (!*out) {
        char what[96];
        snprintf(what, sizeof what, "clCreateKernel(%s)", def->entry);
        return fcl_fail_cl(ctx, err, what);
    }
    return FLASHCL_SUCCESS;
}

/* A config's local memory by its kernel's module (Q's and K's head dim d, V's dv); 0 for one that cannot run. */
uint64_t fcl_config_local_bytes(int32_t d, int32_t dv, const flashcl_config *c)
{
    const fcl_kernel_module *m = c ? fcl_module_of(fcl_config_kernel(c)) : NULL;
    return m && m->local_bytes && d >= 1 ? m->local_bytes(d, dv, c) : 0;
}

uint64_t flashcl_flash_local_mem_bytes_abi(const flashcl_abi *abi, int32_t head_dim, const flashcl_config *c)
{
    if (fcl_abi_guard(abi, "flashcl_flash_local_mem_bytes") != FLASHCL_SUCCESS)
        return 0;
    return fcl_config_local_bytes(head_dim, head_dim, c);
}
