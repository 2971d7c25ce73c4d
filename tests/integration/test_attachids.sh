#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The boot's cache of the tp_btf/iter attach targets' IDs (src/loader/attach_ids.c) on the
# running kernel: made when absent, then used -- the load no longer maps or reads the kernel's
# BTF (strace), only a few small preads check the cached records --, its IDs are those the
# whole BTF gives (bpftool btf dump), and each program is attached to its own tracepoint
# (the links' tp_name, from the kernel) with the cache absent, present or damaged; a damaged,
# cut, foreign or open cache is made again, never used.
. "$(dirname "$0")/lib.sh"
require_bpf
command -v strace >/dev/null || skip_or_fail "needs strace"
command -v bpftool >/dev/null || skip_or_fail "needs bpftool"
CACHE=/run/schedprof/attach.cache
KBTF=/sys/kernel/btf/vmlinux
VIEWS=schedules,profile,locks,timeline

# how the attach IDs were had: "cache" or "parsed"
how() {
	"$SCHEDPROF" trace -v --views schedules -a -d 0.01 -o /dev/null 2>"$TMP/how.log" ||
		fail "schedprof exited $?: $(tail -3 "$TMP/how.log")"
	if grep -q "attach IDs from the boot's cache" "$TMP/how.log"; then
		echo cache
	elif grep -q "attach IDs: the kernel's BTF parsed (.*), [0-9]* targets cached" "$TMP/how.log"; then
		echo parsed
	else
		grep "attach IDs" "$TMP/how.log" >&2
		echo other
	fi
}

expect() { # WHAT WANT
	local got
	got=$(how)
	[ "$got" = "$2" ] || fail "$1: attach IDs $got, want $2"
	pass "$1: attach IDs $got"
}

# links PID: "program tracepoint" per raw_tracepoint link of PID (from the kernel's fdinfo)
links() {
	local f n id tp
	for f in /proc/$1/fd/*; do
		readlink "$f" 2>/dev/null | grep -q bpf_link || continue
		n=${f##*/}
		grep -q "^link_type:.raw_tracepoint" "/proc/$1/fdinfo/$n" 2>/dev/null || continue
		id=$(sed -n 's/^prog_id:\t//p' "/proc/$1/fdinfo/$n")
		tp=$(sed -n 's/^tp_name:\t//p' "/proc/$1/fdinfo/$n")
		echo "$(bpftool prog show id "$id" -j | python3 -c 'import json,sys; print(json.load(sys.stdin)["name"])') $tp"
	done | sort
}

# attached OUT: a system-wide trace of all views with -vv; OUT gets each program's
# tracepoint as attached, OUT.want each program's as its section names it (libbpf's log).
# The links are listed once the trace says that all are attached, and before it ends (it
# is stopped then): a busy machine may take longer than any fixed delay to attach them all.
attached() {
	local pid
	"$SCHEDPROF" trace -vv --views $VIEWS -a -d $((60 * SLOW)) -o /dev/null 2>"$1.log" &
	pid=$!
	for _ in $(seq $((400 * SLOW))); do
		grep -q "^schedprof: tracing the whole system: attached in" "$1.log" && break
		kill -0 $pid 2>/dev/null || break
		sleep 0.05
	done
	grep -q "^schedprof: tracing the whole system: attached in" "$1.log" ||
		fail "schedprof did not say it attached within $((20 * SLOW)) s: $(tail -3 "$1.log")"
	links $pid >"$1"
	kill -INT $pid
	wait $pid || fail "schedprof exited $?: $(tail -3 "$1.log")"
	# libbpf: sec 'tp_btf/sched_switch': found program 'sp_switch' at insn offset ...
	# (and raw_tp/NAME: prof_exec, attached by name, no BTF target)
	sed -n "s/^libbpf: sec '\(tp_btf\|raw_tp\)\/\([a-z_0-9]*\)': found program '\([a-z_0-9]*\)'.*/\3 \2/p" \
		"$1.log" | sort -u >"$1.all"
	# the programs loaded: each attached one must be there with its section's tracepoint
	join -j 1 "$1" "$1.all" | awk '$2 != $3 {print}' >"$1.bad"
	[ -s "$1" ] || fail "no raw_tracepoint links seen"
	[ -s "$1.bad" ] && fail "programs attached to another tracepoint: $(cat "$1.bad")"
	[ "$(join -j 1 "$1" "$1.all" | wc -l)" = "$(wc -l <"$1")" ] ||
		fail "links of programs not in libbpf's log: $(cat "$1")"
}

