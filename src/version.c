/* SPDX-License-Identifier: MIT */
/*
 * version.c: the library's version at run time, as the header's macros give it at build time.
 */
#include "flashcl.h"

unsigned flashcl_version(void)
{
    return FLASHCL_VERSION_NUMBER;
}

const char *flashcl_version_string(void)
{
#define FCL_STR2(x) #x
#define FCL_STR(x) FCL_STR2(x)
    return FCL_STR(FLASHCL_VERSION_MAJOR) "." FCL_STR(FLASHCL_VERSION_MINOR) "." FCL_STR(FLASHCL_VERSION_PATCH);
}
