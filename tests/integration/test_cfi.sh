#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The profile's -g user stacks copied and unwound by call frame information, and --stacks'
# walked by rules learned from such copies, on code built without frame pointers: main -> f1 -> ... -> f8 spinning in f8 (gcc -O2 -fomit-frame-pointer,
# clang -O2), the same spinning in a signal handler, a C++ chain that throws across its
# frames, python3 (Debian builds it without frame pointers) and the compile job's cc1.
. "$(dirname "$0")/lib.sh"
NOFP_GCC=${NOFP_GCC:?NOFP_GCC must name the gcc-built tests/nofpspin}
NOFP_CLANG=${NOFP_CLANG:?NOFP_CLANG must name the clang-built tests/nofpspin}
CXXTHROW=${CXXTHROW:?CXXTHROW must name tests/cxxthrow}
COMPILE_JOB=${COMPILE_JOB:?COMPILE_JOB must name examples/compile-job}
require_bpf

# share FOLDED COMM PATTERN [LEAF]: "hits total" of COMM's samples with user frames whose stack
# has PATTERN (a regex on the ;-joined frames), from folded output; with LEAF, only samples
# whose innermost user frame is LEAF (named from the sample's IP, before any unwinding). Not
# counted: samples of kernel frames only (an exec or an exit: no user stack to unwind), and
# stacks of 64 user frames, the depth kept (SP_PROF_UDEPTH: python3's imports at start-up,
# cc1's recursions), whose outer frames are left out whatever the unwinder.
share() {
	SHARE_MISS="$TMP/share.miss" python3 - "$@" <<'PY'
import os, re, sys
path, comm, pat = sys.argv[1:4]
miss = {}
leaf = sys.argv[4] if len(sys.argv) > 4 else None
hit = tot = 0
for line in open(path):
    stack, _, n = line.rstrip("\n").rpartition(" ")
    frames = stack.split(";")
    # the schedules view's preemptions have no stack: "[preempted]" alone
    user = [f for f in frames[1:] if not f.endswith("_[k]") and f != "[preempted]"]
    if frames[0] != comm or not user or len(user) >= 64 or (leaf and user[-1] != leaf):
        continue
    tot += int(n)
    joined = ";".join(frames[1:])
    if re.search(pat, joined):
        hit += int(n)
    else:
        miss[joined] = miss.get(joined, 0) + int(n)
print(hit, tot)
with open(os.environ["SHARE_MISS"], "w") as f:
    for stack, n in sorted(miss.items(), key=lambda x: -x[1])[:5]:
        print(f"  {n} {stack}", file=f)
PY
}

# at_least HIT TOT PERCENT MIN WHAT (after share: a failure shows the stacks it did not count)
at_least() {
	[ "$2" -ge "$4" ] || fail "$5: only $2 samples (want $4 at least)"
	[ $((100 * $1)) -ge $(($3 * $2)) ] ||
		fail "$5: $1 of $2 samples, under $3%; the others' first stacks:
$(cat "$TMP/share.miss")"
	pass "$5: $1 of $2 samples"
}

