# In-VM step: the limiter beside xdp-filter (xdp-tools, from Debian) on
# eth1 in native mode, both in libxdp's dispatcher.
#
# xdp-filter denies FILTERED and DENIED; the limiter denies DENIED and
# limits LIMITED; OTHER is allowed by both. The limiter runs first (its
# default priority 5, xdp-filter's programs 10): DENIED never reaches
# xdp-filter, whose hit counter for it stays 0, while FILTERED passes
# the limiter and is dropped by xdp-filter. Frames counted on the
# receiving side prove both enforce; `xdp-loader status` shows the chain
# (its output kept as /out/coexist.xdp-loader-status). Then each is
# taken away in turn and the other must still enforce alone: xdp-filter
# unloaded (the limiter stays in the dispatcher), xdp-filter loaded again
# (it joins the limiter's dispatcher), the limiter detached (xdp-filter
# stays). Last, --priority 20 puts the limiter after xdp-filter, which
# then sees DENIED first. Refused, each in one line that says how to go
# on: attaching beside a program loaded without the dispatcher, and a
# second limiter (pins of its own) beside the first.
STEP=coexist
. scripts/kernels/steps/lib.sh

FILTERED=198.18.40.1 DENIED=198.18.30.1 LIMITED=198.18.20.1 OTHER=198.18.10.1
BURST=20
XDPFILT_ALL=/usr/lib/x86_64-linux-gnu/bpf/xdpfilt_alw_all.o
cat >"$TMP/policy.yaml" <<EOF
default:
  action: allow
rules:
  - name: limited
    cidr: 198.18.20.0/24
    action: limit
    pps: 1
    burst: $BURST
  - name: denied
    cidr: 198.18.30.0/24
    action: deny
EOF

limiter() { in_rx "$CLI" --pin-dir "$PIN" "$@"; }

# filter_hits IP: xdp-filter's hit counter of IP (0 when not listed).
filter_hits() {
	in_rx xdp-filter status 2>/dev/null |
		awk -v ip="$1" '$1 == ip { print $NF; found = 1 } END { if (!found) print 0 }'
}

# loader_status WHAT: `xdp-loader status eth1` into the log and $TMP/status.
loader_status() {
	echo "# xdp-loader status $RX ($1)"
	in_rx xdp-loader status "$RX" | tee "$TMP/status"
}

# limited_most: what LIMITED may get of a fresh bucket in the last send.
limited_most() {
	python3 -c "import math; print($BURST + math.ceil($SEND_SECONDS + 1))"
}

# chain_order: the programs under eth1's dispatcher, in running order.
chain_order() {
	awk '$1 == "=>" { printf "%s%s", sep, $3; sep = " " } END { print "" }' "$TMP/status"
}

# limiter_chain: the chain as the limiter's status --json shows it.
limiter_chain() {
	limiter status --json | python3 -c '
import json, sys
for i in json.load(sys.stdin)["interfaces"]:
    if i["name"] == sys.argv[1]:
        d = i.get("dispatcher", {})
        print(i["attach"], i["mode"], " ".join("%s:%d%s" % (p["name"], p["priority"],
              "*" if p["this"] else "") for p in d.get("programs", [])))' "$RX"
}

filter_load() {
	in_rx xdp-filter load --mode native "$RX" &&
		in_rx xdp-filter ip --mode src "$FILTERED" &&
		in_rx xdp-filter ip --mode src "$DENIED"
}

nics_up

echo "# LIBXDP_SKIP_DISPATCHER=1 xdp-loader load $RX xdpfilt_alw_all.o (no dispatcher)"
in_rx env LIBXDP_SKIP_DISPATCHER=1 xdp-loader load "$RX" "$XDPFILT_ALL"
limiter attach "$RX" --policy "$TMP/policy.yaml" --max-sources 4096 >"$TMP/out" 2>&1
rc=$?
cat "$TMP/out"
check "attach beside a program outside the dispatcher: refused (exit $rc), in one line" \
	test "$rc" != 0 -a "$(wc -l <"$TMP/out")" = 1
check "the line names it and says to detach it or load it with xdp-loader" \
	grep -q "another XDP program is attached: xdpfilt_alw_all (prog id [0-9]*, native), not through libxdp's dispatcher.*detach it, or load it with xdp-loader" "$TMP/out"
