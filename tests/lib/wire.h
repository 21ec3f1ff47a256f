/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * wire.h - real frames over the topology's veth pair: a bounded AF_PACKET
 * sender on the sending end, and an AF_PACKET counter on the receiving
 * end that tells what arrived per source address, independently of the
 * XDP program's own counters.
 */
#ifndef XRL_TEST_WIRE_H
#define XRL_TEST_WIRE_H

#include <stdint.h>
#include "packet.h"
#include "topo.h"

#define WIRE_MAX_SOURCES 32
#define WIRE_MAX_BURST 10000

struct wire_rx {
	int fd;
	size_t n_sources;
	struct {
		uint8_t addr[16];	/* IPv4-mapped for IPv4 */
		uint64_t packets;
	} sources[WIRE_MAX_SOURCES];
};

/* Opens the counter on the receiving veth (before sending). */
void wire_rx_open(struct wire_rx *rx, const struct topo *t);

/* Reads everything that arrives until the link has been quiet for
 * @quiet_ms; returns the number of frames counted. */
uint64_t wire_rx_drain(struct wire_rx *rx, int quiet_ms);

/* Frames counted from @src ("198.18.1.1" or "fd00::1"). */
uint64_t wire_rx_count(const struct wire_rx *rx, const char *src);

void wire_rx_close(struct wire_rx *rx);

/*
 * Sends @count 64-byte UDP frames from @src (any address; the frames are
 * crafted) to the receiving veth's MAC. Returns the seconds the sending
 * took (for a rate's allowance); criterion fails when a send fails.
 */
double wire_send(const struct topo *t, const char *src, int count);

/* Sends @count copies of @pkt (any crafted frame; its MACs are set to
 * the veth pair's). Returns the seconds the sending took. */
double wire_send_frame(const struct topo *t, struct packet *pkt, int count);

/*
 * A UDP socket of the receiving namespace bound to @port on every
 * address: AF_INET, or AF_INET6 dual-stack (IPV6_V6ONLY off, as a
 * server listening on [::] is). What it receives is what Linux
 * delivered, after the XDP program and the whole stack.
 */
int wire_udp_open(const struct topo *t, int family, uint16_t port);

/* Datagrams received on @fd until it has been quiet for @quiet_ms. */
uint64_t wire_udp_drain(int fd, int quiet_ms);

/* The same, and the length of the longest one in *@longest (a datagram
 * Linux reassembled from fragments arrives whole). */
uint64_t wire_udp_drain_len(int fd, int quiet_ms, size_t *longest);

/* A TCP socket of the receiving namespace listening on @port on every
 * address, both families (as a server on [::] does). */
int wire_tcp_listen(const struct topo *t, uint16_t port);

/* Connections to @port from peer ports @peer_lo..@peer_hi in SYN-RECV
 * in the receiving namespace: SYNs Linux took (half-open), as ss(8)
 * lists them. */
unsigned wire_half_open(const struct topo *t, uint16_t port,
			uint16_t peer_lo, uint16_t peer_hi);

#endif
