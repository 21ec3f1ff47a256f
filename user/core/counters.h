/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * counters.h - the names of the program's counters (include/xrl.h).
 */
#ifndef XRL_COUNTERS_H
#define XRL_COUNTERS_H

#include "xrl.h"

/* "pass", "drop", "monitor", "allow", "deny", "malformed", "nonip",
 * "vlan_overflow", "ipv4_mapped", "banned", "tiny_fragment",
 * "unjudged_fragment", "header_overflow", "blocklisted"; and what each counts, one
 * line for the docs. */
const char *xrl_verdict_name(enum xrl_verdict verdict);
const char *xrl_verdict_help(enum xrl_verdict verdict);

/* "inserts", "insert_failures", "refused", "fallback_pass",
 * "fallback_drop". */
const char *xrl_table_event_name(enum xrl_table_event event);

/* "sent", "suppressed", "lost". */
const char *xrl_event_outcome_name(enum xrl_event_outcome outcome);

#endif
