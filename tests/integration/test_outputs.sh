#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Real runs through every output: a live trace writes format X and saves its run as JSON
# (--save); `report -f X` of that JSON must be byte-identical to the live X (table, with
# --stacks and --by comm, folded, pprof, svg, html). Folded totals equal the views' totals
# (count and time); `go tool pprof -top/-raw` of the pprof shows the table's total and top
# caller; `diff` of the run with itself is all zeros.
. "$(dirname "$0")/lib.sh"
require_bpf
if ! command -v go >/dev/null 2>&1; then
	skip_or_fail "go not found in PATH (install golang-go)"
fi

# trace_pair NAME ARGS...: a live run of $WORK in format/options ARGS, saved as $TMP/NAME.json
WORK=(pipe 1500)
trace_pair() {
	local name=$1
	shift
	"$SCHEDPROF" trace "$@" -o "$TMP/$name.live" --save "$TMP/$name.json" -- "$SPWORK" "${WORK[@]}" \
		>/dev/null 2>"$TMP/$name.err" || fail "trace $* exited $?: $(cat "$TMP/$name.err")"
	[ -s "$TMP/$name.json" ] || fail "--save wrote nothing"
	"$SCHEDPROF" report "$@" -o "$TMP/$name.report" "$TMP/$name.json" ||
		fail "report $* of the saved run exited $?"
	cmp -s "$TMP/$name.live" "$TMP/$name.report" ||
		fail "trace $* and report $* of its JSON differ:" \
			"$(diff "$TMP/$name.live" "$TMP/$name.report" | head -20)"
	pass "trace $* == report $* of the saved run ($(wc -c < "$TMP/$name.live") bytes)"
}

trace_pair table -f table
grep -qw "$(pipe_read_fn)" "$TMP/table.live" || fail "the table has no $(pipe_read_fn) row"
trace_pair stacks -f table --stacks -n 0
trace_pair bycomm -f table --by comm
trace_pair folded -f folded
trace_pair foldedtime -f folded --value time
trace_pair pprof -f pprof
trace_pair svg -f svg
trace_pair html -f html
trace_pair locks -f table --lock-stacks --sort count
trace_pair lockfold -f folded --views locks,schedules --value time
# a comm that is not UTF-8: the live report shows it as the saved JSON does (U+FFFD)
WORK=(comm $'sp\xff\xfe\x01bad')
trace_pair badcomm -f table --by comm
# (and its control byte escaped: \x01)
grep -qF $'sp\xef\xbf\xbd\xef\xbf\xbd\\x01bad: ' "$TMP/badcomm.live" || fail "the odd comm is not in the table"
trace_pair badfolded -f folded
WORK=(pipe 1500)
# -f json itself: the saved run and the live JSON are the same document
trace_pair json -f json

# folded totals == view totals, counts and times
J=$TMP/folded.json
"$SCHEDPROF" report -f folded "$J" > "$TMP/f.txt" || fail "report -f folded"
sum=$(awk '{ s += $NF } END { printf "%.0f\n", s }' "$TMP/f.txt")
total=$(jget "$J" 'd["schedules"]["total"]')
[ "$sum" = "$total" ] || fail "folded total $sum != schedules total $total"
"$SCHEDPROF" report -f folded --value time "$J" > "$TMP/t.txt" || fail "report -f folded --value time"
sum=$(awk '{ s += $NF } END { printf "%.0f\n", s }' "$TMP/t.txt")
want=$(jget "$J" 'sum(r["offcpu_ns"] for r in d["schedules"]["callers"])')
[ "$sum" = "$want" ] || fail "folded time total $sum != off-CPU total $want"
pass "folded totals: $total schedules, $want ns off-CPU"
if [ "$(jget "$J" '"profile" in d')" = True ]; then
	"$SCHEDPROF" report -f folded --views profile "$J" > "$TMP/p.txt" || fail "report -f folded --views profile"
	sum=$(awk '{ s += $NF } END { printf "%.0f\n", s }' "$TMP/p.txt")
	want=$(jget "$J" 'sum(r["samples"] for r in d["profile"]["functions"]) + d["profile"]["lost"]')
	[ "$sum" = "$want" ] || fail "profile folded total $sum != $want"
	pass "profile folded total: $want samples"
fi

