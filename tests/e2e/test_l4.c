// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * End to end, L4 rules (docs/POLICY.md "Protocols and ports"): real TCP
 * frames from one source cross the veth pair, the built CLI attached the
 * program; its SYN flood is limited by the SYN rule while its
 * established traffic (ACK segments) all arrives, on the wire and in the
 * program's counters. Slow limits, bursts sent in well under a second
 * (test_e2e.c): the clock cannot be controlled here.
 */
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <criterion/criterion.h>
#include <jansson.h>
#include "topo.h"
#include "wire.h"

#define QUIET_MS 150
#define ROUNDS 10
#define PER_ROUND 20	/* SYNs and ACKs each, per round */
#define SYN_BURST 20

static struct topo topo;
static struct wire_rx rx;
static char out[65536], err[4096];

static void setup(void)
{
	topo_create(&topo);
	rx.fd = -1;
}

static void teardown(void)
{
	wire_rx_close(&rx);
	topo_destroy(&topo);
}

TestSuite(e2e_l4, .init = setup, .fini = teardown, .timeout = 120);

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static const char syn_policy[] =
	"default:\n"
	"  action: allow\n"
	"rules:\n"
	"  - name: syn-flood\n"
	"    cidr: 198.18.1.0/24\n"
	"    proto: tcp\n"
	"    tcp_flags: syn\n"
	"    pps: 1\n"
	"    burst: 20\n"
	"  - name: clients\n"
	"    cidr: 198.18.1.0/24\n"
	"    pps: 100k\n"
	"    burst: 100k\n";

/* A TCP segment from @src: a SYN, or an ACK of an established flow. */
static void tcp_frame(struct packet *pkt, const char *src, bool syn)
{
	struct packet_spec spec = { .src = src, .tcp = 1, .frame_len = 80 };
	size_t flags = packet_ip_offset(0) + 20 + 13;

	cr_assert_eq(packet_build(pkt, &spec), 0);
	pkt->data[flags] = syn ? 0x02 : 0x10;
}

static json_t *stats_json(void)
{
	json_error_t jerr;
	json_t *json;

	cr_assert_eq(topo_cli(&topo, out, sizeof(out), err, sizeof(err),
			      "stats --json"), 0, "stats: %s", err);
	json = json_loads(out, 0, &jerr);
	cr_assert_not_null(json, "%s", jerr.text);
	return json;
}

/* A rule's counter, by its match ("" for the plain rule). */
static uint64_t rule_counter(json_t *stats, const char *match,
			     const char *outcome)
{
	json_t *rule, *m;
	size_t i;

	json_array_foreach(json_object_get(stats, "rules"), i, rule) {
		m = json_object_get(rule, "match");
		if (strcmp(json_string_value(json_object_get(rule, "prefix")),
			   "198.18.1.0/24") ||
		    strcmp(m ? json_string_value(m) : "", match))
			continue;
		return json_integer_value(json_object_get(
			json_object_get(rule, outcome), "packets"));
	}
	cr_assert_fail("no rule for 198.18.1.0/24 \"%s\"", match);
	return 0;
}

Test(e2e_l4, a_syn_flood_is_limited_while_the_sources_established_traffic_passes)
{
	struct packet syn, ack;
	uint64_t got, syn_passed, most;
	double start, elapsed;
	FILE *f;
	char path[64];
	json_t *stats;
	int i;

	snprintf(path, sizeof(path), "/tmp/" TOPO_PREFIX "%d-l4.yaml",
		 topo.pid);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(syn_policy, f);
	fclose(f);
	cr_assert_eq(topo_cli(&topo, out, sizeof(out), err, sizeof(err),
			      "attach %s --policy %s", topo.if_rx, path), 0,
		     "attach: %s", err);
	tcp_frame(&syn, "198.18.1.1", true);
	tcp_frame(&ack, "198.18.1.1", false);
	wire_rx_open(&rx, &topo);
	start = now_s();
	for (i = 0; i < ROUNDS; i++) {
		wire_send_frame(&topo, &ack, PER_ROUND);
		wire_send_frame(&topo, &syn, PER_ROUND);
	}
	wire_rx_drain(&rx, QUIET_MS);
	elapsed = now_s() - start;

	stats = stats_json();
	syn_passed = rule_counter(stats, "tcp syn", "passed");
	most = SYN_BURST + (uint64_t)(1 * elapsed);
	cr_assert(syn_passed >= SYN_BURST && syn_passed <= most,
		  "SYNs passed %llu, expected %d..%llu (%.3f s)",
		  (unsigned long long)syn_passed, SYN_BURST,
		  (unsigned long long)most, elapsed);
	cr_assert_eq(rule_counter(stats, "tcp syn", "dropped"),
		     ROUNDS * PER_ROUND - syn_passed);
	cr_assert_eq(rule_counter(stats, "", "passed"), ROUNDS * PER_ROUND,
		     "every ACK is the plain rule's, and passed");
	cr_assert_eq(rule_counter(stats, "", "dropped"), 0);
	/* The wire agrees: all ACKs and the admitted SYNs arrived. */
	got = wire_rx_count(&rx, "198.18.1.1");
	cr_assert_eq(got, ROUNDS * PER_ROUND + syn_passed,
		     "received %llu", (unsigned long long)got);
	json_decref(stats);
}
