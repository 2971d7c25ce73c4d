#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The flame graphs (`report -f html` and `-f svg`) loaded in headless Chromium (Debian's
# chromium), offline: the DOM after the script ran has the expected frames as rendered text,
# the search (#search=) colours the matches and reports their share, the zoom (#zoom=) widens
# a frame to the full width and hides what is outside it; a screenshot is a non-blank PNG with
# the frame colours in it: kernel, user and pseudo frames apart. The height fits the frames
# drawn (run_deep, flame_check.py fit) and grows with a zoom; `diff -f html` draws red and blue
# differential graphs whose before/after values agree (flame_check.py diff). Needs SCHEDPROF and
# FIXTURES; python3 checks the PNGs (pngstat.py).
# Exit: 0 ok, 1 failure, 77 skip (no chromium; under CI=true a missing chromium is a failure).
set -u
SCHEDPROF=${SCHEDPROF:?SCHEDPROF must name the built binary}
FIXTURES=${FIXTURES:?FIXTURES must name tests/fixtures}

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then
	[ "${CI:-}" = true ] && fail "chromium not found (install Debian's chromium)"
	echo "SKIP: chromium not found" >&2
	exit 77
fi
command -v python3 >/dev/null || fail "python3 is needed to check the screenshot"
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d /tmp/schedprof-flame.XXXXXX) || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT

# chrome ARGS... URL: headless, offline, a throw-away profile; stdout in $tmp/out
chrome() {
	HOME="$tmp" timeout 90 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic \
		--no-first-run --disable-background-networking --disable-component-update \
		--disable-sync --disable-extensions --user-data-dir="$(mktemp -d "$tmp/profile.XXXXXX")" \
		"$@" >"$tmp/out" 2>"$tmp/chrome.log" || fail "chromium $* exited $?: $(tail -5 "$tmp/chrome.log")"
}

"$SCHEDPROF" report -f html -o "$tmp/a.html" "$FIXTURES/run_a.json" || fail "report -f html"
"$SCHEDPROF" report -f html -o "$tmp/full.html" "$FIXTURES/run_full.json" || fail "report -f html"
"$SCHEDPROF" report -f svg --views profile -o "$tmp/p.svg" "$FIXTURES/run_full.json" || fail "-f svg"

# the frames as rendered text elements (<text x=".." y="..">NAME</text>)
chrome --dump-dom "file://$tmp/a.html"
for name in all as cc1 make anon_pipe_read vfs_read entry_SYSCALL_64_after_hwframe; do
	grep -Eq "<text x=\"[0-9.]+\" y=\"[0-9]+\">$name</text>" "$tmp/out" ||
		fail "frame '$name' is not rendered in the HTML flame graph"
done
grep -q "<title>anon_pipe_read" "$tmp/out" && grep -q "<title>\[preempted\]" "$tmp/out" ||
	fail "no tooltips for anon_pipe_read and [preempted]"
grep -q '19990 schedules (49.98%), 3.990s off-CPU (43.36%)' "$tmp/out" ||
	fail "tooltip without count and shares"
[ "$(grep -c '<svg class="flame"' "$tmp/out")" = 1 ] || fail "not exactly one graph in a.html"
echo "ok: html: the expected frames are rendered, with tooltips"

# search: the script ran, coloured the matches and computed their share of all
chrome --dump-dom "file://$tmp/a.html#search=anon_pipe"
grep -q '>Matched: 90.2%</text>' "$tmp/out" || fail "search share is not 90.2%: $(grep -o 'Matched[^<]*' "$tmp/out")"
[ "$(grep -c 'fill="rgb(230,0,230)"' "$tmp/out")" = 3 ] || fail "search did not colour the 3 anon_pipe_read frames"
echo "ok: search colours the matches and reports 90.2%"

# zoom: do_wait fills the width, frames outside its stack are hidden, its parents dimmed
chrome --dump-dom "file://$tmp/a.html#zoom=do_wait"
full='<rect x="10.00" y="[0-9]+" width="1180.00" height="15" fill="[^"]+"></rect>'
grep -Eq "$full"'<text x="13.00" y="[0-9]+">do_wait</text>' "$tmp/out" ||
	fail "zoomed do_wait is not full width"
