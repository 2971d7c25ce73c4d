#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The kernel matrix: boots each of Debian's packaged kernels (image.sh builds and caches the
# guest) under qemu-system-x86_64 and runs suite.sh inside on this tree's build, which the
# guest sees at the same path over 9p. KVM when it boots a stock kernel here, else TCG.
# Prints one line per kernel and test, a table kernel x test, and "N passed, N failed".
# A guest that does not boot, hangs or times out is a failure, with its console's tail.
# usage: sudo tests/kernels/matrix.sh [-k LABELS] [-o DIR] [-s SMP] [-t SECONDS] [-c CMD.SH]
#                                     [TEST...]
#   -k  kernels by label, comma-separated (default 6.1,6.1-rt,6.12: tests/kernels/image.sh);
#       LABEL=T1+T2 runs only those tests on that kernel
#   -o  where each kernel's results go (DIR/LABEL: results, logs/, console.log; default a
#       temporary directory, removed at the end)
#   -s  guest CPUs (default 2)   -t  the time a guest may take (default 1500 s)
#   -c  run CMD.SH (sh, as root, in /out) in each guest instead of the suite: its output is
#       DIR/LABEL/log
#   TEST  meson test names, trace-a, compare, progcost (default: all of DEFAULT_TESTS)
# env: BUILD (the build dir, inside this tree; default ./build), SP_KERNELS_ACCEL
#   (auto, kvm or tcg; default auto), SP_KERNELS_CACHE (image.sh)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
labels=6.1,6.1-rt,6.12 out="" smp=2 limit=1500 cmd=""
# pipe ping-pong, fork/wait/exit, the run-queue split, the locks view, the profile and -g,
# user stacks, the timeline's critical path, wakers, -p/--cgroup targets, migrations, who took
# the CPU (meson tests); then the README's trace -a -d 1, examples/compile-job/compare.sh, and
# the programs' BPF cost
DEFAULT_TESTS="bpf-pipe bpf-wait bpf-runq bpf-locks bpf-profile bpf-ustacks bpf-timeline
bpf-wakers bpf-kstacks bpf-target bpf-targets bpf-migrate bpf-takers trace-a compare progcost"
usage() { echo "usage: $0 [-k LABELS] [-o DIR] [-s SMP] [-t SECONDS] [-c CMD.SH] [TEST...]" >&2; exit 2; }
while getopts "k:o:s:t:c:h" o; do
	case $o in
	k) labels=$OPTARG ;; o) out=$OPTARG ;; s) smp=$OPTARG ;; t) limit=$OPTARG ;;
	c) cmd=$(cd "$(dirname "$OPTARG")" && pwd)/$(basename "$OPTARG") ;; *) usage ;;
	esac
