#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# cpu-quota: the bundled compile job (examples/compile-job) under a CPU limit of 50% of one
# CPU, then without it. The first report's budget says how much of the job's time it was
# throttled and names the cgroup; `schedprof diff` shows the throttled time go away.
#
# usage: sudo examples/cpu-quota/run.sh [-k DIR] [JOBS]
#   -k DIR: keep the two reports (limited.json, unlimited.json) in DIR
#   JOBS: make -j (default 2)
# env: SCHEDPROF (default: build/src/schedprof), QUOTA_US (per 100 ms period, default 50000)
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
SCHEDPROF=${SCHEDPROF:-$ROOT/build/src/schedprof}
QUOTA_US=${QUOTA_US:-50000}
KEEP=
if [ "${1:-}" = -k ]; then
	KEEP=$2
	shift 2
fi
JOBS=${1:-2}
OUT=/tmp/schedprof-cpu-quota-job
DIR=${KEEP:-$(mktemp -d /tmp/schedprof-cpu-quota.XXXXXX)}
mkdir -p "$DIR"

# the cpu controller: a cgroup v1 hierarchy that has it, else cgroup2 (the fields after " - ")
mount_of() {
	awk -v t="$1" -v o="${2:-}" '{
		for (i = 7; i < NF && $i != "-"; i++) ;
		if ($(i + 1) == t && (o == "" || $(i + 3) ~ "(^|,)" o "(,|$)")) { print $5; exit }
	}' /proc/self/mountinfo
}
CPUROOT=$(mount_of cgroup cpu)
if [ -n "$CPUROOT" ]; then
	CG=$CPUROOT/schedprof-cpu-quota
	mkdir -p "$CG"
	echo 100000 > "$CG/cpu.cfs_period_us"
	echo "$QUOTA_US" > "$CG/cpu.cfs_quota_us"
else
	CPUROOT=$(mount_of cgroup2)
	[ -n "$CPUROOT" ] || { echo "no cgroup hierarchy with the cpu controller" >&2; exit 1; }
	grep -qw cpu "$CPUROOT/cgroup.subtree_control" || echo +cpu > "$CPUROOT/cgroup.subtree_control"
	CG=$CPUROOT/schedprof-cpu-quota
	mkdir -p "$CG"
	echo "$QUOTA_US 100000" > "$CG/cpu.max"
fi
cleanup() {
	rmdir "$CG" 2>/dev/null || true
	[ -n "$KEEP" ] || rm -rf "$DIR"
}
trap cleanup EXIT

make -s -C "$ROOT/examples/compile-job" OUT="$OUT" >/dev/null # generate the sources once
# run NAME [CGROUP]: a clean build traced into DIR/NAME.json, in CGROUP when given
run() {
	make -s -C "$ROOT/examples/compile-job" OUT="$OUT" clean
	"$SCHEDPROF" trace --views schedules -f json -o "$DIR/$1.json" -- \
		sh -c '[ -z "$1" ] || echo $$ > "$1/cgroup.procs"; shift; exec "$@"' sh "${2:-}" \
		make -s -j"$JOBS" -C "$ROOT/examples/compile-job" OUT="$OUT"
}
run limited "$CG"
run unlimited

echo "== under a limit of $((QUOTA_US / 1000))% of a CPU: the report's header and top rows"
"$SCHEDPROF" report -n 4 "$DIR/limited.json" | sed -n '/^elapsed/p; /^schedules:/,$p'
echo
echo "== without it"
"$SCHEDPROF" report -n 4 "$DIR/unlimited.json" | sed -n '/^elapsed/p; /^budget:/,/^ *COUNT/p'
echo
echo "== schedprof diff limited.json unlimited.json: the budget"
"$SCHEDPROF" diff "$DIR/limited.json" "$DIR/unlimited.json" | sed -n '/^budget:/,/^$/p'
