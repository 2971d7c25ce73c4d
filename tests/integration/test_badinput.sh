#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Bad input, table-driven: every option of trace, report and diff, and each kind of bad
# input. A case is one line of the table below:
#
#   NEED | STATUS | PATTERN | ARGS
#
# NEED is "-" (runs anywhere) or "bpf" (root and BPF: skipped without them, a failure under
# CI=true); STATUS the exit status; PATTERN an extended regular expression the first line of
# stderr must match ("" = stderr must be empty); ARGS the arguments of schedprof, through
# `eval` (so quotes work), where $D is an empty directory of the case's own, $IN holds bad runs
# made below, $A, $B, $FULL and $MIN are the fixture runs.
# Every case also checks:
#   - a failure (status 1 or 2) leaves $D empty: no output file, not even a partial or a
#     temporary one (outputs go to $D);
#   - a usage error (2) is two lines: the message and "Try 'schedprof ... --help'.";
#     a runtime error (1) or a loss under --strict (3) one line.
# Needs SCHEDPROF and FIXTURES (tests/fixtures); SPWORK for the BPF cases.
. "$(dirname "$0")/lib.sh"
FIXTURES=${FIXTURES:?FIXTURES must name tests/fixtures}
A=$FIXTURES/run_a.json B=$FIXTURES/run_b.json FULL=$FIXTURES/run_full.json
MIN=$FIXTURES/run_min.json
IN=$TMP/in
mkdir -p "$IN"

# ---- bad runs: duplicate keys (text edits: a JSON library would merge them) ----
mk() { sed "$1" "$MIN" > "$IN/$2"; cmp -s "$MIN" "$IN/$2" && fail "sed '$1' changed nothing"; }
mk 's/{"schema":"schedprof\/1",/{"schema":"schedprof\/1","schema":"schedprof\/1",/' dup_top.json
mk 's/"count":2,"offcpu_ns":50,"max_ns":30,"comms"/"count":2,"count":2,"offcpu_ns":50,"max_ns":30,"comms"/' dup_row.json
mk 's/"comms":{"cat":{"count":2,"offcpu_ns":50,"max_ns":30}}/"comms":{"cat":{"count":2,"offcpu_ns":50,"max_ns":30},"cat":{"count":2,"offcpu_ns":50,"max_ns":30}}/' dup_comm.json
mk 's/"total":3,/"total":3,"total":4,/' dup_total.json
# ---- bad runs: broken invariants (docs/json.md) ----
python3 - "$MIN" "$FULL" "$IN" <<'PY' || fail "cannot write the bad runs"
import json, sys
mn, full, out = sys.argv[1:]
def mut(src, name, fn):
    d = json.load(open(src))
    fn(d)
    json.dump(d, open(out + "/" + name, "w"))
def s(d, **kw): d["schedules"].update(kw)
mut(mn, "rows_over.json", lambda d: s(d, total=2, voluntary=1))
mut(mn, "classes.json", lambda d: s(d, voluntary=1))
mut(mn, "lost_over.json", lambda d: s(d, total=4, voluntary=3))
mut(mn, "stacks_over.json", lambda d: d["schedules"]["callers"][0]["stacks"][0].update(count=5))
mut(full, "prof_classes.json", lambda d: d["profile"].update(other=60))
mut(full, "prof_target.json", lambda d: d["profile"].update(target=840, other=60))
mut(full, "prof_stacks.json", lambda d: d["profile"]["functions"][0]["stacks"][0].update(count=10**9))
mut(full, "locks_total.json", lambda d: d["locks"].update(total=32))
mut(mn, "ncpus0.json", lambda d: d.update(ncpus=0))
mut(mn, "ncpus_neg.json", lambda d: d.update(ncpus=-2))
mut(mn, "ncpus_big.json", lambda d: d.update(ncpus=10**6))
mut(full, "prof_cpus0.json", lambda d: d["profile"].update(cpus=0))
mut(full, "locks_stacks.json", lambda d: d["locks"]["contentions"][0]["stacks"][0].update(count=99))
PY
: > "$IN/empty.json"
# ---- spools the agent must refuse: another user's, a world-writable one, a bad seq file ----
mkdir "$IN/sp-theirs" "$IN/sp-seq" "$IN/sp-seqmax"
chown nobody "$IN/sp-theirs" 2>/dev/null || true
mkdir -m 1777 "$IN/sp-1777"
chmod 700 "$IN/sp-seq" "$IN/sp-seqmax"
echo x > "$IN/sp-seq/seq"
echo 18446744073709551615 > "$IN/sp-seqmax/seq"

