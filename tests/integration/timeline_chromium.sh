#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The timeline page (`report -f timeline`) in headless Chromium (Debian's chromium), offline:
# the same bytes from the fixture run and from its JSON round trip (report -f json, then
# report -f timeline); the DOM has every task's lane label and the tooltips; a screenshot is a
# PNG with the states' colours, the CPU use and the critical path's outline in it; a generated
# run of 3 x 10^5 segments renders in bounded size and time and still draws every lane. A run
# without a timeline: one error line and the usage exit code. Needs SCHEDPROF and FIXTURES;
# python3 generates the big run and checks the PNGs.
# Exit: 0 ok, 1 failure, 77 skip (no chromium; under CI=true a missing chromium is a failure).
set -u
SCHEDPROF=${SCHEDPROF:?SCHEDPROF must name the built binary}
FIXTURES=${FIXTURES:?FIXTURES must name tests/fixtures}
here=$(cd "$(dirname "$0")" && pwd)

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

command -v python3 >/dev/null || fail "python3 is needed to check the screenshots"
tmp=$(mktemp -d /tmp/schedprof-timeline.XXXXXX) || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT
run=$FIXTURES/run_timeline.json

# a run without a timeline: one line, exit 2 (usage), nothing written
"$SCHEDPROF" report -f timeline -o "$tmp/none.html" "$FIXTURES/run_a.json" 2>"$tmp/err"
rc=$?
[ "$rc" = 2 ] || fail "report -f timeline of a run without a timeline exited $rc, not 2"
grep -qx "schedprof report: $FIXTURES/run_a.json: no timeline in this run: trace with --timeline" \
	"$tmp/err" || fail "not the error line: $(cat "$tmp/err")"
[ ! -e "$tmp/none.html" ] || fail "a page was written for a run without a timeline"
"$SCHEDPROF" report -f trace-event "$FIXTURES/run_full.json" >"$tmp/none.json" 2>"$tmp/err"
rc=$?
[ "$rc" = 2 ] && [ ! -s "$tmp/none.json" ] && grep -q "no timeline in this run" "$tmp/err" ||
	fail "report -f trace-event of a run without a timeline: exit $rc, $(cat "$tmp/err")"
# and trace refuses to start one whose output needs a timeline it does not record
for fmt in timeline trace-event; do
	"$SCHEDPROF" trace -f "$fmt" -o "$tmp/t.out" -- true 2>"$tmp/err"
	rc=$?
	[ "$rc" = 2 ] && [ ! -e "$tmp/t.out" ] &&
		grep -qx "schedprof trace: this format draws the timeline: trace with --timeline" "$tmp/err" ||
		fail "trace -f $fmt without --timeline: exit $rc, $(cat "$tmp/err")"
done
echo "ok: a run without a timeline is refused with one line, exit 2"

# the round trip: the run through -f json renders the same bytes
"$SCHEDPROF" report -f timeline -o "$tmp/a.html" "$run" || fail "report -f timeline"
"$SCHEDPROF" report -f json -o "$tmp/back.json" "$run" || fail "report -f json"
"$SCHEDPROF" report -f timeline -o "$tmp/b.html" "$tmp/back.json" || fail "report -f timeline (2)"
cmp -s "$tmp/a.html" "$tmp/b.html" || fail "the page differs after the JSON round trip"
"$SCHEDPROF" report -f timeline -o "$tmp/c.html" "$run" || fail "report -f timeline (3)"
cmp -s "$tmp/a.html" "$tmp/c.html" || fail "two renderings of one run differ"
echo "ok: the page is the same after the JSON round trip, and on every run"

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then
	[ "${CI:-}" = true ] && fail "chromium not found (install Debian's chromium)"
	echo "SKIP: chromium not found" >&2
	exit 77
fi

# chrome ARGS... URL: headless, offline, a throw-away profile; stdout in $tmp/out
chrome() {
	HOME="$tmp" timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic \
		--no-first-run --disable-background-networking --disable-component-update \
		--disable-sync --disable-extensions --user-data-dir="$(mktemp -d "$tmp/profile.XXXXXX")" \
		"$@" >"$tmp/out" 2>"$tmp/chrome.log" || fail "chromium $* exited $?: $(tail -5 "$tmp/chrome.log")"
}

