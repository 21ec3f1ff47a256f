/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * events.h - limit events as the daemon shows them: read from the ring
 * buffer (struct xrl_limit_event, include/xrl.h), described with the
 * policy's rule names and limits, logged, and kept in a bounded list of
 * recent ones for the `events` command.
 */
#ifndef XRL_EVENTS_H
#define XRL_EVENTS_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>
#include "policy.h"
#include "rule_spec.h"
#include "xrl.h"

#define XRL_EVENTS_KEPT		1024	/* recent events the daemon keeps */

struct xrl_event_record {
	uint64_t seq;			/* 1, 2, ... in arrival order */
	struct xrl_limit_event raw;
	double wall_time;		/* seconds since the epoch */
	char source[64];		/* address, or CIDR for wider keys */
	char rule[XRL_RULE_NAME_MAX];	/* name, or "id-N" if unknown */
	enum xrl_action action;
	bool escalated;			/* the ban of a prefix: source is it */
	double pps;			/* observed; < 0: not known */
	uint64_t limit_pps;		/* the rule's, 0: none */
	uint64_t limit_bps;
};

/*
 * Describes @raw with the rule of @policy it names; @wall_time is when
 * it happened. The record's seq is left 0.
 */
void xrl_event_describe(const struct xrl_limit_event *raw,
			const struct xrl_policy *policy, double wall_time,
			struct xrl_event_record *rec);

/* "source 198.51.100.7 limited by rule web: 4,211 pps over 1,000 pps" */
void xrl_event_format(const struct xrl_event_record *rec, char *buf,
		      size_t len);

json_t *xrl_event_json(const struct xrl_event_record *rec);

/* The last XRL_EVENTS_KEPT records, oldest overwritten first. */
struct xrl_event_log {
	struct xrl_event_record *ring;
	uint64_t next_seq;		/* seq the next record gets */
	size_t n;			/* records held */
};

int xrl_event_log_init(struct xrl_event_log *log);
void xrl_event_log_free(struct xrl_event_log *log);
/* Adds a copy of @rec, numbered; returns its seq. */
uint64_t xrl_event_log_add(struct xrl_event_log *log,
			   const struct xrl_event_record *rec);
/* The records after seq @since, at most the last @max, oldest first. */
json_t *xrl_event_log_json(const struct xrl_event_log *log, uint64_t since,
			   size_t max);

/* Wall time, in seconds since the epoch, of a CLOCK_MONOTONIC time. */
double xrl_monotonic_to_wall(uint64_t monotonic_ns);

#endif
