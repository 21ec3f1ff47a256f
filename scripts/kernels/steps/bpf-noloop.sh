# In-VM step (and on the host, as the matrix's "host"): the BPF suite
# again, with the variant of the program for kernels without bpf_loop()
# (Linux 5.15: Ubuntu 22.04's) forced, so that this kernel's verifier
# checks its bounded loops and the tests see them judge as the bpf_loop()
# callbacks do (bpf/features.h). The variant differs in the classifier
# walk and a bucket's retries, which every packet of these suites takes:
# rules and prefixes (the walk's lengths), L4 rules, buckets, contention
# (the retries), levels (the deepest call chain) and aggregates.
# XRL_VM_NOLOOP_FILTER (criterion --filter) picks others, '*/*' all.
STEP=bpf-noloop
FILTER=${XRL_VM_NOLOOP_FILTER:-'@(rules|prefix|l4|bucket|contention|levels|aggregate)/*'}
export XDP_RATELIMIT_NO_BPF_LOOP=1
. scripts/kernels/steps/bpf.sh
