/* SPDX-License-Identifier: MIT */
/*
 * standard.c: standard attention's own kernels' module (cl/standard.cl: softmax_rows between the two
 * CLBlast GEMMs, and the conversions to_f32 and from_f32 around them); the GEMMs and the runner are
 * src/standard.c.
 */
#include "module.h"

#include <stdio.h>
#include <string.h>

/* The tile validation samples rows from: 64 rows; the softmax's work-group 256 (a power of two). */
static int standard_choose(const flashcl_device_profile *pr, const fcl_choice *ch, const flashcl_problem *p,
                           flashcl_config *config, char *why, size_t n)
{
    (void)pr;
    (void)ch;
    (void)why;
    (void)n;
    memset(config, 0, sizeof *config);
    config->algorithm = FLASHCL_ALGO_STANDARD;
    config->block_m = 64;
    config->block_n = p->seq_kv;
    config->threads_per_row = 1;
    config->rows_per_item = 1;
    config->kv_splits = 1;
    config->gqa_pack = 1;
    config->work_group_size = 256;
    config->kernel = FLASHCL_KERNEL_STANDARD;
    fcl_strlcpy(config->kernel_name, "standard", sizeof config->kernel_name);
    fcl_strlcpy(config->source, "fixed", sizeof config->source);
    snprintf(config->reason, sizeof config->reason,
             "two batched CLBlast SGEMMs around a row softmax, the score matrix in device memory");
    return 1;
}

static void standard_options(const flashcl_problem *p, const flashcl_config *c, char *buf, size_t n)
{
    snprintf(buf, n, "-cl-std=CL1.2 %s -DWG=%d%s%s", fcl_dtype_define(p->dtype), c->work_group_size,
             fcl_wide_positions(p) ? " -DWIDE_POSITIONS=1" : "",
             p->alignment == FLASHCL_ALIGN_TOP_LEFT && (p->causal || p->window) ? " -DTOP_LEFT=1" : "");
}

const fcl_kernel_module fcl_standard_module = {
    .id = FCL_K_SOFTMAX_ROWS,
    .name = "standard",
    .choose = standard_choose,
    .options = standard_options,
};
