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
cmake -S "$tmp/cmake" -B "$tmp/cbuild" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/cbuild" >/dev/null
LD_LIBRARY_PATH="$tmp/prefix/lib:$tmp/prefix/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo .)" "$tmp/cbuild/consumer"
# a version the installed package does not meet
sed 's/find_package(flashcl 0.1 /find_package(flashcl 9.0 /' "$tmp/cmake/CMakeLists.txt" > "$tmp/cmake/x" && mv "$tmp/cmake/x" "$tmp/cmake/CMakeLists.txt"
if cmake -S "$tmp/cmake" -B "$tmp/cbuild9" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null 2>&1; then
  echo "cmake check: find_package(flashcl 9.0) was accepted" >&2
  exit 1
fi
# the static archive, with pkg-config --static
libdir=$(dirname "$(find "$tmp/prefix" -name libflashcl.a | head -1)")
pc="env PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config"
cc "$tmp/consumer.c" -o "$tmp/consumer_static" $($pc --cflags flashcl) "$libdir/libflashcl.a" \
  $($pc --static --libs flashcl | sed 's/-lflashcl//')
"$tmp/consumer_static"
echo "cmake check: find_package(flashcl CONFIG) and flashcl::flashcl work; 9.0 is refused; the static archive links"