grep -Eq 'style="display: none;"><title>anon_pipe_read' "$tmp/out" || fail "zoom does not hide other stacks"
grep -q 'class="f parent"' "$tmp/out" || fail "zoom does not mark the parents"
grep -q 'class="ctl reset" x="10" y="20" style="">Reset zoom' "$tmp/out" || fail "no reset control after zoom"
echo "ok: zoom widens the frame and hides the rest"

# all three views of a full run; the standalone SVG
chrome --dump-dom "file://$tmp/full.html"
[ "$(grep -c '<svg class="flame"' "$tmp/out")" = 3 ] || fail "full.html has not 3 graphs"
for name in pipe_read main_loop clear_page_erms __libc_start_call_main; do
	grep -Eq "<text x=\"[0-9.]+\" y=\"[0-9]+\">$name</text>" "$tmp/out" || fail "'$name' missing in full.html"
done
chrome --dump-dom "file://$tmp/p.svg"
grep -Eq '<text x="[0-9.]+" y="[0-9]+">main_loop</text>' "$tmp/out" || fail "main_loop missing in the SVG"
grep -q 'Profile: on-CPU flame graph (width: samples)' "$tmp/out" || fail "SVG title"
echo "ok: the three views in one page; the standalone SVG"

# screenshot: a PNG, not blank, with the three frame families apart (orange kernel, green
# user, grey pseudo frames) and the blue comm frames; more of each than the legends' swatches
chrome --screenshot="$tmp/shot.png" --window-size=1280,1000 --hide-scrollbars "file://$tmp/full.html"
[ -s "$tmp/shot.png" ] || fail "no screenshot"
# FLAME_SCREENSHOT=FILE keeps it (meson puts it in the build directory, to look at)
[ -z "${FLAME_SCREENSHOT:-}" ] || cp "$tmp/shot.png" "$FLAME_SCREENSHOT" || fail "cannot keep the screenshot"
# families FILE: "orange=N green=N grey=N blue=N red=N dblue=N" (the ranges of format_flame.c)
families() {
	python3 - "$1" "$here" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
from pngstat import decode
w, h, bpp, rows = decode(sys.argv[1])
n = dict.fromkeys(("orange", "green", "grey", "blue", "red", "dblue"), 0)
colours = set()
for line in rows:
    for x in range(0, w * bpp, bpp):
        r, g, b = line[x], line[x + 1], line[x + 2]
        colours.add((r, g, b))
        if r >= 215 and 90 <= g < 180 and b < 50: n["orange"] += 1
        if 60 <= r < 130 and 170 <= g < 230 and 60 <= b < 110: n["green"] += 1
        if 165 <= r < 200 and r == g and b == r + 5: n["grey"] += 1
        if 90 <= r < 150 and 150 <= g < 210 and b >= 215: n["blue"] += 1
        # differential: red grew (255, c, c), blue shrank (c, c, 255), c < 232
        if r == 255 and g == b and g < 232: n["red"] += 1
        if b == 255 and r == g and r < 232: n["dblue"] += 1
print(f"{w}x{h} colours={len(colours)} " + " ".join(f"{k}={v}" for k, v in n.items()))
PY
}
# count NAME STATS: the pixels of that family
count() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$2"; }
stats=$(families "$tmp/shot.png") || fail "cannot read the screenshot"
echo "screenshot $stats"
for fam in orange green grey blue; do
	[ "$(count "$fam" "$stats")" -gt 1500 ] || fail "too few $fam pixels in the screenshot: $stats"
done
[ "$(sed 's/.*colours=\([0-9]*\).*/\1/' <<<"$stats")" -gt 20 ] || fail "the screenshot is blank: $stats"
echo "ok: kernel, user, pseudo and comm frames in their colours"

