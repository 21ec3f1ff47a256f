// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp_ratelimit.bpf.c - the XDP entry point: parse, find the rule of the
 * source, judge the packet against the source's bucket, count.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "xrl.h"
#include "parse.h"
#include "gcra.h"
#include "floods.h"
#include "aggregate.h"
#include "events.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/*
 * Load-time switch: tests drive time through test_clock_ns. When off (in
 * production) the verifier prunes the branch, so it costs nothing.
 */
const volatile bool use_test_clock = false;
volatile __u64 test_clock_ns;

/*
 * The rule set in force: one inner LPM map, replaced whole on reload.
 * Sizes rather than types: libbpf 1.1 cannot size an inner map's BTF
 * struct types; userspace creates the inner maps with BTF of their own.
 */
struct xrl_rules_map {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, XRL_MAX_RULES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(key_size, sizeof(struct xrl_lpm_key));
	__uint(value_size, sizeof(struct xrl_rule));
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct xrl_rules_map);
} xrl_policy SEC(".maps");

/*
 * BTF anchors: userspace creates each inner rules map with these two
 * types from this program's BTF (user/lib/policy.c), so that bpftool
 * shows the policy with field names. The program itself never reads them.
 */
struct xrl_lpm_key xrl_btf_rule_key;
struct xrl_rule xrl_btf_rule;

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, XRL_DEFAULT_SOURCES);	/* set at load time */
	__type(key, struct xrl_bucket_key);
	__type(value, struct xrl_bucket);
} xrl_buckets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XRL_VERDICT_COUNT);
	__type(key, __u32);
	__type(value, struct xrl_counter);
} xrl_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XRL_MAX_RULES);
	__type(key, __u32);
	__type(value, struct xrl_rule_counters);
} xrl_rule_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xrl_settings);
} xrl_settings SEC(".maps");

static __always_inline __u64 now_ns(void)
{
	if (use_test_clock)
		return test_clock_ns;
	return bpf_ktime_get_ns();
}

static __always_inline void count_verdict(enum xrl_verdict verdict,
					  __u64 frame_len)
{
	__u32 index = verdict;
	struct xrl_counter *counter;

	counter = bpf_map_lookup_elem(&xrl_stats, &index);
	if (counter) {
		counter->packets++;
		counter->bytes += frame_len;
	}
}

static __always_inline void count_rule(__u32 rule_id,
				       enum xrl_rule_outcome outcome,
				       __u64 frame_len)
{
	struct xrl_rule_counters *counters;

	counters = bpf_map_lookup_elem(&xrl_rule_stats, &rule_id);
	if (counters && outcome < XRL_RULE_OUTCOMES) {
		counters->outcome[outcome].packets++;
		counters->outcome[outcome].bytes += frame_len;
	}
}

static __always_inline const struct xrl_rule *find_rule(const __u32 src[4])
{
	struct xrl_lpm_key key = { .prefixlen = 128 };
	__u32 zero = 0;
	void *rules;

	rules = bpf_map_lookup_elem(&xrl_policy, &zero);
	if (!rules)
		return NULL;
	__builtin_memcpy(key.addr, src, sizeof(key.addr));
	return bpf_map_lookup_elem(rules, &key);
}

/* The key of (source, rule): the source masked to the configured prefix. */
static __always_inline void bucket_key(struct xrl_bucket_key *key,
				       const __u32 src[4], bool ipv4,
				       const struct xrl_settings *settings,
				       __u32 rule_id)
{
	__u32 *addr = (__u32 *)key->addr;

	key->rule_id = rule_id;
	if (ipv4) {
		addr[0] = 0;
		addr[1] = 0;
		addr[2] = src[2];
		addr[3] = src[3] & settings->v4_mask;
	} else {
		addr[0] = src[0] & settings->v6_mask[0];
		addr[1] = src[1] & settings->v6_mask[1];
		addr[2] = src[2] & settings->v6_mask[2];
		addr[3] = src[3] & settings->v6_mask[3];
	}
}

/* Counts and returns the verdict of a limit or monitor rule's packet. */
static __always_inline int judge_outcome(const struct xrl_rule *rule,
					 bool admitted, __u64 frame_len)
{
	if (admitted) {
		count_rule(rule->id, XRL_RULE_PASSED, frame_len);
		count_verdict(XRL_VERDICT_PASS, frame_len);
		return XDP_PASS;
	}
	count_rule(rule->id, XRL_RULE_DROPPED, frame_len);
	if (rule->action == XRL_ACTION_MONITOR) {
		count_verdict(XRL_VERDICT_MONITOR, frame_len);
		return XDP_PASS;
	}
	count_verdict(XRL_VERDICT_DROP, frame_len);
	return XDP_DROP;
}

/*
 * Judges a packet of a limit or monitor rule; returns the XDP verdict.
 * Only a drop looks at limit events.
 */
static __always_inline int judge_limited(const struct xrl_bucket_key *key,
					 const struct xrl_settings *settings,
					 const struct xrl_rule *rule,
					 struct xrl_bucket *bucket,
					 __u64 frame_len,
					 const struct wire_cost *cost)
{
	__u64 now = now_ns();
	bool admitted = bucket_take(bucket, rule, now, cost->packets,
				    cost->bytes);

	__sync_fetch_and_add(admitted ? &bucket->passed : &bucket->dropped, 1);
	if (!admitted)
		report_limited(key, bucket, rule, settings, now);
	return judge_outcome(rule, admitted, frame_len);
}

