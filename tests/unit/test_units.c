// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Sizes in memory as status prints them (units.h). */
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
