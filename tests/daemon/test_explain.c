// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * explain says what the data path does. Its "next packet:" line is
 * compared with the verdict BPF_PROG_TEST_RUN gives the same source's
 * frame, and the counter it moves, over a table of cases in the
 * program's order: bans by hand, IPv4-mapped sources, rules (allow,
 * deny, limit, monitor), rule bans (in force and ended), levels, L4
 * rules of another protocol, both families; and blocklists (deny,
 * monitor, both, none, after a list's reload).
 *
 * For IPv6 sources that name an IPv4 address (IPv4-mapped ::ffff:0:0/96,
 * IPv4-compatible ::/96), and their neighbours that do not, its line is
 * compared with the verdict
 * BPF_PROG_TEST_RUN gives a frame from the same source, under both
 * ipv4_mapped settings. The IPv4 rule of the policy denies, the default
 * allows: an explain that read such a source as the IPv4 address would
 * name the deny rule.
 */
#include <stdio.h>
#include <string.h>
#include <linux/bpf.h>
#include <criterion/criterion.h>
#include "clock.h"
#include "counters.h"
#include "daemon.h"
#include "fixture.h"
#include "loader.h"
#include "packet.h"

static struct daemon_env env;
static char out[1 << 16];

static void setup(void)
{
	env_setup(&env);
}

static void teardown(void)
{
	env_teardown(&env);
}

TestSuite(explain, .init = setup, .fini = teardown, .timeout = 120);

struct source_case {
	const char *addr;
	bool names_ipv4;	/* RFC 4291 2.5.5: never a real source */
};

static const struct source_case cases[] = {
	{ "::ffff:198.18.1.7", true },
	{ "::ffff:0:0", true },
	{ "::ffff:255.255.255.255", true },
	{ "::198.18.1.7", true },
	{ "::0.0.0.2", true },
	{ "::", false },
	{ "::1", false },
	{ "::1:0:0", false },		/* ::/96 ends at ::ffff:ffff */
	{ "::fffe:198.18.1.7", false },
	{ "::1:ffff:198.18.1.7", false },
	{ "fd00::198.18.1.7", false },
	{ "fd00::1", false },
};

static void start_with(const char *ipv4_mapped)
{
	char yaml[512];

	snprintf(yaml, sizeof(yaml), "ipv4_mapped: %s\n"
		 "default:\n  action: allow\nrules:\n"
		 "  - cidr: 198.18.1.0/24\n    action: deny\n", ipv4_mapped);
	env_write(&env, NULL, yaml);
	daemon_start(&env, NULL);
}

static int verdict_of(const char *src)
{
	struct packet pkt;

	cr_assert_eq(packet_from(&pkt, src), 0, "%s", src);
	return fixture_run(&env.dp, &pkt);
}

static void explain_with(const char *addr, const char *options)
{
	char args[256];

	snprintf(args, sizeof(args), "explain %s%s%s", addr,
		 options ? " " : "", options ? options : "");
	cr_assert_eq(env_cli(&env, out, sizeof(out), args, false), 0, "%s: %s",
		     addr, out);
}

static void explain(const char *addr)
{
	explain_with(addr, NULL);
}

Test(explain, a_source_naming_an_ipv4_address_is_dropped_as_the_data_path_drops_it)
{
	size_t i;

	start_with("drop");
	cr_assert_eq(verdict_of("198.18.1.7"), XDP_DROP, "the deny rule");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct source_case *c = &cases[i];
		int verdict = verdict_of(c->addr);

		explain(c->addr);
		cr_assert_eq(verdict, c->names_ipv4 ? XDP_DROP : XDP_PASS,
			     "%s: data path %d", c->addr, verdict);
		cr_assert_eq(strstr(out, "counted as ipv4_mapped") != NULL,
			     c->names_ipv4, "%s: %s", c->addr, out);
		cr_assert_null(strstr(out, "deny"), "%s: %s", c->addr, out);
		if (!c->names_ipv4)
			cr_assert(strstr(out, "allow"), "%s: %s", c->addr, out);
	}
}

Test(explain, with_ipv4_mapped_ipv6_it_is_an_ipv6_source)
{
	size_t i;

	start_with("ipv6");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct source_case *c = &cases[i];

		cr_assert_eq(verdict_of(c->addr), XDP_PASS, "%s", c->addr);
		explain(c->addr);
		cr_assert_null(strstr(out, "deny"), "%s: %s", c->addr, out);
		cr_assert_eq(strstr(out, "judged as IPv6 (ipv4_mapped: "
				    "ipv6)") != NULL, c->names_ipv4, "%s: %s",
			     c->addr, out);
	}
}

