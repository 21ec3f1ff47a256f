#!/usr/bin/env python3
# variants.py --waterfall: the names of the waterfall's variants, comma
# separated (for --keep).
# variants.py SRC_BPF_DIR OUT_DIR [--clockless] [--keep=a,b]: writes
# OUT_DIR/<variant>/ copies of the data path sources, each with one step
# of the packet path removed, for scripts/bench/eliminate (the OPT_IN
# ones only when --keep names them). A variant whose text no longer
# matches the sources is skipped with a message, never built wrong.
import os
import re
import shutil
import sys

src, out = (sys.argv[1:3] + ["", ""])[:2]
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


def no_rule_counters(files):
    # The per-rule counters alone (the way of the rule's copy, else a
    # per-CPU hash looked up by rule id: bpf/rule_cache.h).
    files[MAIN] = empty_body(files[MAIN],
                             "static __always_inline void count_rule(")


def no_offender_counting(files):
    # A refusal counts nothing for its source: no offender record, no
    # limit event, no ban offence, no tally (judge_counted()).
    remove(files, MAIN, "\tif (!s || !bucket || !rule || !settings)\n"
           "\t\treturn;\n\tkey = &s->key;\n",
           "\tif (!s || !bucket || !rule || !settings ||\n"
           "\t    how != COUNTED_PASSED)\n\t\treturn;\n\tkey = &s->key;\n")


def no_refusal_tally(files):
    # Every refusal takes the whole path (record, events, ban): what the
    # tally (include/xrl.h, struct xrl_refusal_tally) saves a hot source.
    remove(files, MAIN, "\ttally = cpu_tally();\n", "\ttally = NULL;\n")


def no_second_clock_read(files):
    # A refusal is not judged again at a later reading of the clock
    # (bpf/gcra.h, take_refresh() and limit_admits_at()).
    remove(files, "gcra.h", "\t__u64 later = clock_after(t->now_ns);\n",
           "\t__u64 later = t->now_ns;\n")
    remove(files, "gcra.h", "\tlater = clock_after(now_ns);\n",
           "\tlater = now_ns;\n")


def no_clock_reads(files):
    # The test clock (a plain load) instead of bpf_ktime_get_ns(): what
    # reading the clock costs, both readings.
    remove(files, "clock.h", "const volatile bool use_test_clock = false;",
           "const volatile bool use_test_clock = true;")


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


def no_rule_table(files):
    # The hot path's rule comes from a one-slot array the driver fills
    # (inlined like any array lookup) instead of the CPU's copy of the
    # rule (bpf/rule_cache.h), with no generation check: the cost of
    # finding a known source's rule.
    t = files[MAIN]
    old = ("\t\trule = known_rule(s->q.slot, head->gen,\n"
           "\t\t\t\t  XRL_BUCKET_RULE((__u32)word), word >> 32);\n"
           "\t\tif (rule)\n")
    if old not in t:
        raise ValueError("the hot path's known_rule()")
    t = t.replace(old, "\t\t__u32 zero = 0;\n\n"
                  "\t\trule = bpf_map_lookup_elem(&xrl_elim_rule, &zero);\n"
                  "\t\tif (rule)\n")
    anchor = "/* BTF anchor of the head's type"
    if anchor not in t:
        raise ValueError(anchor)
    files[MAIN] = t.replace(anchor, ELIM_RULE_MAP + "\n" + anchor)


def no_head(files):
    # The settings of the head are read once per packet through an array
    # of maps: without them (a static head of zeros, /32 and /64 masks
    # unset) a packet skips those two lookups.
    no_rule_table(files)
    t = files[MAIN]
    old = "\thead = policy_head();\n"
    if old not in t:
        raise ValueError("policy_head()")
    files[MAIN] = t.replace(old, "\thead = &xrl_elim_head;\n").replace(
        "struct xrl_policy_head xrl_btf_head;\n",
        "struct xrl_policy_head xrl_btf_head;\n"
        "static struct xrl_policy_head xrl_elim_head = {\n"
        "\t.settings = { .v4_mask = 0xffffffff,\n"
        "\t\t       .v6_mask = { 0xffffffff, 0xffffffff } } };\n")


def no_limit_events(files):
    # A drop does not look at the source's limit-event state.
    t = files[MAIN]
    old = "\treport_limited(key, off, rule, settings, now);\n"
    if old not in t:
        raise ValueError("report_limited() on drops")
    files[MAIN] = t.replace(old, "")


def no_vlan(files):
    t = files["parse.h"]
    old = "#define VLAN_MAX_TAGS\t8"
    if old not in t:
        raise ValueError(old)
    files["parse.h"] = t.replace(old, "#define VLAN_MAX_TAGS\t0")


def no_atomics(files):
    # No counter of any kind: the verdicts', the rules', the sources'.
    no_offender_counting(files)
    no_counters(files)


def no_route_check(files):
    # Every packet looks at this CPU's routed L4 flow (bpf/routes.h)
    # before its bucket.
    remove(files, MAIN, "\tverdict = judge_routed(ctx, s, head);\n"
           "\tif (verdict != XDP_ABORTED)\n\t\treturn verdict;\n")


# The waterfall (docs/BENCHMARKS.md "Cost budget"): cutN is the program
# without the first N steps, so that a step's cost is cut(N-1) less cutN
# and the costs add up to full less the last cut, and what is left is
# the last cut against the reference: steps too small to stand out of
# the noise one by one still count in the sum.
WATERFALL = [
    ("counters", no_atomics),
    ("limit-events", no_limit_events),
    ("vlan-parsing", no_vlan),
    ("route-check", no_route_check),
    ("head-and-rule-table", no_head),
]