# main's caller in libc: __libc_start_call_main is a local symbol, named only by libc's
# debug file (libc6-dbg); without it (the kernel matrix's guests) the frame is its address
chain='(^|;)(__libc_start_call_main|libc\.so\.6\+0x[0-9a-f]+);main;f1;f2;f3;f4;f5;f6;f7;f8(;|$)'
secs=2 # of CPU time
# The loader's start-up: its _start and _dl_start are local symbols, named only by libc6-dbg;
# without it, two outermost frames of ld.so named by address. Under TCG (the kernel matrix)
# start-up takes 5 to 10% of a run's samples.
ld='ld-linux-x86-64\.so\.2\+0x[0-9a-f]+'
# entry_re [BIN]: a stack at a program's first instruction: the loader's entry point (_start,
# which has no CFI, SP at argc) as execve returns, or BIN's own (a PIE: its offsets are its
# addresses) as the loader jumps to it; that frame alone under the kernel's (the exec's last
# file closed, a page fault), named, or by address: its own, or the byte before it where the
# PC is named as a system call's or a fault's return
entry_re() {
	local alts=_start f e
	for f in "$(readlink -f /lib64/ld-linux-x86-64.so.2)" ${1:+"$(readlink -f "$1")"}; do
		e=$(readelf -h "$f" | awk '/Entry point/ { print $NF }')
		[ -n "$e" ] || fail "readelf: no entry point in $f"
		alts="$alts|$(basename "$f" | sed 's/[.+]/\\&/g')\\+0x($(printf '%x|%x' $((e)) $((e - 1))))"
	done
	echo "^($alts)(;[^;]*_\\[k\\])*\$"
}
entry=$(entry_re)
for bin in "$NOFP_GCC" "$NOFP_CLANG"; do
	comm=$(basename "$bin" | cut -c1-15)
	"$SCHEDPROF" trace -v -g --views profile -f folded -o "$TMP/$comm.folded" -- "$bin" "$secs" \
		2> "$TMP/$comm.err" || fail "$comm: schedprof exited $?: $(tail -3 "$TMP/$comm.err")"
	grep -q 'user stack copies unwound' "$TMP/$comm.err" ||
		fail "$comm: no copies unwound: $(grep 'profile:' "$TMP/$comm.err")"
	# the spin in f8 only: under TCG (the kernel matrix) the loader's start-up and the page
	# faults of a binary read over 9p take 5% of the samples, which never went through main
	read -r hit tot <<<"$(share "$TMP/$comm.folded" "$comm" "$chain" f8)"
	at_least "$hit" "$tot" 99 50 "$comm (no frame pointers): samples in f8 with f8 <- ... <- main <- libc's caller of main"
done
# The spin in a signal handler that f8 raised: above the handler, the kernel's signal frame
# (__restore_rt) and the libc code that sent the signal (__pthread_kill_implementation),
# then f8 <- ... <- main. Both are local symbols of libc, named by libc6-dbg only (not in
# the kernel matrix's guests), and __restore_rt has no size: by address, as libc.so.6+0x...
sigchain="${chain%(;|\$)};raise;((__pthread_kill_implementation|__pthread_kill_internal|__restore_rt|libc\.so\.6\+0x[0-9a-f]+);){2}on_signal;spin_in_handler;spin(;|\$)"
for bin in "$NOFP_GCC" "$NOFP_CLANG"; do
	comm=$(basename "$bin" | cut -c1-15)
	"$SCHEDPROF" trace -v -g --views profile -f folded -o "$TMP/sig.folded" -- "$bin" "$secs" signal \
		2> "$TMP/sig.err" || fail "$comm signal: schedprof exited $?: $(tail -3 "$TMP/sig.err")"
	read -r hit tot <<<"$(share "$TMP/sig.folded" "$comm" "$sigchain" spin)"
	at_least "$hit" "$tot" 99 50 "$comm, in a signal handler: spin <- the handler <- the signal frame <- libc <- f8 <- ... <- main"
done

# --stacks (the schedules view): f8 blocks in read() on a pipe, a thousand times a second.
# The BPF walk follows rules learned from the copies of its misses: a few copies, then
# whole stacks walked in BPF, each event counted under its whole stack.
for bin in "$NOFP_GCC" "$NOFP_CLANG"; do
	comm=$(basename "$bin" | cut -c1-15)
	"$SCHEDPROF" trace -v --views schedules --stacks -f folded -o "$TMP/rd.folded" -- \
		"$bin" 1 read 2> "$TMP/rd.err" || fail "$comm read: schedprof exited $?: $(tail -3 "$TMP/rd.err")"
	grep -q 'walked by the learned rules: whole [1-9]' "$TMP/rd.err" ||
		fail "$comm read: no walk by rules: $(grep 'schedules:' "$TMP/rd.err")"
	# (under ASan its read() interceptor between f8 and libc's)
	read -r hit tot <<<"$(share "$TMP/rd.folded" "$comm" "${chain%(;|\$)};([^;]*interceptor_read[^;]*;)?__read(;|\$)" __read)"
	at_least "$hit" "$tot" 99 300 "$comm --stacks, blocked in read(): __read <- f8 <- ... <- main <- libc's caller of main"
	grep -q 'truncated user stack' "$TMP/rd.err" && fail "$comm read: $(grep -A3 'truncated user stack' "$TMP/rd.err")"
	grep 'placeholders replaced' "$TMP/rd.err" | sed 's/^/  /'
