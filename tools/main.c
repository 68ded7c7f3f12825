/* SPDX-License-Identifier: MIT */
/*
 * main.c: the flashcl command: its usage text and the dispatch to its subcommands (commands.h).
 */
#include "commands.h"

#include "flashcl.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: flashcl <command> [options]\n"
            "\n"
            "commands:\n"
            "  run       run flash attention on random inputs, validated against the naive kernel\n"
            "  devices   list OpenCL platforms and devices with the properties tile choice uses\n"
            "  tiles     the tile configuration a problem gets on a device, and where it came from\n"
            "  tune      time every tile configuration that fits, store the fastest in the tuning database\n"
            "  bench     flash, naive and standard attention side by side: time, TFLOP/s, memory\n"
            "\n"
            "flashcl <command> --help describes a command's options; every option is spelled --opt VALUE or\n"
            "--opt=VALUE (and -n 64 or -n64 where it has a letter). Exit status: 0 ok, 1 an error, 2 bad usage\n"
            "(nothing was run), 3 a validation failure (run).\n"
            "\n"
            "environment (the library's and the command's; an option, where there is one, takes precedence):\n"
            "  FLASHCL_DEVICE           the device: \"P:D\" or a name substring (else a GPU, then a CPU)\n"
            "  FLASHCL_PATH             the flash kernel: auto (default), portable, mma, decode, wgmma, mfma, wmma\n"
            "                           or dpas\n"
            "  FLASHCL_VALIDATE         1: every enqueue checked against the naive kernel (default 0)\n"
            "  FLASHCL_CACHE            0: no disk cache of compiled programs (default 1)\n"
            "  FLASHCL_CACHE_DIR        the program cache (else $XDG_CACHE_HOME/flashcl, else ~/.cache/flashcl)\n"
            "  FLASHCL_TUNING_DB        the user's tuning database (else $XDG_CONFIG_HOME/flashcl/tuning.db,\n"
            "                           else ~/.config/flashcl/tuning.db)\n"
            "  FLASHCL_LOCAL_MEM_LIMIT  a cap on the local memory tiles may use, in bytes (48K: 48 KiB)\n"
            "  FLASHCL_BUILD_OPTIONS    more OpenCL compiler options for every program flashcl builds\n"
            "  FLASHCL_BUILD_LOG        set: each program's build log on stderr (and why sm_90a was not proven)\n"
            "  FLASHCL_STANDARD_CHUNK_FLOATS  standard attention's score chunks, in floats (at most 2^28; tests)\n"
            "  XDG_CACHE_HOME, XDG_CONFIG_HOME, HOME  where the defaults above are\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "run"))
        return cmd_run(argc - 1, argv + 1);
    if (!strcmp(cmd, "devices"))
        return cmd_devices(argc - 1, argv + 1);
    if (!strcmp(cmd, "tiles"))
        return cmd_tiles(argc - 1, argv + 1);
    if (!strcmp(cmd, "tune"))
        return cmd_tune(argc - 1, argv + 1);
    if (!strcmp(cmd, "bench"))
        return cmd_bench(argc - 1, argv + 1);
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version")) {
        printf("flashcl %s\n", flashcl_version_string());
        return 0;
    }
    fprintf(stderr, "flashcl: unknown command '%s'\n\n", cmd);
    usage(stderr);
    return 2;
}