/* reset of the IPv4 space forgets IPv4 sources only (issue 24 item 5):
 * 0.0.0.0/0 parses to the key of every source. */
Test(explain, reset_of_0_0_0_0_0_forgets_the_ipv4_sources_only)
{
	static const char *const sources[] = { "198.18.1.1", "198.18.2.1",
					       "fd00::1", "fd00:1::1" };
	struct packet pkt;
	size_t i;

	env_write(&env, NULL, "default:\n  action: limit\n  pps: 10\n"
		  "  burst: 10\n");
	daemon_start(&env, NULL);
	for (i = 0; i < 4; i++) {
		cr_assert_eq(packet_from(&pkt, sources[i]), 0);
		cr_assert_eq(fixture_run(&env.dp, &pkt), XDP_PASS);
	}
	cr_assert_eq(env_cli(&env, out, sizeof(out), "reset 0.0.0.0/0",
			     false), 0, "%s", out);
	cr_assert_str_eq(out, "0.0.0.0/0: forgot 2 buckets\n");
	explain("198.18.1.1");
	cr_assert(strstr(out, "bucket: none"), "%s", out);
	explain("fd00::1");
	cr_assert(strstr(out, "bucket: last seen "), "%s", out);
	cr_assert(strstr(out, "never refused under its rule: no counts kept"),
		  "%s", out);
	cr_assert_eq(env_cli(&env, out, sizeof(out), "reset ::/0", false), 0,
		     "%s", out);
	cr_assert_str_eq(out, "::/0: forgot 2 buckets\n");
}

/* ---- explain against the program, case by case ------------------------ */

/*
 * One step of the table: what is done first (a command of the CLI, then
 * @n_sent frames from @send), then the source explain and the program
 * judge. Steps run in order on one daemon: a ban by hand made in one
 * step holds for the later ones.
 */
struct judge_case {
	const char *what;	/* what the case shows */
	const char *cli;	/* run first, or NULL */
	const char *send;	/* then @n_sent frames from it, or NULL */
	int n_sent;
	const char *addr;
};

/* A source's L4 frame (packet_l4(), from port 40000), and explain's
 * options for the same packet. */
struct l4_case {
	const char *what;
	const char *addr;
	const char *args;
	enum packet_kind kind;
	uint16_t dport;
};

static const char judge_policy[] =
	"ipv4_mapped: drop\n"
	"default:\n  action: allow\n"
	"rules:\n"
	"  - {name: deny, cidr: 198.18.1.0/24, action: deny}\n"
	"  - {name: allowed, cidr: 198.18.1.128/25, action: allow}\n"
	"  - {name: limit, cidr: 198.18.2.0/24, pps: 1, burst: 3}\n"
	"  - {name: monitor, cidr: 198.18.3.0/24, action: monitor, pps: 1,"
	" burst: 2}\n"
	"  - {name: banning, cidr: 198.18.4.0/24, pps: 1, burst: 2, ban: 1h}\n"
	"  - {name: brief, cidr: 198.18.5.0/24, pps: 1000, burst: 1,"
	" ban: 1ms}\n"
	"  - {name: lingering, cidr: 198.18.12.0/24, pps: 1, burst: 1,"
	" ban: 1ms}\n"
	"  - {name: l4-plain, cidr: 198.18.7.0/24, pps: 1, burst: 2}\n"
	"  - {name: l4-ssh, cidr: 198.18.7.0/24, proto: tcp, dport: 22,"
	" action: deny}\n"
	"  - {name: l4-denied, cidr: 198.18.8.0/24, action: deny}\n"
	"  - {name: l4-web, cidr: 198.18.8.0/24, proto: tcp, dport: 443,"
	" action: allow}\n"
	"  - name: levels\n    cidr: 198.18.10.0/23\n    pps: 100\n"
	"    burst: 100\n    levels: [{prefix: 24, pps: 1, burst: 2}]\n"
	"  - {name: v6-deny, cidr: 'fd00:1::/32', action: deny}\n"
	"  - {name: v6-allowed, cidr: 'fd00:1:1::/48', action: allow}\n"
	"  - {name: v6-limit, cidr: 'fd00:2::/32', pps: 1, burst: 2}\n"
	"  - {name: v6-monitor, cidr: 'fd00:3::/32', action: monitor, pps: 1,"
	" burst: 1}\n"
	"  - {name: v6-banning, cidr: 'fd00:4::/32', pps: 1, burst: 1,"
	" ban: 1h}\n"
	"  - {name: syn-plain, cidr: 198.18.13.0/24, action: allow}\n"
	"  - {name: syn-limit, cidr: 198.18.13.0/24, proto: tcp,"
	" tcp_flags: syn, pps: 1, burst: 1}\n"
	"  - {name: v6-plain, cidr: 'fd00:5::/32', action: allow}\n"
	"  - {name: v6-dns, cidr: 'fd00:5::/32', proto: udp, dport: 53,"
	" action: deny}\n";

