# In-VM step, for a kernel below the floor: `xdp-ratelimit attach`
# refuses. It must exit non-zero, attach nothing, and say so in one line
# that names what the kernel lacks and the kernel that brings it (issue
# 22), e.g. "Linux 5.10.0-32-amd64 lacks the bpf_check_mtu() helper and
# atomic compare-and-swap (Linux 5.12): xdp-ratelimit needs Linux 5.15 or
# later". Its output is in the log and in
# /out/floor.attach.
STEP=floor
. scripts/kernels/steps/lib.sh

cat >"$TMP/policy.yaml" <<'EOF'
default:
  action: allow
rules:
  - cidr: 198.18.20.0/24
    pps: 10
    burst: 20
EOF
nics_up
echo "# $CLI --pin-dir $PIN attach $RX --policy policy.yaml"
in_rx "$CLI" --pin-dir "$PIN" attach "$RX" --policy "$TMP/policy.yaml" \
	--max-sources 4096 >"$TMP/out" 2>&1
rc=$?
cp "$TMP/out" /out/floor.attach
echo "exit $rc, $(wc -l <"$TMP/out") lines:"
cat "$TMP/out"
in_rx "$CLI" -v --pin-dir "$PIN" attach "$RX" --policy "$TMP/policy.yaml" \
	--max-sources 4096 >/out/floor.attach-verbose 2>&1
echo "# attach -v: the end of libbpf's messages (all in floor.attach-verbose)"
grep -v '^$' /out/floor.attach-verbose | tail -15
check "attach exits non-zero on $(uname -r)" [ "$rc" != 0 ]
check "nothing attached to eth1" sh -c "! ip -n $NS link show $RX | grep -q xdp"
check "refusal is one line" [ "$(wc -l <"$TMP/out")" = 1 ]
check "the line names the missing feature and the kernel that has it" \
	grep -Eq 'lacks .+ \(Linux [0-9]+\.[0-9]+\): xdp-ratelimit needs Linux [0-9]+\.[0-9]+ or later$' "$TMP/out"
verdict "attach: exit $rc: $(head -1 "$TMP/out")"
