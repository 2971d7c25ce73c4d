#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Installs what schedprof needs from Debian (only what is missing) and builds it in ./build.
# usage: sudo scripts/setup.sh [--tests]   (--tests adds what the test suite uses)
set -euo pipefail
cd "$(dirname "$0")/.."
pkgs=(build-essential clang llvm bpftool libbpf-dev libelf-dev libdw-dev zlib1g-dev meson
      ninja-build pkg-config make python3)
if [ "${1:-}" = --tests ]; then
	pkgs+=(check golang-go libclang-rt-14-dev linux-perf libbpf-tools util-linux chromium
		fonts-dejavu-core)
fi
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "setup: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [ ! -f build/build.ninja ]; then
	meson setup build -Dtests=$([ "${1:-}" = --tests ] && echo true || echo false) >/dev/null
elif [ "${1:-}" = --tests ]; then
	meson configure build -Dtests=true >/dev/null
fi
ninja -C build >/dev/null
echo "setup: built $(pwd)/build/src/schedprof"
