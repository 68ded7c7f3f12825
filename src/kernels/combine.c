/* SPDX-License-Identifier: MIT */
/*
 * combine.c: split-KV's merge kernel's module (cl/flash_combine.cl): the splits' partial outputs and
 * log-sum-exps into O and LSE, one work-item an output element. Design reasons: docs/design/portable.md
 * (split-KV).
 */
#include "module.h"

#include <stdio.h>

static void combine_options(const flashcl_problem *p, const flashcl_config *c, char *buf, size_t n)
{
    (void)c;
    char dv[32];
    fcl_dim_v_define(p, dv, sizeof dv);
    snprintf(buf, n, "-cl-std=CL1.2 %s -DHEAD_DIM=%d%s%s", fcl_dtype_define(p->dtype), p->head_dim, dv,
             p->sinks ? " -DHAS_SINKS=1" : "");
}

static void combine_constants(fcl_args *a, const flashcl_plan *pl)
{
    const flashcl_problem *p = &pl->problem;
    const resolved_layout *L = &pl->layout;
    fcl_arg_int(a, FC_n_splits, pl->config.kv_splits);
    fcl_arg_long(a, FC_rows_total, (cl_long)(L->row_groups * L->group_rows));
    fcl_arg_int(a, FC_write_lse, p->return_lse != 0);
    fcl_arg_int(a, FC_group_rows, (cl_int)L->group_rows);
    fcl_arg_int(a, FC_heads_q, p->heads_q);
    FCL_ARG_STRIDES(a, FC_o, L->o);
    fcl_arg_int(a, FC_varlen, p->varlen != 0);
}

static void combine_buffers(fcl_args *a, const flashcl_plan *pl, const flashcl_tensors *t, const fcl_scratch *s)
{
    fcl_arg_mem(a, FC_O, t->o);
    fcl_arg_mem(a, FC_LSE, t->lse);
    fcl_arg_long(a, FC_o_off, pl->off.o);
    fcl_arg_long(a, FC_lse_off, pl->off.lse);
    fcl_arg_mem(a, FC_SINKS, t->sinks ? t->sinks : t->o);
    fcl_arg_long(a, FC_sinks_off, pl->off.sinks);
    fcl_arg_mem(a, FC_OP, s->mem);
    fcl_arg_mem(a, FC_LP, s->mem);
    fcl_arg_long(a, FC_op_off, s->op_off);
    fcl_arg_long(a, FC_lp_off, s->lp_off);
}

/* One work-item an output element, in work-groups of 64. */
static void combine_grid(const flashcl_plan *pl, size_t global[2], size_t local[2])
{
    const size_t items = (size_t)(pl->layout.row_groups * pl->layout.group_rows) * (size_t)fcl_head_dim_v(&pl->problem);
    local[0] = 64;
    local[1] = 1;
    global[0] = (items + local[0] - 1) / local[0] * local[0];
    global[1] = 1;
}

const fcl_kernel_module fcl_combine_module = {
    .id = FCL_K_FLASH_COMBINE,
    .name = "combine",
    .options = combine_options,
    .bind_constants = combine_constants,
    .bind_buffers = combine_buffers,
    .grid = combine_grid,
};
