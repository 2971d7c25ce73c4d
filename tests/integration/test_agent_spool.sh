#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The agent's spool and its ndjson FILE sink at their edges (docs/security.md):
#   trust     a spool another user owns (made by nobody through setpriv) or one its group or
#             others may write (1777) is refused, one line, exit 1; links planted for the
#             temporary files are never followed; nobody cannot take the spool's lock;
#   lock      a second agent on a spool in use is refused, one line, exit 1;
#   default   the default spool ($STATE_DIRECTORY/spool) is created with its parents, 0700;
#   read-only a read-only spool is refused at the start, exit 1;
#   seq       a seq file holding garbage or the end of the range is refused, never wrapped;
#   unreadable  a zero-length batch is counted as unreadable, not sent as an empty interval;
#   said      "intervals left by the last run" and "sending again" without -v;
#   full file a full disk under the ndjson FILE sink, later freed: no broken line, no row twice;
#   full spool  intervals lost to a full spool disk reach table losses at the next start;
#   unprivileged  an agent without the capabilities creates no spool before it refuses.
. "$(dirname "$0")/lib.sh"
require_bpf
command -v setpriv >/dev/null || skip_or_fail "needs setpriv (util-linux)"
MNTS=()
trap 'for m in "${MNTS[@]}"; do umount "$m" 2>/dev/null; done; rm -rf "$TMP"' EXIT
chmod 755 "$TMP" # nobody reaches $TMP/pub (1777, as /tmp is), nothing else
mkdir -m 1777 "$TMP/pub"
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
NOUID=$(id -u nobody)

# one_line FILE PATTERN: PATTERN is in exactly one line of FILE
one_line() {
	local n
	n=$(grep -c -- "$2" "$1" || true)
	[ "$n" = 1 ] || { cat "$1" >&2; fail "'$2' in $n lines of the agent's messages, expected 1"; }
}
# refused NAME PATTERN ARGS...: the agent exits 1 at once with one line matching PATTERN
refused() {
	local name=$1 pat=$2 rc=0
	shift 2
	timeout 20 "$SCHEDPROF" agent -p $$ -i 0.2 -d 2 --views schedules "$@" \
		> "$TMP/$name.out" 2> "$TMP/$name.err" || rc=$?
	[ $rc = 1 ] || { cat "$TMP/$name.err" >&2; fail "$name: exit $rc, expected 1"; }
	[ "$(wc -l < "$TMP/$name.err")" = 1 ] || { cat "$TMP/$name.err" >&2; fail "$name: not one line"; }
	grep -Eq -- "$pat" "$TMP/$name.err" || fail "$name: '$(cat "$TMP/$name.err")' does not match '$pat'"
	pass "$name: exit 1: $(cat "$TMP/$name.err")"
}
# agent NAME ARGS...: a short agent run (rc in $TMP/NAME.rc, stderr NAME.err)
agent() {
	local name=$1 rc=0
	shift
	timeout 60 "$SCHEDPROF" agent --views schedules "$@" > "$TMP/$name.out" \
		2> "$TMP/$name.err" || rc=$?
	echo $rc > "$TMP/$name.rc"
}
losses() { # losses NDJSON WHAT: the sum of table losses' WHAT
	python3 - "$1" "$2" <<'PY'
import json, sys
n = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["table"] == "losses" and r["what"] == sys.argv[2]:
        n += r["count"]
print(n)
PY
}

# ---- trust: another user's spool, a world-writable one ----
as_nobody mkdir "$TMP/pub/theirs" || fail "nobody cannot mkdir in a 1777 directory"
refused theirs "spool directory $TMP/pub/theirs: .*uid $NOUID, not .*uid 0" \
	--spool "$TMP/pub/theirs" --sink ndjson:/dev/null
refused public "spool directory $TMP/pub: .*writable by (its group or )?others" \
	--spool "$TMP/pub" --sink ndjson:/dev/null
mkdir -m 770 "$TMP/grp"
refused group "spool directory $TMP/grp: .*writable by its group" --spool "$TMP/grp" \
	--sink ndjson:/dev/null
# ---- trust: links planted for the temporary files (as the owner could) are not followed ----
printf 'secret\n' > "$TMP/victim"
chmod 600 "$TMP/victim"
SP=$TMP/sp-links
"$SCHEDPROF" agent -p $$ -i 0.2 -d 3 --views schedules --spool "$SP" \
	--sink ndjson:/dev/null 2> "$TMP/links.err" &