done
# ... and the same reads in the handler of a signal f8 raised: the BPF walk goes through the
# kernel's signal frame (a rule of its own) to f8
rsig="${chain%(;|\$)};raise;((__pthread_kill_implementation|__pthread_kill_internal|__restore_rt|libc\.so\.6\+0x[0-9a-f]+);){2}on_signal;read_in_handler;([^;]*interceptor_read[^;]*;)?__read(;|\$)"
for bin in "$NOFP_GCC" "$NOFP_CLANG"; do
	comm=$(basename "$bin" | cut -c1-15)
	"$SCHEDPROF" trace -v --views schedules --stacks -f folded -o "$TMP/rs.folded" -- \
		"$bin" 1 read-signal 2> "$TMP/rs.err" || fail "$comm read-signal: schedprof exited $?: $(tail -3 "$TMP/rs.err")"
	read -r hit tot <<<"$(share "$TMP/rs.folded" "$comm" "$rsig" __read)"
	at_least "$hit" "$tot" 99 300 "$comm --stacks, blocked in read() in a signal handler: __read <- the handler <- the signal frame <- libc <- f8 <- ... <- main"
done
# The walks' memo (bpf/ustack.bpf.h, struct sp_rmemo): f8 blocks in read() through read_a()
# and read_b() in turn, whose frames are alike: each read blocks with the same registers, the
# stacks a return address apart. Each wait is counted under its own path, as the workload
# counted its reads; with --verify-callers each answer of the memo was checked by a walk, and
# none differed.
comm=$(basename "$NOFP_GCC" | cut -c1-15)
for verify in "" --verify-callers; do
	"$SCHEDPROF" trace -v $verify --views schedules --stacks -f json -o "$TMP/two.json" -- \
		"$NOFP_GCC" 1 read-two > "$TMP/two.out" 2> "$TMP/two.err" ||
		fail "read-two$verify: schedprof exited $?: $(tail -3 "$TMP/two.err")"
	read -r a b <<<"$(sed -n 's/^read_a \([0-9]*\) read_b \([0-9]*\)$/\1 \2/p' "$TMP/two.out")"
	[ -n "$b" ] || fail "read-two: the workload said nothing: $(cat "$TMP/two.out")"
	python3 - "$TMP/two.json" "$comm" "$a" "$b" <<'PY' || fail "read-two$verify: the waits' stacks do not follow the reads' paths"
import json, sys
s = json.load(open(sys.argv[1]))["schedules"]
comm, a, b = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
n = {"read_a": 0, "read_b": 0}
for r in s["callers"]:
    for st in r.get("stacks", []):
        if st["comm"] != comm:
            continue
        fr = st["frames"]
        for f in n:
            if f in fr:
                i = fr.index(f)
                assert fr[i - 1] == "read_one" and fr[i + 1] == "f8", fr
                # the read's own wait for the pipe (pipe_read, anon_pipe_read on 6.18);
                # PREEMPT_RT's reads also sleep on the wait queue's lock, another caller
                if r["caller"].endswith("pipe_read"):
                    n[f] += st["count"]
# each read blocks in the pipe once but for the few the writer's byte was already there for
# (a loaded machine), and the last one, at the end of the pipe, is not counted by the workload
for f, want in (("read_a", a), ("read_b", b)):
    assert want * 0.8 <= n[f] <= want + 1, (f, n[f], "waits, of", want, "reads")
