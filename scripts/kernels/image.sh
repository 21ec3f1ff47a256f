#!/bin/bash
# Sourced by scripts/kernels/run: the cached root filesystem and kernels.
#
#   $CACHE/root-$ROOT_KEY.tar.zst   debootstrap of bookworm (no kernel)
#   $CACHE/deb/linux-image-*.deb    Debian's kernel packages
#   $CACHE/img/$KVER/{disk.img,vmlinuz,initrd.img}
#                                   the root filesystem with that kernel
#                                   installed (its initrd made by
#                                   initramfs-tools), booted read-only
#                                   through a qcow2 overlay per run
#
# Everything comes from the Debian archive apt already uses on this
# machine. Needs: root, debootstrap, zstd, e2fsprogs (all from Debian).

# What the VM needs at run time: the libraries the binaries link, the
# tools the tests and steps call (ip, bpftool, xdp-filter/xdp-loader,
# python3 for frames, redis-server for tests/lib/redis_server.c), and
# what makes an initrd for the kernels installed into it.
ROOT_PKGS=initramfs-tools,kmod,udev,iproute2,procps,bpftool,xdp-tools,\
libbpf1,libxdp1,libyaml-0-2,libjansson4,libhiredis0.14,libmicrohttpd12,\
libelf1,zlib1g,libsystemd0,libcriterion3,python3,redis-server,util-linux

# The one file baked into the image: mounts what the kernel does not,
# the build's copy (read-only) and the results (9p), then hands over to
# its scripts/kernels/guest. The cache key includes it.
read -r -d '' BOOT_INIT <<'EOF'
#!/bin/sh
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
mkdir -p /dev/pts /dev/shm; mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm; mount -t tmpfs tmpfs /run; mount -t tmpfs tmpfs /tmp
modprobe -q 9pnet_virtio; modprobe -q 9p
mkdir -p /xrl /out
mount -t 9p -o trans=virtio,version=9p2000.L,ro xrl /xrl &&
	mount -t 9p -o trans=virtio,version=9p2000.L out /out &&
	[ -x /xrl/scripts/kernels/guest ] &&
	exec /xrl/scripts/kernels/guest
echo "=== vm: no checkout at /xrl"; echo o >/proc/sysrq-trigger; sleep 10
EOF
ROOT_KEY=$(printf '%s\n%s\n' "$ROOT_PKGS" "$BOOT_INIT" | sha256sum | cut -c1-12)

