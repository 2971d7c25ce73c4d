#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# With real BPF: user stacks in the schedules and locks views (--stacks), and user
# frames that keep their identity (object, build-id, offset) after their process exited, and
# C++ template and namespace functions demangled in the profile table (mangled in pprof).
. "$(dirname "$0")/lib.sh"
CONDWAIT=${CONDWAIT:?CONDWAIT must name the built tests/condwait}
CONDWAIT_STRIPPED=${CONDWAIT_STRIPPED:?CONDWAIT_STRIPPED must name its stripped copy}
MUTEXSTORM=${MUTEXSTORM:?MUTEXSTORM must name the built tests/mutexstorm}
require_bpf

# The known function, demangled, with its mangled name as frame_info.system_name.
WFW_RE='^ns_condwait::Waiter<int>::wait_for_work\(\)$'

# 1. A thread blocks in pthread_cond_wait (a futex) under ns_condwait::Waiter<int>::
#    wait_for_work(), 30 times: the futex row counts every wait exactly, its stacks add up to
#    the row, go from the kernel's frames to the user's, and reach the known function (in the
#    workload's binary) and its caller condwait_thread, although the C library it blocks in
#    has no frame pointers.
#    Twice: the way this kernel's probe chose, and with the task's mm and group leader read
#    through the trusted task pointer, as kernels without __arg_untrusted run it
#    (bpf/ustack.bpf.h, sp_utask_get()): the probe's answer overridden by a test build's
#    SCHEDPROF_TEST_FEATURES_OFF.
# The main thread posts every 10 ms: a waiter not yet back in pthread_cond_wait finds the work
# there and does not block (28 of 30 in a loaded TCG guest), so an emulated CPU posts every
# 10 x SLOW ms.
bin=$(readlink -f "$CONDWAIT")
for trusted in "" 1; do
	env ${trusted:+SCHEDPROF_TEST_FEATURES_OFF=arg_untrusted} "$SCHEDPROF" trace -v --views schedules --stacks -f json \
		-o "$TMP/cw.json" -- "$CONDWAIT" 30 $((10 * SLOW)) >/dev/null 2>"$TMP/cw.err" ||
		fail "schedprof exited $?: $(cat "$TMP/cw.err")"
	# the way taken is the probe's (or the override's) answer
	if [ -z "$trusted" ] && probed_has arg_untrusted "$TMP/cw.err"; then way="an untrusted"; else way="the trusted"; fi
	grep -q "read through $way task pointer" "$TMP/cw.err" ||
		fail "${trusted:+arg_untrusted taken as missing: }the task is not read through $way pointer"
	python3 - "$TMP/cw.json" "$bin" "$WFW_RE" <<'PY' || fail "schedules${trusted:+ (trusted task pointer)}: no user frames reaching wait_for_work under the futex row"
import json, re, sys
d = json.load(open(sys.argv[1]))
s = d["schedules"]
binary, wfw = sys.argv[2], re.compile(sys.argv[3])
rows = [r for r in s["callers"] if "futex" in r["caller"] and "condwait" in r["comms"]]
assert rows, [r["caller"] for r in s["callers"]]
r = max(rows, key=lambda r: r["count"])
# exact: the waiter waited 30 times (and may have blocked on the mutex besides)
assert r["comms"]["condwait"]["count"] >= 30, r["comms"]
# the stacks add up to the row (nothing missing here), user frames only add detail
if s["missing_stacks"] == 0:
    assert sum(st["count"] for st in r["stacks"]) == r["count"], (r["count"], [st["count"] for st in r["stacks"]])
hit = 0
for st in r["stacks"]:
    fr, ob = st["frames"], st["objects"]
    assert len(fr) == len(ob), st
    info = st.get("frame_info")
    assert info and len(info) == len(fr), "no frame_info parallel to the frames"
    user = [i for i, o in enumerate(ob) if o != "[kernel]" and not o.startswith("[") or o == "[vdso]"]
    if not user:
        continue
    k = user[0]
    # kernel frames first, each with its address; then the user frames
    assert k > 0 and all(o == "[kernel]" for o in ob[:k]), ob
    assert all(int(i.get("addr", "0"), 16) >= 0xffff000000000000 for i in info[:k]), info[:k]
    w = [i for i in range(k, len(fr)) if wfw.match(fr[i])]
    if w and ob[w[0]] == binary and w[0] + 1 < len(fr) and fr[w[0] + 1] == "condwait_thread":
        hit += st["count"]
        # demangled: the symbol table's name is kept (pprof's system_name)
        assert info[w[0]].get("system_name") == "_ZN11ns_condwait6WaiterIiE13wait_for_workEv", info[w[0]]