c = s["ustack_cache"]
# the memo answers the writer's waits (its nanosleep(), always the same stack), not the
# reader's: each of its entries is the other path's, which the words tell apart
assert c["fast"] >= min(a, b) // 2, c
print(n["read_a"], n["read_b"], c)
PY
	[ -z "$verify" ] || cache_verified "$TMP/two.json" 200 schedules ustack_cache "user stacks"
	pass "read-two${verify:+ $verify}: waits under read_a and read_b as the workload's reads ($a, $b), the walks' memo answering the writer's"
done
# Processes forked without exec walk by the rules their parent's copies taught: f8's reads
# first in the parent, then in 8 children (read_forks -> main -> f1 ...; main tail-calls
# read_forks), each with its writer
"$SCHEDPROF" trace -v --views schedules --stacks -f folded -o "$TMP/forks.folded" \
	--save "$TMP/forks.json" -- "$NOFP_GCC" 0.3 read-forks 2> "$TMP/forks.err" ||
	fail "read-forks: schedprof exited $?: $(tail -3 "$TMP/forks.err")"
read -r hit tot <<<"$(share "$TMP/forks.folded" "$comm" "${chain/;main;/;(main;)?read_forks;main;}" __read)"
at_least "$hit" "$tot" 95 2000 "read-forks --stacks, blocked in f8's read(), parent and children"
# the JSON's count of them (ustack_cache's "forked", of its "of") and the log's agree
read -r forked walks <<<"$(jget "$TMP/forks.json" 'd["schedules"]["ustack_cache"].get("forked", 0), d["schedules"]["ustack_cache"].get("of", 0)' | tr -d '(),')"
logged=$(sed -n 's/.*schedules: \([0-9]*\) of those walks followed the rules of the process they were forked from.*/\1/p' "$TMP/forks.err")
[ -n "$forked" ] && [ "$walks" -gt 0 ] && [ $((3 * forked)) -ge "$walks" ] ||
	fail "read-forks: ${forked:-no} walks by a parent's rules, of ${walks:-?}: $(grep -i 'rules' "$TMP/forks.err")"
[ "$forked" = "$logged" ] || fail "read-forks: the JSON counts $forked walks by a parent's rules, the log ${logged:-none}"
"$SCHEDPROF" report "$TMP/forks.json" > "$TMP/forks.txt" &&
	grep -q "user stacks: $forked of $walks walks by the rules their parent process learned" "$TMP/forks.txt" ||
	fail "read-forks: the report of the saved run does not count the walks by a parent's rules: $(grep 'user stacks' "$TMP/forks.txt")"
pass "read-forks: $forked of $walks walks by the rules of the process they were forked from"
# ... and their snapshots (their mappings, which name the frames) copied from it, not read:
# the 8 readers and the writers forked from them
snaps() { sed -n 's/.*stacks: .*snapshots of processes copied from whose rules they walk by: \([0-9]*\).*/\1/p' "$1"; }
n=$(snaps "$TMP/forks.err")
[ "${n:-0}" -ge 8 ] || fail "read-forks: ${n:-no} snapshots copied from the process forked from, want 8 at least"
pass "read-forks: $n snapshots copied from the process forked from"
# ... but a forked process that maps code of its own (dlopen) leaves its parent's rules: f8
# reads through the library's nofpdl_read() -> read_byte() in the 8 children. Walked by the
# parent's rules, whose snapshot has no such library, their stacks would stop at read_byte.
NOFP_DL=${NOFP_DL:?NOFP_DL must name tests/libnofpdl.so}
"$SCHEDPROF" trace -v --views schedules --stacks -f folded -o "$TMP/dlf.folded" -- \
	"$NOFP_GCC" 0.3 read-dlopen-forks "$NOFP_DL" 2> "$TMP/dlf.err" ||
	fail "read-dlopen-forks: schedprof exited $?: $(tail -3 "$TMP/dlf.err")"
