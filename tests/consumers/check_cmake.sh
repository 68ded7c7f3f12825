#!/bin/sh
# SPDX-License-Identifier: MIT
# check_cmake.sh REPO: installs flashcl from REPO into a temporary prefix (no tests, no command), then
# builds tests/consumers/cmake against it with find_package(flashcl CONFIG) and runs the program; also
# that a version the package does not meet is refused, and that the installed static archive links with
# pkg-config's static flags.
set -eu
repo=$(cd "$1" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
meson setup "$tmp/build" "$repo" --prefix="$tmp/prefix" -Dtests=disabled -Dtools=disabled >/dev/null
meson install -C "$tmp/build" >/dev/null
cp -r "$repo/tests/consumers/cmake" "$repo/tests/consumers/consumer.c" "$tmp/"
# the version this tree is: major.minor of meson.build's project version
want=$(meson introspect --projectinfo "$tmp/build" | python3 -c 'import json,sys; print(".".join(json.load(sys.stdin)["version"].split(".")[:2]))')
cmake -S "$tmp/cmake" -B "$tmp/cbuild" -DCMAKE_PREFIX_PATH="$tmp/prefix" -DFLASHCL_WANTED="$want" >/dev/null
cmake --build "$tmp/cbuild" >/dev/null
LD_LIBRARY_PATH="$tmp/prefix/lib:$tmp/prefix/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo .)" "$tmp/cbuild/consumer"
# versions the installed package does not meet: a later major, and (a 0.x release being compatible
# within its minor version only) the previous minor
prev=$(echo "$want" | awk -F. '$1 == 0 && $2 > 0 { print "0." $2 - 1 }')
for bad in 9.0 $prev; do
  if cmake -S "$tmp/cmake" -B "$tmp/cbuild-$bad" -DCMAKE_PREFIX_PATH="$tmp/prefix" -DFLASHCL_WANTED="$bad" >/dev/null 2>&1; then
    echo "cmake check: find_package(flashcl $bad) was accepted by flashcl $want" >&2
    exit 1
  fi
done
# the static archive, with pkg-config --static
libdir=$(dirname "$(find "$tmp/prefix" -name libflashcl.a | head -1)")
pc="env PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config"
cc "$tmp/consumer.c" -o "$tmp/consumer_static" $($pc --cflags flashcl) "$libdir/libflashcl.a" \
  $($pc --static --libs flashcl | sed 's/-lflashcl//')
"$tmp/consumer_static"
echo "cmake check: find_package(flashcl $want CONFIG) and flashcl::flashcl work; 9.0 ${prev:+and $prev }refused; the static archive links"
