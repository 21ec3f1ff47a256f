/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * frag.h - whole IP packets built as Linux would receive them (a TCP
 * SYN or a UDP datagram with correct checksums, optional IPv6 extension
 * headers or AH), and the same packet cut into fragments, for the
 * fragment and header-chain tests (docs/POLICY.md "Fragments and header
 * chains"): through BPF_PROG_TEST_RUN and on the wire, where Linux
 * reassembles them behind the program.
 */
#ifndef XRL_TEST_FRAG_H
#define XRL_TEST_FRAG_H

#include <stddef.h>
#include <stdint.h>
#include "packet.h"

#define FRAG_MAX_PIECES 16
#define FRAG_MAX_EXT 20

struct frag_spec {
	const char *src;	/* "198.18.0.1" or "fd00::1": the family */
	const char *dst;	/* NULL: 198.18.0.2 or fd00::2 */
	uint8_t proto;		/* IPPROTO_TCP (a SYN) or IPPROTO_UDP */
	uint16_t sport, dport;
	size_t payload;		/* bytes after the L4 header */
	uint32_t id;		/* IPv4 id (16 bits) or IPv6 identification */
	int n_ext;		/* IPv6: destination options headers
				 * before the L4 header */
	size_t ext_len;		/* bytes of each: a multiple of 8 up to
				 * 2048; 0: 8 */
	int ah;			/* an AH header (16 bytes) before the L4
				 * header (IPv4 and IPv6) */
	int esp;		/* instead of L4: an ESP header and payload */
};

/*
 * The packet of @spec, whole (@n_cuts 0) or as fragments: the bytes
 * after the IP header (IPv4) or after the fragment header (IPv6, which
 * then goes right after the fixed header, the extension headers in the
 * fragmentable part) cut at the offsets @cuts (ascending multiples of 8).
 * Writes n_cuts + 1 frames into @out; returns that count, or -1.
 */
int frag_build(const struct frag_spec *spec, const size_t *cuts, int n_cuts,
	       struct packet *out);

#endif