in_rx ip link set "$RX" xdp off

echo "# xdp-filter load --mode native $RX; xdp-filter ip --mode src $FILTERED, $DENIED"
filter_load
check "xdp-filter load and its two ips exit 0" [ $? = 0 ]

echo "# $CLI --pin-dir $PIN attach $RX --policy policy.yaml --max-sources 4096"
limiter attach "$RX" --policy "$TMP/policy.yaml" --max-sources 4096 >"$TMP/out" 2>"$TMP/err"
rc=$?
cat "$TMP/out" "$TMP/err"
check "limiter attach beside xdp-filter exits 0" [ "$rc" = 0 ]
check "it says it is in libxdp's dispatcher at priority 5, beside 1 other, no warning" \
	sh -c "grep -q 'at priority 5 in libxdp.s dispatcher [0-9]*, beside 1 other' $TMP/out && ! grep -q warning $TMP/err"
if [ "$rc" != 0 ]; then
	limiter -v attach "$RX" --policy "$TMP/policy.yaml" --max-sources 4096 \
		>/out/coexist.attach-verbose 2>&1
	grep -v '^$' /out/coexist.attach-verbose | tail -25
	verdict "limiter attach beside xdp-filter failed: $(head -1 "$TMP/err")"
	exit 0
fi

loader_status "both"
cp "$TMP/status" /out/coexist.xdp-loader-status
check "xdp-loader status: eth1 has xdp_dispatcher in native mode" \
	grep -Eq "^$RX +xdp_dispatcher +native" "$TMP/status"
check "xdp-loader status: the limiter (5) then xdp-filter (10): $(chain_order)" \
	[ "$(chain_order)" = "xdp_ratelimit xdpfilt_alw_all" ]
check "xdp-loader status: the limiter at priority 5, chaining on XDP_PASS" \
	grep -Eq '=> +5 +xdp_ratelimit .*XDP_PASS' "$TMP/status"
echo "# $CLI --pin-dir $PIN status"
limiter status | sed -n '/^interfaces:/,/^maps:/p'
check "limiter status shows the chain: $(limiter_chain)" \
	[ "$(limiter_chain)" = "dispatcher native xdp_ratelimit:5* xdpfilt_alw_all:10" ]

echo "# $CLI --pin-dir $PIN-other attach $RX (a second limiter, pins of its own)"
in_rx "$CLI" --pin-dir "$PIN-other" attach "$RX" --max-sources 4096 >"$TMP/out" 2>&1
rc=$?
cat "$TMP/out"
check "a second limiter is refused (exit $rc) in one line naming the first" \
	test "$rc" != 0 -a "$(wc -l <"$TMP/out")" = 1 -a ! -e "$PIN-other"
check "the line: xdp_ratelimit at priority 5 in libxdp's dispatcher, pinned in another directory" \
	grep -q "another XDP program is attached: xdp_ratelimit (prog id [0-9]* at priority 5 in libxdp's dispatcher, native), pinned in another directory" "$TMP/out"

send_frames "$FILTERED:50 $DENIED:50 $LIMITED:100 $OTHER:50"
check "xdp-filter drops $FILTERED: $(received $FILTERED) of 50 arrived" [ "$(received $FILTERED)" = 0 ]
check "the limiter drops $DENIED: $(received $DENIED) of 50 arrived" [ "$(received $DENIED)" = 0 ]
check "the limiter limits $LIMITED: $(received $LIMITED) of 100 arrived (burst $BURST .. $(limited_most))" \
	test "$(received $LIMITED)" -ge $BURST -a "$(received $LIMITED)" -le "$(limited_most)"
check "both pass $OTHER: $(received $OTHER) of 50 arrived" [ "$(received $OTHER)" = 50 ]
echo "# xdp-filter status"
in_rx xdp-filter status | sed -n '/Filtered IP/,$p'
check "xdp-filter saw all 50 of $FILTERED: hits $(filter_hits $FILTERED)" [ "$(filter_hits $FILTERED)" = 50 ]
check "xdp-filter never saw $DENIED (the limiter, first, dropped it): hits $(filter_hits $DENIED)" \
	[ "$(filter_hits $DENIED)" = 0 ]

