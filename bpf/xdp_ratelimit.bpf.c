// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp_ratelimit.bpf.c - the XDP entry point: parse, find the rule of the
 * source, judge the packet against the source's bucket, count.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "xrl.h"
#include "clock.h"
#include "parse.h"
#include "classify.h"
#include "gcra.h"
#include "floods.h"
#include "aggregate.h"
#include "events.h"
#include "window.h"
#include "bans.h"
#include "offenders.h"
#include "escalate.h"
#include "fragments.h"
#include "routes.h"
#include "capture.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

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

/*
 * Per-rule counters by rule id: an entry for each rule in force (and the
 * rules going out, during a swap), made and removed by userspace with
 * the ids (user/datapath/rulemaps.c), so memory and a bpftool dump
 * follow the policy, not the id space. Not preallocated: max_entries is
 * a bound, not a cost. In two maps, each id in one: xrl_rule_stats
 * takes the first XRL_RULE_STATS_FIRST ids made, xrl_rule_spill those
 * made while it is full (up to twice the rule capacity, set at load
 * time). A reader walks a hash bucket by bucket, held or not, so the
 * counters of a policy that fits the first are read in time that
 * follows it, not the capacity (user/datapath/metrics_collect.c).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, XRL_RULE_STATS_FIRST);	/* set at load time */
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct xrl_rule_counters);
} xrl_rule_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 2 * XRL_DEFAULT_RULES);	/* set at load time */
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct xrl_rule_counters);
} xrl_rule_spill SEC(".maps");

/* The counters entry of rule id @id on this CPU, in whichever of the
 * two maps holds it; NULL: none made. */
static __always_inline struct xrl_rule_counters *
rule_stats_of(const __u32 *id)
{
	struct xrl_rule_counters *stats;

	stats = bpf_map_lookup_elem(&xrl_rule_stats, id);
	return stats ? stats : bpf_map_lookup_elem(&xrl_rule_spill, id);
}

/*
 * The policy in force: a head (settings, and the slot of its rules in
 * xrl_policy and xrl_rule_table: bpf/classify.h), swapped whole as
 * include/xrl.h describes ("How a policy is installed").
 */
struct xrl_head_map {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct xrl_policy_head));
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct xrl_head_map);
} xrl_settings SEC(".maps");

/* BTF anchor of the head's type, as those of bpf/classify.h. */
struct xrl_policy_head xrl_btf_head;

/* The policy in force, looked up once: every decision about the packet
 * is taken from it, so no packet mixes two policies. */
static __always_inline const struct xrl_policy_head *policy_head(void)
{
	__u32 zero = 0;
	void *head;

	head = bpf_map_lookup_elem(&xrl_settings, &zero);
	if (!head)
		return NULL;
	return bpf_map_lookup_elem(head, &zero);
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
	capture_note_verdict(verdict);
}

/*
 * The key of a source: the source masked to the configured prefix, in
 * its family. IPv6 sources in ::ffff:0:0/96 or ::/96 (IPv4-mapped or
 * -compatible, judged as IPv6 when the settings let them through) keep at
 * least the IPv4 key length of the address they embed, so they do not
 * all share the one bucket of ::/64.
 */
static __always_inline void bucket_key(struct xrl_bucket_key *key,
				       const __u32 src[4], __u32 family,
				       const struct xrl_settings *settings)
{
	__u32 *addr = (__u32 *)key->addr;

	key->tag = XRL_BUCKET_TAG(family, 0);
	if (family == XRL_FAMILY_IPV4) {
		addr[0] = 0;
		addr[1] = 0;
		addr[2] = src[2];
		addr[3] = src[3] & settings->v4_mask;
	} else if (!(src[0] | src[1]) &&
		   (!src[2] || src[2] == bpf_htonl(0xffff))) {
		addr[0] = 0;
		addr[1] = 0;
		addr[2] = src[2];
		addr[3] = src[3] & (settings->v4_mask | settings->v6_mask[3]);
	} else {
		addr[0] = src[0] & settings->v6_mask[0];
		addr[1] = src[1] & settings->v6_mask[1];
		addr[2] = src[2] & settings->v6_mask[2];
		addr[3] = src[3] & settings->v6_mask[3];
	}
}

