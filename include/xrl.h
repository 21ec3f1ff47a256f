/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * xrl.h - the one contract between the XDP program and userspace.
 *
 * Every structure stored in a map, every map name and every limit that
 * both sides must agree on is defined here and only here. Both sides
 * include this file; nothing in it may depend on libc or on BPF helpers.
 */
#ifndef XRL_H
#define XRL_H

#include <linux/types.h>

/*
 * Map names, shared so userspace finds the pins by name. The kernel cuts
 * map names at 15 characters; these are also the file names under the pin
 * directory.
 */
#define XRL_MAP_POLICY		"xrl_policy"
#define XRL_MAP_BUCKETS		"xrl_buckets"
#define XRL_MAP_STATS		"xrl_stats"
#define XRL_MAP_RULE_STATS	"xrl_rule_stats"
#define XRL_MAP_RULE_SPILL	"xrl_rule_spill"
#define XRL_MAP_SETTINGS	"xrl_settings"
#define XRL_MAP_TABLE_STATS	"xrl_table_stats"
#define XRL_MAP_AGG_SHARES	"xrl_agg_shares"
#define XRL_MAP_AGG_STATE	"xrl_agg_state"
#define XRL_MAP_AGG_POOL	"xrl_agg_pool"
#define XRL_MAP_EVENTS		"xrl_events"
#define XRL_MAP_EVENT_STATE	"xrl_event_state"
#define XRL_MAP_RULE_TABLE	"xrl_rule_table"
#define XRL_MAP_WINDOWS		"xrl_windows"
#define XRL_MAP_BANS		"xrl_bans"
#define XRL_MAP_OFFENDERS	"xrl_offenders"
#define XRL_MAP_TALLY		"xrl_tally"
#define XRL_MAP_RULE_CACHE	"xrl_rule_cache"
#define XRL_MAP_BAN_STATS	"xrl_ban_stats"
#define XRL_MAP_MANUAL_BANS	"xrl_manual_bans"
#define XRL_MAP_ESCALATIONS	"xrl_escalations"
#define XRL_MAP_FRAGS		"xrl_frags"
#define XRL_MAP_BLOCKLISTS	"xrl_blocklists"
#define XRL_MAP_BLOCK_HITS	"xrl_block_hits"
#define XRL_MAP_CAPTURE		"xrl_capture"
#define XRL_MAP_CAPTURE_RB	"xrl_capture_rb"
#define XRL_MAP_CAPTURE_ST	"xrl_capture_st"
/* Not maps of the program: the inner maps in force, pinned for bpftool. */
#define XRL_PIN_RULES		"xrl_rules"
#define XRL_PIN_TABLE		"xrl_table"
/* Nor this: userspace's mark of the rule ids handed out (never reused). */
#define XRL_PIN_IDS		"xrl_ids"
#define XRL_PIN_HEAD		"xrl_head"
#define XRL_PIN_DIR		"/sys/fs/bpf/xdp-ratelimit"
/* Not of the program either: the daemon's control socket, for both tools. */
#define XRL_SOCKET_PATH		"/run/xdp-ratelimit/control.sock"
/* Both tools take these from the environment when no option sets them. */
#define XRL_ENV_PIN_DIR		"XDP_RATELIMIT_PIN_DIR"
#define XRL_ENV_SOCKET		"XDP_RATELIMIT_SOCKET"
#define XRL_VERSION		"0.1.0"

/*
 * A policy holds fewer than XRL_MAX_RULES rules, the default one
 * included; the capacity a data path is loaded for (struct
 * xrl_load_opts, max_rules) bounds each policy.
 *
 * Rule ids are below twice the capacity (at most XRL_RULE_IDS): while a
 * policy is put in force, the one going out still holds its ids, so a
 * policy of any size can replace any other with fresh ids for all of
 * its rules. Nothing is sized by the id space: the rule tables and the
 * per-rule counters are hash maps holding the rules in force only
 * (bpf/classify.h, xrl_rule_stats), so memory follows the policy, not
 * the capacity. The counters of the first XRL_RULE_STATS_FIRST ids made
 * are in xrl_rule_stats, the rest in xrl_rule_spill (sized to the id
 * space): a walk of a hash reads every bucket, so reading the counters
 * of a policy that fits the first costs what it holds.
 */
#define XRL_MAX_RULES		1048576
#define XRL_DEFAULT_RULES	131072	/* rule capacity unless told */
#define XRL_RULE_STATS_FIRST	4096	/* xrl_rule_stats entries */
#define XRL_RULE_IDS		(2 * (XRL_MAX_RULES - 1))
#define XRL_DEFAULT_SOURCES	1048576	/* bucket map size unless told */

/*
 * Spoofed-source floods (docs: README "Under a spoofed flood").
 *
 * Giving a bucket to a source not yet in xrl_buckets is itself rate
 * limited by a new-source budget: a GCRA per CPU (no shared cache line),
 * each CPU holding 1/ncpus of the rate and of the burst, so that all
 * CPUs together never insert more than rate * t + burst. Unless the
 * policy sets it, the budget is derived from the table size N: rate
 * N / XRL_TURNOVER_S (the whole table may turn over at most once every
 * five minutes) and burst N / XRL_BURST_DIVISOR (a flood evicts at most
 * 1/16 of the table at once; a quiet table refills its burst in 19 s).
 *
 * A new source refused by the budget is judged without an insert, by the
 * unknown_sources fallback: pass, drop, or (default) prefix: a per-CPU
 * direct-mapped table of XRL_PREFIX_SLOTS GCRA buckets indexed by a
 * seeded hash of (source /24 or /48, rule id), each judged with the
 * rule's own limits, so a /24 of unknown sources shares one source's
 * budget and colliding prefixes share theirs (collisions only ever make
 * the fallback stricter, never reset a bucket).
 */
#define XRL_TURNOVER_S		300
#define XRL_BURST_DIVISOR	16
#define XRL_PREFIX_SLOT_BITS	12
#define XRL_PREFIX_SLOTS	(1U << XRL_PREFIX_SLOT_BITS)	/* per CPU */
#define XRL_UNKNOWN_V4_PREFIX	24
#define XRL_UNKNOWN_V6_PREFIX	48

enum xrl_action {
	XRL_ACTION_LIMIT = 0,	/* drop what is over the limit */
	XRL_ACTION_MONITOR,	/* count what would be dropped, pass it */
	XRL_ACTION_ALLOW,	/* exempt: never limited */
	XRL_ACTION_DENY,	/* always drop */
	XRL_ACTION_COUNT,
};

/* Global counters, one slot per outcome (index of the xrl_stats map). */
enum xrl_verdict {
	XRL_VERDICT_PASS = 0,	/* a limited source within its limit */
	XRL_VERDICT_DROP,	/* a limited source over its limit */
	XRL_VERDICT_MONITOR,	/* over the limit of a monitor rule: passed */
	XRL_VERDICT_ALLOW,	/* allow rule, or no rule at all */
	XRL_VERDICT_DENY,	/* deny rule */
	XRL_VERDICT_MALFORMED,	/* truncated or inconsistent IP header */
	XRL_VERDICT_NONIP,	/* neither IPv4 nor IPv6: passed untouched */
	XRL_VERDICT_VLAN_OVERFLOW,	/* more VLAN tags than followed */
	XRL_VERDICT_IPV4_MAPPED,	/* IPv6 source naming an IPv4 one */
	XRL_VERDICT_BANNED,	/* a banned source's (struct xrl_ban) */
	/* At a prefix with an L4 rule of the packet's protocol, the L4
	 * header cannot tell (docs/POLICY.md "Fragments and header
	 * chains"): */
	XRL_VERDICT_TINY_FRAGMENT,	/* a first fragment cut inside it */
	XRL_VERDICT_UNJUDGED_FRAGMENT,	/* a later one, its first unseen */
	XRL_VERDICT_HEADER_OVERFLOW,	/* too many extension headers */
	XRL_VERDICT_BLOCKLISTED,	/* a deny blocklist holds the source */
	XRL_VERDICT_COUNT,
};

