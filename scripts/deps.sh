#!/bin/sh
# Installs every build, test and benchmark dependency from Debian's
# packages. Idempotent; with --if-missing it does nothing (and needs no
# network) when everything is already installed.
set -eu

# procps: kill(1), which the installed unit's ExecReload runs, and ps;
# xdp-tools: xdp-filter, a peer in make bench. A minimal Debian has
# neither (tests/install checks the unit on such a machine). libxdp-dev:
# attach goes through libxdp's dispatcher (beside other XDP programs).
PACKAGES="make gcc clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev
linux-libc-dev pkg-config libcriterion-dev libyaml-dev libjansson-dev
libhiredis-dev libmicrohttpd-dev redis-server iproute2 nftables iptables
curl python3 python3-prometheus-client libclang-rt-14-dev systemd man-db
libsystemd-dev procps xdp-tools libxdp-dev tcpdump"

missing=""
for pkg in $PACKAGES; do
	dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null |
		grep -q "install ok installed" || missing="$missing $pkg"
done

if [ -z "$missing" ]; then
	[ "${1:-}" = "--if-missing" ] || echo "deps: all installed"
	exit 0
fi

if [ "$(id -u)" != 0 ]; then
	echo "deps: missing:$missing (run 'make deps' as root)" >&2
	exit 1
fi
echo "deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
