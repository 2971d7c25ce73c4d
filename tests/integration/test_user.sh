#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Who the command runs as: under sudo, the user who ran sudo (SUDO_UID, SUDO_GID,
# that user's groups, HOME and USER), so `sudo schedprof trace -- make` leaves no root-owned
# files; --user picks another, --as-root keeps root; without sudo, as schedprof itself. The
# command never inherits schedprof's ambient capabilities, and its counts stay exact.
. "$(dirname "$0")/lib.sh"
require_bpf
PR=$(pipe_read_fn)
command -v setpriv >/dev/null || skip_or_fail "needs setpriv (util-linux)"
nobody=$(id -u nobody) nogroup=$(id -g nobody)

# run_as OUT ENV... -- TRACE ARGS...: trace `id -u; id -g; id -G; echo $HOME $USER` into OUT
who() { "$SCHEDPROF" trace --views schedules -o /dev/null "$@" -- sh -c 'id -u; id -g; id -G; echo "$HOME $USER"'; }

[ "$(who | head -1)" = 0 ] || fail "without sudo the command does not run as root"
pass "without sudo: as schedprof's own user (root)"

out=$(SUDO_UID=$nobody SUDO_GID=$nogroup SUDO_USER=nobody who) || fail "under sudo: exit $?"
[ "$(sed -n 1p <<< "$out")" = "$nobody" ] || fail "under sudo, uid is $(sed -n 1p <<< "$out"), not $nobody"
[ "$(sed -n 2p <<< "$out")" = "$nogroup" ] || fail "under sudo, gid is $(sed -n 2p <<< "$out")"
[ "$(sed -n 3p <<< "$out")" = "$(id -G nobody)" ] || fail "groups $(sed -n 3p <<< "$out") != $(id -G nobody)"
[ "$(sed -n 4p <<< "$out")" = "$(getent passwd nobody | cut -d: -f6) nobody" ] ||
	fail "HOME and USER are '$(sed -n 4p <<< "$out")'"
pass "under sudo: as the sudo caller (uid, gid, groups, HOME, USER)"

# files the command writes belong to the user; its schedules are counted exactly
mkdir "$TMP/build" && chown "$nobody:$nogroup" "$TMP/build" && chmod 755 "$TMP"
SUDO_UID=$nobody SUDO_GID=$nogroup SUDO_USER=nobody "$SCHEDPROF" trace --views schedules -f json \
	-o "$TMP/run.json" -- sh -c "touch '$TMP/build/made' && exec '$SPWORK' pipe 300" ||
	fail "under sudo: trace of spwork exited $?"
[ "$(stat -c %u "$TMP/build/made")" = "$nobody" ] || fail "the command's file is owned by $(stat -c %u "$TMP/build/made")"
n=$(caller_count "$TMP/run.json" "$PR")
[ "$n" -ge 300 ] && [ "$n" -le 303 ] || fail "as nobody: $PR = $n, expected 300..303"
pass "under sudo: files the command makes are the user's; counts exact ($n $PR)"

[ "$(SUDO_UID=$nobody SUDO_GID=$nogroup SUDO_USER=nobody who --as-root | head -1)" = 0 ] ||
	fail "--as-root does not keep root"
[ "$(who --user nobody | head -1)" = "$nobody" ] || fail "--user nobody"
[ "$(who --user "$nobody" | head -1)" = "$nobody" ] || fail "--user with a uid"
pass "--as-root keeps root, --user NAME and --user UID"

"$SCHEDPROF" trace --user no-such-user-here -- true 2>"$TMP/err"
[ $? = 1 ] || fail "--user of an unknown user does not exit 1"
[ "$(cat "$TMP/err")" = "schedprof: no such user: no-such-user-here" ] || fail "unknown user: $(cat "$TMP/err")"
"$SCHEDPROF" trace --user nobody -a -d 1 2>"$TMP/err"
[ $? = 2 ] && grep -q -- '--user needs -- COMMAND' "$TMP/err" || fail "--user without a command: $(cat "$TMP/err")"
"$SCHEDPROF" trace --user nobody --as-root -- true 2>"$TMP/err"
[ $? = 2 ] && grep -q 'exclude each other' "$TMP/err" || fail "--user with --as-root: $(cat "$TMP/err")"
pass "unknown user (exit 1), --user without a command or with --as-root (exit 2): one line"

# schedprof holding an ambient capability: the command starts without it
amb=$(setpriv --inh-caps=+bpf --ambient-caps=+bpf "$SCHEDPROF" trace --views schedules -o /dev/null \
	-- grep CapAmb /proc/self/status) || fail "trace with an ambient capability exited $?"
[ "$amb" = "$(printf 'CapAmb:\t0000000000000000')" ] || fail "the command inherits ambient capabilities: $amb"
pass "the command does not inherit schedprof's ambient capabilities"
