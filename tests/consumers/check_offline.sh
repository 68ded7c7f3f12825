#!/bin/sh
# SPDX-License-Identifier: MIT
# check_offline.sh REPO [BUILD]: flashcl from subprojects/ alone, offline, as on a machine without the
# system's OpenCL loader, OpenCL headers and Check (Debian 12, as root). First the package cache is
# filled (fill_packagecache.sh: the only step that uses the network) and the wraps' folders removed, so
# that they are unpacked anew from it; then, in a mount and network namespace of its own (unshare: the
# rest of the machine sees nothing of it, no package is removed), where the files of those packages are
# not there and there is no network: a plain `meson setup --wrap-mode=nodownload`, which has to take
# the three subprojects on its own, the build (warnings as errors), a check that the command loads the
# subproject's ICD loader (ldd, and the loader's trace finding PoCL), then the host suites and the PoCL
# suites but the flash grid, through that loader.
set -eu
repo=$(cd "$1" && pwd)
build=${2:-$repo/build-offline}
case $build in /*) ;; *) build=$PWD/$build;; esac
packages="ocl-icd-libopencl1 ocl-icd-opencl-dev opencl-c-headers opencl-clhpp-headers check"

if [ "${FCL_OFFLINE_INSIDE:-}" != 1 ]; then
  "$repo/tests/consumers/fill_packagecache.sh" "$repo"
  for wrap in "$repo"/subprojects/*.wrap; do
    dir=$(sed -n 's/^directory *= *//p' "$wrap")
    [ -n "$dir" ] && rm -rf "${repo:?}/subprojects/$dir"
  done
  rm -rf "$build"
  FCL_OFFLINE_INSIDE=1 exec unshare --mount --net "$0" "$repo" "$build"
fi

# (inside the namespace) The packages' files, but their documentation, taken out of /usr: an overlay
# over /usr whose upper layer (on a tmpfs) holds a whiteout for each, so that they are not there at all.
ovl=$(mktemp -d)
mount -t tmpfs tmpfs "$ovl"
mkdir "$ovl/upper" "$ovl/work"
hidden=0
# shellcheck disable=SC2086 # (one word a package)
for f in $(dpkg -L $packages 2>/dev/null | grep -v -E '^/usr/share/(doc|man)/'); do
  if [ -f "$f" ] || [ -L "$f" ]; then
    case $f in /usr/*) ;; *) echo "offline: $f is not under /usr" >&2; exit 1;; esac
    mkdir -p "$ovl/upper/$(dirname "${f#/usr/}")"
    mknod "$ovl/upper/${f#/usr/}" c 0 0
    hidden=$((hidden + 1))
  fi
done
mount -t overlay overlay -o "lowerdir=/usr,upperdir=$ovl/upper,workdir=$ovl/work" /usr
for f in /usr/include/CL/cl.h /usr/include/check.h "/usr/lib/$(gcc -dumpmachine)/libOpenCL.so.1"; do
  if [ -e "$f" ]; then
    echo "offline: $f is still there" >&2
    exit 1
  fi
done
if pkg-config --exists OpenCL || pkg-config --exists check; then
  echo "offline: pkg-config still finds OpenCL or Check" >&2
  exit 1
fi
echo "offline: $hidden files of $packages not there; network interfaces:" \
  "$(awk -F: 'NR > 2 {gsub(/ /, "", $1); printf "%s ", $1}' /proc/net/dev)"

# A plain setup: it has to find the fallbacks itself.
cd "$repo"
meson setup "$build" --wrap-mode=nodownload -Dclblast=disabled -Dwerror=true > "$build.setup.log" ||
  { cat "$build.setup.log"; exit 1; }
grep -E 'from cache|Dependency (OpenCL|OpenCL-Headers|check) found' "$build.setup.log"
mv "$build.setup.log" "$build/meson-logs/setup-output.txt"
subprojects=$(meson introspect --projectinfo "$build" | python3 -c '
import json, sys
print(" ".join(sorted(p["name"] for p in json.load(sys.stdin)["subprojects"])))')
if [ "$subprojects" != "check fcl-icd-loader opencl-headers" ]; then
  echo "offline: the subprojects used are \"$subprojects\", not check, fcl-icd-loader and opencl-headers" >&2
  exit 1
fi
ninja -C "$build" > /dev/null
loader=$(ldd "$build/tools/flashcl" | sed -n 's/.*libOpenCL.so.1 => \([^ ]*\).*/\1/p')
case $loader in
  "$build"/*) echo "offline: subprojects $subprojects; flashcl loads $loader";;
  *) echo "offline: flashcl loads libOpenCL.so.1 from '$loader', not the build's" >&2; exit 1;;
esac
FCL_ICD_TRACE=1 OCL_ICD_VENDORS=/etc/OpenCL/vendors/pocl.icd "$build/tools/flashcl" devices 2>&1 | \
  grep -E '^(fcl-icd-loader|[0-9]+:[0-9]+ )'
meson test -C "$build" --suite host --suite pocl --no-suite flash --print-errorlogs