# 1. absent: made
rm -f "$CACHE"
expect "no cache" parsed
[ -f "$CACHE" ] || fail "no $CACHE after the first run"
attached "$TMP/absent"
pass "no cache: $(wc -l <"$TMP/absent") tp_btf programs each on its own tracepoint"

# 2. present: used, and the load reads no more of the kernel's BTF than the checks' preads
expect "second run" cache
# the other boot caches (features, preempt count, CO-RE BTF) may be remade by another build
# sharing /run/schedprof, and those read the BTF: the run that counts is one where all of them
# came from their caches (at most 5 tries; with the attach IDs parsed, every try fails)
for try in 1 2 3 4 5; do
	strace -f -y -e trace=openat,mmap,read,pread64 -o "$TMP/strace" \
		"$SCHEDPROF" trace -v --views $VIEWS -a -d 0.01 -o /dev/null 2>"$TMP/st.log" ||
		fail "schedprof under strace exited $?"
	grep "<$KBTF>" "$TMP/strace" >"$TMP/kbtf" || true
	grep -qE "^[0-9]+ +(mmap|read)\(" "$TMP/kbtf" || break
	[ "$try" = 5 ] && fail "the kernel's BTF was mapped or read in 5 runs: $(grep -E 'CO-RE|attach IDs' "$TMP/st.log")"
done
grep -q "attach IDs from the boot's cache" "$TMP/st.log" || fail "cache not used under strace"
bytes=$(sed -n 's/.*pread64(.*) = \([0-9]*\)$/\1/p' "$TMP/kbtf" | awk '{s += $1} END {print s + 0}')
preads=$(grep -c "pread64(" "$TMP/kbtf")
assert_between "bytes of the kernel's BTF read (all views, cache present)" "$bytes" 24 4096
pass "the kernel's BTF: $preads preads, $bytes bytes, no mmap, no read"
attached "$TMP/present"
diff -u "$TMP/absent" "$TMP/present" || fail "attached differently with the cache present"
grep -q "attach IDs from the boot's cache" "$TMP/present.log" || fail "-vv run did not use the cache"
pass "cache present: the same $(wc -l <"$TMP/present") programs on the same tracepoints"

# 3. the cached IDs are the whole BTF's: bpftool's dump against the file's entries
bpftool btf dump file "$KBTF" >"$TMP/dump" || fail "bpftool btf dump failed"
python3 - "$CACHE" "$TMP/dump" <<'PY' || fail "cached IDs differ from bpftool's"
import re, struct, sys
data = open(sys.argv[1], 'rb').read()
# the cache header (208 bytes, src/loader/cache.c), then hash, BTF header (24), BTF size, count, pad
count, = struct.unpack_from('<I', data, 208 + 8 + 24 + 8)
want = {}
for line in open(sys.argv[2]):
    m = re.match(r"\[(\d+)\] (TYPEDEF|FUNC) '([^']+)'", line)
    if m and (m.group(3).startswith('btf_trace_') or m.group(3).startswith('bpf_iter_')):
        want[(m.group(3), m.group(2))] = int(m.group(1))
kinds = {8: 'TYPEDEF', 12: 'FUNC'}
if count < 5:
    sys.exit(f'only {count} entries')
