#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The flame graphs (`report -f html` and `-f svg`) loaded in headless Chromium (Debian's
# chromium), offline: the DOM after the script ran has the expected frames as rendered text,
# the search (#search=) colours the matches and reports their share, the zoom (#zoom=) widens
# a frame to the full width and hides what is outside it; a screenshot is a non-blank PNG with
# the frame colours in it. Needs SCHEDPROF and FIXTURES; python3 checks the PNG.
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

# screenshot: a PNG, not blank, with the flame colours (orange kernel, blue comm frames)
chrome --screenshot="$tmp/shot.png" --window-size=1280,900 --hide-scrollbars "file://$tmp/full.html"
[ -s "$tmp/shot.png" ] || fail "no screenshot"
# FLAME_SCREENSHOT=FILE keeps it (meson puts it in the build directory, to look at)
[ -z "${FLAME_SCREENSHOT:-}" ] || cp "$tmp/shot.png" "$FLAME_SCREENSHOT" || fail "cannot keep the screenshot"
python3 - "$tmp/shot.png" <<'PY' || fail "the screenshot is blank or has no flame graph colours"
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, hdr = 8, b"", None
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        hdr = struct.unpack(">IIBBBBB", body)
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
w, h, depth, ctype = hdr[:4]
assert depth == 8 and ctype in (2, 6), hdr
bpp = 3 if ctype == 2 else 4
raw, stride = zlib.decompress(idat), w * bpp
prev, rows, i = bytearray(stride), [], 0
for _ in range(h):
    f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
    i += 1 + stride
    for x in range(stride):
        a = line[x - bpp] if x >= bpp else 0
        b, c = prev[x], (prev[x - bpp] if x >= bpp else 0)
        if f == 1: line[x] = (line[x] + a) & 255
        elif f == 2: line[x] = (line[x] + b) & 255
        elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    rows.append(bytes(line))
    prev = line
colors, orange, blue = set(), 0, 0
for line in rows:
    for x in range(0, stride, bpp):
        r, g, b = line[x], line[x + 1], line[x + 2]
        colors.add((r, g, b))
        if r >= 205 and 80 <= g <= 200 and b < 55: orange += 1
        if 90 <= r < 150 and 150 <= g < 210 and b >= 215: blue += 1
print(f"screenshot {w}x{h}: {len(colors)} colours, {orange} orange and {blue} blue pixels")
assert len(colors) > 20 and orange > 2000 and blue > 2000
PY
echo "PASS: the flame graphs render in Chromium"