static const struct judge_case judge_cases[] = {
	{ "no rule: the default allows", NULL, NULL, 0, "198.18.0.1" },
	{ "no rule, IPv6", NULL, NULL, 0, "fd00:ff::1" },
	{ "deny", NULL, NULL, 0, "198.18.1.5" },
	{ "a longer allow inside a deny", NULL, NULL, 0, "198.18.1.200" },
	{ "deny, IPv6", NULL, NULL, 0, "fd00:1::5" },
	{ "a longer allow inside a deny, IPv6", NULL, NULL, 0,
	  "fd00:1:1::5" },
	{ "limit: a new source", NULL, NULL, 0, "198.18.2.1" },
	{ "limit: tokens left", NULL, "198.18.2.2", 1, "198.18.2.2" },
	{ "limit: its burst spent", NULL, "198.18.2.3", 3, "198.18.2.3" },
	{ "limit: forgotten by reset", "reset 198.18.2.3", NULL, 0,
	  "198.18.2.3" },
	{ "limit, IPv6: its burst spent", NULL, "fd00:2::1", 2, "fd00:2::1" },
	{ "limit, IPv6: another source of the same /64 key", NULL, NULL, 0,
	  "fd00:2::2" },
	{ "limit, IPv6: a new source", NULL, NULL, 0, "fd00:2:0:1::1" },
	{ "monitor: within", NULL, NULL, 0, "198.18.3.1" },
	{ "monitor: over, passed", NULL, "198.18.3.2", 2, "198.18.3.2" },
	{ "monitor, IPv6: over", NULL, "fd00:3::1", 1, "fd00:3::1" },
	{ "rule ban: banned", NULL, "198.18.4.1", 3, "198.18.4.1" },
	{ "rule ban: a neighbour within", NULL, "198.18.4.2", 1,
	  "198.18.4.2" },
	{ "rule ban, IPv6: banned", NULL, "fd00:4::1", 2, "fd00:4::1" },
	{ "rule ban ended, tokens back", NULL, "198.18.5.1", 2,
	  "198.18.5.1" },
	{ "rule ban ended, still over", NULL, "198.18.12.1", 2,
	  "198.18.12.1" },
	{ "levels: a source within", NULL, "198.18.10.1", 1, "198.18.10.1" },
	{ "levels: the subnet's level spent", NULL, "198.18.10.2", 1,
	  "198.18.10.3" },
	{ "levels: another subnet", NULL, NULL, 0, "198.18.11.1" },
	{ "L4 rules of another protocol: the plain rule", NULL, NULL, 0,
	  "198.18.7.1" },
	{ "L4 rules of another protocol: the plain rule over", NULL,
	  "198.18.7.2", 2, "198.18.7.2" },
	{ "L4 allow beside a deny: the deny", NULL, NULL, 0, "198.18.8.1" },
	{ "IPv4-mapped", NULL, NULL, 0, "::ffff:198.18.2.9" },
	{ "IPv4-compatible", NULL, NULL, 0, "::198.18.0.1" },
	{ "loopback ::1 is IPv6", NULL, NULL, 0, "::1" },
	{ "ban by hand", "ban 198.18.9.0/24", NULL, 0, "198.18.9.1" },
	{ "a neighbour of a ban by hand", NULL, NULL, 0, "198.18.19.1" },
	{ "ban by hand over an allow rule", "ban 198.18.1.200", NULL, 0,
	  "198.18.1.200" },
	{ "ban by hand over a limit rule's bucket", "ban 198.18.2.0/24",
	  NULL, 0, "198.18.2.2" },
	{ "ban by hand, IPv6, timed", "ban fd00:9::/48 --for 1h", NULL, 0,
	  "fd00:9::1" },
	{ "ban by hand ended", "ban 198.18.21.0/24 --for 1ms", NULL, 0,
	  "198.18.21.1" },
	{ "ban by hand lifted", "unban 198.18.9.0/24", NULL, 0,
	  "198.18.9.1" },
};

