// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * explain says what the data path does: for IPv6 sources that name an
 * IPv4 address (IPv4-mapped ::ffff:0:0/96, IPv4-compatible ::/96), and
 * their neighbours that do not, its line is compared with the verdict
 * BPF_PROG_TEST_RUN gives a frame from the same source, under both
 * ipv4_mapped settings. The IPv4 rule of the policy denies, the default
 * allows: an explain that read such a source as the IPv4 address would
 * name the deny rule.
 */
#include <stdio.h>
#include <string.h>
#include <linux/bpf.h>
#include <criterion/criterion.h>
#include "daemon.h"
#include "fixture.h"
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

static void explain(const char *addr)
{
	char args[128];

	snprintf(args, sizeof(args), "explain %s", addr);
	cr_assert_eq(env_cli(&env, out, sizeof(out), args, false), 0, "%s: %s",
		     addr, out);
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
