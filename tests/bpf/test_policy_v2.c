// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * One policy file with every key of policy language v2 (issue 14: L4
 * match, levels, strategies, bans), loaded as an operator writes it and judged
 * on crafted frames with the test clock: what each rule did, asserted
 * and printed as a table.
 */
#include <stdio.h>
#include <string.h>
#include <criterion/criterion.h>
#include <linux/bpf.h>
#include "fixture.h"
#include "loader.h"
#include "policy_read.h"

#define S	1000000000ULL
#define MS	1000000ULL

static const char every_key[] =
	"keys:\n"
	"  ipv4_prefix: 32\n"
	"default:\n"
	"  action: allow\n"
	"rules:\n"
	"  - name: syn-flood\n"		/* L4: SYNs without ACK */
	"    cidr: 198.18.40.0/24\n"
	"    proto: tcp\n"
	"    tcp_flags: syn\n"
	"    dport: 1-1023\n"
	"    pps: 1\n"
	"    burst: 5\n"
	"  - name: dns-replies\n"	/* L4: reflection from port 53 */
	"    cidr: 198.18.40.0/24\n"
	"    proto: udp\n"
	"    sport: 53\n"
	"    pps: 1\n"
	"    burst: 3\n"
	"  - name: clients\n"		/* the rest of the same prefix */
	"    cidr: 198.18.40.0/24\n"
	"    pps: 1k\n"
	"    burst: 100\n"
	"  - name: paced\n"		/* a pace: one every 100 ms */
	"    cidr: 198.18.41.0/24\n"
	"    strategy: leaky_bucket\n"
	"    interval: 100ms\n"
	"  - name: window\n"		/* at most 10 in any second */
	"    cidr: 198.18.42.0/24\n"
	"    strategy: sliding_window\n"
	"    limit: 10\n"
	"    window: 1s\n"
	"  - name: login\n"		/* a ban for repeat offenders */
	"    cidr: 198.18.43.0/24\n"
	"    strategy: token_bucket\n"
	"    pps: 1\n"
	"    burst: 4\n"
	"    ban: 1m\n"
	"    ban_after: 0s\n"
	"    ban_max: 4m\n"
	"  - name: tiers-v4\n"		/* each address 10, each /24 25 */
	"    cidr: 198.18.44.0/22\n"
	"    pps: 1\n"
	"    burst: 10\n"
	"    levels:\n"
	"      - {prefix: 24, pps: 1, burst: 25}\n"
	"  - name: tiers-v6\n"		/* each /64 4, /56 6, /48 10 */
	"    cidr: fd00:44::/32\n"
	"    pps: 1\n"
	"    burst: 4\n"
	"    levels:\n"
	"      - {prefix: 56, pps: 1, burst: 6}\n"
	"      - {prefix: 48, pps: 1, burst: 10}\n";

static struct xrl_datapath dp;
static struct xrl_config config;

static void setup(void)
{
	char err[512];

	fixture_load(&dp, 65536);
	cr_assert_eq(xrl_config_load_string(every_key, strlen(every_key),
					    "every-key.yaml", &config, err,
					    sizeof(err)), 0, "%s", err);
	fixture_apply(&dp, &config.policy);
}

static void teardown(void)
{
	xrl_config_free(&config);
	xrl_datapath_close(&dp);
}

TestSuite(policy_v2, .init = setup, .fini = teardown);

/* How many of @n packets from @src pass at @now. */
static unsigned passes_src(const char *src, unsigned n, __u64 now);

/* How many of @n copies of @pkt pass at @now. */
static unsigned passes_at(const struct packet *pkt, unsigned n, __u64 now)
{
	unsigned passed = 0;

	xrl_datapath_set_time(&dp, now);
	while (n--)
		passed += fixture_run(&dp, pkt) == XDP_PASS;
	return passed;
}

static unsigned passes_src(const char *src, unsigned n, __u64 now)
{
	struct packet pkt;

	cr_assert_eq(packet_from(&pkt, src), 0, "%s", src);
	return passes_at(&pkt, n, now);
}

static struct xrl_rule_counters counters(const char *name)
{
	struct xrl_rule_spec *rule = xrl_policy_find(&config.policy, name);

	cr_assert_not_null(rule, "no rule %s", name);
	return fixture_rule_counters(&dp, rule->id);
}

static void row(const char *name, const char *traffic)
{
	struct xrl_rule_counters c = counters(name);

	printf("| %-11s | %-58s | %6llu | %7llu | %6llu |\n", name, traffic,
	       (unsigned long long)c.outcome[XRL_RULE_PASSED].packets,
	       (unsigned long long)c.outcome[XRL_RULE_DROPPED].packets,
	       (unsigned long long)c.outcome[XRL_RULE_BANNED].packets);
}

