#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Peak RSS (at most 16 MB for the schedules view). What keeps it there, each
# checked on its own: libcurl not mapped by commands that do not talk to ClickHouse
# (`--version` stays small), libbpf's reads of the kernel's BTF going through
# src/loader/vmlinux_btf.c (one copy of it, not two), and the whole: the peak of a
# system-wide schedules-view trace, and that of all views (printed, not judged: it grows
# with what runs on the machine).
. "$(dirname "$0")/lib.sh"
require_bpf
command -v readelf >/dev/null || skip_or_fail "needs readelf (binutils)"
[ -x /usr/bin/time ] || skip_or_fail "needs /usr/bin/time (package time)"

# maxrss_kb CMD...: the peak RSS of CMD (KiB). GNU time: a child's peak includes what its
# parent had mapped when it forked, and time itself is 1 MB (python would add 14).
maxrss_kb() {
	/usr/bin/time -f %M -o "$TMP/maxrss" "$@" > /dev/null || return 1
	tail -1 "$TMP/maxrss"
}

readelf --dyn-syms -W "$SCHEDPROF" | awk '$5 == "GLOBAL" && $7 != "UND" {print $8}' |
	grep -qx 'btf__load_vmlinux_btf' ||
	fail "schedprof does not export btf__load_vmlinux_btf: libbpf reads the BTF with two copies"
pass "btf__load_vmlinux_btf is schedprof's (libbpf calls it through its PLT)"

v=$(maxrss_kb "$SCHEDPROF" --version) || fail "schedprof --version failed"
assert_between "schedprof --version peak RSS (KiB)" "$v" 1 4096

# the smallest of three: what another process does to the machine only adds
best=
for _ in 1 2 3; do
	k=$(maxrss_kb "$SCHEDPROF" trace -a --views schedules -f json -o "$TMP/run.json" -- sleep 0.3) ||
		fail "schedprof trace failed"
	[ -z "$best" ] || [ "$k" -lt "$best" ] && best=$k
done
[ "$(jget "$TMP/run.json" 'd["schedules"]["total"] > 0')" = True ] ||
	fail "the trace counted no schedules"
assert_between "schedules view, -a -- sleep 0.3, peak RSS (KiB)" "$best" 1 16384
k=$(maxrss_kb "$SCHEDPROF" trace -a -f json -o "$TMP/all.json" -- sleep 0.3) || fail "schedprof trace failed"
pass "all views, -a -- sleep 0.3: peak RSS $k KiB"
