// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* CIDR text <-> LPM keys, and the source-key masks of a policy. */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <criterion/criterion.h>
#include "cidr.h"
#include "policy.h"

static struct xrl_lpm_key parse_ok(const char *text)
{
	struct xrl_lpm_key key;
	int ret = xrl_cidr_parse(text, &key);

	cr_assert_eq(ret, 0, "%s: %s", text, strerror(-ret));
	return key;
}

static void assert_addr(const struct xrl_lpm_key *key, const char *v6_text)
{
	__u8 want[16];

	cr_assert_eq(inet_pton(AF_INET6, v6_text, want), 1);
	cr_assert_arr_eq(key->addr, want, 16, "address is not %s", v6_text);
}

Test(cidr, ipv4_is_ipv4_mapped_with_96_added_to_the_length)
{
	struct xrl_lpm_key key = parse_ok("198.18.0.0/15");

	cr_assert_eq(key.prefixlen, 96 + 15);
	assert_addr(&key, "::ffff:198.18.0.0");
	key = parse_ok("198.18.3.4");
	cr_assert_eq(key.prefixlen, 128, "a bare IPv4 address is a /32");
	assert_addr(&key, "::ffff:198.18.3.4");
	key = parse_ok("198.18.3.4/32");
	cr_assert_eq(key.prefixlen, 128);
}

Test(cidr, ipv6_is_kept_as_it_is)
{
	struct xrl_lpm_key key = parse_ok("fd00::/8");

	cr_assert_eq(key.prefixlen, 8);
	assert_addr(&key, "fd00::");
	key = parse_ok("fd00:1:2:3::/64");
	cr_assert_eq(key.prefixlen, 64);
	assert_addr(&key, "fd00:1:2:3::");
	key = parse_ok("fd00::1");
	cr_assert_eq(key.prefixlen, 128, "a bare IPv6 address is a /128");
	assert_addr(&key, "fd00::1");
}

Test(cidr, every_default_spelling_is_the_one_default_key)
{
	const char *texts[] = { "0.0.0.0/0", "::/0", "0::0/0" };
	struct xrl_lpm_key zero = { 0 }, key;
	size_t i;

	/* The default rule's key is all zeros: any other /0 key would be a
	 * second rule that the LPM map stores over the default. */
	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		key = parse_ok(texts[i]);
		cr_assert_arr_eq(&key, &zero, sizeof(key), "%s", texts[i]);
	}
}

Test(cidr, host_bits_past_the_length_are_refused)
{
	const char *texts[] = {
		"198.18.0.1/15", "198.19.0.0/15", "198.18.0.64/25",
		"1.2.3.4/0", "fd00::1/8", "fd00::1/127", "fd00:0:0:1::/48",
		"::1/0",
	};
	struct xrl_lpm_key key;
	size_t i;

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		cr_assert_eq(xrl_cidr_parse(texts[i], &key), -EADDRNOTAVAIL,
			     "%s", texts[i]);
}

Test(cidr, lengths_past_the_family_or_not_decimal_are_erange)
{
	const char *texts[] = {
		"198.18.0.0/33", "198.18.0.0/", "198.18.0.0/-1",
		"198.18.0.0/+8",
		"198.18.0.0/ 8", "198.18.0.0/8x", "198.18.0.0/0x8",
		"198.18.0.0/99999999999999999999", "fd00::/129", "fd00::/-0",
		"fd00::/", "fd00::/1.5",
	};
	struct xrl_lpm_key key;
	size_t i;

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		cr_assert_eq(xrl_cidr_parse(texts[i], &key), -ERANGE, "%s",
			     texts[i]);
	cr_assert_eq(parse_ok("198.18.0.0/32").prefixlen, 128);
	cr_assert_eq(parse_ok("fd00::/128").prefixlen, 128);
}

Test(cidr, text_that_is_no_address_is_einval)
{
	const char *texts[] = {
		"", "/8", "example", "198.18.0", "198.18.0.256", "198.18.0.1.2",
		"fd00:::1", "fd00::g", "198.18.0.0 /15", " 198.18.0.0",
		"198.18.0.0/15/1",
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789/8",
	};
	struct xrl_lpm_key key;
	size_t i;

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		int ret = xrl_cidr_parse(texts[i], &key);

		cr_assert(ret == -EINVAL || (i == 10 && ret == -ERANGE),
			  "%s: %d", texts[i], ret);
	}
}

