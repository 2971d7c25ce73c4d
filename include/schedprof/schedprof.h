/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Every type shared with the BPF object: include this before schedprof.skel.h. */
#ifndef SCHEDPROF_SCHEDPROF_H
#define SCHEDPROF_SCHEDPROF_H

#include <linux/types.h>
#include "schedprof/limits.h"
#include "schedprof/target.h"
#include "schedprof/sched.h"
#include "schedprof/profile.h"
#include "schedprof/lock.h"
#include "schedprof/fastcaller.h"
#include "schedprof/timeline.h"

#endif
