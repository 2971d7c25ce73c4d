#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The classic kernel-compile experiment: trace `make -j2` of a 40-module project with and
# without gcc -pipe and compare where the tasks called schedule() from.
# usage: sudo examples/compile-job/compare.sh [JOBS]   (schedprof from ./build or $SCHEDPROF)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
sp=${SCHEDPROF:-$top/build/src/schedprof}
jobs=${1:-2}
out=$(mktemp -d /tmp/schedprof-compile.XXXXXX)
trap 'rm -rf "$out"' EXIT
export OUT=$out/proj
make -s -C "$here" "$out/proj/.generated" OUT="$OUT" >/dev/null
for mode in pipe nopipe; do
	flags=-O2
	[ $mode = pipe ] && flags="-O2 -pipe"
	make -s -C "$here" clean OUT="$OUT"
	echo "=== make -j$jobs CFLAGS='$flags' ==="
	"$sp" trace -n 12 -f json -o "$out/$mode.json" -- make -s -j"$jobs" -C "$here" OUT="$OUT" CFLAGS="$flags" >/dev/null
	make -s -C "$here" clean OUT="$OUT"
	"$sp" trace -n 12 -- make -s -j"$jobs" -C "$here" OUT="$OUT" CFLAGS="$flags" | tee "$out/$mode.txt"
	echo
done
summ() {
	python3 - "$1" <<'PY' 2>/dev/null || grep -E '^schedules:' "${1%.json}.txt"
import json, sys
d = json.load(open(sys.argv[1]))
s = d["schedules"]
pipe = sum(r["count"] for r in s["callers"] if r["caller"] in ("anon_pipe_read", "pipe_read", "pipe_wait"))
vol = s["voluntary"] or 1
print(f'{s["total"]} schedules, {s["voluntary"]} voluntary, {pipe} from pipe reads ({100.0 * pipe / vol:.1f}% of voluntary)')
PY
}
echo "=== summary ==="
echo "with -pipe:    $(summ "$out/pipe.json")"
echo "without -pipe: $(summ "$out/nopipe.json")"
