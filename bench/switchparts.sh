#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# bench/switchparts.sh -- where sp_switch's time goes: builds schedprof at each
# given revision with bpf_ktime_get_ns() timing around the parts of the schedules view's
# switch (patched into a scratch copy; the product is never built with it), then traces
# ONLY the workload (trace --views schedules -- CMD) and prints each part's ns per call,
# summed over the CPUs. Unlike bpf_stats' ns per run, the traced parts count only the
# workload's own switches, so the other load on the machine blurs them less.
#
#   floor     two bpf_ktime_get_ns() calls and the map update (subtract from the others)
#   in        next's switch-in: its task storage, and charge_offcpu (row and waker lookups);
#             counted at every switch (an untraced next costs its storage lookup only)
#   caller    a voluntary switch's caller: fast_caller() (cache, or a full walk) or the walk
#   row       count_caller(): the row's lookup (or insert) and count
#   out       prev's task storage and state (from 09e5060 on, without -a as here: the storage
#             looked up again, warm)
#   prev      from 09e5060 on: prev's task storage, looked up in sp_switch first (for its
#             traced-set mark, without -a as here); before, inside "out"
#
# usage: sudo bench/switchparts.sh [-r RUNS] [-w a,b] [REV...]   (default REV: HEAD; each a
#   commit of this repository: the working tree's changes are not built)
#   workloads: msg (perf bench sched messaging), pipe (taskset -c 1 perf bench sched pipe
#   -l 160000), make (examples/compile-job, make -j2, N=12), dirlock (tests/workloads/dirlock.c,
#   8 threads, 1 s); default all four
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/.." && pwd)
RUNS=3 WL="msg,pipe,make,dirlock"
while getopts "r:w:h" opt; do
	case $opt in
	r) RUNS=$OPTARG ;; w) WL=$OPTARG ;;
	*) awk 'NR > 2 && /^#/ { sub(/^# ?/, ""); print; next } NR > 2 { exit }' "$0"; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