# pprof read by go tool pprof: the same total and the same top caller as the table
tmpgo=$TMP/go
mkdir -p "$tmpgo"
export HOME="$tmpgo" GOCACHE="$tmpgo/cache" GOPATH="$tmpgo/path" PPROF_TMPDIR="$tmpgo"
export GOPROXY=off GOFLAGS= GOTOOLCHAIN=local GO111MODULE=off PPROF_BINARY_PATH="$tmpgo/nobin"
J=$TMP/pprof.json
total=$(jget "$J" 'd["schedules"]["total"]')
top=$(python3 - "$J" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
by = {}
for r in d["schedules"]["callers"]:
    by[r["caller"]] = by.get(r["caller"], 0) + r["count"]
# every caller with the largest count: go tool pprof orders a tie its own way
m = max(by.values())
print(m, "|".join(sorted(k for k in by if by[k] == m)))
PY
)
(cd "$tmpgo" && go tool pprof -symbolize=none -top -nodefraction=0 -sample_index=schedules \
	"$TMP/pprof.live") > "$TMP/top.txt" 2>"$TMP/go.err" || fail "go tool pprof -top: $(cat "$TMP/go.err")"
grep -q "Showing nodes accounting for $total, 100% of $total total" "$TMP/top.txt" ||
	fail "pprof total is not $total: $(head -12 "$TMP/top.txt")"
got=$(awk '$1 == "flat" && $2 == "flat%" { h = 1; next } h { print $1, $NF; exit }' "$TMP/top.txt")
case "|${top#* }|" in
*"|${got#* }|"*) [ "${got%% *}" = "${top%% *}" ] ;;
*) false ;;
esac || fail "pprof top row '$got', the table's top caller (count and names) is '$top'"
(cd "$tmpgo" && go tool pprof -symbolize=none -raw "$TMP/pprof.live") > "$TMP/raw.txt" 2>"$TMP/go.err" ||
	fail "go tool pprof -raw: $(cat "$TMP/go.err")"
grep -q '^schedules/count offcpu/nanoseconds$' "$TMP/raw.txt" || fail "pprof -raw sample types"
grep -q 'comm:\[sp_pipe_reader\]' "$TMP/raw.txt" || fail "pprof -raw has no comm label"
raw_total=$(awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 }
	s && $2 ~ /^[0-9]+:$/ { t += $1 } END { printf "%.0f\n", t }' "$TMP/raw.txt")
[ "$raw_total" = "$total" ] || fail "pprof -raw samples add up to $raw_total, not $total"
pass "go tool pprof: total $total, top '$top', -raw adds up"

# pid labels: the workload's stacks carry its process id. The shell writes its pid and execs
# spwork (same pid); the reader is spwork's child, so its pid is neither spwork's nor schedprof's.
"$SCHEDPROF" trace -f pprof -o "$TMP/pid.pb.gz" --save "$TMP/pid.json" -- \
	sh -c 'echo $$ > "$1"; exec "$2" pipe 500' sh "$TMP/work.pid" "$SPWORK" \
	>/dev/null 2>"$TMP/pid.err" &
sp_pid=$!
wait $sp_pid || fail "trace of the pid run exited $?: $(cat "$TMP/pid.err")"
work_pid=$(cat "$TMP/work.pid")
(cd "$tmpgo" && go tool pprof -symbolize=none -raw "$TMP/pid.pb.gz") > "$TMP/pidraw.txt" \
	2>"$TMP/go.err" || fail "go tool pprof -raw (pids): $(cat "$TMP/go.err")"
