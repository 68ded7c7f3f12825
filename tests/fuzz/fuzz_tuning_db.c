/* SPDX-License-Identifier: MIT */
/* fuzz_tuning_db.c: libFuzzer target for the tuning-database parser and lookup: any text parses into
 * entries and warnings, and any entry it yields is checked against the device before use. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    flashcl_tuning_db *db = fcl_tuning_db_from_text(text);
    free(text);
    const flashcl_policy policy = {.path = FLASHCL_PATH_AUTO, .tuning_db = db};
    if (!db)
        return 0;
    flashcl_device_profile pr;
    memset(&pr, 0, sizeof pr);
    strcpy(pr.name, "NVIDIA H200");
    strcpy(pr.arch, "sm_90");
    pr.vendor = FLASHCL_VENDOR_NVIDIA;
    pr.local_mem_size = 48 * 1024;
    pr.max_work_group_size = 1024;
    pr.wg_multiple = 32;
    flashcl_problem p;
    flashcl_problem_default(&p);
    for (int d = 8; d <= 256; d += 24)
        for (int t = 0; t < 3; ++t) {
            p.head_dim = d;
            p.dtype = (flashcl_dtype)t;
            p.seq_q = p.seq_kv = 64 << (d % 5);
            flashcl_config c;
            if (flashcl_choose_config_policy(&pr, &policy, &p, FLASHCL_ALGO_FLASH, &c) == FLASHCL_SUCCESS &&
                (c.local_mem_bytes > pr.local_mem_size || p.head_dim % c.threads_per_row ||
                 (size_t)c.work_group_size > pr.max_work_group_size))
                __builtin_trap(); /* a configuration that does not fit was handed out */
        }
    flashcl_tuning_db_destroy(&db);
    return 0;
}
