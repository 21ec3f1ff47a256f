// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <arpa/inet.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include "packet.h"

size_t packet_ip_offset(int n_vlan)
{
	return sizeof(struct ethhdr) + 4 * n_vlan;
}

static uint16_t ipv4_checksum(const struct iphdr *ip)
{
	const uint16_t *word = (const uint16_t *)ip;
	uint32_t sum = 0;
	size_t i;

	for (i = 0; i < sizeof(*ip) / 2; i++)
		sum += word[i];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum;
}

/* One's complement sum of @len bytes, added to @sum (not folded). */
static uint32_t sum_bytes(uint32_t sum, const uint8_t *data, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (data[i] << 8) | data[i + 1];
	if (len & 1)
		sum += data[len - 1] << 8;
	return sum;
}

/*
 * A UDP header to @port at @off, and its checksum over the pseudo
 * header of @l3 (optional in IPv4, required in IPv6), so that a socket
 * receives the datagram.
 */
static void put_udp(struct packet *pkt, size_t off, size_t len,
		    const void *l3, int ipv6, uint16_t port)
{
	struct udphdr *udp = (struct udphdr *)(pkt->data + off);
	uint32_t sum = IPPROTO_UDP + len;

	udp->source = htons(40000);
	udp->dest = htons(port);
	udp->len = htons(len);
	if (ipv6)
		sum = sum_bytes(sum, (const uint8_t *)
				&((const struct ipv6hdr *)l3)->saddr, 32);
	else
		sum = sum_bytes(sum, (const uint8_t *)
				&((const struct iphdr *)l3)->saddr, 8);
	sum = sum_bytes(sum, pkt->data + off, len);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	udp->check = htons(~sum & 0xffff) ? htons(~sum & 0xffff) : 0xffff;
}

static void put_be16(struct packet *pkt, size_t off, uint16_t value)
{
	pkt->data[off] = value >> 8;
	pkt->data[off + 1] = value & 0xff;
}

int packet_build(struct packet *pkt, const struct packet_spec *spec)
{
	size_t frame_len = spec->frame_len ? spec->frame_len : 64;
	size_t off = sizeof(struct ethhdr);
	int ipv6 = spec->src && strchr(spec->src, ':') != NULL;
	struct ethhdr *eth = (struct ethhdr *)pkt->data;
	size_t proto = offsetof(struct ethhdr, h_proto);
	const void *l3 = NULL;
	int i;

	size_t l3_min = ipv6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr);

	if (spec->tcp)
		l3_min += PACKET_TCP_HDR;
	else if (spec->udp_port)
		l3_min += sizeof(struct udphdr);
	/* Deep tag stacks: the shortest frame of those headers. */
	if (!spec->frame_len &&
	    frame_len < packet_ip_offset(spec->n_vlan) + l3_min)
		frame_len = packet_ip_offset(spec->n_vlan) + l3_min;
	if (frame_len > PACKET_MAX || spec->n_vlan > PACKET_MAX_TAGS ||
	    (!spec->src && !spec->ethertype) ||
	    frame_len < packet_ip_offset(spec->n_vlan) + l3_min)
		return -1;
	memset(pkt, 0, sizeof(*pkt));
	memcpy(eth->h_dest, "\x02\x00\x00\x00\x00\x02", ETH_ALEN);
	memcpy(eth->h_source, "\x02\x00\x00\x00\x00\x01", ETH_ALEN);
	for (i = 0; i < spec->n_vlan; i++) {
		if (spec->vlan_tpids[i])
			put_be16(pkt, proto, spec->vlan_tpids[i]);
		else
			put_be16(pkt, proto, i == 0 && spec->qinq ?
					     ETH_P_8021AD : ETH_P_8021Q);
		put_be16(pkt, off, spec->vlan_tags[i]);
		proto = off + 2;
		off += 4;
	}
	if (spec->ethertype) {
		put_be16(pkt, proto, spec->ethertype);
	} else if (ipv6) {
		struct ipv6hdr *ip6 = (struct ipv6hdr *)(pkt->data + off);

		l3 = ip6;
		put_be16(pkt, proto, ETH_P_IPV6);
		ip6->version = 6;
		ip6->nexthdr = spec->tcp ? IPPROTO_TCP : IPPROTO_UDP;
		ip6->hop_limit = 64;
		ip6->payload_len = htons(frame_len - off - sizeof(*ip6));
		if (inet_pton(AF_INET6, spec->src, &ip6->saddr) != 1 ||
		    inet_pton(AF_INET6, spec->dst ? spec->dst : "fd00::ff",
			      &ip6->daddr) != 1)
			return -1;
		off += sizeof(*ip6);
	} else {
		struct iphdr *ip = (struct iphdr *)(pkt->data + off);

		l3 = ip;
		put_be16(pkt, proto, ETH_P_IP);
		ip->version = 4;
		ip->ihl = 5;
		ip->ttl = 64;
		ip->protocol = spec->tcp ? IPPROTO_TCP : IPPROTO_UDP;
		ip->tot_len = htons(frame_len - off);
		if (inet_pton(AF_INET, spec->src, &ip->saddr) != 1 ||
		    inet_pton(AF_INET, spec->dst ? spec->dst : "198.19.0.1",
			      &ip->daddr) != 1)
			return -1;
		ip->check = ipv4_checksum(ip);
		off += sizeof(*ip);
	}
	if (spec->tcp && !spec->ethertype) {
		struct tcphdr *tcp = (struct tcphdr *)(pkt->data + off);

		tcp->source = htons(40000);
		tcp->dest = htons(5201);
		tcp->doff = PACKET_TCP_HDR / 4;
		tcp->ack = 1;
	} else if (spec->udp_port && l3) {
		put_udp(pkt, off, frame_len - off, l3, ipv6, spec->udp_port);
	}
	pkt->len = frame_len;
	return 0;
}

