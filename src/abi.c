/* SPDX-License-Identifier: MIT */
/*
 * abi.c: the ABI guard. The entry points an application starts with take the header's descriptor
 * (flashcl_abi_of_header(), passed by the macros in flashcl.h) and refuse a caller whose structs are
 * laid out differently from the library's, before touching any of them.
 */
#include "internal.h"

#include <stdio.h>

static const char *const struct_names[FLASHCL_ABI_STRUCTS] = {
    "flashcl_problem", "flashcl_device_profile", "flashcl_config",  "flashcl_policy",    "flashcl_settings",
    "flashcl_stats",   "flashcl_kernel_info",    "flashcl_tensors", "flashcl_validation"};

flashcl_status flashcl_abi_check(const flashcl_abi *abi, char *why, size_t why_len)
{
    char msg[256];
    flashcl_status st = FLASHCL_SUCCESS;
    const flashcl_abi *lib = flashcl_abi_of_header(); /* the library's own view */
    if (!abi) {
        st = FLASHCL_INVALID_ARGUMENT;
        snprintf(msg, sizeof msg, "the ABI descriptor is NULL (pass flashcl_abi_of_header())");
    } else if (abi->version != lib->version || abi->count != lib->count) {
        st = FLASHCL_ABI_MISMATCH;
        snprintf(msg, sizeof msg,
                 "the caller's flashcl.h is ABI %u (%u structs), the library ABI %u (%u structs): rebuild "
                 "against the installed flashcl.h",
                 (unsigned)abi->version, (unsigned)abi->count, (unsigned)lib->version, (unsigned)lib->count);
    } else {
        for (int i = 0; i < FLASHCL_ABI_STRUCTS; ++i)
            if (abi->sizes[i] != lib->sizes[i]) {
                st = FLASHCL_ABI_MISMATCH;
                snprintf(msg, sizeof msg,
                         "%s is %u bytes in the caller's header and %u in the library (ABI %u): rebuild against "
                         "the installed flashcl.h (or fix the binding's mirror of the struct)",
                         struct_names[i], (unsigned)abi->sizes[i], (unsigned)lib->sizes[i], (unsigned)lib->version);
                break;
            }
    }
    if (why && why_len)
        snprintf(why, why_len, "%s", st == FLASHCL_SUCCESS ? "" : msg);
    return st == FLASHCL_SUCCESS ? st : fcl_fail(NULL, st, "flashcl_abi_check: %s", msg);
}

flashcl_status fcl_abi_guard(const flashcl_abi *abi, const char *function)
{
    char why[256];
    const flashcl_status st = flashcl_abi_check(abi, why, sizeof why);
    return st == FLASHCL_SUCCESS ? st : fcl_fail(NULL, st, "%s: %s", function, why);
}
