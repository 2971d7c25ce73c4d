#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The kernel features found by probe programs (src/loader/featprobe.c, bpf/probes.bpf.c),
# once per boot: the first run probes and caches, the next reads the cache and finds the
# same; a damaged cache is probed again; the probes agree with bpftool's own feature probe
# where both look; and each way and view follows the answer, which a test build's
# SCHEDPROF_TEST_FEATURES_OFF overrides to run the older ways on this kernel.
. "$(dirname "$0")/lib.sh"
require_bpf
CACHE=/run/schedprof/kfeatures.cache

features() { # LOG: the found and the missing list of its features line
	sed -n 's/.*kernel features from [^:]*: //p' "$1" | head -1
}
run() { # LOG TRACE-OPTIONS...
	local log=$1
	shift
	"$SCHEDPROF" trace -v "$@" >/dev/null 2>"$log" || fail "trace -v $* exited $?: $(cat "$log")"
}

# 1. cold: probed (and cached); warm: from the cache, the same answer
rm -f "$CACHE"
run "$TMP/cold.log" -a -d 0.1 --views schedules
grep -q "kernel features from the probes in" "$TMP/cold.log" || fail "cold start: not probed: $(grep features "$TMP/cold.log")"
[ -f "$CACHE" ] || fail "the probes' answer was not cached in $CACHE"
run "$TMP/warm.log" -a -d 0.1 --views schedules
grep -q "kernel features from the boot's cache in" "$TMP/warm.log" || fail "warm start: not from the cache: $(grep features "$TMP/warm.log")"
[ "$(features "$TMP/cold.log")" = "$(features "$TMP/warm.log")" ] ||
	fail "probes and cache differ: $(features "$TMP/cold.log") | $(features "$TMP/warm.log")"
# every view needs these; a kernel that runs schedprof at all has them
for f in tp_btf trusted_task task_storage; do
	probed_has $f "$TMP/cold.log" || fail "the probes found no $f, yet the trace ran"
done
pass "features probed at the cold start, read from the boot's cache after: $(features "$TMP/warm.log")"

# 2. a cache cut short, or of another format, is not used: probed again
head -c -2 "$CACHE" > "$TMP/cut" && cat "$TMP/cut" > "$CACHE"
run "$TMP/cut.log" -a -d 0.1 --views schedules
grep -q "kernel features from the probes in" "$TMP/cut.log" || fail "a cut cache was used"
[ "$(features "$TMP/cut.log")" = "$(features "$TMP/cold.log")" ] || fail "probed again, a different answer"
pass "a damaged cache is probed again"

# 3. bpftool's own probe agrees where both look (map types, helpers of tracing programs)
if command -v bpftool >/dev/null && bpftool feature probe kernel > "$TMP/bpftool.txt" 2>/dev/null; then
	check() { # FEATURE BPFTOOL-LINE-RE
		local ours=0 theirs=0
		probed_has "$1" "$TMP/cold.log" && ours=1
		grep -Eq "$2" "$TMP/bpftool.txt" && theirs=1
		[ $ours = $theirs ] || fail "$1: our probe says $ours, bpftool's ($2) $theirs"
	}
	check ringbuf "^eBPF map_type ringbuf is available"
	check task_storage "^eBPF map_type task_storage is available"
	check bpf_loop "^[[:space:]]*- bpf_loop$"
	pass "ringbuf, task_storage and bpf_loop as bpftool feature probe finds them"
else
	echo "note: no bpftool feature probe here: not compared"
fi

# 4. the ways follow the answer: __arg_untrusted as probed, and taken as missing the older
#    trusted pointer on this same kernel; both load and take user stacks
run "$TMP/g.log" -a -d 0.2 --views profile -g
if probed_has arg_untrusted "$TMP/g.log"; then way="an untrusted"; else way="the trusted"; fi
grep -q "read through $way task pointer" "$TMP/g.log" || fail "-g: not read through $way pointer as probed"
SCHEDPROF_TEST_FEATURES_OFF=arg_untrusted,mem_key run "$TMP/old.log" -a -d 0.2 --views profile -g
grep -q "kernel features taken as missing (SCHEDPROF_TEST_FEATURES_OFF): arg_untrusted,mem_key" "$TMP/old.log" ||
	fail "the tests' override was not applied (is this a test build?)"
