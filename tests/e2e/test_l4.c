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
#include <unistd.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <criterion/criterion.h>
#include <jansson.h>
#include "topo.h"
#include "frag.h"
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

/*
 * Fail closed on the wire (docs/POLICY.md "Fragments and header
 * chains"): the crafted frames of issue 21 cross the veth, Linux
 * reassembles behind the program, and what reaches the receiver's
 * sockets is counted: half-open connections (SYN-RECV) of a TCP
 * listener, datagrams of a UDP socket. First without the program, to
 * show that Linux takes each frame; then with it.
 */
#define FRAG_FRAMES 10
#define DENIED_TCP 2222
#define DENIED_UDP 9999
#define ALLOWED_UDP 5353

static const char deny_policy[] =
	"default:\n"
	"  action: allow\n"
	"rules:\n"
	"  - name: tcp\n    cidr: 0.0.0.0/0\n    proto: tcp\n"
	"    dport: 2222\n    action: deny\n"
	"  - name: udp\n    cidr: 0.0.0.0/0\n    proto: udp\n"
	"    dport: 9999\n    action: deny\n";

static void attach_policy(const char *yaml)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/" TOPO_PREFIX "%d-frag.yaml",
		 topo.pid);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(yaml, f);
	fclose(f);
	cr_assert_eq(topo_cli(&topo, out, sizeof(out), err, sizeof(err),
			      "attach %s --policy %s", topo.if_rx, path), 0,
		     "attach: %s", err);
}

/* One row of the table: @spec's packet cut at @cuts, sent FRAG_FRAMES
 * times (each a new flow: its own id and source port). */
struct frag_row {
	const char *what;
	struct frag_spec spec;
	size_t cuts[2];
	int n_cuts;
};

/* Sends @row, its ids and source ports moved by @shift (so that runs of
 * one row never count each other's); returns what reached the receiver:
 * half-open connections for TCP, datagrams on @udp_fd for UDP. */
static unsigned send_row(const struct frag_row *row, int udp_fd,
			 unsigned shift)
{
	struct packet frames[FRAG_MAX_PIECES];
	struct frag_spec spec = row->spec;
	uint16_t first = row->spec.sport + shift;
	int i, j, n;

	for (i = 0; i < FRAG_FRAMES; i++) {
		spec.id = row->spec.id + shift + i;
		spec.sport = first + i;
		n = frag_build(&spec, row->cuts, row->n_cuts, frames);
		cr_assert_eq(n, row->n_cuts + 1, "%s", row->what);
		for (j = 0; j < n; j++)
			wire_send_frame(&topo, &frames[j], 1);
	}
	if (spec.proto == IPPROTO_UDP)
		return wire_udp_drain(udp_fd, QUIET_MS);
	usleep(QUIET_MS * 1000);
	return wire_half_open(&topo, spec.dport, first,
			      first + FRAG_FRAMES - 1);
}

#define V4_SRC "198.18.0.10"	/* on the veth's link, no such host */
#define V6_SRC "fd00:5::10"
#define V4_DST "198.18.0.2"
#define V6_DST "fd00:5::2"

static const struct frag_row bypass_rows[] = {
	{ .what = "IPv4 TCP SYN to 2222, whole",
	  .spec = { .src = V4_SRC, .dst = V4_DST, .proto = IPPROTO_TCP,
	    .sport = 41000, .dport = DENIED_TCP, .id = 1000 } },
	{ .what = "IPv6 UDP to 9999 behind 1 destination-options header",
	  .spec = { .src = V6_SRC, .dst = V6_DST, .proto = IPPROTO_UDP,
	    .sport = 42000, .dport = DENIED_UDP, .payload = 32,
	    .n_ext = 1, .id = 2000 } },
	{ .what = "IPv4 TCP SYN to 2222 in two fragments, 8 bytes of TCP first",
	  .spec = { .src = V4_SRC, .dst = V4_DST, .proto = IPPROTO_TCP,
	    .sport = 43000, .dport = DENIED_TCP, .id = 3000 }, .cuts = { 8 }, .n_cuts = 1 },
	{ .what = "IPv6 UDP to 9999 behind 9 destination-options headers",
	  .spec = { .src = V6_SRC, .dst = V6_DST, .proto = IPPROTO_UDP,
	    .sport = 44000, .dport = DENIED_UDP, .payload = 32,
	    .n_ext = 9, .id = 4000 } },
	{ .what = "IPv6 TCP SYN to 2222 behind 9 destination-options headers",
	  .spec = { .src = V6_SRC, .dst = V6_DST, .proto = IPPROTO_TCP,
	    .sport = 45000, .dport = DENIED_TCP, .n_ext = 9, .id = 5000 } },
};

#define N_ROWS (sizeof(bypass_rows) / sizeof(bypass_rows[0]))

/* Each row's count, with whatever is attached now, its ports moved by
 * @shift. */
static void run_rows(unsigned got[N_ROWS], unsigned shift)
{
	int udp_fd = wire_udp_open(&topo, AF_INET6, DENIED_UDP);
	int tcp_fd = wire_tcp_listen(&topo, DENIED_TCP);
	size_t i;

	for (i = 0; i < N_ROWS; i++)
		got[i] = send_row(&bypass_rows[i], udp_fd, shift);
	close(udp_fd);
	close(tcp_fd);
}

