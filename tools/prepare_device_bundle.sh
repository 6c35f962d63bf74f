#!/usr/bin/env bash
# Fills .gpu/ (git-ignored) for tools/device_gpu_check.sh on a GPU machine without network access:
# tileiras, ptxas and libnvvm 13.4.92 (xz tarball, ~57 MiB), the cuda-tile 1.7.0 wheel, and the stripped
# shared library of the crate generated from corpus/ into rust/ (~3 MiB xz), its Python package and compiled
# fast path.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .gpu/whl .gpu/x .gpu/pack/cu13/bin .gpu/pack/cu13/lib
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  --platform manylinux_2_12_x86_64 --platform manylinux2010_x86_64 -d .gpu/whl \
  nvidia-cuda-nvcc==13.4.92 nvidia-nvvm==13.4.92 nvidia-cuda-tileiras==13.4.92 cuda-tile==1.7.0
for w in .gpu/whl/nvidia_*.whl; do python3 -m zipfile -e "$w" .gpu/x/; done
cp .gpu/x/nvidia/cu13/bin/tileiras .gpu/x/nvidia/cu13/bin/ptxas .gpu/pack/cu13/bin/
cp .gpu/x/nvidia/cu13/lib/libnvvm.so.4 .gpu/pack/cu13/lib/
chmod +x .gpu/pack/cu13/bin/*
tar cf - -C .gpu/pack cu13 | xz -9e -T0 > .gpu/tc.tar.xz
mv .gpu/whl/cuda_tile-*.whl .gpu/
rm -rf .gpu/whl .gpu/x .gpu/pack
cutile-transpile corpus/ -o rust/ -q
cutile-transpile build rust/
crate=$(python3 -c 'import json; print(json.load(open("rust/manifest.json"))["crate"])')
lib="${CARGO_TARGET_DIR:-rust/target}/release/lib$crate.so"
strip -o .gpu/lib.so "$lib" && xz -9 -f .gpu/lib.so
# the package's compiled fast path (stable ABI: built here, loaded by the GPU machine's Python 3.12)
cp "$(dirname "$lib")/_fastlaunch.abi3.so" .gpu/_fastlaunch.abi3.so
tar cJf .gpu/rustpy.tar.xz rust/manifest.json rust/python
ls -la .gpu
