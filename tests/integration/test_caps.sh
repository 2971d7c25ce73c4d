#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Capabilities: what is missing is named before anything starts, and a run
# without CAP_SYSLOG says up front that kernel functions will be addresses, then completes.
# Root drops capabilities with capsh and setpriv (util-linux); the command writes a marker, so
# the order of the lines and whether it ran at all can be checked.
. "$(dirname "$0")/lib.sh"
require_bpf
command -v capsh >/dev/null || skip_or_fail "needs capsh (libcap2-bin)"
command -v setpriv >/dev/null || skip_or_fail "needs setpriv (util-linux)"
D=$TMP/out
mkdir -p "$D"
chmod 777 "$TMP" "$D"

# run_capsh DROP ARGS...: schedprof ARGS with the capabilities DROP (capsh list) dropped;
# status in $rc, stderr in $TMP/err
run_capsh() {
	local drop=$1
	shift
	capsh --drop="$drop" -- -c '"$0" "$@"' "$SCHEDPROF" "$@" > /dev/null 2> "$TMP/err"
	rc=$?
}

# ---- CAP_BPF, CAP_PERFMON (or CAP_SYS_ADMIN for either): refused before the command runs ----
for c in "cap_bpf,cap_sys_admin|lacks CAP_BPF: run" "cap_perfmon,cap_sys_admin|lacks CAP_PERFMON: run" \
	 "cap_bpf,cap_perfmon,cap_sys_admin|lacks CAP_BPF and CAP_PERFMON: run"; do
	rm -f "$D/ran"
	run_capsh "${c%%|*}" trace -o "$D/o.txt" -- touch "$D/ran"
	[ $rc = 1 ] || fail "without ${c%%|*}: exit $rc, expected 1: $(cat "$TMP/err")"
	[ "$(wc -l < "$TMP/err")" = 1 ] || fail "without ${c%%|*}: not one line: $(cat "$TMP/err")"
	grep -q "^schedprof: tracing needs root, or CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN), and CAP_SYSLOG to name kernel functions: this process ${c#*|}" \
		"$TMP/err" || fail "without ${c%%|*}: $(cat "$TMP/err")"
	[ ! -e "$D/ran" ] || fail "without ${c%%|*}: the command ran"
	[ ! -e "$D/o.txt" ] || fail "without ${c%%|*}: an output file was left"
done
pass "without CAP_BPF or CAP_PERFMON (and CAP_SYS_ADMIN): one line naming them, exit 1, nothing run"
# CAP_SYS_ADMIN stands for both; CAP_BPF + CAP_PERFMON need no CAP_SYS_ADMIN
run_capsh cap_bpf,cap_perfmon trace --views schedules -- true
[ $rc = 0 ] || fail "CAP_SYS_ADMIN without CAP_BPF, CAP_PERFMON: exit $rc: $(cat "$TMP/err")"
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
run_capsh cap_sys_admin trace -- true
if [ "$paranoid" -gt 2 ] && [ $rc = 1 ]; then
	# Debian's kernels: above 2, only CAP_SYS_ADMIN opens perf events (the profile's)
	[ "$(wc -l < "$TMP/err")" = 1 ] && grep -q "^schedprof: cannot open a 99 Hz cpu-clock event on CPU [0-9]*: Permission denied (kernel.perf_event_paranoid = $paranoid: this kernel lets only CAP_SYS_ADMIN open perf events: run as root, set kernel.perf_event_paranoid to 2, or trace with --no-profile)$" "$TMP/err" ||
		fail "perf_event_paranoid = $paranoid without CAP_SYS_ADMIN: $(cat "$TMP/err")"
	pass "perf_event_paranoid = $paranoid without CAP_SYS_ADMIN: $(cat "$TMP/err")"
	run_capsh cap_sys_admin trace --no-profile -- true
