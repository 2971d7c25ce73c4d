#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Output files: -o and --save are opened before tracing, so a typo fails
# at once; they are written to a temporary file renamed into place, so a full disk leaves no
# truncated file and does not clobber the old one; a run that cannot be written where asked
# is saved to a fallback file that one line names; /dev/null is written, not replaced; under
# sudo the files belong to the invoking user. Links, FIFOs and devices another user planted
# (as nobody, through setpriv) are refused; the fallback name cannot be guessed.
. "$(dirname "$0")/lib.sh"
FIXTURES=${FIXTURES:?FIXTURES must name tests/fixtures}
require_bpf

start=$(date +%s%N)
"$SCHEDPROF" trace -o /nonexistent/run.json -- sh -c "touch '$TMP/ran'; sleep 2" 2>"$TMP/err"
rc=$? ms=$((($(date +%s%N) - start) / 1000000))
[ "$rc" = 1 ] || fail "-o into a missing directory exited $rc"
[ "$(cat "$TMP/err")" = "schedprof: cannot write /nonexistent/run.json: No such file or directory" ] ||
	fail "-o typo: $(cat "$TMP/err")"
[ ! -e "$TMP/ran" ] || fail "the command ran although the output could not be opened"
[ "$ms" -lt 1000 ] || fail "-o typo took $ms ms: not checked before tracing"
"$SCHEDPROF" trace --save /nonexistent/run.json -- true 2>"$TMP/err"
[ $? = 1 ] && grep -q 'cannot write /nonexistent/run.json' "$TMP/err" || fail "--save typo: $(cat "$TMP/err")"
pass "-o and --save are checked before anything runs (${ms} ms)"

# a full file system: the old file stays, no temporary file is left, the run is saved aside
mkdir "$TMP/full"
mount -t tmpfs -o size=8k tmpfs "$TMP/full" || skip_or_fail "cannot mount a tmpfs"
trap 'umount "$TMP/full" 2>/dev/null; rm -rf "$TMP"' EXIT
echo old > "$TMP/full/run.json"
TMPDIR=$TMP "$SCHEDPROF" trace --views schedules -f json -o "$TMP/full/run.json" -a -d 1 2>"$TMP/err"
[ $? = 1 ] || fail "a full disk did not fail the trace"
[ "$(cat "$TMP/full/run.json")" = old ] || fail "the old file was clobbered: $(head -c 100 "$TMP/full/run.json")"
[ "$(ls -A "$TMP/full")" = run.json ] || fail "left behind: $(ls -A "$TMP/full")"
grep -q 'No space left on device' "$TMP/err" || fail "no write error: $(cat "$TMP/err")"
saved=$(sed -n 's/^schedprof: the run is saved in \([^:]*\): .*/\1/p' "$TMP/err")
[ -n "$saved" ] && [ "$(dirname "$saved")" = "$TMP" ] || fail "no fallback line: $(cat "$TMP/err")"
"$SCHEDPROF" report "$saved" >/dev/null || fail "the fallback run does not render"
pass "full disk: old file kept, nothing partial left, run saved in $(basename "$saved")"

"$SCHEDPROF" report -f json -o "$TMP/full/new.json" "$saved" 2>"$TMP/err"
[ $? = 1 ] || fail "report into a full disk exited 0"
[ "$(ls -A "$TMP/full")" = run.json ] || fail "report left: $(ls -A "$TMP/full")"
# a table (stdio's ferror() alone says EIO) of 4000 rows, beyond the disk: the write's errno
big_run "$FIXTURES/run_min.json" "$TMP/big.json"
"$SCHEDPROF" report -n 0 -o "$TMP/full/new.txt" "$TMP/big.json" 2>"$TMP/err"
[ $? = 1 ] && [ "$(cat "$TMP/err")" = "schedprof report: cannot write the report to $TMP/full/new.txt: No space left on device" ] ||
	fail "a table into a full disk: $(cat "$TMP/err")"
pass "report into a full disk: exit 1, no partial file, 'No space left on device'"

"$SCHEDPROF" trace --views schedules -o /dev/null -- true || fail "-o /dev/null exited $?"
[ -c /dev/null ] || fail "/dev/null is no longer a character device"
pass "-o /dev/null is written, not replaced"

