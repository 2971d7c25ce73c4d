#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The speed of report --what-if: a generated 10^6-segment run that 2 CPUs could
# have produced (bench/gen_whatif.py), reported RUNS times with --what-if cpus=1,2,4,8,16 and
# RUNS times without (what loading the run and a table cost alone); each line is one run's
# wall and user seconds and peak RSS (GNU time).
#   bench/whatif.sh [RUNS]    (SCHEDPROF: the binary, default build/src/schedprof)
set -eu
SCHEDPROF=${SCHEDPROF:-build/src/schedprof}
RUNS=${1:-3}
here=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d /tmp/schedprof-bench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
python3 "$here/gen_whatif.py" "$here/../tests/fixtures/run_tl.json" "$TMP/big.json" 200 1000000
for ((i = 0; i < RUNS; i++)); do
	/usr/bin/time -f "what-if cpus=1,2,4,8,16: %e s wall, %U s user, %M KB peak" \
		"$SCHEDPROF" report "$TMP/big.json" --what-if cpus=1,2,4,8,16 > /dev/null
	/usr/bin/time -f "load and a table only:  %e s wall, %U s user, %M KB peak" \
		"$SCHEDPROF" report "$TMP/big.json" --views schedules > /dev/null
done
