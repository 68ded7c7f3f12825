/* SPDX-License-Identifier: MIT */
/*
 * choice.h: what the host suites of the chooser share (test_tiles.c, test_choice_mma.c,
 * test_choice_wgmma.c, test_choice_decode.c: each its own executable, so static state is each one's):
 * the policy they choose under, the choice on a fake profile (tests/fake_devices.h), and the local-memory
 * budget the tiles must fit.
 */
#ifndef FLASHCL_TESTS_CHOICE_H
#define FLASHCL_TESTS_CHOICE_H

#include "fake_devices.h"
#include "testutil.h"

#include <string.h>

/* The policy the tests choose under (path and local-memory cap: not the device's facts); profile_of
 * resets it to auto with no cap. */
static flashcl_policy policy;

static inline flashcl_status choose(const flashcl_device_profile *prof, const flashcl_problem *p, flashcl_algorithm a,
                                    flashcl_config *c)
{
    return flashcl_choose_config_policy(prof, &policy, p, a, c);
}

/* What tiles may use: the device's local memory, never more than 64 KiB, nor more than the cap; on a GPU
 * whose static arrays may take more, up to that but half a compute unit's (two work-groups a unit). */
static inline uint64_t budget_of(const flashcl_device_profile *prof)
{
    uint64_t b = prof->local_mem_size < 65536 ? prof->local_mem_size : 65536;
    if (!prof->is_cpu && prof->local_mem_static > prof->local_mem_size) {
        const uint64_t half = prof->local_mem_per_cu / 2 - 1024 - 16; /* NVIDIA's reserved 1 KiB a block */
        const uint64_t more = prof->local_mem_static < half ? prof->local_mem_static : half;
        b = more > b ? more : b;
    }
    return policy.local_mem_limit && policy.local_mem_limit < b ? policy.local_mem_limit : b;
}

static inline flashcl_device_profile profile_of(const fake_device *f)
{
    policy = (flashcl_policy){.path = FLASHCL_PATH_AUTO};
    return fake_profile(f);
}

/* A prefill problem of head dim d in fp16: hidden 2048 (2048 / d heads), 4096 queries and keys. */
static inline flashcl_problem choice_prefill(int d)
{
    flashcl_problem p;
    flashcl_problem_default(&p);
    p.head_dim = d;
    p.heads_q = p.heads_kv = 2048 / d;
    p.seq_q = p.seq_kv = 4096;
    p.dtype = FLASHCL_DTYPE_F16;
    return p;
}

/* What engines send, each alone on the prefill problem p: ALiBi, softcap, a boolean mask, key padding,
 * packed sequences, a paged cache with the append, a cache with cache_batch_idx and leftpad, sinks. */
#define N_ENGINE_FEATURES 8
static inline void engine_features(const flashcl_problem *p, flashcl_problem f[N_ENGINE_FEATURES])
{
    for (int i = 0; i < N_ENGINE_FEATURES; ++i)
        f[i] = *p;
    f[0].alibi = 1;
    f[1].softcap = 30.0f;
    f[2].attn_mask = 1, f[2].mask_dtype = FLASHCL_MASK_BOOL;
    f[3].key_padding = 1;
    f[4].varlen = 1, f[4].total_q = (int64_t)p->batch * p->seq_q, f[4].total_kv = (int64_t)p->batch * p->seq_kv;
    f[5].kv_cache = 1, f[5].page_size = 16, f[5].kv_append = 1;
    f[5].num_pages = p->batch * ((p->seq_kv + 15) / 16);
    f[6].kv_cache = 1, f[6].cache_batch_idx = 1, f[6].cache_leftpad = 1;
    f[7].sinks = 1;
}

#endif