nobody=$(id -u nobody) nogroup=$(id -g nobody)
SUDO_UID=$nobody SUDO_GID=$nogroup SUDO_USER=nobody "$SCHEDPROF" trace --views schedules \
	-o "$TMP/mine.txt" --save "$TMP/mine.json" -- true || fail "trace under sudo exited $?"
[ "$(stat -c %u:%g "$TMP/mine.txt")" = "$nobody:$nogroup" ] &&
	[ "$(stat -c %u:%g "$TMP/mine.json")" = "$nobody:$nogroup" ] ||
	fail "under sudo the outputs belong to $(stat -c %u:%g "$TMP/mine.txt" "$TMP/mine.json")"
pass "under sudo, -o and --save files belong to the invoking user"

# ---- links and FIFOs planted by another user (nobody, a real unprivileged user) in a shared
# sticky directory: never followed, never written into; a new file takes no owner or mode
# from what it replaces ----
run_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
run_nobody true || skip_or_fail "setpriv cannot run as nobody"
SHARED=$TMP/shared
mkdir -m 1777 "$SHARED"
chmod 755 "$TMP"
echo secret > "$TMP/victim"
chmod 600 "$TMP/victim"
run_nobody ln -s "$TMP/victim" "$SHARED/z.json"
run_nobody ln -s "$TMP/victim" "$SHARED/s.json"
run_nobody mkfifo "$SHARED/fifo.json"
"$SCHEDPROF" trace --views schedules -f json -o "$SHARED/z.json" -- true 2>"$TMP/err"
rc=$?
[ "$(cat "$TMP/victim")" = secret ] || fail "-o followed another user's link: the victim holds $(head -c 80 "$TMP/victim")"
[ "$rc" = 1 ] || fail "-o through another user's link exited $rc"
grep -q "cannot write $SHARED/z.json: a symbolic link of another user (uid $(id -u nobody)), not followed" "$TMP/err" ||
	fail "-o through another user's link: $(cat "$TMP/err")"
"$SCHEDPROF" trace --views schedules -o /dev/null --save "$SHARED/s.json" -- true 2>"$TMP/err"
[ $? = 1 ] && [ "$(cat "$TMP/victim")" = secret ] || fail "--save followed another user's link: $(cat "$TMP/err")"
"$SCHEDPROF" report -o "$SHARED/fifo.json" "$FIXTURES/run_a.json" 2>"$TMP/err" </dev/null &
sp=$!
sleep 1
if kill -0 $sp 2>/dev/null; then
	kill $sp
	fail "report opened another user's FIFO (it blocked waiting for a reader)"
fi
wait $sp
[ $? = 1 ] && grep -q "a FIFO of another user" "$TMP/err" || fail "another user's FIFO: $(cat "$TMP/err")"
mknod "$TMP/blk" b 7 250
"$SCHEDPROF" report -o "$TMP/blk" "$FIXTURES/run_a.json" 2>"$TMP/err"
[ $? = 1 ] && grep -q "a block device: give a file, a FIFO or a character device" "$TMP/err" ||
	fail "-o into a block device: $(cat "$TMP/err")"
ln -s "$TMP/blk" "$TMP/blk.json"
"$SCHEDPROF" report -o "$TMP/blk.json" "$FIXTURES/run_a.json" 2>"$TMP/err"
[ $? = 1 ] && grep -q "it leads to a block device" "$TMP/err" || fail "-o through a link into a block device: $(cat "$TMP/err")"
pass "another user's link or FIFO in a sticky directory, a block device: refused, nothing written through"

# a set-uid file of another user, replaced: the new file is ours, with the umask's mode
echo old > "$TMP/suid.json"
chown nobody "$TMP/suid.json"
chmod 4777 "$TMP/suid.json"
(umask 022; "$SCHEDPROF" report -f json -o "$TMP/suid.json" "$FIXTURES/run_a.json") ||
	fail "report over another user's file exited $?"
[ "$(stat -c %u:%a "$TMP/suid.json")" = "0:644" ] ||
	fail "the new file took the old one's owner or mode: $(stat -c %u:%a "$TMP/suid.json")"