assert hit >= 30 // 2, ("waits whose stack reaches wait_for_work -> condwait_thread", hit,
                        [(st["count"], st["frames"]) for st in r["stacks"][:3]])
print(hit)
PY
	pass "schedules${trusted:+ (trusted task pointer)}: the futex row's stacks reach wait_for_work -> condwait_thread in $bin"
done

# the table prints the user frames under the row, the folded output in one line with the kernel's
"$SCHEDPROF" trace --views schedules --stacks -- "$CONDWAIT" 10 10 >"$TMP/cw.txt" 2>&1 ||
	fail "table run: $(tail -3 "$TMP/cw.txt")"
grep -Eq '^ +ns_condwait::Waiter<int>::wait_for_work\(\) ' \
	"$TMP/cw.txt" || fail "the table shows no wait_for_work frame: $(grep -c . "$TMP/cw.txt") lines"
"$SCHEDPROF" trace --views schedules -f folded -o "$TMP/cw.folded" -- "$CONDWAIT" 10 10 \
	>/dev/null 2>&1 || fail "folded run"
grep -E 'futex.*wait_for_work|wait_for_work.*futex' "$TMP/cw.folded" >/dev/null ||
	fail "no folded line holds both the futex wait and wait_for_work"
pass "table and folded output show the user frames with the kernel's"

# 2. Locks view: the writers' and the reader's contentions (on the pipe mutex, or on the
#    runqueue locks of their wake-ups: which ones depends on the machine's load) reach the
#    workload's pipe_writer/pipe_reader, called from the C library's write()/read(), which
#    have no frame pointers.
"$SCHEDPROF" trace --views locks --stacks -f json -o "$TMP/lk.json" -- "$MUTEXSTORM" pipe 4 2 \
	>/dev/null 2>"$TMP/lk.err" || fail "locks run exited $?: $(cat "$TMP/lk.err")"
ms=$(readlink -f "$MUTEXSTORM")
python3 - "$TMP/lk.json" "$ms" <<'PY' || fail "locks: no user frame under the lock rows"
import json, sys
d = json.load(open(sys.argv[1]))["locks"]
rows = [r for r in d["contentions"] if "mutexstorm" in r["comms"]]
assert rows, [(r["caller"], r["lock"]) for r in d["contentions"]]
n = total = 0
for r in rows:
    assert sum(s["count"] for s in r["stacks"]) <= r["count"]
    for s in r["stacks"]:
        if s["comm"] != "mutexstorm":
            continue
        total += s["count"]
        if any(f in ("pipe_writer", "pipe_reader") and o == sys.argv[2]
               for f, o in zip(s["frames"], s["objects"] or [])):
            n += s["count"]
assert total and n * 2 > total, (n, total)
print(n, total)
PY
pass "locks: the workload's contentions reach pipe_writer/pipe_reader in $ms"

