/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * match.h - a rule's L4 match (proto, ports, tcp_flags) as text, its
 * checks, and its order among the rules of one prefix. The layout is
 * include/xrl.h's struct xrl_rule_match; docs/POLICY.md "Protocols and
 * ports" is the user's side.
 */
#ifndef XRL_MATCH_H
#define XRL_MATCH_H

#include <stdbool.h>
#include <stddef.h>
#include "rule_spec.h"
#include "xrl.h"

struct xrl_rule_spec;

/* "tcp", "udp", "icmp", "icmpv6"; parse returns -EINVAL for other text. */
int xrl_match_proto_parse(const char *text, __u8 *proto);
const char *xrl_match_proto_name(__u8 proto);

/*
 * "80" or "1024-65535" (decimal, no sign or spaces) into an inclusive
 * range: -EINVAL for text that is no port or range of ports, -ERANGE for
 * a range whose low end is above its high end.
 */
int xrl_match_ports_parse(const char *text, __u16 *lo, __u16 *hi);
/* "tcp_flags" values: "syn" (SYN without ACK); -EINVAL for others. */
int xrl_match_flags_parse(const char *text, __u8 *flags);

/* The L4 header of a packet, as the program reads it (bpf/l4.h). */
struct xrl_l4_packet {
	__u8 proto;	/* IPPROTO_TCP, _UDP, _ICMP, _ICMPV6 */
	bool syn;	/* TCP SYN without ACK */
	__u16 sport, dport;
};

/* Whether an L4 rule's match takes @packet: the program's l4_matches(). */
bool xrl_match_takes(const struct xrl_rule_match *m,
		     const struct xrl_l4_packet *packet);

/* Whether the match is empty: the rule takes every packet of its prefix. */
static inline bool xrl_match_is_plain(const struct xrl_rule_match *m)
{
	return m->proto == 0;
}

/*
 * Orders matches (next excluded), plain first: two rules of one prefix
 * are the same rule when this is 0.
 */
int xrl_match_compare(const struct xrl_rule_match *a,
		      const struct xrl_rule_match *b);

/* "tcp syn sport 53 dport 80-90" style, "" for a plain rule. */
void xrl_match_format(const struct xrl_rule_match *m, char *buf, size_t len);

/*
 * Checks the L4 keys of @rule against each other and its prefix: ports
 * only with tcp or udp, tcp_flags only with tcp, icmp only for IPv4 (or
 * every source), icmpv6 only for IPv6, no L4 keys on the default rule.
 * On error returns -EINVAL and writes "field: what is wrong" into @err.
 */
int xrl_match_check(const struct xrl_rule_spec *rule, bool is_default,
		    char *err, size_t len);

#endif