# "comm pid" per sample with a pid label (pprof prints the labels under the sample's line)
awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 }
	s && /^ +comm:\[/ { c = $0; sub(/^ +comm:\[/, "", c); sub(/\]$/, "", c) }
	s && /^ +pid:\[/ { p = $0; sub(/^ +pid:\[/, "", p); sub(/\]$/, "", p); print c, p }
	s && $2 ~ /^[0-9]+:$/ { c = "" }' "$TMP/pidraw.txt" > "$TMP/pids.txt"
reader=$(awk '$1 == "sp_pipe_reader" { print $2; exit }' "$TMP/pids.txt")
[ -n "$reader" ] || fail "no pid label on the sp_pipe_reader stacks: $(head -40 "$TMP/pidraw.txt")"
[ "$reader" -gt 0 ] || fail "reader pid label $reader is not > 0"
[ "$reader" != "$sp_pid" ] || fail "reader pid label $reader is schedprof's own pid"
[ "$reader" != "$work_pid" ] || fail "reader pid label $reader is spwork's (the reader's parent)"
[ "$(awk '$1 == "sp_pipe_reader" { print $2 }' "$TMP/pids.txt" | sort -u)" = "$reader" ] ||
	fail "sp_pipe_reader stacks carry several pids: $(cat "$TMP/pids.txt")"
awk -v p="$work_pid" '$1 == "spwork" && $2 == p { f = 1 } END { exit !f }' "$TMP/pids.txt" ||
	fail "no spwork stack labelled with spwork's pid $work_pid: $(cat "$TMP/pids.txt")"
awk '$2 !~ /^[1-9][0-9]*$/ { exit 1 }' "$TMP/pids.txt" || fail "a pid label is not > 0"
# the saved JSON holds the same pids
[ "$(jget "$TMP/pid.json" 'sorted({s["pid"] for r in d["schedules"]["callers"]
	for s in r["stacks"] if s["comm"] == "sp_pipe_reader"})')" = "[$reader]" ] ||
	fail "the saved JSON's sp_pipe_reader stacks are not pid $reader"
pass "pprof pid labels: reader $reader (spwork $work_pid, schedprof $sp_pid)"
# the profile view's call stacks (-g) carry the sampled process's pid too: two spinning
# processes (spwork and its child, both "sp_spin"), so two distinct pids, neither schedprof's
"$SCHEDPROF" trace --views profile -g -F 499 -f pprof -o "$TMP/ppid.pb.gz" -- \
	sh -c 'echo $$ > "$1"; exec "$2" spin 1' sh "$TMP/spin.pid" "$SPWORK" >/dev/null 2>"$TMP/pid.err" &
sp_pid=$!
wait $sp_pid || fail "profile trace of the pid run exited $?: $(cat "$TMP/pid.err")"
(cd "$tmpgo" && go tool pprof -symbolize=none -raw "$TMP/ppid.pb.gz") > "$TMP/ppidraw.txt" \
	2>"$TMP/go.err" || fail "go tool pprof -raw (profile pids): $(cat "$TMP/go.err")"
spin_pids=$(sed -n 's/^ *pid:\[\([0-9]*\)\]$/\1/p' "$TMP/ppidraw.txt" | sort -u)
grep -qx "$(cat "$TMP/spin.pid")" <<< "$spin_pids" ||
	fail "no profile sample labelled with the spinner's pid $(cat "$TMP/spin.pid"): $spin_pids"
[ "$(wc -l <<< "$spin_pids")" -ge 2 ] || fail "profile pid labels: only $spin_pids"
! grep -qx "$sp_pid" <<< "$spin_pids" || fail "a profile sample carries schedprof's pid"
pass "profile pprof pid labels: $(echo $spin_pids)"

# diff of a run with itself, and of two runs
"$SCHEDPROF" diff -f json "$J" "$J" > "$TMP/self.json" || fail "diff A A"
[ "$(jget "$TMP/self.json" 'sum(abs(r["delta"]) for v in d["views"] for r in v["rows"])')" = 0 ] ||
	fail "diff of a run with itself is not all zeros"
"$SCHEDPROF" diff "$TMP/table.json" "$J" > "$TMP/diff.txt" || fail "diff A B"
grep -q '^schedules ' "$TMP/diff.txt" || fail "diff has no schedules line"
pass "diff: a run against itself is all zeros"

# terminal safety: a process names itself with escape sequences and a
# newline; the table shows them escaped (no raw control byte reaches the terminal, no forged
# line), the saved run keeps the name exactly, and report renders the same table again
evil=$'ev\e[31mil\nX'
"$SCHEDPROF" trace --by comm --views schedules -f json -o "$TMP/evil.json" \
	-- "$SPWORK" comm "$evil" ||
	fail "trace of a renamed process exited $?"
[ "$(jget "$TMP/evil.json" '[c for r in d["schedules"]["callers"] for c in r["comms"] if c.startswith("ev")][0]')" = "$evil" ] ||
	fail "the saved run does not keep the comm as it was"
"$SCHEDPROF" report --by comm --stacks "$TMP/evil.json" > "$TMP/evil.txt" || fail "report exited $?"
! LC_ALL=C grep -q $'[\x01-\x09\x0b-\x1f\x7f]' "$TMP/evil.txt" || fail "a raw control byte in the table"
grep -qF 'ev\x1b[31mil\x0aX: ' "$TMP/evil.txt" || fail "the comm is not shown escaped: $(cat -v "$TMP/evil.txt")"
! grep -q '^X' "$TMP/evil.txt" || fail "the comm's newline forged a line"
"$SCHEDPROF" report -f folded "$TMP/evil.json" | grep -q '^ev?\[31mil?X;' ||
	fail "folded does not replace the control bytes"
pass "control bytes in a comm are escaped in the table and folded, kept in JSON"
