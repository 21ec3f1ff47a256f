# In-VM step: the BPF suite again, with the variant of the program for
# kernels without bpf_loop() (Linux 5.15: Ubuntu 22.04's) forced, so that
# its bounded loops are checked by this kernel's verifier and judge the
# suite's packets as the bpf_loop() callbacks do (bpf/features.h). The
# whole suite unless XRL_VM_NOLOOP_FILTER (criterion --filter) says less.
STEP=bpf-noloop
FILTER=${XRL_VM_NOLOOP_FILTER:-${XRL_VM_BPF_FILTER:-}}
export XDP_RATELIMIT_NO_BPF_LOOP=1
. scripts/kernels/steps/bpf.sh
