#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""nv_driver_sass.py CACHE_DIR_OR_PTX...: what NVIDIA's driver makes of flashcl's kernels.

NVIDIA's OpenCL returns PTX as a program's binary (flashcl's disk cache keeps it: FLASHCL_CACHE_DIR); the
driver assembles it when the program is built. This script hands each cached PTX to the same driver
through the CUDA driver API (libcuda: cuModuleLoadDataEx, a whole-program compile like clBuildProgram's,
for the device's own architecture or sm_90a where the PTX names it), prints each entry point's registers,
local memory (spills) and shared memory as the driver reports them (cuFuncGetAttribute) after the
assembler's own log (verbose: registers, spills and performance warnings such as serialized wgmma), and
writes a cubin from the linker (cuLinkCreate/cuLinkAddData/cuLinkComplete) into OUT_DIR (default: the
current directory) for nvdisasm, except for programs with setmaxnreg, whose relocatable compile is not
the driver's: their PTX goes there instead (NAME.ptx, for ptxas -arch=sm_90a elsewhere). ptxas on another machine may allocate registers differently; this is
the driver's own answer. Run on the GPU machine; needs only libcuda.so.1.
"""
import ctypes
import os
import re
import sys

CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, CU_FUNC_ATTRIBUTE_NUM_REGS = 1, 3, 4
CU_JIT_INPUT_PTX = 1
CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER = 3, 4, 5
CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_LOG_VERBOSE = 6, 12
CU_JIT_TARGET, CU_TARGET_COMPUTE_90A = 9, 0x10000 + 90  # (sm_90a: the accelerated-features target)


def ptx_of(path):
    """The PTX text inside a flashcl cache entry (header, key, binary, checksum) or a .ptx file."""
    data = open(path, "rb").read()
    start = data.find(b"//\n// Generated")
    if start < 0:
        start = data.find(b".version")
    if start < 0 or b".entry" not in data:
        return None
    end = data.rfind(b"}")
    return data[start : end + 1] + b"\n\0"


def main():
    out = os.environ.get("OUT_DIR", ".")
    cu = ctypes.CDLL("libcuda.so.1")

    def check(rc, what):
        if rc != 0:
            raise SystemExit("nv_driver_sass: %s failed (CUresult %d)" % (what, rc))

    check(cu.cuInit(0), "cuInit")
    dev, ctx = ctypes.c_int(), ctypes.c_void_p()
    check(cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
    check(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    paths = []
    for arg in sys.argv[1:]:
        paths += [os.path.join(arg, f) for f in sorted(os.listdir(arg))] if os.path.isdir(arg) else [arg]
    for path in paths:
        ptx = ptx_of(path)
        if ptx is None:
            continue
        name = os.path.splitext(os.path.basename(path))[0]
        # The driver's whole-program compile (cuModuleLoadDataEx on the PTX), like clBuildProgram's: the
        # assembler's log (verbose: each entry's registers and spills, and performance warnings such as
        # wgmma serialized), then each entry's registers, spills and shared memory.
        info, err = ctypes.create_string_buffer(1 << 16), ctypes.create_string_buffer(1 << 16)
        keys = [CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER,
                CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_LOG_VERBOSE]
        values = [ctypes.cast(info, ctypes.c_void_p).value, len(info), ctypes.cast(err, ctypes.c_void_p).value, len(err), 1]
        sm90a = re.search(rb"\.target\s+sm_90a", ptx) is not None
        if sm90a:  # (flash_wgmma's finished programs)
            keys.append(CU_JIT_TARGET)
            values.append(CU_TARGET_COMPUTE_90A)
        opts = (ctypes.c_int * len(keys))(*keys)
        vals = (ctypes.c_void_p * len(values))(*values)
        mod = ctypes.c_void_p()
        rc = cu.cuModuleLoadDataEx(ctypes.byref(mod), ptx, len(keys), opts, vals)
        for line in (info.value + err.value).decode(errors="replace").splitlines():
            if line.strip():
                print("%s: %s" % (os.path.basename(path), line.strip()))
        if rc != 0:  # (the next file still: one program's failure says nothing of the others)
            print("%s: nv_driver_sass: the driver did not build it (CUresult %d)" % (name, rc))
            continue
        for entry in re.findall(rb"\.entry\s+(\w+)", ptx):
            fn = ctypes.c_void_p()
            check(cu.cuModuleGetFunction(ctypes.byref(fn), mod, entry), "cuModuleGetFunction")
            attrs = []
            for attr in (CU_FUNC_ATTRIBUTE_NUM_REGS, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES):
                v = ctypes.c_int()
                check(cu.cuFuncGetAttribute(ctypes.byref(v), attr, fn), "cuFuncGetAttribute")
                attrs.append(v.value)
            print("%s %s: %d registers, %d bytes local (spills), %d bytes shared" % (name, entry.decode(), *attrs))
        cu.cuModuleUnload(mod)
        # The cubin for nvdisasm comes from the linker, which compiles the PTX as a relocatable unit and
        # then ignores setmaxnreg (C7504): for flash_wgmma's fp8 program it gave every warpgroup 166
        # registers, 48 bytes of spill and serialized wgmma (2026-12-05), where the driver's build runs the
        # fp16 program at FlashAttention-3's pace; so none is written for them.
        # Their PTX is written instead (NAME.ptx), for ptxas -arch=sm_90a and nvdisasm elsewhere: where the
        # spills are, which warpgroup's code holds them.
        if b"setmaxnreg" in ptx:
            with open(os.path.join(out, name + ".ptx"), "wb") as f:
                f.write(ptx.rstrip(b"\0"))
            print("%s: no cubin (setmaxnreg: the linker's code would not be the driver's); its PTX: %s.ptx" % (name, name))
            continue
        state = ctypes.c_void_p()
        check(cu.cuLinkCreate_v2(len(keys), opts, vals, ctypes.byref(state)), "cuLinkCreate")
        cubin, size = ctypes.c_void_p(), ctypes.c_size_t()
        rc = cu.cuLinkAddData_v2(state, CU_JIT_INPUT_PTX, ptx, len(ptx), b"k.ptx", 0, None, None)
        rc = rc or cu.cuLinkComplete(state, ctypes.byref(cubin), ctypes.byref(size))
        if rc == 0:
            with open(os.path.join(out, name + ".cubin"), "wb") as f:
                f.write(ctypes.string_at(cubin, size.value))
        else:
            print("%s: nv_driver_sass: the linker did not assemble it (CUresult %d)" % (name, rc))
        cu.cuLinkDestroy(state)

if __name__ == "__main__":
    main()
