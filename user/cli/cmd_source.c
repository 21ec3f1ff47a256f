// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-ratelimit explain ADDR | reset ADDR[/LEN]: one source as the
 * program judges it (a ban by hand, the blocklists holding it, its rule,
 * its bucket key and how full its bucket is, its rule's ban, its levels,
 * the next packet's verdict), and forgetting the buckets of a source or
 * a prefix. From the pins; the keys and lookups are the data path's
 * (user/datapath/bucket.c, blocklists.c).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "bans.h"
#include "blocklists.h"
#include "bucket.h"
#include "cidr.h"
#include "clock.h"
#include "counters.h"
#include "fields.h"
#include "loader.h"
#include "rulemaps.h"
#include "cmd.h"
#include "datapath.h"
#include "env.h"
#include "match.h"
#include "policy.h"
#include "units.h"

/* "pps 9.99756/s burst 5", "bps 8e+06/s burst_bytes 1000" */
static void describe_limit(const struct xrl_limit *limit, bool bytes,
			   char *buf, size_t len)
{
	double per_s = 1e9 * (limit->shift >= 0 ? (double)(1ULL << limit->shift) :
			      1.0 / (double)(1ULL << -limit->shift)) /
		       limit->interval;

	snprintf(buf, len, "%s %g/s %s %llu", bytes ? "bps" : "pps",
		 bytes ? per_s * 8 : per_s, bytes ? "burst_bytes" : "burst",
		 (unsigned long long)(limit->tolerance / limit->interval));
}

static void print_rule(const char *addr, const struct xrl_rule *rule,
		       const struct xrl_lpm_key *prefix)
{
	char cidr[64], limit[96], match[96];
	int kind;

	xrl_cidr_format(prefix, cidr, sizeof(cidr));
	xrl_match_format(&rule->match, match, sizeof(match));
	printf("%s: rule %u (%s%s%s%s), %s", addr, rule->id,
	       prefix->prefixlen ? cidr : "default",
	       prefix->prefixlen ? "" : ": no other rule holds it",
	       match[0] ? " " : "", match, xrl_action_name(rule->action));
	if (rule->window.limit) {
		/* Its packet limit is only the fallback's pace. */
		xrl_duration_ns_format(rule->window.window_ns, limit,
				       sizeof(limit));
		printf(", sliding_window limit %u window %s",
		       rule->window.limit, limit);
	}
	for (kind = 0; kind < XRL_LIMIT_KINDS && !rule->window.limit; kind++) {
		if (!rule->limit[kind].interval)
			continue;
		describe_limit(&rule->limit[kind], kind == XRL_LIMIT_BYTES,
			       limit, sizeof(limit));
		printf(", %s", limit);
	}
	if (rule->scope == XRL_SCOPE_AGGREGATE)
		printf(", scope aggregate");
	printf("\n");
}

/*
 * What explain says of the source's next packet, as the program would
 * judge it now: passed or dropped, and the verdict it is counted as.
 * Unknown when it depends on what explain cannot see (another CPU's
 * share of an aggregate, a sliding window's count, a bucket of an older
 * policy's units): then no verdict line.
 */
struct next_packet {
	bool known;
	bool passes;
	enum xrl_verdict counted;
};

static void judged(struct next_packet *next, bool passes,
		   enum xrl_verdict counted)
{
	next->known = true;
	next->passes = passes;
	next->counted = counted;
}

/* The smallest frame a byte limit is charged (a 64-byte frame). */
#define MIN_FRAME_BYTES	64

/*
 * The tokens a bucket holds of each limit of @rule. Returns 1 when the
 * next (minimal) packet fits all of them, 0 when one refuses it, -1 when
 * a limit's word is in units of an older policy.
 */
static int print_tokens(const struct xrl_rule *rule,
			const struct xrl_bucket *bucket, __u64 now)
{
	static const char *const kinds[] = {
		[XRL_LIMIT_PACKETS] = "packets", [XRL_LIMIT_BYTES] = "bytes",
	};
	static const double cost[] = {
		[XRL_LIMIT_PACKETS] = 1, [XRL_LIMIT_BYTES] = MIN_FRAME_BYTES,
	};
	struct xrl_bucket_level level;
	int kind, fits = 1;

	/* A window's count is in xrl_windows; its bucket holds no tokens. */
	for (kind = 0; kind < XRL_LIMIT_KINDS && !rule->window.limit; kind++) {
		if (!rule->limit[kind].interval)
			continue;
		xrl_bucket_level(&rule->limit[kind], bucket->tat[kind], now,
				 &level);
		if (!level.known) {
			printf("  %s: kept from before the last policy "
			       "change; judged anew at its next packet\n",
			       kinds[kind]);
			fits = -1;
			continue;
		}
		printf("  %s: %.1f of %.0f tokens left, full in %.3f s\n",
		       kinds[kind], level.tokens, level.burst,
		       level.full_in_ns / 1e9);
		if (fits == 1 && level.tokens < cost[kind])
			fits = 0;
	}
	return fits;
}

static int print_bucket(const struct xrl_rule *rule,
			const struct xrl_bucket *bucket, __u64 now)
{
	printf("bucket: last seen %.3f s ago\n",
	       now > bucket->last_seen_ns ?
	       (now - bucket->last_seen_ns) / 1e9 : 0.0);
	return print_tokens(rule, bucket, now);
}

/* A level bucket's refusals: its offender record's drops (made at the
 * level's first refusal), 0 while it has none. */
static __u64 level_refused(const struct xrl_datapath *dp,
			   const struct xrl_bucket_key *key,
			   const struct xrl_bucket *bucket)
{
	struct xrl_offender off;

	return xrl_offender_of(dp, key, bucket, &off) ? 0 : off.dropped;
}

/* The source's counts: kept only from its first refusal (include/xrl.h,
 * struct xrl_offender). */
static void print_offender(const struct xrl_datapath *dp,
			   const struct xrl_bucket_key *key,
			   const struct xrl_bucket *bucket)
{
	struct xrl_offender off;
	int ret;

	ret = xrl_offender_of(dp, key, bucket, &off);
	if (ret == -ENOENT && (bucket->rule_id & XRL_BUCKET_OFFENDER)) {
		printf("refused before: its counts were evicted; its bucket "
		       "and any ban still hold\n");
		return;
	}
	if (ret == -ENOENT) {
		printf("never refused under its rule: no counts kept\n");
		return;
	}
	if (ret) {
		printf("its counts: unreadable (%s)\n", strerror(-ret));
		return;
	}
	printf("since its first refusal: %llu passed, %llu dropped\n",
	       (unsigned long long)off.passed,
	       (unsigned long long)off.dropped);
}

/* The buckets of the rule's levels for @addr's family (docs/POLICY.md
 * "Levels"): each one's subnet and tokens. Returns as print_tokens()
 * does, for all of them. */
static int print_levels(const struct xrl_datapath *dp,
			const struct xrl_rule *rule, const __u8 addr[16])
{
	struct xrl_lpm_key subnet, host = { .prefixlen = 128 };
	struct xrl_bucket_key key;
	struct xrl_bucket bucket;
	struct xrl_rule level;
	char cidr[64];
	unsigned i;
	bool ipv4;
	int ret, fits = 1, level_fits;

	memcpy(host.addr, addr, sizeof(host.addr));
	ipv4 = xrl_prefix_family(&host) == XRL_FAMILY_IPV4;
	for (i = 0; i < rule->levels.count && i < XRL_LEVELS_MAX; i++) {
		if (!(rule->levels.ipv6 & (1U << i)) != ipv4)
			continue;	/* the other family's */
		xrl_level_key_make(addr, rule, i, &key);
		memcpy(subnet.addr, key.addr, sizeof(subnet.addr));
		subnet.prefixlen = rule->levels.prefix[i] + (ipv4 ? 96 : 0);
		xrl_cidr_format(&subnet, cidr, sizeof(cidr));
		printf("level %u: %s, shared by the rule's sources in it\n",
		       i + 1, cidr);
		ret = xrl_rules_level(dp, rule->id, i, &level);
		if (ret) {
			printf("  its limits: not in force (%s)\n",
			       strerror(-ret));
			fits = -1;
			continue;
		}
		if (bpf_map_lookup_elem(dp->buckets_fd, &key, &bucket) ||
		    XRL_BUCKET_RULE(bucket.rule_id) != rule->id) {
			printf("  bucket: none yet: full\n");
			continue;
		}
		printf("  bucket: %llu refused by this level\n",
		       (unsigned long long)level_refused(dp, &key, &bucket));
		level_fits = print_tokens(&level, &bucket,
					  xrl_clock_ns(CLOCK_MONOTONIC));
		if (fits == 1 || level_fits == -1)
			fits = level_fits;
	}
	return fits;
}

/*
 * How the source's packets that an L4 rule on its way could take, but
 * whose L4 header cannot be read, are judged (docs/POLICY.md "Fragments
 * and header chains"): not by the rule above.
 */
static void print_unreadable(const struct xrl_settings *settings,
			     const struct xrl_classified *how)
{
	unsigned i;

	if (!how->n_l4_protos)
		return;
	printf("L4 rules on its way (");
	for (i = 0; i < how->n_l4_protos; i++)
		printf("%s%s", i ? ", " : "",
		       xrl_match_proto_name(how->l4_protos[i]));
	printf("): for these protocols\n"
	       "  a later fragment follows its first fragment's verdict "
	       "(charged once);\n"
	       "  one whose first was not seen: %s (unjudged_fragments);\n"
	       "  a first fragment too short for its L4 header: dropped "
	       "(tiny_fragment);\n"
	       "  more than %d IPv6 extension headers: %s "
	       "(header_overflow)\n",
	       settings->unjudged_fragments_verdict ==
	       XRL_UNJUDGED_FRAGMENTS_PLAIN ? "judged by the rule above" :
	       "dropped", XRL_L4_EXT_MAX,
	       settings->header_overflow_verdict == XRL_HEADER_OVERFLOW_PLAIN ?
	       "judged by the rule above" : "dropped");
}

/*
 * An IPv6 source in ::ffff:0:0/96 (IPv4-mapped) or in ::/96 other than
 * :: and ::1 (IPv4-compatible): the data path's is_ipv4_mapped()
 * (bpf/parse.h), tested against it (tests/daemon/test_explain.c). Such a
 * text parses to the IPv4 address's key, which the data path never
 * gives it.
 */
static bool ipv6_text_names_ipv4(const char *text, const __u8 addr[16])
{
	static const __u8 zeros[12];
	__u32 last;

	if (!strchr(text, ':') || memcmp(addr, zeros, 10))
		return false;
	if (addr[10] == 0xff && addr[11] == 0xff)
		return true;
	memcpy(&last, addr + 12, sizeof(last));
	return !addr[10] && !addr[11] && last && last != htonl(1);
}

/* Whether a ban ending at @until holds at @now (bpf/bans.h ban_active()). */
static bool ban_holds(__u64 until, __u64 now)
{
	return until && (__s64)(until - now) > 0;
}

/*
 * A ban by hand covering @addr, looked at before any rule (bpf/bans.h
 * manual_banned()): 1 when it drops the source (said), 0 when none holds,
 * -errno.
 */
static int explain_manual_ban(const struct xrl_datapath *dp,
			      const struct xrl_settings *settings,
			      const char *text, const struct xrl_lpm_key *addr,
			      __u64 now)
{
	struct xrl_manual_ban ban;
	struct xrl_lpm_key prefix;
	char cidr[64];
	int ret;

	if (!settings->manual_bans)
		return 0;
	ret = xrl_manual_ban_of(dp, addr, now, &prefix, &ban);
	if (ret <= 0)
		return ret;
	xrl_cidr_format(&prefix, cidr, sizeof(cidr));
	printf("%s: banned by hand (%s, ", text, cidr);
	if (ban.until_ns)
		printf("%.0f s left", (ban.until_ns - now) / 1e9);
	else
		printf("until unban");
	printf(", %llu dropped): before any rule\n",
	       (unsigned long long)ban.packets);
	return 1;
}

/*
 * The blocklists in force holding @addr, looked at after the bans by hand
 * and before any rule (bpf/blocklists.h blocklist_verdict()): each
 * monitor list counts it and lets the rules judge it, the first deny list
 * drops it. 1 when one drops it, 0 when the rules judge it (each list
 * said), -errno.
 */
static int explain_blocklists(const struct xrl_datapath *dp,
			      const struct xrl_policy_head *head,
			      const char *text, const struct xrl_lpm_key *addr)
{
	struct xrl_blocklist_hold held[XRL_BLOCKLISTS_MAX];
	const struct xrl_blocklist_hold *h;
	char cidr[64];
	int i, n;

	n = xrl_blocklists_holding(dp, head, addr, held);
	for (i = 0; i < n; i++) {
		h = &held[i];
		xrl_cidr_format(&h->prefix, cidr, sizeof(cidr));
		printf("%s: in blocklist %s (%s), %s: %s\n", text, h->name,
		       cidr, xrl_blocklist_action_name(h->action),
		       h->action == XRL_BLOCKLIST_DENY ? "before any rule" :
		       "counted as its hit, then judged by the rules");
		if (h->action == XRL_BLOCKLIST_DENY)
			return 1;
	}
	return n < 0 ? n : 0;
}

/* The ban a rule put on the source (bpf/bans.h): in its bucket, or, when
 * the bucket was evicted, in its record. True when one holds (said). */
static bool explain_rule_ban(const struct xrl_datapath *dp,
			     const struct xrl_rule *rule,
			     const struct xrl_bucket_key *key,
			     const struct xrl_bucket *bucket, __u64 now)
{
	struct xrl_offender off;
	struct xrl_ban record;
	__u64 until = 0;

	if (!rule->ban.duration_ns)
		return false;
	/* In the source's offender record, or (that evicted, or the bucket)
	 * in its ban record, as the program reads them (bpf/bans.h). */
	if (bucket && !xrl_offender_of(dp, key, bucket, &off))
		until = off.ban_until_ns;
	if (!ban_holds(until, now) &&
	    !bpf_map_lookup_elem(dp->bans_fd, key, &record) &&
	    record.rule_id == rule->id)
		until = record.until_ns;
	if (!ban_holds(until, now))
		return false;
	printf("banned by rule %u: %.3f s left\n", rule->id,
	       (until - now) / 1e9);
	return true;
}

/* The ban of the source's whole prefix (bpf/escalate.h), which its rule
 * looks at before its own ban. True when one holds (said). */
static bool explain_escalated_ban(const struct xrl_datapath *dp,
				  const struct xrl_rule *rule,
				  const struct xrl_bucket_key *key, __u64 now)
{
	struct xrl_escalated_ban ban;
	char cidr[64];

	if (xrl_escalated_ban_of(dp, rule, key, now, &ban) != 1)
		return false;
	xrl_cidr_format(&ban.prefix, cidr, sizeof(cidr));
	printf("banned by rule %u: its prefix %s, escalated (%u time%s): "
	       "%.3f s left\n", rule->id, cidr, ban.escalations,
	       ban.escalations == 1 ? "" : "s", (ban.until_ns - now) / 1e9);
	return true;
}

/* A per-source limit or monitor rule: its bucket, its ban, its levels. */
static int explain_bucket(const struct xrl_cmd *cmd, const struct xrl_cli *cli,
			  const struct xrl_datapath *dp,
			  const struct xrl_settings *settings,
			  const struct xrl_rule *rule, bool split,
			  const struct xrl_lpm_key *addr,
			  struct next_packet *next)
{
	__u64 now = xrl_clock_ns(CLOCK_MONOTONIC);
	struct xrl_lpm_key masked = { 0 };
	struct xrl_bucket_key key;
	struct xrl_bucket bucket;
	bool have, bound;
	char cidr[64];
	int fits = 1, levels;

	xrl_bucket_key_make(settings, addr->addr, split ? rule->id + 1 : 0,
			    &key);
	memcpy(masked.addr, key.addr, sizeof(masked.addr));
	masked.prefixlen = xrl_bucket_key_prefixlen(settings, &key);
	xrl_cidr_format(&masked, cidr, sizeof(cidr));
	/* A split subnet keys its buckets by rule (include/xrl.h). */
	printf("bucket key: %s, rule %u%s\n", cidr, rule->id,
	       split ? " (its subnet is split by a longer rule)" : "");
	have = !bpf_map_lookup_elem(dp->buckets_fd, &key, &bucket);
	if (!have && errno != ENOENT) {
		xrl_cmd_error(cli, cmd, "reading its bucket: %s",
			      strerror(errno));
		return -errno;
	}
	/* A bucket of another rule is taken over anew (bpf rebind()). */
	bound = have && XRL_BUCKET_RULE(bucket.rule_id) == rule->id;
	if (explain_escalated_ban(dp, rule, &key, now) ||
	    explain_rule_ban(dp, rule, &key, bound ? &bucket : NULL, now)) {
		judged(next, false, XRL_VERDICT_BANNED);
		return 0;
	}
	if (bound) {
		fits = print_bucket(rule, &bucket, now);
		print_offender(dp, &key, &bucket);
	} else
		printf("bucket: none (not seen, forgotten or evicted): its "
		       "next packet is a new source's\n");
	levels = print_levels(dp, rule, addr->addr);
	if (fits == 1 || levels == -1)
		fits = levels;
	if (rule->window.limit || fits < 0)
		return 0;
	if (rule->action == XRL_ACTION_MONITOR)
		judged(next, true, fits ? XRL_VERDICT_PASS :
					  XRL_VERDICT_MONITOR);
	else
		judged(next, fits, fits ? XRL_VERDICT_PASS : XRL_VERDICT_DROP);
	return 0;
}

/* @l4_rules: L4 rules met that the packet explain judged may not be
 * (no --proto given). */
static void print_next(const struct next_packet *next, bool l4_rules)
{
	if (!next->known)
		return;
	printf("next packet: %s, counted as %s%s\n",
	       next->passes ? "passed" : "dropped",
	       xrl_verdict_name(next->counted),
	       l4_rules ? " (unless an L4 rule above takes it)" : "");
}

/*
 * What the program looks at before any rule, in its order (bpf/
 * xdp_ratelimit.bpf.c judge_packet()): a ban by hand, then the
 * blocklists. 1 when one drops @addr (said, with its verdict), 0 when
 * the rules judge it, -errno.
 */
static int explain_before_rules(const struct xrl_cmd *cmd,
				const struct xrl_cli *cli,
				const struct xrl_datapath *dp,
				const struct xrl_policy_head *head,
				const char *text,
				const struct xrl_lpm_key *addr)
{
	struct next_packet next = { 0 };
	int ret;

	ret = explain_manual_ban(dp, &head->settings, text, addr,
				 xrl_clock_ns(CLOCK_MONOTONIC));
	if (ret < 0) {
		xrl_cmd_error(cli, cmd, "reading the bans by hand: %s",
			      strerror(-ret));
		return ret;
	}
	if (ret) {
		judged(&next, false, XRL_VERDICT_BANNED);
		print_next(&next, false);
		return 1;
	}
	ret = explain_blocklists(dp, head, text, addr);
	if (ret < 0) {
		xrl_cmd_error(cli, cmd, "reading the blocklists: %s",
			      strerror(-ret));
		return ret;
	}
	if (ret) {
		judged(&next, false, XRL_VERDICT_BLOCKLISTED);
		print_next(&next, false);
	}
	return ret;
}

/*
 * The program's judgement of @addr, in its order (bpf/xdp_ratelimit.bpf.c
 * judge_packet()): an IPv6 source naming an IPv4 address, a ban by
 * hand, the blocklists, then the rule: allow, deny, an aggregate's
 * budget, or the source's bucket (its rule's ban, its limits, its
 * levels). Everything from one policy head, as a packet is judged.
 */
static int explain(const struct xrl_cmd *cmd, const struct xrl_cli *cli,
		   const struct xrl_datapath *dp, const char *text,
		   const struct xrl_lpm_key *addr,
		   const struct xrl_l4_packet *packet)
{
	struct next_packet next = { 0 };
	struct xrl_policy_head head;
	struct xrl_settings settings;
	struct xrl_classified how;
	struct xrl_lpm_key prefix;
	struct xrl_rule rule;
	int ret;

	ret = xrl_datapath_head(dp, &head);
	if (ret) {
		xrl_cmd_error(cli, cmd, "reading the settings: %s",
			      strerror(-ret));
		return ret;
	}
	settings = head.settings;
	if (ipv6_text_names_ipv4(text, addr->addr)) {
		if (settings.ipv4_mapped_verdict == XRL_IPV4_MAPPED_IPV6) {
			printf("%s: an IPv6 source naming an IPv4 address, judged "
			       "as IPv6 (ipv4_mapped: ipv6); explain does not "
			       "follow it further\n", text);
			return 0;
		}
		printf("%s: an IPv6 source naming an IPv4 address (ipv4_mapped: "
		       "drop); no rule judges it\n", text);
		judged(&next, false, XRL_VERDICT_IPV4_MAPPED);
		print_next(&next, false);
		return 0;
	}
	ret = explain_before_rules(cmd, cli, dp, &head, text, addr);
	if (ret)
		return ret < 0 ? ret : 0;
	ret = xrl_rule_of(dp, &settings, addr->addr, packet, &rule, &prefix,
			  &how);
	if (ret) {
		xrl_cmd_error(cli, cmd, "%s: no rule in force judges it: %s",
			      text, strerror(-ret));
		return ret;
	}
	print_rule(text, &rule, &prefix);
	print_unreadable(&settings, &how);
	if (rule.action != XRL_ACTION_LIMIT &&
	    rule.action != XRL_ACTION_MONITOR) {
		printf("no bucket: %s rules judge without one\n",
		       xrl_action_name(rule.action));
		judged(&next, rule.action == XRL_ACTION_ALLOW,
		       rule.action == XRL_ACTION_ALLOW ? XRL_VERDICT_ALLOW :
							 XRL_VERDICT_DENY);
	} else if (rule.scope == XRL_SCOPE_AGGREGATE) {
		printf("no bucket of its own: one budget for every source "
		       "the rule holds\n");
	} else {
		ret = explain_bucket(cmd, cli, dp, &settings, &rule, how.split,
				     addr, &next);
		if (ret)
			return ret;
	}
	print_next(&next, !packet && how.n_l4_protos > 0);
	return 0;
}

enum {
	OPT_PROTO = XRL_OPT_LONG,
	OPT_SPORT,
	OPT_DPORT,
	OPT_SYN,
};

static const struct xrl_opt explain_opts[] = {
	XRL_OPT("proto", OPT_PROTO, "PROTO",
		"judge a packet of this protocol (tcp, udp, icmp, icmpv6), "
		"as the L4 rules take it (default: a packet no L4 rule "
		"takes)"),
	XRL_OPT("sport", OPT_SPORT, "PORT", "its source port (tcp, udp)"),
	XRL_OPT("dport", OPT_DPORT, "PORT",
		"its destination port (tcp, udp)"),
	XRL_OPT("syn", OPT_SYN, NULL, "a SYN without ACK (tcp)"),
	{}
};

/* One port, not a range, into *@port. */
static int one_port(const struct xrl_cmd *cmd, const struct xrl_cli *cli,
		    const char *option, const char *text, __u16 *port)
{
	__u16 hi;

	if (!xrl_match_ports_parse(text, port, &hi) && *port == hi)
		return 0;
	xrl_cmd_error(cli, cmd, "--%s %s: not a port (0 to 65535)", option,
		      text);
	return -EINVAL;
}

/* The packet of --proto, --sport, --dport and --syn, or none (*@given
 * false); EXIT_SUCCESS, or the exit code to stop with. */
static int parse_packet(const struct xrl_cmd *cmd, struct xrl_cli *cli,
			int argc, char **argv, struct xrl_l4_packet *packet,
			bool *given)
{
	bool ports = false;
	int opt, exit_code = -1;

	memset(packet, 0, sizeof(*packet));
	*given = false;
	while ((opt = xrl_cmd_next_opt(cmd, cli, argc, argv,
				       &exit_code)) != -1) {
		if (opt == OPT_PROTO &&
		    xrl_match_proto_parse(optarg, &packet->proto)) {
			xrl_cmd_error(cli, cmd, "--proto %s: not one of tcp, "
				      "udp, icmp, icmpv6", optarg);
			return EXIT_FAILURE;
		}
		if ((opt == OPT_SPORT && one_port(cmd, cli, "sport", optarg,
						  &packet->sport)) ||
		    (opt == OPT_DPORT && one_port(cmd, cli, "dport", optarg,
						  &packet->dport)))
			return EXIT_FAILURE;
		ports |= opt == OPT_SPORT || opt == OPT_DPORT;
		packet->syn |= opt == OPT_SYN;
	}
	if (exit_code >= 0)
		return exit_code;
	*given = packet->proto != 0;
	if ((ports || packet->syn) && !*given) {
		xrl_cmd_error(cli, cmd, "--sport, --dport and --syn need "
			      "--proto");
		return EXIT_FAILURE;
	}
	if ((ports && packet->proto != IPPROTO_TCP &&
	     packet->proto != IPPROTO_UDP) ||
	    (packet->syn && packet->proto != IPPROTO_TCP)) {
		xrl_cmd_error(cli, cmd, "--proto %s has no %s",
			      xrl_match_proto_name(packet->proto),
			      packet->syn ? "--syn" : "ports");
		return EXIT_FAILURE;
	}
	return EXIT_SUCCESS;
}

static int run_explain(const struct xrl_cmd *cmd, struct xrl_cli *cli,
		       int argc, char **argv)
{
	struct xrl_l4_packet packet;
	struct xrl_lpm_key addr;
	struct xrl_datapath dp;
	const char *text;
	bool given;
	int ret;

	ret = parse_packet(cmd, cli, argc, argv, &packet, &given);
	if (ret != EXIT_SUCCESS)
		return ret;
	if (optind != argc - 1) {
		xrl_cmd_error(cli, cmd, "expects one %s; try '%s %s --help'",
			      cmd->synopsis, cli->prog, cmd->name);
		return EXIT_FAILURE;
	}
	text = argv[optind];
	if (xrl_cidr_parse(text, &addr) || addr.prefixlen != 128) {
		xrl_cmd_error(cli, cmd, "%s: not an IPv4 or IPv6 address",
			      text);
		return EXIT_FAILURE;
	}
	if (xrl_cmd_open_pins(cmd, cli, &dp))
		return EXIT_FAILURE;
	ret = explain(cmd, cli, &dp, text, &addr, given ? &packet : NULL);
	xrl_datapath_close(&dp);
	return ret ? EXIT_FAILURE : EXIT_SUCCESS;
}

static int run_reset(const struct xrl_cmd *cmd, struct xrl_cli *cli,
		     int argc, char **argv)
{
	struct xrl_lpm_key prefix;
	struct xrl_datapath dp;
	const char *text;
	size_t n;
	int ret, exit_code;

	text = xrl_cmd_one_arg(cmd, cli, argc, argv, &exit_code);
	if (!text)
		return exit_code;
	ret = xrl_cidr_parse(text, &prefix);
	if (ret) {
		xrl_cmd_error(cli, cmd, "%s: %s", text, ret == -EADDRNOTAVAIL ?
			      "host bits set after the prefix length" :
			      ret == -ERANGE ? "prefix length out of range" :
			      "not an address or a prefix");
		return EXIT_FAILURE;
	}
	if (xrl_cmd_open_pins(cmd, cli, &dp))
		return EXIT_FAILURE;
	/* 0.0.0.0/0 parses to the key of every source, both families. */
	ret = xrl_buckets_forget(&dp, &prefix, strchr(text, ':') ?
				 XRL_FAMILY_ANY : XRL_FAMILY_IPV4, &n);
	xrl_datapath_close(&dp);
	if (ret) {
		xrl_cmd_error(cli, cmd, "forgetting the buckets of %s: %s",
			      text, strerror(-ret));
		return EXIT_FAILURE;
	}
	printf("%s: forgot %zu bucket%s\n", text, n, n == 1 ? "" : "s");
	return EXIT_SUCCESS;
}

const struct xrl_cmd xrl_cmd_explain = {
	.name = "explain",
	.synopsis = "ADDR",
	.opts = explain_opts,
	.summary = "How the program judges ADDR: a ban by hand, the "
		   "blocklists holding it, its rule, bucket, ban and levels, "
		   "and its next packet's verdict.",
	.run = run_explain,
};

const struct xrl_cmd xrl_cmd_reset = {
	.name = "reset",
	.synopsis = "ADDR[/LEN]",
	.summary = "Forget the buckets of a source or a prefix: its next "
		   "packets get a full burst.",
	.run = run_reset,
};