# the height fits what is drawn: run_deep has a 60-frame stack of 10 samples in 20000 (0.6 px
# wide) that set the height to 1068 px, most of it blank; now the deepest level at least 12 px
# wide in all does (depth 9: 254 px), the thin tower is hidden until a zoom widens it
"$SCHEDPROF" report -f svg --views profile -o "$tmp/deep.svg" "$FIXTURES/run_deep.json" || fail "-f svg run_deep"
"$SCHEDPROF" report -f html -o "$tmp/deep.html" "$FIXTURES/run_deep.json" || fail "-f html run_deep"
for f in deep.svg deep.html full.html a.html; do
	python3 "$here/flame_check.py" fit "$tmp/$f" || fail "$f: the height does not fit the drawn frames"
done
grep -q '<svg class="flame" [^>]*height="254"' "$tmp/deep.svg" || fail "deep.svg is not 254 px high"
chrome --screenshot="$tmp/deep.png" --window-size=1200,254 --hide-scrollbars "file://$tmp/deep.svg"
# no blank band: the top row of frames (y 66..81, clear_page_erms) is drawn
top=$(python3 "$here/pngstat.py" "$tmp/deep.png" --box 0,67,1200,80) || fail "pngstat"
echo "top frame row of deep.svg: $top"
[ "$(sed 's/.*saturated=\([0-9]*\).*/\1/' <<<"$top")" -gt 2000 ] || fail "the top row of deep.svg is blank: $top"
# zoomed into the tower, the graph grows to its 62 levels (66 + 62 x 16 + 28 px)
chrome --dump-dom "file://$tmp/deep.svg#zoom=recurse"
grep -Eq '<svg [^>]*class="flame"[^>]*height="1086"' "$tmp/out" || fail "zoom into the deep tower does not fit its height: $(grep -o '<svg[^>]*>' "$tmp/out")"
grep -Eq 'data-d="61"( style="")?><title>recurse' "$tmp/out" || fail "the deepest recurse frame is not shown after the zoom"
grep -Eq '<text class="details cut" [^>]*(/>|></text>)' "$tmp/out" || fail "the note of hidden frames stays after the zoom shows them all"
chrome --dump-dom "file://$tmp/deep.svg"
grep -q '<text class="details cut" [^>]*>52 frames of thin, deeper stacks hidden' "$tmp/out" || fail "no note of the 52 hidden frames"
echo "ok: the height fits the frames drawn, and grows with a zoom into a deep stack"

# diff -f html: the after run's stacks red/blue by change, then the before run's
"$SCHEDPROF" diff -f html -o "$tmp/diff.html" "$FIXTURES/run_a.json" "$FIXTURES/run_b.json" || fail "diff -f html"
python3 "$here/flame_check.py" diff "$tmp/diff.html" || fail "the differential graphs disagree"
chrome --dump-dom "file://$tmp/diff.html"
[ "$(grep -c '<svg class="flame"[^>]*data-diff=' "$tmp/out")" = 2 ] || fail "diff.html has not 2 differential graphs"
grep -Fq "$(printf '[preempted]\nbefore: 1500 schedules\nafter: 1800 schedules\nchange: +300 (+20.0%%)')" "$tmp/out" ||
	fail "no before/after/change tooltip for cc1's [preempted]"
grep -q 'change: -16099 (gone: only in the before run)' "$tmp/out" || fail "no gone frame in the before graph"
grep -q 'change: +17 (new: only in the after run)' "$tmp/out" || fail "no new frame in the after graph"
chrome --screenshot="$tmp/diff.png" --window-size=1280,700 --hide-scrollbars "file://$tmp/diff.html"
[ -z "${FLAME_DIFF_SCREENSHOT:-}" ] || cp "$tmp/diff.png" "$FLAME_DIFF_SCREENSHOT" || fail "cannot keep the diff screenshot"
stats=$(families "$tmp/diff.png") || fail "cannot read the diff screenshot"
echo "diff screenshot $stats"
[ "$(count red "$stats")" -gt 2000 ] && [ "$(count dblue "$stats")" -gt 2000 ] ||
	fail "the differential graphs lack red or blue: $stats"
echo "ok: diff -f html: red and blue frames, before/after/change in the tooltips"
echo "PASS: the flame graphs render in Chromium"