done
shift $((OPTIND - 1))
tests=${*:-$DEFAULT_TESTS}
[[ $smp =~ ^[1-9][0-9]*$ && $limit =~ ^[1-9][0-9]*$ ]] || usage
log() { echo "matrix: $*"; }
die() { log "$*"; echo "0 passed, 1 failed"; exit 1; }
[ "$(id -u)" = 0 ] || die "run it as root (the image is built in a chroot)"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 not found: sudo scripts/setup.sh --kernels"
BUILD=$(cd "${BUILD:-$top/build}" 2>/dev/null && pwd) || die "no build dir: sudo scripts/setup.sh --tests"
[ -x "$BUILD/src/schedprof" ] || die "$BUILD/src/schedprof not built: sudo scripts/setup.sh --tests"
case $BUILD/ in
"$top"/*) ;;
*) die "BUILD=$BUILD is outside $top: the guest sees only this tree" ;;
esac
t_start=$(date +%s)
img=$("$here/image.sh") || die "the guest image could not be built (above)"
log "image: $img ($(($(date +%s) - t_start)) s)"
# the empty program that the programs' costs are measured against
mkdir -p "$BUILD/kernels"
clang -O2 -g -target bpf -I"/usr/include/$(gcc -dumpmachine)" -c "$top/bench/floor.bpf.c" \
	-o "$BUILD/kernels/floor.bpf.o" && cc -O2 -o "$BUILD/kernels/floor" "$top/bench/floor.c" -lbpf ||
	die "cannot build bench/floor"

# a guest runs in the background (boot): it ends with this script, however that ends
qpid="" tmpout=""
trap '[ -z "$qpid" ] || kill "$qpid" 2>/dev/null; for j in $(jobs -p); do kill "$j" 2>/dev/null; done
	wait; [ -z "$tmpout" ] || rm -rf "$tmpout"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
if [ -z "$out" ]; then
	out=$(mktemp -d /tmp/schedprof-matrix.XXXXXX)
	tmpout=$out
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)

# boot LABEL DIR ACCEL SECONDS: runs DIR/cmd.sh in the guest of kernel LABEL; 0 when the guest
# ran it to its end (DIR/rc written)
boot() {
	local rel dir=$2 accel
	rel=$(awk -v l="$1" '$1 == l { print $2 }' "$img/kernels")
	[ -n "$rel" ] || { echo "no kernel labelled $1 in $img/kernels" > "$dir/console.log"; return 1; }
	case $3 in
	kvm) accel=(-enable-kvm -cpu max) ;;
	*) accel=(-accel "tcg,thread=$tcgthread" -cpu max) ;;
	esac
	echo "$top" > "$dir/src"
	date +%s > "$dir/now"
	rm -f "$dir/rc"
	rm -f "$dir/gdb.sock"
	# the gdb stub (a socket in DIR: no port to share with other runs) lets vcpudump.sh show
	# where a stalled guest's CPUs are, once its time is up
	qemu-system-x86_64 "${accel[@]}" -smp "$smp" -m 3G \
		-kernel "$img/vmlinuz-$rel" -initrd "$img/initrd.img-$rel" \
		-append "root=/dev/vda rw console=ttyS0 init=/sbin/sp-init quiet panic=-1 softlockup_panic=1 no_timer_check" \
		-drive file="$img/root.img",format=raw,if=virtio,cache=unsafe -snapshot \
		-virtfs local,path="$top",mount_tag=src,security_model=passthrough,id=src \
		-virtfs local,path="$dir",mount_tag=out,security_model=passthrough,id=out \
		-gdb unix:"$dir/gdb.sock",server=on,wait=off \
		-nic none -no-reboot -display none -monitor none -serial file:"$dir/console.log" \
		> "$dir/qemu.log" 2>&1 &
	qpid=$!
	local end=$(($(date +%s) + $4))
	while kill -0 "$qpid" 2>/dev/null && [ "$(date +%s)" -lt "$end" ]; do
		sleep 1
	done
	if kill -0 "$qpid" 2>/dev/null; then
		# its time is up: where its CPUs are (not for the KVM probe's hang in real mode),
		# then the end of it
		[ "${dir##*/}" = kvm-probe ] || "$here/vcpudump.sh" "$dir/gdb.sock" "$dir/kallsyms" > "$dir/vcpus.txt" 2>&1
		kill "$qpid" 2>/dev/null
		for _ in 1 2 3 4 5; do
			kill -0 "$qpid" 2>/dev/null || break
			sleep 1
		done
		kill -9 "$qpid" 2>/dev/null
	fi
	wait "$qpid" 2>/dev/null
	qpid=""
	rm -f "$dir/gdb.sock"
	[ -f "$dir/rc" ]
}

# KVM only when a stock kernel boots under it: on some hypervisors /dev/kvm opens but the
# guest hangs in its real-mode setup, or -cpu host is refused
accel=${SP_KERNELS_ACCEL:-auto}
tcgthread=${SP_KERNELS_TCG_THREAD:-single}
case $tcgthread in single | multi) ;; *) die "SP_KERNELS_TCG_THREAD=$tcgthread: single or multi" ;; esac
first=${labels%%,*}
first=${first%%=*}
if [ "$accel" = auto ]; then
	accel=tcg why="no /dev/kvm"
	if [ -w /dev/kvm ]; then
		mkdir -p "$out/kvm-probe"
		echo true > "$out/kvm-probe/cmd.sh"
		if boot "$first" "$out/kvm-probe" kvm 30; then
			accel=kvm why="a $first guest booted under KVM"
		else
			tail=$(tail -c 300 "$out/kvm-probe/console.log" 2>/dev/null | tr -s '\r\n' '  ')
			why="a $first guest did not reach its init under KVM within 30 s (console: ${tail:-empty})"
		fi
	fi
	log "accelerator: $accel: $why"