# the DOM: every task's lane label as SVG text, the tooltips, one SVG
chrome --dump-dom "file://$tmp/a.html"
for label in "make 100" "cc1 200" "as 300" "as-helper 301" "critical path" "CPU use"; do
	grep -Eq "<text class=\"lbl( grp)?\" x=\"10\" y=\"[0-9]+\">$label</text>" "$tmp/out" ||
		fail "no label '$label' in the page"
done
grep -q '<title>as 300: blocked 1.0ms in anon_pipe_read (pipe), woken by cc1 200 from anon_pipe_write, at 2.0ms</title>' \
	"$tmp/out" || fail "no tooltip for as's pipe read"
grep -q '<title>critical path: as 300 running 5.9ms at 3.1ms</title>' "$tmp/out" ||
	fail "no tooltip on the critical path's lane"
[ "$(grep -c '<svg class="timeline"' "$tmp/out")" = 1 ] || fail "not exactly one SVG"
echo "ok: the lanes' labels and the tooltips are in the DOM"

# screenshot: the states' colours, the CPU use's green and the critical path's red outline
# (colours of format_timeline.c); TIMELINE_SCREENSHOT=FILE keeps it
chrome --screenshot="$tmp/shot.png" --window-size=1280,800 --hide-scrollbars "file://$tmp/a.html"
[ -s "$tmp/shot.png" ] || fail "no screenshot"
[ -z "${TIMELINE_SCREENSHOT:-}" ] || cp "$tmp/shot.png" "$TIMELINE_SCREENSHOT" ||
	fail "cannot keep the screenshot"
stats=$(python3 "$here/pngstat.py" "$tmp/shot.png" '#3a9a3a' '#f0a030' '#c8d2e0' '#8fd18f' '#d0203a') ||
	fail "pngstat"
echo "screenshot: $stats"
px() { sed -n "s/.*$1=\([0-9]*\).*/\1/p" <<<"$stats"; }
[ "$(px colours)" -gt 20 ] || fail "the screenshot is blank"
[ "$(px '#3a9a3a')" -gt 10000 ] || fail "too few running (green) pixels"
[ "$(px '#f0a030')" -gt 300 ] || fail "too few runnable (orange) pixels"
[ "$(px '#c8d2e0')" -gt 10000 ] || fail "too few blocked (blue-grey) pixels"
[ "$(px '#8fd18f')" -gt 20000 ] || fail "too few CPU use (light green) pixels"
[ "$(px '#d0203a')" -gt 1000 ] || fail "too few critical path (red) pixels"
echo "ok: the screenshot shows the lanes, the CPU use and the critical path"

# a big run: 300 tasks x 1000 segments of 1-3 us, starting 1 us apart (2.3 ms: 2.3 us a pixel
# column), generated from the fixture's run
python3 "$here/gen_timeline.py" "$run" "$tmp/big.json" 300 1000 || fail "cannot generate the big run"
start=$(date +%s%N)
"$SCHEDPROF" report -f timeline -o "$tmp/big.html" "$tmp/big.json" 2>"$tmp/err" ||
	fail "report -f timeline of the big run: $(cat "$tmp/err")"
ms=$((($(date +%s%N) - start) / 1000000))
size=$(stat -c %s "$tmp/big.html")
lanes=$(grep -c '^<text class="lbl[ a-z]*" x="10" y="[0-9]*">worker/' "$tmp/big.html")
echo "big run: 300 tasks, 300000 segments: $size bytes of HTML in $ms ms"
[ "$lanes" = 300 ] || fail "$lanes lanes, not 300"
# at most one rect per pixel column (1000) and lane
rects=$(grep -c '^<rect x="[0-9]*" y="[0-9]*" width="[0-9]*" height="11"' "$tmp/big.html")
[ "$rects" -le $((301 * 1000)) ] || fail "$rects rects for 301 lanes of 1000 columns"
# the worst case: every column of every lane a rect of its own with a merged tooltip (~100
# bytes), as here where the segments are as short as the columns
[ "$size" -lt $((40 * 1024 * 1024)) ] || fail "the page of the big run is $size bytes"
chrome --screenshot="$tmp/big.png" --window-size=1280,2000 --hide-scrollbars "file://$tmp/big.html"
stats=$(python3 "$here/pngstat.py" "$tmp/big.png" --box 190,200,1190,2000 '#3a9a3a' '#f0a030' '#c8d2e0') ||
	fail "pngstat"
echo "big screenshot, lanes: $stats"
[ "$(px saturated)" -gt 100000 ] || fail "the big run's lanes are not drawn"
echo "PASS: the timeline page renders in Chromium"
