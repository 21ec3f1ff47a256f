# In-VM step, for debugging a load: bpftool loads the program object with
# libbpf's debug messages (the verifier's log included) into /out/probe.log.
STEP=probe
. scripts/kernels/steps/lib.sh
bpftool -d prog load /xrl/${XRL_BUILD:-build}/xdp_ratelimit.bpf.o /sys/fs/bpf/xrlprobe >/out/probe.log 2>&1
rc=$?
rm -f /sys/fs/bpf/xrlprobe
grep -v '^$' /out/probe.log | grep -v "^libbpf: map\|^libbpf: sec\|^libbpf: elf" | tail -40
check "bpftool loads the program" [ "$rc" = 0 ]
verdict "bpftool prog load: exit $rc"
nics_up
in_rx "$CLI" -v --pin-dir "$PIN" attach "$RX" --policy /xrl/examples/policy.yaml >/out/probe.attach 2>&1
echo "attach -v: exit $?"; grep -v "^$" /out/probe.attach | tail -25
in_rx "$CLI" --pin-dir "$PIN" detach "$RX" >/dev/null 2>&1