/*
 * A bucket's rule id and generation are one 64-bit word (rule_id in the
 * low half), read and written whole, so a reader never pairs the id of
 * one classification with the generation of another.
 */
static __always_inline __u64 binding_of(__u32 rule_id, __u32 gen)
{
	return (__u64)gen << 32 | rule_id;
}

static __always_inline __u64 bucket_binding(const struct xrl_bucket *b)
{
	return *(volatile const __u64 *)&b->rule_id;
}

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "bucket_binding() reads rule_id as the low half");
_Static_assert(__builtin_offsetof(struct xrl_bucket, gen) ==
	       __builtin_offsetof(struct xrl_bucket, rule_id) + 4,
	       "rule_id and gen form one word");

/*
 * Binds a bucket found for @rule to it. A bucket of the same rule id from
 * a generation before the id named this prefix is another rule's (a
 * deleted rule whose id was reused): it starts full, with its flags
 * clear (its offender record, if any, is another rule's), as a new
 * bucket would. Two CPUs rebinding at once write the same.
 */
static __always_inline void rebind(struct xrl_bucket *b,
				   const struct xrl_rule *rule)
{
	__u64 word = bucket_binding(b);
	__u32 flags = (__u32)word & XRL_BUCKET_FLAGS;

	if ((word & ~(__u64)XRL_BUCKET_FLAGS) ==
	    binding_of(rule->id, rule->gen))
		return;
	if (XRL_BUCKET_RULE((__u32)word) != rule->id ||
	    (__s32)((word >> 32) - rule->since) < 0) {
		b->tat[XRL_LIMIT_PACKETS] = 0;
		b->tat[XRL_LIMIT_BYTES] = 0;
		flags = 0;
	}
	*(volatile __u64 *)&b->rule_id =
		binding_of(rule->id | flags, rule->gen);
}

/* A rule's levels judge with the source's bucket (bpf/levels.h). */
#include "levels.h"

/* A known source's rule, from this CPU's copy (bpf/rule_cache.h). */
#include "rule_cache.h"

static __always_inline void count_rule(const struct xrl_rule *rule,
				       enum xrl_rule_outcome outcome,
				       __u64 frame_len)
{
	struct xrl_rule_counters *counters;

	counters = rule_counters(rule->id, rule->since);

	if (counters && outcome < XRL_RULE_OUTCOMES) {
		counters->outcome[outcome].packets++;
		counters->outcome[outcome].bytes += frame_len;
	}
	capture_note_rule(rule->id);
}

/* Counts and returns the verdict of a limit or monitor rule's packet. */
static __always_inline int judge_outcome(const struct xrl_rule *rule,
					 bool admitted, __u64 frame_len)
{
	if (admitted) {
		count_rule(rule, XRL_RULE_PASSED, frame_len);
		count_verdict(XRL_VERDICT_PASS, frame_len);
		return XDP_PASS;
	}
	count_rule(rule, XRL_RULE_DROPPED, frame_len);
	if (rule->action == XRL_ACTION_MONITOR) {
		count_verdict(XRL_VERDICT_MONITOR, frame_len);
		return XDP_PASS;
	}
	count_verdict(XRL_VERDICT_DROP, frame_len);
	return XDP_DROP;
}

/*
 * A banned source's packet: dropped, counted as banned (bpf/bans.h) in
 * the per-CPU counters only: no write to the shared record, so the drop
 * costs no atomic operation (its record's dropped count stays that of
 * the drops that led to the ban).
 */
