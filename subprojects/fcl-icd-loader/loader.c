/* SPDX-License-Identifier: MIT */
/*
 * fcl-icd-loader: a small OpenCL ICD loader, flashcl's fallback where the system has none
 * (libOpenCL.so.1, OpenCL.dll). It finds the installed OpenCL drivers (ICDs) as the Khronos loader and
 * ocl-icd do, asks each for its platforms through clIcdGetPlatformIDsKHR (cl_khr_icd), and passes every
 * other call to the driver of the object it is made on, through the dispatch table that every ICD
 * object begins with: those forwarders are generated from CL/cl_icd.h (gen_dispatch.py); the calls
 * here are those that have no such object to dispatch on.
 *
 * Where the drivers are found, the first that is set of:
 * - OCL_ICD_FILENAMES: the drivers' libraries, separated by ':' (';' on Windows) (as the Khronos loader);
 * - OCL_ICD_VENDORS (as ocl-icd reads it, on Windows too): a directory of .icd files, one .icd file,
 *   or else a library;
 * - Linux and other POSIX systems: the .icd files of FCL_ICD_VENDORS_DIR (/etc/OpenCL/vendors),
 *   in the order of their names; each file's first line names the driver's library;
 *   Windows: the display adapters' registry keys (OpenCLDriverName: how current drivers install) and
 *   the DWORD values of HKLM\SOFTWARE\Khronos\OpenCL\Vendors that are 0, each value's name a DLL.
 * FCL_ICD_TRACE=1 prints what it finds on stderr.
 *
 * Not done: layers (cl_loader_layers), the OCL_ICD_PLATFORM_SORT and OCL_ICD_DEFAULT_PLATFORM choices,
 * unloading the drivers. The default platform (a NULL platform, a context without CL_CONTEXT_PLATFORM)
 * is the first one found.
 */
#include "loader.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(_WIN32)
#include <windows.h>
#include <cfgmgr32.h>
#define PATH_LIST_SEPARATOR ';'
#else
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <sys/stat.h>
#define PATH_LIST_SEPARATOR ':'
#endif

#ifndef FCL_ICD_VENDORS_DIR
#define FCL_ICD_VENDORS_DIR "/etc/OpenCL/vendors"
#endif

typedef void (*fcl_fn)(void);
typedef void *(CL_API_CALL *get_extension_fn)(const char *);
typedef cl_int(CL_API_CALL *icd_get_platforms_fn)(cl_uint, cl_platform_id *, cl_uint *);

static cl_platform_id *platforms;
static cl_uint n_platforms;
static int tracing;

