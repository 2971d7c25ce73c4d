#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# bench/wakeup.sh -- BPF cost of the schedules view's wake-up programs: run time
# per event of sp_waking (sched_waking), sp_wakeup_new and sp_switch, from bpf_stats, while a
# pinned `perf bench sched pipe` runs under `schedprof trace -a --views schedules`, with and
# without --wakers (bench/progcost.sh does each measurement). Every wake-up of the benchmark is
# of a traced task (-a), so each one stamps the task storage: the wake-up program's worst case
# without --wakers.
#
# usage: sudo bench/wakeup.sh [-r RUNS] [-l LOOPS]     (env SCHEDPROF: the binary)
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
RUNS=3 LOOPS=160000
while getopts "r:l:h" opt; do
	case $opt in
	r) RUNS=$OPTARG ;; l) LOOPS=$OPTARG ;;
	*) echo "usage: $0 [-r RUNS] [-l LOOPS]" >&2; exit 2 ;;
	esac
done
for flag in "" --wakers; do
	echo "== ${flag:-default (no --wakers)}"
	PIPE_LOOPS=$LOOPS "$HERE/progcost.sh" -r "$RUNS" -- --views schedules $flag || exit
done
