#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# `schedprof report -f pprof` on the fixture runs, read by the real `go tool pprof` (Debian
# golang-go): the totals and the top function equal the table's, for the schedules, profile and
# locks views; sample types, comm and pid labels, and the mapping with its build-id. Any stderr
# from pprof fails the test. Needs SCHEDPROF and FIXTURES.
# Exit: 0 ok, 1 failure, 77 skip (no go; under CI=true a missing go is a failure).
set -u
SCHEDPROF=${SCHEDPROF:?SCHEDPROF must name the built binary}
FIXTURES=${FIXTURES:?FIXTURES must name tests/fixtures}
case $SCHEDPROF in /*) ;; *) SCHEDPROF=$PWD/$SCHEDPROF ;; esac # we cd below

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

if ! command -v go >/dev/null 2>&1; then
	[ "${CI:-}" = true ] && fail "go not found in PATH (install golang-go)"
	echo "SKIP: go not found in PATH" >&2
	exit 77
fi
tmp=$(mktemp -d) || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT
# No network, no writes outside $tmp, no go.mod lookups from the caller's directory.
export HOME="$tmp" GOCACHE="$tmp/gocache" GOPATH="$tmp/gopath" PPROF_TMPDIR="$tmp"
export GOPROXY=off GOFLAGS= GOTOOLCHAIN=local GO111MODULE=off PPROF_BINARY_PATH="$tmp/nobin"
cd "$tmp" || fail "cd $tmp"

# pprof PROFILE ARGS...: stdout in $out; fails on an error or any stderr output
pprof() {
	local profile=$1
	shift
	out=$(go tool pprof -symbolize=none "$@" "$profile" 2>"$tmp/stderr") ||
		fail "go tool pprof $* exited with $?: $(cat "$tmp/stderr")"
	[ ! -s "$tmp/stderr" ] || fail "go tool pprof $* wrote to stderr: $(cat "$tmp/stderr")"
}

# the first row after the "flat flat% ..." header, as "flat name"
top_row() {
	awk '$1 == "flat" && $2 == "flat%" { hdr = 1; next } hdr { print $1, $NF; exit }' <<<"$out"
}

"$SCHEDPROF" report -f pprof -o a.pb.gz "$FIXTURES/run_a.json" || fail "report -f pprof"
pprof a.pb.gz -top -nodefraction=0 -sample_index=schedules
grep -q 'Showing nodes accounting for 40000, 100% of 40000 total' <<<"$out" ||
	fail "schedules total is not 40000: $out"
[ "$(top_row)" = "36099 anon_pipe_read" ] || fail "top row is '$(top_row)', not 36099 anon_pipe_read"
grep -Eq '^ +2000 +5\.00% .* \[preempted\]$' <<<"$out" || fail "[preempted] is not flat 2000"
pprof a.pb.gz -top -nodefraction=0 -sample_index=offcpu
grep -q 'Showing nodes accounting for 9202ms, 100% of 9202ms total' <<<"$out" ||
	fail "off-CPU total is not 9202ms: $out"
[ "$(top_row)" = "7900ms anon_pipe_read" ] || fail "top off-CPU row is '$(top_row)'"
pprof a.pb.gz -raw
grep -q '^schedules/count offcpu/nanoseconds$' <<<"$out" || fail "sample types: $out"
grep -q '^PeriodType: schedules count$' <<<"$out" || fail "period type"
grep -q '^Duration: 9.1s$' <<<"$out" || fail "duration"
grep -q '^Comment: command: make -s -j2 CFLAGS=-O2$' <<<"$out" || fail "command comment"
grep -Eq '^ +19990 3990000000: ' <<<"$out" || fail "first sample is not 19990/3990000000"
[ "$(grep -c 'comm:\[cc1\]' <<<"$out")" = 3 ] || fail "comm:[cc1] is not on 3 samples"
# the stacks' pids are numeric labels; the rows without stacks have none (pid unknown)
grep -Eq '^ +pid:\[4101\]$' <<<"$out" || fail "no pid:[4101] label (the as stack)"
[ "$(grep -Ec '^ +pid:\[[0-9]+\]$' <<<"$out")" = 4 ] || fail "pid labels are not on the 4 stacks"
grep -Eq 'M=2 ext4_buffered_write_iter ' <<<"$out" || fail "module frame not in its own mapping"
grep -Eq '^2: 0x[0-9a-f/x]+ \[ext4\] ' <<<"$out" || fail "mapping [ext4] missing"
pprof a.pb.gz -top -sample_index=schedules -tagfocus=comm=make
grep -q 'Showing nodes accounting for 1500, 3.75% of 40000 total' <<<"$out" || fail "-tagfocus=comm=make"
echo "ok: schedules view: totals, top function, sample types, labels"

"$SCHEDPROF" report -f pprof --views profile -o p.pb.gz "$FIXTURES/run_full.json" || fail "profile pprof"
pprof p.pb.gz -top -sample_index=samples
grep -q 'Showing nodes accounting for 850, 100% of 850 total' <<<"$out" || fail "profile total: $out"
[ "$(top_row)" = "600 main_loop" ] || fail "top profile row is '$(top_row)'"
pprof p.pb.gz -raw
grep -q '^samples/count cpu/nanoseconds$' <<<"$out" || fail "profile sample types"
grep -q '^PeriodType: cpu nanoseconds$' <<<"$out" || fail "profile period type"
grep -q '^Period: 10101010$' <<<"$out" || fail "profile period (1e9/99)"
grep -Eq '/usr/bin/demo 0123456789abcdef0123456789abcdef01234567 \[FN\]$' <<<"$out" ||
	fail "mapping /usr/bin/demo without its build-id"
echo "ok: profile view: totals, top function, period, build-id"

"$SCHEDPROF" report -f pprof --views locks -o l.pb.gz "$FIXTURES/run_full.json" || fail "locks pprof"
pprof l.pb.gz -top -sample_index=contentions
grep -q 'Showing nodes accounting for 30, 100% of 30 total' <<<"$out" || fail "locks total: $out"
[ "$(top_row)" = "30 pipe_read" ] || fail "top locks row is '$(top_row)'"
pprof l.pb.gz -raw
grep -q '^contentions/count delay/nanoseconds$' <<<"$out" || fail "locks sample types"
echo "ok: locks view"
echo "PASS: go tool pprof reads schedprof's pprof output"