static __always_inline int judge_banned(const struct xrl_rule *rule,
					__u64 frame_len)
{
	count_rule(rule, XRL_RULE_BANNED, frame_len);
	count_verdict(XRL_VERDICT_BANNED, frame_len);
	return XDP_DROP;
}

/* What judge_counted() counts. */
enum counted {
	COUNTED_PASSED,
	COUNTED_REFUSED,
	COUNTED_REFUSED_BY_LEVEL,
};

/*
 * Counts a limit or monitor rule's packet for its source: a pass in its
 * offender record if it has one (else a flag, once), a refusal in the
 * record, made at the first, which then looks at limit events and, for
 * a rule with a ban, at the offence (a level's refusal is its
 * subnet's, not the source's). The clock is the one the judgement read
 * (s->now): a pass costs no more than the flag's read. A source refused
 * again on this CPU within XRL_TALLY_NS of such a refusal is only
 * tallied (struct xrl_refusal_tally): a flood of one source pays the
 * record, the events and the ban once a millisecond, not per packet.
 */

static __noinline void judge_counted(const struct source *s,
				     struct xrl_bucket *bucket,
				     const struct xrl_rule *rule,
				     const struct xrl_settings *settings,
				     enum counted how)
{
	const struct xrl_bucket_key *key;
	struct xrl_refusal_tally *tally;
	struct xrl_offender *off;
	__u64 now, carried = 0;

	if (!s || !bucket || !rule || !settings)
		return;
	key = &s->key;
	if (how == COUNTED_PASSED) {
		offender_passed(bucket, offender_of(key, bucket));
		return;
	}
	now = s->now;	/* the judgement's, not a second read */
	tally = cpu_tally();
	if (tally && how == COUNTED_REFUSED &&
	    tally_holds(tally, key, bucket, now)) {
		tally->dropped++;
		return;
	}
	off = offender_open(key, bucket, offender_of(key, bucket), rule, now);
	if (!off)
		return;
	if (tally)
		carried = tally_carried(tally, key, off);
	__sync_fetch_and_add(&off->dropped, 1 + carried);
	report_limited(key, off, rule, settings, now);
	if (how == COUNTED_REFUSED_BY_LEVEL)
		level_refusal_count(rule, now);
	else if (rule->ban.duration_ns &&
		 ban_offence(key, off, rule, settings, now) &&
		 rule->escalate.after && escalation_ban_started(key, rule, now))
		report_escalation(key, rule, settings, now);
	if (tally && how == COUNTED_REFUSED)
		tally_start(tally, key, bucket, off, now);
}

/*
 * A packet of a sliding-window rule (include/xrl.h, "Strategies"): the
 * bucket keeps the binding, counts and events, the window its own state.
 * Fails open, counted, only when the kernel cannot make the state.
 */
static __noinline int judge_window(struct source *s,
				   const struct xrl_settings *settings,
				   const struct xrl_rule *rule,
				   struct xrl_bucket *bucket)
{
	const struct xrl_bucket_key *key = &s->key;
	const struct wire_cost *cost = &s->cost;
	__u64 frame_len = cost->frame_len;
	struct xrl_window_state *st;
	__u64 now = now_ns();
	bool admitted;

	st = window_state(key, rule, bucket, now);
	if (!st) {
		count_table(XRL_TABLE_INSERT_FAILED);
		count_verdict(XRL_VERDICT_ALLOW, frame_len);
		return XDP_PASS;
	}
	admitted = window_take(st, &rule->window, now, cost->packets);
	if (admitted)
		bucket->last_seen_ns = now;
	s->now = now;
	judge_counted(s, bucket, rule, settings,
		      admitted ? COUNTED_PASSED : COUNTED_REFUSED);
	return judge_outcome(rule, admitted, frame_len);
}

/*
 * Judges a packet of a limit or monitor rule; returns the XDP verdict.
 * Only a drop looks at limit events. A subprogram: the bucket-first path,
 * the classified path and a new source all judge here, so the take
 * (bpf/gcra.h) is one body, not one inlined copy per path.
 */
