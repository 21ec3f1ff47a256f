// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <sys/socket.h>
#include <criterion/criterion.h>
#include "packet.h"
#include "wire.h"

#define RX_BUFFER (8 << 20)

/* @protocol 0: a socket that only sends (receives nothing). */
static int packet_socket(const char *ns, int ifindex, int protocol)
{
	struct sockaddr_ll addr = {
		.sll_family = AF_PACKET,
		.sll_protocol = protocol,
		.sll_ifindex = ifindex,
	};
	int fd = topo_socket_in(ns, AF_PACKET, SOCK_RAW, protocol);

	cr_assert_geq(fd, 0, "AF_PACKET socket in %s: %s", ns, strerror(-fd));
	cr_assert_eq(bind(fd, (struct sockaddr *)&addr, sizeof(addr)), 0,
		     "binding to ifindex %d: %s", ifindex, strerror(errno));
	return fd;
}

void wire_rx_open(struct wire_rx *rx, const struct topo *t)
{
	int size = RX_BUFFER;

	memset(rx, 0, sizeof(*rx));
	rx->fd = packet_socket(t->ns_rx, t->rx_ifindex, htons(ETH_P_ALL));
	/* Bursts arrive faster than the test reads: room for all of them. */
	if (setsockopt(rx->fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)))
		setsockopt(rx->fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
}

/* The source of an IPv4 or IPv6 frame as an IPv4-mapped address. */
static bool frame_source(const uint8_t *frame, size_t len, uint8_t addr[16])
{
	const struct ethhdr *eth = (const void *)frame;
	size_t l3 = sizeof(*eth);

	if (len < l3)
		return false;
	if (eth->h_proto == htons(ETH_P_IP) && len >= l3 + sizeof(struct iphdr)) {
		const struct iphdr *ip = (const void *)(frame + l3);

		memset(addr, 0, 10);
		addr[10] = addr[11] = 0xff;
		memcpy(addr + 12, &ip->saddr, 4);
		return true;
	}
	if (eth->h_proto == htons(ETH_P_IPV6) &&
	    len >= l3 + sizeof(struct ipv6hdr)) {
		const struct ipv6hdr *ip6 = (const void *)(frame + l3);

		memcpy(addr, &ip6->saddr, 16);
		return true;
	}
	return false;
}

static void count_source(struct wire_rx *rx, const uint8_t addr[16])
{
	size_t i;

	for (i = 0; i < rx->n_sources; i++) {
		if (!memcmp(rx->sources[i].addr, addr, 16)) {
			rx->sources[i].packets++;
			return;
		}
	}
	if (rx->n_sources == WIRE_MAX_SOURCES)
		return;
	memcpy(rx->sources[rx->n_sources].addr, addr, 16);
	rx->sources[rx->n_sources++].packets = 1;
}

uint64_t wire_rx_drain(struct wire_rx *rx, int quiet_ms)
{
	struct pollfd pfd = { .fd = rx->fd, .events = POLLIN };
	uint8_t frame[2048], addr[16];
	struct sockaddr_ll from;
	socklen_t from_len;
	uint64_t counted = 0;
	ssize_t n;

	while (poll(&pfd, 1, quiet_ms) > 0) {
		from_len = sizeof(from);
		n = recvfrom(rx->fd, frame, sizeof(frame), MSG_DONTWAIT,
			     (struct sockaddr *)&from, &from_len);
		if (n < 0)
			continue;
		/* Only what came in over the wire, not what the receiving
		 * side itself sends (neighbour discovery and the like). */
		if (from.sll_pkttype == PACKET_OUTGOING)
			continue;
		if (frame_source(frame, n, addr)) {
			count_source(rx, addr);
			counted++;
		}
	}
	return counted;
}

static void text_to_mapped(const char *src, uint8_t addr[16])
{
	struct in_addr v4;

	if (inet_pton(AF_INET, src, &v4) == 1) {
		memset(addr, 0, 10);
		addr[10] = addr[11] = 0xff;
		memcpy(addr + 12, &v4, 4);
		return;
	}
	cr_assert_eq(inet_pton(AF_INET6, src, addr), 1, "address %s", src);
}

uint64_t wire_rx_count(const struct wire_rx *rx, const char *src)
{
	uint8_t addr[16];
	size_t i;

	text_to_mapped(src, addr);
	for (i = 0; i < rx->n_sources; i++)
		if (!memcmp(rx->sources[i].addr, addr, 16))
			return rx->sources[i].packets;
	return 0;
}

