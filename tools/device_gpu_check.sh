#!/usr/bin/env bash
# Runs tools/gpu_check.py on a GPU machine that has no network (the lent H200): everything it needs
# beyond the machine's image comes in .gpu/, made by tools/prepare_device_bundle.sh:
#   .gpu/tc.tar.xz          cu13/bin/{tileiras,ptxas} and cu13/lib/libnvvm.so.4 (13.4.92 wheels)
#   .gpu/cuda_tile-*.whl    cuTile Python
#   .gpu/lib.so.xz          the stripped shared library of the generated crate `rust/`
#   .gpu/rustpy.tar.xz      its manifest and Python package (rust/manifest.json, rust/python)
#   .gpu/_fastlaunch.abi3.so  the package's compiled fast path (optional)
# With GPU_BUNDLE=NAME, the crate that tools/bundle_crate.sh added as .gpu/NAME.* is used instead of the corpus'.
# Usage: tools/device_gpu_check.sh RESULTS [gpu_check.py options]
#        tools/device_gpu_check.sh --script FILE.py   (runs another script in the same environment)
set -euo pipefail
mkdir -p /tmp/tc /tmp/site
[ -x /tmp/tc/cu13/bin/tileiras ] || tar xJf .gpu/tc.tar.xz -C /tmp/tc
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .gpu/cuda_tile-*.whl
export PYTHONPATH=/tmp/site
unset CUDA_HOME  # the image's CUDA 13.0 ptxas is too old for tileiras 13.4
export PATH=/tmp/tc/cu13/bin:$PATH
export LD_LIBRARY_PATH=/tmp/tc/cu13/lib:${LD_LIBRARY_PATH:-}
export CUTILE_TILEIRAS_PATH=/tmp/tc/cu13/bin/tileiras
pre=.gpu/${GPU_BUNDLE:+$GPU_BUNDLE.}
xz -dc "${pre}lib.so.xz" > "/tmp/${GPU_BUNDLE:-ports}.lib.so"
# the generated package that goes with the library (rust/ is not in the repository): the bundle's, always
[ ! -f "${pre}rustpy.tar.xz" ] || tar xJf "${pre}rustpy.tar.xz"
export CUTILE_RS_LIB=/tmp/${GPU_BUNDLE:-ports}.lib.so
unset CUTILE_RS_FASTLAUNCH
if [ -f "${pre}_fastlaunch.abi3.so" ]; then  # the package's compiled fast path, when the bundle has it
  cp "${pre}_fastlaunch.abi3.so" "/tmp/${GPU_BUNDLE:-ports}._fastlaunch.abi3.so"
  export CUTILE_RS_FASTLAUNCH=/tmp/${GPU_BUNDLE:-ports}._fastlaunch.abi3.so
fi
export PYTHONUNBUFFERED=1
if [ "${1:-}" = "--script" ]; then shift; exec python3 "$@"; fi
results=$1; shift
exec python3 tools/gpu_check.py --crate "${GPU_BUNDLE:-rust}" --results "$results" "$@"
