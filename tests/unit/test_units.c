// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Sizes in memory as status prints them (units.h). */
#include <errno.h>
#include <criterion/criterion.h>
#include "units.h"

static void expect_bytes(uint64_t bytes, const char *text)
{
	char buf[32];

	xrl_format_bytes(bytes, buf, sizeof(buf));
	cr_assert_str_eq(buf, text, "%llu", (unsigned long long)bytes);
}

Test(units, sizes_in_binary_units_with_one_decimal)
{
	expect_bytes(0, "0 B");
	expect_bytes(1023, "1023 B");
	expect_bytes(1024, "1.0 KiB");
	expect_bytes(27136, "26.5 KiB");
	expect_bytes(1048575, "1024.0 KiB");
	expect_bytes(1048576, "1.0 MiB");
	expect_bytes(176161664, "168.0 MiB");
	expect_bytes(1229683336, "1.1 GiB");
	expect_bytes(3ULL << 40, "3.0 TiB");
	expect_bytes(UINT64_MAX, "16777216.0 TiB");
}

static uint64_t bytes_of(const char *text)
{
	uint64_t bytes = 0;

	cr_assert_eq(xrl_parse_bytes(text, 8ULL << 30, &bytes), 0, "%s", text);
	return bytes;
}

Test(units, sizes_as_systemd_takes_them_base_1024_or_a_share_of_memory)
{
	uint64_t bytes;

	cr_assert_eq(bytes_of("4096"), 4096);
	cr_assert_eq(bytes_of("512K"), 512ULL << 10);
	cr_assert_eq(bytes_of("512M"), 512ULL << 20);
	cr_assert_eq(bytes_of("2G"), 2ULL << 30);
	cr_assert_eq(bytes_of("1T"), 1ULL << 40);
	cr_assert_eq(bytes_of("25%"), 2ULL << 30);	/* of 8 GiB */
	cr_assert_eq(bytes_of("100%"), 8ULL << 30);
	cr_assert_eq(xrl_parse_bytes("16777216T", 0, &bytes), -ERANGE);
	cr_assert_eq(xrl_parse_bytes("99999999999999999999", 0, &bytes),
		     -ERANGE);
	cr_assert_eq(xrl_parse_bytes("0", 0, &bytes), -EINVAL);
	cr_assert_eq(xrl_parse_bytes("101%", 0, &bytes), -EINVAL);
	cr_assert_eq(xrl_parse_bytes("1.5G", 0, &bytes), -EINVAL);
	cr_assert_eq(xrl_parse_bytes("2GB", 0, &bytes), -EINVAL);
	cr_assert_eq(xrl_parse_bytes("-1M", 0, &bytes), -EINVAL);
	cr_assert_eq(xrl_parse_bytes(" 1M", 0, &bytes), -EINVAL);
	cr_assert_eq(xrl_parse_bytes("", 0, &bytes), -EINVAL);
}