__noinline int judge_limited(const struct xrl_settings *settings,
			     const struct xrl_rule *rule,
			     struct xrl_bucket *bucket)
{
	struct source *s = this_packet();
	const struct wire_cost *cost;
	bool by_level = false;
	int taken;
	__u64 now;

	if (!s || !settings || !rule || !bucket)
		return XDP_ABORTED;	/* never (a global function's check) */
	if (rule->window.limit)
		return judge_window(s, settings, rule, bucket);
	cost = &s->cost;
	/* Clear unless the rule escalates bans (never a window's: it has
	 * no bans) or the source was refused under a banning rule: one
	 * predictable branch. Else the bucket's words are read before the
	 * clock, which a refusal then reads once (bpf/gcra.h). */
	if (rule->escalate.after ||
	    ((bucket_flags(bucket) & XRL_BUCKET_OFFENDER) &&
	     rule->ban.duration_ns)) {
		now = now_ns();
		/* 0 unless a prefix may be banned: predictable branches. */
		if (rule->escalate.after && escalations_in_force(now) &&
		    escalated(&s->key, rule, now))
			return judge_banned(rule, cost->frame_len);
		if ((bucket_flags(bucket) & XRL_BUCKET_OFFENDER) &&
		    rule->ban.duration_ns &&
		    offender_banned(&s->key, offender_of(&s->key, bucket),
				    rule, now))
			return judge_banned(rule, cost->frame_len);
		taken = bucket_take(bucket, &rule->limits, now, cost->packets,
				    cost->bytes);
	} else {
		taken = bucket_take_read(bucket, &rule->limits, cost->packets,
					 cost->bytes, &s->now);
		now = s->now;
	}
	/* 0 unless the rule has levels: one predictable branch. */
	if (taken && rule->levels.count &&
	    !judge_levels(settings, rule, now)) {
		bucket_give_back(bucket, &rule->limits, taken, cost->packets,
				 cost->bytes);
		taken = 0;
		by_level = true;
	}
	s->now = now;
	judge_counted(s, bucket, rule, settings,
		      taken ? COUNTED_PASSED : by_level ?
		      COUNTED_REFUSED_BY_LEVEL : COUNTED_REFUSED);
	return judge_outcome(rule, taken, cost->frame_len);
}

/*
 * Makes the bucket of a new source, bound to @rule, unless another CPU
 * made it first. Apart from judge_new_source(), so the fresh bucket is
 * not on the stack while the packet is judged.
 */
static __noinline void insert_source(const struct xrl_bucket_key *key,
				     const struct xrl_rule *rule)
{
	struct xrl_bucket fresh = {};

	fresh.rule_id = rule->id;
	fresh.gen = rule->gen;
	if (!bpf_map_update_elem(&xrl_buckets, key, &fresh, BPF_NOEXIST))
		count_table(XRL_TABLE_INSERT);
}

/*
 * A source without a bucket. Given one when the new-source budget has an
 * insert left (two CPUs racing on the source share the entry one of them
 * made): returns JUDGE_BUCKET, for the caller to judge it as any other
 * (not from here: a call less in the deepest chain keeps the stacks of
 * all frames under the verifier's 512 bytes). Else judged here by the
 * unknown_sources fallback, which inserts nothing, so a flood of new
 * sources evicts no more live buckets than the budget allows.
 */
#define JUDGE_BUCKET	(-1)

