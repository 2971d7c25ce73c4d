#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Builds the kernel matrix's guest: a Debian 12 root (debootstrap bookworm, minbase) with
# Debian's packaged kernels 6.1 (linux-image-amd64), 6.1 PREEMPT_RT (linux-image-rt-amd64) and
# 6.12 (bookworm-backports), made into an ext4 image by mkfs.ext4 -d (no loop mount).
# The mirror is the one this machine's apt uses. The result is cached in
# $SP_KERNELS_CACHE/<key>/ (default /var/cache/schedprof/kernels), where key hashes the
# package lists, the init script and RECIPE: change RECIPE when the steps below change.
# Prints the cache directory on stdout (root.img, vmlinuz-REL, initrd.img-REL, kernels).
# usage: sudo tests/kernels/image.sh [--rebuild]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
RECIPE=1
# what schedprof, its tests (run by meson test --no-rebuild) and examples/compile-job need
# in the guest
PKGS="libbpf1 libelf1 libdw1 zlib1g liblzma5 libbz2-1.0 libcurl4 libdebuginfod1 libcap2-bin
jq procps kmod initramfs-tools python3 meson golang-go bpftool strace time util-linux make gcc
libc6-dev"
# the matrix: label, then how the kernel is chosen (bookworm's metapackages; 6.12 by its exact
# package name from bookworm-backports, so that the rt metapackage stays at 6.1)
# SP_KERNELS_EXTRA adds kernels the same way (6.12-rt:backports:linux-image-rt-amd64 for
# 6.12 PREEMPT_RT), in an image of their own
KERNELS="6.1:linux-image-amd64 6.1-rt:linux-image-rt-amd64 6.12:backports:linux-image-amd64"
KERNELS+=${SP_KERNELS_EXTRA:+ $SP_KERNELS_EXTRA}
cache=${SP_KERNELS_CACHE:-/var/cache/schedprof/kernels}
rebuild=false
for a in "$@"; do
	case $a in
	--rebuild) rebuild=true ;;
	*) echo "usage: $0 [--rebuild]" >&2; exit 2 ;;
	esac
done
log() { echo "image: $*" >&2; }
# the image's directory is the only line on stdout (matrix.sh reads it): what the tools
# print while building goes to stderr (mkfs.ext4 -q still says "Creating regular file")
exec 3>&1 1>&2
[ "$(id -u)" = 0 ] || { log "run it as root (debootstrap, chroot)"; exit 1; }
for t in debootstrap mkfs.ext4 sha256sum; do
	command -v $t >/dev/null || { log "$t not found: sudo scripts/setup.sh --kernels"; exit 1; }
done

key=$( { echo "recipe $RECIPE"; echo "$PKGS"; echo "$KERNELS"; cat "$here/init.sh"; } |
	sha256sum | cut -c1-16)
dir=$cache/$key
if ! $rebuild && [ -f "$dir/kernels" ] && [ -f "$dir/root.img" ]; then
	log "cached: $dir"
	echo "$dir" >&3
	exit 0
fi

# the Debian mirror of this machine's apt sources (the URIs of a stanza with suite bookworm, or
# a sources.list line): never written into the repository
mirror() {
	local f
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk '
			/^[ \t]*$/ { if (uri != "" && suite) { print uri; exit } uri = ""; suite = 0; next }
			/^URIs:/ { uri = $2 }
			/^Suites:/ { for (i = 2; i <= NF; i++) if ($i == "bookworm") suite = 1 }
			END { if (uri != "" && suite) print uri }' "$f"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		awk '$1 == "deb" { for (i = 2; i < NF; i++) if ($(i + 1) == "bookworm" && $i ~ /^[a-z]+:/) { print $i; exit } }' "$f"
	done
}
MIRROR=$(mirror | head -1)
[ -n "$MIRROR" ] || { log "no bookworm mirror in /etc/apt/sources.list{,.d}"; exit 1; }

mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9
# another run may have built it while this one waited
if ! $rebuild && [ -f "$dir/kernels" ] && [ -f "$dir/root.img" ]; then
	log "cached: $dir"
	echo "$dir" >&3
	exit 0
