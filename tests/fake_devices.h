/* SPDX-License-Identifier: MIT */
/*
 * fake_devices.h: device profiles of every vendor, as their drivers report them (and as NVIDIA's static
 * local memory probe finds them), for the host suites that ask the chooser what it does on a device
 * that is not here (test_tiles.c, test_choice_*.c, test_golden.c).
 */
#ifndef FLASHCL_TESTS_FAKE_DEVICES_H
#define FLASHCL_TESTS_FAKE_DEVICES_H

#include <flashcl.h>
#include <string.h>

typedef struct fake_device {
    const char *name;
    flashcl_vendor vendor;
    uint64_t local;          /* local memory, bytes */
    size_t max_wg, multiple; /* the work-group size limit, and the preferred multiple (warp, wavefront) */
    uint64_t static_local;   /* what static __local arrays may take (NVIDIA's probe); 0: local */
    uint64_t per_cu;         /* local memory a compute unit holds; 0: local */
    int cc;                  /* NVIDIA compute capability x 10 */
} fake_device;

static const fake_device fakes[] = {
    {.name = "NVIDIA H200 (48 KiB, 1024, warp 32)", .vendor = FLASHCL_VENDOR_NVIDIA,
     .local = 48 * 1024, .max_wg = 1024, .multiple = 32},
    {.name = "AMD CDNA (64 KiB, 256, wave 64)", .vendor = FLASHCL_VENDOR_AMD,
     .local = 64 * 1024, .max_wg = 256, .multiple = 64},
    {.name = "AMD RDNA (64 KiB, 1024, wave 32)", .vendor = FLASHCL_VENDOR_AMD,
     .local = 64 * 1024, .max_wg = 1024, .multiple = 32},
    {.name = "Intel Xe (64 KiB, 512, subgroup 8)", .vendor = FLASHCL_VENDOR_INTEL,
     .local = 64 * 1024, .max_wg = 512, .multiple = 8},
    {.name = "Intel Xe (64 KiB, 512, subgroup 16)", .vendor = FLASHCL_VENDOR_INTEL,
     .local = 64 * 1024, .max_wg = 512, .multiple = 16},
    {.name = "Intel Xe (64 KiB, 1024, subgroup 32)", .vendor = FLASHCL_VENDOR_INTEL,
     .local = 64 * 1024, .max_wg = 1024, .multiple = 32},
    {.name = "a 32 KiB / 1024 GPU", .vendor = FLASHCL_VENDOR_OTHER,
     .local = 32 * 1024, .max_wg = 1024, .multiple = 32},
    {.name = "PoCL CPU (512 KiB cache as local, 4096)", .vendor = FLASHCL_VENDOR_POCL,
     .local = 512 * 1024, .max_wg = 4096, .multiple = 8},
    {.name = "PoCL CPU (1 MiB cache as local, 4096)", .vendor = FLASHCL_VENDOR_POCL,
     .local = 1024 * 1024, .max_wg = 4096, .multiple = 8},
    {.name = "rusticl llvmpipe (32 KiB, 1024)", .vendor = FLASHCL_VENDOR_MESA,
     .local = 32 * 1024, .max_wg = 1024, .multiple = 8},
    {.name = "small mobile GPU (16 KiB, 128)", .vendor = FLASHCL_VENDOR_ARM,
     .local = 16 * 1024, .max_wg = 128, .multiple = 16},
    /* NVIDIA as the static local memory probe finds it: reported 48 KiB, static arrays up to the opt-in
     * limit, shared memory per SM (CUDA C++ Programming Guide's table) */
    {.name = "NVIDIA Hopper (48 KiB reported, 227 KiB static, 228 KiB an SM)", .vendor = FLASHCL_VENDOR_NVIDIA,
     .local = 48 * 1024, .max_wg = 1024, .multiple = 32, .static_local = 227 * 1024, .per_cu = 228 * 1024, .cc = 90},
    {.name = "NVIDIA A100 (48 KiB reported, 163 KiB static, 164 KiB an SM)", .vendor = FLASHCL_VENDOR_NVIDIA,
     .local = 48 * 1024, .max_wg = 1024, .multiple = 32, .static_local = 163 * 1024, .per_cu = 164 * 1024, .cc = 80},
    {.name = "NVIDIA Ampere/Ada consumer (48 KiB reported, 99 KiB static, 100 KiB an SM)",
     .vendor = FLASHCL_VENDOR_NVIDIA, .local = 48 * 1024, .max_wg = 1024, .multiple = 32, .static_local = 99 * 1024,
     .per_cu = 100 * 1024, .cc = 89},
    {.name = "NVIDIA Turing (48 KiB reported, 64 KiB static, 64 KiB an SM)", .vendor = FLASHCL_VENDOR_NVIDIA,
     .local = 48 * 1024, .max_wg = 1024, .multiple = 32, .static_local = 64 * 1024, .per_cu = 64 * 1024, .cc = 75},
};
#define N_FAKES ((int)(sizeof fakes / sizeof *fakes))

/* The profile a fake device's driver would give: its limits, with matrix_units 0 (a caller that wants
 * the matrix-unit kernels sets the level the probe would have found). */
static inline flashcl_device_profile fake_profile(const fake_device *f)
{
    flashcl_device_profile p;
    memset(&p, 0, sizeof p);
    strncpy(p.name, f->name, sizeof p.name - 1);
    p.vendor = f->vendor;
    p.local_mem_size = f->local;
    p.max_work_group_size = f->max_wg;
    p.wg_multiple = f->multiple;
    p.is_cpu = f->vendor == FLASHCL_VENDOR_POCL || f->vendor == FLASHCL_VENDOR_MESA;
    p.local_mem_static = f->static_local ? f->static_local : f->local;
    p.local_mem_per_cu = f->per_cu ? f->per_cu : f->local;
    p.nv_cc_major = f->cc / 10;
    p.nv_cc_minor = f->cc % 10;
    return p;
}

/* The highest matrix-unit level the profile's probe could find: NVIDIA's by compute capability (1: mma.sync
 * from 8.0, 2: sm_90a programs on 9.x), AMD's (1: the matrix probe, flash_mfma on the wave64 GPU, flash_wmma
 * on the wave32 one), Intel's (1: the DPAS probe, flash_dpas). */
static inline int fake_matrix_level(const fake_device *f)
{
    return f->cc >= 90 ? 2 : f->cc >= 80 || f->vendor == FLASHCL_VENDOR_AMD || f->vendor == FLASHCL_VENDOR_INTEL ? 1 : 0;
}

#endif
