# SPDX-License-Identifier: BSD-2-Clause
# Shared by the integration tests: BPF preconditions, running schedprof, reading its JSON.
# Exit 77 is meson's "skipped"; under CI=true a missing precondition is a failure instead.
set -u

SCHEDPROF=${SCHEDPROF:?SCHEDPROF must name the built binary}
SPWORK=${SPWORK:-}
TMP=$(mktemp -d /tmp/schedprof-test.XXXXXX)
# SCHEDPROF_TEST_SLOW: how many times slower than hardware the CPU runs (the kernel matrix,
# tests/kernels/, sets 10 under TCG). Timing bounds (latencies, sample rates) widen by it;
# counts never do.
SLOW=${SCHEDPROF_TEST_SLOW:-1}
trap 'rm -rf "$TMP"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }

skip_or_fail() {
	if [ "${CI:-}" = true ]; then
		echo "FAIL (CI=true, so no skipping): $*" >&2
		exit 1
	fi
	echo "SKIP: $*" >&2
	exit 77
}

require_bpf() {
	[ "$(id -u)" = 0 ] || skip_or_fail "needs root for BPF"
	[ -r /sys/kernel/btf/vmlinux ] || skip_or_fail "kernel has no BTF"
	command -v python3 >/dev/null || skip_or_fail "needs python3 to read the JSON report"
}

# jq-like access to the JSON report with python3: jget FILE EXPR (EXPR sees the document as d)
# probed_has FEATURE LOG: whether a -v run's log (LOG) lists FEATURE (kfeatures.c's key) among
# the kernel features found (by the probes or from the boot's cache).
probed_has() {
	local line
	line=$(grep -m1 "kernel features from " "$2") || fail "no kernel features line in $2"
	line=${line#*: }
	case " ${line%%;*} " in *" $1 "*) return 0 ;; esac
	return 1
}

jget() {
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# big_run SMALL OUT: SMALL (run_min.json) with 4000 more one-schedule callers: a report larger
# than a pipe or a small disk holds
big_run() {
	python3 - "$1" "$2" <<'PY' || fail "cannot write the big run $2"
import json, sys
d = json.load(open(sys.argv[1]))
s = d["schedules"]
for i in range(4000):
    s["callers"].append({"caller": "func_%d" % i, "wait": None, "count": 1, "offcpu_ns": 1,
                         "max_ns": 1, "comms": {"cat": {"count": 1, "offcpu_ns": 1, "max_ns": 1}},
                         "stacks": []})
s["total"] += 4000
s["voluntary"] += 4000
json.dump(d, open(sys.argv[2], "w"))
PY
}

# count for a caller, optionally restricted to one comm: caller_count FILE CALLER [COMM]
# (its sleeps on locks left out)
caller_count() {
	python3 - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
caller = sys.argv[2]
comm = sys.argv[3] if len(sys.argv) > 3 else None
n = 0
# a sleep on a lock inside the caller (pipe_read's pipe mutex: an rt-mutex on PREEMPT_RT,
# where it sleeps more often) is a row of its own, not one of the workload's waits
locks = {"rwsem-read", "rwsem-write", "mutex", "semaphore", "rt-mutex", "percpu-rwsem"}
for r in d["schedules"]["callers"]:
    if r["caller"] != caller or r.get("wait") in locks:
        continue
    if comm is None:
        n += r["count"]
    else:
        n += r["comms"].get(comm, {}).get("count", 0)
print(n)
PY
}

# cache_verified FILE MIN VIEW CACHE WHAT: a --verify-callers run: every answer the cache
# (VIEW's CACHE: caller_cache, stack_cache, waker_cache) gave was checked by a full stack
# walk, none differed, and at least MIN came from it.
cache_verified() {
	local view=$3 cache=$4 what=$5 fast ver mis
	read -r fast ver mis <<< "$(jget "$1" '" ".join(str(d["'"$view"'"]["'"$cache"'"][k]) for k in ("fast", "verified", "mismatched"))')"
	[ -n "$mis" ] || fail "$1 has no $view.$cache"
	[ "$mis" = 0 ] || fail "$view: $mis of $ver cached $what differ from the full stack walk"
	[ "$ver" = "$fast" ] || fail "$view: --verify-callers checked $ver of $fast cached $what"
	[ "$fast" -ge "$2" ] || fail "$view: only $fast $what from the cache, expected >= $2"
	pass "$view: $what from the cache: $fast, each checked by a full walk, 0 mismatched"
}

# callers_verified FILE [MIN] [VIEW]: cache_verified for the callers; VIEW: schedules (the
# default) or locks.
callers_verified() {
	cache_verified "$1" "${2:-0}" "${3:-schedules}" caller_cache callers
}

# lock_callers_verified FILE [MIN]: callers_verified for the locks view
lock_callers_verified() {
	callers_verified "$1" "${2:-0}" locks
}

# wait_attached PID: until the process holds a bpf_link (at most 10 s x SLOW)
wait_attached() {
	for _ in $(seq $((200 * SLOW))); do
		ls -l /proc/$1/fd 2>/dev/null | grep -q 'bpf_link' && return 0
		sleep 0.05
	done
	fail "schedprof ($1) did not attach within $((10 * SLOW)) s"
}

# The running kernel's function for a read that blocks on a pipe, from /proc/kallsyms (cached in
# $PIPE_READ): anon_pipe_read on newer kernels, pipe_read on older ones (6.1, 6.12).
pipe_read_fn() {
	if [ -z "${PIPE_READ:-}" ]; then
		PIPE_READ=$(awk '$3 == "anon_pipe_read" && ($2 == "t" || $2 == "T") { f = 1; exit }
			END { print f ? "anon_pipe_read" : "pipe_read" }' /proc/kallsyms)
	fi
	echo "$PIPE_READ"
}

# assert_between NAME VALUE LO HI
assert_between() {
	if [ "$2" -lt "$3" ] || [ "$2" -gt "$4" ]; then
		fail "$1 = $2, expected between $3 and $4"
	fi
	pass "$1 = $2 (expected $3..$4)"
}