/* What happens to a source the new-source budget refuses a bucket. */
enum xrl_unknown_verdict {
	XRL_UNKNOWN_PREFIX = 0,	/* judged by its prefix's fallback bucket */
	XRL_UNKNOWN_PASS,	/* passed unjudged */
	XRL_UNKNOWN_DROP,	/* dropped */
	XRL_UNKNOWN_COUNT,
};

/*
 * Table pressure, counted per CPU (xrl_table_stats, one entry). Every
 * packet of a limit or monitor rule whose source has no bucket is either
 * given one (INSERT, or INSERT_FAILED when the kernel made none: passed,
 * counted as allow) or refused by the budget (REFUSED), and then judged
 * by the fallback: FALLBACK_PASS + FALLBACK_DROP = REFUSED. The kernel
 * counts no LRU evictions; userspace derives them as inserts minus the
 * entries in the table minus the buckets userspace deleted (reset, a
 * policy change's scrub): those it counts in slot
 * XRL_TABLE_STATS_FORGOTTEN of the same map, events[XRL_TABLE_INSERT] of
 * its first CPU, a slot the program never writes (so userspace's
 * read-modify-write races no packet).
 */
#define XRL_TABLE_STATS_FORGOTTEN	1
#define XRL_TABLE_STATS_SLOTS		2
enum xrl_table_event {
	XRL_TABLE_INSERT = 0,
	XRL_TABLE_INSERT_FAILED,
	XRL_TABLE_REFUSED,
	XRL_TABLE_FALLBACK_PASS,
	XRL_TABLE_FALLBACK_DROP,	/* monitor rules: passed, would drop */
	XRL_TABLE_EVENTS,
};

struct xrl_table_counters {
	__u64 events[XRL_TABLE_EVENTS];
};

/* Per-CPU state of the new-source budget (a GCRA word, as in a bucket). */
struct xrl_new_source_budget {
	__u64 tat;
	__u64 last_seen_ns;
};

struct xrl_counter {
	__u64 packets;
	__u64 bytes;
};

/*
 * Per-rule counters (xrl_rule_stats or xrl_rule_spill, keyed by rule
 * id). For a monitor
 * rule, "dropped" counts what would have been dropped (it was passed).
 */
enum xrl_rule_outcome {
	XRL_RULE_PASSED = 0,
	XRL_RULE_DROPPED,
	XRL_RULE_BANNED,	/* dropped because the source was banned */
	XRL_RULE_OUTCOMES,
};

struct xrl_rule_counters {
	struct xrl_counter outcome[XRL_RULE_OUTCOMES];
};

enum xrl_limit_kind {
	XRL_LIMIT_PACKETS = 0,	/* cost of a packet: 1 */
	XRL_LIMIT_BYTES,	/* cost of a packet: its frame length */
	XRL_LIMIT_KINDS,
};

/*
 * One GCRA limit, compiled from (rate, burst) by userspace
 * (xrl_limit_compile() in user/lib/limit.c).
 *
 * Time is counted in "units" of 2^-shift ns, shift being chosen per limit
 * (negative for slow rates) so that the emission interval of one packet
 * or byte lies in [XRL_INTERVAL_MIN, 2 * XRL_INTERVAL_MIN] units (below
 * the upper end before rounding up):
 *
 *   interval  = ceil(1e9 / rate * 2^shift)   units per packet or byte
 *   tolerance = burst * interval              units
 *
 * Error bound: rounding the interval up lengthens it by less than one
 * unit, so the admitted long-run rate is never above the configured one
 * and at most 1/4096 = 0.0244% below it, for every rate: 1 pps (shift
 * -17) to 100 Mpps (shift 9), 1 kB/s = 8 kbit/s (shift -7) to 50 GB/s =
 * 400 Gbit/s (shift 18). "now" is truncated to whole units, so a packet
 * is admitted at most one unit (under 0.025% of an interval) after its
 * ideal instant. The tolerance is at most 2^32 * 2^13 = 2^45 units for any
 * burst up to 2^32, far inside the 2^57 units that a bucket's 58-bit
 * clock can tell apart (see struct xrl_bucket), and a frame's cost
 * (its length times interval; a generic-mode aggregate's wire bytes,
 * under 2^20, or its packets, bpf/parse.h) stays within 2^33.
 *
 * interval == 0 means the limit is not set.
 */
#define XRL_INTERVAL_MIN	4096ULL
#define XRL_SHIFT_MIN		(-31)
#define XRL_SHIFT_MAX		31

struct xrl_limit {
	__u64 interval;
	__u64 tolerance;
	__s32 shift;
	__u32 reserved;
};

/* Both limits of a rule or a share, as one object: what bpf/gcra.h's
 * bucket_take() is given (a global function's pointer argument covers
 * the size of its type only). */
struct xrl_limits {
	struct xrl_limit kind[XRL_LIMIT_KINDS];
};

/*
 * What one budget covers: each source (a bucket per source key, shared by
 * every CPU) or everything the rule matches (one budget, split per CPU).
 */
enum xrl_scope {
	XRL_SCOPE_SOURCE = 0,
	XRL_SCOPE_AGGREGATE,
	XRL_SCOPE_COUNT,
};

/*
 * Strategies (docs/POLICY.md "strategy"). A token bucket and a leaky
 * bucket are one GCRA limit (struct xrl_limit): a leaky bucket is a pace
 * with a burst of 1 unless set, compiled into the same limit a token
 * bucket of the same rate and burst gets, so both admit the same packets.
 * A sliding window admits a packet at t only when fewer than @limit
 * packets were admitted in the window before it; refusals are not
 * counted.
 *
 * The window is kept as XRL_WINDOW_SLOTS counters of sub-windows of
 * sub_ns = ceil(window / XRL_WINDOW_SUBS) each (struct xrl_window_state),
 * the one holding t and the XRL_WINDOW_SUBS before it, all counted whole:
 * a packet at t is admitted when fewer than @limit were admitted in
 *
 *     [(floor(t / sub_ns) - XRL_WINDOW_SUBS) * sub_ns, t]
 *
 * which holds the exact window (t - window, t] and at most one sub-window
 * more. So it never admits more than @limit in any window, and refuses
 * early only for admissions of the oldest sub-window already out of the
 * window: after a full window, the source is admitted again at the start
 * of the sub-window after the one of the first admitted packet's sub-
 * window plus XRL_WINDOW_SUBS, at most window / XRL_WINDOW_SUBS (+1 ns of
 * rounding each) after the exact window's instant.
 *
 * In the data path, a rule with window.limit != 0 is a sliding window;
 * its limit[XRL_LIMIT_PACKETS] is the pace limit / window, burst 1, for
 * the unknown_sources prefix fallback only (packets spaced by window /
 * limit: never more than limit in a window either).
 */
enum xrl_strategy {
	XRL_STRATEGY_TOKEN_BUCKET = 0,
	XRL_STRATEGY_LEAKY_BUCKET,
	XRL_STRATEGY_SLIDING_WINDOW,
	XRL_STRATEGY_COUNT,
};

#define XRL_WINDOW_SLOTS	16
#define XRL_WINDOW_SUBS		(XRL_WINDOW_SLOTS - 1)
#define XRL_WINDOW_LIMIT_MAX	1000000		/* packets in one window */
#define XRL_WINDOW_SOURCES	65536		/* window table, at most */

struct xrl_rule_window {
	__u32 strategy;		/* enum xrl_strategy, for display */
	__u32 limit;		/* sliding window: n; else 0 */
	__u64 sub_ns;		/* sliding window: sub-window width */
	__u64 window_ns;	/* sliding window: the window, for display */
};

