/* SPDX-License-Identifier: MIT */
/*
 * fcl-icd-loader: what loader.c and the generated forwarders (gen_dispatch.py) share.
 */
#ifndef FCL_ICD_LOADER_H
#define FCL_ICD_LOADER_H

#include <CL/cl_icd.h>
#include <stddef.h>
#include <stdint.h>

/* The API's functions are the library's only exports: by visibility on ELF and Mach-O, by the module
 * definition file that gen_dispatch.py writes on Windows. */
#if defined(_WIN32)
#define FCL_EXPORT
#else
#define FCL_EXPORT __attribute__((visibility("default")))
#endif

/* Every OpenCL object of an ICD begins with a pointer to its driver's dispatch table (cl_khr_icd). */
#define FCL_TABLE(object) (*(const struct _cl_icd_dispatch *const *)(const void *)(object))

struct fcl_named_function {
    const char *name;
    void *address;
};

/* The dispatch table's extension functions (a KHR or EXT suffix) by name, ending with {NULL, NULL}:
 * what clGetExtensionFunctionAddress returns for them (dispatch.c, generated). */
extern const struct fcl_named_function fcl_extension_functions[];

#endif
