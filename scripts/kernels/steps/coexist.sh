# In-VM step: coexistence with another XDP program through libxdp.
#
# Today: xdp-filter (xdp-tools, from Debian) loads on eth1 in native mode
# through libxdp's dispatcher, enforces (a source it denies does not get
# through, another does), and `xdp-loader status` shows the chain; both
# printed to the log. The limiter's own attach through the dispatcher
# (issue 22, item 3) plugs in at LIMITER below: attach it beside
# xdp-filter, prove both enforce with frames, detach either and prove the
# other still does.
STEP=coexist
. scripts/kernels/steps/lib.sh

FILTERED=198.18.40.1 OTHER=198.18.10.1
nics_up

echo "# xdp-filter load --mode native $RX"
in_rx xdp-filter load --mode native "$RX"
check "xdp-filter load --mode native eth1 exits 0" [ $? = 0 ]
in_rx xdp-filter ip --mode src "$FILTERED"
check "xdp-filter ip --mode src $FILTERED exits 0" [ $? = 0 ]

echo "# xdp-loader status $RX"
in_rx xdp-loader status "$RX" | tee "$TMP/status"
cp "$TMP/status" /out/coexist.xdp-loader-status
check "xdp-loader status: eth1 has xdp_dispatcher in native mode" \
	grep -Eq "^$RX +xdp_dispatcher +native" "$TMP/status"
check "xdp-loader status: xdpfilt_* runs under the dispatcher" \
	grep -Eq '=> +[0-9]+ +xdpfilt_' "$TMP/status"

send_frames "$FILTERED:50 $OTHER:50"
check "xdp-filter drops $FILTERED: $(received $FILTERED) of 50 arrived" [ "$(received $FILTERED)" = 0 ]
check "xdp-filter passes $OTHER: $(received $OTHER) of 50 arrived" [ "$(received $OTHER)" = 50 ]

# LIMITER: the limiter attached through the dispatcher goes here.

in_rx xdp-filter unload "$RX"
check "xdp-filter unload leaves no XDP program on eth1" \
	sh -c "! ip -n $NS link show $RX | grep -q xdp"

verdict "xdp-filter under libxdp's dispatcher on eth1 (native);" \
	"the limiter's dispatcher attach not built yet"
