# SPDX-License-Identifier: BSD-2-Clause
# shellcheck shell=bash
# Sourced by the bench scripts: the builds of the BPF programs built more than once, read from
# their one table, include/schedprof/progs.h (its rows "X(program, build, provides, options)",
# one a line).
BUILDS_H=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/include/schedprof/progs.h

# prog_builds PROGRAM: its builds' names, one a line (sp_switch: sp_switch, sp_switch_tl, ...)
prog_builds() {
	sed -n "s/^[[:space:]]*X($1, \([a-z0-9_]*\),.*/\1/p" "$BUILDS_H"
}