apid=$!
for _ in $(seq 100); do [ -e "$SP/seq" ] && break; sleep 0.05; done
[ -e "$SP/seq" ] || fail "the agent spooled nothing in 5 s: $(cat "$TMP/links.err")"
ln -s "$TMP/victim" "$SP/seq.tmp"
for i in $(seq 1 40); do ln -s "$TMP/victim" "$SP/$(printf '%020d' "$i").batch.tmp" 2>/dev/null; done
# nobody cannot reach into the spool, nor hold its lock (which would stop the agent)
as_nobody ln -s "$TMP/victim" "$SP/x" 2>/dev/null && fail "nobody could plant a link in the spool"
as_nobody flock -n "$SP/lock" true 2>/dev/null && fail "nobody could take the spool's lock"
rc=0
wait $apid || rc=$?
[ "$(cat "$TMP/victim")" = secret ] || fail "a planted link was followed: the victim holds '$(cat "$TMP/victim")'"
[ $rc = 0 ] || { cat "$TMP/links.err" >&2; fail "with planted links: exit $rc, expected 0"; }
[ "$(stat -c '%a %u' "$SP")" = "700 0" ] || fail "the spool is $(stat -c '%a %u' "$SP"), expected 700 of root"
pass "links planted for seq.tmp and the next batches' temporary files: not followed, the victim intact; nobody can neither plant links nor take the lock"

# ---- lock: one agent per spool ----
SP=$TMP/sp-lock
"$SCHEDPROF" agent -p $$ -i 0.5 -d 6 --views schedules --spool "$SP" \
	--sink ndjson:/dev/null 2> "$TMP/first.err" &
apid=$!
for _ in $(seq 100); do [ -e "$SP/seq" ] && break; sleep 0.05; done
refused second "spool directory $SP: another agent \(pid $apid\) uses it" --spool "$SP" \
	--sink ndjson:/dev/null
kill -INT $apid
wait $apid || fail "the first agent: exit $? ($(cat "$TMP/first.err"))"

# ---- the default spool: created with its parents, mode 0700 ----
rc=0
STATE_DIRECTORY=$TMP/state/a/b timeout 20 "$SCHEDPROF" agent -p $$ -i 0.2 -d 0.5 \
	--views schedules --sink ndjson:/dev/null 2> "$TMP/def.err" || rc=$?
[ $rc = 0 ] || fail "the default spool: exit $rc ($(cat "$TMP/def.err"))"
[ "$(stat -c %a "$TMP/state/a/b/spool")" = 700 ] || fail "the default spool's mode is $(stat -c %a "$TMP/state/a/b/spool")"
pass "the default spool \$STATE_DIRECTORY/spool was created with its parents, mode 0700"

# ---- read-only: refused at the start ----
mkdir "$TMP/ro"
mount -t tmpfs -o size=1M tmpfs "$TMP/ro" || skip_or_fail "cannot mount a tmpfs"
MNTS+=("$TMP/ro")
mkdir -m 700 "$TMP/ro/sp"
mount -o remount,ro "$TMP/ro" || fail "cannot make the tmpfs read-only"
refused readonly "spool directory $TMP/ro/sp: .*Read-only file system" --spool "$TMP/ro/sp" \
	--sink ndjson:/dev/null

# ---- seq: garbage or the end of the range ----
for v in 18446744073709551615 9223372036854775808 garbage ''; do
	SP=$TMP/sp-seq-${v:-empty}
	mkdir -m 700 "$SP"
	printf '%s\n' "$v" > "$SP/seq"
	refused "seq-${v:-empty}" "spool directory $SP: its seq file holds '$v', not a sequence number" \
		--spool "$SP" --sink ndjson:/dev/null
	[ ! -e "$SP/batch" ] || fail "seq $v: a batch named 'batch'"
done

# ---- a zero-length batch: unreadable, counted ----
SP=$TMP/sp-empty
mkdir -m 700 "$SP"
printf '8\n' > "$SP/seq"
: > "$SP/00000000000000000007.batch"
agent empty -p $$ -i 0.3 -d 1 --spool "$SP" --sink "ndjson:$TMP/empty.ndjson"
[ "$(cat "$TMP/empty.rc")" = 0 ] || fail "zero-length batch: exit $(cat "$TMP/empty.rc") ($(cat "$TMP/empty.err"))"
one_line "$TMP/empty.err" "interval 7 is empty: removed, counted in table losses as spool.unreadable_intervals"
[ "$(losses "$TMP/empty.ndjson" spool.unreadable_intervals)" = 1 ] || fail "zero-length batch: spool.unreadable_intervals is not 1"
[ ! -e "$SP/00000000000000000007.batch" ] || fail "the zero-length batch is still there"
pass "a zero-length batch: one line, spool.unreadable_intervals = 1, removed"

