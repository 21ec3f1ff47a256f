// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-ratelimit explain ADDR | reset ADDR[/LEN]: one source as the
 * program sees it (its rule, its bucket key and how full its bucket is),
 * and forgetting the buckets of a source or a prefix. From the pins;
 * the keys and lookups are the data path's (user/datapath/bucket.c).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "bucket.h"
#include "cidr.h"
#include "clock.h"
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
	char cidr[64], limit[96];
	int kind;

	xrl_cidr_format(prefix, cidr, sizeof(cidr));
	printf("%s: rule %u (%s%s), %s", addr, rule->id,
	       prefix->prefixlen ? cidr : "default",
	       prefix->prefixlen ? "" : ": no other rule holds it",
	       xrl_action_name(rule->action));
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

/* The tokens a bucket holds of each limit of @rule. */
static void print_tokens(const struct xrl_rule *rule,
			 const struct xrl_bucket *bucket, __u64 now)
{
	static const char *const kinds[] = {
		[XRL_LIMIT_PACKETS] = "packets", [XRL_LIMIT_BYTES] = "bytes",
	};
	struct xrl_bucket_level level;
	int kind;

	/* A window's count is in xrl_windows; its bucket holds no tokens. */
	for (kind = 0; kind < XRL_LIMIT_KINDS && !rule->window.limit; kind++) {
		if (!rule->limit[kind].interval)
			continue;
		xrl_bucket_level(&rule->limit[kind], bucket->tat[kind], now,
				 &level);
		if (!level.known)
			printf("  %s: kept from before the last policy "
			       "change; judged anew at its next packet\n",
			       kinds[kind]);
		else
			printf("  %s: %.1f of %.0f tokens left, full in "
			       "%.3f s\n", kinds[kind], level.tokens,
			       level.burst, level.full_in_ns / 1e9);
	}
}

/* Whether the record's ban holds at @now (the program's clock). */
static bool ban_holds(const struct xrl_offender *off, __u64 now)
{
	return off->ban_until_ns && (__s64)(off->ban_until_ns - now) > 0;
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

static void print_bucket(const struct xrl_rule *rule,
			 const struct xrl_bucket *bucket, __u64 now)
{
	printf("bucket: last seen %.3f s ago\n",
	       now > bucket->last_seen_ns ?
	       (now - bucket->last_seen_ns) / 1e9 : 0.0);
	print_tokens(rule, bucket, now);
}

/* The source's counts: kept only from its first refusal (include/xrl.h,
 * struct xrl_offender). */
static void print_offender(const struct xrl_datapath *dp,
			   const struct xrl_bucket_key *key,
			   const struct xrl_bucket *bucket, __u64 now)
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
	printf("since its first refusal: %llu passed, %llu dropped",
	       (unsigned long long)off.passed,
	       (unsigned long long)off.dropped);
	if (ban_holds(&off, now))
		printf(", banned for %.3f s more",
		       (off.ban_until_ns - now) / 1e9);
	printf("\n");
}

/* The buckets of the rule's levels for @addr's family (docs/POLICY.md
 * "Levels"): each one's subnet and tokens. */
static void print_levels(const struct xrl_datapath *dp,
			 const struct xrl_rule *rule, const __u8 addr[16])
{
	struct xrl_lpm_key subnet, host = { .prefixlen = 128 };
	struct xrl_bucket_key key;
	struct xrl_bucket bucket;
	struct xrl_rule level;
	char cidr[64];
	unsigned i;
	bool ipv4;
	int ret;

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
			continue;
		}
		if (bpf_map_lookup_elem(dp->buckets_fd, &key, &bucket) ||
		    XRL_BUCKET_RULE(bucket.rule_id) != rule->id) {
			printf("  bucket: none yet: full\n");
			continue;
		}
		printf("  bucket: %llu refused by this level\n",
		       (unsigned long long)level_refused(dp, &key, &bucket));
		print_tokens(&level, &bucket, xrl_clock_ns(CLOCK_MONOTONIC));
	}
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

