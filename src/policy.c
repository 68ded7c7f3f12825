/* SPDX-License-Identifier: MIT */
/*
 * policy.c: what a user decides about the choice, apart from the device's facts: the kernel path and the
 * cap on local memory (a policy's fields, or the environment's FLASHCL_PATH and FLASHCL_LOCAL_MEM_LIMIT),
 * and the names of the algorithms and paths.
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

flashcl_status fcl_env_bytes(flashcl_context *ctx, const char *who, const char *name, uint64_t *out)
{
    static const struct {
        const char *suffix;
        int shift;
    } units[] = {{"", 0},     {"K", 10},  {"k", 10},    {"KB", 10}, {"KiB", 10}, {"M", 20},
                 {"MB", 20},  {"MiB", 20}, {"G", 30},   {"GB", 30}, {"GiB", 30}};
    const char *s = getenv(name);
    *out = 0;
    if (!s || !*s)
        return FLASHCL_SUCCESS;
    char *end;
    errno = 0;
    const unsigned long long v = strtoull(s, &end, 10);
    int shift = -1;
    for (size_t u = 0; u < sizeof units / sizeof *units && shift < 0; ++u)
        if (!strcmp(end, units[u].suffix))
            shift = units[u].shift;
    if (end == s || *s < '0' || *s > '9' || errno || shift < 0 || v > (UINT64_MAX >> shift))
        return fcl_fail(ctx, FLASHCL_INVALID_ARGUMENT,
                        "%s: %s=\"%.40s\": a byte count, optionally with K, M or G (binary: 48K, 48KiB, 2M)", who,
                        name, s);
    *out = (uint64_t)v << shift;
    return FLASHCL_SUCCESS;
}

flashcl_status fcl_resolve_policy(const char *who, int path, uint64_t local_mem_limit, flashcl_path *path_out,
                                  uint64_t *limit_out)
{
    *path_out = FLASHCL_PATH_AUTO;
    *limit_out = 0;
    if (path >= 0) {
        if (path > FLASHCL_PATH_DPAS)
            return fcl_fail(NULL, FLASHCL_INVALID_ARGUMENT, "%s.path = %d is not a flashcl_path", who, path);
        *path_out = (flashcl_path)path;
    } else {
        const char *env = getenv("FLASHCL_PATH");
        if (env && *env && flashcl_path_parse(env, path_out) != FLASHCL_SUCCESS)
            return fcl_fail(NULL, FLASHCL_INVALID_ARGUMENT, "%s: FLASHCL_PATH=\"%.40s\": use auto, portable, mma, decode, wgmma, mfma, wmma or dpas",
                            who, env);
    }
    if (local_mem_limit) {
        *limit_out = local_mem_limit;
        return FLASHCL_SUCCESS;
    }
    return fcl_env_bytes(NULL, who, "FLASHCL_LOCAL_MEM_LIMIT", limit_out);
}

flashcl_status flashcl_policy_default_abi(const flashcl_abi *abi, flashcl_policy *policy)
{
    flashcl_status st = fcl_abi_guard(abi, "flashcl_policy_default");
    if (st != FLASHCL_SUCCESS)
        return st;
    if (!policy)
        return fcl_fail(NULL, FLASHCL_INVALID_ARGUMENT, "flashcl_policy_default: policy is NULL");
    *policy = (flashcl_policy){.path = -1};
    return FLASHCL_SUCCESS;
}

const char *flashcl_algorithm_name(flashcl_algorithm algorithm)
{
    switch (algorithm) {
    case FLASHCL_ALGO_FLASH:
        return "flash";
    case FLASHCL_ALGO_NAIVE:
        return "naive";
    case FLASHCL_ALGO_STANDARD:
        return "standard";
    }
    return "?";
}

const char *flashcl_kernel_name(flashcl_kernel kernel)
{
    static const char *const names[] = {"portable", "mma", "wgmma", "decode", "decode_mma", "naive", "standard", "mfma", "wmma", "dpas"};
    return (unsigned)kernel < sizeof names / sizeof *names ? names[kernel] : "?";
}

const char *flashcl_path_name(flashcl_path path)
{
    return path == FLASHCL_PATH_AUTO       ? "auto"
           : path == FLASHCL_PATH_PORTABLE ? "portable"
           : path == FLASHCL_PATH_MMA      ? "mma"
           : path == FLASHCL_PATH_DECODE   ? "decode"
           : path == FLASHCL_PATH_WGMMA    ? "wgmma"
           : path == FLASHCL_PATH_MFMA     ? "mfma"
           : path == FLASHCL_PATH_WMMA     ? "wmma"
           : path == FLASHCL_PATH_DPAS     ? "dpas"
                                           : "?";
}

flashcl_status flashcl_path_parse(const char *name, flashcl_path *path)
{
    if (!name || !path)
        return fcl_fail(NULL, FLASHCL_INVALID_ARGUMENT, "flashcl_path_parse: %s is NULL", !name ? "name" : "path");
    for (int i = FLASHCL_PATH_AUTO; i <= FLASHCL_PATH_DPAS; ++i)
        if (!strcmp(name, flashcl_path_name((flashcl_path)i))) {
            *path = (flashcl_path)i;
            return FLASHCL_SUCCESS;
        }
    return fcl_fail(NULL, FLASHCL_INVALID_ARGUMENT, "flashcl_path_parse: \"%.40s\" is not auto, portable, mma, decode, wgmma, mfma, wmma or dpas", name);
}
