#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The verifier budget: each BPF program of schedprof's object loaded alone, with the trace
# options that select it, and its verified instructions (bpf_prog_info.verified_insns, Linux
# 5.16) against its entry for the running kernel in verifier-budget.tsv, as the kernel's
# selftests use veristat. The programs come from the object itself (trace's
# SCHEDPROF_TEST_LOAD_ONLY=list, a test build's): one that no option set below selects fails.
#
#   verifier_budget.sh [check]  a program more than 20% past its entry, or refused where its
#                               entry loaded, fails; a kernel (or program) with no entry is
#                               reported, not failed
#   verifier_budget.sh record   prints this kernel's rows (TSV, as in the table)
#   verifier_budget.sh update   replaces this kernel's rows in the table with those
#
# Kernels are matched by major.minor and flavour: "6.1", "6.1-rt", "6.12", "6.18". SCHEDPROF
# names the built binary; BUDGET_TABLE the table (default: beside this script); BUDGET_REPS
# loads each program that many times (default 1) and keeps the fastest load: load_ms is the
# object's load with that one program (its maps' creation included), and only the verified
# instructions are checked (a TCG guest's times are not comparable with a host's).
# sp_switch is measured with its CPU-quota part off (SCHEDPROF_TEST_QUOTA_CHECK=0), as a
# machine without CPU quotas loads it, whatever quotas this machine has. An option set's
# leading NAME=VALUE words are the trace's environment, not options (the last set: the
# per-task hashes of PREEMPT_RT kernels, whose sp_task_free nothing else loads elsewhere).
. "$(dirname "$0")/../integration/lib.sh"
require_bpf
TABLE=${BUDGET_TABLE:-$(dirname "$0")/verifier-budget.tsv}
MODE=${1:-check}
GROWTH_PCT=20

# The option sets, in order: each program is measured under the first that selects it
# (sp_waking walks with --wakers), but for the builds of one program
# (include/schedprof/progs.h), each measured under the options its row names.
OPTION_SETS=(
	"-a --wakers"
	"-a --timeline"
	"-a --stacks"
	"-- true"
	"SCHEDPROF_TEST_FEATURES_OFF=storage_nosleep -a"
)

# trace_set SET [NAME=VALUE...]: trace -d 1 with SET's options, its leading NAME=VALUE words
# and the others in the environment
trace_set() {
	local set=$1 w envs=() args=()
	shift
	envs=("$@")
	for w in $set; do
		if [ ${#args[@]} = 0 ] && [[ $w =~ ^[A-Z_]+= ]]; then envs+=("$w"); else args+=("$w"); fi
	done
	env "${envs[@]}" "$SCHEDPROF" trace -d 1 "${args[@]}"
}

kernel_key() {
	local r mm rt=""
	r=$(uname -r)
	mm=$(echo "$r" | cut -d. -f1,2)
	mm=${mm%%[!0-9.]*}
	if [ "$(cat /sys/kernel/realtime 2>/dev/null)" = 1 ] || uname -v | grep -q PREEMPT_RT; then
		rt=-rt
	fi
	echo "$mm$rt"
}
KERNEL=$(kernel_key)

# 1. the programs, and which options select each (the builds': their row's; else the first
# set that does)
declare -A opts_of=() build_of=()
all=()
for set in "${OPTION_SETS[@]}"; do
	trace_set "$set" SCHEDPROF_TEST_LOAD_ONLY=list > "$TMP/list" 2>"$TMP/list.err" ||
		fail "trace $set, list: $(cat "$TMP/list.err")"
	grep -q "^prog" "$TMP/list" || fail "trace $set listed no program (not a test build?)"
	while IFS=$'\t' read -r tag program build options; do
		[ "$tag" = build ] || continue
		opts_of[$build]=$options
		build_of[$build]=$program
	done < "$TMP/list"
	while IFS=$'\t' read -r tag prog on; do
		[ "$tag" = prog ] || continue
		[ ${#all[@]} -gt 0 ] && [[ " ${all[*]} " == *" $prog "* ]] || all+=("$prog")
		[ "$on" = 1 ] && [ -z "${opts_of[$prog]:-}" ] && opts_of[$prog]=$set
	done < "$TMP/list"
done
for prog in "${all[@]}"; do
	[ -n "${opts_of[$prog]:-}" ] || fail "no option set of $0 selects $prog: add one to OPTION_SETS"
done
for build in "${!build_of[@]}"; do
	[[ " ${all[*]} " == *" $build "* ]] ||
		fail "build $build of ${build_of[$build]} (include/schedprof/progs.h) is not in the object"
	trace_set "${opts_of[$build]}" SCHEDPROF_TEST_LOAD_ONLY=list > "$TMP/list" 2>&1 ||
		fail "trace ${opts_of[$build]}, list: $(cat "$TMP/list")"
	grep -q "^prog	$build	1$" "$TMP/list" ||
		fail "build $build: its options '${opts_of[$build]}' (include/schedprof/progs.h) do not load it"
done

# 2. each alone: "PROG<TAB>OPTIONS<TAB>KERNEL<TAB>INSNS<TAB>MS" (INSNS "refused": not loaded)
for prog in "${all[@]}"; do
	best=
	for _ in $(seq "${BUDGET_REPS:-1}"); do
		trace_set "${opts_of[$prog]}" SCHEDPROF_TEST_QUOTA_CHECK=0 SCHEDPROF_TEST_LOAD_ONLY="$prog" \
			> "$TMP/one" 2>"$TMP/one.err"
		IFS=$'\t' read -r tag name insns ms < <(grep "^budget" "$TMP/one")
		[ "${tag:-}" = budget ] && [ "$name" = "$prog" ] || fail "$prog alone: no budget line: $(cat "$TMP/one.err")"
		[ "$insns" = refused ] && { ms=-; best=-; break; }
		[ -z "$best" ] || awk -v a="$ms" -v b="$best" 'BEGIN { exit !(a < b) }' && best=$ms
	done
	printf '%s\t%s\t%s\t%s\t%s\n' "$prog" "${opts_of[$prog]}" "$KERNEL" "$insns" "$best"
done > "$TMP/rows"

case "$MODE" in
record)
	cat "$TMP/rows"
	exit 0
	;;
update)
	{ grep '^#' "$TABLE" 2>/dev/null || printf '# program\toptions\tkernel\tverified_insns\tload_ms\n'
	  grep -v '^#' "$TABLE" 2>/dev/null | awk -F'\t' -v k="$KERNEL" '$3 != k' || true
	  cat "$TMP/rows"; } > "$TMP/new"
	cat "$TMP/new" > "$TABLE"
	echo "updated $TABLE: $(wc -l < "$TMP/rows") rows for $KERNEL"
	exit 0
	;;
check) ;;
*) echo "usage: $0 [check|record|update]" >&2; exit 2 ;;
esac

