// SPDX-License-Identifier: BSD-2-Clause
/*
 * bench/ustackcopy.bpf.c -- what a user stack costs at sched_switch, by way:
 * the kernel's frame-pointer walk (raw IPs, and with build-ids as schedprof names frames),
 * against copying the stack above the user SP for an unwinder in user space (perf's way),
 * 4, 8 and 16 KB in one read, 16 KB a page at a time (a read that crosses the stack's top
 * fails whole, and that failure is costly), and 16 KB bounded by the end of the stack's
 * mapping, into a per-CPU buffer, and the last into a ring buffer record that the loader
 * consumes. Unwinding the copy in user space is not measured here. And the BPF walk that
 * docs/design/user-stacks-cfi.md designs, by its cost alone: 16 frames, each one lookup of a
 * rule by (image, PC) in a hash map (hits once the first events filled it) and one 8-byte
 * read of the user stack, or the words taken from a 1 KB window read once. One program per
 * way; bench/ustackcopy.sh attaches them one at a time.
 * Needs vmlinux.h (build/bpf).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#define COPY_MAX 16384
#define PAGE 4096

struct buf {
	__u64 n;
	__u8 data[COPY_MAX + 2 * PAGE]; /* the paged copy's bound, as the verifier sees it */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct buf);
} scratch SEC(".maps");

/* events whose copy or walk succeeded, and failed (bpftool map dump of .bss) */
__u64 us_ok, us_fail;

static __always_inline void count(long rc)
{
	__sync_fetch_and_add(rc < 0 ? &us_fail : &us_ok, 1);
}

/* The user SP of the task switching out, or 0 (a kernel thread). */
static __always_inline __u64 user_sp(void)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct pt_regs *regs;

	if (t->flags & 0x00200000 /* PF_KTHREAD */)
		return 0;
	regs = (struct pt_regs *)bpf_task_pt_regs(t);
	return regs ? regs->sp : 0;
}

static __always_inline struct buf *buf(void)
{
	__u32 k = 0;

	return bpf_map_lookup_elem(&scratch, &k);
}

SEC("tp_btf/sched_switch")
int us_empty(void *ctx)
{
	return 0;
}

SEC("tp_btf/sched_switch")
int us_fpwalk(void *ctx)
{
	struct buf *b = buf();

	if (b)
		count(b->n = bpf_get_stack(ctx, b->data, 32 * 8, BPF_F_USER_STACK));
	return 0;
}

SEC("tp_btf/sched_switch")
int us_fpwalk_bid(void *ctx)
{
	struct buf *b = buf();

	if (b)
		count(b->n = bpf_get_stack(ctx, b->data, 32 * 32,
					   BPF_F_USER_STACK | BPF_F_USER_BUILD_ID));
	return 0;
}

#define COPY_PROG(name, size)                                                                  \
	SEC("tp_btf/sched_switch")                                                             \
	int name(void *ctx)                                                                    \
	{                                                                                      \
		struct buf *b = buf();                                                         \
		__u64 sp = user_sp();                                                          \
                                                                                               \
		if (b && sp)                                                                   \
			count(b->n = bpf_probe_read_user(b->data, size, (void *)sp));          \
		return 0;                                                                      \
	}
COPY_PROG(us_copy4k, 4096)
COPY_PROG(us_copy8k, 8192)
COPY_PROG(us_copy16k, 16384)

SEC("tp_btf/sched_switch")
int us_copy16k_paged(void *ctx)
{
	struct buf *b = buf();
	__u64 sp = user_sp(), off = 0;
	int i;

	if (!b || !sp)
		return 0;
	for (i = 0; i < COPY_MAX / PAGE + 1; i++) {
		__u64 len = PAGE - ((sp + off) & (PAGE - 1));

		if (off + len > COPY_MAX)
			len = COPY_MAX - off;
		if (!len || off >= COPY_MAX || len > PAGE)
			break;
		if (bpf_probe_read_user(b->data + (off & (COPY_MAX - 1)), len & (PAGE * 2 - 1),
					(void *)(sp + off)))
			break;
		off += len;
	}
	b->n = off;
	count(off ? 0 : -1);
	return 0;
}

struct vma_end {
	__u64 end;
};

static long vma_end_cb(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	((struct vma_end *)data)->end = vma->vm_end;
	return 0;
}

