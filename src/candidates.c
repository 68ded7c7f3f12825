/* SPDX-License-Identifier: MIT */
/*
 * candidates.c: the chooser's ordered candidates for a plan. The first is the chooser's configuration
 * (what flashcl_context_choose_config reports); each after it is what a plan takes when the ones before
 * do not build, keep their register block in memory, or need more than their compiled kernel allows:
 * the same kernel with a smaller register block, then its ladders of smaller tiles (one within the
 * device's work-group limit, one within each halving of the first's work-group), then the next kernel in
 * the order of preference (flash_wgmma, flash_mma, the portable kernel) with its own smaller ones. The
 * list is made once, from the profile, the choice and the problem; the plan walks it with what the
 * compiler reported (fcl_next_candidate), and nothing asks the
 * chooser again. Design reasons: docs/design/tiles.md, "Candidates".
 */
#include "kernels/module.h"

#include <stdio.h>
#include <string.h>

int fcl_config_same_shape(const flashcl_config *a, const flashcl_config *b)
{
    return a->kernel == b->kernel && a->block_m == b->block_m && a->block_n == b->block_n &&
           a->threads_per_row == b->threads_per_row && a->rows_per_item == b->rows_per_item &&
           a->d_chunk == b->d_chunk && a->v_chunk == b->v_chunk && a->work_group_size == b->work_group_size &&
           a->kv_stages == b->kv_stages && a->m_tiles == b->m_tiles && a->producer == b->producer &&
           a->team == b->team && a->keys_per_step == b->keys_per_step && a->shuffles == b->shuffles &&
           a->sub_group == b->sub_group && a->kv_splits == b->kv_splits && a->gqa_pack == b->gqa_pack &&
           a->persistent == b->persistent;
}

/* Appends c (chosen within wg_bound work-items) unless the list is full or holds it already; 1 when
 * appended. A shape may stand twice under different bounds: each ladder is whole (fcl_next_candidate). */
static int add(fcl_candidates *l, const flashcl_config *c, fcl_step step, size_t wg_bound)
{
    if (l->n == FCL_MAX_CANDIDATES)
        return 0;
    for (int i = 0; i < l->n; ++i)
        if (fcl_config_same_shape(&l->config[i], c) && (l->wg_bound[i] == wg_bound || step != FCL_STEP_SHRINK))
            return 0;
    l->config[l->n] = *c;
    l->wg_bound[l->n] = wg_bound;
    l->step[l->n++] = (unsigned char)step;
    return 1;
}

static int64_t register_block(const flashcl_config *c, int32_t dv)
{
    const fcl_kernel_module *m = fcl_module_of(fcl_config_kernel(c));
    return m->register_block ? m->register_block(c, dv) : 0;
}

/* The chooser under altered limits (no override, no database: "heuristic (shrunk)"): 1 with c when it
 * gives the same kernel as `like`. */
static int smaller_of(const flashcl_device_profile *pr, const fcl_choice *s, const flashcl_problem *p,
                      const flashcl_config *like, flashcl_config *c)
{
    return fcl_choose_checked(NULL, pr, s, p, FLASHCL_ALGO_FLASH, c) == FLASHCL_SUCCESS && c->kernel == like->kernel;
}

/* The ladder of smaller tiles under s's work-group bound, from the chooser's choice within `below`
 * bytes: each the choice just under the bytes of the one before, to the smallest the chooser has. Its
 * first entry within a limit is then the chooser's within that limit. */
static void add_ladder(const flashcl_device_profile *pr, fcl_choice *s, const flashcl_problem *p,
                       const flashcl_config *like, uint64_t below, fcl_candidates *l)
{
    flashcl_config c;
    for (uint64_t bytes = below; bytes > 1; bytes = c.local_mem_bytes) {
        s->local_mem = bytes - 1;
        if (!smaller_of(pr, s, p, like, &c) || c.local_mem_bytes >= bytes ||
            (size_t)c.work_group_size > s->work_group || !add(l, &c, FCL_STEP_SHRINK, s->work_group))
            return;
    }
}

/* The same kernel's smaller variants after `first` (chosen under ch): smaller register blocks (a GPU's
 * register-blocked kernels: a compiler that keeps the block in memory makes every access a memory
 * access), then a ladder of smaller tiles under the device's work-group limit, and one under each
 * halving of first's work-group (a compiled kernel may allow fewer work-items than the device). */
