# Sourced by the in-VM steps (cwd: /xrl, the build's copy, read-only).
#
# The VM's two virtio-net NICs are joined by a qemu hub and nothing else:
# eth1 is moved into the namespace $NS (the receiver, where XDP runs in
# native mode), eth0 stays in the VM's own namespace and sends crafted
# frames with scripts/wire.py (bounded counts, sources in 198.18.0.0/15).
CLI=/xrl/${XRL_BUILD:-build}/xdp-ratelimit
WIRE=/xrl/scripts/wire.py
NS=xrlrx
TX=eth0
RX=eth1
PIN=/sys/fs/bpf/xrlvm
TMP=$(mktemp -d /tmp/xrlstep.XXXXXX)
PASSED=0
FAILED=0

# nsenter, not ip netns exec: the latter makes a mount namespace of its
# own, where bpffs pins would vanish with it.
in_rx() { nsenter --net="/run/netns/$NS" "$@"; }

# check WHAT CMD...: one counted check, its line in the log.
check() {
	local what=$1
	shift
	if "$@"; then
		PASSED=$((PASSED + 1))
		echo "ok: $what"
	else
		FAILED=$((FAILED + 1))
		echo "FAILED: $what"
	fi
}

# verdict WHAT: the step's result line (the guest adds the time).
verdict() {
	local v=pass
	[ "$FAILED" = 0 ] && [ "$PASSED" -gt 0 ] || v=fail
	echo "$v $PASSED $FAILED $*" >"/out/$STEP.result"
}

nics_up() {
	# Room for every frame a step sends in the receiver's socket (a
	# frame on virtio_net with XDP takes a page of it).
	sysctl -qw net.core.rmem_max=33554432
	ip netns add "$NS"
	ip link set "$RX" netns "$NS"
	ip link set "$TX" up
	in_rx ip link set lo up
	in_rx ip link set "$RX" up
	ip addr add 198.18.0.1/24 dev "$TX"
	in_rx ip addr add 198.18.0.2/24 dev "$RX"
	RX_MAC=$(ip -n "$NS" -o link show "$RX" | sed 's/.*link\/ether \([0-9a-f:]*\).*/\1/')
	# Carrier: a virtio NIC is up at once, but give udev and DAD a moment.
	sleep 1
}

nics_down() {
	in_rx ip link set "$RX" xdp off 2>/dev/null
	ip link set "$TX" xdp off 2>/dev/null
	# Deleting the namespace gives eth1 back to the VM's own.
	ip netns del "$NS" 2>/dev/null
	ip addr flush dev "$TX" 2>/dev/null
	rm -rf "$PIN" "$TMP"
}

# send_frames "SRC:COUNT ..." -> $TMP/counts, JSON {src: frames received
# on eth1 past its XDP program}.
send_frames() {
	local s src count
	rm -f "$TMP/ready" "$TMP/done"
	in_rx python3 "$WIRE" recv "$RX" "$TMP/ready" "$TMP/done" >"$TMP/counts" &
	local recv=$!
	while [ ! -e "$TMP/ready" ]; do sleep 0.1; done
	SEND_T0=$(date +%s.%N)
	for s in $1; do
		src=${s%%:*}
		count=${s#*:}
		python3 "$WIRE" send "$TX" "$RX_MAC" "$src" "$count"
	done
	SEND_T1=$(date +%s.%N)
	sleep 1
	touch "$TMP/done"
	wait "$recv"
	SEND_SECONDS=$(python3 -c "print(round($SEND_T1 - $SEND_T0, 2))")
	echo "received: $(cat "$TMP/counts") (sent in $SEND_SECONDS s)"
}

# received SRC: frames of SRC that came through.
received() {
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2], 0))' \
		"$TMP/counts" "$1"
}

trap nics_down EXIT
