// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * cidr.c - prefixes as text ("198.18.0.0/15", "fd00::/8") and as the
 * IPv4-mapped LPM keys the data path looks them up by (cidr.h).
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cidr.h"

static const __u8 v4_mapped_prefix[12] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
};

bool xrl_prefix_equal(const struct xrl_lpm_key *a, const struct xrl_lpm_key *b)
{
	return a->prefixlen == b->prefixlen &&
	       !memcmp(a->addr, b->addr, sizeof(a->addr));
}

enum xrl_family xrl_prefix_family(const struct xrl_lpm_key *prefix)
{
	if (prefix->prefixlen == 0)
		return XRL_FAMILY_ANY;
	if (prefix->prefixlen > 96 &&
	    !memcmp(prefix->addr, v4_mapped_prefix, sizeof(v4_mapped_prefix)))
		return XRL_FAMILY_IPV4;
	return XRL_FAMILY_IPV6;
}

static bool host_bits_set(const __u8 addr[16], unsigned prefixlen)
{
	unsigned bit;

	for (bit = prefixlen; bit < 128; bit++)
		if (addr[bit / 8] & (0x80 >> (bit % 8)))
			return true;
	return false;
}

int xrl_cidr_parse(const char *text, struct xrl_lpm_key *key)
{
	char addr_text[INET6_ADDRSTRLEN];
	const char *slash = strchr(text, '/');
	size_t addr_len = slash ? (size_t)(slash - text) : strlen(text);
	unsigned long prefixlen;
	struct in_addr v4;
	bool ipv4;
	char *end;

	memset(key, 0, sizeof(*key));
	if (addr_len == 0 || addr_len >= sizeof(addr_text))
		return -EINVAL;
	memcpy(addr_text, text, addr_len);
	addr_text[addr_len] = '\0';

	ipv4 = inet_pton(AF_INET, addr_text, &v4) == 1;
	if (ipv4) {
		memcpy(key->addr, v4_mapped_prefix, sizeof(v4_mapped_prefix));
		memcpy(key->addr + 12, &v4, 4);
	} else if (inet_pton(AF_INET6, addr_text, key->addr) != 1) {
		return -EINVAL;
	}

	prefixlen = ipv4 ? 32 : 128;
	if (slash) {
		errno = 0;
		prefixlen = strtoul(slash + 1, &end, 10);
		/* Digits only: strtoul would take " 8", "+8" and "-0". */
		if (!isdigit((unsigned char)slash[1]) || *end || errno ||
		    prefixlen > (ipv4 ? 32u : 128u))
			return -ERANGE;
	}
	/* "0.0.0.0/0" and "::/0" both mean every source: one key, all
	 * zero, or a second "default" would slip past same_prefix(). */
	if (ipv4 && prefixlen == 0) {
		memset(key, 0, sizeof(*key));
		return v4.s_addr ? -EADDRNOTAVAIL : 0;
	}
	key->prefixlen = ipv4 ? 96 + prefixlen : prefixlen;
	if (host_bits_set(key->addr, key->prefixlen))
		return -EADDRNOTAVAIL;
	return 0;
}

bool xrl_cidr_names_ipv4(const char *text, const struct xrl_lpm_key *key,
			 char *ipv4, size_t len)
{
	static const __u8 zero[12];
	const __u8 *a = key->addr;
	char addr[INET_ADDRSTRLEN];

	if (!strchr(text, ':') || key->prefixlen < 96)
		return false;
	if (memcmp(a, v4_mapped_prefix, 12) && memcmp(a, zero, 12))
		return false;
	/* ::/128, ::1/128 and ::/127 hold only the two IPv6 addresses. */
	if (!memcmp(a, zero, 12) && !a[12] && !a[13] && !a[14] &&
	    a[15] <= 1 && key->prefixlen >= 127)
		return false;
	inet_ntop(AF_INET, a + 12, addr, sizeof(addr));
	snprintf(ipv4, len, "%s/%u", addr, key->prefixlen - 96);
	return true;
}

void xrl_cidr_format(const struct xrl_lpm_key *key, char *buf, size_t len)
{
	char addr[INET6_ADDRSTRLEN];

	/* Not /96: "0.0.0.0/0" is every source, not every IPv4 one. */
	if (key->prefixlen > 96 &&
	    !memcmp(key->addr, v4_mapped_prefix, sizeof(v4_mapped_prefix))) {
		inet_ntop(AF_INET, key->addr + 12, addr, sizeof(addr));
		snprintf(buf, len, "%s/%u", addr, key->prefixlen - 96);
		return;
	}
	if (key->prefixlen == 0) {
		snprintf(buf, len, "0.0.0.0/0");
		return;
	}
	inet_ntop(AF_INET6, key->addr, addr, sizeof(addr));
	snprintf(buf, len, "%s/%u", addr, key->prefixlen);
}