# ---- said without -v: intervals left by the last run ----
SP=$TMP/sp-left
agent left1 -a -i 0.2 -d 1 --spool "$SP" --sink clickhouse://127.0.0.1:1/db
n=$(ls "$SP" | grep -c '\.batch$' || true)
[ "$n" -ge 2 ] || fail "the unreachable sink left $n intervals"
agent left2 -p $$ -i 0.2 -d 0.5 --spool "$SP" --sink "ndjson:$TMP/left.ndjson"
one_line "$TMP/left2.err" "spool $SP: $n intervals left by the last run are sent first"
pass "said without -v: $(grep 'left by the last run' "$TMP/left2.err")"

# ---- the ndjson FILE sink on a disk that fills up and is freed again: whole intervals ----
mkdir "$TMP/full"
mount -t tmpfs -o size=512K tmpfs "$TMP/full" || fail "cannot mount a tmpfs"
MNTS+=("$TMP/full")
"$SCHEDPROF" agent -a -i 0.2 -d 7 --views schedules --spool "$TMP/sp-full" \
	--sink "ndjson:$TMP/full/rows.ndjson" 2> "$TMP/full.err" &
apid=$!
for _ in $(seq 100); do [ -s "$TMP/full/rows.ndjson" ] && break; sleep 0.05; done
dd if=/dev/zero of="$TMP/full/filler" bs=4k 2>/dev/null # until the disk is full
sleep 2.5
rm -f "$TMP/full/filler"
rc=0
wait $apid || rc=$?
[ $rc = 0 ] || { cat "$TMP/full.err" >&2; fail "full disk under the sink: exit $rc"; }
grep -q "No space left on device" "$TMP/full.err" || fail "the full disk was not said: $(cat "$TMP/full.err")"
one_line "$TMP/full.err" "sending again"
python3 - "$TMP/full/rows.ndjson" <<'PY' || fail "the ndjson file is not whole intervals"
import json, sys
seen, bad, seqs = set(), 0, set()
for i, line in enumerate(open(sys.argv[1], encoding="utf-8", errors="replace")):
    try:
        r = json.loads(line)
    except ValueError:
        print("line %d is broken: %r" % (i + 1, line[:80]), file=sys.stderr)
        bad += 1
        continue
    if line in seen:
        print("line %d is a row sent twice: %r" % (i + 1, line[:80]), file=sys.stderr)
        bad += 1
    seen.add(line)
    seqs.add(r["seq"])
assert not bad, "%d bad lines" % bad
assert len(seqs) >= 10, "only %d intervals" % len(seqs)
print("ok: %d rows of %d intervals, each whole and once" % (len(seen), len(seqs)))
PY
pass "a full disk under the ndjson file, then freed: no broken line, no row twice, 'sending again' said once"

# ---- intervals lost to a full spool disk: counted at the next start ----
mkdir "$TMP/small"
mount -t tmpfs -o size=64K tmpfs "$TMP/small" || fail "cannot mount a tmpfs"
MNTS+=("$TMP/small")
SP=$TMP/small/sp
agent small1 -a -i 0.1 -d 3 --spool "$SP" --sink clickhouse://127.0.0.1:1/db
[ "$(cat "$TMP/small1.rc")" = 3 ] || { cat "$TMP/small1.err" >&2; fail "full spool disk: exit $(cat "$TMP/small1.rc"), expected 3"; }
grep -q "interval 0" "$TMP/small1.err" && fail "'interval 0' said: $(cat "$TMP/small1.err")"
lost=$(sed -n 's/.* \([0-9]*\) intervals could not be spooled.*/\1/p' "$TMP/small1.err")
[ -n "$lost" ] && [ "$lost" -gt 0 ] || { cat "$TMP/small1.err" >&2; fail "the end does not say how many intervals could not be spooled"; }
mount -o remount,size=8M "$TMP/small" || fail "cannot grow the tmpfs"
agent small2 -p $$ -i 0.3 -d 1 --spool "$SP" --sink "ndjson:$TMP/small.ndjson"
got=$(losses "$TMP/small.ndjson" spool.unwritten_intervals)
[ "$got" = "$lost" ] || { cat "$TMP/small1.err" "$TMP/small2.err" >&2; fail "spool.unwritten_intervals = $got at the next start, the agent said $lost"; }
pass "a full spool disk: $lost intervals not spooled, said at the end, and all $got in table losses at the next start"

# ---- unprivileged: refused before the spool is made ----
rc=0
as_nobody "$SCHEDPROF" agent --spool "$TMP/pub/np" --sink ndjson:/dev/null \
	2> "$TMP/np.err" || rc=$?
[ $rc = 1 ] || fail "as nobody: exit $rc ($(cat "$TMP/np.err"))"
grep -q "CAP_BPF" "$TMP/np.err" || fail "as nobody: no line names the capability: $(cat "$TMP/np.err")"
[ ! -e "$TMP/pub/np" ] || fail "as nobody: the spool directory was created before the refusal"
pass "as nobody: exit 1, $(head -1 "$TMP/np.err"), no spool directory made"
