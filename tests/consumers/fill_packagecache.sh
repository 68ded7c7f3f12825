#!/bin/sh
# SPDX-License-Identifier: MIT
# fill_packagecache.sh REPO [WRAP...]: puts into REPO/subprojects/packagecache/ the files that the wraps
# of subprojects/ (all, or the WRAPs named: check, opencl-headers) take their sources from, through apt
# from Debian 12's archive (no other network), each checked against its wrap's source_hash; then
# `meson setup --wrap-mode=nodownload` finds them there. Files already there are checked and kept.
# - check.wrap: Check's upstream tarball, from Debian's source package (`apt-get source`: apt needs
#   deb-src lines for it);
# - opencl-headers.wrap: the data member of Debian's binary package opencl-c-headers, the Khronos headers
#   (`apt-get download`, then `ar x`; nothing is installed).
set -eu
repo=$(cd "${1:-.}" && pwd)
[ $# -gt 0 ] && shift
wraps=${*:-check opencl-headers}
cache=$repo/subprojects/packagecache
mkdir -p "$cache"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
apt_get() { apt-get -o APT::Sandbox::User=root -qq "$@" >/dev/null; } # (root: no sandbox user, no warning)
wrapval() { sed -n "s/^$2 *= *//p" "$repo/subprojects/$1.wrap"; }

put() { # put WRAP FILE: FILE, checked against WRAP's source_hash, into the cache under its source_filename
  want=$(wrapval "$1" source_hash)
  got=$(sha256sum "$2" | cut -d' ' -f1)
  if [ "$got" != "$want" ]; then
    echo "fill_packagecache: $2 has sha256 $got, $1.wrap wants $want" >&2
    exit 1
  fi
  [ "$2" = "$cache/$name" ] || mv "$2" "$cache/$name"
  echo "fill_packagecache: $name ($1.wrap) in subprojects/packagecache/"
}

for wrap in $wraps; do
  name=$(basename "$(wrapval "$wrap" source_filename)")
  if [ -f "$cache/$name" ]; then
    put "$wrap" "$cache/$name"
    continue
  fi
  case $wrap in
    check)
      if ! (cd "$tmp" && apt_get source --download-only check) || [ ! -f "$tmp/$name" ]; then
        echo "fill_packagecache: apt-get source check gave no $name (deb-src lines in /etc/apt/sources.list.d/," \
          "then apt-get update?)" >&2
        exit 1
      fi
      put check "$tmp/$name";;
    opencl-headers)
      # opencl-c-headers_VERSION_data.tar.xz: the data member of opencl-c-headers_VERSION_all.deb
      deb=${name%_data.tar.xz}
      (cd "$tmp" && apt_get download "${deb%%_*}=${deb#*_}" && ar x "${deb}_all.deb" data.tar.xz)
      put opencl-headers "$tmp/data.tar.xz";;
    *)
      echo "fill_packagecache: no wrap $wrap" >&2
      exit 1;;
  esac
done
