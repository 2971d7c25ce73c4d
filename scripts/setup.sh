#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Installs what schedprof needs from Debian (only what is missing) and builds it in ./build.
# usage: sudo scripts/setup.sh [--tests] [--bench] [--kernels]
#   --tests adds what the test suite uses; --bench what bench/*.sh run and compare against;
#   --kernels what the kernel matrix (tests/kernels/matrix.sh) builds and boots its guests with
set -euo pipefail
cd "$(dirname "$0")/.."
tests=false bench=false kernels=false
for a in "$@"; do
	case $a in
	--tests) tests=true ;;
	--bench) bench=true ;;
	--kernels) kernels=true ;;
	*) echo "usage: $0 [--tests] [--bench] [--kernels]" >&2; exit 2 ;;
	esac
done

# install PKG...: the ones not installed yet
updated=false
install() {
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			missing+=("$p")
	done
	[ ${#missing[@]} -gt 0 ] || return 0
	echo "setup: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	$updated || apt-get update -qq
	updated=true
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

install build-essential clang llvm bpftool libbpf-dev libelf-dev libdw-dev zlib1g-dev meson \
	ninja-build pkg-config make python3 libcurl4-openssl-dev libiberty-dev libdebuginfod-dev
if $tests; then
	# libFuzzer's runtime comes with the clang release installed: libclang-rt-N-dev
	clang_major=$(clang -dumpversion | cut -d. -f1)
	install check golang-go "libclang-rt-$clang_major-dev" linux-perf libbpf-tools util-linux libcap2-bin \
		chromium fonts-dejavu-core tmux libc6-dbg
	# tests/integration/test_rss.sh: peak RSS by /usr/bin/time
	install time
	# tests/integration/test_attachids.sh: what the load reads of the kernel's BTF
	install strace
	# the agent's ClickHouse tests start their own servers (tests/integration/clickhouse_lib.sh)
	install clickhouse-server clickhouse-client curl
	# speedscope reads -f trace-event in tests/integration/speedscope_chromium.sh: from npm,
	# into the cache directory that test looks in
	command -v npm >/dev/null || install nodejs npm
	ss_dir=${SPEEDSCOPE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/schedprof/speedscope}
	if [ ! -f "$ss_dir/node_modules/speedscope/dist/release/index.html" ]; then
		echo "setup: installing speedscope into $ss_dir"
		mkdir -p "$ss_dir"
		npm install --prefix "$ss_dir" --no-audit --no-fund --loglevel=error speedscope@1.25.0 \
			>/dev/null || echo "setup: npm could not install speedscope (its test tries again)"
	fi
fi
if $bench; then
	# bench/compare.sh: perf, offcputime (libbpf-tools), bpftrace, jq, /usr/bin/time (time)
	install linux-perf libbpf-tools bpftrace jq time util-linux
fi
if $kernels; then
	# tests/kernels/image.sh: debootstrap, mkfs.ext4 -d; matrix.sh: qemu-system-x86_64
	install qemu-system-x86 debootstrap e2fsprogs
fi
# the test suite (and its fuzz targets): required with --tests, left out of a new build without
features=disabled
$tests && features=enabled
if [ ! -f build/build.ninja ]; then
	meson setup build -Dtests=$features -Dfuzz=$features >/dev/null
elif $tests; then
	meson configure build -Dtests=enabled -Dfuzz=enabled >/dev/null
fi
ninja -C build >/dev/null
echo "setup: built $(pwd)/build/src/schedprof"
