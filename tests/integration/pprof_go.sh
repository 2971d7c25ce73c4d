#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Loads the profile written by tests/unit/format/pprof_golden.c with the real `go tool pprof` (Debian
# golang-go) and checks totals, the top function, labels and the second sample index. Any
# stderr from pprof (e.g. a "malformed profile" warning) fails the test.
# Usage: pprof_go.sh PPROF_GOLDEN_BINARY
# Exit: 0 ok, 1 failure, 77 skip (no go; under CI=true a missing go is a failure).
set -u

golden=${1:?usage: $0 PPROF_GOLDEN_BINARY}
case $golden in /*) ;; *) golden=$PWD/$golden ;; esac # we cd below

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

if ! command -v go >/dev/null 2>&1; then
	if [ "${CI:-}" = true ]; then
		fail "go not found in PATH (install golang-go)"
	fi
	echo "SKIP: go not found in PATH" >&2
	exit 77
fi

tmp=$(mktemp -d) || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT

# No network, no writes outside $tmp, no go.mod lookups from the caller's directory.
export HOME="$tmp" GOCACHE="$tmp/gocache" GOPATH="$tmp/gopath" PPROF_TMPDIR="$tmp"
export GOPROXY=off GOFLAGS= GOTOOLCHAIN=local GO111MODULE=off PPROF_BINARY_PATH="$tmp/nobin"
cd "$tmp" || fail "cd $tmp"

profile="$tmp/golden.pb.gz"
"$golden" "$profile" || fail "$golden exited with $?"
[ -s "$profile" ] || fail "no profile written"

# pprof ARGS...: runs go tool pprof on the profile; stdout in $out, fails on any stderr output.
pprof() {
	out=$(go tool pprof -symbolize=none "$@" "$profile" 2>"$tmp/stderr") ||
		fail "go tool pprof $* exited with $?: $(cat "$tmp/stderr")"
	if [ -s "$tmp/stderr" ]; then
		fail "go tool pprof $* wrote to stderr: $(cat "$tmp/stderr")"
	fi
	printf '=== go tool pprof -symbolize=none %s\n%s\n' "$*" "$out"
}

# top_row: the first row after the "flat flat% ..." header, as "flat name".
top_row() {
	awk '$1 == "flat" && $2 == "flat%" { hdr = 1; next } hdr { print $1, $NF; exit }' <<<"$out"
}

pprof -top -sample_index=schedules
grep -q '^Type: schedules$' <<<"$out" || fail "sample type schedules not selected"
grep -q 'Showing nodes accounting for 1000, 100% of 1000 total' <<<"$out" ||
	fail "schedules total is not 1000"
[ "$(top_row)" = "700 anon_pipe_read" ] ||
	fail "top flat row is '$(top_row)', not 700 anon_pipe_read"
grep -Eq '^ +100 +10\.00% +100% +800 +80\.00% +foo$' <<<"$out" || fail "foo is not flat 100 cum 800"
grep -Eq '^ +0 +0% +100% +1000 +100% +main$' <<<"$out" || fail "main is not cum 1000"

pprof -top -sample_index=offcpu
grep -q '^Type: offcpu$' <<<"$out" || fail "sample type offcpu not selected"
grep -q 'Showing nodes accounting for 13ms, 100% of 13ms total' <<<"$out" ||
	fail "offcpu total is not 13ms"
[ "$(top_row)" = "7ms anon_pipe_read" ] ||
	fail "top offcpu row is '$(top_row)', not 7ms anon_pipe_read"

# the default sample type is the last one (offcpu), as the spec says
pprof -top
grep -q '^Type: offcpu$' <<<"$out" || fail "default sample type is not offcpu"

pprof -raw
grep -q '^PeriodType: schedules count$' <<<"$out" || fail "period type missing"
grep -q '^Duration: 2s$' <<<"$out" || fail "duration missing"
grep -q '^Comment: schedprof pprof golden profile$' <<<"$out" || fail "comment missing"
grep -q '^schedules/count offcpu/nanoseconds$' <<<"$out" || fail "sample types missing"
[ "$(grep -c 'comm:\[cat\]' <<<"$out")" = 3 ] || fail "comm:[cat] is not on 3 samples"
[ "$(grep -c 'comm:\[bash\]' <<<"$out")" = 1 ] || fail "comm:[bash] is not on 1 sample"
grep -q 'pid:\[101\]' <<<"$out" || fail "numeric label pid missing"
grep -Eq '^ +400 +4000000: 1 2 3 $' <<<"$out" || fail "first sample is not 400/4000000 at 1 2 3"
grep -Eq 'M=1 anon_pipe_read ' <<<"$out" || fail "anon_pipe_read not in mapping 1"
grep -Eq '/usr/bin/demo 0123456789abcdef0123456789abcdef01234567 \[FN\]$' <<<"$out" ||
	fail "mapping /usr/bin/demo with build-id and has_functions missing"

pprof -traces -sample_index=schedules
grep -Eq '^ +comm: +bash$' <<<"$out" || fail "-traces has no comm label"
[ "$(grep -cE '^ +[0-9]+ +anon_pipe_read$' <<<"$out")" = 2 ] ||
	fail "-traces does not show anon_pipe_read as the leaf of two traces"

# label filtering works on our labels: only the "bash" sample is left
pprof -top -sample_index=schedules -tagfocus=comm=bash
grep -q 'Showing nodes accounting for 200, 20.00% of 1000 total' <<<"$out" ||
	fail "-tagfocus=comm=bash does not keep exactly 200"

echo "PASS: go tool pprof reads the profile"
