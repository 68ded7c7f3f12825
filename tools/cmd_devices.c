/* SPDX-License-Identifier: MIT */
/*
 * cmd_devices.c: `flashcl devices`: every OpenCL platform and device, with the profile the tile
 * chooser reads (flashcl_device_profile_query, the same function contexts use).
 */
#include "cli.h"
#include "commands.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* Whether device d of platform p matches a --device selector: "P:D", or a case-insensitive substring of
 * "platform / device" (as flashcl_context_create_default reads it). */
static int selected(const char *sel, cl_uint p, cl_uint d, const flashcl_device_profile *pr)
{
    if (!sel)
        return 1;
    unsigned sp, sd;
    char tail;
    if (sscanf(sel, "%u:%u%c", &sp, &sd, &tail) == 2)
        return sp == p && sd == d;
    char full[600];
    snprintf(full, sizeof full, "%s / %s", pr->platform_name, pr->name);
    const size_t n = strlen(sel);
    for (const char *s = full; *s; ++s) {
        size_t k = 0;
        while (k < n && s[k] && tolower((unsigned char)s[k]) == tolower((unsigned char)sel[k]))
            ++k;
        if (k == n)
            return 1;
    }
    return 0;
}

enum { OPT_JSON = CLI_OPT_BASE, OPT_DEVICE };

