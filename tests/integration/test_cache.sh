#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The per-boot caches (src/loader/cache.c) on the running kernel: `cache show` and `cache
# clear`, `trace --no-cache` reading and writing nothing, and a run's results not depending
# on the cache: a run without CAP_SYSLOG (root with it dropped, and nobody with CAP_BPF and
# CAP_PERFMON only) gives the same warnings and the same kind of callers with root's caches
# present as with --no-cache.
# It runs in a mount namespace of its own with an empty /run/schedprof, so that it neither
# clears the machine's caches nor sees another schedprof's writes while it runs.
if [ -z "${SP_CACHE_NS:-}" ] && command -v unshare >/dev/null && [ "$(id -u)" = 0 ]; then
	mkdir -p /run/schedprof
	SP_CACHE_NS=1 exec unshare -m --propagation private bash -c \
		'mount -t tmpfs -o mode=0755 schedprof-test /run/schedprof && exec bash "$0" "$@"' \
		"$0" "$@"
fi
. "$(dirname "$0")/lib.sh"
require_bpf
command -v capsh >/dev/null || skip_or_fail "needs capsh (libcap2-bin)"
command -v setcap >/dev/null || skip_or_fail "needs setcap (libcap2-bin)"
command -v runuser >/dev/null || skip_or_fail "needs runuser (util-linux)"
DIR=/run/schedprof
chmod 755 "$TMP"

caches() { ls "$DIR" 2>/dev/null | grep -c '\.cache$' || true; }

# 1. clear, then a run makes every kind, and show says each is used
"$SCHEDPROF" cache clear >"$TMP/clear" || fail "cache clear exited $?"
[ "$(caches)" = 0 ] || fail "cache clear left: $(ls "$DIR")"
# -g on a process that runs long enough to be sampled: its objects' unwind tables, a file each
"$SCHEDPROF" trace -g -o /dev/null -- bash -c 'SECONDS=0; while [ $SECONDS -lt 1 ]; do :; done' \
	2>"$TMP/err" || fail "trace: $(cat "$TMP/err")"
"$SCHEDPROF" cache show >"$TMP/show" || fail "cache show exited $?"
for f in fold kfeatures preempt attach core; do
	grep -q "^$f.cache  *[0-9][0-9]*  yes " "$TMP/show" || fail "after a run, $f: $(cat "$TMP/show")"
done
ncfi=$(ls "$DIR" | grep -c '^cfi-[0-9a-f]*-[0-9a-f]*\.cache$' || true)
[ "$ncfi" -ge 2 ] || fail "after a -g run, $ncfi unwind tables (bash and libc at least): $(ls "$DIR")"
grep -q "^cfi-\*\.cache  *[0-9][0-9]*  $ncfi/$ncfi " "$TMP/show" || fail "after a run, cfi: $(cat "$TMP/show")"
pass "a run made the five caches and $ncfi unwind tables, and show says each is used"
# the scheduler's text (kernel addresses) and the tables (what files root could read hold) are
# root's only; the rest anyone may read
[ "$(stat -c %a "$DIR/fold.cache")" = 600 ] || fail "fold.cache: $(stat -c %a "$DIR/fold.cache")"
for f in "$DIR"/cfi-*.cache; do
	[ "$(stat -c %a "$f")" = 600 ] || fail "$f: $(stat -c %a "$f")"
done
[ "$(stat -c %a "$DIR/attach.cache")" = 644 ] || fail "attach.cache: $(stat -c %a "$DIR/attach.cache")"
pass "modes: fold.cache and the tables 0600, the others 0644"

# 2. --no-cache: nothing written (nor read: -v says the features were probed)
"$SCHEDPROF" cache clear >/dev/null
"$SCHEDPROF" trace -v --no-cache -o /dev/null -- true 2>"$TMP/nocache.log" ||
	fail "trace --no-cache: $(tail -3 "$TMP/nocache.log")"
[ "$(caches)" = 0 ] || fail "--no-cache wrote: $(ls "$DIR")"
grep -q "kernel features from the probes" "$TMP/nocache.log" ||
	fail "--no-cache: $(grep 'kernel features' "$TMP/nocache.log")"
pass "--no-cache: nothing written, the features probed"

# 3. results without CAP_SYSLOG: the same with root's caches as without any
# shape FILE.json: the warnings, the kinds of schedules callers ([preempted] aside) and the
# budget's steal split
shape() {
	python3 - "$1" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))
kinds = set()
for r in run['schedules']['callers']:
    c = r['caller']
    if c == '[preempted]':
        continue
    kinds.add('address' if c.startswith('0x') else c if c.startswith('[') else 'name')
print(' '.join(sorted(kinds)))
# the kernel config's answer (the features' cache): whether the budget splits steal out
print('steal split', run['schedules']['budget'].get('steal', {}).get('split'))
PY
	grep -v "^schedprof: trace: " "$1.err" | sed 's/[0-9.]* ms//g'
}

# as_user NAME CMD...: root without CAP_SYSLOG (root-nosyslog) or nobody with a copy of
# schedprof that has CAP_BPF and CAP_PERFMON (nobody)
cp "$SCHEDPROF" "$TMP/schedprof"
setcap cap_bpf,cap_perfmon+ep "$TMP/schedprof" || fail "setcap failed"
run_as() {
	local who=$1 out=$2
	shift 2
	case $who in
	root-nosyslog) capsh --drop=cap_syslog -- -c '"$0" "$@"' "$SCHEDPROF" trace "$@" \
		--views schedules -f json -o "$out" -- sleep 0.3 2>"$out.err" ;;
	nobody) (cd "$TMP" && runuser -u nobody -- "$TMP/schedprof" trace "$@" \
		--views schedules -f json -- sleep 0.3 >"$out" 2>"$out.err") ;;
	esac || fail "$who $*: exit $?: $(cat "$out.err")"
}
for who in root-nosyslog nobody; do
	"$SCHEDPROF" trace -o /dev/null -- true 2>/dev/null # root's caches, all of them
	run_as $who "$TMP/$who-cached.json"
	run_as $who "$TMP/$who-none.json" --no-cache
	shape "$TMP/$who-cached.json" >"$TMP/$who-cached.shape"
	shape "$TMP/$who-none.json" >"$TMP/$who-none.shape"
	diff -u "$TMP/$who-none.shape" "$TMP/$who-cached.shape" ||
		fail "$who: the run differs with root's caches present"
	pass "$who: the same with root's caches as without: $(head -1 "$TMP/$who-none.shape")"
done

# 4. clear removes schedprof's files, and show says they are absent
n=$("$SCHEDPROF" cache clear | sed -n 's/^\([0-9]*\) files\? removed.*/\1/p')
[ "${n:-0}" -ge 5 ] || fail "cache clear removed ${n:-none}"
[ "$(ls "$DIR" | grep -c '^cfi-' || true)" = 0 ] || fail "cache clear left tables: $(ls "$DIR")"
"$SCHEDPROF" cache show >"$TMP/show" || fail "cache show exited $?"
[ "$(grep -c ' absent ' "$TMP/show")" = 6 ] || fail "after clear: $(cat "$TMP/show")"
pass "cache clear removed $n files; show: all absent"