static void add_smaller(const flashcl_device_profile *pr, const fcl_choice *ch, const flashcl_problem *p,
                        const flashcl_config *first, fcl_candidates *l)
{
    const int32_t dv = fcl_head_dim_v(p);
    fcl_choice s = *ch;
    s.override = NULL;
    s.shrunk = "shrunk after compiling";
    flashcl_config c, last = *first;
    if (fcl_module_of(fcl_config_kernel(first))->register_block && !pr->is_cpu)
        for (s.reg_shift = ch->reg_shift + 1; s.reg_shift <= 3; ++s.reg_shift)
            if (smaller_of(pr, &s, p, first, &c) && register_block(&c, dv) < register_block(&last, dv) &&
                add(l, &c, FCL_STEP_REGISTERS, ch->work_group))
                last = c;
    s.reg_shift = ch->reg_shift;
    add_ladder(pr, &s, p, first, first->local_mem_bytes, l);
    for (s.work_group = (size_t)first->work_group_size / 2; s.work_group >= 8; s.work_group /= 2)
        add_ladder(pr, &s, p, first, ch->local_mem + 1, l);
}

/* `first` and its smaller variants, then the next kernel's: after flash_wgmma flash_mma where the device
 * has matrix units (auto would take wgmma again), else what auto takes; after the other kernels the
 * portable kernel. */
static void add_kernel(const flashcl_device_profile *pr, const fcl_choice *ch, const flashcl_problem *p,
                       const flashcl_config *first, fcl_step step, fcl_candidates *l)
{
    add(l, first, step, ch->work_group);
    if (first->algorithm != FLASHCL_ALGO_FLASH)
        return;
    add_smaller(pr, ch, p, first, l);
    fcl_choice next = *ch;
    next.override = NULL;
    if (first->kernel == FLASHCL_KERNEL_WGMMA)
        next.path = fcl_ptx_units(pr) ? FLASHCL_PATH_MMA : FLASHCL_PATH_AUTO;
    else if (first->kernel != FLASHCL_KERNEL_PORTABLE)
        next.portable_why = "portable: the kernel before it did not build or fit";
    else
        return;
    flashcl_config c;
    if (fcl_choose_checked(NULL, pr, &next, p, FLASHCL_ALGO_FLASH, &c) == FLASHCL_SUCCESS &&
        c.kernel != first->kernel)
        add_kernel(pr, &next, p, &c, FCL_STEP_NEXT_KERNEL, l);
}

flashcl_status fcl_choose_candidates(flashcl_context *ctx, const flashcl_device_profile *pr, const fcl_choice *ch,
                                     const flashcl_problem *p, flashcl_algorithm algorithm, fcl_candidates *l)
{
    flashcl_config first;
    l->n = 0;
    const flashcl_status st = fcl_choose_checked(ctx, pr, ch, p, algorithm, &first);
    if (st != FLASHCL_SUCCESS || algorithm != FLASHCL_ALGO_FLASH) {
        if (st == FLASHCL_SUCCESS)
            add(l, &first, FCL_STEP_FIRST, ch->work_group);
        return st;
    }
    if (!ch->override) {
        add_kernel(pr, ch, p, &first, FCL_STEP_FIRST, l);
        return FLASHCL_SUCCESS;
    }
    /* An override that its compiled kernel refuses: the heuristic's candidates (a quantized cache has
     * none: only the decode kernels read it, and the override is the portable kernel's) */
    add(l, &first, FCL_STEP_FIRST, ch->work_group);
    fcl_choice heuristic = *ch;
    heuristic.override = NULL;
    flashcl_config c;
    if (fcl_choose_checked(NULL, pr, &heuristic, p, algorithm, &c) == FLASHCL_SUCCESS)
        add_kernel(pr, &heuristic, p, &c, FCL_STEP_NEXT_KERNEL, l);
    return FLASHCL_SUCCESS;
}

static const char *kernel_words(flashcl_kernel k)
{
    return k == FLASHCL_KERNEL_MMA          ? "matrix-unit"
           : k == FLASHCL_KERNEL_MFMA       ? "MFMA"
           : k == FLASHCL_KERNEL_WMMA       ? "WMMA"
           : k == FLASHCL_KERNEL_DPAS       ? "DPAS"
           : k == FLASHCL_KERNEL_WGMMA      ? "warpgroup (wgmma)"
           : k == FLASHCL_KERNEL_DECODE     ? "decode"
           : k == FLASHCL_KERNEL_DECODE_MMA ? "matrix-unit decode"
                                            : "portable";
}

/* Candidate j taken after one of kernel `was`, with why: `facts` as its reason (the same kernel), or
 * `other` before its path reason (flash_wgmma's: "not wgmma (other); ...") or as it (the portable kernel's). */
