// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The commands of a bad day, on real frames over the veth pair: explain
 * a source after a known number of packets (its rule, its bucket key,
 * the tokens left and the time until full), and reset a prefix, after
 * which its limited source gets its burst back while a source outside
 * the prefix stays limited.
 *
 * Limits are slow (1 packet/s) so that the few seconds of a run refill
 * a known, small amount: what the checks allow for is rate * elapsed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <criterion/criterion.h>
#include "topo.h"
#include "wire.h"

#define QUIET_MS 150

static struct topo topo;
static struct wire_rx rx;
static char out[16384], err[4096];

static const char policy[] =
	"default:\n  action: allow\n"
	"rules:\n"
	"  - name: limited\n    cidr: 198.18.1.0/24\n    pps: 1\n"
	"    burst: 20\n"
	"  - name: other\n    cidr: 198.18.2.0/24\n    pps: 1\n"
	"    burst: 20\n"
	"  - name: v6\n    cidr: fd00:7::/48\n    pps: 1\n    burst: 20\n"
	"  - name: levelled\n    cidr: 198.18.4.0/23\n    pps: 1\n"
	"    burst: 20\n    levels: [{prefix: 24, pps: 1, burst: 30}]\n";

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void setup(void)
{
	topo_create(&topo);
	rx.fd = -1;
	topo_attach_policy(&topo, policy);
	wire_rx_open(&rx, &topo);
}

static void teardown(void)
{
	wire_rx_close(&rx);
	topo_destroy(&topo);
}

TestSuite(ops, .init = setup, .fini = teardown, .timeout = 120);

static void cli_ok(const char *args)
{
	cr_assert_eq(topo_cli(&topo, out, sizeof(out), err, sizeof(err), "%s",
			      args), 0, "%s: %s", args, err);
}

/* "  packets: T of 20 tokens left, full in S s" */
static void tokens_of(double *tokens, double *full_in)
{
	const char *line = strstr(out, "  packets: ");

	cr_assert_not_null(line, "%s", out);
	cr_assert_eq(sscanf(line, "  packets: %lf of 20 tokens left, full in "
			    "%lf s", tokens, full_in), 2, "%s", line);
}

Test(ops, explain_shows_rule_key_and_tokens_after_known_packets)
{
	double start, elapsed, tokens, full_in;

	start = now_s();
	wire_send(&topo, "198.18.1.7", 12);
	wire_rx_drain(&rx, QUIET_MS);
	cr_assert_eq(wire_rx_count(&rx, "198.18.1.7"), 12);

	cli_ok("explain 198.18.1.7");
	elapsed = now_s() - start;
	cr_assert(!strncmp(out, "198.18.1.7: rule 1 (198.18.1.0/24), limit, "
			   "pps ", 44), "%s", out);
	cr_assert(strstr(out, "\nbucket key: 198.18.1.7/32, rule 1\n"
			 "bucket: last seen "), "%s", out);
	cr_assert(strstr(out, "\nnever refused under its rule: no counts "
			 "kept\n"), "%s", out);
	/* 20 - 12 left, plus what 1 pps refilled since the first packet. */
	tokens_of(&tokens, &full_in);
	cr_assert(tokens >= 8 - 0.05 && tokens <= 8 + elapsed + 0.05,
		  "%.3f tokens after 12 of 20 in %.3f s", tokens, elapsed);
	/* Empty tokens come back at 1 per second. */
	cr_assert(full_in > (20 - tokens) - 0.05 &&
		  full_in < (20 - tokens) + 0.05, "full in %.3f s, %.3f left",
		  full_in, tokens);

	/* Spent: what is left is under one packet. */
	wire_send(&topo, "198.18.1.7", 40);
	wire_rx_drain(&rx, QUIET_MS);
	cli_ok("explain 198.18.1.7");
	tokens_of(&tokens, &full_in);
	cr_assert_lt(tokens, 1, "%s", out);
	cr_assert(strstr(out, "\nsince its first refusal: "), "%s", out);
	cr_assert_not(strstr(out, " 0 dropped"), "%s", out);
}

Test(ops, explain_without_a_bucket_and_outside_every_limit)
{
	cli_ok("explain 198.18.1.99");
	cr_assert(strstr(out, "\nbucket key: 198.18.1.99/32, rule 1\n"
			 "bucket: none (not seen, forgotten or evicted)"),
		  "%s", out);
	cli_ok("explain 198.18.9.1");
	cr_assert_str_eq(out, "198.18.9.1: rule 0 (default: no other rule "
			 "holds it), allow\nno bucket: allow rules judge "
			 "without one\nnext packet: passed, counted as "
			 "allow\n");
	cli_ok("explain fd00:8::1:2");
	cr_assert(strstr(out, "rule 0 (default"), "%s", out);
	cr_assert_neq(topo_cli(&topo, out, sizeof(out), err, sizeof(err),
			       "explain 198.18.1.0/24"), 0);
	cr_assert_str_eq(err, "xdp-ratelimit: explain: 198.18.1.0/24: not an "
			 "IPv4 or IPv6 address\n");
}

