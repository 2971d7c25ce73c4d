/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The critical path as stacks (`report -f folded|pprof|html --critical-path`): a run
 * whose schedules view holds the path's time by (comm, state, caller), so that the stack
 * formats draw it like any other view: "cc1;[running] 2.1s", "make;[blocked];do_wait 0.4s",
 * "ld;[running alone] 0.3s". Timeline segments record no stacks: a step's stack is its state
 * and its caller.
 */
#ifndef SCHEDPROF_CP_STACKS_H
#define SCHEDPROF_CP_STACKS_H

#include "model/model.h"

/*
 * out (initialized here) becomes a run with run's header (host, kernel, target, times) and a
 * schedules view of its timeline's ranked critical path: one row per caller label, one stack
 * per (comm, state, caller), count 1 per rank, time its nanoseconds. -ENODATA: no timeline;
 * -ENOMEM (out freed).
 */
int sp_cp_stacks_run(const struct sp_run *run, struct sp_run *out);

#endif
