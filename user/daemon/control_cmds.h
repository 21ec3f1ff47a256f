/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * control_cmds.h - inside the control protocol: one request being
 * handled, the command table's entry, and the helpers the command files
 * (control.c, control_report.c) share. Not for use outside them.
 */
#ifndef XRL_CONTROL_CMDS_H
#define XRL_CONTROL_CMDS_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>
#include "control.h"

struct xrl_request {
	struct xrl_daemon_state *state;
	bool privileged;
	json_t *json;		/* the request object */
	json_t *response;	/* fields added here on success */
	char err[512];		/* one human sentence on failure */
};

struct xrl_control_command {
	const char *name;
	const char *const *fields;	/* besides "cmd"; NULL-ended */
	int (*run)(struct xrl_request *req);	/* 0 or -errno + req->err */
	bool changes;			/* a refusal counts in changes_refused */
};

/* stats, status and top: counters and sources (control_report.c). */
int xrl_control_stats(struct xrl_request *req);
int xrl_control_status(struct xrl_request *req);
int xrl_control_top(struct xrl_request *req);
/* ban, unban, bans: bans by hand (control_bans.c). */
int xrl_control_ban(struct xrl_request *req);
int xrl_control_unban(struct xrl_request *req);
int xrl_control_bans(struct xrl_request *req);
/* events: the recent limit events and the event counters. */
int xrl_control_events(struct xrl_request *req);

/* Adds the strategy's fields of @rule to @obj ("strategy", and
 * "interval", "limit", "window" when set). */
void xrl_control_strategy_json(json_t *obj, const struct xrl_rule_spec *rule);

/* Adds an L4 rule's keys to @obj as rule.add takes them ("proto",
 * "sport", "dport", "tcp_flags"), and "match" to show. */
void xrl_control_match_json(json_t *obj, const struct xrl_rule_match *m);

/* Field readers: absent optional fields read as 0 / NULL. */
int xrl_control_quantity(json_t *req, const char *field, uint64_t *value,
			 char *err, size_t len);
int xrl_control_string(json_t *req, const char *field, bool required,
		       const char **value, char *err, size_t len);
int xrl_control_cidr(const char *text, struct xrl_lpm_key *key, char *err,
		     size_t len);
/* The rule of a rule.add request (or of an overlay entry), checked. */
int xrl_control_parse_rule(json_t *req, struct xrl_rule_spec *rule, char *err,
			   size_t len);
json_t *xrl_control_rule_json(const struct xrl_daemon_state *state,
			      const struct xrl_rule_spec *rule);
/* "ban", "ban_after", "ban_max" of a rule (control_ban.c): read into
 * @rule (checked with the rule), and added to @obj when set. */
int xrl_control_parse_ban(json_t *req, struct xrl_rule_spec *rule, char *err,
			  size_t len);
void xrl_control_ban_json(json_t *obj, const struct xrl_rule_spec *rule);
/* "levels" of a rule (control_levels.c): a list of level texts
 * (xrl_level_parse) read into @rule (checked with the rule), and added
 * to @obj when the rule has levels. */
int xrl_control_parse_levels(json_t *req, struct xrl_rule_spec *rule,
			     char *err, size_t len);
void xrl_control_levels_json(json_t *obj, const struct xrl_rule_spec *rule);

#endif
