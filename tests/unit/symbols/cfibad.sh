#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# usage: cfibad.sh IN OUT_FF OUT_TAIL -- two copies of IN with a corrupt .eh_frame: all 0xff
# bytes, and 'A' bytes after the first 48 (test_cfi.c)
set -e
objcopy --dump-section .eh_frame="$2.eh" "$1"
tr '\000-\377' '\377' < "$2.eh" > "$2.ff"
objcopy --update-section .eh_frame="$2.ff" "$1" "$2"
{ head -c 48 "$2.eh"; tail -c +49 "$2.eh" | tr '\000-\377' A; } > "$3.eh"
objcopy --update-section .eh_frame="$3.eh" "$1" "$3"
rm -f "$2.eh" "$2.ff" "$3.eh"
