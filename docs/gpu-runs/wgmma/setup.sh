# The start every wgmma run shares (sourced): the device's OpenCL and PyTorch environment, the results
# folder $R, a release build in build-gpu (its log in $R/build.log), $B the command, no disk cache.
source .gpu/gpu-env.sh >/dev/null
R=/tmp/r; mkdir -p $R
[ -d build-gpu ] || meson setup build-gpu -Dbuildtype=release >/dev/null
ninja -C build-gpu > $R/build.log 2>&1 || { tail -30 $R/build.log; exit 1; }
B=build-gpu/tools/flashcl
export FLASHCL_CACHE=0