void wire_rx_close(struct wire_rx *rx)
{
	if (rx->fd > 0)
		close(rx->fd);
	rx->fd = -1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

double wire_send_frame(const struct topo *t, struct packet *pkt, int count)
{
	struct sockaddr_ll to = {
		.sll_family = AF_PACKET,
		.sll_ifindex = t->tx_ifindex,
		.sll_halen = ETH_ALEN,
	};
	double start;
	int fd, i;

	cr_assert(count > 0 && count <= WIRE_MAX_BURST, "bounded burst");
	memcpy(pkt->data, t->rx_mac, ETH_ALEN);
	memcpy(pkt->data + ETH_ALEN, t->tx_mac, ETH_ALEN);
	memcpy(to.sll_addr, t->rx_mac, ETH_ALEN);
	fd = packet_socket(t->ns_tx, t->tx_ifindex, 0);
	start = now_s();
	for (i = 0; i < count; i++)
		cr_assert_eq(sendto(fd, pkt->data, pkt->len, 0,
				    (struct sockaddr *)&to, sizeof(to)),
			     (ssize_t)pkt->len, "send %d: %s", i,
			     strerror(errno));
	close(fd);
	return now_s() - start;
}

double wire_send(const struct topo *t, const char *src, int count)
{
	struct packet pkt;

	cr_assert_eq(packet_from(&pkt, src), 0, "frame from %s", src);
	return wire_send_frame(t, &pkt, count);
}

int wire_udp_open(const struct topo *t, int family, uint16_t port)
{
	struct sockaddr_in6 in6 = {
		.sin6_family = AF_INET6,
		.sin6_port = htons(port),
		.sin6_addr = IN6ADDR_ANY_INIT,
	};
	struct sockaddr_in in4 = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
	};
	int fd = topo_socket_in(t->ns_rx, family, SOCK_DGRAM, 0);
	int off = 0, ret;

	cr_assert_geq(fd, 0, "UDP socket in %s: %s", t->ns_rx, strerror(-fd));
	if (family == AF_INET6) {
		cr_assert_eq(setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off,
					sizeof(off)), 0);
		ret = bind(fd, (struct sockaddr *)&in6, sizeof(in6));
	} else {
		ret = bind(fd, (struct sockaddr *)&in4, sizeof(in4));
	}
	cr_assert_eq(ret, 0, "binding UDP port %u: %s", port, strerror(errno));
	return fd;
}

uint64_t wire_udp_drain_len(int fd, int quiet_ms, size_t *longest)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	static uint8_t buf[65536];
	uint64_t received = 0;
	ssize_t n;

	if (longest)
		*longest = 0;
	while (poll(&pfd, 1, quiet_ms) > 0) {
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0)
			continue;
		received++;
		if (longest && (size_t)n > *longest)
			*longest = n;
	}
	return received;
}

uint64_t wire_udp_drain(int fd, int quiet_ms)
{
	return wire_udp_drain_len(fd, quiet_ms, NULL);
}

int wire_tcp_listen(const struct topo *t, uint16_t port)
{
	struct sockaddr_in6 in6 = {
		.sin6_family = AF_INET6,
		.sin6_port = htons(port),
		.sin6_addr = IN6ADDR_ANY_INIT,
	};
	int fd = topo_socket_in(t->ns_rx, AF_INET6, SOCK_STREAM, 0);
	int off = 0, on = 1;

	cr_assert_geq(fd, 0, "TCP socket in %s: %s", t->ns_rx, strerror(-fd));
	cr_assert_eq(setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off,
				sizeof(off)), 0);
	cr_assert_eq(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on,
				sizeof(on)), 0);
	cr_assert_eq(bind(fd, (struct sockaddr *)&in6, sizeof(in6)), 0,
		     "binding TCP port %u: %s", port, strerror(errno));
	cr_assert_eq(listen(fd, 1024), 0, "listen: %s", strerror(errno));
	return fd;
}

unsigned wire_half_open(const struct topo *t, uint16_t port,
			uint16_t peer_lo, uint16_t peer_hi)
{
	char cmd[320], line[512];
	unsigned n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nsenter --net=/run/netns/%s ss -Htn "
		 "state syn-recv '( sport = :%u and dport >= :%u and "
		 "dport <= :%u )'", t->ns_rx, port, peer_lo, peer_hi);
	p = popen(cmd, "r");
	cr_assert_not_null(p, "%s", cmd);
	while (fgets(line, sizeof(line), p))
		n++;
	cr_assert_eq(pclose(p), 0, "%s failed", cmd);
	return n;
}