Test(policy_v2, every_new_key_judges_its_crafted_traffic)
{
	struct packet syn = packet_l4("198.18.40.7", PACKET_TCP_SYN, 40000, 80),
		      ack = packet_l4("198.18.40.7", PACKET_TCP_ACK, 40000, 80),
		      syn_high = packet_l4("198.18.40.7", PACKET_TCP_SYN, 40000,
					   8080),
		      dns = packet_l4("198.18.40.8", PACKET_UDP, 53, 40000),
		      udp54 = packet_l4("198.18.40.8", PACKET_UDP, 54, 40000),
		      paced, windowed, login;
	__u64 t = 10 * S;

	cr_assert_eq(packet_from(&paced, "198.18.41.7"), 0);
	cr_assert_eq(packet_from(&windowed, "198.18.42.7"), 0);
	cr_assert_eq(packet_from(&login, "198.18.43.7"), 0);

	/* L4: 50 SYNs to port 80 meet the SYN rule's burst of 5; the same
	 * source's 50 ACKs and 10 SYNs to 8080 (outside 1-1023) fall to
	 * the prefix's plain rule; port 53 replies get their own burst. */
	cr_assert_eq(passes_at(&syn, 50, t), 5);
	cr_assert_eq(passes_at(&ack, 50, t), 50);
	cr_assert_eq(passes_at(&syn_high, 10, t), 10);
	cr_assert_eq(passes_at(&dns, 20, t), 3);
	cr_assert_eq(passes_at(&udp54, 20, t), 20);

	/* Leaky bucket: one at once, the next 100 ms later, not sooner. */
	cr_assert_eq(passes_at(&paced, 10, t), 1);
	cr_assert_eq(passes_at(&paced, 10, t + 99 * MS), 0);
	cr_assert_eq(passes_at(&paced, 10, t + 100 * MS), 1);

	/* Sliding window: 10 in the second, none more within it, and the
	 * window admits again once the first packets have left it (the
	 * sub-window bound of docs/POLICY.md: within 1/15 s more). */
	cr_assert_eq(passes_at(&windowed, 15, t), 10);
	cr_assert_eq(passes_at(&windowed, 5, t + 900 * MS), 0);
	cr_assert_eq(passes_at(&windowed, 15, t + S + S / 15 + 1), 10);

	/* Ban: the burst of 4 passes, the first drop bans for 1 min; the
	 * source stays dropped as banned however slowly it sends, then
	 * is judged again; offending again right away bans for 2 min. */
	cr_assert_eq(passes_at(&login, 10, t), 4);
	cr_assert_eq(passes_at(&login, 1, t + 30 * S), 0);
	cr_assert_eq(passes_at(&login, 1, t + 59 * S), 0);
	cr_assert_eq(passes_at(&login, 4, t + 61 * S), 4);
	cr_assert_eq(passes_at(&login, 2, t + 61 * S), 0);
	cr_assert_eq(passes_at(&login, 1, t + 61 * S + 119 * S), 0);
	cr_assert_eq(passes_at(&login, 1, t + 61 * S + 121 * S), 1);

	/* Levels: three addresses of one /24 get 10, 10 and the /24's last
	 * 5; another /24 its own. Four /64s: two in one /56 share its 6,
	 * a third /56 its 4, and the fourth nothing of the /48's 10. */
	cr_assert_eq(passes_src("198.18.44.1", 10, t), 10);
	cr_assert_eq(passes_src("198.18.44.2", 10, t), 10);
	cr_assert_eq(passes_src("198.18.44.3", 10, t), 5);
	cr_assert_eq(passes_src("198.18.45.1", 10, t), 10);
	cr_assert_eq(passes_src("fd00:44:0:100::1", 8, t), 4);
	cr_assert_eq(passes_src("fd00:44:0:101::1", 8, t), 2);
	cr_assert_eq(passes_src("fd00:44:0:200::1", 8, t), 4);
	cr_assert_eq(passes_src("fd00:44:0:300::1", 8, t), 0);

	printf("| rule        | crafted traffic (test clock)                             | passed | dropped | banned |\n");
	printf("|---|---|---|---|---|\n");
	row("syn-flood", "50 SYNs to :80 at once");
	row("clients", "50 ACKs to :80, 10 SYNs to :8080, 20 UDP from :54");
	row("dns-replies", "20 UDP from :53 at once");
	row("paced", "10 at t, 10 at t+99ms, 10 at t+100ms");
	row("window", "15 at t, 5 at t+0.9s, 15 at t+1.07s");
	row("login", "10 at t, then 1-4 at t+30s..t+182s (banned 1m, then 2m)");
	row("tiers-v4", "10 each from 3 addresses of one /24, 10 from another");
	row("tiers-v6", "8 each from 4 /64s: 2 in one /56, 3 /56s of one /48");

	cr_assert_eq(counters("syn-flood").outcome[XRL_RULE_DROPPED].packets,
		     45);
	cr_assert_eq(counters("clients").outcome[XRL_RULE_PASSED].packets, 80);
	cr_assert_eq(counters("dns-replies").outcome[XRL_RULE_DROPPED].packets,
		     17);
	cr_assert_gt(counters("login").outcome[XRL_RULE_BANNED].packets, 0);
	cr_assert_eq(counters("tiers-v4").outcome[XRL_RULE_DROPPED].packets, 5);
	cr_assert_eq(counters("tiers-v6").outcome[XRL_RULE_PASSED].packets, 10);
}
