/* SPDX-License-Identifier: MIT */
/* fuzz_problem.c: libFuzzer target for the problem-description validator and the tile chooser: any
 * bytes as a problem (and a device profile) give a status, and a success gives a configuration that
 * fits the profile. */
#include "flashcl.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    flashcl_problem p;
    flashcl_problem_default(&p);
    memcpy(&p, data, size < sizeof p ? size : sizeof p);
    flashcl_device_profile pr;
    memset(&pr, 0, sizeof pr);
    pr.local_mem_size = 64 * 1024;
    pr.max_work_group_size = 1024;
    pr.wg_multiple = 32;
    if (size > sizeof p + 8) { /* the rest of the bytes shape the device */
        const uint8_t *d = data + sizeof p;
        pr.local_mem_size = (uint64_t)(d[0] | d[1] << 8 | d[2] << 16);
        pr.max_work_group_size = (size_t)(d[3] | d[4] << 8);
        pr.wg_multiple = d[5];
        pr.vendor = (flashcl_vendor)(d[6] % 9);
    }
    for (int a = 0; a < 3; ++a) {
        flashcl_config c;
        if (flashcl_choose_config(&pr, &p, (flashcl_algorithm)a, &c) != FLASHCL_SUCCESS)
            continue;
        if (a != FLASHCL_ALGO_FLASH)
            continue;
        if (c.local_mem_bytes > (pr.local_mem_size < 65536 ? pr.local_mem_size : 65536) || c.work_group_size < 1 ||
            (size_t)c.work_group_size > pr.max_work_group_size)
            __builtin_trap();
        /* what each kernel's #error lines demand: the decode kernel's teams cover the head dimension
         * in 8-element slices; the tiled kernels' column groups divide the output's (V's) head dim */
        const int32_t dv = p.head_dim_v ? p.head_dim_v : p.head_dim;
        if (c.kernel == FLASHCL_KERNEL_DECODE
                ? c.team * 8 < p.head_dim || c.work_group_size % c.team ||
                      c.block_n != c.work_group_size / c.team * c.keys_per_step
                : dv % c.threads_per_row || c.block_n % c.threads_per_row)
            __builtin_trap();
    }
    return 0;
}
