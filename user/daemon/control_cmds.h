/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * control_cmds.h - inside the control protocol: one request being
 * handled, the command table's entry (control.c), and the commands, one
 * file per group of them. Not for use outside them.
 */
#ifndef XRL_CONTROL_CMDS_H
#define XRL_CONTROL_CMDS_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>
#include "change.h"

#define XRL_TOP_DEFAULT		10
#define XRL_TOP_MAX		10000

struct xrl_request {
	struct xrl_daemon_state *state;
	bool privileged;
	json_t *json;		/* the request object */
	json_t *response;	/* fields added here on success */
	char err[512];		/* one human sentence on failure */
};

/* A command's return for a request answered later (a reload, read off
 * the loop; control.h's XRL_CONTROL_LATER for the caller). */
#define XRL_REQUEST_LATER	1

struct xrl_control_command {
	const char *name;
	const char *const *fields;	/* besides "cmd"; NULL-ended */
	int (*run)(struct xrl_request *req);	/* 0 or -errno + req->err,
						 * or XRL_REQUEST_LATER */
	bool changes;			/* a refusal counts in changes_refused */
	bool rule_keys;			/* takes the rule table's keys too */
};

/* rule.add, rule.del, rule.list, reload: the policy (control_rules.c). */
int xrl_control_rule_add(struct xrl_request *req);
int xrl_control_rule_del(struct xrl_request *req);
int xrl_control_rule_list(struct xrl_request *req);
int xrl_control_reload(struct xrl_request *req);
/* rule.revert, check: the runtime overlay undone, and what a reload
 * would do (control_overlay.c); the fields of a plan's report
 * (xrl_daemon_plan_json, taken over) added to a reply. */
int xrl_control_rule_revert(struct xrl_request *req);
int xrl_control_check(struct xrl_request *req);
void xrl_control_reply_plan(struct xrl_request *req, json_t *report);
/* The second half of a reload that returned XRL_REQUEST_LATER. */
int xrl_control_reload_done(struct xrl_request *req);
/* stats, status, top, events: counters, sources, events
 * (control_report.c). */
int xrl_control_stats(struct xrl_request *req);
int xrl_control_status(struct xrl_request *req);
int xrl_control_top(struct xrl_request *req);
int xrl_control_events(struct xrl_request *req);
/* ban, unban, bans: bans by hand (control_bans.c). */
int xrl_control_ban(struct xrl_request *req);
int xrl_control_unban(struct xrl_request *req);
int xrl_control_bans(struct xrl_request *req);

/* blocklist.reload: one list read again and swapped in alone, and its
 * second half when read off the loop (control_blocklists.c). */
int xrl_control_blocklist_reload(struct xrl_request *req);
int xrl_control_blocklist_done(struct xrl_request *req);

#endif