grep -q "read through the trusted task pointer" "$TMP/old.log" || fail "arg_untrusted taken as missing, but not the trusted pointer"
! probed_has arg_untrusted "$TMP/old.log" || fail "the override left arg_untrusted on"
pass "user stacks: $way pointer as probed; the trusted one with arg_untrusted taken as missing"

# 5. a missing need leaves out the views that need it, in one line each, and the others run
SCHEDPROF_TEST_FEATURES_OFF=ringbuf run "$TMP/rb.log" -a -d 0.2 --views schedules,profile
grep -q "this kernel has no BPF ring buffer (Linux 5.8): no profile view" "$TMP/rb.log" ||
	fail "no ring buffer: the profile view not named as left out: $(grep -v '^schedprof: [a-z]' "$TMP/rb.log" | head -3)"
SCHEDPROF_TEST_FEATURES_OFF=iter_task run "$TMP/it.log" -a -d 0.2 --views schedules
grep -q "the sleeps in progress at the stop are not charged: this kernel has no BPF task iterator (Linux 5.8)" "$TMP/it.log" ||
	fail "no task iterator: not said"
SCHEDPROF_TEST_FEATURES_OFF=tp_btf "$SCHEDPROF" trace -a -d 0.1 >/dev/null 2>"$TMP/tp.log" && fail "ran without tp_btf"
grep -qx "schedprof: this kernel has no BTF-typed tracepoint programs (tp_btf) (Linux 5.5)" "$TMP/tp.log" ||
	fail "no tp_btf: $(cat "$TMP/tp.log")"
SCHEDPROF_TEST_FEATURES_OFF=nosuch "$SCHEDPROF" trace -a -d 0.1 >/dev/null 2>"$TMP/bad.log" && fail "an unknown feature name was taken"
grep -q 'SCHEDPROF_TEST_FEATURES_OFF: no such feature in "nosuch"' "$TMP/bad.log" || fail "unknown feature: $(cat "$TMP/bad.log")"
pass "a missing ring buffer leaves out the profile, a missing task iterator is said, no tp_btf stops the run"

# 6. the per-task state: task storage where the kernel may create it with interrupts off, else
#    (PREEMPT_RT before bpf_mem_alloc) preallocated hashes; taken as missing, the hashes run on
#    this kernel too, and a hash too small for the tasks is a loss, said, and --strict's
if probed_has storage_nosleep "$TMP/cold.log"; then way="task storage"; else way="preallocated hashes"; fi
grep -q "per-task state: $way" "$TMP/cold.log" || fail "per-task state: not in $way as probed: $(grep per-task "$TMP/cold.log")"
SCHEDPROF_TEST_FEATURES_OFF=storage_nosleep run "$TMP/hash.log" -a -d 0.2
grep -q "per-task state: preallocated hashes of [0-9]* tasks" "$TMP/hash.log" ||
	fail "storage_nosleep taken as missing, but not the hashes: $(grep per-task "$TMP/hash.log")"
! grep -q "per-task hash .* was full" "$TMP/hash.log" || fail "hashes of every task, yet full: $(grep full "$TMP/hash.log")"
SCHEDPROF_TEST_FEATURES_OFF=storage_nosleep SCHEDPROF_TEST_TASK_STATES=2 run "$TMP/full.log" -a -d 0.2
grep -q "the per-task hash (2 tasks, used instead of task storage on this kernel) was full [1-9][0-9]* times" "$TMP/full.log" ||
	fail "a full per-task hash was not said: $(grep -i 'warn' "$TMP/full.log" | head -3)"
rc=0
SCHEDPROF_TEST_FEATURES_OFF=storage_nosleep SCHEDPROF_TEST_TASK_STATES=2 "$SCHEDPROF" trace --strict -a -d 0.2 \
	>/dev/null 2>"$TMP/strict.log" || rc=$?
[ $rc = 3 ] || fail "--strict with a full per-task hash exited $rc, expected 3"
grep -q "tasks' states not kept (the per-task hash was full)" "$TMP/strict.log" ||
	fail "--strict did not name the per-task hash's loss: $(cat "$TMP/strict.log")"
pass "per-task state in $way as probed; in hashes when taken as missing; a full hash said, and --strict's"