read -r tot _ <<<"$(share "$TMP/dlf.folded" "$comm" '(^|;)read_byte;__read(;|$)' __read)"
dlchain="${chain/;main;/;(main;)?read_forks;main;}"
read -r hit _ <<<"$(share "$TMP/dlf.folded" "$comm" "${dlchain%(;|\$)};nofpdl_read;read_byte;__read(;|\$)" __read)"
# (under TCG most of the children's first stacks are lost: they learn their rules from copies,
# which a slow user space unwinds after the ring has filled; a 6.1 guest kept 444 to 645 of
# 2400, each of them whole)
at_least "$hit" "$tot" 95 "$([ "$SLOW" -gt 1 ] && echo 200 || echo 1600)" "read-dlopen-forks --stacks, children blocked in the library's read_byte(): f8 <- ... <- main <- read_forks"
# their first snapshots were copied before the dlopen(), without the library: its frames are
# named because the change in the size of their code had them read again
n=$(snaps "$TMP/dlf.err")
[ "${n:-0}" -ge 8 ] || fail "read-dlopen-forks: ${n:-no} snapshots copied from the process forked from, want 8 at least"
# ... and with --ustack-copy 0, frame pointers: the chain is lost
"$SCHEDPROF" trace --ustack-copy 0 --views schedules --stacks -f folded -o "$TMP/rdfp.folded" -- \
	"$NOFP_GCC" 0.3 read 2>/dev/null || fail "--stacks --ustack-copy 0 run"
read -r hit tot <<<"$(share "$TMP/rdfp.folded" "$(basename "$NOFP_GCC" | cut -c1-15)" "${chain%(;|\$)};__read(;|\$)" __read)"
[ "$tot" -gt 0 ] && [ $((2 * hit)) -lt "$tot" ] ||
	fail "--stacks --ustack-copy 0: $hit of $tot stacks have the whole chain: frame pointers should not"
pass "--stacks --ustack-copy 0 walks frame pointers: $hit of $tot stacks with the whole chain"
# python3 sleeping in a loop: its stacks reach Py_RunMain or main
"$SCHEDPROF" trace -v --views schedules --stacks -f folded -o "$TMP/pysl.folded" -- python3 -c "
import time
for i in range(300):
    time.sleep(0.001)" 2> "$TMP/pysl.err" || fail "python3 sleep run: $(tail -3 "$TMP/pysl.err")"
# (and its start-up's and exit's: the loader's, by address without libc6-dbg)
read -r hit tot <<<"$(share "$TMP/pysl.folded" python3 "(^|;)(Py_RunMain|Py_BytesMain|main|_dl_start)(;|\$)|^$ld;$ld(;|\$)|$entry")"
at_least "$hit" "$tot" 95 250 "python3 --stacks, sleeping: Py_RunMain, Py_BytesMain or main, or the loader's start-up"

# Deeper than the 64 frames kept (eval's recursion through C, 30 levels): each such wait is
# counted as cut for its depth in the JSON, and noted under the table
"$SCHEDPROF" trace --views schedules --stacks -f json -o "$TMP/deep.json" -- python3 -c "
import time
def f(n):
    return eval('f(n-1)') if n else time.sleep(0.001)
for i in range(100):
    f(30)" 2> "$TMP/deep.err" || fail "python3 deep run: $(tail -3 "$TMP/deep.err")"
python3 - "$TMP/deep.json" <<'PY' || fail "python3 deep: the cut stacks are not counted for their depth"
import json, sys
s = json.load(open(sys.argv[1]))["schedules"]
cuts = {k: v for k, v in s.items() if k.startswith("user_")}
assert cuts.get("user_cut_depth", 0) >= 95, cuts
assert cuts.get("user_truncated", 0) >= cuts["user_cut_depth"], cuts
PY
"$SCHEDPROF" report "$TMP/deep.json" 2>/dev/null | grep -q 'user stacks stopped short: .* [1-9][0-9]* as deep as the frames kept' ||
	fail "python3 deep: no note of the cut stacks: $("$SCHEDPROF" report "$TMP/deep.json" 2>&1 | grep note)"
