# In-VM step: end to end on the virtio NICs in native XDP mode.
#
# xdp-ratelimit attaches to eth1 (moved into its own namespace) in
# native mode, through libxdp's dispatcher (these kernels run it), with
# the policy below; eth0 sends bounded bursts from an
# allowed, a limited and a denied source; what arrives past XDP on eth1
# is counted per source and compared with the policy and with what the
# program itself counted (stats --json).
STEP=e2e
. scripts/kernels/steps/lib.sh

ALLOWED=198.18.10.1 LIMITED=198.18.20.1 DENIED=198.18.30.1
SENT_ALLOWED=200 SENT_LIMITED=300 SENT_DENIED=100
BURST=20 PPS=1
cat >"$TMP/policy.yaml" <<EOF
keys:
  ipv4_prefix: 32
  ipv6_prefix: 64
default:
  action: allow
rules:
  - name: allowed
    cidr: 198.18.10.0/24
    action: allow
  - name: limited
    cidr: 198.18.20.0/24
    action: limit
    pps: $PPS
    burst: $BURST
  - name: denied
    cidr: 198.18.30.0/24
    action: deny
EOF

nics_up
echo "# $CLI --pin-dir $PIN attach $RX --mode native --policy policy.yaml --max-sources 4096"
in_rx "$CLI" --pin-dir "$PIN" attach "$RX" --mode native --policy "$TMP/policy.yaml" \
	--max-sources 4096 >"$TMP/attach" 2>&1
rc=$?
cat "$TMP/attach"
check "attach in native mode exits 0" [ "$rc" = 0 ]
if [ "$rc" != 0 ]; then
	# Why: libbpf's messages (the verifier's log) in the log.
	in_rx "$CLI" -v --pin-dir "$PIN" attach "$RX" --mode native \
		--policy "$TMP/policy.yaml" --max-sources 4096 >/out/e2e.attach-verbose 2>&1
	echo "# attach -v: the end of libbpf's messages (all in e2e.attach-verbose)"
	grep -v '^$' /out/e2e.attach-verbose | tail -25
	verdict "attach failed: $(head -1 "$TMP/attach")"
	exit 0
fi
check "eth1 has an XDP program in native (driver) mode" \
	sh -c "ip -n $NS -d link show $RX | grep -q 'prog/xdp '"
check "attached through libxdp's dispatcher, no warning" \
	sh -c "grep -q \"in libxdp's dispatcher\" $TMP/attach && ! grep -q warning $TMP/attach"
in_rx ip -d link show "$RX" | grep -i xdp

send_frames "$ALLOWED:$SENT_ALLOWED $LIMITED:$SENT_LIMITED $DENIED:$SENT_DENIED"
got_allowed=$(received $ALLOWED)
got_limited=$(received $LIMITED)
got_denied=$(received $DENIED)
# The limited source gets its burst and what refilled while it sent.
max_limited=$(python3 -c "import math; print($BURST + math.ceil($PPS * ($SEND_SECONDS + 1)))")
check "allowed: $got_allowed of $SENT_ALLOWED arrived (all)" [ "$got_allowed" = $SENT_ALLOWED ]
check "limited: $got_limited of $SENT_LIMITED arrived (burst $BURST .. $max_limited)" \
	test "$got_limited" -ge $BURST -a "$got_limited" -le "$max_limited"
check "denied: $got_denied of $SENT_DENIED arrived (none)" [ "$got_denied" = 0 ]

echo "# $CLI --pin-dir $PIN stats"
in_rx "$CLI" --pin-dir "$PIN" stats
in_rx "$CLI" --pin-dir "$PIN" stats --json >"$TMP/stats" 2>&1
# rule PREFIX passed|dropped: the program's own packet count.
rule() {
	python3 -c '
import json, sys
for r in json.load(open(sys.argv[1]))["rules"]:
    if r["prefix"] == sys.argv[2]:
        print(r[sys.argv[3]]["packets"])
        break
else:
    print(-1)' "$TMP/stats" "$1" "$2"
}
check "program: allowed passed $(rule 198.18.10.0/24 passed) = arrived" \
	[ "$(rule 198.18.10.0/24 passed)" = "$got_allowed" ]
check "program: limited passed $(rule 198.18.20.0/24 passed) = arrived, dropped $(rule 198.18.20.0/24 dropped) = the rest" \
	test "$(rule 198.18.20.0/24 passed)" = "$got_limited" \
	-a "$(rule 198.18.20.0/24 dropped)" = $((SENT_LIMITED - got_limited))
check "program: denied dropped $(rule 198.18.30.0/24 dropped) = sent" \
	[ "$(rule 198.18.30.0/24 dropped)" = $SENT_DENIED ]

echo "# $CLI --pin-dir $PIN status"
in_rx "$CLI" --pin-dir "$PIN" status
check "status shows eth1 in native mode" \
	sh -c "nsenter --net=/run/netns/$NS $CLI --pin-dir $PIN status --json | python3 -c '
import json, sys
s = json.load(sys.stdin)
sys.exit(not any(i[\"name\"] == \"$RX\" and i[\"mode\"] == \"native\" for i in s[\"interfaces\"]))'"

in_rx "$CLI" --pin-dir "$PIN" detach "$RX"
check "detach leaves no XDP program on eth1" \
	sh -c "! ip -n $NS link show $RX | grep -q xdp"

verdict "native XDP on $(basename "$(readlink /sys/class/net/$TX/device/driver)")," \
	"in libxdp's dispatcher:" \
	"allowed $got_allowed/$SENT_ALLOWED, limited $got_limited/$SENT_LIMITED," \
	"denied $got_denied/$SENT_DENIED arrived"