/* 16 KB or up to the end of the stack's mapping (bpf_find_vma()): no read that faults */
SEC("tp_btf/sched_switch")
int us_copy16k_vma(void *ctx)
{
	struct buf *b = buf();
	__u64 sp = user_sp(), len;
	struct vma_end e = {};

	if (!b || !sp)
		return 0;
	if (bpf_find_vma(bpf_get_current_task_btf(), sp, vma_end_cb, &e, 0) || e.end <= sp) {
		count(-1);
		return 0;
	}
	len = e.end - sp;
	if (len > COPY_MAX)
		len = COPY_MAX;
	count(b->n = bpf_probe_read_user(b->data, len & (COPY_MAX * 2 - 1), (void *)sp));
	return 0;
}

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);
} ring SEC(".maps");

struct rec {
	__u64 ip, sp, bp, len;
	__u8 data[COPY_MAX];
};

/* us_copy16k_vma's copy sent to user space as a ring buffer record with the registers (the
 * loader consumes it and drops it): what the collector would pay */
SEC("tp_btf/sched_switch")
int us_copy16k_ring(void *ctx)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct vma_end e = {};
	struct pt_regs *regs;
	struct rec *r;
	__u64 sp, len;

	if (t->flags & 0x00200000 /* PF_KTHREAD */)
		return 0;
	regs = (struct pt_regs *)bpf_task_pt_regs(t);
	if (!regs || !(sp = regs->sp))
		return 0;
	if (bpf_find_vma(t, sp, vma_end_cb, &e, 0) || e.end <= sp) {
		count(-1);
		return 0;
	}
	r = bpf_ringbuf_reserve(&ring, sizeof(*r), 0);
	if (!r) {
		count(-1);
		return 0;
	}
	len = e.end - sp;
	if (len > COPY_MAX)
		len = COPY_MAX;
	r->ip = regs->ip;
	r->sp = sp;
	r->bp = regs->bp;
	r->len = len;
	if (bpf_probe_read_user(r->data, len, (void *)sp)) {
		count(-1);
		bpf_ringbuf_discard(r, 0);
		return 0;
	}
	count(0);
	bpf_ringbuf_submit(r, 0);
	return 0;
}

/* A learned rule, as docs/design/user-stacks-cfi.md has it: the CFA and the caller's FP. */
struct rule_key {
	__u64 image, pc;
};
struct rule {
	__s32 cfa_off;
	__s16 fp_off;
	__u8 cfa, fp;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct rule_key);
	__type(value, struct rule);
} rules SEC(".maps");

#define RULE_FRAMES 16
#define WIN_WORDS 128

struct rwalk {
	__u64 image, sp, found;
	__u64 *win; /* NULL: a read per frame */
};

static long rule_step(__u64 i, struct rwalk *w)
{
	struct rule_key k = { .image = w->image };
	struct rule *r;
	__u64 ra = 0;

	/* the word a frame's return address would be in: 32 bytes apart */
	if (w->win) {
		ra = w->win[(i * 4) & (WIN_WORDS - 1)];
	} else if (bpf_probe_read_user(&ra, sizeof(ra), (void *)(w->sp + i * 32))) {
		return 1;
	}
	k.pc = i; /* the rule of frame i: the same keys at every event, so that they hit */
	r = bpf_map_lookup_elem(&rules, &k);
	if (!r) {
		struct rule n = { .cfa_off = 16, .cfa = 1 };

		bpf_map_update_elem(&rules, &k, &n, BPF_ANY);
		return 0;
	}
	w->found += r->cfa_off + (ra & 1);
	return 0;
}

static __always_inline int rule_walk(bool window)
{
	struct rwalk w = { .image = bpf_get_current_pid_tgid() >> 32, .sp = user_sp() };
	struct buf *b = buf();

	if (!b || !w.sp)
		return 0;
	if (window) {
		if (bpf_probe_read_user(b->data, WIN_WORDS * 8, (void *)w.sp)) {
			count(-1);
			return 0;
		}
		w.win = (__u64 *)b->data;
	}
	bpf_loop(RULE_FRAMES, rule_step, &w, 0);
	b->n = w.found;
	count(0);
	return 0;
}

/* 16 frames by rules, a read of the stack per frame */
SEC("tp_btf/sched_switch")
int us_rules16(void *ctx)
{
	return rule_walk(false);
}

/* the same with the words from a 1 KB window read once (sp_user_walk()'s read) */
SEC("tp_btf/sched_switch")
int us_rules16_win(void *ctx)
{
	return rule_walk(true);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
