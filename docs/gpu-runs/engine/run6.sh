#!/bin/bash
# Issue 19 on the H200: the Python binding's tests on NVIDIA's driver, the transformers example where
# torch and transformers are installed, and standard attention with CLBlast now loaded at run time.
source .gpu/gpu-env.sh >/dev/null
R=/tmp/r; mkdir -p $R
[ -d build-gpu ] || meson setup build-gpu -Dbuildtype=release >/dev/null
ninja -C build-gpu > $R/build.log 2>&1 || { tail -30 $R/build.log; exit 1; }
build-gpu/tools/flashcl run --device NVIDIA -n 512 -d 64 --dtype f16 --iters 3 --algo standard 2>&1 | tail -3
for py in /usr/bin/python3 /opt/torch/.venv/bin/python; do
  echo "== $py: $($py -c 'import numpy, sys; print(sys.version.split()[0], numpy.__version__)' 2>&1 | tail -1)"
  for m in pyopencl pytest torch transformers; do echo "   $m: $($py -c "import $m; print($m.__version__ if hasattr($m, '__version__') else 'yes')" 2>&1 | tail -1)"; done
done
export FLASHCL_LIBRARY=$PWD/build-gpu/libflashcl.so PYOPENCL_CTX=NVIDIA
for py in /usr/bin/python3 /opt/torch/.venv/bin/python; do
  if $py -c 'import numpy, pytest' 2>/dev/null; then
    (cd python && timeout 200 $py -m pytest -q -rs tests 2>&1 | tail -5)
  fi
  if $py -c 'import torch, transformers' 2>/dev/null; then
    PYTHONPATH=python timeout 200 $py python/examples/transformers_llama.py 2>&1 | tail -5
  fi
done