# 3. against the table
[ -r "$TABLE" ] || fail "no table $TABLE"
if ! awk -F'\t' -v k="$KERNEL" '!/^#/ && $3 == k { f = 1 } END { exit !f }' "$TABLE"; then
	cat "$TMP/rows"
	pass "kernel $KERNEL has no entry in $TABLE: reported, not checked (add its rows: $0 update)"
	exit 0
fi
bad=0
while IFS=$'\t' read -r prog opts kernel insns ms; do
	entry=$(awk -F'\t' -v p="$prog" -v k="$KERNEL" '!/^#/ && $1 == p && $3 == k { print $4 "\t" $2; exit }' "$TABLE")
	if [ -z "$entry" ]; then
		echo "note: $prog has no entry for $KERNEL in $TABLE ($insns verified insns with $opts): add it"
		continue
	fi
	was=${entry%%$'\t'*}
	was_opts=${entry#*$'\t'}
	[ "$was_opts" = "$opts" ] || echo "note: $prog: the table measured it with '$was_opts', now '$opts'"
	if [ "$insns" = refused ]; then
		if [ "$was" != refused ]; then
			echo "FAIL: $prog is refused on $KERNEL, its entry loaded with $was verified insns (SCHEDPROF_TEST_LOAD_ONLY=$prog $SCHEDPROF trace -vv -d 1 $opts shows the verifier's log)" >&2
			bad=1
		fi
		continue
	fi
	if [ "$was" = refused ]; then
		echo "note: $prog loads on $KERNEL now ($insns verified insns); its entry says refused: update the table"
		continue
	fi
	if [ "$insns" -gt $((was + was * GROWTH_PCT / 100)) ]; then
		echo "FAIL: $prog on $KERNEL: $insns verified insns, its entry $was (+$(((insns - was) * 100 / was))%, more than $GROWTH_PCT%): if the growth is meant, update $TABLE in the same commit ($0 update on each kernel) and say why in the commit message" >&2
		bad=1
	else
		echo "ok: $prog on $KERNEL: $insns verified insns (entry $was), load $ms ms"
	fi
done < "$TMP/rows"
[ $bad = 0 ] || exit 1
pass "every program within $GROWTH_PCT% of its verifier budget on $KERNEL"