pass "python3 deep: $(python3 -c "import json,sys; s=json.load(open(sys.argv[1]))['schedules']; print(s.get('user_cut_depth'), 'waits cut at the frames kept')" "$TMP/deep.json")"

# C++: g8 throws, main catches. Most samples are in the runtime's unwinder (libgcc_s,
# libstdc++), called from g8; the rest in main's catch (main.cold, its cold part) and the
# clock. Every stack reaches main (but the loader's start-up, libc's before main from the
# program's _start, and exit(), after main), and those in the unwinder go through the whole
# g chain.
"$SCHEDPROF" trace -v -g --views profile -f folded -o "$TMP/cxx.folded" -- "$CXXTHROW" "$secs" \
	2> "$TMP/cxx.err" || fail "cxxthrow: schedprof exited $?: $(tail -3 "$TMP/cxx.err")"
read -r hit tot <<<"$(share "$TMP/cxx.folded" cxxthrow "(^|;)(main(\\.cold)?|exit|_dl_start)(;|\$)|^_start(;|\$)|^$ld;$ld(;|\$)|$(entry_re "$CXXTHROW")")"
at_least "$hit" "$tot" 99 50 "cxxthrow: main or its cold part, or start-up or exit"
gchain='(^|;)main;g1\(unsigned long\);g2\(unsigned long\);g3\(unsigned long\);g4\(unsigned long\);g5\(unsigned long\);g6\(unsigned long\);g7\(unsigned long\);g8\(unsigned long\)( \[clone \.cold\])?;__cxa_throw;_Unwind_RaiseException(;|$)'
read -r unw _ <<<"$(share "$TMP/cxx.folded" cxxthrow '(^|;)_Unwind_RaiseException(;|$)')"
[ "$unw" -ge $((tot / 2)) ] || fail "cxxthrow: only $unw of $tot samples in the unwinder"
read -r hit _ <<<"$(share "$TMP/cxx.folded" cxxthrow "$gchain|^(?!.*;_Unwind_RaiseException(;|\$))")"
# the misses here are of the unwinder's samples only (the second alternative counts the rest)
at_least "$((hit - (tot - unw)))" "$unw" 97 25 "cxxthrow: samples in the unwinder with main <- g1 <- ... <- g8 <- __cxa_throw"

# The tables are kept in the per-boot cache by build-id: a later run reads them, and one whose
# file is damaged compiles it anew, with the same stacks each time. -v names each table read
# or compiled by its key (BUILDID-ROWS); the program's is checked (others, such as the vdso's,
# may be new to the cache in any run).
table() { grep -o "unwind table $bid-[0-9a-f]*: .*" "$TMP/again.err" | head -1; }
again() {
	"$SCHEDPROF" trace -v -g --views profile -f folded -o "$TMP/again.folded" -- \
		"$NOFP_GCC" 0.5 2> "$TMP/again.err" || fail "cache run: $(tail -3 "$TMP/again.err")"
	read -r hit tot <<<"$(share "$TMP/again.folded" "$(basename "$NOFP_GCC" | cut -c1-15)" "$chain" f8)"
	at_least "$hit" "$tot" 99 10 "cache, $1: samples in f8 with the whole chain"
	grep -q 'CFI of .* (0 found there unusable)' "$TMP/again.err" ||
		fail "cache, $1: $(grep -o 'CFI of .*' "$TMP/again.err")"
}
bid=$(readelf -n "$NOFP_GCC" | awk '/Build ID:/ { print $3 }')
[ -n "$bid" ] || fail "cache: $NOFP_GCC has no build-id"
ls /run/schedprof/cfi-"$bid"-*.cache > /dev/null 2>&1 ||
	fail "cache: the first run kept no table of $NOFP_GCC in /run/schedprof"
again "read back"
[[ $(table) == *": read from the cache" ]] || fail "cache: the program's table: $(table)"
pass "cache: $(table); $(grep -o 'CFI of .* objects: [0-9]* read' "$TMP/again.err")"
for f in /run/schedprof/cfi-"$bid"-*.cache; do
	printf 'garbage' | dd of="$f" bs=1 seek=300 conv=notrunc status=none