# a PID that is gone
sh -c 'exit 0' & DEAD=$!
wait $DEAD
# the largest limits: refused unless the machine has room for them (about 36 GiB of maps)
avail_kb=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)
BIG="--max-targets 16777216 --max-callers 16777216 --max-stacks 16777216 --max-samples 16777216"

CASES=$(cat <<'EOF'
# ---- main ----
-   | 2 | ^schedprof: give a command: trace, top, agent, report or diff$ |
-   | 2 | ^schedprof: unknown command 'frob'$ | frob
# ---- trace: the target (defect 9: "trace --" traced the whole system) ----
-   | 2 | ^schedprof trace: no command after '--' \(-- COMMAND \[ARGS\.\.\.\]\)$ | trace --
-   | 2 | no command after '--' | trace -o $D/out.txt --views schedules --
-   | 2 | ^schedprof trace: choose one target: -p, -t, -a or -- COMMAND$ | trace -p 1 -a
-   | 2 | choose one target | trace -p 1 -a -- true
-   | 2 | choose one target | trace -t 1 -o $D/out.txt -- true
-   | 2 | is a view list: choose views with --views schedules \(-v means --verbose\)$ | trace -v schedules -- true
# ---- trace --cgroup (deliver 1): a target of its own ----
-   | 2 | ^schedprof trace: --cgroup is a target of its own: not with -p$ | trace --cgroup x -p 1
-   | 2 | ^schedprof trace: --cgroup is a target of its own: not with -a$ | trace -o $D/out.txt --cgroup x -a
-   | 2 | ^schedprof trace: --cgroup needs a cgroup v2 path$ | trace --cgroup ''
-   | 2 | ^schedprof trace: --cgroup is a target of its own: not with -t$ | trace --cgroup x -t 1
# ---- trace -t (deliver 1): threads only, a target of its own ----
-   | 2 | ^schedprof trace: -p and -t exclude each other$ | trace -p 1 -t 1
-   | 2 | ^schedprof trace: -p and -t exclude each other$ | trace -o $D/out.txt -t 1 -p 1
-   | 2 | ^schedprof trace: -t: empty entry in '1,,2' \(TID\[,TID\.\.\.\]\)$ | trace -t 1,,2
-   | 2 | ^schedprof trace: -t: TID 3 is given twice$ | trace -t 3,4,3
-   | 2 | ^schedprof trace: -t: | trace -t 0
-   | 2 | ^schedprof trace: -t: | trace -t x
-   | 2 | ^schedprof trace: choose one target: -p, -t, -a or -- COMMAND$ | trace -t 1 -- true
-   | 2 | ^schedprof trace: choose one target: -p, -t, -a or -- COMMAND$ | trace -t 1 -a
# ---- trace -p (defect 9: 1,,2 and duplicates were accepted) ----
-   | 2 | ^schedprof trace: -p: empty entry in '1,,2' \(PID\[,PID\.\.\.\]\)$ | trace -p 1,,2
-   | 2 | -p: empty entry in ',1' | trace -p ,1
-   | 2 | -p: empty entry in '1,' | trace -p 1,
-   | 2 | -p: empty entry in '' | trace -p ''
-   | 2 | ^schedprof trace: -p: PID 1 is given twice$ | trace -p 1,1
-   | 2 | -p: PID 2 is given twice | trace -p 1 -p 2,3,2
-   | 2 | ^schedprof trace: -p: 0 is out of range \(1\.\.4194304\)$ | trace -p 0
-   | 2 | -p: 4194305 is out of range \(1\.\.4194304\) | trace -p 4194305
-   | 2 | -p: 99999999999999999999 is out of range | trace -p 99999999999999999999
-   | 2 | -p: 'abc' is not a number \(1\.\.4194304\) | trace -p abc
-   | 2 | -p: '0x10' is not a number | trace -p 0x10
-   | 2 | -p: '-5' is not a number | trace -p -5
-   | 2 | -p: ' 1' is not a number | trace -p ' 1'
-   | 2 | ^schedprof trace: unknown or incomplete option '-p'$ | trace -p
# ---- trace -d (defect 9: -d 0x10 was 16 s) ----
-   | 2 | ^schedprof trace: -d: '0x10' is not a number of seconds \(a decimal number such as 5 or 0\.5\)$ | trace -d 0x10 -a
-   | 2 | -d: '1e3' is not a number of seconds | trace -d 1e3 -a
-   | 2 | -d: 'inf' is not a number of seconds | trace -d inf -a
-   | 2 | -d: '-1' is not a number of seconds | trace -d -1 -a
-   | 2 | -d: '5s' is not a number of seconds | trace -d 5s -a
-   | 2 | -d: '' is not a number of seconds | trace -d '' -a
-   | 2 | -d: '\.' is not a number of seconds | trace -d . -a
-   | 2 | ^schedprof trace: -d: 0 is out of range \(more than 0, at most 10000000 seconds\)$ | trace -d 0 -a
-   | 2 | -d: 0\.0000000001 is out of range | trace -d 0.0000000001 -a
-   | 2 | -d: 10000001 is out of range | trace -d 10000001 -a
-   | 2 | unknown or incomplete option '-d' | trace -a -d
# ---- trace -F (defect 8: capped at kernel.perf_event_max_sample_rate) ----
-   | 2 | ^schedprof trace: -F: 0 is out of range \(1\.\.4294967295\)$ | trace -F 0 -a
-   | 2 | ^schedprof trace: -F: 100001 is out of range \(1\.\.[0-9]+ Hz(, the kernel's kernel\.perf_event_max_sample_rate)?\)$ | trace -F 100001 -a
-   | 2 | -F: 4294967295 is out of range | trace -F 4294967295 -- true
-   | 2 | -F: 'abc' is not a number | trace -F abc -a
-   | 2 | -F: '99\.5' is not a number | trace -F 99.5 -a
# ---- trace --max-* ----
-   | 2 | ^schedprof trace: --max-targets: 0 is out of range \(1\.\.16777216\)$ | trace --max-targets 0 -a
-   | 2 | ^schedprof trace: --max-callers: 16777217 is out of range \(1\.\.16777216\)$ | trace --max-callers 16777217 -a
-   | 2 | ^schedprof trace: --max-stacks: 'x' is not a number \(1\.\.16777216\)$ | trace --max-stacks x -a
-   | 2 | --max-samples: '-5' is not a number | trace --max-samples -5 -a
-   | 2 | --max-samples: '1k' is not a number | trace --max-samples 1k -a
# ---- trace: the render options, -o, --save and the flags ----
-   | 2 | ^schedprof trace: -n: 2147483647 is out of range \(0\.\.1000000\)$ | trace -n 2147483647 -a
-   | 2 | ^schedprof trace: -n: 'abc' is not a number \(0\.\.1000000\)$ | trace -n abc -a
-   | 2 | -n: 1000001 is out of range \(0\.\.1000000\) | trace -o $D/out.txt -n 1000001 -- true
-   | 2 | ^schedprof trace: unknown format 'bogus'$ | trace -f bogus -a
-   | 2 | ^schedprof trace: bad view list 'bogus' \(schedules, profile, locks, timeline\)$ | trace --views bogus -a
-   | 2 | ^schedprof trace: --stack-rows: 0 is out of range \(1\.\.1000\)$ | trace --stack-rows 0 -a
-   | 2 | --stack-rows: 1001 is out of range \(1\.\.1000\) | trace --stack-rows 1001 -a
-   | 2 | ^schedprof trace: bad --by 'pid' \(comm or caller\)$ | trace --by pid -a
-   | 2 | ^schedprof trace: bad --value 'bytes' \(count or time\)$ | trace --value bytes -a
-   | 2 | ^schedprof trace: bad --sort 'name' \(wait, count or max\)$ | trace --sort name -a
-   | 2 | ^schedprof trace: unknown or incomplete option '--stacks'$ | trace --stacks=1 -a
-   | 2 | unknown or incomplete option '--lock-stacks' | trace --lock-stacks=yes -a
-   | 2 | unknown or incomplete option '--strict' | trace --strict=1 -a
-   | 2 | unknown or incomplete option '--no-profile' | trace --no-profile=1 -a
-   | 2 | unknown or incomplete option '--all' | trace --all=1
-   | 2 | unknown or incomplete option '-1' | trace -g1 -a
-   | 2 | ^schedprof trace: --no-profile leaves no view to collect$ | trace --no-profile --views profile -a
-   | 2 | ^schedprof trace: unknown or incomplete option '-o'$ | trace -a -o
-   | 2 | unknown or incomplete option '--save' | trace -a --save
-   | 2 | unknown or incomplete option '--output' | trace -a --output
-   | 2 | unknown or incomplete option '--bogus' | trace --bogus
-   | 2 | unknown or incomplete option '-x' | trace -x -a
# ---- trace --timeline-buffer: every refusal in one form, naming the range ----
-   | 2 | ^schedprof trace: --timeline-buffer: 3K is out of range \(4K to 2G\)$ | trace --timeline --timeline-buffer 3K -a
-   | 2 | ^schedprof trace: --timeline-buffer: 0 is out of range \(4K to 2G\)$ | trace --timeline --timeline-buffer 0 -a
-   | 2 | ^schedprof trace: --timeline-buffer: 99999999999999999999 is out of range \(4K to 2G\)$ | trace --timeline --timeline-buffer 99999999999999999999 -a
-   | 2 | ^schedprof trace: --timeline-buffer: 2147483649 is out of range \(4K to 2G\)$ | trace --timeline --timeline-buffer 2147483649 -a
-   | 2 | ^schedprof trace: --timeline-buffer: '-1' is not a size \(4K to 2G: a number of bytes, or with K, M, G or T\)$ | trace --timeline --timeline-buffer -1 -a
-   | 2 | ^schedprof trace: --timeline-buffer: 'M' is not a size \(4K to 2G: | trace --timeline --timeline-buffer M -a
# ---- report ----
-   | 2 | ^schedprof report: give one saved run: FILE\.json$ | report
-   | 2 | give one saved run | report $A $B
-   | 2 | ^schedprof report: -n: 2147483647 is out of range \(0\.\.1000000\)$ | report -n 2147483647 $A
-   | 2 | -n: '-1' is not a number \(0\.\.1000000\) | report -n -1 $A
-   | 2 | unknown format 'bogus' | report -f bogus -o $D/out.txt $A
-   | 2 | --stack-rows: 0 is out of range | report --stack-rows 0 $A
-   | 2 | bad --by 'x' | report --by x $A
-   | 2 | bad --value 'x' | report --value x $A
-   | 2 | bad --sort 'x' | report --sort x $A
-   | 2 | bad view list 'x' | report --views x $A
-   | 2 | unknown or incomplete option '--strict' | report --strict=yes $A
-   | 2 | unknown or incomplete option '-o' | report $A -o
-   | 2 | is a view list | report -v schedules $A
# report: duplicate keys (defect 9)
-   | 1 | ^schedprof report: .*/dup_top\.json: duplicate key "schema"$ | report $IN/dup_top.json
-   | 1 | ^schedprof report: .*/dup_row\.json: schedules\.callers\[0\]: duplicate key "count"$ | report $IN/dup_row.json
-   | 1 | ^schedprof report: .*/dup_comm\.json: schedules\.callers\[0\]\.comms: duplicate key "cat"$ | report $IN/dup_comm.json
-   | 1 | ^schedprof report: .*/dup_total\.json: schedules: duplicate key "total"$ | report -o $D/out.txt $IN/dup_total.json
# report: rows beyond the total and the other invariants (defect 9)
-   | 1 | ^schedprof report: .*/rows_over\.json: schedules: the callers' counts \+ lost_rows \(3\) are not the total 2$ | report $IN/rows_over.json
-   | 1 | schedules: total 3 is not voluntary 1 \+ preempted 1 \+ idle 0$ | report $IN/classes.json
-   | 1 | schedules: the callers' counts \+ lost_rows \(3\) are not the total 4$ | report $IN/lost_over.json
-   | 1 | schedules\.callers\[0\]: its stacks count 5, more than its count 2$ | report -f folded -o $D/out.txt $IN/stacks_over.json
-   | 1 | profile: total 1000 is not idle 100 \+ target 850 \+ other 60$ | report $IN/prof_classes.json
-   | 1 | profile: the functions' samples \+ lost \(850\) are not the target 840$ | report $IN/prof_target.json
-   | 1 | profile\.functions\[0\]: its stacks count [0-9]+, more than its samples | report $IN/prof_stacks.json
-   | 1 | locks: the contentions' count \+ failed \+ lost \(31\) are not the total 32$ | report $IN/locks_total.json
-   | 1 | locks\.contentions\[0\]: its stacks count [0-9]+, more than its count \+ failed 31$ | report $IN/locks_stacks.json
-   | 1 | ^schedprof report: .*/ncpus0\.json: ncpus: expected an integer from 1 to 65536$ | report $IN/ncpus0.json
-   | 1 | ncpus: expected an integer from 1 to 65536$ | report -o $D/out.txt $IN/ncpus_neg.json
-   | 1 | ncpus: expected an integer from 1 to 65536$ | report $IN/ncpus_big.json
-   | 1 | profile\.cpus: expected an integer from 1 to 65536$ | report $IN/prof_cpus0.json
-   | 1 | ^schedprof report: .*/empty\.json: | report $IN/empty.json
-   | 1 | ^schedprof report: /nonexistent/run\.json: | report /nonexistent/run.json
-   | 1 | ^schedprof report: cannot write /nonexistent/dir/out\.txt: No such file or directory$ | report -o /nonexistent/dir/out.txt $A
# report --strict (deliver 6)
-   | 3 | ^schedprof report: --strict: the run lost data: 5 schedules in no row \(--max-callers\), 2 lock begins without an end$ | report --strict -o $D/out.txt $FULL
-   | 3 | --strict: the run lost data: 10 schedules without a stack$ | report --strict -o $D/out.txt $A
-   | 0 | | report --strict -o $D/out.txt $MIN
# ---- diff ----
-   | 2 | ^schedprof diff: standard input can be read once: give '-' for one run only$ | diff - -
-   | 2 | ^schedprof diff: give two saved runs: A\.json B\.json$ | diff $A
-   | 2 | give two saved runs | diff $A $B $A
-   | 2 | ^schedprof diff: diff writes table, json or html only \(-f\)$ | diff -f folded $A $B
-   | 2 | ^schedprof diff: -n: 'x' is not a number \(0\.\.1000000\)$ | diff -n x $A $B
-   | 2 | bad --value 'x' | diff --value x $A $B
-   | 2 | bad view list 'x' | diff --views x $A $B
-   | 2 | unknown or incomplete option '--stacks' | diff --stacks $A $B
-   | 2 | unknown or incomplete option '--strict' | diff --strict $A $B
-   | 1 | ^schedprof diff: .*/dup_row\.json: schedules\.callers\[0\]: duplicate key "count"$ | diff -o $D/out.txt $A $IN/dup_row.json
-   | 1 | ^schedprof diff: .*/rows_over\.json: schedules: the callers' counts | diff $IN/rows_over.json $A
# ---- agent: the sink and the spool, refused before tracing starts ----
-   | 2 | ^schedprof agent: --sink: ndjson: needs a FILE \(ndjson:FILE, or ndjson:- for standard output\)$ | agent --sink ndjson:
-   | 2 | ^schedprof agent: --sink: 'ndjson' is neither ndjson:FILE nor | agent --sink ndjson
-   | 2 | ^schedprof agent: --spool-limit: 1K is out of range \(4K to 1T\)$ | agent --spool-limit 1K
bpf | 1 | ^schedprof agent: --sink ndjson:/proc/version: cannot append to /proc/version: | agent --spool $IN/sp-ok1 -d 1 --sink ndjson:/proc/version
bpf | 1 | ^schedprof agent: --sink ndjson:/nonexistent/rows: cannot append to /nonexistent/rows: No such file or directory$ | agent --spool $IN/sp-ok2 -d 1 --sink ndjson:/nonexistent/rows
bpf | 1 | ^schedprof agent: cannot use the spool directory .*/sp-theirs: it belongs to uid [0-9]+, not to this agent's user \(uid 0\) | agent --spool $IN/sp-theirs -d 1 --sink ndjson:/dev/null
bpf | 1 | ^schedprof agent: cannot use the spool directory .*/sp-1777: it is writable by its group or others \(mode 1777\) | agent --spool $IN/sp-1777 -d 1 --sink ndjson:/dev/null
bpf | 1 | ^schedprof agent: cannot use the spool directory .*/sp-seq: its seq file holds 'x', not a sequence number | agent --spool $IN/sp-seq -d 1 --sink ndjson:/dev/null
bpf | 1 | its seq file holds '18446744073709551615', not a sequence number | agent --spool $IN/sp-seqmax -d 1 --sink ndjson:/dev/null
-   | 1 | ^schedprof diff: .*/ncpus0\.json: ncpus: expected an integer from 1 to 65536$ | diff $A $IN/ncpus0.json
# ---- with BPF: runtime errors before anything starts ----
bpf | 1 | ^schedprof: no such process: [0-9]+$ | trace -o $D/out.txt -p $DEAD
bpf | 127 | ^schedprof: cannot execute /nonexistent: | trace -o $D/out.txt -- /nonexistent
bpf | 1 | ^schedprof: no such thread: [0-9]+$ | trace -o $D/out.txt --save $D/run.json -t $DEAD
bpf | 1 | ^schedprof: --cgroup /nonexistent-cg: no such cgroup \(a path in the cgroup2 mount, or relative to it\)$ | trace -o $D/out.txt --cgroup /nonexistent-cg
bpf | 1 | ^schedprof: --cgroup no-such-cg: no such cgroup | trace -o $D/out.txt --save $D/run.json --cgroup no-such-cg
bpf | 1 | ^schedprof: --cgroup no-such-cg: no such cgroup | trace -o $D/out.txt --cgroup no-such-cg -- true
bpf | 1 | ^schedprof: --cgroup /proc: not a cgroup v2 directory \(a path in the cgroup2 mount, or relative to it\)$ | trace -o $D/out.txt --cgroup /proc
bpf | 1 | ^schedprof: --cgroup /proc/self/stat: Not a directory$ | trace -o $D/out.txt --cgroup /proc/self/stat
bpf | 1 | ^schedprof: with --max-targets 16777216 --max-callers 16777216 --max-stacks 16777216 --max-samples 16777216 the BPF maps would take about [0-9.]+ GiB when full, more than half of the [0-9.]+ GiB of available memory \(MemAvailable\): at most --max-targets [0-9]+ --max-callers [0-9]+ --max-stacks [0-9]+ --max-samples [0-9]+ fit$ | trace $BIG -g -o $D/out.json --save $D/run.json -- true
bpf | 1 | with --max-stacks 16777216 the BPF maps would take .* at most --max-stacks [0-9]+ fit$ | trace --max-stacks 16777216 -g -o $D/out.json -- true
# --strict in trace (deliver 6): a row map of 2 for a workload of 20 callers loses rows
bpf | 3 | ^schedprof: --strict: the run lost data: [0-9]+ schedules in no row \(--max-callers\) | trace --strict --views schedules --max-callers 2 -o $D/out.txt -- $SPWORK wait 20
bpf | 0 | | trace --strict --views schedules -o $D/out.txt -- true
EOF
)

n=0 bad=0 skipped=0
while IFS= read -r line; do
	case $line in '#'* | '') continue ;; esac
	need=$(sed 's/ *|.*//' <<< "$line")
	want=$(cut -d'|' -f2 <<< "$line" | tr -d ' ')
	pat=$(cut -d'|' -f3 <<< "$line" | sed 's/^ //; s/ $//')
	args=$(cut -d'|' -f4- <<< "$line" | sed 's/^ //')
	n=$((n + 1))
	if [ "$need" = bpf ]; then
		if [ "$(id -u)" != 0 ] || [ ! -r /sys/kernel/btf/vmlinux ]; then
			[ "${CI:-}" = true ] && fail "case $n needs root and BPF (CI=true: no skipping)"
			skipped=$((skipped + 1))
			continue
		fi
		if [[ $args == *'$BIG'* ]] && [ "${avail_kb:-0}" -gt $((72 * 1024 * 1024)) ]; then
			echo "note: case $n left out: MemAvailable is large enough for the maps"
			continue
		fi
	fi
	D=$TMP/case$n
	mkdir -p "$D"
	eval "set -- $args"
	# a case that starts tracing by mistake must not hang the suite
	timeout 60 "$SCHEDPROF" "$@" < /dev/null > "$TMP/out" 2> "$TMP/err"
	rc=$?
	why=
	first=$(head -n 1 "$TMP/err")
	lines=$(wc -l < "$TMP/err")
	if [ "$rc" != "$want" ]; then
		why="exit $rc, expected $want"
	elif [ -z "$pat" ] && [ -s "$TMP/err" ]; then
		why="stderr is not empty"
	elif [ -n "$pat" ] && ! grep -Eq -- "$pat" <<< "$first"; then
		why="first line does not match /$pat/"
	elif [ "$want" = 2 ] && { [ "$lines" != 2 ] ||
		! grep -Eqx "Try 'schedprof( [a-z]+)? --help'\." <(tail -n 1 "$TMP/err"); }; then
		why="a usage error is one line and the hint"
	elif { [ "$want" = 1 ] || [ "$want" = 3 ]; } && [ "$lines" != 1 ]; then
		why="not one line"
	elif { [ "$want" = 1 ] || [ "$want" = 2 ]; } && [ -n "$(ls -A "$D")" ]; then
		why="left files behind: $(ls -A "$D" | tr '\n' ' ')"
	fi
	if [ -n "$why" ]; then
		echo "FAIL case $n: schedprof $args: $why; stderr:" >&2
		sed 's/^/    /' "$TMP/err" >&2
		bad=$((bad + 1))
	fi
done <<< "$CASES"

# ---- a closed stdout (defect 9): a quiet exit 141 in every command, as a shell shows a tool
# killed by SIGPIPE; the pipe's read end is closed before schedprof starts ----
closed_stdout() {
	python3 - "$SCHEDPROF" "$@" <<'PY'
import os, subprocess, sys
r, w = os.pipe()
os.close(r)
p = subprocess.run(sys.argv[1:], stdout=w, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
print(p.returncode, len(p.stderr))
PY
}
for args in "report $A" "report -f json $FULL" "diff $A $B" "diff -f json $A $FULL"; do
	n=$((n + 1))
	# shellcheck disable=SC2086
	got=$(closed_stdout $args)
	[ "$got" = "141 0" ] || { echo "FAIL case $n: $args to a closed pipe: status, stderr bytes: $got" >&2; bad=$((bad + 1)); }
done
# the reader goes away in the middle of a report larger than a pipe holds (`| head -c 1`):
# 141 and quiet too, not "Input/output error"
big_run "$MIN" "$IN/big.json"
# head_closed ARGS...: schedprof ARGS into a pipe of 4 KiB whose reader reads one byte and
# closes it (`| head -c 1`, on a pipe smaller than the report); prints "STATUS STDERR-BYTES".
# With WARN_OK=1 the bytes leave out "warning:" lines: a system-wide trace may say, rightly,
# that it lost a stack to the machine's other tasks.
head_closed() {
	TMP=$TMP WARN_OK=${WARN_OK:-0} \
	python3 - "$SCHEDPROF" "$@" <<'PY'
import fcntl, os, subprocess, sys
r, w = os.pipe()
fcntl.fcntl(w, 1031, 4096)  # F_SETPIPE_SZ
err = open(os.environ["TMP"] + "/err", "wb")
p = subprocess.Popen(sys.argv[1:], stdout=w, stderr=err, stdin=subprocess.DEVNULL)
os.close(w)
os.read(r, 1)
os.close(r)
p.wait()
err.close()
text = open(os.environ["TMP"] + "/err", "rb").read()
if os.environ["WARN_OK"] == "1":
    text = b"".join(l for l in text.splitlines(True) if b": warning: " not in l)
print(p.returncode, len(text))
PY
}
for args in "report $IN/big.json -n 0" "report -f json $IN/big.json" "diff $IN/big.json $MIN -n 0"; do
	n=$((n + 1))
	# shellcheck disable=SC2086
	got=$(head_closed $args)
	[ "$got" = "141 0" ] || { echo "FAIL case $n: $args | head -c 1: status, stderr bytes: $got: $(cat "$TMP/err")" >&2; bad=$((bad + 1)); }
done
if [ "$(id -u)" = 0 ] && [ -r /sys/kernel/btf/vmlinux ]; then
	n=$((n + 1))
	# ... and trace, which then saves no copy of the run aside: the user closed the pipe
	mkdir "$TMP/tmpdir"
	got=$(TMPDIR=$TMP/tmpdir WARN_OK=1 head_closed trace -a -d 0.5 -n 0 --stacks)
	[ "$got" = "141 0" ] && [ -z "$(ls -A "$TMP/tmpdir")" ] ||
		{ echo "FAIL case $n: trace -a -n 0 --stacks | head -c 1: $got, left $(ls -A "$TMP/tmpdir"): $(cat "$TMP/err")" >&2; bad=$((bad + 1)); }
	n=$((n + 1))
	got=$(WARN_OK=1 head_closed trace -i 0.3 -a -d 1 -n 0 --stacks)
	[ "$got" = "141 0" ] || { echo "FAIL case $n: trace -i ... | head -c 1: $got: $(cat "$TMP/err")" >&2; bad=$((bad + 1)); }
	n=$((n + 1))
	got=$(closed_stdout trace --views schedules -- true)
	[ "$got" = "141 0" ] || { echo "FAIL case $n: trace to a closed pipe: $got" >&2; bad=$((bad + 1)); }
else
	[ "${CI:-}" = true ] && fail "the trace cases need root and BPF (CI=true: no skipping)"
	skipped=$((skipped + 1))
fi

[ "$n" -ge 60 ] || fail "only $n cases"
[ "$bad" = 0 ] || fail "$bad of $n bad-input cases failed"
pass "$n bad-input cases ($skipped skipped without root or BPF)"
