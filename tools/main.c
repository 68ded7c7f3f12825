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
            "flashcl <command> --help describes a command's options. Environment: FLASHCL_DEVICE\n"
            "(device selector), FLASHCL_VALIDATE, FLASHCL_CACHE, FLASHCL_CACHE_DIR, FLASHCL_LOCAL_MEM_LIMIT.\n");
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