def cut(n):
    def edit(files):
        for _, step in WATERFALL[:n]:
            step(files)
    return edit


# Issue 14's steps on the packet path when a policy uses none of its keys
# (opt-in with --keep, compared with the previous data path by
# `scripts/bench/eliminate --previous`): what each costs there.
def remove(files, name, old, new=""):
    if old not in files[name]:
        raise ValueError(old.strip().splitlines()[0])
    files[name] = files[name].replace(old, new)


def no_ban_branches(files):
    # The ban checks of the judging paths, the manual-ban check of every
    # packet and the ban word's reset at a rebind.
    remove(files, MAIN, "\t/* 0 unless the source was banned: one predictable branch. */\n"
           "\tif (bucket->ban_until_ns && rule->ban.duration_ns &&\n"
           "\t    ban_active(bucket->ban_until_ns, now))\n"
           "\t\treturn judge_banned(rule, cost->frame_len);\n")
    remove(files, MAIN, "\t\tif (rule->ban.duration_ns)\n"
           "\t\t\tban_offence(key, bucket, rule, settings, now);\n")
    remove(files, MAIN, "\tif (rule->ban.duration_ns && ban_recorded(key, rule, now))\n"
           "\t\treturn judge_banned(rule, frame_len);\n")
    remove(files, MAIN, "\t\tb->ban_until_ns = 0;\n")
    remove(files, MAIN, "\tif (settings->manual_bans && source_banned(&s))\n"
           "\t\treturn XDP_DROP;\n")


def no_window_branch(files):
    remove(files, MAIN, "\tif (rule->window.limit)\n"
           "\t\treturn judge_window(key, settings, rule, bucket, cost);\n")


def no_l4_classify(files):
    # The classifier as before L4 rules: no L4 parse on the meta's flag,
    # an entry's rule taken as it is, no split for an L4 rule looked at.
    # (ctx kept live: a global caller's argument the compiler would drop)
    remove(files, "classify.h", "\tif (meta->long_rules & XRL_META_L4)\n"
           "\t\tparse_l4(ctx, &c.l4);\n",
           "\tasm volatile(\"\" : : \"r\"(ctx));\n")
    remove(files, "classify.h", "\tif (!rule || !rule->match.proto)\n"
           "\t\treturn rule;\n", "\treturn rule;\n")
    remove(files, "classify.h", "c.found_len > key_len || c.l4_seen",
           "c.found_len > key_len")


def no_issue14_branches(files):
    no_ban_branches(files)
    no_window_branch(files)
    no_l4_classify(files)


def bucket_72(files):
    # No ban checks, and the bucket without its ban word: 72 bytes as
    # before issue 14 (a copy of include/xrl.h beside the sources, which
    # their quoted includes find first).
    no_ban_branches(files)
    with open(os.path.join(os.path.dirname(src.rstrip("/")) or ".",
                           "include", "xrl.h")) as f:
        files["xrl.h"] = f.read()
    remove(files, "xrl.h", "\t__u64 ban_until_ns;\n")
    remove(files, "xrl.h", "sizeof(struct xrl_bucket) == 80",
           "sizeof(struct xrl_bucket) == 72")
    remove(files, "bans.h", "\tbucket->ban_until_ns = now + length;\n")


VARIANTS = {
    "full": lambda files: None,
    "no-global-and-rule-counters": no_counters,
    "no-rule-counters": no_rule_counters,
    "no-rule-table": no_rule_table,
    "no-head-or-rule-table": no_head,
    "no-vlan-parsing": no_vlan,
    "no-limit-events": no_limit_events,
    "no-offender-counting": no_offender_counting,
    "no-refusal-tally": no_refusal_tally,
    "no-counters-at-all": no_atomics,
}
# Opt-in (more than a run's variants), with a baseline of their own.
WATERFALL_VARIANTS = {"cut0-none": lambda files: None}
for i, (step, _) in enumerate(WATERFALL):
    WATERFALL_VARIANTS["cut%d-%s" % (i + 1, step)] = cut(i + 1)
# With the real clock only (`scripts/bench/eliminate --keep=...` without
# --clockless): what the clock's readings cost.
CLOCK = {
    "no-second-clock-read": no_second_clock_read,
    "no-clock-reads": no_clock_reads,
}
OPT_IN = {
    "no-bucket-passed-dropped": no_bucket_counters,
    "plain-bucket-passed-dropped": plain_bucket_counters,
    "no-ban-branches": no_ban_branches,
    "no-window-branch": no_window_branch,
    "no-l4-classify": no_l4_classify,
    "no-issue14-branches": no_issue14_branches,
    "no-ban-bucket-72": bucket_72,
}
OPT_IN.update(CLOCK)
OPT_IN.update(WATERFALL_VARIANTS)
VARIANTS.update(OPT_IN)

if src == "--waterfall":
    print(",".join(WATERFALL_VARIANTS))
    sys.exit(0)

originals = {}
for name in os.listdir(src):
    with open(os.path.join(src, name)) as f:
        originals[name] = f.read()

for variant, edit in VARIANTS.items():
    if (keep is None and variant in OPT_IN) or \
            (keep is not None and variant not in keep):
        continue
    files = dict(originals)
    if clockless:
        old = "const volatile bool use_test_clock = false;"
        if old not in files["clock.h"]:
            sys.exit("variants: cannot find the test clock switch")
        files["clock.h"] = files["clock.h"].replace(old, old.replace("false", "true"))
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
