/* SPDX-License-Identifier: MIT */
/* consumer.c: the parent project's program: flashcl's library, linked as the parent built it, chooses
 * tiles for a problem on a profile it fills itself (no device needed). Exit 0 when the choice is made. */
#include <flashcl.h>

#include <stdio.h>
#include <string.h>

int main(void)
{
    flashcl_problem p;
    flashcl_device_profile pr;
    flashcl_config c;
    if (flashcl_problem_default(&p) != FLASHCL_SUCCESS)
        return 1;
    memset(&pr, 0, sizeof pr);
    snprintf(pr.name, sizeof pr.name, "a GPU of 64 KiB");
    pr.vendor = FLASHCL_VENDOR_AMD;
    pr.local_mem_size = 65536;
    pr.max_work_group_size = 256;
    pr.wg_multiple = 64;
    pr.compute_units = 60;
    p.seq_q = p.seq_kv = 1024;
    if (flashcl_choose_config(&pr, &p, FLASHCL_ALGO_FLASH, &c) != FLASHCL_SUCCESS) {
        fprintf(stderr, "%s\n", flashcl_context_last_error(NULL));
        return 1;
    }
    printf("flashcl %s linked: %s %dx%d chosen\n", flashcl_version_string(), c.kernel_name, c.block_m, c.block_n);
    return 0;
}
