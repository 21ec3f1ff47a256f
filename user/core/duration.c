// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * duration.c - durations as policies, the control socket and reports
 * write them ("100ms", "30s", "7d"): one parser and one formatter for
 * every key that takes one (interval, window, ban, ban_after, ban_max,
 * ban --for).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "policy.h"

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