fi
[ $rc = 0 ] || fail "CAP_BPF + CAP_PERFMON + CAP_SYSLOG without CAP_SYS_ADMIN: exit $rc: $(cat "$TMP/err")"
[ ! -s "$TMP/err" ] || fail "without CAP_SYS_ADMIN: $(cat "$TMP/err")"
pass "CAP_SYS_ADMIN alone, or CAP_BPF + CAP_PERFMON + CAP_SYSLOG, are enough (every view but, with perf_event_paranoid > 2 on Debian, the profile)"

# ---- no CAP_SYSLOG: does /proc/kallsyms hide addresses from such a process? ----
restrict_=$(cat /proc/sys/kernel/kptr_restrict)
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
hidden=true
[ "$restrict_" = 0 ] && [ "$paranoid" -le 1 ] && hidden=false
[ "$restrict_" -ge 2 ] && skip_or_fail "kernel.kptr_restrict = $restrict_ hides kallsyms from root too"
marker="the command starts"
run_capsh cap_syslog trace --views schedules,locks -f json -o "$D/nosyslog.json" -- \
	sh -c "echo '$marker' >&2; sleep 0.1"
[ $rc = 0 ] || fail "without CAP_SYSLOG: exit $rc: $(cat "$TMP/err")"
if $hidden; then
	[ "$(wc -l < "$TMP/err")" = 2 ] || fail "without CAP_SYSLOG: not one warning: $(cat "$TMP/err")"
	head -n 1 "$TMP/err" | grep -q "^schedprof: warning: kernel addresses in /proc/kallsyms are hidden: this process lacks CAP_SYSLOG (kernel.kptr_restrict = $restrict_, kernel.perf_event_paranoid = $paranoid): kernel functions are shown as addresses" ||
		fail "without CAP_SYSLOG, the first line: $(cat "$TMP/err")"
	tail -n 1 "$TMP/err" | grep -qx "$marker" || fail "the warning came after the command started"
	grep -q 'kptr_restrict)' "$TMP/err" && fail "the warning blames kernel.kptr_restrict"
else
	grep -qx "$marker" "$TMP/err" && [ "$(wc -l < "$TMP/err")" = 1 ] ||
		fail "perf_event_paranoid <= 1: kallsyms needs no CAP_SYSLOG, yet: $(cat "$TMP/err")"
fi
t=$(jget "$D/nosyslog.json" 'd["schedules"]["total"]')
[ "$t" -gt 0 ] || fail "without CAP_SYSLOG: no schedules in the report"
pass "without CAP_SYSLOG: one warning before the command starts, and the report ($t schedules)"

# --strict refuses instead, before the command runs
if $hidden; then
	rm -f "$D/ran"
	run_capsh cap_syslog trace --strict -o "$D/strict.txt" -- touch "$D/ran"
	[ $rc = 1 ] || fail "--strict without CAP_SYSLOG: exit $rc, expected 1"
	[ "$(wc -l < "$TMP/err")" = 1 ] || fail "--strict without CAP_SYSLOG: $(cat "$TMP/err")"
	grep -q "^schedprof: kernel addresses in /proc/kallsyms are hidden: this process lacks CAP_SYSLOG .*: --strict refuses to show kernel functions as addresses$" \
		"$TMP/err" || fail "--strict without CAP_SYSLOG: $(cat "$TMP/err")"
	[ ! -e "$D/ran" ] || fail "--strict without CAP_SYSLOG: the command ran"
	[ ! -e "$D/strict.txt" ] || fail "--strict without CAP_SYSLOG: an output file was left"
	pass "--strict without CAP_SYSLOG: refused up front, naming CAP_SYSLOG"
fi

# ---- not root, CAP_BPF + CAP_PERFMON only (ambient, so they survive exec) ----
# (without the profile where perf_event_paranoid > 2 may want CAP_SYS_ADMIN: checked above)
noprof=()
[ "$paranoid" -gt 2 ] && noprof=(--no-profile)
setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all,+bpf,+perfmon \
	--ambient-caps=-all,+bpf,+perfmon "$SCHEDPROF" trace "${noprof[@]}" -f json -o "$D/user.json" -- \
	sh -c "echo '$marker' >&2; sleep 0.1" > /dev/null 2> "$TMP/err"
