// SPDX-License-Identifier: GPL-2.0-only
/*
 * The maps and globals that more than one object's programs use, defined once here; the
 * others declare them extern. Linked right after target.bpf.c (bpf/meson.build) on purpose:
 * a map the linker meets as extern before its definition fails the skeleton's map
 * relocation, so with every shared map defined here (or in target.bpf.c, ustack.bpf.c,
 * before the views) the views' objects may come in any order.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "common.bpf.h"
#include "compat.bpf.h"
#include "target.bpf.h"
#include "walk.bpf.h"
/* lock_task: the locks view's begin and end (lock.bpf.c), and the switch (sched.bpf.c) */
#define SP_LOCK_DEFINE
#include "lock.bpf.h"
/* frame_dist and learn_dist(): the schedules and locks views' fast callers */
#define SP_FASTCALLER_DEFINE
#include "fastcaller.bpf.h"
/* tl_events: the timeline's programs (timeline.bpf.c) and the switch (sched.bpf.c) */
#define SP_TL_DEFINE
#include "timeline.bpf.h"
