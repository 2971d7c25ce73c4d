#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Output files (issue #9, defect 2): -o and --save are opened before tracing, so a typo fails
# at once; they are written to a temporary file renamed into place, so a full disk leaves no
# truncated file and does not clobber the old one; a run that cannot be written where asked
# is saved to a fallback file that one line names; /dev/null is written, not replaced; under
# sudo the files belong to the invoking user.
. "$(dirname "$0")/lib.sh"
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
pass "report into a full disk: exit 1, no partial file"

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
