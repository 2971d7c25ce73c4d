#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# libcurl is loaded (dlopen) by the fleet commands only (peak RSS): the binary does
# not link it; where it is loaded it works (a refused connection, not a load error); where it
# cannot be loaded, `report --from` exits 4 and the agent 1, each with one line naming the
# library and its package. The last case hides the real library in a private mount namespace
# (root), the others name a missing one through $SCHEDPROF_LIBCURL (no root, no server).
. "$(dirname "$0")/lib.sh"
command -v readelf >/dev/null || skip_or_fail "needs readelf (binutils)"

# expect_one_line RC PATTERN CMD...: CMD exits RC with one stderr line matching PATTERN
expect_one_line() {
	local want=$1 pat=$2 rc
	shift 2
	"$@" > "$TMP/out" 2> "$TMP/err"
	rc=$?
	[ "$rc" = "$want" ] || fail "$*: exit $rc, expected $want ($(cat "$TMP/err"))"
	[ "$(wc -l < "$TMP/err")" = 1 ] || fail "$*: not one line on stderr: $(cat "$TMP/err")"
	grep -Eq "$pat" "$TMP/err" || fail "$*: '$(cat "$TMP/err")' does not match '$pat'"
	pass "${*: -4} -> exit $rc: $(cat "$TMP/err")"
}

needed=$(readelf -d "$SCHEDPROF" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
case " $needed" in
*" libcurl"* | *" libssl"* | *" libcrypto"* | *" libgnutls"*) fail "schedprof links $needed" ;;
esac
pass "linked: $needed"

# the library is there: nothing listens on port 1, which only a loaded libcurl can tell
expect_one_line 4 "^schedprof report: cannot read the warehouse: 127.0.0.1:1: .*onnect" \
	"$SCHEDPROF" report --from clickhouse://127.0.0.1:1

nolib=libschedprof-test-nocurl.so.4
expect_one_line 4 "^schedprof report: cannot read the warehouse: cannot load $nolib \(package libcurl4\): .*No such file" \
	env SCHEDPROF_LIBCURL=$nolib "$SCHEDPROF" report --from clickhouse://127.0.0.1:1
expect_one_line 4 "^schedprof diff: cannot read the warehouse: cannot load $nolib \(package libcurl4\)" \
	env SCHEDPROF_LIBCURL=$nolib "$SCHEDPROF" diff --from clickhouse://127.0.0.1:1 --since -2h --vs-since -1h
expect_one_line 1 "^schedprof agent: --sink clickhouse://127.0.0.1:1/x: cannot load $nolib \(package libcurl4\)" \
	env SCHEDPROF_LIBCURL=$nolib "$SCHEDPROF" agent --spool "$TMP/spool" --sink clickhouse://127.0.0.1:1/x
# without the override: every libcurl build schedprof tries is gone (root: a private mount
# namespace with /dev/null over them)
if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null; then
	skip_or_fail "needs root and unshare (util-linux) to hide the real libcurl"
fi
libdir=$(dirname "$(realpath "$(ldconfig -p | awk '$1 == "libcurl.so.4" {print $NF; exit}')")")
[ -d "$libdir" ] || fail "libcurl.so.4 is not installed (package libcurl4)"
cat > "$TMP/hide.sh" <<SH
set -e
for f in "$libdir"/libcurl.so.4* "$libdir"/libcurl-gnutls.so.4*; do
	[ -e "\$f" ] && mount --bind /dev/null "\$(realpath "\$f")"
done
exec "\$@"
SH
expect_one_line 4 "^schedprof report: cannot read the warehouse: cannot load libcurl.so.4 \(package libcurl4\): " \
	unshare -m --propagation private bash "$TMP/hide.sh" "$SCHEDPROF" report --from clickhouse://127.0.0.1:1