static const struct l4_case l4_cases[] = {
	{ "an L4 deny takes its port", "198.18.7.3",
	  "--proto tcp --dport 22 --syn", PACKET_TCP_SYN, 22 },
	{ "an L4 deny, another port: the plain rule", "198.18.7.4",
	  "--proto tcp --dport 23", PACKET_TCP_ACK, 23 },
	{ "an L4 allow beside a deny takes its port", "198.18.8.2",
	  "--proto tcp --dport 443", PACKET_TCP_ACK, 443 },
	{ "an L4 allow, UDP to its port: the deny", "198.18.8.3",
	  "--proto udp --dport 443", PACKET_UDP, 443 },
	{ "an L4 limit of SYNs, a new source", "198.18.13.1",
	  "--proto tcp --dport 80 --syn", PACKET_TCP_SYN, 80 },
	{ "an L4 limit of SYNs, its burst spent", "198.18.13.1",
	  "--proto tcp --dport 80 --syn", PACKET_TCP_SYN, 80 },
	{ "an L4 limit of SYNs: an ACK is the plain allow", "198.18.13.1",
	  "--proto tcp --dport 80", PACKET_TCP_ACK, 80 },
	{ "an L4 rule of UDP on IPv6", "fd00:5::1",
	  "--proto udp --dport 53", PACKET_UDP, 53 },
	{ "IPv6, UDP to another port: the plain rule", "fd00:5::2",
	  "--proto udp --dport 54", PACKET_UDP, 54 },
};

/* The verdict whose counter the frame moved, or XRL_VERDICT_COUNT. */
static enum xrl_verdict verdict_counted(const uint64_t before[])
{
	enum xrl_verdict v, moved = XRL_VERDICT_COUNT;

	for (v = 0; v < XRL_VERDICT_COUNT; v++)
		if (fixture_count(&env.dp, v) != before[v]) {
			cr_assert_eq(moved, XRL_VERDICT_COUNT, "two counted");
			moved = v;
		}
	return moved;
}

/* The program's clock where explain's is (CLOCK_MONOTONIC), @back_ns
 * behind it. */
static void program_clock(__u64 back_ns)
{
	xrl_datapath_set_time(&env.dp, xrl_clock_ns(CLOCK_MONOTONIC) -
				       back_ns);
}

/* explain @addr (with @args), then the program judges @pkt from it: the
 * "next packet:" line names the verdict and the counter it moved. */
static void judge(const char *what, const char *addr, const char *args,
		  const struct packet *pkt)
{
	uint64_t before[XRL_VERDICT_COUNT];
	char expect[128];
	enum xrl_verdict v;
	int verdict;

	explain_with(addr, args);
	program_clock(0);
	for (v = 0; v < XRL_VERDICT_COUNT; v++)
		before[v] = fixture_count(&env.dp, v);
	verdict = fixture_run(&env.dp, pkt);
	v = verdict_counted(before);
	cr_assert_neq(v, XRL_VERDICT_COUNT, "%s: nothing counted", what);
	snprintf(expect, sizeof(expect), "next packet: %s, counted as %s",
		 verdict == XDP_PASS ? "passed" : "dropped",
		 xrl_verdict_name(v));
	cr_assert(strstr(out, expect), "%s (%s): the program: \"%s\"; "
		  "explain:\n%s", what, addr, expect, out);
}

static void judge_one(const struct judge_case *c)
{
	struct packet pkt;
	int i;

	if (c->cli)
		cr_assert_eq(env_cli(&env, out, sizeof(out), c->cli, true), 0,
			     "%s: %s: %s", c->what, c->cli, out);
	/* Frames sent 10 ms ago: a 1 ms ban they start has ended now. */
	program_clock(10 * XRL_NS_PER_MS);
	for (i = 0; c->send && i < c->n_sent; i++)
		verdict_of(c->send);
	cr_assert_eq(packet_from(&pkt, c->addr), 0, "%s", c->addr);
	judge(c->what, c->addr, NULL, &pkt);
}