else
	log "accelerator: $accel (SP_KERNELS_ACCEL)"
fi
# One TCG thread per guest by default: multi-threaded TCG can run a stale copy of kernel text
# that another vCPU is patching (a tracepoint's static key, as a trace attaches or detaches),
# and the guest oopses on an int3 the kernel no longer expects, or a vCPU spins in its int3
# handler. SP_KERNELS_TCG_THREAD=multi brings it back.
tcgmode=""
[ "$accel" = tcg ] && tcgmode=" (thread=$tcgthread)"
# under TCG the CPU runs about 10x slower: timing bounds widen by that (never counts)
slow=1 tmult=1
[ "$accel" = tcg ] && slow=10 tmult=4

# first_report HEADLINE: the console from the kernel's first report ($first in $d, run_one's)
first_report() {
	log "$1 (console line $first):"
	sed -n "$first,$((first + 60))p" "$d/console.log"
}

# run_one SPEC: boots one kernel, runs its tests and prints what happened; DIR/counts gets
# "PASSED FAILED" (a guest that did not finish, or whose kernel oopsed, is one more failure)
run_one() {
	local spec=$1 k kt d t0 ok secs n f first
	k=${spec%%=*} kt=$tests
	[ "$k" = "$spec" ] || kt=${spec#*=}
	kt=${kt//+/ }
	d=$out/$k
	# the suite runs from a copy: bash reads a script as it goes, and the tree may change
	cp "$here/suite.sh" "$d/suite.sh"
	# the guest's kernel text symbols, for vcpudump.sh should the guest stall
	syms="grep ' [tT] ' /proc/kallsyms > /out/kallsyms 2>/dev/null"
	cat > "$d/cmd.sh" <<EOF
$syms
export SRC='$top' BUILD='$BUILD' TESTS='$(echo $kt)' SCHEDPROF_TEST_SLOW=$slow TIMEOUT_MULT=$tmult
exec bash /out/suite.sh
EOF
	[ -z "$cmd" ] || { echo "$syms"; echo "export SRC='$top' BUILD='$BUILD' SCHEDPROF_TEST_SLOW=$slow"; cat "$cmd"; } > "$d/cmd.sh"
	t0=$(date +%s)
	log "$k: booting under $accel$tcgmode, -smp $smp"
	boot "$k" "$d" "$accel" "$limit"
	ok=$?
	secs=$(($(date +%s) - t0))
	# what the suite finished, also when the guest did not
	n=$(grep -c '^passed' "$d/results" 2>/dev/null) f=$(grep -c '^failed' "$d/results" 2>/dev/null)
	n=${n:-0} f=${f:-0}
	# a kernel's first report names the fault (an oops in a task's context leaves the guest
	# running, and its tests may still pass); the tail only shows how the guest ended
	first=$(grep -n -m1 -E 'BUG:|Oops|general protection|int3|watchdog:|rcu: INFO|Kernel panic' \
		"$d/console.log" 2>/dev/null | cut -d: -f1)
	if [ "$ok" = 0 ]; then
		sed "s/^/$k: /" "$d/log"
		if [ ! -s "$d/results" ] && [ -z "$cmd" ]; then
			log "FAIL $k: the guest ran the suite but wrote no results (rc $(cat "$d/rc"))"
			f=$((f + 1))
		fi
		if [ -n "$first" ]; then
			first_report "FAIL $k: the guest's kernel reported a fault"
			f=$((f + 1))
		fi
		log "$k: $n passed, $f failed in $secs s"
	else
		f=$((f + 1))
		log "FAIL $k: the guest did not finish its suite within ${limit} s (it did not boot, hung or timed out after $secs s)"
		[ -s "$d/log" ] && { log "$k: the suite's output so far:"; tail -20 "$d/log"; }
		[ -z "$first" ] || first_report "$k: the console from the kernel's first report"
		log "$k: console tail:"
		tail -25 "$d/console.log" 2>/dev/null
		[ -s "$d/vcpus.txt" ] && { log "$k: its CPUs when its time was up (tests/kernels/vcpudump.sh):"; head -80 "$d/vcpus.txt"; }
		[ -s "$d/qemu.log" ] && { log "$k: qemu:"; tail -5 "$d/qemu.log"; }
	fi
	echo "$n $f" > "$d/counts"
}

IFS=, read -ra specs <<< "$labels"
ks=()
for spec in "${specs[@]}"; do
	k=${spec%%=*}
	ks+=("$k")
	rm -rf "${out:?}/$k"
	mkdir -p "$out/$k"
done
# Guests run side by side when each needs one host CPU (TCG with one thread per guest): the
# matrix then takes about the time of its longest guest. Each one's report prints in order.
jobs_=${SP_KERNELS_JOBS:-1}
[ "$accel" = tcg ] && [ "$tcgthread" = single ] && [ -z "${SP_KERNELS_JOBS:-}" ] && jobs_=$(nproc)
pids=()
for spec in "${specs[@]}"; do
	k=${spec%%=*}
	if [ "$jobs_" -le 1 ]; then
		run_one "$spec"
		continue
	fi
	while [ "$(jobs -rp | wc -l)" -ge "$jobs_" ]; do
		sleep 1
	done
	# its own qemu ends with it (a subshell does not inherit the EXIT trap)
	(
		trap '[ -z "$qpid" ] || kill "$qpid" 2>/dev/null' EXIT
		trap 'exit 143' TERM
		run_one "$spec"
	) > "$out/$k/report" 2>&1 &
	pids+=($!)
done
if [ "$jobs_" -gt 1 ]; then
	for i in "${!ks[@]}"; do
		wait "${pids[$i]}"
		cat "$out/${ks[$i]}/report"
	done
fi
passed=0 failed=0
for k in "${ks[@]}"; do
	read -r n f < "$out/$k/counts" 2>/dev/null || { n=0 f=1; log "FAIL $k: it wrote no counts"; }
	passed=$((passed + n)) failed=$((failed + f))
done

# the table: one row per kernel, one column per test
python3 - "$out" "${ks[@]}" <<'PY'
import os, sys
out, ks = sys.argv[1], sys.argv[2:]
res, names = {}, []
for k in ks:
    res[k] = {}
    p = os.path.join(out, k, "results")
    for line in open(p) if os.path.exists(p) else []:
        r, n = line.split()
        res[k][n] = "pass" if r == "passed" else "FAIL"
        if n not in names:
            names.append(n)
w = max([len(k) for k in ks] + [6])
print("\n" + "kernel".ljust(w) + "  " + "  ".join(names))
for k in ks:
    cells = [res[k].get(n, "-").ljust(len(n)) for n in names]
    if not res[k]:
        cells = ["(no results: the guest did not finish)"]
    print(k.ljust(w) + "  " + "  ".join(cells))
# each program's ns per run as a ratio to the empty program in the same guest (progcost.sh)
cost, rows = {}, []
for k in ks:
    p = os.path.join(out, k, "progcost.txt")
    for line in open(p) if os.path.exists(p) else []:
        cfg, rest = line.rstrip("\n").split("\t")
        name, cnt, ns, ratio = rest.split()
        cost[(cfg, name, k)] = ratio + (" (%s ns)" % ns if cfg == "floor" else "")
        if (cfg, name) not in rows:
            rows.append((cfg, name))
if rows:
    print("\nBPF ns per run / the empty tp_btf program's (bpf_stats, spwork pipe):")
    print("| build | program | " + " | ".join(ks) + " |")
    print("|---|---|" + "---|" * len(ks))
    for cfg, name in rows:
        print("| %s | %s | %s |" % (cfg, name, " | ".join(cost.get((cfg, name, k), "-") for k in ks)))
PY
log "accelerator $accel; total $(($(date +%s) - t_start)) s"
echo "${passed} passed, ${failed} failed"
[ "$failed" = 0 ]
