#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Debug files in a real trace: with libc6-dbg installed, the profile names libc's
# internal allocator functions (_int_malloc, _int_free: not in libc's .dynsym, so only the
# debug file's .symtab has them), and they take most of mallocspin's samples instead of an
# unnamed libc row. mallocspin turns off MALLOC_PERTURB_ (meson test sets it; it makes glibc
# memset every block): the test is run here with it set, and memset must take no share.
. "$(dirname "$0")/lib.sh"
MALLOCSPIN=${MALLOCSPIN:?MALLOCSPIN must name the built tests/mallocspin}
require_bpf
libc=$(ldd "$MALLOCSPIN" | awk '$1 ~ /^libc\.so/ {print $3}')
[ -r "$libc" ] || skip_or_fail "no libc found for $MALLOCSPIN"
id=$(readelf -n "$libc" | awk '/Build ID/ {print $3}')
[ -r "/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" ] || skip_or_fail "libc6-dbg is not installed"
nm -D "$libc" | grep -qw _int_malloc && fail "_int_malloc is exported: the test proves nothing"

MALLOC_PERTURB_=${MALLOC_PERTURB_:-165} "$SCHEDPROF" trace --views profile -f json \
	-o "$TMP/malloc.json" -- "$MALLOCSPIN" 2 ||
	fail "schedprof exited $?"
read -r named tgt <<<"$(jget "$TMP/malloc.json" '" ".join(str(x) for x in (sum(f["samples"] for f in d["profile"]["functions"] if f["function"] in ("_int_malloc", "_int_free", "unlink_chunk.constprop.0") and f["object"].endswith("libc.so.6")), d["profile"]["target"]))')"
memset=$(jget "$TMP/malloc.json" 'sum(f["samples"] for f in d["profile"]["functions"] if f["function"].startswith("__memset"))')
[ $((10 * memset)) -le "$tgt" ] ||
	fail "memset has $memset of $tgt target samples: the workload measures MALLOC_PERTURB_"
[ "$named" -gt 0 ] || fail "no _int_malloc/_int_free/unlink_chunk row (target samples: $tgt)"
[ $((2 * named)) -gt "$tgt" ] || fail "libc's internal functions have $named of $tgt target samples"
pass "libc internals named from libc6-dbg: $named of $tgt target samples"