# 3. A stripped binary that exited before the report: its frames are named
#    "<object>+0x<offset>" and keep their build-id and offset (profile view, -g).
strip_bin=$(readlink -f "$CONDWAIT_STRIPPED")
base=$(basename "$strip_bin")
bid=$(readelf -n "$strip_bin" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
[ -n "$bid" ] || fail "$strip_bin has no build-id"
"$SCHEDPROF" trace --views profile -g -F 999 -f json -o "$TMP/st.json" -- "$strip_bin" spin 400 \
	>/dev/null 2>&1 || fail "stripped run exited $?"
python3 - "$TMP/st.json" "$strip_bin" "$base" "$bid" <<'PY' || fail "stripped binary's frames are not named object+0xOFFSET with their build-id"
import json, re, sys
p = json.load(open(sys.argv[1]))["profile"]
path, base, bid = sys.argv[2:5]
pat = re.compile(re.escape(base) + r"\+0x([0-9a-f]+)$")
rows = [f for f in p["functions"] if f["object"] == path]
assert rows, "no row in " + path
named = [f for f in rows if pat.match(f["function"])]
assert sum(f["samples"] for f in named) * 2 > sum(f["samples"] for f in rows), [f["function"] for f in rows]
for f in named:
    info = f.get("info") or {}
    assert info.get("build_id") == bid, (f["function"], info)
    assert int(info.get("addr", "0"), 16) == int(pat.match(f["function"]).group(1), 16), (f["function"], info)
    assert "[unknown]" not in f["function"]
# the stacks' leaves too
assert all(f["stacks"] for f in named)
assert all(s["frames"][0] == f["function"] for f in named for s in f["stacks"])
print(len(named))
PY
pass "stripped $base: frames named $base+0x..., with build-id $bid, after it exited"

# its pprof: a mapping for the stripped object that carries its build-id, and locations in it
if command -v go >/dev/null; then
	"$SCHEDPROF" trace --views profile -g -F 999 -f pprof -o "$TMP/st.pb.gz" -- "$strip_bin" spin 300 \
		>/dev/null 2>&1 || fail "pprof run"
	(cd "$TMP" && go tool pprof -raw "$TMP/st.pb.gz" >"$TMP/raw.txt" 2>"$TMP/raw.err") ||
		fail "go tool pprof -raw: $(cat "$TMP/raw.err")"
	map=$(awk '/^Mappings/{m=1;next} m' "$TMP/raw.txt" | grep -F " $strip_bin " || true)
	[ -n "$map" ] || fail "no pprof mapping for $strip_bin: $(sed -n '/^Mappings/,$p' "$TMP/raw.txt")"
	id=$(sed -n 's/^ *\([0-9]*\):.*/\1/p' <<<"$map")
	grep -Eq "^ +[0-9]+: 0x[0-9a-f]+ M=$id( |$)" "$TMP/raw.txt" ||
		fail "no pprof location in mapping $id ($strip_bin)"
	grep -q " $bid" <<<"$map" || fail "pprof mapping of $base has no build-id $bid: $map"
	pass "pprof: mapping $id of $base carries build-id $bid, with locations in it"
else
	skip_or_fail "go (golang-go) is needed for go tool pprof"
fi

# 4. The PROFILE table of the C++ workload (not stripped): its samples are in the static
#    member function of a class template in a namespace, printed demangled (gcc may clone it,
#    "[clone .isra.0]", a suffix the demangler keeps); its pprof Function carries the mangled
#    name as system_name (go tool pprof -raw prints it as "s=0(mangled)").
SPIN_RE='ns_condwait::Spinner<long>::spin\(long\)( \[clone \.[a-z]+\.[0-9]+\])?'
"$SCHEDPROF" trace --views profile -g -F 499 -- "$CONDWAIT" spin 400 >"$TMP/sp.txt" 2>&1 ||
	fail "profile table run: $(tail -3 "$TMP/sp.txt")"
row=$(grep -m1 -E '^ +[0-9]+ +[0-9.]+% ' "$TMP/sp.txt" || true)
grep -Eq "^ +[0-9]+ +[0-9.]+% +$SPIN_RE +$bin\$" <<<"$row" ||
	fail "the profile's top row is not the demangled Spinner<long>::spin(long): $(cat "$TMP/sp.txt")"
grep -q '_ZN11ns_condwait' "$TMP/sp.txt" && fail "a mangled name in the profile table"
pass "profile table: top row $(sed -E 's/^ +[0-9]+ +[0-9.]+% +//; s/ +\/.*//' <<<"$row")"
if command -v go >/dev/null; then
	"$SCHEDPROF" trace --views profile -g -F 499 -f pprof -o "$TMP/sp.pb.gz" -- "$CONDWAIT" spin 300 \
		>/dev/null 2>&1 || fail "profile pprof run"
	(cd "$TMP" && go tool pprof -raw "$TMP/sp.pb.gz" >"$TMP/spraw.txt" 2>"$TMP/raw.err") ||
		fail "go tool pprof -raw: $(cat "$TMP/raw.err")"
	grep -Eq "^ +[0-9]+: 0x[0-9a-f]+ M=[0-9]+ $SPIN_RE .*s=0\\(_ZN11ns_condwait7SpinnerIlE4spinEl(\\.[a-z]+\\.[0-9]+)?\\)\$" \
		"$TMP/spraw.txt" ||
		fail "no pprof location of Spinner<long>::spin with its mangled system_name: $(grep -i spin "$TMP/spraw.txt")"
	pass "pprof: Spinner<long>::spin(long) with system_name _ZN11ns_condwait7SpinnerIlE4spinEl"
else
	skip_or_fail "go (golang-go) is needed for go tool pprof"
fi