rc=$?
[ $rc = 0 ] || fail "CAP_BPF + CAP_PERFMON as uid 65534: exit $rc: $(cat "$TMP/err")"
if $hidden; then
	head -n 1 "$TMP/err" | grep -q '^schedprof: warning: .* lacks CAP_SYSLOG' ||
		fail "CAP_BPF + CAP_PERFMON as uid 65534: $(cat "$TMP/err")"
fi
tail -n 1 "$TMP/err" | grep -qx "$marker" || fail "as uid 65534: $(cat "$TMP/err")"
t=$(jget "$D/user.json" 'd["schedules"]["total"]')
[ "$t" -gt 0 ] || fail "CAP_BPF + CAP_PERFMON as uid 65534: no schedules in the report"
pass "uid 65534 with CAP_BPF + CAP_PERFMON only: warned up front, the run is kept ($t schedules)"

# ---- the per-boot caches root made: what the kernel's world-readable BTF says (attach IDs,
# CO-RE BTF, features, the preempt count's place) is shared, 0644, and a run as uid 65534 with
# CAP_BPF + CAP_PERFMON uses it; the scheduler's text ranges (kernel addresses: KASLR) stay
# root's, 0600, so such a run names callers [unknown] (its warning says so) ----
RUN=/run/schedprof
rm -f "$RUN/kfeatures.cache" "$RUN/preempt.cache" "$RUN/attach.cache" "$RUN/core.cache"
"$SCHEDPROF" trace --views schedules -o /dev/null -- true || fail "root's run exited $?"
[ "$(stat -c %u:%a "$RUN")" = 0:755 ] || fail "$RUN is $(stat -c %u:%a "$RUN"), not root's 0755"
for f in kfeatures.cache preempt.cache attach.cache core.cache; do
	[ "$(stat -c %u:%a "$RUN/$f")" = 0:644 ] || fail "$RUN/$f is $(stat -c %u:%a "$RUN/$f"), not root's 0644"
done
[ "$(stat -c %a "$RUN/fold.cache")" = 600 ] || fail "$RUN/fold.cache (kernel addresses) is $(stat -c %a "$RUN/fold.cache")"
mkdir "$D/u"
chown 65534 "$D/u"
chmod 755 "$D" "$TMP"
setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all,+bpf,+perfmon \
	--ambient-caps=-all,+bpf,+perfmon "$SCHEDPROF" trace -v --views schedules -f json \
	-o "$D/u/u.json" -- sleep 0.1 > /dev/null 2> "$TMP/err"
rc=$?
[ $rc = 0 ] || fail "uid 65534 after root's run: exit $rc: $(grep -v libbpf "$TMP/err" | head -5)"
grep -q "attach IDs from the boot's cache" "$TMP/err" || fail "uid 65534 did not use root's attach IDs: $(grep -i attach "$TMP/err")"
grep -q "CO-RE BTF from the boot's cache" "$TMP/err" || fail "uid 65534 did not use root's CO-RE BTF: $(grep -i co-re "$TMP/err")"
grep -q "kernel features from the boot's cache" "$TMP/err" ||
	fail "uid 65534 did not use root's features cache: $(grep -i features "$TMP/err")"
grep -q "cannot cache the kernel features\|cannot cache the preempt" "$TMP/err" &&
	fail "uid 65534 did not read root's features or preempt caches"
if $hidden; then
	grep -q "the callers of schedule() and locks as \[unknown\]" "$TMP/err" ||
		fail "uid 65534 without CAP_SYSLOG is not told its callers are [unknown]"
fi
pass "uid 65534 with CAP_BPF + CAP_PERFMON reads root's BTF caches (0644); fold.cache stays 0600"