Test(cidr, format_writes_back_what_parses_to_the_same_key)
{
	const char *texts[] = {
		"198.18.0.0/15", "198.18.0.1/32", "fd00::/8", "fd00::1/128",
		"0.0.0.0/0", "::ffff:0.0.0.0/96", "::ffff:198.18.0.0/111",
	};
	const char *shown[] = {
		"198.18.0.0/15", "198.18.0.1/32", "fd00::/8", "fd00::1/128",
		"0.0.0.0/0", "::ffff:0.0.0.0/96", "198.18.0.0/15",
	};
	struct xrl_lpm_key key, again;
	char buf[64];
	size_t i;

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		key = parse_ok(texts[i]);
		xrl_cidr_format(&key, buf, sizeof(buf));
		cr_assert_str_eq(buf, shown[i]);
		again = parse_ok(buf);
		cr_assert_arr_eq(&again, &key, sizeof(key), "%s", texts[i]);
	}
}

static struct xrl_settings settings_of(uint32_t v4_prefix, uint32_t v6_prefix)
{
	struct xrl_policy policy;
	struct xrl_settings out;

	cr_assert_eq(xrl_policy_init(&policy), 0);
	policy.v4_prefix = v4_prefix;
	policy.v6_prefix = v6_prefix;
	policy.malformed = XRL_MALFORMED_DROP;
	xrl_policy_settings(&policy, XRL_DEFAULT_SOURCES, 1, &out);
	xrl_policy_free(&policy);
	return out;
}

Test(settings, default_masks_key_ipv4_by_address_and_ipv6_by_64)
{
	struct xrl_policy policy;
	struct xrl_settings out;

	cr_assert_eq(xrl_policy_init(&policy), 0);
	xrl_policy_settings(&policy, XRL_DEFAULT_SOURCES, 1, &out);
	xrl_policy_free(&policy);
	cr_assert_eq(out.v4_mask, 0xffffffffu);
	cr_assert_eq(out.v6_mask[0], 0xffffffffu);
	cr_assert_eq(out.v6_mask[1], 0xffffffffu);
	cr_assert_eq(out.v6_mask[2], 0);
	cr_assert_eq(out.v6_mask[3], 0);
	cr_assert_eq(out.v4_prefix, 32);
	cr_assert_eq(out.v6_prefix, 64);
	cr_assert_eq(out.malformed_verdict, XRL_MALFORMED_PASS);
}

Test(settings, masks_are_network_order_prefixes)
{
	struct xrl_settings out = settings_of(24, 48);

	cr_assert_eq(out.v4_mask, htonl(0xffffff00));
	cr_assert_eq(out.v6_mask[0], 0xffffffffu);
	cr_assert_eq(out.v6_mask[1], htonl(0xffff0000));
	cr_assert_eq(out.v6_mask[2], 0);
	cr_assert_eq(out.v6_mask[3], 0);
	cr_assert_eq(out.malformed_verdict, XRL_MALFORMED_DROP);

	out = settings_of(1, 1);
	cr_assert_eq(out.v4_mask, htonl(0x80000000));
	cr_assert_eq(out.v6_mask[0], htonl(0x80000000));
	cr_assert_eq(out.v6_mask[1], 0);

	out = settings_of(31, 127);
	cr_assert_eq(out.v4_mask, htonl(0xfffffffe));
	cr_assert_eq(out.v6_mask[2], 0xffffffffu);
	cr_assert_eq(out.v6_mask[3], htonl(0xfffffffe));

	out = settings_of(32, 128);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(out.v6_mask[i], 0xffffffffu);
	cr_assert_eq(out.v4_prefix, 32);
	cr_assert_eq(out.v6_prefix, 128);
}

Test(settings, every_v6_length_sets_exactly_that_many_leading_bits)
{
	for (uint32_t len = 1; len <= 128; len++) {
		struct xrl_settings out = settings_of(32, len);
		uint8_t bytes[16];
		unsigned bit, ones = 0;

		memcpy(bytes, out.v6_mask, 16);
		for (bit = 0; bit < 128; bit++) {
			bool set = bytes[bit / 8] & (0x80 >> (bit % 8));

			cr_assert_eq(set, bit < len, "/%u bit %u", len, bit);
			ones += set;
		}
		cr_assert_eq(ones, len);
	}
}

Test(cidr, a_second_rule_for_every_source_is_refused_as_the_default)
{
	struct xrl_rule_spec rule = { .action = XRL_ACTION_DENY };
	struct xrl_policy policy;

	cr_assert_eq(xrl_policy_init(&policy), 0);
	rule.prefix = parse_ok("0.0.0.0/0");
	cr_assert_eq(xrl_policy_add(&policy, &rule), -EEXIST);
	rule.prefix = parse_ok("::/0");
	cr_assert_eq(xrl_policy_add(&policy, &rule), -EEXIST);
	cr_assert_eq(policy.n_rules, 1);
	xrl_policy_free(&policy);
}
