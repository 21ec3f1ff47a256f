// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <arpa/inet.h>
#include <stdbool.h>
#include <string.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include "frag.h"

#define DATAGRAM_MAX 4096
#define AH_LEN 16
#define ESP_LEN 8

/* One's complement sum of @len bytes added to @sum, not folded. */
static uint32_t sum16(uint32_t sum, const uint8_t *data, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (data[i] << 8) | data[i + 1];
	if (len & 1)
		sum += data[len - 1] << 8;
	return sum;
}

static uint16_t fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum & 0xffff;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

/*
 * The L4 segment of @spec at @l4 (header and payload), its checksum over
 * the pseudo header of @src/@dst (@alen bytes each). Returns its length.
 */
static size_t put_l4(const struct frag_spec *spec, uint8_t *l4,
		     const uint8_t *src, const uint8_t *dst, size_t alen)
{
	size_t hdr = spec->proto == IPPROTO_TCP ? sizeof(struct tcphdr) :
						  sizeof(struct udphdr);
	size_t len = hdr + spec->payload, i;
	uint32_t sum;
	uint16_t check;

	memset(l4, 0, len);
	put16(l4, spec->sport);
	put16(l4 + 2, spec->dport);
	if (spec->proto == IPPROTO_TCP) {
		put16(l4 + 4, 0x1234);		/* sequence number */
		l4[12] = (sizeof(struct tcphdr) / 4) << 4;
		l4[13] = 0x02;			/* SYN */
		put16(l4 + 14, 64240);		/* window */
	} else {
		put16(l4 + 4, len);
	}
	for (i = hdr; i < len; i++)
		l4[i] = 'a' + i % 26;
	sum = sum16(0, src, alen);
	sum = sum16(sum, dst, alen);
	sum += spec->proto + len;
	sum = sum16(sum, l4, len);
	check = fold(sum);
	if (spec->proto == IPPROTO_UDP && !check)
		check = 0xffff;
	put16(l4 + (spec->proto == IPPROTO_TCP ? 16 : 6), check);
	return len;
}

/* AH at @p (RFC 4302): next header, length in 4-byte units less 2, SPI,
 * sequence, 4 bytes of ICV. */
static size_t put_ah(uint8_t *p, uint8_t next)
{
	memset(p, 0, AH_LEN);
	p[0] = next;
	p[1] = AH_LEN / 4 - 2;
	put16(p + 4, 0x0100);
	put16(p + 10, 1);
	return AH_LEN;
}

/* A destination options header of @len bytes (its next header already
 * written) padded with PadN options of at most 255 bytes each. */
static size_t put_dstopts(uint8_t *p, size_t len)
{
	size_t off = 2, pad;

	memset(p + 1, 0, len - 1);
	p[1] = len / 8 - 1;
	while (off < len) {
		pad = len - off - 2 > 255 ? 255 : len - off - 2;
		if (len - off - 2 - pad == 1)	/* a lone byte: no PadN */
			pad--;
		p[off] = 1;		/* PadN */
		p[off + 1] = pad;
		off += 2 + pad;
	}
	return len;
}

/* What follows the IP header (or the fragment header): extension
 * headers, AH, then the L4 segment or ESP. Returns its length, and the
 * first header's protocol in *@first. */
static size_t put_upper(const struct frag_spec *spec, uint8_t *p,
			const uint8_t *src, const uint8_t *dst, size_t alen,
			uint8_t *first)
{
	uint8_t last = spec->esp ? IPPROTO_ESP : spec->proto;
	size_t ext_len = spec->ext_len ? spec->ext_len : 8;
	size_t off = 0;
	int i;

	*first = spec->n_ext ? IPPROTO_DSTOPTS : spec->ah ? IPPROTO_AH : last;
	for (i = 0; i < spec->n_ext; i++) {
		p[off] = i + 1 < spec->n_ext ? IPPROTO_DSTOPTS :
			 spec->ah ? IPPROTO_AH : last;
		off += put_dstopts(p + off, ext_len);
	}
	if (spec->ah)
		off += put_ah(p + off, last);
	if (spec->esp) {
		memset(p + off, 0, ESP_LEN + spec->payload);
		put16(p + off + 2, 0x0200);	/* SPI */
		put16(p + off + 6, 1);		/* sequence */
		return off + ESP_LEN + spec->payload;
	}
	return off + put_l4(spec, p + off, src, dst, alen);
}

static void put_ethernet(struct packet *pkt, uint16_t ethertype)
{
	struct ethhdr *eth = (struct ethhdr *)pkt->data;

	memcpy(eth->h_dest, "\x02\x00\x00\x00\x00\x02", ETH_ALEN);
	memcpy(eth->h_source, "\x02\x00\x00\x00\x00\x01", ETH_ALEN);
	eth->h_proto = htons(ethertype);
}

static uint16_t ipv4_checksum(const struct iphdr *ip)
{
	return htons(fold(sum16(0, (const uint8_t *)ip, sizeof(*ip))));
}

