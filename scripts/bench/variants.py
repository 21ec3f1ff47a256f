#!/usr/bin/env python3
# variants.py SRC_BPF_DIR OUT_DIR [--clockless] [--keep=a,b]: writes OUT_DIR/<variant>/ copies of the
# data path sources, each with one step of the packet path removed, for
# scripts/bench/eliminate. A variant whose text no longer matches the
# sources is skipped with a message, never built wrong.
import os
import re
import shutil
import sys

src, out = sys.argv[1], sys.argv[2]
# --clockless: every variant reads the test clock (a plain load) instead
# of bpf_ktime_get_ns(), whose cost and jitter hide small steps.
clockless = "--clockless" in sys.argv[3:]
# --keep a,b: only those variants.
keep = None
for arg in sys.argv[3:]:
    if arg.startswith("--keep="):
        keep = arg[len("--keep="):].split(",")
MAIN = "xdp_ratelimit.bpf.c"

ELIM_RULE_MAP = """
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xrl_rule);
} xrl_elim_rule SEC(".maps");
"""


def empty_body(text, signature):
    """Empties the body of the function whose definition starts with signature."""
    start = text.index(signature)
    body = text.index("{", start)
    end = text.index("\n}\n", body)
    return text[:body] + "{\n" + text[end + 1:]


def no_counters(files):
    t = files[MAIN]
    t = empty_body(t, "static __always_inline void count_verdict(")
    t = empty_body(t, "static __always_inline void count_rule(")
    files[MAIN] = t


# The locked add to the bucket's passed/dropped counter, in either of the
# forms the data path has had.
BUCKET_ADDS = [
    ("\t__sync_fetch_and_add(admitted ? &bucket->passed : &bucket->dropped, 1);\n",
     "\t*(admitted ? &bucket->passed : &bucket->dropped) += 1;\n"),
    ("\t__sync_fetch_and_add(&bucket->passed, 1);\n", "\tbucket->passed++;\n"),
    ("\t__sync_fetch_and_add(&bucket->dropped, 1);\n", "\tbucket->dropped++;\n"),
]


def edit_bucket_adds(files, plain):
    t = files[MAIN]
    found = False
    for locked, unlocked in BUCKET_ADDS:
        if locked in t:
            t = t.replace(locked, unlocked if plain else "")
            found = True
    if not found:
        raise ValueError("the bucket counters' locked add")
    files[MAIN] = t


def no_bucket_counters(files):
    edit_bucket_adds(files, plain=False)


def plain_bucket_counters(files):
    # Plain increments (may lose counts when two CPUs judge one source at
    # once) instead of locked adds.
    edit_bucket_adds(files, plain=True)


def no_lpm(files):
    # The rule comes from a one-slot array the driver fills (inlined
    # lookup) instead of the LPM trie.
    t = files[MAIN]
    old = "\treturn bpf_map_lookup_elem(rules, &key);\n"
    if old not in t:
        raise ValueError(old.strip())
    t = t.replace(old, "\treturn bpf_map_lookup_elem(&xrl_elim_rule, &zero);\n")
    anchor = "static __always_inline __u64 now_ns(void)"
    t = t.replace(anchor, ELIM_RULE_MAP + "\n" + anchor)
    files[MAIN] = t


def no_policy(files):
    # Neither the outer array-of-maps nor the LPM lookup.
    no_lpm(files)
    t = files[MAIN]
    old = "\trules = bpf_map_lookup_elem(&xrl_policy, &zero);\n\tif (!rules)\n\t\treturn NULL;\n"
    if old not in t:
        raise ValueError("outer policy lookup")
    t = t.replace(old, "")
    files[MAIN] = t.replace("\tvoid *rules;\n", "")


def no_limit_events(files):
    # A drop does not look at the bucket's limit-event state.
    t = files[MAIN]
    old = "\tif (!admitted)\n\t\treport_limited(key, bucket, rule, settings, now);\n"
    if old not in t:
        raise ValueError("report_limited() on drops")
    files[MAIN] = t.replace(old, "")


def no_vlan(files):
    t = files["parse.h"]
    old = "#define VLAN_MAX_TAGS\t2"
    if old not in t:
        raise ValueError(old)
    files["parse.h"] = t.replace(old, "#define VLAN_MAX_TAGS\t0")


def no_atomics(files):
    # The hot drop path has no CAS; the bucket counters are its atomics.
    no_bucket_counters(files)
    no_counters(files)


VARIANTS = {
    "full": lambda files: None,
    "no-global-and-rule-counters": no_counters,
    "no-bucket-passed-dropped": no_bucket_counters,
    "plain-bucket-passed-dropped": plain_bucket_counters,
    "no-lpm-lookup": no_lpm,
    "no-policy-lookups": no_policy,
    "no-vlan-parsing": no_vlan,
    "no-limit-events": no_limit_events,
    "no-counters-at-all": no_atomics,
}

originals = {}
for name in os.listdir(src):
    with open(os.path.join(src, name)) as f:
        originals[name] = f.read()

for variant, edit in VARIANTS.items():
    if keep is not None and variant not in keep:
        continue
    files = dict(originals)
    if clockless:
        old = "const volatile bool use_test_clock = false;"
        if old not in files[MAIN]:
            sys.exit("variants: cannot find the test clock switch")
        files[MAIN] = files[MAIN].replace(old, old.replace("false", "true"))
    try:
        edit(files)
    except ValueError as e:
        print("variants: %s skipped, sources changed: %s" % (variant, e))
        continue
    d = os.path.join(out, variant)
    os.makedirs(d)
    for name, text in files.items():
        with open(os.path.join(d, name), "w") as f:
            f.write(text)
