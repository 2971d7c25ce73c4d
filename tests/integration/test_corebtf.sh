#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The per-boot CO-RE BTF (src/loader/corebtf.c) on the running kernel: every CO-RE relocation
# of every program loaded (all views; -a and a command, which loads the fork/exit/exec hooks)
# comes out the same as against the kernel's whole BTF; the cache is made once per boot, read
# back after, and made again -- never used -- when it is damaged, stale, foreign or not ours.
. "$(dirname "$0")/lib.sh"
require_bpf
CACHE=/run/schedprof/core.cache
VIEWS=schedules,profile,locks,timeline

# libbpf's CO-RE log lines, type IDs masked (the kernel's differ from the small BTF's): the
# local type and access of each relocation, its candidates' specs, and the patched insns
relocs() { # OUT ARGS...
	local out=$1
	shift
	"$SCHEDPROF" trace -vv "$@" >"$out.log" 2>&1 || fail "schedprof $* exited $?"
	grep -E "^libbpf: (prog '[^']*': relo #|CO-RE relocating)" "$out.log" |
		sed -E 's/\[[0-9]+\]/[id]/g; s/ in \[[a-z0-9_]+\]//' >"$out" || true
}

# says how the CO-RE BTF was had: "made and cached" or "from the boot's cache"
how() {
	"$SCHEDPROF" trace -v --views schedules -a -d 0.01 -o /dev/null 2>&1 |
		sed -n 's/.*CO-RE BTF \(made and cached\|from the boot.s cache\) in.*/\1/p'
}

expect() { # WHAT WANT
	local got
	got=$(how)
	[ "$got" = "$2" ] || fail "$1: CO-RE BTF '$got', want '$2'"
}

rm -f "$CACHE"
expect "no cache" "made and cached"
[ -f "$CACHE" ] || fail "no $CACHE after the first run"
expect "second run" "from the boot's cache"

for mode in "-a -d 0.2" "-- sleep 0.2"; do
	# shellcheck disable=SC2086
	relocs "$TMP/full" --views $VIEWS -o /dev/null $mode
	# shellcheck disable=SC2086
	SCHEDPROF_CORE_BTF=0 relocs "$TMP/whole" --views $VIEWS -o /dev/null $mode
	grep -q "from the boot's cache" "$TMP/full.log" || fail "$mode: the cache was not used"
	grep -q "CO-RE BTF" "$TMP/whole.log" && fail "$mode: SCHEDPROF_CORE_BTF=0 used it"
	n=$(grep -c "patched insn" "$TMP/full")
	[ "$n" -ge 100 ] || fail "$mode: only $n patched instructions in the log"
	diff -u "$TMP/whole" "$TMP/full" >"$TMP/diff" ||
		fail "$mode: relocations differ from the whole BTF's: $(head -20 "$TMP/diff")"
	pass "$mode: $(wc -l <"$TMP/full") relocation log lines ($n patched insns) identical"
	[ "$mode" = "-a -d 0.2" ] && cp "$TMP/full" "$TMP/all"
done

size=$(stat -c %s "$CACHE")
# a damaged BTF (one byte of its strings), a short file, another build's, another kernel's
printf '\x01' | dd of="$CACHE" bs=1 seek=$((size - 2)) conv=notrunc status=none
expect "damaged" "made and cached"
truncate -s $((size - 1)) "$CACHE"
expect "cut short" "made and cached"
printf 'XXXXXXXX' | dd of="$CACHE" bs=1 seek=208 conv=notrunc status=none
expect "another object's" "made and cached"
printf '0.0.1-x\0' | dd of="$CACHE" bs=1 seek=$((16 + 4 + 4 + 16 + 40)) conv=notrunc status=none
expect "another kernel's" "made and cached"
chmod 0666 "$CACHE"
expect "writable by others" "made and cached"
expect "after remaking" "from the boot's cache"
# and what it was remade into still relocates the same
relocs "$TMP/again" --views $VIEWS -o /dev/null -a -d 0.2
diff -u "$TMP/all" "$TMP/again" >"$TMP/diff" ||
	fail "the remade cache relocates differently: $(head -20 "$TMP/diff")"
pass "damaged, short, stale, foreign and open caches remade, never used"
