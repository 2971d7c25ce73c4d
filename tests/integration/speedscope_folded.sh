#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# `report -f folded` read by a real client: speedscope (the npm package in
# headless Chromium, offline; see speedscope_lib.sh) imports the collapsed stacks of saved runs
# and shows the same total as the table. Read from the page speedscope draws, its sandwich
# view (the table of every function with its total and self weight): the file's name in the
# title, one row per distinct frame, the self weights adding up to the table's total, the
# comms (the roots) too, and the table's top row as the heaviest leaf. Runs: run_a
# (schedules, kernel stacks), run_full (profile, kernel and user frames: "_[k]" marks),
# run_user (user frames with C++ names, inlined and unresolved "cc1+0x..." frames).
# Needs SCHEDPROF and FIXTURES. Exit: 0 ok, 1 failure, 77 skip (no chromium, or no speedscope
# and no npm to install it; under CI=true either is a failure).
set -u
SCHEDPROF=${SCHEDPROF:?SCHEDPROF must name the built binary}
FIXTURES=${FIXTURES:?FIXTURES must name tests/fixtures}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/speedscope_lib.sh"

command -v python3 >/dev/null || fail "python3 is needed"
tmp=$(mktemp -d /tmp/schedprof-ssfolded.XXXXXX) || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT
speedscope_setup

# page_text FILE: the words of a dumped page (what speedscope drew instead of the table)
page_text() {
	python3 -c 'import re, sys; t = re.sub(r"<(script|style)[^>]*>.*?</\1>|<[^>]+>", " ", open(sys.argv[1]).read(), flags=re.S); print(" ".join(t.split())[:300])' "$1"
}

# check NAME VIEW RUN: the table's total of VIEW in RUN, and what speedscope shows of its
# folded stacks
check() {
	local name=$1 view=$2 run=$FIXTURES/$3 want

	"$SCHEDPROF" report -n 0 --views "$view" "$run" >"$tmp/$name.table" || fail "$name: report"
	# the table: its rows' counts, plus what the notes say is in no row; for the schedules
	# view the header's total must agree
	want=$(python3 - "$tmp/$name.table" "$view" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
view = sys.argv[2]
# a row: COUNT SHARE ... then the caller last (schedules), or the function then the object
row = r"^ +(\d+) +[\d.]+% +(.*)$"
rows = []
for m in re.finditer(row, text, re.M):
    rest = m.group(2).split()
    rows.append((int(m.group(1)), rest[-1] if view == "schedules" else " ".join(rest[:-1])))
total = sum(c for c, _ in rows)
lost = re.search(r"note: (\d+) (?:samples|schedules) are in the totals but in no row", text)
total += int(lost.group(1)) if lost else 0
head = re.search(r"^schedules: (\d+) total", text, re.M)
if view == "schedules" and int(head.group(1)) != total:
    sys.exit("rows + lost = %d, not the header's %s" % (total, head.group(1)))
print(total, rows[0][0], rows[0][1])
PY
	) || fail "$name: cannot read the table"
	"$SCHEDPROF" report -f folded --views "$view" -o "$tmp/$name.folded" "$run" ||
		fail "$name: report -f folded"
	loader "$tmp/$name.folded" "$tmp/$name.js"
	# tall enough for every row of the sandwich table (it draws only the rows in view); on a
	# loaded machine the page may be dumped before the table is drawn (twice, three budgets in a
	# row failed while other tests ran beside): try again, longer, and after a pause, saying
	# what chromium said
	for budget in 10000 30000 60000 0 120000; do
		[ "$budget" = 0 ] && { sleep 10; continue; }
		chrome --virtual-time-budget=$budget --window-size=1280,6000 --dump-dom \
			"file://$index#localProfilePath=$tmp/$name.js&view=sandwich"
		grep -q '</span>[^<]*</td></tr>' "$tmp/out" && break
		echo "$name: no sandwich table after a budget of $budget ms ($(wc -c <"$tmp/out") bytes:" \
			"$(page_text "$tmp/out"); chromium: $(tail -2 "$tmp/chrome.log" | tr '\n' ' '))" >&2
	done
	cp "$tmp/out" "$tmp/$name.html"
	python3 - "$tmp/$name.html" "$tmp/$name.folded" "$name.folded" $want <<'PY' || fail "$name: speedscope shows another total"
import html, re, sys
page, folded, fname = sys.argv[1:4]
want, top_count, top_name = int(sys.argv[4]), int(sys.argv[5]), " ".join(sys.argv[6:])
dom = open(page).read()
title = re.search(r"<title>([^<]*)</title>", dom)
assert title and title.group(1) == fname + " - speedscope", "not imported: title %r" % (title and title.group(1))
num = lambda s: int(s.replace(",", ""))
rows = [(num(t), num(s), html.unescape(n)) for t, s, n in re.findall(
    r'<tr[^>]*><td[^>]*>([\d,]+) \([^)]*\)<div.*?</td><td[^>]*>([\d,]+) \([^)]*\)<div.*?</td>'
    r'<td[^>]*>(?:<span[^>]*></span>)?([^<]*)</td></tr>', dom)]
lines = [l.rsplit(" ", 1) for l in open(folded).read().splitlines()]
frames = {f for stack, _ in lines for f in stack.split(";")}
comms = {stack.split(";")[0] for stack, _ in lines}
assert len(rows) == len(frames), "%d rows for %d distinct frames" % (len(rows), len(frames))
shown = {n: (t, s) for t, s, n in rows}
assert set(shown) == frames, "other names: %s" % sorted(set(shown) ^ frames)[:5]
self_sum = sum(s for _, s, _ in rows)
roots = sum(shown[c][0] for c in comms)
print("%s: speedscope: %d rows, self weights %d, roots %d; table %d, top row %d %s" %
      (fname, len(rows), self_sum, roots, want, top_count, top_name))
assert self_sum == want, "self weights add up to %d, not %d" % (self_sum, want)
assert roots == want, "the roots (comms) weigh %d, not %d" % (roots, want)
heaviest = max(rows, key=lambda r: r[1])
assert (heaviest[1], re.sub(r"_\[k\]$", "", heaviest[2])) == (top_count, top_name), \
    "heaviest leaf %r, not the table's top row" % (heaviest,)
PY
	echo "ok: $name"
}

check run_a-schedules schedules run_a.json
check run_full-profile profile run_full.json
grep -q '_\[k\]' "$tmp/run_full-profile.folded" || fail "run_full's profile has no _[k] frame"
check run_user-schedules schedules run_user.json
check run_user-profile profile run_user.json
grep -qF 'cc1+0x1a2b3c' "$tmp/run_user-profile.html" || fail "no cc1+0x1a2b3c in speedscope"
echo "PASS: speedscope shows the folded stacks' totals as the tables"
