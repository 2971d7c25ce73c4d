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
# frames with their identity (run_user.json): real addresses in mappings with
# build-ids, the kernel's mapping, demangled names with their mangled system_name, file:line,
# an inlined frame as a second Line of one Location, and the unresolved cc1+0x1a2b3c keeping its
# placeholder name in cc1's mapping with [FN]: cc1 has named frames, and a mapping without [FN]
# is symbolized again whole by pprof, replacing them (a stripped object's frames have no Line
# and its mapping no [FN]: unit-pprof)
cc1=/usr/lib/gcc/x86_64-linux-gnu/12/cc1
"$SCHEDPROF" report -f pprof -o u.pb.gz "$FIXTURES/run_user.json" || fail "user run pprof"
pprof u.pb.gz -raw
grep -Eq "^[0-9]+: 0x0/0xffffffffffffffff/0x0 $cc1 c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00 \[FN\]\$" \
	<<<"$out" || fail "cc1's mapping (0, all, offset 0, build-id, [FN]) missing: $out"
grep -Eq '^[0-9]+: 0x0/0xffffffffffffffff/0x0 /usr/lib/x86_64-linux-gnu/libc.so.6 1bc0de0{32}a1 \[FN\]$' \
	<<<"$out" || fail "libc's mapping with its build-id missing"
kmap=$(sed -nE 's/^([0-9]+): 0x0\/0xffffffffffffffff\/0x0 \[kernel\.kallsyms\] .*/\1/p' <<<"$out")
[ -n "$kmap" ] || fail "no [kernel.kallsyms] mapping"
grep -Eq "^ +[0-9]+: 0xffffffff8118b1d9 M=$kmap futex_wait :0 s=0\$" <<<"$out" ||
	fail "kernel frame futex_wait not at its address in the kernel mapping"
cmap=$(sed -nE "s|^([0-9]+): 0x0/0xffffffffffffffff/0x0 $cc1 .*|\\1|p" <<<"$out")
grep -Eq "^ +[0-9]+: 0x1a2b3c M=$cmap cc1\+0x1a2b3c :0 s=0\$" <<<"$out" ||
	fail "cc1+0x1a2b3c is not at 0x1a2b3c, named so, in cc1's mapping"
grep -Eq "^ +[0-9]+: 0x4a1f20 M=$cmap WorkQueue::wait_locked\(\) workqueue.cc:88 s=0\(_ZN9WorkQueue11wait_lockedEv\)\$" \
	<<<"$out" || fail "inlined frame: not the first Line of 0x4a1f20 with its system_name"
grep -Eq '^ +WorkQueue::pop\(\) workqueue.cc:120 s=0\(_ZN9WorkQueue3popEv\)$' <<<"$out" ||
	fail "WorkQueue::pop() is not the second Line of the inlined Location"
grep -Eq "^ +[0-9]+: 0x10b0a0 M=$cmap main main.cc:39 s=0\$" <<<"$out" || fail "main at 0x10b0a0"
pprof u.pb.gz -traces
grep -Eq '^ +WorkQueue::wait_locked\(\) \(inline\)$' <<<"$out" || fail "-traces: no inline frame"
pprof u.pb.gz -top -sample_index=schedules
grep -q 'Showing nodes accounting for 40, 100% of 40 total' <<<"$out" || fail "user run total: $out"
[ "$(top_row)" = "20 futex_wait" ] || fail "top row of the user run is '$(top_row)'"
"$SCHEDPROF" report -f pprof --views profile -o up.pb.gz "$FIXTURES/run_user.json" ||
	fail "user run profile pprof"
pprof up.pb.gz -raw
grep -Eq "^ +[0-9]+: 0x6d1e2f M=[0-9]+ make_node\(tree_code\) tree.cc:1201 s=0\(_Z9make_node9tree_code\)\$" \
	<<<"$out" || fail "profile: make_node(tree_code) inlined at 0x6d1e2f"
grep -Eq '^ +c_parser_declaration_or_fndef c-parser.cc:2410 s=0$' <<<"$out" ||
	fail "profile: the caller it was inlined into"
grep -Eq '^ +[0-9]+: 0x1f00a8 M=[0-9]+ cc1\+0x1f00a8 :0 s=0$' <<<"$out" ||
	fail "profile: cc1+0x1f00a8 (unresolved, in an object with named frames) not kept by name"
# the 10 samples of clear_page_erms without a stack: at the function's own address
grep -Eq '^ +[0-9]+: 0xffffffff81d2c7e0 M=[0-9]+ clear_page_erms :0 s=0$' <<<"$out" ||
	fail "profile: a row's samples without a stack are not at the row's address"
pprof up.pb.gz -traces
# the first mapping is cc1's (the profile's first frame): pprof names it as the binary
grep -q '^Build ID: c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00$' <<<"$out" || fail "-traces: no build-id"
grep -Eq '^ +make_node\(tree_code\) \(inline\)$' <<<"$out" || fail "-traces: no inline frame"
pprof up.pb.gz -top -sample_index=samples
grep -q 'Showing nodes accounting for 400, 100% of 400 total' <<<"$out" || fail "profile total"
echo "ok: frames with their identity: mappings, build-ids, addresses, inline, system_name"
echo "PASS: go tool pprof reads schedprof's pprof output"