static void explain(flashcl_config *out, const char *was_path_reason, flashcl_kernel was, const char *facts,
                    const char *other)
{
    if (out->kernel == was) { /* (why this kernel stays what it was) */
        fcl_strlcpy(out->path_reason, was_path_reason, sizeof out->path_reason);
        fcl_strlcpy(out->source, "heuristic (shrunk)", sizeof out->source);
        fcl_strlcpy(out->reason, facts, sizeof out->reason);
        return;
    }
    if (was == FLASHCL_KERNEL_WGMMA) {
        fcl_note_not_wgmma(out, other);
        return;
    }
    char why[sizeof out->path_reason];
    snprintf(why, sizeof why, "portable: %.*s", (int)(sizeof why - 11), other);
    fcl_strlcpy(out->path_reason, why, sizeof out->path_reason);
}

int fcl_next_candidate(const flashcl_device_profile *pr, const fcl_candidates *l, int i, const fcl_compiled *got,
                       uint64_t local_limit, int32_t dv, flashcl_config *out)
{
    const flashcl_config *cur = &l->config[i];
    const flashcl_kernel was = cur->kernel;
    char facts[sizeof out->reason] = "", other[sizeof out->path_reason] = "";
    const int fits = got->built && got->work_group >= (size_t)cur->work_group_size && got->local_mem <= local_limit;
    int j = -1;
    if (fits) {
        /* A GPU compiler that kept the register block in private memory (spilled registers, or arrays left
         * in memory: IGC does this when its unrolled compile spills): the same kernel with a smaller block
         * and no more work-items or local memory than this one (which may be a shrink already); none
         * smaller keeps this one. CPUs report their stack frames there: not what decides. */
        if (!got->private_mem || pr->is_cpu || !fcl_module_of(fcl_config_kernel(cur))->register_block)
            return i;
        for (int k = i + 1; k < l->n && j < 0; ++k)
            if (l->config[k].kernel == was && register_block(&l->config[k], dv) < register_block(cur, dv) &&
                l->config[k].work_group_size <= cur->work_group_size &&
                l->config[k].local_mem_bytes <= cur->local_mem_bytes)
                j = k;
        if (j < 0)
            return i;
        snprintf(facts, sizeof facts,
                 "shrunk after compiling: %llu B of private memory per work-item (the register block was kept in "
                 "memory)", (unsigned long long)got->private_mem);
    } else if (!got->built) {
        /* its log is in the context's last error */
        for (int k = i + 1; k < l->n && j < 0; ++k)
            if (l->config[k].kernel != was)
                j = k;
        if (was == FLASHCL_KERNEL_WGMMA)
            snprintf(other, sizeof other, "its program did not build");
        else
            snprintf(other, sizeof other, "the %s kernel did not build for this problem", kernel_words(was));
    } else {
        /* Smaller tiles of the same kernel: the first ladder entry chosen within the work-items the
         * compiler reported (not a smaller register block: that answers a spill) and within the limit at
         * the local memory it reported against the formula (a driver that counts each byte twice, as
         * rusticl 22 on llvmpipe does, needs tiles of half the formula's bytes); none: the next kernel. */
        const double scale = got->local_mem > local_limit && cur->local_mem_bytes
                                 ? (double)got->local_mem / (double)cur->local_mem_bytes
                                 : 1.0;
        const size_t wg = got->work_group < (size_t)cur->work_group_size ? got->work_group : (size_t)-1;
        for (int k = i + 1; k < l->n && j < 0; ++k)
            if (l->config[k].kernel == was && l->step[k] == FCL_STEP_SHRINK && l->wg_bound[k] <= wg &&
                (double)l->config[k].local_mem_bytes * scale <= (double)local_limit)
                j = k;
        for (int k = i + 1; k < l->n && j < 0; ++k)
            if (l->config[k].kernel != was)
                j = k;
        snprintf(facts, sizeof facts,
                 "shrunk after compiling: the kernel allowed %zu work-items and needed %llu B of local memory",
                 got->work_group, (unsigned long long)got->local_mem);
        snprintf(other, sizeof other, "the compiled %s kernel allowed %zu work-items, needed %llu B",
                 was == FLASHCL_KERNEL_WGMMA ? "warpgroup" : kernel_words(was), got->work_group,
                 (unsigned long long)got->local_mem);
    }
    if (j < 0)
        return -1;
    char was_path_reason[sizeof out->path_reason];
    fcl_strlcpy(was_path_reason, out->path_reason, sizeof was_path_reason);
    *out = l->config[j];
    explain(out, was_path_reason, was, facts, other);
    return j;
}
