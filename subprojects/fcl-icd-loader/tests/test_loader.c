/* SPDX-License-Identifier: MIT */
/*
 * test_loader.c MODE PLATFORMS: the loader over tests/fake_icd.c (FAKE_ICD: its path), found the way
 * MODE says (filenames: OCL_ICD_FILENAMES, with a missing library and the fake twice; dir: OCL_ICD_VENDORS
 * as a directory, with an .icd file of a missing library and a file that is not an .icd; file: one .icd
 * file; library: the library itself; none: a directory without .icd files). It must find PLATFORMS
 * platforms; then every function the loader forwards (test_calls.c, generated) must reach the member
 * of the dispatch table of its own name, the calls without an object to dispatch on their platform,
 * and calls on no object must fail as the specification says.
 */
#define _POSIX_C_SOURCE 200809L /* (mkdtemp, setenv) */
#include <CL/cl_icd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct fake_call {
    const char *name;
    void (*call)(void *object);
};
extern const struct fake_call fake_calls[];

static int failures;

#define EXPECT(cond, ...)                                                                                      \
    do {                                                                                                       \
        if (!(cond)) {                                                                                         \
            fprintf(stderr, "test_loader: " __VA_ARGS__);                                                     \
            fputc('\n', stderr);                                                                               \
            failures++;                                                                                        \
        }                                                                                                      \
    } while (0)

static void platform_string(cl_platform_id p, cl_platform_info what, char *out, size_t size)
{
    out[0] = '\0';
    if (clGetPlatformInfo(p, what, size, out, NULL) != CL_SUCCESS)
        strcpy(out, "(error)");
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}

static void expect_reached(cl_platform_id p, const char *name, const char *how)
{
    char got[160];
    platform_string(p, CL_PLATFORM_NAME, got, sizeof got);
    EXPECT(strcmp(got, name) == 0, "%s%s reached the driver's %s", name, how, got);
}