for i in range(count):
    off = 208 + 48 + i * 128
    name = data[off:off + 116].split(b'\0')[0].decode()
    kind, tid, _ = struct.unpack_from('<III', data, off + 116)
    if want.get((name, kinds.get(kind))) != tid:
        sys.exit(f'{name}: cached {tid}, bpftool {want.get((name, kinds.get(kind)))}')
print(f'ok: {count} cached IDs equal bpftool btf dump')
PY

# 4. damaged, cut short, another boot's, open to others: made again, then used.
# damaged WHAT COMMAND...: COMMAND spoils the cache, and the next run must parse the BTF.
# The cache is the machine's: a schedprof started elsewhere in between (another build's
# tests) remakes it, and the run finds it whole. Three tries: a cache wrongly used is
# used every time.
damaged() {
	local what=$1 got
	shift
	for _ in 1 2 3; do
		"$@"
		got=$(how)
		[ "$got" = parsed ] && break
	done
	[ "$got" = parsed ] || fail "$what: attach IDs $got, want parsed (3 tries)"
	pass "$what: attach IDs $got"
}
size=$(stat -c %s "$CACHE")
flip() { printf '\x01' | dd of="$CACHE" bs=1 seek=$((size - 100)) conv=notrunc status=none; }
damaged "damaged" flip
expect "after remaking" cache
damaged "cut short" truncate -s $((size - 1)) "$CACHE"
foreign() { printf 'XXXXXXXX' | dd of="$CACHE" bs=1 seek=$((16 + 4 + 4 + 16)) conv=notrunc status=none; }
damaged "another boot's" foreign
damaged "writable by others" chmod 0666 "$CACHE"
expect "after remaking" cache
flip
attached "$TMP/damaged"
grep -q "attach IDs: the kernel's BTF parsed" "$TMP/damaged.log" || fail "damaged cache used"
diff -u "$TMP/absent" "$TMP/damaged" || fail "attached differently after a damaged cache"
pass "damaged cache: remade, the same programs on the same tracepoints"

# 5. without the CO-RE BTF, libbpf needs the whole BTF: nothing stands in for it
SCHEDPROF_CORE_BTF=0 "$SCHEDPROF" trace -v --views schedules -a -d 0.01 -o /dev/null \
	2>"$TMP/nocore.log" || fail "SCHEDPROF_CORE_BTF=0 run failed"
grep -q "attach IDs: libbpf reads the kernel's BTF (CO-RE relocates" "$TMP/nocore.log" ||
	fail "SCHEDPROF_CORE_BTF=0: $(grep 'attach IDs' "$TMP/nocore.log")"
pass "SCHEDPROF_CORE_BTF=0: libbpf reads the whole BTF itself"

# 6. the kill switch of the interposition (src/loader/btf_interpose.c): libbpf's own BTF
# functions, no self-check, no warning, each program on its own tracepoint (attached checks)
export SCHEDPROF_BTF_INTERPOSE=0
attached "$TMP/killed"
unset SCHEDPROF_BTF_INTERPOSE
grep -q "attach IDs: SCHEDPROF_BTF_INTERPOSE=0, libbpf's own BTF functions" "$TMP/killed.log" ||
	fail "SCHEDPROF_BTF_INTERPOSE=0: $(grep 'attach IDs' "$TMP/killed.log")"
grep -q "replacements of its BTF functions" "$TMP/killed.log" && fail "kill switch warned"
pass "SCHEDPROF_BTF_INTERPOSE=0: libbpf's own, $(wc -l <"$TMP/killed") programs on their tracepoints"
# and by default the self-check passed (this libbpf calls the replacements)
grep -q "the check's lookup gave .* (load 1, lookup 1, free 1)" "$TMP/present.log" ||
	fail "the self-check did not pass: $(grep 'attach IDs' "$TMP/present.log")"
pass "the self-check passed with this libbpf"
