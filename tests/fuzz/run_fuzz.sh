#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Runs a libFuzzer binary for FUZZ_SECONDS (default 30) on a scratch copy of its seed
# corpus, so the source tree is never modified. Fails if libFuzzer reports a crash,
# leak, timeout or sanitizer error (any non-zero exit) or leaves a crash artifact.
# Usage: run_fuzz.sh FUZZER CORPUS_DIR
set -u

fuzzer=${1:?usage: run_fuzz.sh FUZZER CORPUS_DIR}
corpus=${2:?usage: run_fuzz.sh FUZZER CORPUS_DIR}
seconds=${FUZZ_SECONDS:-30}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fuzz.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir "$tmp/corpus" "$tmp/artifacts" || exit 1
cp "$corpus"/* "$tmp/corpus/" || exit 1

# libFuzzer's own per-input timeout catches hangs; meson's timeout is the outer bound.
"$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
	-artifact_prefix="$tmp/artifacts/" "$tmp/corpus"
rc=$?

if [ -n "$(ls -A "$tmp/artifacts")" ]; then
	# keep the failing inputs next to the fuzzer binary, the scratch dir is removed on exit
	keep=$(dirname "$fuzzer")/fuzz-artifacts
	mkdir -p "$keep" && cp "$tmp/artifacts"/* "$keep/"
	for a in "$tmp/artifacts"/*; do
		echo "fuzz: failing input $keep/$(basename "$a"):"
		od -c "$a" | head -n 40
	done
	[ "$rc" -ne 0 ] || rc=1
fi
if [ "$rc" -ne 0 ]; then
	echo "fuzz: $fuzzer failed with exit status $rc" >&2
	exit 1
fi
echo "fuzz: no failures in ${seconds}s"
exit 0
