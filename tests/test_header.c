/* test_header.c: the public header compiles on its own, first and alone, as C11 with -pedantic. */
#include "flashcl.h"

int main(void)
{
    return flashcl_version() == FLASHCL_VERSION_NUMBER ? 0 : 1;
}
