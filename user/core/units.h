/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * units.h - the numbers of the formats, as a policy file, the control
 * socket, the CLI and reports write them: quantities ("10k", "2.5M") and
 * durations ("500ms", "30s", "7d"). One parser and one formatter of each
 * for every key that takes one.
 */
#ifndef XRL_UNITS_H
#define XRL_UNITS_H

#include <stddef.h>
#include <stdint.h>

/*
 * "10k", "2.5M", "1G", "1500": k/M/G (or K) are 10^3/10^6/10^9. 0, or
 * -EINVAL (not a number: a sign, spaces, an exponent, another suffix),
 * -EDOM (a decimal that is no whole number: "1.5") or -ERANGE (over
 * UINT64_MAX). @value is written only on success.
 */
int xrl_parse_quantity(const char *text, uint64_t *value);
/* The shortest exact text of @value: 10000 -> "10k", 2500000 -> "2500k". */
void xrl_format_quantity(uint64_t value, char *buf, size_t len);
/*
 * A size in memory as systemd's MemoryMax= takes it: a whole number of
 * bytes with an optional K, M, G or T (base 1024: "512M", "2G"), or a
 * percentage of @ram_bytes ("25%", whole). 0 or -EINVAL (other text, 0,
 * a percentage past 100), -ERANGE (over UINT64_MAX).
 */
int xrl_parse_bytes(const char *text, uint64_t ram_bytes, uint64_t *bytes);
/* A size in memory for a person: "512 B", "16.0 KiB", "168.3 MiB",
 * "1.2 GiB" (binary units, one decimal). */
void xrl_format_bytes(uint64_t bytes, char *buf, size_t len);

/*
 * A whole number and its unit, ns, us, ms, s, m, h or d ("500ms", "10s",
 * "7d"), into ns; -EINVAL for other text, -ERANGE past @max_ns. Formatted
 * back in the largest unit that divides it exactly, which parses back to
 * @ns.
 */
int xrl_duration_ns_parse(const char *text, uint64_t max_ns, uint64_t *ns);
void xrl_duration_ns_format(uint64_t ns, char *buf, size_t len);

/* "100ms", "2s" or "250" (ms). 0, -EINVAL or -ERANGE. */
int xrl_duration_ms_parse(const char *text, uint64_t *ms);

#endif
