/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * pcapng.h - a capture file in pcapng (the IETF draft
 * draft-ietf-opsawg-pcapng): a section header, one Ethernet interface
 * with nanosecond timestamps, and an enhanced packet block per frame,
 * each with a comment (opt_comment) saying how it was judged. tcpdump
 * (libpcap 1.1 and later) reads it, ignoring the comments; Wireshark
 * shows them (pkt_comment).
 */
#ifndef XRL_PCAPNG_H
#define XRL_PCAPNG_H

#include <stdint.h>
#include <stdio.h>

/* The section header and the interface (@snaplen bytes a frame at most,
 * @ifname naming it). 0 or -errno. */
int xrl_pcapng_begin(FILE *out, const char *ifname, uint32_t snaplen);

/*
 * One frame: @cap_len bytes of @data out of @frame_len, at @unix_ns
 * (nanoseconds since the epoch), with @comment (NULL: none). 0 or
 * -errno.
 */
int xrl_pcapng_frame(FILE *out, uint64_t unix_ns, const void *data,
		     uint32_t cap_len, uint32_t frame_len,
		     const char *comment);

#endif