static void judge_l4(const struct l4_case *c)
{
	struct packet pkt = packet_l4(c->addr, c->kind, 40000, c->dport);

	cr_assert_gt(pkt.len, 0, "%s", c->addr);
	judge(c->what, c->addr, c->args, &pkt);
}

Test(explain, says_the_verdict_the_program_gives_the_same_frame)
{
	size_t i;

	env_write(&env, NULL, judge_policy);
	daemon_start(&env, NULL);
	cr_assert_geq(sizeof(judge_cases) / sizeof(judge_cases[0]) +
		      sizeof(l4_cases) / sizeof(l4_cases[0]), 30);
	for (i = 0; i < sizeof(l4_cases) / sizeof(l4_cases[0]); i++)
		judge_l4(&l4_cases[i]);
	for (i = 0; i < sizeof(judge_cases) / sizeof(judge_cases[0]); i++)
		judge_one(&judge_cases[i]);
}

/* ---- blocklists: after the bans by hand, before every rule ------------- */

static char watch_path[PATH_MAX + 16], drop_path[PATH_MAX + 16];

/* A monitor list before a deny list, a deny rule where the monitor list
 * is, the default allowing. 198.18.70.5 is in both lists; 198.18.72.9 is
 * in the deny list twice, as itself and in its /24. */
static void start_with_blocklists(void)
{
	char yaml[2 * PATH_MAX + 256];

	snprintf(watch_path, sizeof(watch_path), "%s/watch.txt", env.dir);
	snprintf(drop_path, sizeof(drop_path), "%s/drop.txt", env.dir);
	fixture_write_file(watch_path, "198.18.71.0/24\n198.18.70.5\n");
	fixture_write_file(drop_path, "198.18.70.0/24\nfd00:70::/48\n"
			   "198.18.72.9\n198.18.72.0/24\n");
	snprintf(yaml, sizeof(yaml),
		 "ipv4_mapped: drop\n"
		 "default: {action: allow}\n"
		 "rules:\n  - {name: watched, cidr: 198.18.71.0/24, "
		 "action: deny}\n"
		 "blocklists:\n"
		 "  - {name: watch, file: %s, action: monitor}\n"
		 "  - {name: drop, file: %s}\n", watch_path, drop_path);
	env_write(&env, NULL, yaml);
	daemon_start(&env, NULL);
}

/* explain @addr, and the program judges its frame: the same verdict. */
static void judge_addr(const char *what, const char *addr)
{
	struct packet pkt;

	cr_assert_eq(packet_from(&pkt, addr), 0, "%s", addr);
	judge(what, addr, NULL, &pkt);
}

Test(explain, a_source_in_a_deny_blocklist_is_dropped_as_blocklisted)
{
	start_with_blocklists();
	judge_addr("a deny list", "198.18.70.9");
	cr_assert_str_eq(out, "198.18.70.9: in blocklist drop "
			 "(198.18.70.0/24), deny: before any rule\n"
			 "next packet: dropped, counted as blocklisted\n");
	judge_addr("a deny list, IPv6", "fd00:70::1");
	cr_assert_str_eq(out, "fd00:70::1: in blocklist drop (fd00:70::/48), "
			 "deny: before any rule\n"
			 "next packet: dropped, counted as blocklisted\n");
	/* Listed as itself and in its /24: the /24 is named. */
	judge_addr("a deny list holding it twice", "198.18.72.9");
	cr_assert(strstr(out, "198.18.72.9: in blocklist drop "
			      "(198.18.72.0/24), deny: before any rule\n"),
		  "%s", out);
	/* A monitor list and then a deny list: counted by both, dropped. */
	judge_addr("a monitor list, then a deny list", "198.18.70.5");
	cr_assert_str_eq(out, "198.18.70.5: in blocklist watch "
			 "(198.18.70.5/32), monitor: counted as its hit, "
			 "then judged by the rules\n"
			 "198.18.70.5: in blocklist drop (198.18.70.0/24), "
			 "deny: before any rule\n"
			 "next packet: dropped, counted as blocklisted\n");
	/* The program's order: the IPv4-mapped drop, then a ban by hand,
	 * before the lists. */
	judge_addr("IPv4-mapped, of a listed address", "::ffff:198.18.70.9");
	cr_assert_null(strstr(out, "blocklist"), "%s", out);
	cr_assert_eq(env_cli(&env, out, sizeof(out), "ban 198.18.70.9", true),
		     0, "%s", out);
	judge_addr("a ban by hand over a deny list", "198.18.70.9");
	cr_assert(strstr(out, "198.18.70.9: banned by hand (198.18.70.9/32, "
			      "until unban"), "%s", out);
	cr_assert_null(strstr(out, "blocklist"), "%s", out);
}

