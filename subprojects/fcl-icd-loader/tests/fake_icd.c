/* SPDX-License-Identifier: MIT */
/*
 * fake_icd.c: a fake OpenCL driver for the loader's tests. FAKE_ICD_PLATFORMS platforms (1 by default),
 * all of one dispatch table whose every function records its name (fake_dispatch.c, generated); the
 * platform name (clGetPlatformInfo's CL_PLATFORM_NAME) is the name of the last function called, so a
 * test sees which member of the table a call of the loader reached. clGetExtensionFunctionAddress gives
 * clIcdGetPlatformIDsKHR, and a marker for names that begin with "clFake".
 */
#include <CL/cl_icd.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct _cl_platform_id {
    const struct _cl_icd_dispatch *dispatch;
};

void fake_record(const char *name);
void *fake_object(void);
void fake_fill(struct _cl_icd_dispatch *t);

static struct _cl_icd_dispatch table;
static struct _cl_platform_id platforms[4];
static char last[128] = "none";

void fake_record(const char *name)
{
    strncpy(last, name, sizeof last - 1);
}

void *fake_object(void)
{
    return &platforms[0];
}

static cl_int CL_API_CALL fake_get_platforms(cl_uint num_entries, cl_platform_id *ids, cl_uint *num)
{
    const char *e = getenv("FAKE_ICD_PLATFORMS");
    cl_uint n = e ? (cl_uint)atoi(e) : 1;
    if (n > 4)
        n = 4;
    if (num)
        *num = n;
    for (cl_uint i = 0; ids && i < num_entries && i < n; i++)
        ids[i] = &platforms[i];
    return CL_SUCCESS;
}

static cl_int CL_API_CALL fake_clGetPlatformInfo(cl_platform_id platform, cl_platform_info param_name,
                                                 size_t size, void *value, size_t *size_ret)
{
    char text[160];
    if (param_name == CL_PLATFORM_NAME)
        strcpy(text, last);
    else if (param_name == CL_PLATFORM_VENDOR) /* which platform the call reached */
        text[0] = (char)('0' + (platform - platforms)), text[1] = '\0';
    else
        return CL_INVALID_VALUE;
    if (size_ret)
        *size_ret = strlen(text) + 1;
    if (value && size < strlen(text) + 1)
        return CL_INVALID_VALUE;
    if (value)
        memcpy(value, text, strlen(text) + 1);
    return CL_SUCCESS;
}

/* (the table's, and the export's: a call by the export's name from here would reach the loader's own,
 * which the process has loaded first) */
static void *CL_API_CALL fake_clGetExtensionFunctionAddress(const char *name)
{
    if (strcmp(name, "clIcdGetPlatformIDsKHR") == 0) {
        if (!table.clGetPlatformInfo) {
            fake_fill(&table);
            table.clGetPlatformInfo = fake_clGetPlatformInfo;
            table.clGetExtensionFunctionAddress = fake_clGetExtensionFunctionAddress;
            for (size_t i = 0; i < sizeof platforms / sizeof platforms[0]; i++)
                platforms[i].dispatch = &table;
        }
        return (void *)(uintptr_t)fake_get_platforms;
    }
    return strncmp(name, "clFake", 6) == 0 ? (void *)&table : NULL;
}

CL_API_ENTRY void *CL_API_CALL clGetExtensionFunctionAddress(const char *name)
{
    return fake_clGetExtensionFunctionAddress(name);
}
