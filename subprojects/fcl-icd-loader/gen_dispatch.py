#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""gen_dispatch.py CL_ICD_H OUT_C OUT_DEF HEADER...: the loader's forwarding functions, from the headers.

Every member of `struct _cl_icd_dispatch` (CL/cl_icd.h) gets a function that finds the dispatch table
through its first argument (every OpenCL object begins with a pointer to its driver's table) and calls
the same member there, with the signature of the member's typedef `cl_api_<name>` and under the same
preprocessor conditions as that typedef (a version, or _WIN32 for Direct3D). Those that the HEADERs
(CL/cl.h, cl_gl.h, cl_ext.h, cl_egl.h) declare are the library's exports, under their own names (the
exports of ocl-icd's libOpenCL.so.1); the others (Direct3D's) are static, reached through
clGetExtensionFunctionAddress, as are all the extension functions. The functions whose first argument
is not the object to dispatch on (clGetPlatformIDs, clCreateContext, ...) are loader.c's, by hand: a
member of neither kind stops the generation, so a new header cannot yield a wrong forwarder.
OUT_DEF lists the exports for a Windows DLL (every version defined, as loader.c's build asks). An
output named '-' is not written.

gen_dispatch.py --test CL_ICD_H OUT_FAKE_C OUT_CALLS_C HEADER...: for tests/ (the loader's own tests), a
fake driver's function for every member (it records its name) and the table that holds them, and a call
of every function the loader forwards, through the export and, for extension functions, through
clGetExtensionFunctionAddress.
"""
import re
import sys

# Written by hand in loader.c (they do not dispatch on their first argument, or have none).
HAND_WRITTEN = {
    'clGetPlatformIDs', 'clGetPlatformInfo', 'clGetDeviceIDs', 'clCreateContext', 'clCreateContextFromType',
    'clWaitForEvents', 'clUnloadCompiler', 'clGetExtensionFunctionAddress', 'clGetGLContextInfoKHR',
}
# The object types dispatched on, with the error a null one gets.
OBJECTS = {
    'cl_platform_id': 'CL_INVALID_PLATFORM', 'cl_device_id': 'CL_INVALID_DEVICE',
    'cl_context': 'CL_INVALID_CONTEXT', 'cl_command_queue': 'CL_INVALID_COMMAND_QUEUE',
    'cl_mem': 'CL_INVALID_MEM_OBJECT', 'cl_program': 'CL_INVALID_PROGRAM', 'cl_kernel': 'CL_INVALID_KERNEL',
    'cl_event': 'CL_INVALID_EVENT', 'cl_sampler': 'CL_INVALID_SAMPLER',
}
TYPEDEF = re.compile(r'typedef\s+(?P<ret>[\w\s\*]+?)\s*\(\s*CL_API_CALL\s*\*\s*cl_api_(?P<name>\w+)\s*\)\s*'
                     r'\((?P<params>.*)\)\s*(?:\w+\s*)*;$', re.S)


def strip_comments(text, keep_names=False):
    """The text without comments; with keep_names, a comment of one word stays, as that word (the header
    names some parameters only so: cl_mem /* memobj */)."""
    if keep_names:
        text = re.sub(r'/\*(?!\s*\w+\s*\*/).*?\*/', ' ', text, flags=re.S)
        text = re.sub(r'/\*\s*(\w+)\s*\*/', r' \1 ', text)
    else:
        text = re.sub(r'/\*.*?\*/', ' ', text, flags=re.S)
    return re.sub(r'//[^\n]*', '', text)


def split_params(params):
    """The parameters at the top level of the list (a callback's own list stays whole)."""
    out, depth, cur = [], 0, ''
    for ch in params:
        if ch == '(':
            depth += 1
        elif ch == ')':
            depth -= 1
        if ch == ',' and depth == 0:
            out.append(cur.strip())
            cur = ''
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return [] if out == ['void'] else out


def name_param(param, i):
    """(the parameter's declaration, its name): a name made up (argN) where the header gives none."""
    cb = re.search(r'\(\s*(?:CL_CALLBACK\s*)?\*\s*(\w*)\s*\)', param)  # a callback: void (CL_CALLBACK *pfn)(...)
    if cb:
        if cb.group(1):
            return param, cb.group(1)
        name = 'arg%d' % i
        return param[:cb.end() - 1] + name + param[cb.end() - 1:], name
    array = re.match(r'(.*?)(\w+)\s*\[[^\]]*\]\s*$', param)  # const size_t origin[3]: as cl.h, a pointer
    if array:
        return '%s*%s' % (array.group(1), array.group(2)), array.group(2)
    words = [w for w in re.findall(r'\w+|\*', param) if w != 'const']
    if words[-1] != '*' and len([w for w in words if w != '*']) >= 2:
        return param, words[-1]
    name = 'arg%d' % i
    return param + ' ' + name, name


def parse_icd(path):
    """The typedefs (name -> (return type, [params], condition)) and the dispatch struct's members."""
    text = re.sub(r'/\*(?!\s*\w+\s*\*/).*?\*/', ' ', open(path, encoding='utf-8').read(), flags=re.S)
    typedefs, members = {}, []
    stack = []  # conditions of the enclosing #if blocks; None for those that do not matter here
    stmt = None
    in_struct = False
    for raw in text.split('\n'):
        line = raw.strip()
        if stmt is None and not line.startswith('typedef'):
            line = strip_comments(line).strip()  # (outside typedefs a word in a comment is no name)
        if stmt is None and line.startswith('#'):
            d = line[1:].strip()
            if d.startswith('ifndef OPENCL_CL_ICD_H') or d.startswith('ifdef __cplusplus'):
                stack.append(None)
            elif d.startswith('ifdef '):
                stack.append('defined(%s)' % d.split()[1])
            elif d.startswith('ifndef '):
                stack.append('!defined(%s)' % d.split()[1])
            elif d.startswith('if '):
                stack.append('(%s)' % d[3:].strip())
            elif d.startswith('else'):
                if stack[-1] is not None:
                    stack[-1] = '!%s' % stack[-1]
            elif d.startswith('endif'):
                stack.pop()
            elif d.startswith('elif'):
                raise SystemExit('gen_dispatch: #elif in %s: not understood' % path)
            continue
        if in_struct:
            if line.startswith('}'):
                in_struct = False
                continue
            if not line:
                continue
            stmt = line if stmt is None else stmt + ' ' + line
            if ';' in stmt:
                m = re.match(r'cl_api_(\w+)\s+(\w+)\s*;$', stmt)
                if not m or m.group(1) != m.group(2):
                    raise SystemExit('gen_dispatch: dispatch member "%s" not understood' % stmt)
                members.append(m.group(1))
                stmt = None
            continue
        if stmt is None and line.startswith('typedef struct _cl_icd_dispatch'):
            in_struct = True
            continue
        if stmt is None and not line.startswith('typedef'):
            continue
        stmt = line if stmt is None else stmt + ' ' + line
        if not stmt.endswith(';'):
            continue
        m = TYPEDEF.match(' '.join(strip_comments(stmt, keep_names=True).split()))
        if m:
            cond = ' && '.join(c for c in stack if c is not None) or '1'
            typedefs[m.group('name')] = (' '.join(m.group('ret').split()),
                                         [' '.join(p.split()) for p in split_params(m.group('params'))], cond)
        stmt = None
    if not members:
        raise SystemExit('gen_dispatch: no struct _cl_icd_dispatch in %s' % path)
    return typedefs, members


def declared(headers):
    names = set()
    for h in headers:
        names |= set(re.findall(r'CL_API_CALL\s+(cl\w+)\s*\(', strip_comments(open(h, encoding='utf-8').read())))
    return names


def forwarder(name, ret, params, exported):
    first = params[0] if params else ''
    obj_type = re.match(r'(?:const\s+)?(\w+)', first).group(1) if first else None
    if obj_type not in OBJECTS or '*' in first:
        raise SystemExit('gen_dispatch: %s does not dispatch on its first argument (%s): write it in loader.c'
                         % (name, first or 'none'))
    named = [name_param(p, i) for i, p in enumerate(params)]
    params = [p for p, _ in named]
    names = [n for _, n in named]
    obj = names[0]
    head = ('FCL_EXPORT CL_API_ENTRY %s CL_API_CALL %s' % (ret, name) if exported
            else 'static %s CL_API_CALL fcl_ext_%s' % (ret, name))
    body = []
    if ret == 'void':
        body.append('    if (!%s)\n        return;' % obj)
        call = '    FCL_TABLE(%s)->%s(%s);' % (obj, name, ', '.join(names))
    else:
        if ret == 'cl_int':
            fail = OBJECTS[obj_type]
        else:  # a pointer or an object: NULL, the error through errcode_ret where there is one
            fail = 'NULL'
            if 'errcode_ret' in names:
                body.append('    if (!%s && errcode_ret)\n        *errcode_ret = %s;' % (obj, OBJECTS[obj_type]))
        body.append('    if (!%s)\n        return %s;' % (obj, fail))
        call = '    return FCL_TABLE(%s)->%s(%s);' % (obj, name, ', '.join(names))
    body.append(call)
    return '%s(%s)\n{\n%s\n}\n' % (head, ', '.join(params) or 'void', '\n'.join(body))


def guarded(cond, code):
    code = code.rstrip('\n') + '\n'
    return code if cond == '1' else '#if %s\n%s#endif\n' % (cond, code)


def split_named(params):
    named = [name_param(p, i) for i, p in enumerate(params)]
    return [p for p, _ in named], [n for _, n in named]


def test_sources(icd_h, typedefs, members, exports):
    """(fake driver, calls): tests/fake_icd.c's functions and tests/test_loader.c's calls."""
    fake = ['/* Generated by gen_dispatch.py --test from %s: do not edit. */' % icd_h.replace('\\', '/'),
            '#include <CL/cl_icd.h>', 'void fake_record(const char *name);', 'void *fake_object(void);', '']
    fill = ['void fake_fill(struct _cl_icd_dispatch *t);', 'void fake_fill(struct _cl_icd_dispatch *t)', '{']
    calls = ['/* Generated by gen_dispatch.py --test from %s: do not edit. */' % icd_h.replace('\\', '/'),
             '#include <CL/cl_icd.h>', '#include <stdint.h>',
             'struct fake_call {\n    const char *name;\n    void (*call)(void *object);\n};', '']
    table = []
    for name in members:
        ret, params, cond = typedefs[name]
        params, names = split_named(params)
        if name not in ('clGetPlatformInfo', 'clGetExtensionFunctionAddress'):  # (tests/fake_icd.c's own)
            body = ''.join('    (void)%s;\n' % n for n in names) + '    fake_record("%s");\n' % name
            if ret != 'void':
                body += '    return %s;\n' % ('CL_SUCCESS' if ret == 'cl_int' else '(%s)fake_object()' % ret)
            fake.append(guarded(cond, 'static %s CL_API_CALL fake_%s(%s)\n{\n%s}\n'
                                % (ret, name, ', '.join(params) or 'void', body)))
            fill.append(guarded(cond, '    t->%s = fake_%s;' % (name, name)).rstrip('\n'))
        if name in HAND_WRITTEN and name != 'clGetDeviceIDs' or not params:
            continue  # (tests/test_loader.c calls these itself)
        first_type = params[0][:params[0].rindex(names[0])].strip()
        args = ', '.join(['(%s)object' % first_type] + ['0'] * (len(params) - 1))
        if name in exports:
            calls.append(guarded(cond, 'static void call_%s(void *object)\n{\n    %s(%s);\n}\n' % (name, name, args)))
            table.append((cond, '    {"%s", call_%s},' % (name, name)))
        if re.search(r'(KHR|EXT)$', name):
            calls.append(guarded(cond, 'static void ext_%s(void *object)\n{\n    cl_api_%s f = (cl_api_%s)(uintptr_t)'
                                 'clGetExtensionFunctionAddress("%s");\n    f(%s);\n}\n' % (name, name, name, name, args)))
            table.append((cond, '    {"%s", ext_%s},' % (name, name)))
    fill.append('}\n')
    calls.append('const struct fake_call fake_calls[] = {')
    calls += [guarded(cond, line).rstrip('\n') for cond, line in table]
    calls.append('    {NULL, NULL}\n};\n')
    return '\n'.join(fake + fill), '\n'.join(calls)


def main():
    if len(sys.argv) < 4:
        raise SystemExit(__doc__)
    if sys.argv[1] == '--test':
        icd_h, out_fake, out_calls, headers = sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
        typedefs, members = parse_icd(icd_h)
        for out, text in zip((out_fake, out_calls), test_sources(icd_h, typedefs, members, declared(headers))):
            with open(out, 'w', encoding='utf-8') as f:
                f.write(text)
        return
    icd_h, out_c, out_def, headers = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    typedefs, members = parse_icd(icd_h)
    exports = declared(headers)
    c = ['/* Generated by gen_dispatch.py from %s: do not edit. */' % icd_h.replace('\\', '/'),
         '#include "loader.h"', '']
    table = []  # (name, condition, C expression) for clGetExtensionFunctionAddress
    def_names = []
    for name in members:
        if name not in typedefs:
            raise SystemExit('gen_dispatch: no typedef cl_api_%s in %s' % (name, icd_h))
        ret, params, cond = typedefs[name]
        exported = name in exports
        if exported and 'defined(_WIN32)' not in cond:
            def_names.append(name)
        if name in HAND_WRITTEN:
            if exported:
                table.append((name, cond, name))
            continue
        c.append(guarded(cond, forwarder(name, ret, params, exported)))
        table.append((name, cond, name if exported else 'fcl_ext_' + name))
    # Extension functions (a KHR or EXT suffix) by name: the loader's own forwarders, valid for any
    # platform's objects, as the Khronos loader returns them.
    c.append('const struct fcl_named_function fcl_extension_functions[] = {')
    for name, cond, expr in table:
        if re.search(r'(KHR|EXT)$', name):
            c.append(guarded(cond, '    {"%s", (void *)(uintptr_t)&%s},' % (name, expr)).rstrip('\n'))
    c.append('    {NULL, NULL}\n};\n')
    if out_c != '-':
        with open(out_c, 'w', encoding='utf-8') as f:
            f.write('\n'.join(c))
    if out_def != '-':
        with open(out_def, 'w', encoding='utf-8') as f:
            f.write('LIBRARY OpenCL.dll\nEXPORTS\n' + ''.join('    %s\n' % n for n in sorted(def_names)))


if __name__ == '__main__':
    main()