Test(e2e_l4, no_fragment_or_header_chain_slips_past_an_l4_deny)
{
	unsigned control[N_ROWS], got[N_ROWS];
	json_t *stats;
	size_t i;

	run_rows(control, 0);
	attach_policy(deny_policy);
	run_rows(got, 100);	/* other ports: each run counts its own */
	fprintf(stderr, "%-62s %8s %8s\n", "frames sent (10 each)", "no XDP",
		"limiter");
	for (i = 0; i < N_ROWS; i++)
		fprintf(stderr, "%-62s %8u %8u\n", bypass_rows[i].what,
			control[i], got[i]);
	for (i = 0; i < N_ROWS; i++) {
		cr_expect_eq(control[i], FRAG_FRAMES,
			     "control: Linux takes '%s'", bypass_rows[i].what);
		cr_expect_eq(got[i], 0, "'%s' reached the receiver",
			     bypass_rows[i].what);
	}
	stats = stats_json();
	cr_assert_eq(json_integer_value(json_object_get(json_object_get(
		json_object_get(stats, "counters"), "tiny_fragment"),
		"packets")), 2 * FRAG_FRAMES, "both pieces of each tiny SYN");
	cr_assert_eq(json_integer_value(json_object_get(json_object_get(
		json_object_get(stats, "counters"), "header_overflow"),
		"packets")), 2 * FRAG_FRAMES);
	json_decref(stats);
}

/* A large datagram of an allowed flow, in three fragments: delivered
 * whole, in both families. */
Test(e2e_l4, an_allowed_fragmented_datagram_is_delivered_whole)
{
	struct frag_spec v4 = {
		.src = V4_SRC, .dst = V4_DST, .proto = IPPROTO_UDP,
		.sport = 46000, .dport = ALLOWED_UDP, .payload = 2900,
		.id = 6000,
	}, v6 = v4;
	const size_t cuts[2] = { 1000, 2000 };
	struct packet frames[3];
	size_t longest;
	int fd, i;

	v6.src = V6_SRC;
	v6.dst = V6_DST;
	attach_policy(deny_policy);
	fd = wire_udp_open(&topo, AF_INET6, ALLOWED_UDP);
	cr_assert_eq(frag_build(&v4, cuts, 2, frames), 3);
	for (i = 0; i < 3; i++)
		wire_send_frame(&topo, &frames[i], 1);
	cr_assert_eq(wire_udp_drain_len(fd, QUIET_MS, &longest), 1);
	cr_assert_eq(longest, 2900, "IPv4: the whole datagram");
	cr_assert_eq(frag_build(&v6, cuts, 2, frames), 3);
	for (i = 0; i < 3; i++)
		wire_send_frame(&topo, &frames[i], 1);
	cr_assert_eq(wire_udp_drain_len(fd, QUIET_MS, &longest), 1);
	cr_assert_eq(longest, 2900, "IPv6: the whole datagram");
	close(fd);
}

/* A SYN flood cut into fragments against a tcp_flags: syn limit: no
 * more half-open connections than the burst and the rate allow. */
Test(e2e_l4, a_fragmented_syn_flood_passes_no_more_than_burst_and_rate)
{
	const struct frag_row flood = {
		.what = "fragmented SYNs",
		.spec = { .src = V4_SRC, .dst = V4_DST, .proto = IPPROTO_TCP,
		  .sport = 47000, .dport = DENIED_TCP, .payload = 16,
		  .id = 7000 }, .cuts = { 24 }, .n_cuts = 1,
	};
	unsigned burst = 3, got, i;
	double start, elapsed;
	int fd;

	attach_policy("default:\n  action: allow\n"
		      "rules:\n"
		      "  - name: syn\n    cidr: 198.18.0.0/24\n"
		      "    proto: tcp\n    tcp_flags: syn\n"
		      "    pps: 1\n    burst: 3\n");
	fd = wire_tcp_listen(&topo, DENIED_TCP);
	start = now_s();
	got = 0;
	for (i = 0; i < 3; i++)
		got += send_row(&flood, -1, i * FRAG_FRAMES);
	elapsed = now_s() - start;
	cr_assert(got >= burst && got <= burst + 1 + (unsigned)elapsed,
		  "%u half-open of %d fragmented SYNs in %.2f s (burst %u, "
		  "1 pps)", got, 3 * FRAG_FRAMES, elapsed, burst);
	close(fd);
}

Test(e2e_l4, explain_says_how_unreadable_packets_are_judged)
{
	attach_policy(deny_policy);
	cr_assert_eq(topo_cli(&topo, out, sizeof(out), err, sizeof(err),
			      "explain " V4_SRC), 0, "explain: %s", err);
	cr_assert(strstr(out, "L4 rules on its way (tcp, udp)"), "%s", out);
	cr_assert(strstr(out, "whose first was not seen: dropped "
			 "(unjudged_fragments)"), "%s", out);
	cr_assert(strstr(out, "more than 8 IPv6 extension headers: dropped"),
		  "%s", out);
	attach_policy("default:\n  action: allow\n"
		      "unjudged_fragments: plain\n"
		      "rules:\n"
		      "  - name: udp\n    cidr: 198.18.0.0/24\n    proto: udp\n"
		      "    dport: 9999\n    action: deny\n");
	cr_assert_eq(topo_cli(&topo, out, sizeof(out), err, sizeof(err),
			      "explain " V4_SRC), 0, "explain: %s", err);
	cr_assert(strstr(out, "L4 rules on its way (udp)"), "%s", out);
	cr_assert(strstr(out, "not seen: judged by the rule above"), "%s",
		  out);
	/* Outside the L4 rules' prefixes: nothing to say. */
	cr_assert_eq(topo_cli(&topo, out, sizeof(out), err, sizeof(err),
			      "explain 198.18.1.1"), 0, "explain: %s", err);
	cr_assert_null(strstr(out, "L4 rules"), "%s", out);
}
