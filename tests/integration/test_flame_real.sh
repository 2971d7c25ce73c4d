#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The flame graphs of a real run: a make -j2 of the bundled compile job, profiled
# at 997 Hz with call stacks (a few thousand samples, so one deep stack of a few samples is a
# sliver far below a pixel). Every graph's height fits its deepest level at least 12 px wide
# in all (flame_check.py fit), the thin towers above it are hidden, never cut from the file; kernel
# and user frames are there in their colours; and `diff -f html` of that run against a second
# one gives matching after and before graphs (flame_check.py diff).
. "$(dirname "$0")/lib.sh"
require_bpf
here=$(cd "$(dirname "$0")" && pwd)
job=$(cd "$here/../../examples/compile-job" && pwd)
command -v make >/dev/null && command -v gcc >/dev/null || skip_or_fail "needs make and gcc"

export OUT=$TMP/proj
make -s -C "$job" OUT="$OUT" "$OUT/.generated" >/dev/null || fail "cannot generate the compile job"
trace_job() { # trace_job NAME: a clean make -j2, profiled with stacks, saved as $TMP/NAME.json
	make -s -C "$job" OUT="$OUT" clean >/dev/null 2>&1
	make -s -C "$job" OUT="$OUT" "$OUT/.generated" >/dev/null || fail "cannot generate the job"
	"$SCHEDPROF" trace --views schedules,profile -F 997 -g --stacks -f json -o "$TMP/$1.json" \
		-- make -s -j2 -C "$job" OUT="$OUT" CFLAGS=-O2 || fail "schedprof exited $?"
}
trace_job a
"$SCHEDPROF" report -f html -o "$TMP/a.html" "$TMP/a.json" || fail "report -f html"
"$SCHEDPROF" report -f svg --views profile -o "$TMP/a.svg" "$TMP/a.json" || fail "report -f svg"
for f in a.html a.svg; do
	python3 "$here/flame_check.py" fit "$TMP/$f" || fail "$f: the height does not fit the frames drawn"
done
# what the height would be if every frame in the file counted (the rule before the fit)
python3 - "$TMP/a.svg" <<'PY' || fail "the profile graph lacks kernel or user frames"
import re, sys
doc = open(sys.argv[1]).read()
h = int(re.search(r'<svg [^>]*height="(\d+)"', doc).group(1))
ds = [int(d) for d in re.findall(r'data-d="(\d+)"', doc)]
kernel = user = 0
for r, g, b in re.findall(r'<g class="f"[^>]*><title>[^<]*</title><rect [^>]*fill="rgb\((\d+),(\d+),(\d+)\)"', doc):
    r, g, b = int(r), int(g), int(b)
    kernel += r >= 215 and 90 <= g < 180 and b < 50
    user += 60 <= r < 130 and 170 <= g < 230 and 60 <= b < 110
print(f"profile: {h} px high; {66 + (max(ds) + 1) * 16 + 28} px if every frame in the file "
      f"counted; {kernel} kernel and {user} user frames")
assert kernel > 0 and user > 0
PY
pass "the compile job's flame graphs fit their height; kernel and user frames in their colours"

trace_job b
"$SCHEDPROF" diff -f html -o "$TMP/diff.html" "$TMP/a.json" "$TMP/b.json" || fail "diff -f html"
python3 "$here/flame_check.py" diff "$TMP/diff.html" || fail "the differential graphs disagree"
python3 "$here/flame_check.py" fit "$TMP/diff.html" || fail "diff.html: the height does not fit"
pass "diff -f html of two compile-job runs: after and before graphs agree"
