#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# -p on a running process counts grandchildren forked after attach, and stops by itself
# when the whole tree has exited.
. "$(dirname "$0")/lib.sh"
require_bpf
N=1000
"$SPWORK" tree "$TMP/go" $N &
tree=$!
"$SCHEDPROF" trace -p $tree -d 60 -f json -o "$TMP/run.json" 2> "$TMP/err" &
sp=$!
wait_attached $sp
sleep 0.2 # the /proc walk that adds the tree follows the attach
touch "$TMP/go"
wait $tree || fail "workload failed"
start=$(date +%s)
wait $sp || { cat "$TMP/err"; fail "schedprof -p exited $?"; }
[ $(( $(date +%s) - start )) -lt 10 ] || fail "schedprof did not stop when the tree exited"
n=$(caller_count "$TMP/run.json" "$(pipe_read_fn)" sp_grandchild)
assert_between "grandchild $(pipe_read_fn) count" "$n" $((N * 99 / 100)) $((N * 101 / 100))
