#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Generates a deterministic C project of N small modules into DIR (the kernel-compile
# stand-in: many short cc1/as/ld processes). usage: gen.sh DIR [N]
set -euo pipefail
dir=$1 n=${2:-40}
mkdir -p "$dir"
for i in $(seq 1 "$n"); do
	f="$dir/mod$i.c"
	[ -f "$f" ] && continue
	{
		echo "#include <stdio.h>"
		echo "#include <string.h>"
		echo "struct rec$i { int id; double v[8]; char name[32]; struct rec$i *next; };"
		for k in $(seq 1 10); do
			cat <<C
static double m${i}_f$k(struct rec$i *r, int n)
{
	double acc = 0;
	for (int j = 0; j < n; j++) {
		switch ((j + $k) % 4) {
		case 0: acc += r->v[j & 7] * $k; break;
		case 1: acc -= r->v[(j + 1) & 7] / (j + 1); break;
		case 2: snprintf(r->name, sizeof(r->name), "m$i-%d", j); acc += strlen(r->name); break;
		default: acc += r->id ^ j;
		}
		if (r->next && (j & 3) == 0)
			acc += r->next->v[j & 7];
	}
	return acc;
}
C
		done
		echo "double mod$i(int n)"
		echo "{"
		echo "	struct rec$i a = { .id = $i }, b = { .id = $i + 1, .next = &a };"
		echo "	double s = 0;"
		for k in $(seq 1 10); do echo "	s += m${i}_f$k(&b, n);"; done
		echo "	return s;"
		echo "}"
	} > "$f.tmp"
	mv "$f.tmp" "$f"
done
{
	echo "#include <stdio.h>"
	for i in $(seq 1 "$n"); do echo "double mod$i(int n);"; done
	echo "int main(void)"
	echo "{"
	echo "	double s = 0;"
	for i in $(seq 1 "$n"); do echo "	s += mod$i(100);"; done
	echo "	printf(\"%f\\n\", s);"
	echo "	return 0;"
	echo "}"
} > "$dir/main.c.tmp"
mv "$dir/main.c.tmp" "$dir/main.c"