__noinline int judge_new_source(const struct xrl_settings *settings,
				const struct xrl_rule *rule)
{
	const struct source *s = this_packet();
	const struct xrl_bucket_key *key;
	const struct wire_cost *cost;
	struct xrl_bucket *bucket;
	__u64 frame_len, now;
	int admitted;
	bool ipv4;

	if (!s || !settings || !rule)
		return XDP_ABORTED;	/* never (a global function's check) */
	key = &s->key;
	cost = &s->cost;
	ipv4 = s->q.family == XRL_FAMILY_IPV4;
	frame_len = cost->frame_len;
	now = now_ns();	/* read once: the clock is most of a miss */

	/* Its bucket may have been evicted while it was banned: dropped
	 * until the ban ends, and given a bucket (from the budget) only
	 * then. */
	if (rule->ban.duration_ns && (ban_recorded(key, rule, now) ||
				      (rule->escalate.after &&
				       escalations_in_force(now) &&
				       escalated(key, rule, now))))
		return judge_banned(rule, frame_len);
	if (new_source_admitted(settings, now)) {
		insert_source(key, rule);
		return JUDGE_BUCKET;
	}
	count_table(XRL_TABLE_REFUSED);
	switch (settings->unknown_verdict) {
	case XRL_UNKNOWN_PASS:
		bucket = NULL;
		admitted = TAKEN;
		break;
	case XRL_UNKNOWN_DROP:
		bucket = NULL;
		admitted = 0;
		break;
	default:
		bucket = prefix_bucket(key, ipv4, rule->id);
		admitted = bucket ? bucket_take(bucket, &rule->limits, now,
						cost->packets, cost->bytes) :
				    0;
		break;
	}
	/* The levels hold the subnet back even while its new sources get
	 * no bucket. */
	if (admitted && rule->levels.count &&
	    !judge_levels(settings, rule, now)) {
		if (bucket)	/* gives back only what it charged */
			bucket_give_back(bucket, &rule->limits, admitted,
					 cost->packets, cost->bytes);
		admitted = 0;
	}
	count_table(admitted ? XRL_TABLE_FALLBACK_PASS :
			       XRL_TABLE_FALLBACK_DROP);
	return judge_outcome(rule, admitted, frame_len);
}

/* A packet of an aggregate rule: judged by this CPU's share of it. */
__noinline int judge_aggregate(const struct xrl_rule *rule,
			       const struct wire_cost *cost)
{
	int admitted;

	if (!rule || !cost)
		return XDP_ABORTED;	/* never (a global function's check) */
	admitted = agg_admitted(rule, now_ns(), cost->packets, cost->bytes);
	if (admitted < 0) {
		count_verdict(XRL_VERDICT_ALLOW, cost->frame_len);
		return XDP_PASS;
	}
	return judge_outcome(rule, admitted, cost->frame_len);
}

/* The source's key length in its family. */
static __always_inline __u32 key_len(const struct source *s,
				     const struct xrl_settings *settings)
{
	return s->q.family == XRL_FAMILY_IPV4 ? settings->v4_prefix :
						settings->v6_prefix;
}

/* classify()'s rule, from the rule table of the slot in force. */
static __always_inline const struct xrl_rule *
classified(struct xdp_md *ctx, struct source *s,
	   const struct xrl_settings *settings)
{
	int id = classify(ctx, key_len(s, settings));

	return id > 0 ? table_rule(s->q.slot, id - 1) : NULL;
}

/*
 * The rule of a packet classify() left unjudged (an L4 rule of its
 * protocol at its prefix, and a header that cannot tell: docs/POLICY.md
 * "Fragments and header chains"), or NULL when it is dropped, counted
 * here. A later fragment of a flow whose first fragment passed gets that
 * fragment's rule and costs no packet (@s's cost: the packet was charged
 * once, on its first fragment); the settings may send others to the
 * rules without an L4 match (l4->how then is that classification's).
 */