REVS=("$@")
((${#REVS[@]})) || REVS=(HEAD)
[[ $EUID == 0 ]] || { echo "$0: must run as root" >&2; exit 1; }
for tool in perf taskset bpftool python3 meson ninja cc git; do
	command -v "$tool" >/dev/null || { echo "$0: $tool not found" >&2; exit 1; }
done
TMP=$(mktemp -d /tmp/schedprof-switchparts.XXXXXX)
SP_PID=""
cleanup() {
	[ -n "$SP_PID" ] && kill -INT "$SP_PID" 2>/dev/null && wait "$SP_PID" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

# patch SRC: the timing, around the parts of sched_switch_in/_out (fails when they moved)
patch() {
	python3 - "$1/src/views/schedules/schedules.bpf.c" <<'PY' || return 1
import re, sys
p = sys.argv[1]
s = open(p).read()
def sub(pat, rep):
    global s
    s, n = re.subn(pat, rep, s, count=1, flags=re.S)
    if n != 1:
        sys.exit("switchparts: no match for " + pat)
sub(r'(SP_SCRATCH_MAP\(sched_pcpu, struct sp_sched_pcpu\);)', r'''\1
struct sw_parts { __u64 ns[8]; __u64 n[8]; };
SP_SCRATCH_MAP(sw_parts, struct sw_parts);
static __always_inline void sw_part(int i, __u64 *t)
{
	__u32 z = 0;
	struct sw_parts *x = bpf_map_lookup_elem(&sw_parts, &z);
	__u64 n = bpf_ktime_get_ns();

	if (x && i >= 0 && i < 8) {
		x->ns[i] += n - *t;
		x->n[i]++;
	}
	*t = bpf_ktime_get_ns();
}''')
if 'sched_switch_in(next, &nt, now);' in s:
    # from 09e5060 on: sp_switch looks up next's and prev's storage once, for all parts
    sub(r'(\n\tif \(switch_locks \|\| switch_sched\)\n\t\tnt = bpf_task_storage_get)',
        r'\n\t__u64 tt_in = bpf_ktime_get_ns();\n\tsw_part(0, &tt_in);\1')
    sub(r'(\n\t\tsched_switch_in\(next, &nt, now\);\n)', r'\1\tsw_part(1, &tt_in);\n')
    # the first: without -a (as here), for its mark, before sched_switch_out()
    sub(r'(\n\t+)(pt = bpf_task_storage_get\(&traced, prev, 0, 0\);)\n',
        r'\1{ __u64 tt_pt = bpf_ktime_get_ns(); \2 sw_part(5, &tt_pt); }\n')
else:
    sub(r'(\tsched_switch_in\(next, now\);\n)',
        r'\t{ __u64 tt = bpf_ktime_get_ns(); sw_part(0, &tt); sched_switch_in(next, now); sw_part(1, &tt); }\n')
sub(r'(\n\t\t\tif \(caller_fast\)\n\t\t\t\tfast_caller\(ctx, &key[^;]*;\n\t\t\telse\n[^;]*;\n)',
    r'\n\t\t\t{ __u64 tt = bpf_ktime_get_ns();\1\t\t\tsw_part(2, &tt); }\n')
sub(r'(\n\tcount_caller\(&key\);\n)', r'\n\t__u64 tt = bpf_ktime_get_ns();\1\tsw_part(3, &tt);\n')
sub(r'(\n\ts->key = key;\n)(\}\n)', r'\1\tsw_part(4, &tt);\n\2')
open(p, 'w').write(s)
PY
}

BINS=()
for i in "${!REVS[@]}"; do
	src=$TMP/src$i
	git clone -q "$TOP" "$src" && git -C "$src" checkout -q "${REVS[$i]}" || exit 1
	patch "$src" || exit 1
	(cd "$src" && meson setup build >/dev/null && nice ninja -C build src/schedprof >/dev/null) ||
		{ echo "$0: build of ${REVS[$i]} failed" >&2; exit 1; }
	BINS+=("$src/build/src/schedprof")
	echo "build #$i: ${REVS[$i]} ($(git -C "$src" rev-parse --short HEAD))"
done
cc -O2 -pthread -o "$TMP/dirlock" "$TOP/tests/workloads/dirlock.c" || exit 1
EX=$TOP/examples/compile-job
make -s -C "$EX" OUT="$TMP/proj" N=12 "$TMP/proj/.generated" >/dev/null || exit 1

workload() {
	case $1 in
	msg) echo "perf bench sched messaging" ;;
	pipe) echo "taskset -c 1 perf bench sched pipe -l 160000" ;;
	make) make -s -C "$EX" clean OUT="$TMP/proj" >/dev/null
	      echo "make -s -j2 -C $EX OUT=$TMP/proj N=12 CFLAGS='-O2 -pipe'" ;;
	dirlock) rm -rf "$TMP/dl" && mkdir -p "$TMP/dl" && echo "$TMP/dirlock $TMP/dl 8 1" ;;
	*) echo "$0: unknown workload $1" >&2; return 1 ;;
	esac
}

# one_run BIN CMD: the parts' "ns/calls" for CMD's switches, read before schedprof stops
one_run() {
	rm -f "$TMP/done"
	"$1" trace --views schedules -f json -o "$TMP/run.json" -- \
		sh -c "$2 >/dev/null 2>&1; touch $TMP/done; sleep 1.5" 2>/dev/null &
	SP_PID=$!
	for _ in $(seq 1200); do [ -e "$TMP/done" ] && break; sleep 0.05; done
	bpftool -j map dump name sw_parts | python3 -c '
import json, struct, sys
ns = [0] * 8; n = [0] * 8
for v in json.load(sys.stdin)[0]["values"]:
    a = struct.unpack("<16Q", bytes(int(x, 16) for x in v["value"])[:128])
    for i in range(8):
        ns[i] += a[i]; n[i] += a[8 + i]
print(" ".join("%d/%d" % (ns[i] // max(n[i], 1), n[i]) for i in range(6)))'
	wait "$SP_PID"
	SP_PID=""
}

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-8s %-6s %-12s %-12s %-12s %-12s %-12s %s\n" workload build floor in caller row out prev
IFS=, read -ra WLIST <<<"$WL"
for r in $(seq "$RUNS"); do
	for w in "${WLIST[@]}"; do
		for i in "${!BINS[@]}"; do
			cmd=$(workload "$w") || exit 1
			printf "%-8s %-6s %s\n" "$w" "#$i" "$(one_run "${BINS[$i]}" "$cmd" |
				awk '{ printf "%-12s %-12s %-12s %-12s %-12s %s", $1, $2, $3, $4, $5, $6 }')"
		done
	done
done
echo "(ns per call / calls; load average: $(cut -d' ' -f1-3 /proc/loadavg))"
