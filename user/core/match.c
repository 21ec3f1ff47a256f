// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * match.c - a rule's L4 match: parsed, checked, ordered and written.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include "cidr.h"
#include "match.h"
#include "rule_spec.h"

static const struct {
	const char *name;
	__u8 proto;
} protos[] = {
	{ "tcp", IPPROTO_TCP },
	{ "udp", IPPROTO_UDP },
	{ "icmp", IPPROTO_ICMP },
	{ "icmpv6", IPPROTO_ICMPV6 },
};

int xrl_match_proto_parse(const char *text, __u8 *proto)
{
	size_t i;

	for (i = 0; i < sizeof(protos) / sizeof(protos[0]); i++) {
		if (!strcmp(text, protos[i].name)) {
			*proto = protos[i].proto;
			return 0;
		}
	}
	return -EINVAL;
}

const char *xrl_match_proto_name(__u8 proto)
{
	size_t i;

	for (i = 0; i < sizeof(protos) / sizeof(protos[0]); i++)
		if (protos[i].proto == proto)
			return protos[i].name;
	return "?";
}

/* One port: 0 to 65535, digits only (strtoul would take " 8" and "+8"). */
static int parse_port(const char *text, size_t n, __u16 *port)
{
	unsigned long value = 0;
	size_t i;

	if (n == 0 || n > 5)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (text[i] < '0' || text[i] > '9')
			return -EINVAL;
		value = value * 10 + (unsigned long)(text[i] - '0');
	}
	if (value > 65535)
		return -EINVAL;
	*port = (__u16)value;
	return 0;
}

int xrl_match_ports_parse(const char *text, __u16 *lo, __u16 *hi)
{
	const char *dash = strchr(text, '-');
	int ret;

	if (!dash) {
		ret = parse_port(text, strlen(text), lo);
		*hi = *lo;
		return ret;
	}
	ret = parse_port(text, (size_t)(dash - text), lo);
	if (!ret)
		ret = parse_port(dash + 1, strlen(dash + 1), hi);
	if (!ret && *lo > *hi)
		return -ERANGE;
	return ret;
}

int xrl_match_flags_parse(const char *text, __u8 *flags)
{
	if (strcmp(text, "syn"))
		return -EINVAL;
	*flags |= XRL_MATCH_SYN;
	return 0;
}

static int cmp_u32(__u32 a, __u32 b)
{
	return a < b ? -1 : a > b;
}

int xrl_match_compare(const struct xrl_rule_match *a,
		      const struct xrl_rule_match *b)
{
	bool sport = a->flags & XRL_MATCH_SPORT, dport = a->flags & XRL_MATCH_DPORT;
	int order = cmp_u32(a->proto, b->proto);

	if (!order)
		order = cmp_u32(a->flags, b->flags);
	/* Ports that are not set are not compared: they are not kept. */
	if (!order && sport)
		order = cmp_u32(a->sport_lo, b->sport_lo) ?:
			cmp_u32(a->sport_hi, b->sport_hi);
	if (!order && dport)
		order = cmp_u32(a->dport_lo, b->dport_lo) ?:
			cmp_u32(a->dport_hi, b->dport_hi);
	return order;
}

static void format_range(char *buf, size_t len, const char *key, __u16 lo,
			 __u16 hi)
{
	size_t used = strlen(buf);

	if (lo == hi)
		snprintf(buf + used, len - used, " %s %u", key, lo);
	else
		snprintf(buf + used, len - used, " %s %u-%u", key, lo, hi);
}

void xrl_match_format(const struct xrl_rule_match *m, char *buf, size_t len)
{
	if (!len)
		return;
	buf[0] = '\0';
	if (xrl_match_is_plain(m))
		return;
	snprintf(buf, len, "%s%s", xrl_match_proto_name(m->proto),
		 m->flags & XRL_MATCH_SYN ? " syn" : "");
	if (m->flags & XRL_MATCH_SPORT)
		format_range(buf, len, "sport", m->sport_lo, m->sport_hi);
	if (m->flags & XRL_MATCH_DPORT)
		format_range(buf, len, "dport", m->dport_lo, m->dport_hi);
}

int xrl_match_check(const struct xrl_rule_spec *rule, bool is_default,
		    char *err, size_t len)
{
	const struct xrl_rule_match *m = &rule->match;
	bool ports = m->flags & (XRL_MATCH_SPORT | XRL_MATCH_DPORT);
	enum xrl_family family = xrl_prefix_family(&rule->prefix);

	if (xrl_match_is_plain(m)) {
		if (m->flags & XRL_MATCH_SYN) {
			snprintf(err, len, "tcp_flags: needs proto: tcp");
			return -EINVAL;
		}
		if (ports) {
			snprintf(err, len, "%s: needs proto: tcp or udp",
				 m->flags & XRL_MATCH_SPORT ? "sport" : "dport");
			return -EINVAL;
		}
		return 0;
	}
	if (is_default) {
		snprintf(err, len, "proto: the default rule takes every "
			 "packet; write a rule with cidr: 0.0.0.0/0");
		return -EINVAL;
	}
	if (m->proto != IPPROTO_TCP && m->proto != IPPROTO_UDP &&
	    m->proto != IPPROTO_ICMP && m->proto != IPPROTO_ICMPV6) {
		snprintf(err, len, "proto: unknown protocol %u", m->proto);
		return -EINVAL;
	}
	if (m->proto == IPPROTO_ICMP && family == XRL_FAMILY_IPV6) {
		snprintf(err, len, "proto: icmp is IPv4's, never on an IPv6 "
			 "prefix: write icmpv6");
		return -EINVAL;
	}
	if (m->proto == IPPROTO_ICMPV6 && family == XRL_FAMILY_IPV4) {
		snprintf(err, len, "proto: icmpv6 is IPv6's, never on an IPv4 "
			 "prefix: write icmp");
		return -EINVAL;
	}
	if (ports && m->proto != IPPROTO_TCP && m->proto != IPPROTO_UDP) {
		snprintf(err, len, "%s: %s has no ports (tcp or udp only)",
			 m->flags & XRL_MATCH_SPORT ? "sport" : "dport",
			 xrl_match_proto_name(m->proto));
		return -EINVAL;
	}
	if ((m->flags & XRL_MATCH_SYN) && m->proto != IPPROTO_TCP) {
		snprintf(err, len, "tcp_flags: needs proto: tcp, not %s",
			 xrl_match_proto_name(m->proto));
		return -EINVAL;
	}
	if ((m->flags & XRL_MATCH_SPORT && m->sport_lo > m->sport_hi) ||
	    (m->flags & XRL_MATCH_DPORT && m->dport_lo > m->dport_hi)) {
		snprintf(err, len, "%s: range low end above its high end",
			 m->flags & XRL_MATCH_SPORT &&
			 m->sport_lo > m->sport_hi ? "sport" : "dport");
		return -EINVAL;
	}
	return 0;
}

bool xrl_match_takes(const struct xrl_rule_match *m,
		     const struct xrl_l4_packet *packet)
{
	if (m->proto != packet->proto)
		return false;
	if ((m->flags & XRL_MATCH_SYN) && !packet->syn)
		return false;
	if ((m->flags & XRL_MATCH_SPORT) &&
	    (packet->sport < m->sport_lo || packet->sport > m->sport_hi))
		return false;
	return !(m->flags & XRL_MATCH_DPORT) ||
	       (packet->dport >= m->dport_lo && packet->dport <= m->dport_hi);
}