# The mirror apt uses here for Debian (deb822 or one-line sources).
debian_mirror() {
	local m
	m=$(grep -h '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null |
		awk '$2 ~ /debian\/?$/ {print $2; exit}')
	[ -n "$m" ] || m=$(grep -hE '^deb ' /etc/apt/sources.list \
		/etc/apt/sources.list.d/*.list 2>/dev/null |
		awk '$2 ~ /debian\/?$/ {print $2; exit}')
	echo "${m:-http://deb.debian.org/debian}"
}

need_host_tools() {
	local missing=
	command -v debootstrap >/dev/null || missing="$missing debootstrap"
	command -v zstd >/dev/null || missing="$missing zstd"
	command -v mke2fs >/dev/null || missing="$missing e2fsprogs"
	command -v qemu-img >/dev/null || missing="$missing qemu-utils"
	command -v qemu-system-x86_64 >/dev/null || missing="$missing qemu-system-x86"
	[ -z "$missing" ] && return 0
	log "installing from Debian:$missing"
	apt-get install -y -qq --no-install-recommends $missing >"$WORK/apt.log" 2>&1 ||
		{ apt-get update -qq >>"$WORK/apt.log" 2>&1 &&
		  apt-get install -y -qq --no-install-recommends $missing >>"$WORK/apt.log" 2>&1; } ||
		{ tail -5 "$WORK/apt.log"; return 1; }
}

# $CACHE/root-$ROOT_KEY.tar.zst, built once.
ensure_root() {
	ROOT_TAR=$CACHE/root-$ROOT_KEY.tar.zst
	[ -s "$ROOT_TAR" ] && return 0
	local t0=$SECONDS b=$WORK/debootstrap f
	log "root filesystem: debootstrap bookworm from $(debian_mirror) (once; several minutes)"
	mkdir -p "$b/root" "$CACHE"
	debootstrap --variant=minbase --include="$ROOT_PKGS" bookworm "$b/root" \
		"$(debian_mirror)" >"$b/log" 2>&1 ||
		{ tail -20 "$b/log"; log "debootstrap failed"; return 1; }
	printf '%s\n' "$BOOT_INIT" >"$b/root/sbin/xrl-init"
	chmod 755 "$b/root/sbin/xrl-init"
	echo xrl-vm >"$b/root/etc/hostname"
	rm -rf "$b/root/var/cache/apt/archives/"*.deb "$b/root/var/lib/apt/lists/"*
	tar -C "$b/root" --numeric-owner -cf - . | zstd -q -T0 -3 -o "$ROOT_TAR.part" &&
		mv "$ROOT_TAR.part" "$ROOT_TAR" || { rm -f "$ROOT_TAR.part"; return 1; }
	rm -rf "$b"
	# What earlier keys built is of no more use.
	for f in "$CACHE"/root-*.tar.zst "$CACHE"/img/*; do
		case $f in "$ROOT_TAR" | "$CACHE/img/$ROOT_KEY"-*) ;; *) rm -rf "$f" ;; esac
	done
	log "root filesystem: $(du -h "$ROOT_TAR" | cut -f1) in $((SECONDS - t0)) s"
	timing rootfs $((SECONDS - t0))
}

# kernel_suite NAME: the Debian suite whose linux-image-amd64 is that kernel.
kernel_suite() {
	case $1 in
	5.10) echo bullseye ;;
	6.1) echo bookworm ;;
	6.12) echo trixie ;;
	*) return 1 ;;
	esac
}

# ensure_kernel NAME: sets KDEB to that kernel's package in the cache,
# downloaded once (the linux-image-X.Y.Z-N-amd64 that the suite's
# linux-image-amd64 depends on), with a throw-away apt configuration.
# Removing $CACHE/deb/*-SUITE.deb takes the suite's newest next time.
ensure_kernel() {
	local suite a t img
	suite=$(kernel_suite "$1") || { log "$1: no Debian suite known for it"; return 1; }
	mkdir -p "$CACHE/deb"
	KDEB=$(ls "$CACHE/deb/"*"-$suite.deb" 2>/dev/null | head -1)
	[ -n "$KDEB" ] && return 0
	t=$WORK/apt-$suite
	mkdir -p "$t/lists/partial" "$t/cache/archives/partial"
	echo "deb $(debian_mirror) $suite main" >"$t/sources.list"
	a="-o Dir::Etc::sourcelist=$t/sources.list -o Dir::Etc::sourceparts=/nonexistent
	   -o Dir::State::Lists=$t/lists -o Dir::Cache=$t/cache -o APT::Get::List-Cleanup=0"
	apt-get $a update -qq >"$t/log" 2>&1 || { tail -5 "$t/log"; return 1; }
	img=$(apt-cache $a depends linux-image-amd64 2>/dev/null |
		awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
	[ -n "$img" ] || { log "$1: no linux-image-amd64 in $suite"; return 1; }
	log "$1: downloading $img from $suite"
	(cd "$t" && apt-get $a download "$img" >>"$t/log" 2>&1) ||
		{ tail -5 "$t/log"; return 1; }
	mv "$t/${img}_"*.deb "$CACHE/deb/${img}-$suite.deb"
	KDEB=$CACHE/deb/${img}-$suite.deb
}

# ensure_image NAME: sets IMG to the directory with disk.img, vmlinuz and
# initrd.img of that kernel installed into the root filesystem.
ensure_image() {
	local kver r t0=$SECONDS
	ensure_kernel "$1" || return 1
	kver=$(dpkg-deb -f "$KDEB" Package | sed 's/^linux-image-//; s/-unsigned$//')
	IMG=$CACHE/img/$ROOT_KEY-$kver
	[ -s "$IMG/disk.img" ] && [ -s "$IMG/initrd.img" ] && return 0
	log "$1: root filesystem with $kver (once)"
	r=$WORK/root-$1
	rm -rf "$r" "$IMG"; mkdir -p "$r" "$IMG"
	zstd -dc "$ROOT_TAR" | tar -C "$r" -xf - || return 1
	cp "$KDEB" "$r/tmp/k.deb"
	# --force-depends: trixie's kernel asks for newer kmod/linux-base
	# than bookworm's, which make its initrd all the same.
	mount -t proc proc "$r/proc" &&
		chroot "$r" dpkg -i --force-depends /tmp/k.deb >"$WORK/kinstall-$1.log" 2>&1
	umount "$r/proc" 2>/dev/null
	rm -f "$r/tmp/k.deb"
	[ -s "$r/boot/initrd.img-$kver" ] ||
		{ tail -20 "$WORK/kinstall-$1.log"; log "$1: no initrd for $kver"; return 1; }
	cp "$r/boot/vmlinuz-$kver" "$IMG/vmlinuz"
	cp "$r/boot/initrd.img-$kver" "$IMG/initrd.img"
	mke2fs -q -t ext4 -L xrlroot -d "$r" "$IMG/disk.img.part" 4G \
		>"$WORK/mke2fs-$1.log" 2>&1 &&
		mv "$IMG/disk.img.part" "$IMG/disk.img" ||
		{ tail -5 "$WORK/mke2fs-$1.log"; rm -rf "$IMG"; log "$1: mke2fs failed"; return 1; }
	echo "$kver" >"$IMG/kver"
	rm -rf "$r"
	timing "image-$1" $((SECONDS - t0))
}
