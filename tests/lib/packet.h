/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * packet.h - crafted frames for the tests: Ethernet, optional VLAN tags,
 * IPv4 or IPv6, a UDP-sized payload.
 */
#ifndef XRL_TEST_PACKET_H
#define XRL_TEST_PACKET_H

#include <stddef.h>
#include <stdint.h>

#define PACKET_MAX 1600

struct packet {
	uint8_t data[PACKET_MAX];
	size_t len;
};

struct packet_spec {
	const char *src;	/* "198.18.0.1" or "fd00::1" */
	uint16_t ethertype;	/* non-zero: this after the tags, no IP */
	const char *dst;	/* NULL: 198.19.0.1 or fd00::ff */
	uint16_t vlan_tags[2];	/* non-zero: 802.1Q tag (outer is [0]) */
	int n_vlan;
	int qinq;		/* outer tag is 802.1ad */
	size_t frame_len;	/* whole frame; 0: 64 bytes */
};

/* Builds a frame; returns 0, or -1 for an unparsable address. */
int packet_build(struct packet *pkt, const struct packet_spec *spec);

/* Shorthand: a 64-byte frame from @src (IPv4 or IPv6 text). */
int packet_from(struct packet *pkt, const char *src);

/* Offset of the IP header in a frame built with @n_vlan tags. */
size_t packet_ip_offset(int n_vlan);

/* The IP header of a frame built with @n_vlan tags, to be broken. */
void *packet_l3(struct packet *pkt, int n_vlan);

#endif
