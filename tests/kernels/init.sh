#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The guest's init (installed as /sbin/sp-init by image.sh): mounts the kernel's file systems,
# the results share at /out and the source tree at the path /out/src names (both 9p, so the
# host's build runs as is: host and guest are Debian 12 userland), runs /out/cmd.sh with its
# output in /out/log and its status in /out/rc, then powers off. No systemd: nothing else runs.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
mount -t debugfs debugfs /sys/kernel/debug
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t bpf bpf /sys/fs/bpf
mount -t cgroup2 cgroup2 /sys/fs/cgroup
hostname guest
modprobe 9pnet_virtio 2>/dev/null
mkdir -p /out
opts=trans=virtio,version=9p2000.L,msize=1048576
if ! mount -t 9p -o $opts out /out; then
	echo "sp-init: cannot mount the results share" > /dev/console
else
	src=$(cat /out/src 2>/dev/null)
	if [ -n "$src" ]; then
		mkdir -p "$src"
		mount -t 9p -o $opts src "$src" || echo "sp-init: cannot mount $src" > /dev/console
	fi
	# the guest's clock starts at the image's build time or earlier: the host's time, so that
	# files of the source tree are not in the future
	date -s "@$(cat /out/now 2>/dev/null || echo 0)" >/dev/null 2>&1
	echo "sp-init: $(uname -r) up" > /dev/console
	if [ -f /out/cmd.sh ]; then
		sh /out/cmd.sh > /out/log 2>&1
		echo $? > /out/rc
	fi
	echo "sp-init: done rc=$(cat /out/rc 2>/dev/null)" > /dev/console
fi
sync
echo o > /proc/sysrq-trigger
sleep 10
