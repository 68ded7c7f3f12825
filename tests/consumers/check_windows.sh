#!/bin/sh
# SPDX-License-Identifier: MIT
# check_windows.sh REPO: Windows by cross-compiling (mingw-w64 from Debian; nothing runs): the library as
# a DLL and a static archive, and the command, against the OpenCL ICD loader of subprojects/
# (fcl-icd-loader/: OpenCL.dll, over the Khronos headers of subprojects/opencl-headers.wrap, which
# fill_packagecache.sh puts into the package cache first; no system OpenCL package is read); then the
# DLL exports exactly the API (tests/symbols.txt, no internals) and imports OpenCL.dll, the loader exports
# what its module definition lists, and tests/consumers/consumer.c links against the DLL (dllimport) and
# against the static archive (FLASHCL_STATIC), both with the loader's import library.
set -eu
repo=$(cd "$1" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$repo/tests/consumers/fill_packagecache.sh" "$repo" opencl-headers >/dev/null
cat > "$tmp/cross.ini" <<EOF2
[binaries]
c = 'x86_64-w64-mingw32-gcc'
ar = 'x86_64-w64-mingw32-ar'
strip = 'x86_64-w64-mingw32-strip'
windres = 'x86_64-w64-mingw32-windres'
pkg-config = 'false'

[host_machine]
system = 'windows'
cpu_family = 'x86_64'
cpu = 'x86_64'
endian = 'little'
EOF2
meson setup "$tmp/build" "$repo" --cross-file "$tmp/cross.ini" --wrap-mode=nodownload \
  --force-fallback-for=OpenCL,OpenCL-Headers -Dclblast=disabled -Dtests=disabled -Dtools=enabled -Dwerror=true >/dev/null
ninja -C "$tmp/build" >/dev/null
dll=$(ls "$tmp/build"/libflashcl*.dll)
x86_64-w64-mingw32-objdump -p "$dll" | sed -n '/Ordinal\/Name Pointer/,/^$/p' | grep -o '\[ *[0-9][0-9]*\] [A-Za-z_0-9]*' | \
  awk '{print $NF}' | sort > "$tmp/exports"
grep -v '^#' "$repo/tests/symbols.txt" | grep . | sort > "$tmp/api"
if ! diff "$tmp/api" "$tmp/exports" >/dev/null; then
  echo "windows check: the DLL's exports differ from tests/symbols.txt:" >&2
  diff "$tmp/api" "$tmp/exports" >&2 || true
  exit 1
fi
loader=$tmp/build/subprojects/fcl-icd-loader
if ! x86_64-w64-mingw32-objdump -p "$dll" | grep -q 'DLL Name: OpenCL.dll'; then
  echo "windows check: $(basename "$dll") does not import OpenCL.dll" >&2
  exit 1
fi
x86_64-w64-mingw32-objdump -p "$loader/OpenCL.dll" | sed -n '/Ordinal\/Name Pointer/,/^$/p' | \
  grep -o '\[ *[0-9][0-9]*\] [A-Za-z_0-9]*' | awk '{print $NF}' | sort > "$tmp/cl_exports"
sed -n 's/^ *\(cl[A-Za-z0-9_]*\)$/\1/p' "$loader/OpenCL.def" | sort > "$tmp/cl_def"
if ! diff "$tmp/cl_def" "$tmp/cl_exports" >/dev/null || [ ! -s "$tmp/cl_def" ]; then
  echo "windows check: OpenCL.dll's exports differ from its OpenCL.def:" >&2
  diff "$tmp/cl_def" "$tmp/cl_exports" >&2 || true
  exit 1
fi
headers=$repo/subprojects/$(sed -n 's/^directory *= *//p' "$repo/subprojects/opencl-headers.wrap")/usr/include
cc="x86_64-w64-mingw32-gcc -std=c11 -Wall -Werror -I$repo/include -I$headers"
$cc "$repo/tests/consumers/consumer.c" -o "$tmp/consumer_dll.exe" -L"$tmp/build" -lflashcl -L"$loader" -lOpenCL
$cc -DFLASHCL_STATIC "$repo/tests/consumers/consumer.c" -o "$tmp/consumer_static.exe" "$tmp/build/libflashcl.a" \
  -L"$loader" -lOpenCL -lpthread -lm
ls "$tmp/build/tools/flashcl.exe" >/dev/null
echo "windows check: $(basename "$dll") exports the $(wc -l < "$tmp/api") API functions and nothing else;" \
  "OpenCL.dll, the ICD loader of subprojects/, exports $(wc -l < "$tmp/cl_exports") OpenCL functions;" \
  "flashcl.exe and the consumer (DLL and static) link against it"
