#!/usr/bin/env bash
# Prepare, here, what the GPU machine lacks (it reaches no registry): the Python 3.12 wheels of
# benchmarks/gpu_wheels.txt, downloaded into .whl/, then unpacked into one site folder and
# packed as .whl/site.tar.xz, which benchmarks/one_gpu_machine.sh unpacks there. One archive,
# not the wheels: Ray's wheel alone is 79 MB, over the 64 MiB a call may carry; unpacked and
# without Ray's Java jars (33 MB, unused) it packs to ~40 MB with xz. Carry it with
# `carry: [".whl/site.tar.xz"]`. Takes a few minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .whl
platforms=()
for n in 39 35 34 31 28 27 24 17; do platforms+=(--platform "manylinux_2_${n}_x86_64"); done
grep -v '^#' benchmarks/gpu_wheels.txt | while read -r requirement; do
    [ -n "$requirement" ] || continue
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
        --implementation cp "${platforms[@]}" --platform manylinux2014_x86_64 \
        --platform manylinux1_x86_64 --platform any -d .whl "$requirement" 2> /dev/null
done
site=$(mktemp -d)
for wheel in .whl/*.whl; do unzip -q -o "$wheel" -d "$site"; done
rm -rf "$site/ray/jars"
find "$site" -name __pycache__ -type d -prune -exec rm -rf {} +
tar -cf - -C "$site" . | xz -6 -T2 > .whl/site.tar.xz
rm -rf "$site"
ls -la .whl/site.tar.xz