static __noinline const struct xrl_rule *
unjudged_rule(struct xdp_md *ctx, struct source *s,
	      const struct xrl_settings *settings)
{
	struct l4_info *l4 = &s->l4;
	__u64 frame_len = s->cost.frame_len;
	const struct xrl_rule *rule;
	bool dropped;

	if (l4->state == L4_TINY) {
		count_verdict(XRL_VERDICT_TINY_FRAGMENT, frame_len);
		return NULL;
	}
	if (l4->state == L4_OVERFLOW) {
		if (settings->header_overflow_verdict !=
		    XRL_HEADER_OVERFLOW_PLAIN) {
			count_verdict(XRL_VERDICT_HEADER_OVERFLOW, frame_len);
			return NULL;
		}
	} else {
		rule = frag_flow_rule(s->q.slot, s->q.gen, l4, &dropped);
		if (rule && dropped) {
			count_rule(rule, XRL_RULE_DROPPED, frame_len);
			count_verdict(rule->action == XRL_ACTION_DENY ?
				      XRL_VERDICT_DENY : XRL_VERDICT_DROP,
				      frame_len);
			return NULL;
		}
		if (rule) {
			s->cost.packets = 0;
			return rule;
		}
		if (settings->unjudged_fragments_verdict !=
		    XRL_UNJUDGED_FRAGMENTS_PLAIN) {
			count_verdict(XRL_VERDICT_UNJUDGED_FRAGMENT, frame_len);
			return NULL;
		}
	}
	l4->how = CLASSIFY_PLAIN;
	return classified(ctx, s, settings);
}

/*
 * The rule of the packet by the rules in force: classify()'s, or
 * unjudged_rule()'s for a packet classify() could not judge. Its id + 1;
 * 0 when no policy is installed; CLASSIFIED_DROPPED when the packet was
 * dropped unjudged. A global function, apart from judge_classified(): its
 * paths do not multiply the judging's, and this chain of frames and the
 * judging one are never on the stack at once.
 */
#define CLASSIFIED_DROPPED	(-1)

__noinline int classified_rule(struct xdp_md *ctx,
			       const struct xrl_settings *settings)
{
	struct source *s = this_packet();
	const struct xrl_rule *rule;

	if (!s || !settings)
		return CLASSIFIED_DROPPED;	/* never (a global function's) */
	s->l4.how = 0;
	rule = classified(ctx, s, settings);
	if (s->l4.how & CLASSIFY_UNJUDGED) {
		rule = unjudged_rule(ctx, s, settings);
		if (!rule)
			return CLASSIFIED_DROPPED;
	}
	return rule ? rule->id + 1 : 0;
}

/*
 * Judges a classified packet by @rule (NULL: no policy), with the bucket
 * a stale lookup found (@stale) and classify()'s *@how. A stale bucket
 * that no longer serves the source under its plain key (the rule is not
 * a per-source limit, or the key subnet is now split) is deleted, so it
 * does not send every packet of its key here.
 */
static __always_inline int judge_rule(struct source *s,
				      const struct xrl_settings *settings,
				      const struct xrl_rule *rule,
				      struct xrl_bucket *stale, __u32 how)
{
	struct xrl_bucket_key *key = &s->key;
	bool split = how & CLASSIFY_SPLIT;
	__u64 frame_len = s->cost.frame_len;
	struct xrl_bucket *bucket;
	bool limited;
	int verdict;

	limited = rule && (rule->action == XRL_ACTION_LIMIT ||
			   rule->action == XRL_ACTION_MONITOR) &&
		  rule->scope == XRL_SCOPE_SOURCE;
	if (stale && (split || !limited))
		bpf_map_delete_elem(&xrl_buckets, key);
	if (!rule || rule->action == XRL_ACTION_ALLOW) {
		if (rule)
			count_rule(rule, XRL_RULE_PASSED, frame_len);
		count_verdict(XRL_VERDICT_ALLOW, frame_len);
		return XDP_PASS;
	}
	if (rule->action == XRL_ACTION_DENY) {
		count_rule(rule, XRL_RULE_DROPPED, frame_len);
		count_verdict(XRL_VERDICT_DENY, frame_len);
		return XDP_DROP;
	}
	if (!limited)
		return judge_aggregate(rule, &s->cost);

