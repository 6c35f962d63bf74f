#!/usr/bin/env bash
# Adds one more generated crate to the GPU bundle (.gpu/, made by tools/prepare_device_bundle.sh), beside the
# corpus crate: transpiles the sources into OUT, builds it, and writes .gpu/NAME.lib.so.xz (the stripped library),
# .gpu/NAME.rustpy.tar.xz (OUT/manifest.json and OUT/python) and .gpu/NAME._fastlaunch.abi3.so.
# On the GPU machine, tools/device_gpu_check.sh uses them when GPU_BUNDLE=NAME is set.
# Usage: tools/bundle_crate.sh OUT NAME SRC...   e.g. tools/bundle_crate.sh ux ux tests/fixtures/triton_unseen
set -euo pipefail
out=$1 name=$2; shift 2  # then the sources
cd "$(dirname "$0")/.."
cutile-transpile "$@" -o "$out" -q --no-compile-check || [ -f "$out/manifest.json" ]  # refusals are reported, not fatal
cutile-transpile build "$out"
crate=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["crate"])' "$out/manifest.json")
lib="$out/target/release/lib$crate.so"
[ -f "$lib" ] || lib="${CARGO_TARGET_DIR:?}/release/lib$crate.so"
strip -o ".gpu/$name.lib.so" "$lib" && xz -9 -f ".gpu/$name.lib.so"
cp "$(dirname "$lib")/_fastlaunch.abi3.so" ".gpu/$name._fastlaunch.abi3.so"
tar cJf ".gpu/$name.rustpy.tar.xz" "$out/manifest.json" "$out/python"
ls -la ".gpu/$name".*
