#!/bin/sh
# check_windows.sh REPO: Windows by cross-compiling (mingw-w64 from Debian; nothing runs): the library as
# a DLL and a static archive, and the command, against an OpenCL import library made from the Khronos
# header's function list (no ICD loader needed to link); then the DLL exports exactly the API
# (tests/symbols.txt, no internals) and tests/consumers/consumer.c links against the DLL (dllimport)
# and against the static archive (FLASHCL_STATIC).
set -eu
repo=$(cd "$1" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/include"
cp -r /usr/include/CL "$tmp/include/"
{ echo "LIBRARY OpenCL.dll"; echo "EXPORTS"; grep -o '^cl[A-Z][A-Za-z0-9_]*(' /usr/include/CL/cl.h | tr -d '(' | sort -u; } > "$tmp/OpenCL.def"
x86_64-w64-mingw32-dlltool -d "$tmp/OpenCL.def" -l "$tmp/libOpenCL.dll.a" -D OpenCL.dll
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

[built-in options]
c_args = ['-I$tmp/include']
c_link_args = ['-L$tmp']
EOF2
meson setup "$tmp/build" "$repo" --cross-file "$tmp/cross.ini" -Dclblast=disabled -Dtests=disabled -Dtools=enabled \
  -Dwerror=true >/dev/null
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
cc="x86_64-w64-mingw32-gcc -std=c11 -Wall -Werror -I$repo/include -I$tmp/include"
$cc "$repo/tests/consumers/consumer.c" -o "$tmp/consumer_dll.exe" -L"$tmp/build" -lflashcl -L"$tmp" -lOpenCL
$cc -DFLASHCL_STATIC "$repo/tests/consumers/consumer.c" -o "$tmp/consumer_static.exe" "$tmp/build/libflashcl.a" \
  -L"$tmp" -lOpenCL -lpthread -lm
ls "$tmp/build/tools/flashcl.exe" >/dev/null
echo "windows check: $(basename "$dll") exports the $(wc -l < "$tmp/api") API functions and nothing else;" \
  "flashcl.exe and the consumer (DLL and static) link"
