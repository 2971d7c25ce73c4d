#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# `report -f trace-event` read by a real client: speedscope (the npm package, its web app run
# from the local files in headless Chromium, offline) imports the file and shows every task as
# a profile of its own, named "COMM (pid P), COMM (tid T)", and draws the first one. Also: the
# same bytes after the JSON round trip (report -f json, then report -f trace-event), and valid
# JSON for python's reader; a file of 10^5 segments imports too.
# speedscope and Chromium are found as speedscope_lib.sh says.
# Needs SCHEDPROF and FIXTURES. Exit: 0 ok, 1 failure, 77 skip (no chromium, or no speedscope
# and no npm to install it; under CI=true either is a failure).
set -u
SCHEDPROF=${SCHEDPROF:?SCHEDPROF must name the built binary}
FIXTURES=${FIXTURES:?FIXTURES must name tests/fixtures}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/speedscope_lib.sh"

command -v python3 >/dev/null || fail "python3 is needed"
tmp=$(mktemp -d /tmp/schedprof-speedscope.XXXXXX) || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT
run=$FIXTURES/run_timeline.json

# the file, the same after the JSON round trip, valid JSON
"$SCHEDPROF" report -f trace-event -o "$tmp/te.json" "$run" || fail "report -f trace-event"
"$SCHEDPROF" report -f json -o "$tmp/back.json" "$run" || fail "report -f json"
"$SCHEDPROF" report -f trace-event -o "$tmp/te2.json" "$tmp/back.json" || fail "report (2)"
cmp -s "$tmp/te.json" "$tmp/te2.json" || fail "trace-event differs after the JSON round trip"
python3 - "$tmp/te.json" <<'PY' || fail "python cannot read the trace-event file"
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
ph = {}
for e in ev:
    ph[e["ph"]] = ph.get(e["ph"], 0) + 1
print("trace-event:", len(ev), "events", dict(sorted(ph.items())))
assert ph["X"] == 17 + 7 and ph["s"] == ph["f"] == 2 and ph["M"] == 10, ph
PY
echo "ok: the same bytes after the JSON round trip; valid JSON"

speedscope_setup
loader "$tmp/te.json" "$tmp/load.js"
url="file://$index#localProfilePath=$tmp/load.js"
chrome --virtual-time-budget=10000 --dump-dom "$url"
grep -q '<title>te.json - speedscope</title>' "$tmp/out" ||
	fail "speedscope did not import the file: $(grep -o '<title>[^<]*' "$tmp/out")"
# one profile per task and the critical path's track, in the profile list
for p in "make (pid 100), make (tid 100)" "cc1 (pid 200), cc1 (tid 200)" "as (pid 300), as (tid 300)" \
	"as (pid 300), as-helper (tid 301)" "critical path (pid 4194305), critical path (tid 4194305)"; do
	grep -qF "$p" "$tmp/out" || fail "speedscope shows no profile '$p'"
done
grep -qF '(1/5)' "$tmp/out" || fail "speedscope does not count 5 profiles"
echo "ok: speedscope imports the file and lists the 4 tasks and the critical path"

# the first profile (make) drawn in the flame chart: coloured slices under the toolbar
chrome --virtual-time-budget=10000 --screenshot="$tmp/shot.png" --window-size=1280,700 \
	--hide-scrollbars "$url"
[ -s "$tmp/shot.png" ] || fail "no screenshot"
[ -z "${SPEEDSCOPE_SCREENSHOT:-}" ] || cp "$tmp/shot.png" "$SPEEDSCOPE_SCREENSHOT" ||
	fail "cannot keep the screenshot"
stats=$(python3 "$here/pngstat.py" "$tmp/shot.png" --box 0,20,1280,170) || fail "pngstat"
echo "screenshot, flame chart: $stats"
sat=$(sed -n 's/.*saturated=\([0-9]*\).*/\1/p' <<<"$stats")
[ "$sat" -gt 50000 ] || fail "speedscope drew no slices ($sat coloured pixels)"

# a big file: 100 tasks x 1000 segments (and 10^5 flows and counters), one profile each
python3 "$here/gen_timeline.py" "$run" "$tmp/big.json" 100 1000 || fail "cannot generate the big run"
"$SCHEDPROF" report -f trace-event -o "$tmp/big.te.json" "$tmp/big.json" || fail "report -f trace-event (big)"
loader "$tmp/big.te.json" "$tmp/big.js"
chrome --virtual-time-budget=60000 --dump-dom "file://$index#localProfilePath=$tmp/big.js"
grep -q '<title>big.te.json - speedscope</title>' "$tmp/out" || fail "speedscope did not import the big file"
grep -qF '(1/101)' "$tmp/out" || fail "speedscope does not count 101 profiles in the big file"
grep -qF 'worker/0 (pid 1000), worker/8 (tid 1098)' "$tmp/out" || fail "no profile of task 1098"
echo "ok: speedscope imports $(stat -c %s "$tmp/big.te.json") bytes of 10^5 segments, 101 profiles"
echo "PASS: speedscope shows the trace-event file's tasks"
