/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * CO-RE shims: kernel fields that exist only in some versions or configurations, checked on
 * the running kernel through CO-RE relocations (vmlinux.h is the build machine's). Each says
 * "absent" rather than reading at a wrong offset.
 *
 * Checked where they are used, as plain bpf_core_field_exists(): mutex.wait_lock, mutex.owner,
 * rw_semaphore.wait_lock and rw_semaphore.owner, which PREEMPT_RT kernels do not have.
 */
#ifndef SCHEDPROF_COMPAT_BPF_H
#define SCHEDPROF_COMPAT_BPF_H

#include <bpf/bpf_core_read.h>

/* *off = the offset of t.f when the running kernel has it; else false. */
#define sp_field_off(off, t, f)								\
	(bpf_core_field_exists(struct t, f) ?						\
		 (*(off) = bpf_core_field_offset(struct t, f), true) : false)

/* The same for a field that was renamed: its name now (t.f), else before (old_t.old_f). */
#define sp_field_off2(off, t, f, old_t, old_f)						\
	(sp_field_off(off, t, f) || sp_field_off(off, old_t, old_f))

/* Linux < 5.14: rq.__lock was rq.lock. */
struct rq___pre514 {
	raw_spinlock_t lock;
} __attribute__((preserve_access_index));

/* Linux < 6.8: address_space.i_private_lock was private_lock. */
struct address_space___pre68 {
	spinlock_t private_lock;
} __attribute__((preserve_access_index));

/* Linux 6.6 to 6.10: inode.i_ctime_sec and i_ctime_nsec were __i_ctime; before 6.6 i_ctime. */
struct inode___pre611 {
	struct timespec64 __i_ctime;
} __attribute__((preserve_access_index));

struct inode___pre66 {
	struct timespec64 i_ctime;
} __attribute__((preserve_access_index));

/*
 * ino's change time into *sec and *nsec, through whichever field the running kernel has
 * (direct loads: ino is a BTF pointer); 0 when it has none of them.
 */
static __always_inline void sp_inode_ctime(struct inode *ino, __s64 *sec, __u32 *nsec)
{
	if (bpf_core_field_exists(struct inode, i_ctime_sec)) {
		*sec = ino->i_ctime_sec;
		*nsec = ino->i_ctime_nsec;
	} else if (bpf_core_field_exists(struct inode___pre611, __i_ctime)) {
		struct inode___pre611 *o = (void *)ino;

		*sec = o->__i_ctime.tv_sec;
		*nsec = o->__i_ctime.tv_nsec;
	} else if (bpf_core_field_exists(struct inode___pre66, i_ctime)) {
		struct inode___pre66 *o = (void *)ino;

		*sec = o->i_ctime.tv_sec;
		*nsec = o->i_ctime.tv_nsec;
	} else {
		*sec = 0;
		*nsec = 0;
	}
}

/*
 * PREEMPT_RT: a mutex is an rt_mutex_base (rtmutex), an rw_semaphore an rwbase_rt (rwbase: a
 * readers count and an rt_mutex_base), a spinlock_t an rt_mutex_base at its address. A
 * contention names the rt_mutex_base inside the lock (LCB_F_RT), the rwbase_rt while a
 * writer waits for readers (LCB_F_RT | READ or WRITE), or the spinlock_t (LCB_F_RT | SPIN).
 */
struct rwbase_rt___sp {
	struct rt_mutex_base rtmutex;
} __attribute__((preserve_access_index));

struct rw_semaphore___rt {
	struct rwbase_rt___sp rwbase;
} __attribute__((preserve_access_index));

struct mutex___rt {
	struct rt_mutex_base rtmutex;
} __attribute__((preserve_access_index));

/* PREEMPT_RT: where a mutex's rt_mutex_base is in it. */
static __always_inline bool sp_rt_mutex_off(__u64 *off)
{
	return sp_field_off(off, mutex___rt, rtmutex);
}

/* PREEMPT_RT: where an rw_semaphore's rwbase_rt is, and the rt_mutex_base inside it. */
static __always_inline bool sp_rt_rwsem_base_off(__u64 *off)
{
	return sp_field_off(off, rw_semaphore___rt, rwbase);
}

static __always_inline bool sp_rt_rwsem_mutex_off(__u64 *off)
{
	return sp_field_off(off, rw_semaphore___rt, rwbase.rtmutex);
}

/* A runqueue's lock. */
static __always_inline bool sp_rq_lock_off(__u64 *off)
{
	return sp_field_off2(off, rq, __lock, rq___pre514, lock);
}

/* The lock of an address_space's buffer heads. */
static __always_inline bool sp_mapping_private_lock_off(__u64 *off)
{
	return sp_field_off2(off, address_space, i_private_lock, address_space___pre68, private_lock);
}

/* Linux >= 5.10: signal_struct.exec_update_lock (an rwsem; 5.7 to 5.9 had a mutex). */
static __always_inline bool sp_exec_update_lock_off(__u64 *off)
{
	return sp_field_off(off, signal_struct, exec_update_lock);
}

/*
 * The runqueue of the CPU t is on (this CPU for current), through its CFS runqueue:
 * sched_entity.cfs_rq and cfs_rq.rq exist with CONFIG_FAIR_GROUP_SCHED only. 0 without.
 */
static __always_inline __u64 sp_task_rq(struct task_struct *t)
{
	if (!bpf_core_field_exists(struct sched_entity, cfs_rq) ||
	    !bpf_core_field_exists(struct cfs_rq, rq))
		return 0;
	return (__u64)BPF_CORE_READ(t, se.cfs_rq, rq);
}

/*
 * The current CPU's preempt count, to tell interrupt context (in_hardirq(),
 * in_serving_softirq()) apart from a task's; -1 when unknown.
 *
 * x86 keeps it per CPU (the variable __preempt_count, pcpu_hot.preempt_count from Linux 6.2
 * to 6.14). A __ksym reference to it cannot load without CONFIG_KALLSYMS_ALL (the verifier
 * finds a variable's address in kallsyms), so it is read through this CPU's runqueue, at the
 * distance of the two per-CPU variables (preempt_rq_off, from BTF by user space:
 * kfeatures_preempt_rq_off()). Other architectures keep it in current->thread_info.
 */
struct thread_info___sp {
	int preempt_count;
} __attribute__((preserve_access_index));

struct task_struct___sp {
	struct thread_info___sp thread_info;
} __attribute__((preserve_access_index));

static __always_inline __s64 sp_preempt_count(struct task_struct *t, __u32 has_rq_off,
					       __s64 rq_off)
{
	struct task_struct___sp *ti;
	__u32 cpu;
	__u64 rq;
	int pc;

	if (has_rq_off) {
		/*
		 * This CPU's runqueue as sp_cpu_probe found it (common.bpf.c), else through t
		 * (current) with probe reads: a direct load of t->se.cfs_rq through the trusted
		 * pointer made the verifier search the kernel's BTF by name at load.
		 */
		cpu = bpf_get_smp_processor_id();
		rq = cpu < SP_MAX_CPUS ? sp_cpu_rq[cpu & (SP_MAX_CPUS - 1)] : 0;
		if (!rq)
			rq = sp_task_rq(t);
		if (rq) {
			if (bpf_probe_read_kernel(&pc, sizeof(pc), (void *)rq + rq_off))
				return -1;
			return (__u32)pc & 0x7fffffff; /* x86: bit 31 is the inverted need-resched */
		}
	}
	if (bpf_core_field_exists(struct thread_info___sp, preempt_count)) {
		ti = (void *)t;
		return (__u32)BPF_CORE_READ(ti, thread_info.preempt_count);
	}
	return -1;
}

#define SP_HARDIRQ_MASK 0x00ff0000 /* HARDIRQ_MASK | NMI_MASK */
#define SP_SOFTIRQ_OFFSET 0x00000100

#endif