void *packet_l3(struct packet *pkt, int n_vlan)
{
	return pkt->data + packet_ip_offset(n_vlan);
}

int packet_from(struct packet *pkt, const char *src)
{
	struct packet_spec spec = { .src = src };

	return packet_build(pkt, &spec);
}

void packet_put16(struct packet *pkt, size_t off, uint16_t host)
{
	uint16_t be = htons(host);

	memcpy(pkt->data + off, &be, sizeof(be));
}

/* Ports and flags written byte by byte: the frame is a byte array. */
struct packet packet_l4(const char *src, enum packet_kind kind,
			uint16_t sport, uint16_t dport)
{
	struct packet_spec spec = {
		.src = src,
		.tcp = kind <= PACKET_TCP_SYNACK,
		.udp_port = kind == PACKET_UDP ? dport : 0,
		.frame_len = 128,
	};
	bool ipv6 = strchr(src, ':') != NULL;
	size_t l3_off = packet_ip_offset(0);
	size_t l4_off = l3_off + (ipv6 ? sizeof(struct ipv6hdr) :
					 sizeof(struct iphdr));
	struct packet pkt;

	if (packet_build(&pkt, &spec))
		pkt.len = 0;
	if (kind <= PACKET_TCP_SYNACK) {
		packet_put16(&pkt, l4_off, sport);
		packet_put16(&pkt, l4_off + 2, dport);
		/* Flags byte: SYN 0x02, ACK 0x10. */
		pkt.data[l4_off + 13] = kind == PACKET_TCP_SYN ? 0x02 :
					kind == PACKET_TCP_ACK ? 0x10 : 0x12;
	} else if (kind == PACKET_UDP) {
		packet_put16(&pkt, l4_off, sport);
	} else if (ipv6) {
		pkt.data[l3_off + offsetof(struct ipv6hdr, nexthdr)] =
			IPPROTO_ICMPV6;
	} else {
		pkt.data[l3_off + offsetof(struct iphdr, protocol)] =
			IPPROTO_ICMP;
	}
	return pkt;
}