/*
 * Window state of one source key (xrl_windows, an LRU hash keyed as the
 * buckets are). A slot is one word, so a CPU admits with one atomic add:
 *
 *   bits 63..24  sub-window number (floor(t / sub_ns)), modulo 2^40
 *   bits 23..0   packets admitted in it (limit + CPUs in flight < 2^24)
 *
 * Sub-window e lives in slot e % XRL_WINDOW_SLOTS; a slot holding an
 * older sub-window than the window reaches is empty, and is reset to the
 * current one by compare-and-swap. sub_ns, rule_id and since say what the
 * epochs were counted for: state of another rule or width starts empty.
 */
#define XRL_WINDOW_COUNT_BITS	24
#define XRL_WINDOW_COUNT_MASK	((1ULL << XRL_WINDOW_COUNT_BITS) - 1)
#define XRL_WINDOW_EPOCH_BITS	(64 - XRL_WINDOW_COUNT_BITS)

struct xrl_window_state {
	__u64 slot[XRL_WINDOW_SLOTS];
	__u64 sub_ns;
	__u32 rule_id;
	__u32 since;
};

/*
 * A compiled rule: the value of the rule table (by id) and of the
 * classifier (by prefix), both of one policy generation.
 *
 * gen is the generation of the policy's shape the rule belongs to: the
 * policy generation of the last swap that reshaped the policy (added,
 * removed or moved a rule, or changed a rule's action, scope, strategy
 * or levels: user/core/compiled.c, rules_gen); a swap that changes only
 * numbers keeps every rule's gen, so every bucket stays bound. since is
 * the generation from which this id has named this prefix (and L4 match; a
 * rule out of the policy for one swap and back as it was keeps it, as
 * it keeps its counters: user/core/compiled.c since_of()). A bucket records
 * the rule id and the generation it was classified under, so a bucket
 * older than @since belongs to another rule that held the id before (a
 * deleted rule whose id was reused) and never judges this one.
 */
/*
 * Bans of a rule (bpf/bans.h, docs/POLICY.md "Bans"): a source over the
 * rule's limit for after_ns (0: at its first drop) is banned for
 * duration_ns, each repeat offence for twice the previous ban, at most
 * max_ns. duration_ns == 0: the rule bans no one (and costs no more).
 */
struct xrl_rule_ban {
	__u64 duration_ns;
	__u64 after_ns;
	__u64 max_ns;
};

/*
 * Escalation of a rule's bans to a subnet (bpf/escalate.h, docs/POLICY.md
 * "Escalation"): once @after distinct sources of one /@prefix (of the
 * rule's family) have been banned by the rule within @within_ns, the
 * whole prefix is banned for @duration_ns, a repeat as a rule ban (twice
 * the previous one, at most the rule's ban max_ns). after == 0: the rule
 * escalates nothing (and costs no more).
 */
#define XRL_ESCALATE_AFTER_MAX	16

struct xrl_rule_escalate {
	__u64 within_ns;
	__u64 duration_ns;
	__u8 after;	/* 2..XRL_ESCALATE_AFTER_MAX, or 0: none */
	__u8 prefix;	/* length within the rule's family */
	__u16 reserved;
	__u32 reserved2;
};

/*
 * L4 match of a rule (docs/POLICY.md "Protocols and ports"). proto 0 is
 * a plain rule: every packet of its prefix. Any other proto matches only
 * packets whose L4 header the program read (bpf/l4.h): not a non-first
 * fragment, nor a header cut short. Ports are host order, inclusive,
 * and looked at only when their flag is set (all zero: a plain rule).
 *
 * Several rules may share a prefix when their matches differ: the
 * classifier holds the first of them in file order, and each names the
 * next through @next (its id + 1, 0 for none). The chain of a prefix is
 * at most XRL_MATCH_CHAIN_MAX long, and a plain rule, which matches
 * everything, can only be its last.
 */
#define XRL_MATCH_SYN		0x01	/* TCP SYN without ACK */
#define XRL_MATCH_SPORT		0x02	/* sport_lo..sport_hi is set */
#define XRL_MATCH_DPORT		0x04	/* dport_lo..dport_hi is set */
#define XRL_MATCH_CHAIN_MAX	8

/* IPv6 extension headers the program follows to an L4 header. */
#define XRL_L4_EXT_MAX		8

struct xrl_rule_match {
	__u8 proto;	/* IPPROTO_TCP, _UDP, _ICMP, _ICMPV6; 0: plain */
	__u8 flags;	/* XRL_MATCH_* */
	__u16 reserved;
	__u16 sport_lo, sport_hi;
	__u16 dport_lo, dport_hi;
	__u32 next;	/* id + 1 of the next rule of the prefix, or 0 */
};

/*
 * Levels of a rule (docs/POLICY.md "Levels", bpf/levels.h): besides its
 * own bucket per source key, a limit or monitor rule of scope source may
 * keep one bucket per source masked to each of its levels' prefixes
 * ("each address 100 pps, each /24 together 1,000"). A packet passes
 * only when the source's bucket and every level of its family admit it;
 * a level that refuses consumes nothing from the others (what they took
 * is given back). Levels are GCRA limits (token buckets) whatever the
 * rule's strategy, and not with sliding windows or aggregate scope.
 *
 * Level i of a rule is a classifier entry of its own, found by the rule
 * id (struct xrl_rule_key: family XRL_KEY_LEVEL, prefixlen i, addr[0]
 * the rule id) whose value is a struct xrl_rule: the rule's id, action,
 * generations, and the level's limits. Its buckets live in xrl_buckets,
 * keyed by the source masked to the level's prefix and tagged with the
 * rule id and the level (XRL_LEVEL_TAG), and are bound (rule_id, gen) as
 * the rule's own: a reused rule id never inherits them.
 *
 * prefix[i] is the level's length within its family (IPv4 1..31, IPv6
 * 1..127), always shorter than the family's source key; bit i of ipv6
 * says the level is for IPv6 sources, else for IPv4 ones.
 */
#define XRL_LEVELS_MAX		4

struct xrl_rule_levels {
	__u8 count;	/* levels 0..count-1 are set */
	__u8 ipv6;	/* bit i: level i judges IPv6 sources */
	__u8 prefix[XRL_LEVELS_MAX];
	__u16 reserved;
};

struct xrl_rule {
	__u32 id;	/* key of xrl_rule_stats, < XRL_RULE_IDS */
	__u16 action;	/* enum xrl_action */
	__u16 scope;	/* enum xrl_scope */
	union {
		struct xrl_limit limit[XRL_LIMIT_KINDS];
		struct xrl_limits limits;
	};
	__u32 gen;	/* policy generation, from 1 */
	__u32 since;	/* generation this id got this prefix */
	struct xrl_rule_window window;	/* strategy */
	struct xrl_rule_ban ban;
	struct xrl_rule_match match;
	struct xrl_rule_levels levels;
	struct xrl_rule_escalate escalate;
};

/*
 * A CPU's copy of a rule its known sources are bound to (xrl_rule_cache,
 * a per-CPU array of XRL_RULE_CACHE_WAYS, the way of a rule its id
 * modulo their number: bpf/rule_cache.h), holding that rule's counters
 * on the CPU while it is there, so that a packet pays no lookup of its
 * counters entry (xrl_rule_stats or xrl_rule_spill): when a rule takes
 * the way, the counters of the rule that held it are written back to
 * its entry (if it is still in force) and the new one's copied from its
 * own. A reader takes a CPU's counters of rule R from the way when
 * claim names R at the since of R in force, from R's entry otherwise,
 * reading the way first (user/datapath/stats.c). Not pinned (64 values a CPU are no
 * bpftool dump): a process that adopts the pins finds it through the
 * program's maps. The program changes a way by writing
 * head (one more than before), then the claim and counts, then tail
 * (= head); a reader copies a way in one call, lowest address first
 * (the kernel copies a value 8 bytes at a time in that order), and
 * trusts it only when tail == head: on x86, whose stores are seen in
 * the order made, no change was under way while it read.
 */
#define XRL_RULE_CACHE_WAYS	64

