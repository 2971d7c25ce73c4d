#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The profile's -g stacks reach the application through the C library: libcspin
# (frame pointers) spends its time in malloc/free (libc without frame pointers) under
# libc_spin_churn() <- main. The frame-pointer walk alone stops in libc or goes astray there
# (about 1 in 10 of these samples reached main before the profile recovered the hidden callers
# as the schedules view does); now nearly all must reach libc_spin_churn -> main, and no frame
# in a file has an offset that no file can hold.
. "$(dirname "$0")/lib.sh"
LIBCSPIN=${LIBCSPIN:?LIBCSPIN must name the built tests/libcspin}
require_bpf
bin=$(readlink -f "$LIBCSPIN")
"$SCHEDPROF" trace --views profile -g -F 499 -f json -o "$TMP/p.json" -- "$LIBCSPIN" 1.5 \
	>/dev/null 2>"$TMP/p.err" || fail "schedprof exited $?: $(cat "$TMP/p.err")"
out=$(python3 - "$TMP/p.json" "$bin" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["profile"]
binary = sys.argv[2]
libc = reached = 0
for f in p["functions"]:
    for s in f["stacks"]:
        if s["comm"] != "libcspin":
            continue
        fr, ob, fi = s["frames"], s["objects"], s["frame_info"]
        # a file's frames: kernel objects ([kernel], a module, [bpf]) are bracketed
        user = [i for i, o in enumerate(ob) if not o.startswith("[")]
        for i in user:
            assert int(fi[i].get("addr", "0"), 16) < 1 << 47, ("a frame astray", fr[i], fi[i])
        if not user or "/libc.so" not in ob[user[0]]:
            continue
        libc += s["count"]
        k = [i for i in user if fr[i] == "libc_spin_churn" and ob[i] == binary]
        if k and k[0] + 1 < len(fr) and fr[k[0] + 1] == "main":
            reached += s["count"]
assert libc >= 20, ("too few samples in libc", libc)
assert reached * 10 >= libc * 9, ("samples in libc reaching libc_spin_churn -> main", reached, libc)
print(reached, libc)
PY
) || fail "profile stacks in libc do not reach libc_spin_churn -> main: $out"
pass "profile -g: $out samples in libc reach libc_spin_churn -> main"