Test(ops, reset_gives_a_limited_prefix_its_burst_back_and_only_it)
{
	double start, elapsed;
	uint64_t got;

	start = now_s();
	wire_send(&topo, "198.18.1.7", 40);
	wire_send(&topo, "198.18.2.7", 40);
	wire_rx_drain(&rx, QUIET_MS);
	cr_assert_geq(wire_rx_count(&rx, "198.18.1.7"), 20);
	cr_assert_geq(wire_rx_count(&rx, "198.18.2.7"), 20);

	cli_ok("reset 198.18.1.0/24");
	cr_assert_str_eq(out, "198.18.1.0/24: forgot 1 bucket\n");
	cli_ok("explain 198.18.1.7");
	cr_assert(strstr(out, "bucket: none"), "%s", out);

	wire_rx_close(&rx);
	wire_rx_open(&rx, &topo);
	wire_send(&topo, "198.18.1.7", 40);
	wire_send(&topo, "198.18.2.7", 40);
	wire_rx_drain(&rx, QUIET_MS);
	elapsed = now_s() - start;
	/* The reset source: a whole new burst; the other: its rate. */
	got = wire_rx_count(&rx, "198.18.1.7");
	cr_assert(got >= 20 && got <= 20 + elapsed + 1, "reset source got "
		  "%llu in %.3f s", (unsigned long long)got, elapsed);
	got = wire_rx_count(&rx, "198.18.2.7");
	cr_assert_leq(got, elapsed + 1, "the other source got %llu in %.3f s",
		      (unsigned long long)got, elapsed);

	/* A bare address is its /32; nothing there now is not an error. */
	cli_ok("reset 198.18.3.1");
	cr_assert_str_eq(out, "198.18.3.1: forgot 0 buckets\n");
	cr_assert_neq(topo_cli(&topo, out, sizeof(out), err, sizeof(err),
			       "reset 198.18.1.1/24"), 0);
	cr_assert_str_eq(err, "xdp-ratelimit: reset: 198.18.1.1/24: host bits "
			 "set after the prefix length\n");
}

Test(ops, ipv6_sources_share_their_64s_bucket_in_explain_and_reset)
{
	double tokens, full_in;

	wire_send(&topo, "fd00:7::1", 25);
	wire_rx_drain(&rx, QUIET_MS);
	cr_assert_geq(wire_rx_count(&rx, "fd00:7::1"), 20);
	/* Another address of the same /64: the same bucket. */
	cli_ok("explain fd00:7::5");
	cr_assert(strstr(out, "fd00:7::5: rule 3 (fd00:7::/48), limit"), "%s",
		  out);
	cr_assert(strstr(out, "\nbucket key: fd00:7::/64, rule 3\nbucket: "),
		  "%s", out);
	tokens_of(&tokens, &full_in);
	cr_assert_lt(tokens, 5, "%s", out);
	/* A /128 inside the /64 forgets the /64's bucket. */
	cli_ok("reset fd00:7::9");
	cr_assert_str_eq(out, "fd00:7::9: forgot 1 bucket\n");
	cli_ok("explain fd00:7::1");
	cr_assert(strstr(out, "bucket: none"), "%s", out);
}

/* "  packets: T of 30 tokens left" of the level's bucket. */
static double level_tokens(void)
{
	const char *line = strstr(out, "level 1: ");
	double tokens;

	cr_assert_not_null(line, "%s", out);
	line = strstr(line, "  packets: ");
	cr_assert_not_null(line, "%s", out);
	cr_assert_eq(sscanf(line, "  packets: %lf of 30 tokens left", &tokens),
		     1, "%s", line);
	return tokens;
}

/*
 * A rule with a /24 level: explain shows the level's bucket beside the
 * source's (24 packets of two sources taken from its 30); a third
 * source's flood is refused by the level, which explain counts; reset
 * of one source leaves the /24's bucket, reset of the /24 forgets it.
 */
Test(ops, explain_and_reset_know_a_rules_levels)
{
	double start, elapsed, tokens;
	unsigned refused;
	const char *line;

	start = now_s();
	wire_send(&topo, "198.18.4.7", 12);
	wire_send(&topo, "198.18.4.8", 12);
	wire_rx_drain(&rx, QUIET_MS);
	cr_assert_eq(wire_rx_count(&rx, "198.18.4.7"), 12);
	cr_assert_eq(wire_rx_count(&rx, "198.18.4.8"), 12);
	cli_ok("explain 198.18.4.7");
	elapsed = now_s() - start;
	cr_assert(strstr(out, "\nbucket key: 198.18.4.7/32, rule 4\n"
			 "bucket: last seen "), "%s", out);
	cr_assert(strstr(out, "\nnever refused under its rule: no counts "
			 "kept\n"), "%s", out);
	cr_assert(strstr(out, "\nlevel 1: 198.18.4.0/24, shared by the "
			 "rule's sources in it\n  bucket: 0 refused by this "
			 "level\n"), "%s", out);
	tokens = level_tokens();
	cr_assert(tokens >= 6 - 0.05 && tokens <= 6 + elapsed + 0.05,
		  "%.3f tokens of the /24 after 24 of 30", tokens);

	wire_send(&topo, "198.18.4.9", 20);
	wire_rx_drain(&rx, QUIET_MS);
	cr_assert_lt(wire_rx_count(&rx, "198.18.4.9"), 20);
	cli_ok("explain 198.18.4.9");
	line = strstr(out, "  bucket: ");
	cr_assert_not_null(line, "%s", out);
	cr_assert_eq(sscanf(line, "  bucket: %u refused by this level",
			    &refused), 1, "%s", out);
	cr_assert_eq(refused, 20 - wire_rx_count(&rx, "198.18.4.9"), "%s",
		     out);

	cli_ok("reset 198.18.4.7");
	cr_assert_str_eq(out, "198.18.4.7: forgot 1 bucket\n");
	cli_ok("explain 198.18.4.8");
	cr_assert_lt(level_tokens(), 1, "%s", out);
	cli_ok("reset 198.18.4.0/24");
	cr_assert_str_eq(out, "198.18.4.0/24: forgot 3 buckets\n");
	cli_ok("explain 198.18.4.8");
	cr_assert(strstr(out, "\nlevel 1: 198.18.4.0/24, shared by the "
			 "rule's sources in it\n  bucket: none yet: full\n"),
		  "%s", out);
}