	bucket = stale;
	if (split) {
		key->tag = XRL_BUCKET_TAG(s->q.family, rule->id + 1);
		bucket = bpf_map_lookup_elem(&xrl_buckets, key);
	}
	if (!bucket) {
		verdict = judge_new_source(settings, rule);
		if (verdict != JUDGE_BUCKET)
			return verdict;
		bucket = bpf_map_lookup_elem(&xrl_buckets, key);
		if (!bucket) {
			/* Only when the kernel cannot allocate: fail open,
			 * counted. */
			count_table(XRL_TABLE_INSERT_FAILED);
			count_verdict(XRL_VERDICT_ALLOW, frame_len);
			return XDP_PASS;
		}
	}
	rebind(bucket, rule);
	return judge_limited(settings, rule, bucket);
}

/*
 * The slow path: a source with no bucket, or whose bucket was classified
 * under another policy (@stale). The source is classified by the rules in
 * force and judged; at a prefix with L4 rules, a first fragment's verdict
 * is kept for its flow's later fragments (bpf/fragments.h).
 */
__noinline int judge_classified(struct xdp_md *ctx,
				const struct xrl_settings *settings,
				struct xrl_bucket *stale)
{
	const struct xrl_rule *rule = NULL;
	struct source *s;
	int verdict, id;

	if (!settings)
		return XDP_ABORTED;	/* never (a global function's check) */
	id = classified_rule(ctx, settings);
	s = this_packet();
	if (!s)
		return XDP_ABORTED;	/* never: a per-CPU array's entry */
	if (id == CLASSIFIED_DROPPED) {
		if (stale)	/* its key is split now: an L4 prefix */
			bpf_map_delete_elem(&xrl_buckets, &s->key);
		return XDP_DROP;
	}
	if (id > 0)
		rule = table_rule(s->q.slot, id - 1);
	verdict = judge_rule(s, settings, rule, stale, s->l4.how);
	s = this_packet();
	if (s && (s->l4.how & CLASSIFY_L4) && s->l4.first &&
	    s->l4.state == L4_READ)
		frag_remember(&s->l4, rule, verdict, s->q.gen);
	if (s)
		route_remember(s, rule, s->l4.how);
	return verdict;
}

/*
 * A source a manual ban covers (bpf/bans.h): counted as banned. A
 * subprogram beside the judging chain, taking the source whole, so that
 * neither its key nor a spilled value lands on the main frame, which is
 * in the deepest chain.
 */
static __noinline bool source_banned(const struct source *s)
{
	if (!manual_banned(s->q.addr, s->q.family, now_ns()))
		return false;
	count_verdict(XRL_VERDICT_BANNED, s->cost.frame_len);
	return true;
}

/* Blocklists (bpf/blocklists.h) count their verdict here. */
#include "blocklists.h"

static __noinline bool source_blocklisted(const struct source *s,
					  const struct xrl_settings *settings)
{
	if (blocklist_verdict(s, settings) != XDP_DROP)
		return false;
	count_verdict(XRL_VERDICT_BLOCKLISTED, s->cost.frame_len);
	return true;
}

/*
 * The packet of this CPU's routed flow (bpf/routes.h), judged by its
 * bucket under the routed rule; XDP_ABORTED (never a verdict here) when
 * it is not, or its bucket is gone: then it is classified. Inlined in
 * the entry, so the judging chain has no frame more.
 */
static __always_inline int judge_routed(struct xdp_md *ctx, struct source *s,
					const struct xrl_policy_head *head)
{
	const struct xrl_settings *settings = &head->settings;
	struct flow_route *r = cpu_route();
	const struct xrl_rule *rule;
	struct xrl_bucket *bucket;

	if (!r || !r->family || !route_same_source(r, s) || !routed_flow(ctx))
		return XDP_ABORTED;
	/* The routed rule, while its generation is the one in force; a
	 * stale route is dropped (no parse for the source again). */
	rule = known_rule(s->q.slot, head->gen, r->rule_id, r->gen);
	if (!rule) {
		r->family = 0;
		return XDP_ABORTED;
	}
	s->key.tag = XRL_BUCKET_TAG(s->q.family, rule->id + 1);
	bucket = bpf_map_lookup_elem(&xrl_buckets, &s->key);
	if (!bucket) {
		s->key.tag = XRL_BUCKET_TAG(s->q.family, 0);
		return XDP_ABORTED;
	}
	rebind(bucket, rule);
	return judge_limited(settings, rule, bucket);
}