struct xrl_rule_copy {
	__u64 tail;	/* = head when no change is under way */
	__u64 claim;	/* (since << 32) | (id + 1) of the counts; 0: none */
	struct xrl_rule_counters counts;
	__u64 head;	/* written first, then claim and counts, then tail */
	__u64 binding;	/* (gen << 32) | id of the rule copied; 0: none */
	__u32 checked;	/* head generation it was copied under */
	__u32 reserved;
	struct xrl_rule rule;
};

/*
 * Aggregate budgets (scope: aggregate; README "Scopes and global budgets").
 *
 * A rule's budget is cut in weights out of XRL_SHARE_ONE, summing to it:
 * one per possible CPU (xrl_agg_shares, a PERCPU_HASH written only by
 * userspace; xrl_agg_state holds that CPU's GCRA bucket and demand,
 * written only by the program on that CPU) and one for a pool shared by
 * every CPU (struct xrl_agg_share.pool; its bucket is xrl_agg_pool, one
 * struct xrl_bucket per rule updated by compare-and-swap as a source's
 * bucket is). A packet is charged to its CPU's share, or when that
 * refuses, to the pool; it is refused when both refuse. Each share is
 * rate * w / ONE with the same tolerance as a time (burst / rate, at
 * least one packet), so all of them together admit at most
 * rate * t + burst + one packet per CPU.
 *
 * Why a pool: traffic moves between CPUs (RSS, IRQ balancing, a sender
 * rescheduled on a veth) faster than any re-split can follow, and a
 * share left on a CPU the traffic just left is lost until the next one.
 * Budget in the pool follows the traffic at once. Its cost is one cache
 * line shared by the CPUs that are over their own share, written at most
 * once per packet it admits: at most its rate, whatever the flood. So
 * the daemon keeps in the pool up to XRL_AGG_POOL_PPS worth of the
 * budget and splits only the rest by demand over the CPUs; without the
 * daemon each CPU holds a floor and the pool the rest, so that traffic
 * on any set of CPUs gets the whole budget.
 *
 * A share's weight is at least a floor, 2% of an even share (user
 * budget.h, XRL_SHARE_FLOOR_PERCENT), rounded down: with ONE = 2^20
 * idle CPUs hold under 2% of the budget on any machine (at 1,024 CPUs 20
 * units each, 1.95%; with ONE = 1024 the floor could only be one unit,
 * 6% of the budget at 64 CPUs and 25% at 256).
 *
 * Debt across a re-split (bpf/aggregate.h, agg_bound_debt()): a CPU may
 * carry a TAT from an earlier, smaller share far past what its current
 * share tolerates (one packet of a floor share is a long time). Such a
 * debt is cut to the current tolerance, so a CPU the traffic moves to
 * admits again within one interval of its current share, never later.
 * What is forgiven is at most the old tolerance, once per re-split.
 */
#define XRL_MAX_AGGREGATES	4096
/* Keys of the share and state maps: room for a whole policy of them and
 * a whole new one, so a change writes the new rules' shares before the
 * swap without touching the ones in force. */
#define XRL_AGG_MAP_ENTRIES	(2 * XRL_MAX_AGGREGATES)
#define XRL_SHARE_ONE		(1U << 20)
#define XRL_AGG_POOL_PPS	100000ULL

struct xrl_agg_share {
	struct xrl_limit limit[XRL_LIMIT_KINDS];	/* this CPU's */
	union {				/* the pool's (all CPUs) */
		struct xrl_limit pool[XRL_LIMIT_KINDS];
		struct xrl_limits pool_limits;
	};
};

struct xrl_agg_state {
	__u64 tat[XRL_LIMIT_KINDS];
	__u64 last_seen_ns;
	__u64 arrived;		/* packets judged on this CPU: the demand */
	__u64 passed;		/* of which admitted (monitor: passed) */
};

/*
 * Families never mix: IPv4 and IPv6 sources are told apart by a family
 * field in every key, never by the address, so an IPv6 source (IPv4-mapped
 * ::ffff:a.b.c.d included) never matches an IPv4 rule or shares an IPv4
 * source's bucket, and an IPv6 rule (::/8, ::ffff:0:0/96) covers IPv6
 * sources only. Addresses are kept in the parser's layout: IPv6 as it is,
 * IPv4 as ::ffff:a.b.c.d (the address in the last word).
 */
enum xrl_family {
	XRL_FAMILY_ANY = 0,	/* the default rule only */
	XRL_FAMILY_IPV4 = 4,
	XRL_FAMILY_IPV6 = 6,
};

/*
 * A prefix as userspace writes and reads it (CIDR text, policy files,
 * reports): IPv4 /n as ::ffff:a.b.c.d/(96 + n), IPv6 /n as it is, and
 * the default rule as /0. An IPv6 prefix of 96 bits or less inside
 * ::ffff:0:0/96 stays IPv6; longer ones are the IPv4 form (xrl_cidr_parse
 * refuses them in IPv6 notation).
 */
struct xrl_lpm_key {
	__u32 prefixlen;
	__u8 addr[16];
};

/*
 * The classifier (inner hash map of xrl_policy): every prefix length of
 * every rule is an exact-match key, so a policy of a million prefixes is
 * built by one batch of hash inserts instead of a trie walk per insert,
 * and a source is classified by one lookup per prefix length the policy
 * holds in its family, longest first (the lengths are in struct
 * xrl_policy_meta). Kinds of keys:
 *   family 4 or 6, prefixlen 1..32 or 1..128: a rule (value: xrl_rule)
 *   family 0, prefixlen 0: the default rule
 *   XRL_KEY_META: the policy's generation and lengths
 *   XRL_KEY_SPLIT | family, prefixlen = the source key length: the key
 *     subnet holds a rule longer than the key (see struct xrl_bucket_key)
 *   XRL_KEY_LEVEL, prefixlen = a level, addr[0] = a rule id: that level
 *     of that rule (struct xrl_rule_levels)
 * addr is masked to prefixlen.
 */
#define XRL_KEY_META		0x80
#define XRL_KEY_SPLIT		0x40
#define XRL_KEY_LEVEL		0x20	/* prefixlen: level; addr[0]: rule id */

struct xrl_rule_key {
	__u8 family;	/* enum xrl_family, or XRL_KEY_* */
	__u8 prefixlen;	/* of the family's address: IPv4 0..32 */
	__u16 reserved;
	__u32 addr[4];	/* network order, the parser's layout */
};

/*
 * The value under XRL_KEY_META (the size of a rule, as every value of the
 * classifier): the generation, and per family a bitmap of the prefix
 * lengths the policy holds (bit n: some rule is a /n; the default rule
 * is not counted), plus whether a rule is longer than the family's source
 * key, in which case the slow path looks for split subnets.
 */
struct xrl_policy_meta {
	__u32 gen;
	__u32 long_rules;	/* bit 0: IPv4, bit 1: IPv6; XRL_META_L4 */
	__u64 v4_lengths;	/* bits 1..32 */
	__u64 v6_lengths[3];	/* bits 1..128 (bit n in word n / 64) */
	__u64 reserved[3];
};

/* In long_rules: some rule has an L4 match (the program reads L4). */
#define XRL_META_L4		0x100

/* A value of the classifier: a rule, or the meta under XRL_KEY_META
 * (read and written at the rule's size, whatever the meta's). */
union xrl_classifier_value {
	struct xrl_rule rule;
	struct xrl_policy_meta meta;
};

/*
 * Key of a source's bucket: the source masked to the configured key
 * length, in its family. One bucket per source key, which remembers the
 * rule it was classified to and the policy generation of that
 * classification, so the hot path looks the bucket up first and walks
 * no rules. When the key subnet holds a rule longer than the key (a /128
 * rule under /64 keys), sources of one key may fall under different
 * rules: those keys are "split" and carry the rule id, as buckets did
 * before, and are found after classification.
 *
 * tag: bits 0..7 family, bits 8..28 rule id + 1 of a split key, else 0;
 * bits 29..31 0, or for the bucket of a rule's level (struct
 * xrl_rule_levels) the level + 1, with the rule id + 1 in bits 8..28.
 */