/*
 * A source without a bucket. Given one when the new-source budget has an
 * insert left (two CPUs racing on the source share the entry one of them
 * made); else judged by the unknown_sources fallback, which inserts
 * nothing, so a flood of new sources evicts no more live buckets than
 * the budget allows.
 */
static __noinline int judge_new_source(const struct xrl_bucket_key *key,
				       bool ipv4,
				       const struct xrl_settings *settings,
				       const struct xrl_rule *rule,
				       const struct wire_cost *cost)
{
	__u64 frame_len = cost->frame_len;	/* five arguments at most */
	struct xrl_bucket fresh = {}, *bucket;
	__u64 now = now_ns();	/* read once: the clock is most of a miss */
	bool admitted;

	if (new_source_admitted(settings, now)) {
		/* The mark its first event's rate is measured from. */
		fresh.mark_ns = now;
		if (!bpf_map_update_elem(&xrl_buckets, key, &fresh, BPF_NOEXIST))
			count_table(XRL_TABLE_INSERT);
		bucket = bpf_map_lookup_elem(&xrl_buckets, key);
		if (bucket)
			return judge_limited(key, settings, rule, bucket,
					     frame_len, cost);
		/* Only when the kernel cannot allocate: fail open, counted. */
		count_table(XRL_TABLE_INSERT_FAILED);
		count_verdict(XRL_VERDICT_ALLOW, frame_len);
		return XDP_PASS;
	}
	count_table(XRL_TABLE_REFUSED);
	switch (settings->unknown_verdict) {
	case XRL_UNKNOWN_PASS:
		admitted = true;
		break;
	case XRL_UNKNOWN_DROP:
		admitted = false;
		break;
	default:
		bucket = prefix_bucket(key, ipv4);
		admitted = bucket && bucket_take(bucket, rule, now,
						 cost->packets, cost->bytes);
		break;
	}
	count_table(admitted ? XRL_TABLE_FALLBACK_PASS :
			       XRL_TABLE_FALLBACK_DROP);
	return judge_outcome(rule, admitted, frame_len);
}

/* A packet of an aggregate rule: judged by this CPU's share of it. */
static __noinline int judge_aggregate(const struct xrl_rule *rule,
				      __u64 frame_len,
				      const struct wire_cost *cost)
{
	int admitted = agg_admitted(rule, now_ns(), cost->packets,
				    cost->bytes);

	if (admitted < 0) {
		count_verdict(XRL_VERDICT_ALLOW, frame_len);
		return XDP_PASS;
	}
	return judge_outcome(rule, admitted, frame_len);
}

SEC("xdp")
int xdp_ratelimit(struct xdp_md *ctx)
{
	__u64 frame_len = ctx->data_end - ctx->data;
	const struct xrl_settings *settings;
	struct xrl_bucket_key key;
	const struct xrl_rule *rule;
	struct xrl_bucket *bucket;
	enum parse_result parsed;
	struct wire_cost cost;
	__u32 zero = 0;
	__u32 src[4];

	settings = bpf_map_lookup_elem(&xrl_settings, &zero);
	if (!settings)
		return XDP_PASS;

	parsed = parse_source(ctx, src, &cost);
	if (parsed == PARSE_IPV4_MAPPED &&
	    settings->ipv4_mapped_verdict == XRL_IPV4_MAPPED_IPV6)
		parsed = PARSE_IPV6;
	if (parsed == PARSE_IPV4_MAPPED) {
		count_verdict(XRL_VERDICT_IPV4_MAPPED, frame_len);
		return XDP_DROP;
	}
	if (parsed == PARSE_VLAN_OVERFLOW) {
		count_verdict(XRL_VERDICT_VLAN_OVERFLOW, frame_len);
		return settings->vlan_overflow_verdict ==
			XRL_VLAN_OVERFLOW_PASS ? XDP_PASS : XDP_DROP;
	}
	if (parsed == PARSE_NONIP) {
		count_verdict(XRL_VERDICT_NONIP, frame_len);
		return XDP_PASS;
	}
	if (parsed == PARSE_MALFORMED) {
		count_verdict(XRL_VERDICT_MALFORMED, frame_len);
		return settings->malformed_verdict == XRL_MALFORMED_DROP ?
			XDP_DROP : XDP_PASS;
	}

	rule = find_rule(src);
	if (!rule || rule->action == XRL_ACTION_ALLOW) {
		if (rule)
			count_rule(rule->id, XRL_RULE_PASSED, frame_len);
		count_verdict(XRL_VERDICT_ALLOW, frame_len);
		return XDP_PASS;
	}
	if (rule->action == XRL_ACTION_DENY) {
		count_rule(rule->id, XRL_RULE_DROPPED, frame_len);
		count_verdict(XRL_VERDICT_DENY, frame_len);
		return XDP_DROP;
	}

	if (rule->scope == XRL_SCOPE_AGGREGATE)
		return judge_aggregate(rule, frame_len, &cost);

	bucket_key(&key, src, parsed == PARSE_IPV4, settings, rule->id);
	bucket = bpf_map_lookup_elem(&xrl_buckets, &key);
	if (!bucket)
		return judge_new_source(&key, parsed == PARSE_IPV4, settings,
					rule, &cost);
	return judge_limited(&key, settings, rule, bucket, frame_len, &cost);
}
