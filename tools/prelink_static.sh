#!/bin/sh
# SPDX-License-Identifier: MIT
# prelink_static.sh IN.a OUT.a [LD [OBJCOPY [AR]]]: the installed static library as one relocatable
# object whose hidden symbols are made local: an application that links libflashcl.a sees the API
# (flashcl_*, default visibility) and none of the library's internals (fcl_*), as with the shared one.
set -eu
in=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
out=$2
ld=${3:-ld}
objcopy=${4:-objcopy}
ar=${5:-ar}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ "$(head -c 7 "$in")" = '!<thin>' ]; then # (a thin archive names its members: relative to itself)
  dir=$(dirname "$in")
  set --
  for m in $("$ar" t "$in"); do
    case $m in /*) set -- "$@" "$m" ;; *) set -- "$@" "$dir/$m" ;; esac
  done
  "$ld" -r -o "$tmp/flashcl.o" "$@"
else
  (cd "$tmp" && "$ar" x "$in")
  "$ld" -r -o "$tmp/flashcl.o" "$tmp"/*.o
fi
"$objcopy" --localize-hidden "$tmp/flashcl.o"
rm -f "$out"
"$ar" rcs "$out" "$tmp/flashcl.o"