#define XRL_TAG_SPLIT_SHIFT	8
#define XRL_TAG_LEVEL_SHIFT	29
#define XRL_TAG_SPLIT_MASK	((1U << (XRL_TAG_LEVEL_SHIFT - XRL_TAG_SPLIT_SHIFT)) - 1)
#define XRL_BUCKET_TAG(family, split_id)				\
	((__u32)(family) | (__u32)(split_id) << XRL_TAG_SPLIT_SHIFT)
#define XRL_LEVEL_TAG(family, rule_id, level)				\
	(XRL_BUCKET_TAG(family, (rule_id) + 1) |			\
	 (__u32)((level) + 1) << XRL_TAG_LEVEL_SHIFT)
/* The rule id + 1 a tag names (split or level), 0 for none; level + 1. */
#define XRL_TAG_SPLIT_ID(tag)	((tag) >> XRL_TAG_SPLIT_SHIFT & XRL_TAG_SPLIT_MASK)
#define XRL_TAG_LEVEL(tag)	((tag) >> XRL_TAG_LEVEL_SHIFT)

struct xrl_bucket_key {
	__u8 addr[16];	/* source, masked to the configured prefix */
	__u32 tag;	/* XRL_BUCKET_TAG(family, split rule id + 1 or 0) */
};

/*
 * Bucket state of one (source, rule). tat[] holds, per limit kind, the
 * GCRA theoretical arrival time packed with the shift it is counted in:
 *
 *   bits 63..6   time in units of 2^-shift ns, modulo 2^58
 *   bits 5..0    shift + 32 (XRL_TAT_SHIFT_BIAS)
 *
 * Only differences to "now" are ever used (sign-extended from 58 bits),
 * so the clock may wrap; packing the shift in the same word lets a policy
 * change rescale the state with the one compare-and-swap that updates it.
 * The time sits on top so that an atomic add of (cost << 6), which CPUs
 * racing on one bucket use (bpf/gcra.h), wraps out of bit 63 and never
 * carries into the shift.
 * last_seen_ns tells a time so old that it wrapped from a recent one: a
 * bucket idle for 2^56 units or more whose word reads as owing more than
 * the tolerance is treated as full (bpf/gcra.h, limit_debt()).
 */
#define XRL_TAT_TIME_BITS	58
#define XRL_TAT_SHIFT_BIAS	32
#define XRL_TAT_SHIFT_BITS	(64 - XRL_TAT_TIME_BITS)
#define XRL_TAT_SHIFT(word)	((__s32)((word) & ((1ULL << XRL_TAT_SHIFT_BITS) - 1)) \
				 - XRL_TAT_SHIFT_BIAS)
#define XRL_TAT_TIME(word)	((word) >> XRL_TAT_SHIFT_BITS)
/* How far the word's time lies ahead of @now_units (in its shift's
 * units), sign-extended from 58 bits: negative when behind. */
#define XRL_TAT_AHEAD(word, now_units) \
	((__s64)((word) - ((__u64)(now_units) << XRL_TAT_SHIFT_BITS)) >> \
	 XRL_TAT_SHIFT_BITS)

/*
 * Only what the hot path needs (32 bytes: a tracked source costs the
 * LRU element, its key and this, 120 bytes in all): what a source that
 * was refused needs besides (counts, the event mark, the ban) is in its
 * offender record (struct xrl_offender), which clean sources never have.
 * The top bits of rule_id are flags, so that the binding word tells,
 * with no lookup, whether there is a record to look at.
 */
struct xrl_bucket {
	__u64 tat[XRL_LIMIT_KINDS];
	__u64 last_seen_ns;
	__u32 rule_id;	/* the rule the source was classified to, and flags */
	__u32 gen;	/* the policy generation of that classification */
};

/* Flags in xrl_bucket.rule_id, kept while the binding stays that of one
 * rule, cleared with the state when it changes rule (bpf rebind()). */
#define XRL_BUCKET_PASSED	(1U << 30)	/* admitted a packet since bound */
#define XRL_BUCKET_OFFENDER	(1U << 31)	/* refused one: has a record */
#define XRL_BUCKET_FLAGS	(XRL_BUCKET_PASSED | XRL_BUCKET_OFFENDER)
#define XRL_BUCKET_RULE(rule_id) ((rule_id) & ~XRL_BUCKET_FLAGS)

/*
 * Offender record of a source (xrl_offenders, an LRU hash keyed as
 * xrl_buckets), made at the source's first refusal under its rule and
 * touched only while its bucket says it has one (XRL_BUCKET_OFFENDER).
 * One record per XRL_OFFENDER_SHARE sources (--max-sources), at least
 * XRL_OFFENDER_MIN (or as many as the sources, if fewer); the loader's
 * xrl_offender_entries(). When the LRU evicts a record, its counts and
 * event mark are forgotten, never a limit or a ban: the bucket still
 * limits, and a ban in force is read back from the source's ban record
 * (struct xrl_ban) at the next packet; the next refusal makes a new
 * record, counting from there.
 */
#define XRL_OFFENDER_SHARE	16
#define XRL_OFFENDER_MIN	1024
#define XRL_OFFENDER_SOURCES	(XRL_DEFAULT_SOURCES / XRL_OFFENDER_SHARE)

struct xrl_offender {
	__u64 passed;	/* packets admitted since the first refusal */
	__u64 dropped;	/* packets refused (monitor: would have been) */
	/*
	 * Limit events (struct xrl_limit_event), touched on drops only:
	 * the mark the source's observed rate is measured from, made when
	 * the record is and moved at each event, with the passed and
	 * dropped counts of that moment. Bit 0 of mark_ns (XRL_MARK_EVENT)
	 * says the mark is an event's, whose quiet period runs from it; a
	 * mark made with the record has it clear, and bit 1 set
	 * (XRL_MARK_PASSED) when its bucket had admitted a packet.
	 */
	__u64 mark_ns;
	__u64 mark_passed;
	__u64 mark_dropped;
	/* Bans (bpf/bans.h): the source is dropped unjudged while now is
	 * before this, if its rule still bans; 0 while never banned. */
	__u64 ban_until_ns;
	__u32 rule_id;	/* the rule whose refusals these are */
	__u32 gen;	/* the generation the record was made in */
};

/*
 * A CPU's tally of one hot offender's refusals (xrl_tally, a per-CPU
 * array of one): the refusals of the source it names, under the bucket
 * binding it names, counted here for up to XRL_TALLY_NS after one that
 * took the whole path (offender record, limit events, ban offence),
 * instead of each taking it. A flood of one source then costs a refusal
 * no shared write and no lookup beside its bucket's. What the tally
 * holds belongs to the record it names (rule_id, gen: the record's):
 * added to it when the tally moves to another source or its time is up,
 * and added by readers (user/datapath/bucket.c) meanwhile, so counts
 * read are exact. What it delays, by at most XRL_TALLY_NS: a limit
 * event after a pass on another CPU (a pass on this CPU ends the tally),
 * and the start of a ban (a ban's `after` is counted from offences
 * seen at least that often). Up to 2^16 refusals, then it is added.
 */
struct xrl_refusal_tally {
	struct xrl_bucket_key key;	/* the source, as its bucket's */
	__u32 rule_id;			/* the record's */
	__u64 binding;			/* its bucket's word, flags clear */
	__u64 dropped;			/* refusals not yet in the record */
	__u64 until_ns;			/* 0: no tally */
	__u32 gen;			/* the record's */
	__u32 reserved;
};

#define XRL_TALLY_NS		1000000ULL	/* 1 ms */
#define XRL_TALLY_MAX		65536

#define XRL_MARK_EVENT		1ULL
/* Bit 1 of a record's first mark: its bucket had admitted a packet, so
 * the refusal that made the record is reported (time loses 2 ns). */
#define XRL_MARK_PASSED		2ULL
#define XRL_MARK_BITS		(XRL_MARK_EVENT | XRL_MARK_PASSED)