Test(explain, a_source_in_a_monitor_blocklist_is_judged_by_its_rule)
{
	start_with_blocklists();
	judge_addr("a monitor list over a deny rule", "198.18.71.3");
	cr_assert(strstr(out, "198.18.71.3: in blocklist watch "
			      "(198.18.71.0/24), monitor: counted as its hit, "
			      "then judged by the rules\n198.18.71.3: rule "),
		  "%s", out);
	cr_assert(strstr(out, " (198.18.71.0/24), deny\n"), "%s", out);
	cr_assert(strstr(out, "next packet: dropped, counted as deny\n"),
		  "%s", out);
	/* The program counted the frame as the list's hit. */
	cr_assert_eq(env_cli(&env, out, sizeof(out), "status", true), 0, "%s",
		     out);
	cr_assert(strstr(out, "  watch            monitor  2 of 1048576 "
			      "entries, 1 hits\n"), "%s", out);
}

Test(explain, a_source_no_blocklist_holds_is_explained_as_before)
{
	start_with_blocklists();
	judge_addr("no list", "198.18.73.1");
	cr_assert_str_eq(out, "198.18.73.1: rule 0 (default: no other rule "
			 "holds it), allow\n"
			 "no bucket: allow rules judge without one\n"
			 "next packet: passed, counted as allow\n");
	judge_addr("no list, IPv6", "fd00:71::1");
	cr_assert_null(strstr(out, "blocklist"), "%s", out);
}

Test(explain, follows_a_blocklist_reloaded_alone)
{
	start_with_blocklists();
	judge_addr("the deny list before", "198.18.70.9");
	cr_assert(strstr(out, "in blocklist drop (198.18.70.0/24)"), "%s",
		  out);
	fixture_write_file(drop_path, "198.18.73.0/24\n");
	cr_assert_eq(env_cli(&env, out, sizeof(out), "blocklist reload drop",
			     true), 0, "%s", out);
	judge_addr("out of the reloaded list", "198.18.70.9");
	cr_assert_str_eq(out, "198.18.70.9: rule 0 (default: no other rule "
			 "holds it), allow\n"
			 "no bucket: allow rules judge without one\n"
			 "next packet: passed, counted as allow\n");
	judge_addr("into the reloaded list", "198.18.73.1");
	cr_assert_str_eq(out, "198.18.73.1: in blocklist drop "
			 "(198.18.73.0/24), deny: before any rule\n"
			 "next packet: dropped, counted as blocklisted\n");
	/* A list reloaded empty holds nothing. */
	fixture_write_file(watch_path, "# nothing\n");
	cr_assert_eq(env_cli(&env, out, sizeof(out), "blocklist reload watch",
			     true), 0, "%s", out);
	judge_addr("the monitor list emptied", "198.18.71.3");
	cr_assert_null(strstr(out, "blocklist"), "%s", out);
	cr_assert(strstr(out, "next packet: dropped, counted as deny\n"),
		  "%s", out);
}

/* A packet explain cannot build is refused in one line, naming it. */
Test(explain, a_bad_packet_is_one_line)
{
	static const struct {
		const char *args, *error;
	} bad[] = {
		{ "explain 198.18.1.1 --dport 22",
		  "xdp-ratelimit: explain: --sport, --dport and --syn need "
		  "--proto\n" },
		{ "explain 198.18.1.1 --proto sctp",
		  "xdp-ratelimit: explain: --proto sctp: not one of tcp, udp, "
		  "icmp, icmpv6\n" },
		{ "explain 198.18.1.1 --proto tcp --dport 1-9",
		  "xdp-ratelimit: explain: --dport 1-9: not a port (0 to "
		  "65535)\n" },
		{ "explain 198.18.1.1 --proto icmp --dport 9",
		  "xdp-ratelimit: explain: --proto icmp has no ports\n" },
		{ "explain 198.18.1.1 --proto udp --syn",
		  "xdp-ratelimit: explain: --proto udp has no --syn\n" },
	};
	size_t i;

	start_with("drop");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(env_cli(&env, out, sizeof(out), bad[i].args,
				     false), 1, "%s: %s", bad[i].args, out);
		cr_assert_str_eq(out, bad[i].error);
	}
}