int main(int argc, char **argv)
{
    const char *fake = getenv("FAKE_ICD");
    if (argc != 3 || !fake) {
        fprintf(stderr, "usage: FAKE_ICD=path test_loader MODE PLATFORMS\n");
        return 2;
    }
    const char *mode = argv[1];
    cl_uint expected = (cl_uint)atoi(argv[2]);
    char dir[] = "/tmp/fcl-icd-test-XXXXXX", path[4096], text[4200];
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(text, sizeof text, "%s\n", fake);
    if (strcmp(mode, "filenames") == 0) {
        snprintf(path, sizeof path, "/nonexistent/libnone.so:%s:%s", fake, fake);
        setenv("OCL_ICD_FILENAMES", path, 1);
    } else if (strcmp(mode, "dir") == 0) {
        snprintf(path, sizeof path, "%s/a.icd", dir), write_file(path, "libfcl-none-such.so\n");
        snprintf(path, sizeof path, "%s/b.icd", dir), write_file(path, text);
        snprintf(path, sizeof path, "%s/c.txt", dir), write_file(path, text);
        setenv("OCL_ICD_VENDORS", dir, 1);
    } else if (strcmp(mode, "file") == 0) {
        snprintf(path, sizeof path, "%s/fake.icd", dir), write_file(path, text);
        setenv("OCL_ICD_VENDORS", path, 1);
    } else if (strcmp(mode, "library") == 0) {
        setenv("OCL_ICD_VENDORS", fake, 1);
    } else if (strcmp(mode, "none") == 0) {
        setenv("OCL_ICD_VENDORS", dir, 1);
    } else {
        fprintf(stderr, "test_loader: no mode %s\n", mode);
        return 2;
    }

    cl_uint n = 99;
    cl_int err = clGetPlatformIDs(0, NULL, &n);
    EXPECT(n == expected, "%s: %u platforms found, %u expected", mode, n, expected);
    EXPECT(err == (expected ? CL_SUCCESS : CL_PLATFORM_NOT_FOUND_KHR), "%s: clGetPlatformIDs gave %d", mode, err);
    EXPECT(clGetPlatformIDs(0, NULL, NULL) == CL_INVALID_VALUE, "clGetPlatformIDs(0, NULL, NULL) accepted");
    int forwarded = 0;
    if (n > 0 && n == expected) {
        cl_platform_id ids[4];
        EXPECT(clGetPlatformIDs(4, ids, NULL) == CL_SUCCESS, "clGetPlatformIDs failed");
        for (const struct fake_call *c = fake_calls; c->name; c++, forwarded++) {
            c->call(ids[0]);
            expect_reached(ids[0], c->name, "");
        }
        /* The calls without an object of their own: their platform, else the first one. */
        cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)ids[n - 1], 0};
        cl_device_id device = (cl_device_id)(void *)ids[0];
        cl_event event = (cl_event)(void *)ids[0];
        char which[16];
        clCreateContextFromType(props, CL_DEVICE_TYPE_ALL, NULL, NULL, &err);
        expect_reached(ids[0], "clCreateContextFromType", " (CL_CONTEXT_PLATFORM)");
        clCreateContextFromType(NULL, CL_DEVICE_TYPE_ALL, NULL, NULL, &err);
        expect_reached(ids[0], "clCreateContextFromType", " (no properties)");
        clGetGLContextInfoKHR(props, CL_CURRENT_DEVICE_FOR_GL_CONTEXT_KHR, 0, NULL, NULL);
        expect_reached(ids[0], "clGetGLContextInfoKHR", "");
        clCreateContext(NULL, 1, &device, NULL, NULL, &err);
        expect_reached(ids[0], "clCreateContext", "");
        clWaitForEvents(1, &event);
        expect_reached(ids[0], "clWaitForEvents", "");
        clGetDeviceIDs(NULL, CL_DEVICE_TYPE_ALL, 0, NULL, NULL);
        expect_reached(ids[0], "clGetDeviceIDs", " (NULL platform)");
        platform_string(NULL, CL_PLATFORM_VENDOR, which, sizeof which);
        EXPECT(strcmp(which, "0") == 0, "clGetPlatformInfo(NULL) reached platform %s, not the first", which);
        platform_string(ids[n - 1], CL_PLATFORM_VENDOR, which, sizeof which);
        EXPECT(which[0] == (char)('0' + n - 1), "clGetPlatformInfo reached platform %s, not %u", which, n - 1);
        EXPECT(clGetExtensionFunctionAddress("clFakeVendorFunction") != NULL, "a driver's own extension not found");
    }
    EXPECT(clGetExtensionFunctionAddress("clNoSuchFunctionKHR") == NULL, "a function that no one has was found");
    EXPECT(clGetExtensionFunctionAddress("clCreateSubDevicesEXT") != NULL, "clCreateSubDevicesEXT not found");
    /* No object: the error of its kind, and no call. */
    EXPECT(clGetDeviceInfo(NULL, CL_DEVICE_NAME, 0, NULL, NULL) == CL_INVALID_DEVICE, "clGetDeviceInfo(NULL)");
    EXPECT(clReleaseMemObject(NULL) == CL_INVALID_MEM_OBJECT, "clReleaseMemObject(NULL)");
    err = 0;
    EXPECT(clCreateBuffer(NULL, 0, 16, NULL, &err) == NULL && err == CL_INVALID_CONTEXT, "clCreateBuffer(NULL)");
    EXPECT(clWaitForEvents(0, NULL) == CL_INVALID_VALUE, "clWaitForEvents(0, NULL)");
    err = 0;
    EXPECT(clCreateContext(NULL, 0, NULL, NULL, NULL, &err) == NULL && err == CL_INVALID_VALUE, "clCreateContext()");
    EXPECT(clUnloadCompiler() == CL_SUCCESS, "clUnloadCompiler");

    snprintf(path, sizeof path, "rm -rf '%s'", dir);
    if (system(path) != 0)
        fprintf(stderr, "test_loader: could not remove %s\n", dir);
    if (failures)
        return 1;
    printf("test_loader %s: %u platform%s, %d calls reached their driver's function\n", mode, n, n == 1 ? "" : "s",
           forwarded);
    return 0;
}