/*
 * Runtime settings, part of the policy head (struct xrl_policy_head).
 * Source keys are the source address ANDed with a mask, so the program
 * needs no loop over a prefix length.
 */
enum xrl_malformed_verdict {
	XRL_MALFORMED_PASS = 0,
	XRL_MALFORMED_DROP,
};

/* Frames with more VLAN tags than the program follows (bpf/parse.h);
 * zero, the safe value, is the default. */
enum xrl_vlan_overflow_verdict {
	XRL_VLAN_OVERFLOW_DROP = 0,
	XRL_VLAN_OVERFLOW_PASS,
};

/* IPv6 sources in ::ffff:0:0/96 or ::/96 (other than :: and ::1):
 * dropped (the default), or judged as the IPv6 sources they are. */
enum xrl_ipv4_mapped_verdict {
	XRL_IPV4_MAPPED_DROP = 0,
	XRL_IPV4_MAPPED_IPV6,
};

/*
 * A later fragment at a prefix with an L4 rule of its protocol whose
 * first fragment the program has not judged (struct xrl_frag): dropped
 * (the default), or judged by the rules without an L4 match, as the
 * source's other traffic (the permissive choice, made on purpose).
 */
enum xrl_unjudged_fragments_verdict {
	XRL_UNJUDGED_FRAGMENTS_DROP = 0,
	XRL_UNJUDGED_FRAGMENTS_PLAIN,
};

/* A packet with more IPv6 extension headers than XRL_L4_EXT_MAX at a
 * prefix with an L4 rule: dropped (the default), or judged by the rules
 * without an L4 match. */
enum xrl_header_overflow_verdict {
	XRL_HEADER_OVERFLOW_DROP = 0,
	XRL_HEADER_OVERFLOW_PLAIN,
};

/*
 * Blocklist feeds (policy key blocklists:; bpf/blocklists.h): each list
 * one LPM trie of struct xrl_lpm_key (IPv4-mapped, as the rules'
 * prefixes: one trie holds both families), not preallocated and sized
 * by userspace to its list, at most XRL_BLOCKLIST_ENTRIES entries. The
 * tries are inner maps of xrl_blocklists, at XRL_BLOCKLISTS_MAX slots
 * per rules slot of the policy head (index rules_slot *
 * XRL_BLOCKLISTS_MAX + list): a policy's lists are written in the slot
 * its head will name and swapped in with it; one list alone is swapped
 * by one update of its slot in force, so a packet reads either the old
 * trie or the new one, whole. Looked at after the manual bans and before
 * the rules, only while the settings count lists. Hits are counted per
 * CPU in xrl_block_hits at the same index.
 */
#define XRL_BLOCKLISTS_MAX	8
#define XRL_BLOCKLIST_ENTRIES	1048576
#define XRL_BLOCKLIST_SLOTS	(XRL_POLICY_SLOTS * XRL_BLOCKLISTS_MAX)

enum xrl_blocklist_action {
	XRL_BLOCKLIST_DENY = 0,		/* dropped, counted as blocklisted */
	XRL_BLOCKLIST_MONITOR,		/* counted as a hit, then judged */
	XRL_BLOCKLIST_ACTIONS,
};

/* The value of a trie's entry: nothing the program reads. */
struct xrl_blocklist_value {
	__u32 listed;		/* 1 */
};

struct xrl_settings {
	__u32 v4_mask;		/* network order, applied to the IPv4 address */
	__u32 v6_mask[4];	/* network order, applied to the IPv6 address */
	__u32 malformed_verdict;	/* enum xrl_malformed_verdict */
	__u32 v4_prefix;	/* what the masks were made from, for display */
	__u32 v6_prefix;
	__u32 unknown_verdict;	/* enum xrl_unknown_verdict */
	__u32 new_sources_set;	/* 1: budget from the policy, 0: derived */
	/* One CPU's share of the new-source budget; interval 0: no budget. */
	struct xrl_limit new_sources;
	/* The whole budget, as configured or derived, for display. */
	__u64 new_sources_pps;
	__u64 new_sources_burst;
	/* Limit events: one CPU's share of the global cap (interval 0:
	 * no events), and the quiet period of one source. */
	struct xrl_limit events;
	__u64 event_quiet_ns;
	__u64 events_per_second;	/* the whole cap, for display */
	__u32 vlan_overflow_verdict;	/* enum xrl_vlan_overflow_verdict */
	__u32 ipv4_mapped_verdict;	/* enum xrl_ipv4_mapped_verdict */
	/* 1: xrl_manual_bans may hold bans, looked at before any rule. */
	__u32 manual_bans;
	__u32 unjudged_fragments_verdict; /* enum xrl_unjudged_fragments_verdict */
	__u32 header_overflow_verdict;	/* enum xrl_header_overflow_verdict */
	/* Blocklists in force (struct xrl_blocklist_value): how many, 0:
	 * none looked at, and each one's enum xrl_blocklist_action. */
	__u32 blocklists;
	__u8 blocklist_action[XRL_BLOCKLISTS_MAX];
	__u32 reserved;
};

/*
 * How a policy is installed: one map update (user/datapath/policy_map.c,
 * xrl_policy_apply()). Everything a verdict depends on belongs to one
 * policy, and a packet is judged by one policy whole:
 *
 *   xrl_settings    ARRAY_OF_MAPS, 1 slot: the policy head in force, an
 *                   inner ARRAY of one struct xrl_policy_head, created
 *                   frozen for each policy (read-only for the program too)
 *   xrl_policy      ARRAY_OF_MAPS, XRL_POLICY_SLOTS slots: classifiers
 *   xrl_rule_table  ARRAY_OF_MAPS, XRL_POLICY_SLOTS slots: rule tables;
 *                   the head names the slot of its policy's rules in both
 *
 * The program looks the head up once per packet and takes everything
 * from it: settings, and the rules slot. A new policy's rules go into
 * the slot the head in force does not name, then the new head is swapped
 * in: that one update is the switch. An update of a map of maps returns
 * only after every program that could have seen the old inner map has
 * finished (the kernel waits an RCU grace period), so when the next
 * policy is written into the other slot, no packet still reads it. A
 * daemon killed at any instant leaves the old head (naming untouched
 * rules) or the new one (naming complete rules) in force.
 *
 * Every head has a generation of its own, one more than the one in
 * force, and so does the meta of the classifier it names. The rules of
 * a slot carry the generation of the policy's shape (struct xrl_rule,
 * gen): the head's when the swap reshaped the policy, else the one the
 * rules in force carry. A bucket remembers the rule id and generation
 * it was classified under; the hot path judges it without classifying
 * only when the table in the head's slot holds that id with that
 * generation, so a bucket never outlives the shape that bound it. A CPU's
 * copy of a rule or its levels (bpf/rule_cache.h, bpf/levels.h) also
 * names the head generation it was copied under, and is made again
 * under the next head. A generation staged and never put in force (a
 * daemon killed before the swap) bound no bucket and no copy, so staging
 * it again is harmless.
 *
 * A swap that does not reshape the policy, after one that did not
 * either, writes into the maps the slot not in force already holds
 * (those of the policy before the one in force) only the rules either
 * swap changed, and the meta (user/datapath/rulemaps.c): no packet reads
 * that slot. Anything else a verdict comes to depend on goes into struct
 * xrl_settings, or into a map of maps of XRL_POLICY_SLOTS slots indexed
 * by rules_slot, never into a map a packet may be reading.
 */
#define XRL_POLICY_SLOTS	2

#define XRL_BLOCKLIST_NAME_LEN	32	/* with the NUL */

struct xrl_policy_head {
	struct xrl_settings settings;
	__u32 rules_slot;	/* < XRL_POLICY_SLOTS: index into xrl_policy */
	__u32 gen;	/* of its rules: every rule of the slot carries it */
	/* The names of its blocklists (settings.blocklists of them), for
	 * status and /metrics: the program never reads them. */
	char blocklist_names[XRL_BLOCKLISTS_MAX][XRL_BLOCKLIST_NAME_LEN];
};