fi
# older recipes' images: only the newest default one is kept. An image with extra kernels
# removes none (the default image stays for the matrix and CI); the next new default one
# removes it.
if [ -z "${SP_KERNELS_EXTRA:-}" ]; then
	for d in "$cache"/*/; do
		[ -d "$d" ] && [ "${d%/}" != "$dir" ] && rm -rf "$d"
	done
fi
rm -rf "$dir"
mkdir -p "$dir"
root=$dir/root.build
mounted=()
cleanup() {
	local i
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[i]}" 2>/dev/null || true; done
	rm -rf "$root"
}
trap cleanup EXIT
start=$(date +%s)
log "debootstrap bookworm from $MIRROR"
debootstrap --variant=minbase --include="$(echo $PKGS | tr ' ' ,)" bookworm "$root" "$MIRROR" \
	> "$dir/debootstrap.log" 2>&1 || { tail -20 "$dir/debootstrap.log" >&2; log "debootstrap failed"; exit 1; }
log "debootstrap: $(($(date +%s) - start)) s"

for m in proc sys dev; do
	mount --bind /$m "$root/$m"
	mounted+=("$root/$m")
done
printf '#!/bin/sh\nexit 101\n' > "$root/usr/sbin/policy-rc.d"
chmod +x "$root/usr/sbin/policy-rc.d"
# no documentation: a smaller image, copied faster
cat > "$root/etc/dpkg/dpkg.cfg.d/01-nodoc" <<'EOF'
path-exclude=/usr/share/doc/*
path-exclude=/usr/share/man/*
path-exclude=/usr/share/locale/*
EOF
# an initramfs with only what boots a virtio disk and 9p: built faster, booted faster
mkdir -p "$root/etc/initramfs-tools/conf.d"
echo MODULES=list > "$root/etc/initramfs-tools/conf.d/matrix"
printf '%s\n' virtio_pci virtio_blk ext4 9p 9pnet_virtio > "$root/etc/initramfs-tools/modules"
echo "deb $MIRROR bookworm-backports main" > "$root/etc/apt/sources.list.d/backports.list"
in_root() { DEBIAN_FRONTEND=noninteractive chroot "$root" "$@"; }
in_root apt-get update -qq > "$dir/apt.log" 2>&1 || { tail "$dir/apt.log" >&2; exit 1; }
want=()
for k in $KERNELS; do
	case $k in
	*:backports:*)
		meta=${k##*:}
		# the exact image package the backports metapackage depends on
		p=$(in_root apt-cache show "$meta/bookworm-backports" 2>/dev/null |
			sed -n 's/^Depends: \(linux-image-[^ ,]*\).*/\1/p' | head -1)
		[ -n "$p" ] || { log "no $meta in bookworm-backports of $MIRROR"; exit 1; }
		want+=("$p/bookworm-backports") ;;
	*) want+=("${k#*:}") ;;
	esac
done
log "installing ${want[*]}"
in_root apt-get install -y --no-install-recommends "${want[@]}" >> "$dir/apt.log" 2>&1 ||
	{ tail -20 "$dir/apt.log" >&2; log "kernel install failed"; exit 1; }
in_root apt-get clean
rm -f "$root/usr/sbin/policy-rc.d"
rm -rf "$root/var/lib/apt/lists"/*_dists_* "$root/var/cache/apt"/*.bin
install -m 755 "$here/init.sh" "$root/sbin/sp-init"
echo guest > "$root/etc/hostname"
# fstab: the root is the image, mounted rw by the kernel
: > "$root/etc/fstab"

# label release: the installed kernels by what the matrix calls them
: > "$dir/kernels.tmp"
for v in "$root"/boot/vmlinuz-*; do
	rel=${v##*/vmlinuz-}
	case $rel in
	6.1.*-rt-amd64) label=6.1-rt ;;
	6.1.*-amd64) label=6.1 ;;
	6.12.*-rt-amd64) label=6.12-rt ;;
	6.12.*-amd64) label=6.12 ;;
	*) label=$rel ;;
	esac
	cp "$v" "$dir/vmlinuz-$rel"
	cp "$root/boot/initrd.img-$rel" "$dir/initrd.img-$rel"
	echo "$label $rel" >> "$dir/kernels.tmp"
done
in_root dpkg-query -W -f='${Package} ${Version}\n' > "$dir/packages"
for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[i]}"; done
mounted=()
size=$(du -sm "$root" | cut -f1)
log "root: $size MB; mkfs.ext4 -d"
mkfs.ext4 -q -F -L sproot -d "$root" "$dir/root.img.tmp" $((size + size / 2 + 512))M
mv "$dir/root.img.tmp" "$dir/root.img"
sort "$dir/kernels.tmp" > "$dir/kernels"
rm -f "$dir/kernels.tmp"
log "built $dir in $(($(date +%s) - start)) s: $(tr '\n' ' ' < "$dir/kernels")"
echo "$dir" >&3