done
again "a damaged table"
# the cache's hash refuses the file before its table is unpacked: compiled, not "unusable"
[[ $(table) == *": compiled, kept" ]] || fail "cache, a damaged table: $(table)"
pass "cache, a damaged table: $(table)"
again "the table kept anew"
[[ $(table) == *": read from the cache" ]] || fail "cache, kept anew: $(table)"
"$SCHEDPROF" cache show | grep -q '^cfi-\*\.cache .* [1-9][0-9]*/' ||
	fail "cache show lists no unwind tables: $("$SCHEDPROF" cache show)"

# the same program with --ustack-copy 0 (frame pointers): the chain is lost, which is what
# the copies are for
"$SCHEDPROF" trace -g --ustack-copy 0 --views profile -f folded -o "$TMP/fp.folded" -- \
	"$NOFP_GCC" 0.5 2>/dev/null || fail "--ustack-copy 0 run"
read -r hit tot <<<"$(share "$TMP/fp.folded" "$(basename "$NOFP_GCC" | cut -c1-15)" "$chain" f8)"
[ "$tot" -gt 0 ] && [ $((2 * hit)) -lt "$tot" ] ||
	fail "--ustack-copy 0: $hit of $tot samples have the whole chain: frame pointers should not"
pass "--ustack-copy 0 walks frame pointers: $hit of $tot samples with the whole chain"

# python3 of a busy loop: Debian's python3 has no frame pointers. The clock is read now and
# then: the loop runs in the interpreter, not in the system call of the CPU clock.
"$SCHEDPROF" trace -g --views profile -f folded -o "$TMP/py.folded" -- python3 -c "
import time
end = time.process_time() + $secs
while time.process_time() < end:
    for i in range(100000):
        pass" 2> "$TMP/py.err" || fail "python3 run: $(tail -3 "$TMP/py.err")"
# Py_BytesMain: the interpreter's start-up (Py_InitializeFromConfig), which main calls
read -r hit tot <<<"$(share "$TMP/py.folded" python3 "(^|;)(Py_RunMain|Py_BytesMain|main)(;|\$)|^$ld;$ld(;|\$)|$entry")"
at_least "$hit" "$tot" 95 30 "python3: Py_RunMain, Py_BytesMain or main, or the loader's start-up"

# cc1 of the compile job (10 modules; 40 on hardware)
OUT=$(mktemp -d /tmp/schedprof-cfi-job.XXXXXX)
trap 'rm -rf "$OUT" "$TMP"' EXIT
n=$([ "$SLOW" -gt 1 ] && echo 10 || echo 40)
make -s -C "$COMPILE_JOB" OUT="$OUT" N="$n" "$OUT/.generated" > /dev/null || fail "compile job: generate"
"$SCHEDPROF" trace -v -g --views profile -f folded -o "$TMP/cc1.folded" -- \
	make -s -j2 -C "$COMPILE_JOB" OUT="$OUT" N="$n" 2> "$TMP/cc1.err" > /dev/null ||
	fail "compile job run: $(tail -3 "$TMP/cc1.err")"
# Not every whole stack goes through main: the dynamic loader's start-up (_dl_start), cc1's
# static constructors and exit handlers (from __libc_start_main, whose caller is _start); the
# loader's start-up by address ($ld) without libc6-dbg, and its entry point _start alone
# (the first instructions, before it calls _dl_start), then with kernel frames only
read -r hit tot <<<"$(share "$TMP/cc1.folded" cc1 "(^|;)(toplev::main|main|_dl_start)(;|\$)|^_start(;|\$)|^$ld;$ld(;|\$)|$entry")"
read -r strict _ <<<"$(share "$TMP/cc1.folded" cc1 '(^|;)(toplev::main|main)(;|$)')"
grep 'profile: .*copies unwound\|CFI of' "$TMP/cc1.err" | sed 's/^/  /'
# cc1's frames hold value ranges of 4 to 8 KiB: a copy of 16 KiB left 6 to 10% of its stacks
# short of main, 64 KiB 1 to 3% (recursions 64 to 132 KiB deep), the default 128 KiB 0 to 1%
at_least "$hit" "$tot" 95 30 "cc1: toplev::main or main ($strict), or start-up and exit from _start"