/*
 * Bucket first: a source whose bucket names a rule of the table in force
 * under the generation it was classified in is judged without walking
 * any rule, as is this CPU's routed L4 flow. Everything else is
 * classified.
 */
static __always_inline int judge_packet(struct xdp_md *ctx)
{
	const struct xrl_policy_head *head;
	const struct xrl_settings *settings;
	const struct xrl_rule *rule;
	struct xrl_bucket *bucket;
	enum parse_result parsed;
	struct source *s;
	__u64 word;
	int verdict;

	/* Only before the first policy (the loader installs one). */
	head = policy_head();
	s = this_packet();
	if (!head || !s)
		return XDP_PASS;
	settings = &head->settings;
	s->q.slot = head->rules_slot;
	s->q.gen = head->gen;

	/* Sets s->cost.frame_len first, whatever it finds. */
	parsed = parse_source(ctx, s->q.addr, &s->cost);
	if (parsed == PARSE_IPV4_MAPPED &&
	    settings->ipv4_mapped_verdict == XRL_IPV4_MAPPED_IPV6)
		parsed = PARSE_IPV6;
	if (parsed == PARSE_IPV4_MAPPED) {
		count_verdict(XRL_VERDICT_IPV4_MAPPED, s->cost.frame_len);
		return XDP_DROP;
	}
	if (parsed == PARSE_VLAN_OVERFLOW) {
		count_verdict(XRL_VERDICT_VLAN_OVERFLOW, s->cost.frame_len);
		return settings->vlan_overflow_verdict ==
			XRL_VLAN_OVERFLOW_PASS ? XDP_PASS : XDP_DROP;
	}
	if (parsed == PARSE_NONIP) {
		count_verdict(XRL_VERDICT_NONIP, s->cost.frame_len);
		return XDP_PASS;
	}
	if (parsed == PARSE_MALFORMED) {
		count_verdict(XRL_VERDICT_MALFORMED, s->cost.frame_len);
		return settings->malformed_verdict == XRL_MALFORMED_DROP ?
			XDP_DROP : XDP_PASS;
	}

	s->q.family = parsed == PARSE_IPV4 ? XRL_FAMILY_IPV4 : XRL_FAMILY_IPV6;
	/* Only while the daemon holds manual bans: before any rule. */
	if (settings->manual_bans && source_banned(s))
		return XDP_DROP;
	/* Only while the policy has blocklists: after the bans, before
	 * any rule. */
	if (settings->blocklists && source_blocklisted(s, settings))
		return XDP_DROP;
	bucket_key(&s->key, s->q.addr, s->q.family, settings);
	verdict = judge_routed(ctx, s, head);
	if (verdict != XDP_ABORTED)
		return verdict;
	bucket = bpf_map_lookup_elem(&xrl_buckets, &s->key);
	if (bucket) {
		word = bucket_binding(bucket);
		rule = known_rule(s->q.slot, head->gen,
				  XRL_BUCKET_RULE((__u32)word), word >> 32);
		if (rule)
			return judge_limited(settings, rule, bucket);
	}
	return judge_classified(ctx, settings, bucket);
}

/* The packet judged, then, while a capture runs, offered to it. */
SEC("xdp")
int xdp_ratelimit(struct xdp_md *ctx)
{
	int action = judge_packet(ctx);

	if (capture_armed())
		capture_verdict(ctx, action);
	return action;
}