static int explain(const struct xrl_cmd *cmd, const struct xrl_cli *cli,
		   const struct xrl_datapath *dp, const char *text,
		   const struct xrl_lpm_key *addr)
{
	struct xrl_lpm_key prefix, masked = { 0 };
	struct xrl_settings settings;
	struct xrl_classified how;
	struct xrl_bucket_key key;
	struct xrl_bucket bucket;
	struct xrl_rule rule;
	char cidr[64];
	bool split;
	int ret;

	ret = xrl_datapath_settings(dp, &settings);
	if (ret) {
		xrl_cmd_error(cli, cmd, "reading the settings: %s",
			      strerror(-ret));
		return ret;
	}
	if (ipv6_text_names_ipv4(text, addr->addr)) {
		if (settings.ipv4_mapped_verdict == XRL_IPV4_MAPPED_IPV6) {
			printf("%s: an IPv6 source naming an IPv4 address, judged "
			       "as IPv6 (ipv4_mapped: ipv6); explain does not "
			       "follow it further\n", text);
			return 0;
		}
		printf("%s: an IPv6 source naming an IPv4 address: dropped, "
		       "counted as ipv4_mapped (ipv4_mapped: drop); no rule "
		       "judges it\n", text);
		return 0;
	}
	ret = xrl_rule_of(dp, &settings, addr->addr, &rule, &prefix, &how);
	if (ret) {
		xrl_cmd_error(cli, cmd, "%s: no rule in force judges it: %s",
			      text, strerror(-ret));
		return ret;
	}
	split = how.split;
	print_rule(text, &rule, &prefix);
	print_unreadable(&settings, &how);
	if (rule.action != XRL_ACTION_LIMIT &&
	    rule.action != XRL_ACTION_MONITOR) {
		printf("no bucket: %s rules judge without one\n",
		       xrl_action_name(rule.action));
		return 0;
	}
	if (rule.scope == XRL_SCOPE_AGGREGATE) {
		printf("no bucket of its own: one budget for every source "
		       "the rule holds\n");
		return 0;
	}
	xrl_bucket_key_make(&settings, addr->addr, split ? rule.id + 1 : 0,
			    &key);
	memcpy(masked.addr, key.addr, sizeof(masked.addr));
	masked.prefixlen = xrl_bucket_key_prefixlen(&settings, &key);
	xrl_cidr_format(&masked, cidr, sizeof(cidr));
	/* A split subnet keys its buckets by rule (include/xrl.h). */
	printf("bucket key: %s, rule %u%s\n", cidr, rule.id,
	       split ? " (its subnet is split by a longer rule)" : "");
	if (bpf_map_lookup_elem(dp->buckets_fd, &key, &bucket)) {
		if (errno != ENOENT) {
			ret = -errno;
			xrl_cmd_error(cli, cmd, "reading its bucket: %s",
				      strerror(errno));
			return ret;
		}
		printf("bucket: none (not seen, forgotten or evicted): its "
		       "next packet is a new source's\n");
		print_levels(dp, &rule, addr->addr);
		return 0;
	}
	print_bucket(&rule, &bucket, xrl_clock_ns(CLOCK_MONOTONIC));
	print_offender(dp, &key, &bucket, xrl_clock_ns(CLOCK_MONOTONIC));
	print_levels(dp, &rule, addr->addr);
	return 0;
}

static int run_explain(const struct xrl_cmd *cmd, struct xrl_cli *cli,
		       int argc, char **argv)
{
	struct xrl_lpm_key addr;
	struct xrl_datapath dp;
	const char *text;
	int ret, exit_code;

	text = xrl_cmd_one_arg(cmd, cli, argc, argv, &exit_code);
	if (!text)
		return exit_code;
	if (xrl_cidr_parse(text, &addr) || addr.prefixlen != 128) {
		xrl_cmd_error(cli, cmd, "%s: not an IPv4 or IPv6 address",
			      text);
		return EXIT_FAILURE;
	}
	if (xrl_cmd_open_pins(cmd, cli, &dp))
		return EXIT_FAILURE;
	ret = explain(cmd, cli, &dp, text, &addr);
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
	.summary = "The rule that judges ADDR, its bucket key, tokens left "
		   "and time until full.",
	.run = run_explain,
};

const struct xrl_cmd xrl_cmd_reset = {
	.name = "reset",
	.synopsis = "ADDR[/LEN]",
	.summary = "Forget the buckets of a source or a prefix: its next "
		   "packets get a full burst.",
	.run = run_reset,
};
