// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * counters.c - the names of the program's counters (include/xrl.h), as
 * status, stats and /metrics print them.
 */
#include "counters.h"

static const char *const verdict_names[XRL_VERDICT_COUNT] = {
	[XRL_VERDICT_PASS] = "pass",
	[XRL_VERDICT_DROP] = "drop",
	[XRL_VERDICT_MONITOR] = "monitor",
	[XRL_VERDICT_ALLOW] = "allow",
	[XRL_VERDICT_DENY] = "deny",
	[XRL_VERDICT_MALFORMED] = "malformed",
	[XRL_VERDICT_NONIP] = "nonip",
	[XRL_VERDICT_VLAN_OVERFLOW] = "vlan_overflow",
	[XRL_VERDICT_IPV4_MAPPED] = "ipv4_mapped",
	[XRL_VERDICT_BANNED] = "banned",
	[XRL_VERDICT_TINY_FRAGMENT] = "tiny_fragment",
	[XRL_VERDICT_UNJUDGED_FRAGMENT] = "unjudged_fragment",
	[XRL_VERDICT_HEADER_OVERFLOW] = "header_overflow",
	[XRL_VERDICT_BLOCKLISTED] = "blocklisted",
};

const char *xrl_verdict_name(enum xrl_verdict verdict)
{
	return verdict < XRL_VERDICT_COUNT ? verdict_names[verdict] : "?";
}

static const char *const verdict_help[XRL_VERDICT_COUNT] = {
	[XRL_VERDICT_PASS] = "a limited source within its limits, passed",
	[XRL_VERDICT_DROP] = "over its limits, dropped",
	[XRL_VERDICT_MONITOR] = "over a monitor rule's limits, passed",
	[XRL_VERDICT_ALLOW] = "an allow rule's, passed unlimited",
	[XRL_VERDICT_DENY] = "a deny rule's, dropped",
	[XRL_VERDICT_MALFORMED] = "an IP header the parser cannot read "
				  "(malformed: says pass or drop)",
	[XRL_VERDICT_NONIP] = "neither IPv4 nor IPv6, passed untouched",
	[XRL_VERDICT_VLAN_OVERFLOW] = "more than 8 VLAN tags "
				      "(vlan_overflow: says drop or pass)",
	[XRL_VERDICT_IPV4_MAPPED] = "an IPv4-mapped or IPv4-compatible IPv6 "
				    "source, dropped (ipv4_mapped: drop)",
	[XRL_VERDICT_BANNED] = "a banned source's, or a banned prefix's, "
			       "dropped",
	[XRL_VERDICT_TINY_FRAGMENT] = "a first fragment too short for its L4 "
				      "header, at a prefix with an L4 rule, "
				      "dropped",
	[XRL_VERDICT_UNJUDGED_FRAGMENT] = "a later fragment whose first was "
					  "not judged, dropped "
					  "(unjudged_fragments: drop)",
	[XRL_VERDICT_HEADER_OVERFLOW] = "an IPv6 packet of more than 8 "
					"extension headers at a prefix with an "
					"L4 rule, dropped (header_overflow: "
					"drop)",
	[XRL_VERDICT_BLOCKLISTED] = "a source a deny blocklist holds "
				    "(blocklists:), dropped before the rules",
};

const char *xrl_verdict_help(enum xrl_verdict verdict)
{
	return verdict < XRL_VERDICT_COUNT && verdict_help[verdict] ?
	       verdict_help[verdict] : "?";
}

static const char *const table_event_names[XRL_TABLE_EVENTS] = {
	[XRL_TABLE_INSERT] = "inserts",
	[XRL_TABLE_INSERT_FAILED] = "insert_failures",
	[XRL_TABLE_REFUSED] = "refused",
	[XRL_TABLE_FALLBACK_PASS] = "fallback_pass",
	[XRL_TABLE_FALLBACK_DROP] = "fallback_drop",
};

const char *xrl_table_event_name(enum xrl_table_event event)
{
	return event < XRL_TABLE_EVENTS ? table_event_names[event] : "?";
}

static const char *const event_outcome_names[XRL_EVENT_OUTCOMES] = {
	[XRL_EVENT_SENT] = "sent",
	[XRL_EVENT_SUPPRESSED] = "suppressed",
	[XRL_EVENT_LOST] = "lost",
};

const char *xrl_event_outcome_name(enum xrl_event_outcome outcome)
{
	return outcome < XRL_EVENT_OUTCOMES ? event_outcome_names[outcome] :
					      "?";
}