int cmd_devices(int argc, char **argv)
{
    static const struct option longopts[] = {{"json", no_argument, NULL, OPT_JSON},
                                             {"device", required_argument, NULL, OPT_DEVICE},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    int json = 0;
    const char *sel = NULL;
    for (int c; (c = cli_getopt("devices", argc, argv, "h", longopts)) != -1;) {
        if (c == CLI_BAD_OPTION)
            return 2;
        if (c == OPT_JSON)
            json = 1;
        else if (c == OPT_DEVICE)
            sel = optarg;
        else {
            printf("usage: flashcl devices [--json] [--device SEL]\n"
                   "Lists every OpenCL device as \"P:D\" (the --device selector) with the properties tile\n"
                   "choice depends on; --device SEL (\"P:D\" or a name substring) only the matching ones.\n"
                   "FLASHCL_LOCAL_MEM_LIMIT caps the local-memory budget shown. Mesa's rusticl lists its\n"
                   "devices only with RUSTICL_ENABLE set (RUSTICL_ENABLE=llvmpipe for its CPU device).\n");
            return 0;
        }
    }
    cl_uint np = 0;
    if (clGetPlatformIDs(0, NULL, &np) != CL_SUCCESS)
        np = 0;
    cl_platform_id *plats = calloc(np ? np : 1, sizeof *plats);
    if (!plats)
        return 1;
    if (np)
        clGetPlatformIDs(np, plats, NULL);
    if (json)
        printf("[");
    int first = 1, count = 0;
    for (cl_uint p = 0; p < np; ++p) {
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) != CL_SUCCESS)
            nd = 0;
        cl_device_id *devs = calloc(nd ? nd : 1, sizeof *devs);
        if (!devs)
            break;
        if (nd)
            clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, nd, devs, NULL);
        for (cl_uint d = 0; d < nd; ++d) {
            flashcl_device_profile pr;
            if (flashcl_device_profile_query(devs[d], &pr) != FLASHCL_SUCCESS || !selected(sel, p, d, &pr))
                continue;
            ++count;
            const unsigned long long budget = cli_tile_budget(&pr, NULL); /* the default policy's */
            if (json) {
                printf("%s\n {\"selector\": \"%u:%u\", \"platform\": ", first ? "" : ",", p, d);
                cli_json_string(stdout, pr.platform_name);
                printf(", \"name\": ");
                cli_json_string(stdout, pr.name);
                printf(", \"vendor\": \"%s\", \"driver\": ", flashcl_vendor_name(pr.vendor));
                cli_json_string(stdout, pr.driver_version);
                printf(", \"version\": ");
                cli_json_string(stdout, pr.device_version);
                printf(", \"arch\": ");
                cli_json_string(stdout, pr.arch);
                printf(", \"type\": \"%s\", \"compute_units\": %u, \"local_mem_size\": %llu, "
                       "\"local_mem_static\": %llu, \"local_mem_per_cu\": %llu, "
                       "\"local_mem_emulated\": %s, \"local_mem_budget\": %llu, \"max_work_group_size\": %zu, "
                       "\"wg_multiple\": %zu, \"global_mem_size\": %llu, \"max_alloc_size\": %llu, "
                       "\"nv_compute_capability\": \"%d.%d\", \"fp16\": %s, \"fp64\": %s, \"subgroups\": %s, "
                       "\"intel_subgroup_matrix\": %s, \"matrix_units\": %s, \"sm90a\": %s, \"supported\": %s}",
                       pr.is_cpu ? "cpu" : "gpu", pr.compute_units, (unsigned long long)pr.local_mem_size,
                       (unsigned long long)pr.local_mem_static, (unsigned long long)pr.local_mem_per_cu,
                       pr.local_mem_is_global ? "true" : "false", budget,
                       pr.max_work_group_size, pr.wg_multiple, (unsigned long long)pr.global_mem_size,
                       (unsigned long long)pr.max_alloc_size, pr.nv_cc_major, pr.nv_cc_minor,
                       pr.has_fp16 ? "true" : "false", pr.has_fp64 ? "true" : "false",
                       pr.has_subgroups ? "true" : "false", pr.has_intel_subgroup_matrix ? "true" : "false",
                       pr.matrix_units ? "true" : "false", pr.matrix_units >= 2 ? "true" : "false",
                       flashcl_device_supported(&pr, NULL, 0) == FLASHCL_SUCCESS ? "true" : "false");
            } else {
                printf("%u:%u  %s / %s  [%s, %s]\n", p, d, pr.platform_name, pr.name, pr.is_cpu ? "CPU" : "GPU",
                       flashcl_vendor_name(pr.vendor));
                printf("     driver %s, %s, %u compute units, arch %s\n", pr.driver_version, pr.device_version,
                       pr.compute_units, pr.arch[0] ? pr.arch : "(unknown)");
                printf("     local memory %llu B%s", (unsigned long long)pr.local_mem_size,
                       pr.local_mem_is_global ? " (emulated in global)" : "");
                if (pr.local_mem_static != pr.local_mem_size)
                    printf(" reported, %llu B in static arrays (compile probes), %llu B a compute unit",
                           (unsigned long long)pr.local_mem_static, (unsigned long long)pr.local_mem_per_cu);
                printf("; budget for tiles %llu B; work-group max %zu, multiple %zu\n", budget,
                       pr.max_work_group_size, pr.wg_multiple);
                printf("     global %.1f GiB (max alloc %.1f GiB); fp16 %s, fp64 %s, subgroups %s",
                       pr.global_mem_size / 1073741824.0, pr.max_alloc_size / 1073741824.0, pr.has_fp16 ? "yes" : "no",
                       pr.has_fp64 ? "yes" : "no", pr.has_subgroups ? "yes" : "no");
                if (pr.nv_cc_major)
                    printf(", compute capability %d.%d", pr.nv_cc_major, pr.nv_cc_minor);
                if (pr.has_intel_subgroup_matrix)
                    printf(", Intel subgroup matrix");
                if (pr.matrix_units && pr.vendor == FLASHCL_VENDOR_AMD)
                    printf(", matrix cores (%s through clang's built-in: its kernel built and the probe ran right)",
                           pr.wg_multiple == 64 ? "MFMA" : "WMMA");
                else if (pr.matrix_units && pr.vendor == FLASHCL_VENDOR_INTEL)
                    printf(", matrix engines (DPAS: flash_dpas built and the probe ran right, or built in AUB mode)");
                else if (pr.matrix_units)
                    printf(", matrix units (mma.sync through inline PTX: the test compile passed%s)",
                           pr.matrix_units >= 2 ? "; sm_90a programs finished from the compiler's PTX: the probe ran right"
                           : pr.nv_cc_major == 9 ? "; sm_90a programs not proven (FLASHCL_BUILD_LOG=1 says why)" : "");
                char why[512];
                printf("\n     flashcl: %s\n",
                       flashcl_device_supported(&pr, why, sizeof why) == FLASHCL_SUCCESS ? "supported" : why);
            }
            first = 0;
        }
        free(devs);
    }
    free(plats);
    if (json)
        printf("\n]\n");
    else if (!count && !sel)
        printf("no OpenCL devices found\n");
    if (!count && sel) {
        fprintf(stderr, "flashcl devices: no device matches --device %s\n", sel);
        return 1;
    }
    return 0;
}
