#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# What a stalled guest's CPUs are doing, from the host: matrix.sh runs this when a guest
# passes its time limit, before it kills qemu. It stops the guest through qemu's gdb stub
# (the socket SOCK), prints each vCPU's instruction and stack pointers and the kernel text
# addresses on its stack (the guest's own /proc/kallsyms, which its cmd.sh copies to
# KALLSYMS at boot, names them: the "?" entries of a kernel backtrace, guessed from the
# stack's words). A guest silent on its console (interrupts off on every CPU: no lockup,
# RCU stall or hung task detector can run, and nothing in the guest can print) still shows
# where it spins.
# usage: vcpudump.sh SOCK KALLSYMS
set -u
sock=$1 syms=$2
command -v gdb >/dev/null || { echo "vcpudump: no gdb on the host"; exit 0; }
[ -S "$sock" ] || { echo "vcpudump: no gdb socket $sock"; exit 0; }
# shellcheck disable=SC2016 # gdb's registers, not the shell's
raw=$(timeout 60 gdb -batch -nx -q \
	-ex 'set pagination off' -ex 'set confirm off' \
	-ex "target remote $sock" \
	-ex 'info threads' \
	-ex 'thread apply all printf "cpu rip %lx rsp %lx rbp %lx eflags %lx cs %lx\n", $rip, $rsp, $rbp, $eflags, $cs' \
	-ex 'thread apply all x/96gx $rsp' \
	-ex 'detach' 2>&1)
# shellcheck disable=SC2016 # python, not shell
py='
import bisect, re, sys
syms = []
try:
    for line in open(sys.argv[1]):
        f = line.split()
        if len(f) >= 3 and f[1] in "tT":
            syms.append((int(f[0], 16), f[2], " " + f[3] if len(f) > 3 else ""))
except OSError:
    pass
syms.sort()
addrs = [x[0] for x in syms]
lo = addrs[0] if addrs else 0
hi = addrs[-1] + 0x100000 if addrs else 0

def name(a):
    if not syms or a < lo or a >= hi:
        return None
    i = bisect.bisect_right(addrs, a) - 1
    # past the end of the text (_etext + data) no function is that long
    if i < 0 or a - syms[i][0] >= 0x10000:
        return None
    return "%s+0x%x%s" % (syms[i][1], a - syms[i][0], syms[i][2])

if not syms:
    print("vcpudump: no kallsyms from the guest: addresses unnamed")
cpu = None
for line in sys.stdin:
    line = line.rstrip("\n")
    m = re.match(r"^Thread (\d+)", line)
    if m:
        cpu = int(m.group(1)) - 1
        continue
    m = re.match(r"^cpu rip ([0-9a-f]+) rsp ([0-9a-f]+) rbp ([0-9a-f]+) eflags ([0-9a-f]+) cs ([0-9a-f]+)", line)
    if m:
        rip, rsp, rbp, fl, cs = (int(x, 16) for x in m.groups())
        print("vCPU %s: rip %x %s, rsp %x, interrupts %s, %s mode" % (
            cpu, rip, name(rip) or "", rsp, "on" if fl & 0x200 else "OFF",
            "user" if cs & 3 else "kernel"))
        continue
    if re.match(r"^0x[0-9a-f]+:", line):
        for w in re.findall(r"0x([0-9a-f]{16})", line.split(":", 1)[1]):
            n = name(int(w, 16))
            if n:
                print("vCPU %s:   ? %s" % (cpu, n))
        continue
    # the threads (vCPUs) and whether each was halted, not the warnings about symbols
    if re.match(r"^[* ] +\d+ +Thread", line):
        print("vcpudump: " + line.replace(" in ?? ()", ""))
'
python3 -c "$py" "$syms" <<< "$raw"