# our own link to a file: the file it leads to is replaced (a new file, of the umask's mode,
# not the old one's), the link stays
echo keep > "$TMP/target"
chmod 4755 "$TMP/target"
ln -s "$TMP/target" "$TMP/mylink.json"
(umask 022; "$SCHEDPROF" report -f json -o "$TMP/mylink.json" "$FIXTURES/run_a.json") ||
	fail "report through our own link exited $?"
[ -L "$TMP/mylink.json" ] && [ "$(head -c 1 "$TMP/target")" = "{" ] ||
	fail "our own link was not followed to its file"
[ "$(stat -c %a "$TMP/target")" = 644 ] || fail "the file behind our link kept mode $(stat -c %a "$TMP/target")"
# what a user names on purpose: /dev/stdout (a link of root's) to a pipe, and to a file the
# shell opened (> truncates, >> appends: written in place, /dev stays as it was), our own FIFO
n=$("$SCHEDPROF" report -o /dev/stdout "$FIXTURES/run_a.json" | wc -c)
[ "$n" -gt 100 ] || fail "-o /dev/stdout wrote $n bytes"
echo first > "$TMP/stdout.txt"
"$SCHEDPROF" report -o /dev/stdout "$FIXTURES/run_a.json" >> "$TMP/stdout.txt" ||
	fail "-o /dev/stdout >> file exited $?"
[ "$(head -n 1 "$TMP/stdout.txt")" = first ] && [ "$(wc -l < "$TMP/stdout.txt")" -gt 5 ] ||
	fail "-o /dev/stdout >> file: $(head -c 200 "$TMP/stdout.txt")"
[ -L /dev/stdout ] || fail "/dev/stdout is no longer a link"
mkfifo "$TMP/myfifo"
(timeout 10 cat "$TMP/myfifo" > "$TMP/fromfifo") &
timeout 10 "$SCHEDPROF" report -o "$TMP/myfifo" "$FIXTURES/run_a.json" || fail "-o our own FIFO exited $?"
wait
[ -p "$TMP/myfifo" ] && [ "$(wc -c < "$TMP/fromfifo")" -gt 100 ] || fail "our own FIFO was not written in place"
pass "a file replaced takes neither owner nor set-uid mode; own link followed; /dev/stdout and own FIFO written"

# the fallback save: an unguessable name, mode 0600, never through a planted link
for i in $(seq 0 300); do run_nobody ln -sf "$TMP/victim" "$SHARED/schedprof-run-$(($$ + i)).json"; done
TMPDIR=$SHARED "$SCHEDPROF" trace --views schedules -f json -o "$TMP/full/run2.json" -a -d 0.5 2>"$TMP/err"
saved=$(sed -n 's/^schedprof: the run is saved in \([^:]*\): .*/\1/p' "$TMP/err")
[ -n "$saved" ] && [ -f "$saved" ] && [ ! -L "$saved" ] || fail "no fallback file: $(cat "$TMP/err")"
[[ $(basename "$saved") =~ ^schedprof-run-[0-9]+\.json$ ]] && fail "the fallback name $saved is predictable"
[ "$(stat -c %u:%a "$saved")" = "0:600" ] || fail "the fallback file is $(stat -c %u:%a "$saved"), not root's 0600"
[ "$(cat "$TMP/victim")" = secret ] || fail "the fallback save followed a planted link"
grep -q "cannot write the report to $TMP/full/run2.json: No space left on device" "$TMP/err" ||
	fail "a full disk is not named as such: $(cat "$TMP/err")"
pass "fallback save: $(basename "$saved"), 0600, no planted link followed; ENOSPC named"

# --save on a full disk: named as the saved run, with its errno
"$SCHEDPROF" trace --views schedules -o /dev/null --save "$TMP/full/s.json" -a -d 0.5 2>"$TMP/err"
[ $? = 1 ] || fail "--save on a full disk exited 0"
grep -q "cannot write the saved run to $TMP/full/s.json: No space left on device" "$TMP/err" ||
	fail "--save on a full disk: $(cat "$TMP/err")"
pass "--save on a full disk: 'cannot write the saved run ...: No space left on device'"