echo "# xdp-filter unload $RX (the limiter stays)"
in_rx xdp-filter unload "$RX"
check "xdp-filter unload exits 0" [ $? = 0 ]
loader_status "the limiter alone"
check "xdp-loader status: the dispatcher runs the limiter alone: $(chain_order)" \
	[ "$(chain_order)" = "xdp_ratelimit" ]
send_frames "$FILTERED:50 $DENIED:50 $LIMITED:50 $OTHER:50"
check "without xdp-filter $FILTERED gets through: $(received $FILTERED) of 50" [ "$(received $FILTERED)" = 50 ]
check "the limiter alone still drops $DENIED: $(received $DENIED) of 50 arrived" [ "$(received $DENIED)" = 0 ]
check "and still limits $LIMITED: $(received $LIMITED) of 50 arrived" \
	test "$(received $LIMITED)" -lt 50
check "$OTHER: $(received $OTHER) of 50 arrived" [ "$(received $OTHER)" = 50 ]

echo "# xdp-filter load again: it joins the limiter's dispatcher"
filter_load
check "xdp-filter load beside the limiter exits 0" [ $? = 0 ]
loader_status "both again"
check "xdp-loader status: the limiter then xdp-filter: $(chain_order)" \
	[ "$(chain_order)" = "xdp_ratelimit xdpfilt_alw_all" ]
check "limiter status: still in the chain: $(limiter_chain)" \
	[ "$(limiter_chain)" = "dispatcher native xdp_ratelimit:5* xdpfilt_alw_all:10" ]

echo "# $CLI --pin-dir $PIN detach $RX (xdp-filter stays)"
limiter detach "$RX"
check "limiter detach exits 0" [ $? = 0 ]
check "the last detach removes the limiter's pins" [ ! -e "$PIN" ]
loader_status "xdp-filter alone"
check "xdp-loader status: the dispatcher runs xdp-filter alone: $(chain_order)" \
	[ "$(chain_order)" = "xdpfilt_alw_all" ]
send_frames "$FILTERED:50 $DENIED:50 $LIMITED:50 $OTHER:50"
check "xdp-filter alone still drops $FILTERED: $(received $FILTERED) of 50 arrived" [ "$(received $FILTERED)" = 0 ]
check "and $DENIED, now that it sees it: $(received $DENIED) of 50 arrived, hits $(filter_hits $DENIED)" \
	test "$(received $DENIED)" = 0 -a "$(filter_hits $DENIED)" = 50
check "without the limiter $LIMITED is not limited: $(received $LIMITED) of 50 arrived" [ "$(received $LIMITED)" = 50 ]

echo "# $CLI --pin-dir $PIN attach $RX --priority 20: after xdp-filter"
limiter attach "$RX" --priority 20 --policy "$TMP/policy.yaml" --max-sources 4096
check "limiter attach --priority 20 exits 0" [ $? = 0 ]
loader_status "xdp-filter (10) then the limiter (20)"
check "xdp-loader status: xdp-filter then the limiter: $(chain_order)" \
	[ "$(chain_order)" = "xdpfilt_alw_all xdp_ratelimit" ]
hits0=$(filter_hits $DENIED)
send_frames "$DENIED:50 $LIMITED:50 $OTHER:50"
check "xdp-filter, first now, sees and drops $DENIED: $(received $DENIED) arrived, hits +$(($(filter_hits $DENIED) - hits0))" \
	test "$(received $DENIED)" = 0 -a $(($(filter_hits $DENIED) - hits0)) = 50
check "the limiter, after it, limits $LIMITED: $(received $LIMITED) of 50 arrived (burst $BURST .. $(limited_most))" \
	test "$(received $LIMITED)" -ge $BURST -a "$(received $LIMITED)" -le "$(limited_most)"
limiter stats --json >"$TMP/stats"
denied_seen=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["counters"]["deny"]["packets"])' "$TMP/stats")
check "and never sees $DENIED: its deny counter $denied_seen" [ "$denied_seen" = 0 ]

limiter detach "$RX"
in_rx xdp-filter unload "$RX"
check "both gone: no XDP program left on eth1" \
	sh -c "! ip -n $NS link show $RX | grep -q xdp"

verdict "limiter (priority 5) and xdp-filter (10) in libxdp's dispatcher on" \
	"eth1 (native): both enforce, each alone after the other leaves;" \
	"--priority 20 runs it after xdp-filter"
