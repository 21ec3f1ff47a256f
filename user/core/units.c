// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * units.c - quantities and durations as the formats write them (units.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "units.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* ---- quantities ----------------------------------------------------- */

int xrl_parse_quantity(const char *text, uint64_t *value)
{
	static const struct { char suffix; uint64_t scale; } suffixes[] = {
		{ 'k', 1000 }, { 'K', 1000 }, { 'M', 1000000 },
		{ 'G', 1000000000 },
	};
	unsigned __int128 whole = 0, fraction = 0, fraction_scale = 1, total;
	uint64_t scale = 1;
	const char *p = text, *frac_start, *frac_end;
	size_t i;

	if (*p < '0' || *p > '9')
		return -EINVAL;	/* empty, a sign, a space, a dot first */
	for (; *p >= '0' && *p <= '9'; p++) {
		whole = whole * 10 + (*p - '0');
		if (whole > UINT64_MAX)
			return -ERANGE;
	}
	frac_start = frac_end = p;
	if (*p == '.') {
		frac_start = ++p;
		while (*p >= '0' && *p <= '9')
			p++;
		if (p == frac_start)
			return -EINVAL;	/* "5." or "5.k" */
		/* Trailing zeros change nothing; past 9 digits no suffix
		 * makes a whole number, so stop counting there. */
		for (frac_end = p; frac_end > frac_start && frac_end[-1] == '0';)
			frac_end--;
		if (frac_end - frac_start > 9)
			return -EDOM;
	}
	if (*p) {
		for (i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++)
			if (*p == suffixes[i].suffix)
				scale = suffixes[i].scale;
		if (scale == 1 || p[1])
			return -EINVAL;
	}
	for (; frac_start < frac_end; frac_start++) {
		fraction = fraction * 10 + (*frac_start - '0');
		fraction_scale *= 10;
	}
	if (fraction * scale % fraction_scale)
		return -EDOM;
	total = whole * scale + fraction * scale / fraction_scale;
	if (total > UINT64_MAX)
		return -ERANGE;
	*value = (uint64_t)total;
	return 0;
}

void xrl_format_quantity(uint64_t value, char *buf, size_t len)
{
	static const struct { char suffix; uint64_t scale; } units[] = {
		{ 'G', 1000000000 }, { 'M', 1000000 }, { 'k', 1000 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(units); i++) {
		if (value && value % units[i].scale == 0) {
			snprintf(buf, len, "%" PRIu64 "%c",
				 value / units[i].scale, units[i].suffix);
			return;
		}
	}
	snprintf(buf, len, "%" PRIu64, value);
}

int xrl_parse_bytes(const char *text, uint64_t ram_bytes, uint64_t *bytes)
{
	static const char suffixes[] = "KMGT";
	unsigned long long number;
	const char *at;
	unsigned shift;
	char *end;

	if (text[0] < '0' || text[0] > '9')
		return -EINVAL;
	errno = 0;
	number = strtoull(text, &end, 10);
	if (errno)
		return -ERANGE;
	if (!strcmp(end, "%")) {
		if (!number || number > 100)
			return -EINVAL;
		*bytes = (uint64_t)((unsigned __int128)ram_bytes * number / 100);
		return 0;
	}
	shift = 0;
	if (*end) {
		at = strchr(suffixes, *end);
		if (!at || end[1])
			return -EINVAL;
		shift = 10 * (unsigned)(at - suffixes + 1);
	}
	if (!number)
		return -EINVAL;
	if (number > UINT64_MAX >> shift)
		return -ERANGE;
	*bytes = (uint64_t)number << shift;
	return 0;
}

void xrl_format_bytes(uint64_t bytes, char *buf, size_t len)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
	double value = bytes;
	size_t i;

	if (bytes < 1024) {
		snprintf(buf, len, "%" PRIu64 " B", bytes);
		return;
	}
	for (i = 0; i + 1 < ARRAY_SIZE(units) && value >= 1024 * 1024; i++)
		value /= 1024;
	snprintf(buf, len, "%.1f %s", value / 1024, units[i]);
}

/* ---- durations ------------------------------------------------------ */

/* Longest first: the formatter takes the first unit that divides. */
static const struct {
	const char *unit;
	uint64_t ns;
} units[] = {
	{ "d", 86400000000000ULL }, { "h", 3600000000000ULL },
	{ "m", 60000000000ULL }, { "s", 1000000000ULL },
	{ "ms", 1000000ULL }, { "us", 1000ULL }, { "ns", 1ULL },
};

#define N_UNITS (sizeof(units) / sizeof(units[0]))

int xrl_duration_ns_parse(const char *text, uint64_t max_ns, uint64_t *ns)
{
	unsigned long long number;
	char *end;
	size_t i;

	if (*text < '0' || *text > '9')
		return -EINVAL;
	errno = 0;
	number = strtoull(text, &end, 10);
	if (errno)
		return -ERANGE;
	for (i = 0; i < N_UNITS; i++) {
		if (strcmp(end, units[i].unit))
			continue;
		if (number > max_ns / units[i].ns)
			return -ERANGE;
		*ns = number * units[i].ns;
		return 0;
	}
	return -EINVAL;
}

void xrl_duration_ns_format(uint64_t ns, char *buf, size_t len)
{
	size_t i;

	for (i = 0; i < N_UNITS; i++) {
		if (ns && ns % units[i].ns == 0) {
			snprintf(buf, len, "%llu%s",
				 (unsigned long long)(ns / units[i].ns),
				 units[i].unit);
			return;
		}
	}
	snprintf(buf, len, "0s");
}

int xrl_duration_ms_parse(const char *text, uint64_t *ms)
{
	unsigned long long value;
	char *end;

	if (*text < '0' || *text > '9')
		return -EINVAL;
	errno = 0;
	value = strtoull(text, &end, 10);
	if (errno || value > UINT32_MAX)
		return -ERANGE;
	if (!strcmp(end, "s"))
		value *= 1000;
	else if (*end && strcmp(end, "ms"))
		return -EINVAL;
	*ms = value;
	return 0;
}
