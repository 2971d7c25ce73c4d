#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# dist/schedprof-agent.service: systemd-analyze verify accepts it (ExecStart
# pointed at the built binary, the man page it names made findable), and its capabilities
# are exactly those schedprof needs (docs/agent.md: BPF, PERFMON, SYSLOG, SYS_PTRACE,
# DAC_READ_SEARCH), with no ambient ones and no way to gain more.
set -u
SCHEDPROF=${SCHEDPROF:?SCHEDPROF must name the built binary}
UNIT=${UNIT:-$(dirname "$0")/../../dist/schedprof-agent.service}
MAN=${MAN:-$(dirname "$0")/../../man/schedprof.8}
TMP=$(mktemp -d /tmp/schedprof-unit.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
if ! command -v systemd-analyze >/dev/null; then
	[ "${CI:-}" = true ] && fail "needs systemd-analyze (systemd)"
	echo "SKIP: needs systemd-analyze" >&2
	exit 77
fi
sed "s#/usr/local/bin/schedprof#$(realpath "$SCHEDPROF")#" "$UNIT" > "$TMP/schedprof-agent.service"
mkdir -p "$TMP/man/man8"
cp "$MAN" "$TMP/man/man8/"
MANPATH=$TMP/man systemd-analyze verify "$TMP/schedprof-agent.service" 2> "$TMP/err" ||
	fail "systemd-analyze verify: $(cat "$TMP/err")"
[ -s "$TMP/err" ] && fail "systemd-analyze verify warns: $(cat "$TMP/err")"
echo "ok: systemd-analyze verify"
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$UNIT" | tr ' ' '\n' | sort | tr '\n' ' ')
[ "$caps" = "CAP_BPF CAP_DAC_READ_SEARCH CAP_PERFMON CAP_SYSLOG CAP_SYS_PTRACE " ] ||
	fail "CapabilityBoundingSet is '$caps'"
grep -qx 'AmbientCapabilities=' "$UNIT" || fail "ambient capabilities are not emptied"
grep -qx 'NoNewPrivileges=yes' "$UNIT" || fail "NoNewPrivileges=yes is missing"
grep -q '^LoadCredential=clickhouse-password:' "$UNIT" || fail "no LoadCredential= for the password"
grep -q -- '--password-file %d/clickhouse-password' "$UNIT" || fail "ExecStart does not read the credential"
echo "ok: capabilities $caps; no ambient ones; NoNewPrivileges; the password from LoadCredential="
