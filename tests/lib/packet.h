/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * packet.h - crafted frames for the tests: Ethernet, optional VLAN tags,
 * IPv4 or IPv6, a UDP-sized payload or a TCP header and its payload.
 */
#ifndef XRL_TEST_PACKET_H
#define XRL_TEST_PACKET_H

#include <stddef.h>
#include <stdint.h>

/* The largest linear frame BPF_PROG_TEST_RUN takes (a page less XDP
 * headroom and skb_shared_info) fits. */
#define PACKET_MAX 3500
#define PACKET_MAX_TAGS 12
/* The TCP header of packet_spec.tcp: 20 bytes and the timestamps. */
#define PACKET_TCP_HDR 32

struct packet {
	uint8_t data[PACKET_MAX];
	size_t len;
};

struct packet_spec {
	const char *src;	/* "198.18.0.1" or "fd00::1" */
	uint16_t ethertype;	/* non-zero: this after the tags, no IP */
	const char *dst;	/* NULL: 198.19.0.1 or fd00::ff */
	uint16_t vlan_tags[PACKET_MAX_TAGS];	/* TCIs, outer is [0] */
	uint16_t vlan_tpids[PACKET_MAX_TAGS];	/* 0: 802.1Q (or qinq) */
	int n_vlan;
	int qinq;		/* outer tag is 802.1ad */
	int tcp;		/* a TCP header (PACKET_TCP_HDR), not UDP */
	uint16_t udp_port;	/* non-zero: a whole UDP datagram to it */
	size_t frame_len;	/* whole frame; 0: 64 bytes (or as short
				 * as the headers, when longer) */
};

enum packet_kind {
	PACKET_TCP_SYN,
	PACKET_TCP_ACK,
	PACKET_TCP_SYNACK,
	PACKET_UDP,
	PACKET_ICMP,	/* ICMPv6 from an IPv6 source */
};

/* A 128-byte frame of @kind from @src with ports @sport -> @dport (len 0
 * for an unparsable @src). */
struct packet packet_l4(const char *src, enum packet_kind kind,
			uint16_t sport, uint16_t dport);

/* Writes @host at @off of the frame, in network order. */
void packet_put16(struct packet *pkt, size_t off, uint16_t host);

/* Builds a frame; returns 0, or -1 for an unparsable address. */
int packet_build(struct packet *pkt, const struct packet_spec *spec);

/* Shorthand: a 64-byte frame from @src (IPv4 or IPv6 text). */
int packet_from(struct packet *pkt, const char *src);

/* Offset of the IP header in a frame built with @n_vlan tags. */
size_t packet_ip_offset(int n_vlan);

/* The IP header of a frame built with @n_vlan tags, to be broken. */
void *packet_l3(struct packet *pkt, int n_vlan);

#endif