# The compile job with --stacks in the schedules and locks views (both take copies, each
# under a placeholder of its own): every user stack whole, through make's posix_spawn
# (clone3, which has no CFI around its system call), the gcc driver's vfork (its return
# address in RDI) and the programs of Debian's toolchain, named.
"$SCHEDPROF" trace -v --views schedules,locks --stacks -f folded -o "$TMP/cjs.folded" -- \
	make -s -B -j2 -C "$COMPILE_JOB" OUT="$OUT" N="$n" > "$TMP/cjs.txt" 2> "$TMP/cjs.err" ||
	fail "compile job --stacks run: $(tail -3 "$TMP/cjs.err")"
grep 'learned rules\|copies (rules' "$TMP/cjs.err" | sed 's/^/  /'
# Not named: a vfork child's stack while it execs (its image is the parent's memory, the
# snapshot of the child the new program's): 0 to 5 of about 450 stacks here, 5 of 234 in a
# 6.1 guest under TCG
read -r named all <<<"$(awk '$0 !~ /\[preempted\]/ { all += $NF } $0 !~ /\[unknown\]/ && $0 !~ /\[preempted\]/ { named += $NF } END { print named + 0, all + 0 }' "$TMP/cjs.folded")"
grep -F '[unknown]' "$TMP/cjs.folded" | head -5 | cut -c1-300 > "$TMP/share.miss"
at_least "$named" "$all" 95 50 "compile job --stacks: stacks without unnamed frames"
grep -h 'truncated user stack' "$TMP/cjs.txt" | sed 's/^/  /'
# (or, for a posix_spawn child in execve, its start in clone3: by address without libc6-dbg;
# or a new make's start-up in the loader)
read -r hit tot <<<"$(share "$TMP/cjs.folded" make "(^|;)(main|_dl_start)(;|\$)|^(__GI___clone3|__clone3|clone3|libc\\.so\\.6\\+0x[0-9a-f]+);(__spawni_child|libc\\.so\\.6\\+0x[0-9a-f]+);|^$ld;$ld(;|\$)|$entry")"
at_least "$hit" "$tot" 99 5 "compile job --stacks: make's stacks reach main (or a spawned child's clone3)"
read -r hit tot <<<"$(share "$TMP/cjs.folded" cc "(^|;)(__libc_start_call_main|libc\\.so\\.6\\+0x[0-9a-f]+|_dl_start)(;|\$)|^$ld;$ld(;|\$)|$entry")"
at_least "$hit" "$tot" 99 5 "compile job --stacks: the gcc driver's stacks reach libc's caller of main"

# bash waiting for its children (Debian builds it without frame pointers)
"$SCHEDPROF" trace --views schedules --stacks -f folded -o "$TMP/bash.folded" -- \
	bash -c 'for i in $(seq 100); do /bin/true; done' 2> "$TMP/bash.err" ||
	fail "bash run: $(tail -3 "$TMP/bash.err")"
# (its start-up's too, from main: a guest's 9p file system makes them block; and the loader's
# start-up before main, by address without libc6-dbg: once in a 6.12 guest 84 of 193 stacks
# missed main, and the 5 most frequent of them, 66 stacks, began there)
read -r hit tot <<<"$(share "$TMP/bash.folded" bash "(^|;)(main|_dl_start);|^$ld;$ld(;|\$)|$entry")"
read -r cmd _ <<<"$(share "$TMP/bash.folded" bash '(^|;)main;.*(;execute_command|;command_substitute)')"
at_least "$hit" "$tot" 95 50 "bash --stacks: its stacks reach main or the loader's start ($cmd through the command it runs)"