/*
 * Limit events (ring buffer xrl_events): the moment a source starts
 * being limited, that is a drop with at least one pass since the
 * source's last event, at most one per source per quiet period, and all
 * sources together at most the global cap per second, kept by a GCRA per
 * CPU (no shared cache line) each holding 1/ncpus of it, so a spoofed
 * flood cannot flood the ring. Events over the cap are counted
 * (suppressed), as are those the full ring refused (lost): never silent.
 *
 * The observed rate is the packets of the source since its mark (the
 * insert, or its previous event) over the time since: packets * 1e9 /
 * window_ns, divided in userspace.
 */
#define XRL_EVENTS_RING_BYTES	(256 * 1024)
#define XRL_EVENT_QUIET_NS	(10ULL * 1000000000ULL)	/* default */
#define XRL_EVENTS_PER_SECOND	100			/* default */

struct xrl_limit_event {
	__u8 addr[16];		/* the source as keyed (masked) */
	__u32 rule_id;
	__u32 action;		/* enum xrl_action: limit or monitor */
	__u64 time_ns;		/* the program's clock (CLOCK_MONOTONIC) */
	__u64 packets;		/* since the mark */
	__u64 window_ns;	/* since the mark */
	__u64 ban_ns;		/* 0, or: a ban of this long started now */
};

/* In a ban event's action: the ban of the rule's escalate prefix of
 * addr (bpf/escalate.h), its packets the sources whose bans made it. */
#define XRL_EVENT_ESCALATED	(1U << 31)

enum xrl_event_outcome {
	XRL_EVENT_SENT = 0,	/* written to the ring */
	XRL_EVENT_SUPPRESSED,	/* over the global cap */
	XRL_EVENT_LOST,		/* the ring was full */
	XRL_EVENT_OUTCOMES,
};

/* Per CPU (xrl_event_state, one entry): the cap's GCRA and counters. */
struct xrl_event_state {
	__u64 tat;
	__u64 last_seen_ns;
	__u64 count[XRL_EVENT_OUTCOMES];
};

/*
 * Capture (`xdp-ratelimit capture`, bpf/capture.h): sampled copies of
 * judged frames, with the rule and the verdict that judged them, in a
 * ring buffer of their own (xrl_capture_rb) that the capturing CLI reads
 * straight from the pins.
 *
 * xrl_capture (an array of one) says whether a capture runs and what it
 * takes: the one word a packet reads when none runs is @armed. A capture
 * takes a frame whose verdict is in @verdicts (1 << enum xrl_verdict),
 * whose XDP action is in @actions (1 << XDP_PASS, 1 << XDP_DROP), and,
 * when @rule is set, judged by that rule (its id + 1). Its first
 * @snaplen bytes are copied (1 to XRL_CAPTURE_SNAP_MAX). The program
 * disarms a capture whose @until_ns (its clock, CLOCK_MONOTONIC) has
 * passed, so a capture whose CLI died without clearing it stops by
 * itself; the CLI moves it forward while it runs.
 *
 * Sampling is bounded by a GCRA per CPU (@budget, 1/ncpus of
 * XRL_CAPTURE_PER_SECOND with 1/ncpus of XRL_CAPTURE_BURST), as limit
 * events are; frames over it are counted (sampled out), as are those a
 * full ring refused (lost).
 */
#define XRL_CAPTURE_SNAP_MAX	256	/* bytes of a frame a record holds */
#define XRL_CAPTURE_RING_BYTES	(1024 * 1024)
#define XRL_CAPTURE_PER_SECOND	10000	/* frames, all CPUs together */
#define XRL_CAPTURE_BURST	1000
#define XRL_CAPTURE_LEASE_NS	(5ULL * 1000000000ULL)	/* until_ns ahead */
#define XRL_CAPTURE_SKIP_MAX	255
#define XRL_CAPTURE_LEASE_EVERY	4096	/* a power of 2 */

struct xrl_capture_config {
	__u32 armed;		/* 0: no capture */
	__u32 rule;		/* rule id + 1; 0: every rule, and none */
	__u32 verdicts;		/* 1 << enum xrl_verdict */
	__u32 actions;		/* 1 << XDP action */
	__u32 snaplen;		/* 1 to XRL_CAPTURE_SNAP_MAX */
	__u32 owner;		/* the pid of the capturing CLI */
	__u64 until_ns;		/* the program's clock: disarmed after it */
	struct xrl_limit budget;	/* this CPU's share, in frames */
};

/* One captured frame in xrl_capture_rb. */
struct xrl_capture_record {
	__u64 time_ns;		/* the program's clock (CLOCK_MONOTONIC) */
	__u32 rule;		/* the rule id + 1 that judged it; 0: none */
	__u32 frame_len;	/* the frame's length */
	__u16 cap_len;		/* bytes of it in @data */
	__u8 verdict;		/* enum xrl_verdict */
	__u8 action;		/* XDP_PASS or XDP_DROP */
	__u32 reserved;
	__u8 data[XRL_CAPTURE_SNAP_MAX];
};

/* Per CPU (xrl_capture_st, one entry): the budget's GCRA and counts, as
 * the event cap's (count[] by enum xrl_capture_outcome), and the rule
 * and verdict noted for the frame being judged (+ 1; 0: none yet). */
enum xrl_capture_outcome {
	XRL_CAPTURE_TAKEN = XRL_EVENT_SENT,	/* written to the ring */
	XRL_CAPTURE_SAMPLED_OUT = XRL_EVENT_SUPPRESSED,	/* over the budget */
	XRL_CAPTURE_LOST = XRL_EVENT_LOST,	/* the ring was full */
	XRL_CAPTURE_OUTCOMES = XRL_EVENT_OUTCOMES,
};

struct xrl_capture_state {
	struct xrl_event_state budget;
	__u32 noted_rule;
	__u32 noted_verdict;
	/* After a refusal the budget is not asked (nor the clock read)
	 * for @skip frames: 1, 3, 7... up to XRL_CAPTURE_SKIP_MAX while it
	 * keeps refusing (@skip_len), none once it admits again. */
	__u32 skip;
	__u32 skip_len;
	/* Frames the capture does not take, counted to read the clock for
	 * the lease every XRL_CAPTURE_LEASE_EVERY of them. */
	__u64 untaken;
};

/*
 * Ban record of a source (xrl_bans, an LRU hash keyed as xrl_buckets),
 * made at the first drop under a rule with a ban and read only on drops
 * of such rules and when such a source gets a bucket or an offender
 * record (bpf/bans.h). The ban itself is enforced from the offender
 * record (struct xrl_offender, ban_until_ns), which a banned source's
 * packets look up anyway; this record holds it too (until_ns), for a
 * source whose bucket or offender record was evicted.
 *
 * An offence is a run of drops none more than XRL_BAN_RUN_GAP_NS after
 * the one before; it bans once it has lasted the rule's after_ns. A ban
 * that starts before max_ns have passed since the previous one ended is
 * a repeat: twice the previous one, at most max_ns. An entry the LRU
 * evicts (XRL_BAN_SOURCES more recently used ones) is forgotten: the
 * source's next ban is a first one again.
 */
#define XRL_BAN_SOURCES		65536
#define XRL_BAN_RUN_GAP_NS	1000000000ULL

struct xrl_ban {
	__u64 until_ns;		/* banned while now < until_ns, 0: never */
	__u64 duration_ns;	/* of the last ban, 0: none yet */
	__u64 over_since_ns;	/* first drop of the current offence */
	__u64 last_drop_ns;	/* latest drop of it, 0: no offence open */
	__u32 rule_id;		/* the rule whose offences these are */
	__u32 bans;		/* bans started */
};