static void trace(const char *fmt, ...)
{
    if (!tracing)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("fcl-icd-loader: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static void *open_library(const char *name)
{
#if defined(_WIN32)
    return (void *)LoadLibraryA(name);
#else
    return dlopen(name, RTLD_NOW | RTLD_LOCAL);
#endif
}

static const char *library_error(void)
{
#if defined(_WIN32)
    static char text[32];
    snprintf(text, sizeof text, "error %lu", (unsigned long)GetLastError());
    return text;
#else
    const char *e = dlerror();
    return e ? e : "unknown error";
#endif
}

static fcl_fn library_symbol(void *lib, const char *name)
{
#if defined(_WIN32)
    return (fcl_fn)(void (*)(void))GetProcAddress((HMODULE)lib, name);
#else
    void *p = dlsym(lib, name);
    fcl_fn f;
    memcpy(&f, &p, sizeof f); /* (POSIX's conversion of an object pointer to a function's) */
    return f;
#endif
}

static void close_library(void *lib)
{
#if defined(_WIN32)
    FreeLibrary((HMODULE)lib);
#else
    dlclose(lib);
#endif
}

/* Loads one driver and appends its platforms (those not already known: a driver named twice). */
static void add_vendor(const char *library)
{
    void *lib = open_library(library);
    if (!lib) {
        trace("%s: cannot load it (%s)", library, library_error());
        return;
    }
    icd_get_platforms_fn get_platforms = NULL;
    get_extension_fn get_extension = (get_extension_fn)library_symbol(lib, "clGetExtensionFunctionAddress");
    if (get_extension) {
        void *p = get_extension("clIcdGetPlatformIDsKHR");
        memcpy(&get_platforms, &p, sizeof get_platforms);
    }
    if (!get_platforms)
        get_platforms = (icd_get_platforms_fn)library_symbol(lib, "clIcdGetPlatformIDsKHR");
    cl_uint n = 0;
    if (!get_platforms || get_platforms(0, NULL, &n) != CL_SUCCESS || n == 0) {
        trace("%s: %s", library, get_platforms ? "no platform" : "not an ICD (no clIcdGetPlatformIDsKHR)");
        close_library(lib);
        return;
    }
    cl_platform_id *ids = calloc(n, sizeof *ids);
    cl_platform_id *grown = realloc(platforms, (n_platforms + n) * sizeof *platforms);
    if (!ids || !grown || get_platforms(n, ids, NULL) != CL_SUCCESS) {
        free(ids);
        if (grown)
            platforms = grown;
        trace("%s: its platforms could not be read", library);
        return;
    }
    platforms = grown;
    cl_uint added = 0;
    for (cl_uint i = 0; i < n; i++) {
        int known = !ids[i] || !FCL_TABLE(ids[i]);
        for (cl_uint j = 0; j < n_platforms && !known; j++)
            known = platforms[j] == ids[i];
        if (!known) {
            platforms[n_platforms++] = ids[i];
            added++;
        }
    }
    free(ids);
    trace("%s: %u platform%s", library, added, added == 1 ? "" : "s");
}

/* Each name of a list separated by `sep` (OCL_ICD_FILENAMES). */
static void add_vendor_list(const char *list, char sep)
{
    char *copy = malloc(strlen(list) + 1);
    if (!copy)
        return;
    strcpy(copy, list);
    for (char *name = copy, *end; name; name = end) {
        end = strchr(name, sep);
        if (end)
            *end++ = '\0';
        if (*name)
            add_vendor(name);
    }
    free(copy);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* An .icd file: its first line names the driver's library. */
static void add_icd_file(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[4096];
    if (!f) {
        trace("%s: cannot read it", path);
        return;
    }
    if (fgets(line, sizeof line, f)) {
        size_t n = strcspn(line, "\r\n");
        while (n > 0 && (line[n - 1] == ' ' || line[n - 1] == '\t'))
            n--;
        line[n] = '\0';
        if (n > 0)
            add_vendor(line);
    }
    fclose(f);
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int is_directory(const char *path)
{
#if defined(_WIN32)
    DWORD a = GetFileAttributesA(path);
    return a != INVALID_FILE_ATTRIBUTES && (a & FILE_ATTRIBUTE_DIRECTORY);
#else
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
#endif
}

/* Appends "dir/name" to a growing list; 0 when out of memory. */
static int append_path(char ***names, size_t *n, size_t *cap, const char *dir, const char *name)
{
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 8;
        char **grown = realloc(*names, c * sizeof **names);
        if (!grown)
            return 0;
        *names = grown;
        *cap = c;
    }
    size_t len = strlen(dir) + strlen(name) + 2;
    if (!((*names)[*n] = malloc(len)))
        return 0;
    snprintf((*names)[(*n)++], len, "%s/%s", dir, name);
    return 1;
}

/* The .icd files of a directory, in the order of their names. */
static void add_icd_directory(const char *dir)
{
    char **names = NULL;
    size_t n = 0, cap = 0;
#if defined(_WIN32)
    char pattern[MAX_PATH + 8];
    WIN32_FIND_DATAA e;
    snprintf(pattern, sizeof pattern, "%s\\*.icd", dir);
    HANDLE d = FindFirstFileA(pattern, &e);
    if (d == INVALID_HANDLE_VALUE) {
        trace("%s: no .icd file", dir);
        return;
    }
    do {
        if (!(e.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) && !append_path(&names, &n, &cap, dir, e.cFileName))
            break;
    } while (FindNextFileA(d, &e));
    FindClose(d);
#else
    DIR *d = opendir(dir);
    if (!d) {
        trace("%s: no such directory", dir);
        return;
    }
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.' && ends_with(e->d_name, ".icd") && !append_path(&names, &n, &cap, dir, e->d_name))
            break;
    closedir(d);
#endif
    if (n)
        qsort(names, n, sizeof *names, compare_names);
    for (size_t i = 0; i < n; i++) {
        add_icd_file(names[i]);
        free(names[i]);
    }
    free(names);
}

/* OCL_ICD_VENDORS, as ocl-icd reads it: a directory of .icd files, an .icd file (a bare name is one of
 * the default directory's), or else a library. */
static void add_ocl_icd_vendors(const char *v)
{
    if (is_directory(v)) {
        add_icd_directory(v);
    } else if (ends_with(v, ".icd")) {
        if (strchr(v, '/') || strchr(v, '\\')) {
            add_icd_file(v);
        } else {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", FCL_ICD_VENDORS_DIR, v);
            add_icd_file(path);
        }
    } else {
        add_vendor(v);
    }
}

#if defined(_WIN32)
/* A device node's OpenCLDriverName (OpenCLDriverNameWow for 32-bit code on 64-bit Windows): one DLL
 * (REG_SZ) or several (REG_MULTI_SZ). 1 where the value was there. */
static int add_adapter_drivers(DEVINST node)
{
    const char *value = "OpenCLDriverName";
#if !defined(_WIN64)
    BOOL wow64 = FALSE;
    if (IsWow64Process(GetCurrentProcess(), &wow64) && wow64)
        value = "OpenCLDriverNameWow";
#endif
    HKEY key;
    if (CM_Open_DevNode_Key(node, KEY_QUERY_VALUE, 0, RegDisposition_OpenExisting, &key, CM_REGISTRY_SOFTWARE) !=
        CR_SUCCESS)
        return 0;
    DWORD type = 0, size = 0;
    int found = 0;
    if (RegQueryValueExA(key, value, NULL, &type, NULL, &size) == ERROR_SUCCESS &&
        (type == REG_SZ || type == REG_MULTI_SZ)) {
        char *names = calloc(size + 2, 1);
        if (names && RegQueryValueExA(key, value, NULL, &type, (BYTE *)names, &size) == ERROR_SUCCESS) {
            for (char *name = names; *name; name += strlen(name) + 1) {
                found = 1;
                add_vendor(name);
                if (type == REG_SZ)
                    break;
            }
        }
        free(names);
    }
    RegCloseKey(key);
    return found;
}

/* The display adapters' drivers, as the Khronos loader finds them: each adapter's own key, else those of
 * its children of the software-component class. */
static void add_adapters(void)
{
    static const char display_class[] = "{4d36e968-e325-11ce-bfc1-08002be10318}";
    static const char software_component_class[] = "{5c4c3332-344d-483c-8739-259e934c9cc8}";
    const ULONG flags = CM_GETIDLIST_FILTER_CLASS | CM_GETIDLIST_FILTER_PRESENT;
    ULONG len = 0;
    if (CM_Get_Device_ID_List_SizeA(&len, display_class, flags) != CR_SUCCESS || len == 0)
        return;
    char *ids = calloc(len + 1, 1);
    if (!ids || CM_Get_Device_ID_ListA(display_class, ids, len, flags) != CR_SUCCESS) {
        free(ids);
        return;
    }
    for (char *id = ids; *id; id += strlen(id) + 1) {
        DEVINST node, child;
        if (CM_Locate_DevNodeA(&node, id, CM_LOCATE_DEVNODE_NORMAL) != CR_SUCCESS || add_adapter_drivers(node))
            continue;
        for (CONFIGRET r = CM_Get_Child(&child, node, 0); r == CR_SUCCESS; r = CM_Get_Sibling(&child, child, 0)) {
            char cls[64];
            ULONG n = sizeof cls;
            if (CM_Get_DevNode_Registry_PropertyA(child, CM_DRP_CLASSGUID, NULL, cls, &n, 0) == CR_SUCCESS &&
                _stricmp(cls, software_component_class) == 0)
                add_adapter_drivers(child);
        }
    }
    free(ids);
}

/* HKLM\SOFTWARE\Khronos\OpenCL\Vendors: each DWORD value 0 names a driver's DLL. */
static void add_registry_vendors(void)
{
    HKEY key;
    if (RegOpenKeyExA(HKEY_LOCAL_MACHINE, "SOFTWARE\\Khronos\\OpenCL\\Vendors", 0, KEY_READ, &key) != ERROR_SUCCESS) {
        trace("no registry key HKLM\\SOFTWARE\\Khronos\\OpenCL\\Vendors");
        return;
    }
    for (DWORD i = 0;; i++) {
        char name[MAX_PATH + 1];
        DWORD name_len = sizeof name, type = 0, data = 1, data_len = sizeof data;
        LONG r = RegEnumValueA(key, i, name, &name_len, NULL, &type, (BYTE *)&data, &data_len);
        if (r == ERROR_NO_MORE_ITEMS)
            break;
        if (r == ERROR_SUCCESS && type == REG_DWORD && data == 0)
            add_vendor(name);
    }
    RegCloseKey(key);
}
#endif

static void find_vendors(void)
{
    const char *t = getenv("FCL_ICD_TRACE");
    tracing = t && *t && strcmp(t, "0") != 0;
    const char *files = getenv("OCL_ICD_FILENAMES");
    const char *vendors = getenv("OCL_ICD_VENDORS");
    if (files && *files) {
        trace("OCL_ICD_FILENAMES=%s", files);
        add_vendor_list(files, PATH_LIST_SEPARATOR);
    } else if (vendors && *vendors) {
        trace("OCL_ICD_VENDORS=%s", vendors);
        add_ocl_icd_vendors(vendors);
    } else {
#if defined(_WIN32)
        add_adapters();
        add_registry_vendors();
#else
        add_icd_directory(FCL_ICD_VENDORS_DIR);
#endif
    }
    trace("%u platform%s", n_platforms, n_platforms == 1 ? "" : "s");
}

#if defined(_WIN32)
static INIT_ONCE once = INIT_ONCE_STATIC_INIT;
static BOOL CALLBACK find_vendors_once(PINIT_ONCE o, PVOID p, PVOID *c)
{
    (void)o, (void)p, (void)c;
    find_vendors();
    return TRUE;
}
static void init(void)
{
    InitOnceExecuteOnce(&once, find_vendors_once, NULL, NULL);
}
#else
static pthread_once_t once = PTHREAD_ONCE_INIT;
static void init(void)
{
    pthread_once(&once, find_vendors);
}
#endif

static cl_platform_id default_platform(void)
{
    init();
    return n_platforms ? platforms[0] : NULL;
}

/* CL_CONTEXT_PLATFORM of a property list, else the default platform. */
static cl_platform_id properties_platform(const cl_context_properties *properties)
{
    for (const cl_context_properties *p = properties; p && p[0]; p += 2)
        if (p[0] == CL_CONTEXT_PLATFORM)
            return (cl_platform_id)p[1];
    return default_platform();
}

FCL_EXPORT CL_API_ENTRY cl_int CL_API_CALL clGetPlatformIDs(cl_uint num_entries, cl_platform_id *ids,
                                                           cl_uint *num_platforms)
{
    if ((num_entries == 0 && ids) || (!ids && !num_platforms))
        return CL_INVALID_VALUE;
    init();
    if (num_platforms)
        *num_platforms = n_platforms;
    if (n_platforms == 0)
        return CL_PLATFORM_NOT_FOUND_KHR;
    for (cl_uint i = 0; ids && i < num_entries && i < n_platforms; i++)
        ids[i] = platforms[i];
    return CL_SUCCESS;
}

FCL_EXPORT CL_API_ENTRY cl_int CL_API_CALL clGetPlatformInfo(cl_platform_id platform, cl_platform_info param_name,
                                                            size_t param_value_size, void *param_value,
                                                            size_t *param_value_size_ret)
{
    if (!platform && !(platform = default_platform()))
        return CL_INVALID_PLATFORM;
    return FCL_TABLE(platform)->clGetPlatformInfo(platform, param_name, param_value_size, param_value,
                                                  param_value_size_ret);
}

FCL_EXPORT CL_API_ENTRY cl_int CL_API_CALL clGetDeviceIDs(cl_platform_id platform, cl_device_type device_type,
                                                         cl_uint num_entries, cl_device_id *devices,
                                                         cl_uint *num_devices)
{
    if (!platform && !(platform = default_platform()))
        return CL_INVALID_PLATFORM;
    return FCL_TABLE(platform)->clGetDeviceIDs(platform, device_type, num_entries, devices, num_devices);
}

FCL_EXPORT CL_API_ENTRY cl_context CL_API_CALL clCreateContext(
    const cl_context_properties *properties, cl_uint num_devices, const cl_device_id *devices,
    void(CL_CALLBACK *pfn_notify)(const char *, const void *, size_t, void *), void *user_data, cl_int *errcode_ret)
{
    if (!num_devices || !devices || !devices[0]) {
        if (errcode_ret)
            *errcode_ret = devices && num_devices ? CL_INVALID_DEVICE : CL_INVALID_VALUE;
        return NULL;
    }
    return FCL_TABLE(devices[0])->clCreateContext(properties, num_devices, devices, pfn_notify, user_data,
                                                  errcode_ret);
}

FCL_EXPORT CL_API_ENTRY cl_context CL_API_CALL clCreateContextFromType(
    const cl_context_properties *properties, cl_device_type device_type,
    void(CL_CALLBACK *pfn_notify)(const char *, const void *, size_t, void *), void *user_data, cl_int *errcode_ret)
{
    cl_platform_id platform = properties_platform(properties);
    if (!platform) {
        if (errcode_ret)
            *errcode_ret = CL_INVALID_PLATFORM;
        return NULL;
    }
    return FCL_TABLE(platform)->clCreateContextFromType(properties, device_type, pfn_notify, user_data, errcode_ret);
}

FCL_EXPORT CL_API_ENTRY cl_int CL_API_CALL clGetGLContextInfoKHR(const cl_context_properties *properties,
                                                                cl_gl_context_info param_name,
                                                                size_t param_value_size, void *param_value,
                                                                size_t *param_value_size_ret)
{
    cl_platform_id platform = properties_platform(properties);
    if (!platform)
        return CL_INVALID_PLATFORM;
    return FCL_TABLE(platform)->clGetGLContextInfoKHR(properties, param_name, param_value_size, param_value,
                                                      param_value_size_ret);
}

FCL_EXPORT CL_API_ENTRY cl_int CL_API_CALL clWaitForEvents(cl_uint num_events, const cl_event *event_list)
{
    if (!num_events || !event_list)
        return CL_INVALID_VALUE;
    if (!event_list[0])
        return CL_INVALID_EVENT;
    return FCL_TABLE(event_list[0])->clWaitForEvents(num_events, event_list);
}

FCL_EXPORT CL_API_ENTRY cl_int CL_API_CALL clUnloadCompiler(void)
{
    return CL_SUCCESS;
}

/* The loader's own forwarder for an extension function of the dispatch table; any other name, the first
 * platform's function of that name. */
FCL_EXPORT CL_API_ENTRY void *CL_API_CALL clGetExtensionFunctionAddress(const char *func_name)
{
    if (!func_name)
        return NULL;
    for (const struct fcl_named_function *f = fcl_extension_functions; f->name; f++)
        if (strcmp(f->name, func_name) == 0)
            return f->address;
    init();
    for (cl_uint i = 0; i < n_platforms; i++) {
        void *p = FCL_TABLE(platforms[i])->clGetExtensionFunctionAddress(func_name);
        if (p)
            return p;
    }
    return NULL;
}
