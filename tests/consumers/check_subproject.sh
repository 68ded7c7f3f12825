#!/bin/sh
# SPDX-License-Identifier: MIT
# check_subproject.sh REPO: builds tests/consumers/meson-parent with REPO linked in as subprojects/flashcl,
# static as the parent asks, and checks flashcl's hygiene there: its library only (static, no shared
# object), no test of its own registered, no command built, nothing installed; the parent's test runs.
set -eu
repo=$(cd "$1" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$repo/tests/consumers/meson-parent/meson.build" "$repo/tests/consumers/consumer.c" "$tmp/"
mkdir "$tmp/subprojects"
ln -s "$repo" "$tmp/subprojects/flashcl"
cd "$tmp"
meson setup build -Ddefault_library=static >/dev/null
meson compile -C build >/dev/null
fail() { echo "subproject check: $*" >&2; exit 1; }
tests=$(meson test -C build --list 2>/dev/null | grep -v '^ninja' || true)
[ "$tests" = "parent-consumer" ] || fail "tests registered: $tests"
find build -name 'libflashcl.a' | grep -q . || fail "no static libflashcl"
! find build -name 'libflashcl.so*' | grep -q . || fail "a shared libflashcl was built"
! find build/subprojects -type f -name flashcl -perm -u+x | grep -q . || fail "the flashcl command was built"
installed=$(meson introspect build --installed)
[ "$installed" = "{}" ] || fail "installs: $installed"
meson test -C build >/dev/null || fail "the parent's test failed"
build/consumer