/* Piece @i of @n of @len bytes cut at @cuts: [*start, *end). */
static bool piece(const size_t *cuts, int n_cuts, int i, size_t len,
		  size_t *start, size_t *end)
{
	*start = i ? cuts[i - 1] : 0;
	*end = i < n_cuts ? cuts[i] : len;
	return *start < *end && *end <= len && (i == n_cuts || !(*end % 8));
}

static int build_v4(const struct frag_spec *spec, const size_t *cuts,
		    int n_cuts, struct packet *out)
{
	uint8_t upper[DATAGRAM_MAX], first;
	struct in_addr src, dst;
	size_t len, start, end, l3 = sizeof(struct ethhdr);
	int i;

	if (inet_pton(AF_INET, spec->src, &src) != 1 ||
	    inet_pton(AF_INET, spec->dst ? spec->dst : "198.18.0.2",
		      &dst) != 1 || spec->n_ext)
		return -1;
	len = put_upper(spec, upper, (uint8_t *)&src, (uint8_t *)&dst, 4,
			&first);
	for (i = 0; i <= n_cuts; i++) {
		struct packet *pkt = &out[i];
		struct iphdr *ip = (struct iphdr *)(pkt->data + l3);
		uint16_t frag;

		if (!piece(cuts, n_cuts, i, len, &start, &end) ||
		    l3 + sizeof(*ip) + end - start > PACKET_MAX)
			return -1;
		memset(pkt, 0, sizeof(*pkt));
		put_ethernet(pkt, ETH_P_IP);
		ip->version = 4;
		ip->ihl = 5;
		ip->ttl = 64;
		ip->protocol = first;
		ip->id = htons(spec->id);
		ip->saddr = src.s_addr;
		ip->daddr = dst.s_addr;
		ip->tot_len = htons(sizeof(*ip) + end - start);
		frag = start / 8;
		if (n_cuts && i < n_cuts)
			frag |= 0x2000;		/* MF */
		ip->frag_off = htons(frag);
		ip->check = ipv4_checksum(ip);
		memcpy(pkt->data + l3 + sizeof(*ip), upper + start,
		       end - start);
		pkt->len = l3 + sizeof(*ip) + end - start;
		if (pkt->len < 60)	/* Ethernet's minimum, padded */
			pkt->len = 60;
	}
	return n_cuts + 1;
}

static int build_v6(const struct frag_spec *spec, const size_t *cuts,
		    int n_cuts, struct packet *out)
{
	uint8_t upper[DATAGRAM_MAX], first;
	struct in6_addr src, dst;
	size_t len, start, end, hdr, l3 = sizeof(struct ethhdr);
	int i;

	if (inet_pton(AF_INET6, spec->src, &src) != 1 ||
	    inet_pton(AF_INET6, spec->dst ? spec->dst : "fd00::2",
		      &dst) != 1)
		return -1;
	len = put_upper(spec, upper, (uint8_t *)&src, (uint8_t *)&dst, 16,
			&first);
	hdr = sizeof(struct ipv6hdr) + (n_cuts ? 8 : 0);
	for (i = 0; i <= n_cuts; i++) {
		struct packet *pkt = &out[i];
		struct ipv6hdr *ip6 = (struct ipv6hdr *)(pkt->data + l3);
		uint8_t *fh = pkt->data + l3 + sizeof(*ip6);

		if (!piece(cuts, n_cuts, i, len, &start, &end) ||
		    l3 + hdr + end - start > PACKET_MAX)
			return -1;
		memset(pkt, 0, sizeof(*pkt));
		put_ethernet(pkt, ETH_P_IPV6);
		ip6->version = 6;
		ip6->hop_limit = 64;
		ip6->saddr = src;
		ip6->daddr = dst;
		ip6->payload_len = htons(hdr - sizeof(*ip6) + end - start);
		ip6->nexthdr = n_cuts ? IPPROTO_FRAGMENT : first;
		if (n_cuts) {
			fh[0] = first;
			put16(fh + 2, start | (i < n_cuts ? 1 : 0));
			put16(fh + 4, spec->id >> 16);
			put16(fh + 6, spec->id & 0xffff);
		}
		memcpy(pkt->data + l3 + hdr, upper + start, end - start);
		pkt->len = l3 + hdr + end - start;
		if (pkt->len < 60)
			pkt->len = 60;
	}
	return n_cuts + 1;
}

int frag_build(const struct frag_spec *spec, const size_t *cuts, int n_cuts,
	       struct packet *out)
{
	if (!spec->src || n_cuts < 0 || n_cuts >= FRAG_MAX_PIECES ||
	    spec->n_ext > FRAG_MAX_EXT || spec->ext_len % 8 ||
	    spec->ext_len > 2048 ||
	    spec->n_ext * (spec->ext_len ? spec->ext_len : 8) > 3000 ||
	    (spec->proto != IPPROTO_TCP && spec->proto != IPPROTO_UDP))
		return -1;
	if (strchr(spec->src, ':'))
		return build_v6(spec, cuts, n_cuts, out);
	return build_v4(spec, cuts, n_cuts, out);
}
