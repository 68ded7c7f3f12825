/* SPDX-License-Identifier: MIT */
/* test_header.c: the public header compiles on its own, first and alone, as C11 with -pedantic, and
 * its ABI descriptor matches the library's. */
#include "flashcl.h"

int main(void)
{
    if (flashcl_version() != FLASHCL_VERSION_NUMBER)
        return 1;
    return flashcl_abi_check(flashcl_abi_of_header(), NULL, 0) == FLASHCL_SUCCESS ? 0 : 1;
}
