# In-VM step: the BPF suite, $BUILD/tests/test-bpf (criterion), one job.
#
# XRL_VM_BPF_FILTER (criterion --filter) and XRL_VM_BPF_ARGS pass on to
# it. Its verdict: the suite's own counts ("Synthesis: Tested: N |
# Passing: N | Failing: N | Crashing: N"), read from its own log
# ($OUT/$STEP.log, where the guest sends a step's output).
STEP=${STEP:-bpf}
OUT=${XRL_OUT:-/out}
FILTER=${FILTER-${XRL_VM_BPF_FILTER:-}}
BIN=${XRL_BUILD:-build}/tests/test-bpf
echo "# ${XDP_RATELIMIT_NO_BPF_LOOP:+XDP_RATELIMIT_NO_BPF_LOOP=1 }XRL_TEST_SCALE=${XRL_TEST_SCALE:-1} $BIN --jobs 1 --verbose ${FILTER:+--filter '$FILTER'} ${XRL_VM_BPF_ARGS:-}"
"$BIN" --jobs 1 --verbose ${FILTER:+--filter "$FILTER"} ${XRL_VM_BPF_ARGS:-} \
	--xml=$OUT/$STEP.xml 2>&1
rc=$?
counts=$(sed -n 's/.*Synthesis: Tested: \([0-9]*\) | Passing: \([0-9]*\) | Failing: \([0-9]*\) | Crashing: \([0-9]*\).*/\1 \2 \3 \4/p' \
	$OUT/$STEP.log | tail -1)
if [ -z "$counts" ]; then
	echo "fail 0 1 test-bpf exited $rc without a synthesis" >$OUT/$STEP.result
	exit 0
fi
read -r tested ok bad crashed <<EOF
$counts
EOF
v=pass
[ "$ok" = "$tested" ] && [ "$rc" = 0 ] && [ "$tested" -gt 0 ] || v=fail
echo "$v $ok $((tested - ok)) tested $tested, passing $ok, failing $bad, crashing $crashed" \
	>$OUT/$STEP.result