/*
 * Manual bans (xdp-ratelimit ban ADDR[/LEN] [--for D]; the daemon's
 * control_bans.c): an LPM trie of banned prefixes, keyed by family then
 * address (IPv4 in the first four bytes), so that one lookup says
 * whether any ban covers a source and families never mix. Looked at
 * only while the head's settings say manual_bans, before the bucket, so
 * a ban wins over every rule, allow rules of longer prefixes too.
 *
 * Why a map of its own rather than rules: a ban must beat the longest
 * prefix match that rules are judged by, and be added or lifted without
 * rebuilding the rules or touching a bucket; the head only says whether
 * bans exist, so a policy without them pays one predictable branch.
 */
#define XRL_MANUAL_BANS		16384

#define XRL_MANUAL_BAN_HDR_BITS	32	/* family and padding, matched whole */

struct xrl_manual_ban_key {
	__u32 prefixlen;	/* XRL_MANUAL_BAN_HDR_BITS + address bits */
	__u8 family;		/* enum xrl_family */
	__u8 zero[3];
	__u8 addr[16];		/* IPv4: the first 4 bytes */
};

struct xrl_manual_ban {
	__u64 until_ns;		/* program's clock; 0: until lifted */
	__u64 packets;		/* dropped by this ban */
};

/*
 * Fragments at prefixes with L4 rules (bpf/fragments.h; docs/POLICY.md
 * "Fragments and header chains"). Only a first fragment carries the L4
 * header, so its verdict is kept for the flow's later ones, keyed as
 * Linux reassembles (source, destination, identification; IPv4 also the
 * protocol) in an LRU hash of XRL_FRAG_FLOWS flows: a later fragment of
 * a flow whose first was dropped is dropped, of one that passed is
 * judged by the same rule and bucket at no packet cost (its bytes still
 * count), and of one the map does not hold gets the settings'
 * unjudged_fragments verdict. A flow's fragments carry at most
 * XRL_FRAG_BYTES_MAX bytes after their IP headers (the largest IP
 * packet); those past it are unjudged, so a first fragment passed once
 * cannot carry an endless stream of free ones.
 */
#define XRL_FRAG_FLOWS		8192
#define XRL_FRAG_BYTES_MAX	65535

struct xrl_frag_key {
	__u32 src[4];		/* the parser's layout (IPv4: last word) */
	__u32 dst[4];
	__u32 id;		/* IPv4: 16 bits */
	__u8 family;		/* enum xrl_family */
	__u8 proto;		/* IPv4's protocol field; IPv6: 0 */
	__u16 zero;
};

struct xrl_frag {
	__u32 rule_id;		/* the rule that judged the first fragment */
	__u32 gen;		/* of the policy head it was judged under */
	__u32 verdict;		/* XDP_PASS or XDP_DROP */
	__u32 bytes;		/* the flow's bytes so far, first's included */
};

/*
 * Escalated bans (xrl_escalations, an LRU hash; bpf/escalate.h): one
 * record per (rule, prefix) that a source of was banned by a rule with
 * escalate, holding the latest ban start of each of the last distinct
 * sources (a source banned again refreshes its own slot, so it counts
 * once: one source alone never escalates) and the prefix's ban. A rule
 * with escalate looks the source's prefix up once per packet it judges.
 * An entry the LRU evicts (XRL_ESCALATE_PREFIXES more recently banned
 * prefixes) is forgotten, its ban too.
 */
#define XRL_ESCALATE_PREFIXES	4096

struct xrl_escalation_key {
	__u8 addr[16];		/* the source masked to the prefix, as keyed */
	__u32 rule_id;
	__u8 family;		/* enum xrl_family */
	__u8 prefixlen;		/* within the family */
	__u16 zero;
};

struct xrl_escalation_mark {
	__u8 addr[16];		/* a banned source, as keyed */
	__u64 banned_ns;	/* when its latest ban started, 0: free */
};

struct xrl_escalation {
	__u64 until_ns;		/* the prefix is banned while now < until */
	__u64 duration_ns;	/* of the last escalated ban, 0: none yet */
	__u32 escalations;	/* escalated bans started */
	__u32 zero;
	struct xrl_escalation_mark marks[XRL_ESCALATE_AFTER_MAX];
};

/* Per CPU (xrl_ban_stats, one entry). */
struct xrl_ban_counters {
	__u64 started;		/* bans started */
	__u64 repeats;		/* of which repeat offences (doubled) */
	__u64 escalated;	/* escalated (prefix) bans started */
};

_Static_assert(sizeof(struct xrl_counter) == 16, "xrl_counter layout");
_Static_assert(sizeof(struct xrl_rule_counters) == 48, "rule counters layout");
_Static_assert(sizeof(struct xrl_limit) == 24, "xrl_limit layout");
_Static_assert(sizeof(struct xrl_rule_window) == 24, "rule window layout");
_Static_assert(sizeof(struct xrl_window_state) == 144, "window state layout");
_Static_assert(XRL_WINDOW_LIMIT_MAX + 4096 < (1ULL << XRL_WINDOW_COUNT_BITS),
	       "a window's count never carries into its epoch");
_Static_assert(sizeof(struct xrl_ban) == 40, "ban layout");
_Static_assert(sizeof(struct xrl_refusal_tally) == 56, "tally layout");
_Static_assert(sizeof(struct xrl_ban_counters) == 24, "ban counters layout");
_Static_assert(sizeof(struct xrl_rule_escalate) == 24, "escalate layout");
_Static_assert(sizeof(struct xrl_escalation_key) == 24, "escalation key");
_Static_assert(sizeof(struct xrl_escalation) == 24 + 24 * XRL_ESCALATE_AFTER_MAX,
	       "escalation layout");
_Static_assert(sizeof(struct xrl_rule_match) == 16, "rule match layout");
_Static_assert(sizeof(struct xrl_rule) == 160, "xrl_rule layout");
_Static_assert(XRL_RULE_IDS <= XRL_TAG_SPLIT_MASK,
	       "a rule id + 1 fits a bucket tag");
_Static_assert(sizeof(struct xrl_agg_share) == 96, "agg share layout");
_Static_assert(sizeof(struct xrl_agg_state) == 40, "agg state layout");
_Static_assert(sizeof(struct xrl_lpm_key) == 20, "xrl_lpm_key layout");
_Static_assert(sizeof(struct xrl_bucket_key) == 20, "bucket key layout");
_Static_assert(sizeof(struct xrl_bucket) == 32, "xrl_bucket layout");
_Static_assert(sizeof(struct xrl_offender) == 56, "xrl_offender layout");
_Static_assert(XRL_MAX_RULES <= XRL_BUCKET_PASSED, "rule ids below the bucket flags");
_Static_assert(sizeof(struct xrl_rule_key) == 20, "rule key layout");
_Static_assert(sizeof(struct xrl_policy_meta) <= sizeof(struct xrl_rule),
	       "the meta entry is a classifier value");
_Static_assert(sizeof(struct xrl_settings) == 160, "xrl_settings layout");
_Static_assert(sizeof(struct xrl_policy_head) == 424, "policy head layout");
_Static_assert(sizeof(struct xrl_frag_key) == 40, "fragment key layout");
_Static_assert(sizeof(struct xrl_frag) == 16, "fragment flow layout");
_Static_assert(sizeof(struct xrl_manual_ban_key) == 24, "manual ban key");
_Static_assert(sizeof(struct xrl_manual_ban) == 16, "manual ban layout");
_Static_assert(sizeof(struct xrl_limit_event) == 56, "limit event layout");
_Static_assert(sizeof(struct xrl_event_state) == 40, "event state layout");
_Static_assert(sizeof(struct xrl_table_counters) == 40, "table counters layout");
_Static_assert(sizeof(struct xrl_new_source_budget) == 16, "budget layout");

_Static_assert(sizeof(struct xrl_capture_config) == 56, "capture config layout");
_Static_assert(sizeof(struct xrl_capture_record) ==
	       24 + XRL_CAPTURE_SNAP_MAX, "capture record layout");
_Static_assert(sizeof(struct xrl_capture_state) == 64, "capture state layout");

#endif /* XRL_H */
