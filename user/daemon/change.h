/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * change.h - the daemon's state, and the one way it changes the policy
 * in force: a copy of the running policy (or a file) becomes a whole new
 * policy, is checked, and is applied in one swap (xrl_policy_apply). When
 * any step fails the running policy stays as it was, in the data path
 * and here. The requests that ask for changes: control.h.
 */
#ifndef XRL_CHANGE_H
#define XRL_CHANGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <linux/types.h>
#include <jansson.h>
#include "overlay.h"
#include "policy_read.h"

struct xrl_budgets;
struct xrl_datapath;
struct xrl_daemon_state;
struct xrl_event_log;
struct xrl_file_load;
struct xrl_manual_bans;
struct xrl_pin_dir;

/* The last reload of a file (SIGHUP or `reload`): when, and how it went. */
struct xrl_reload_result {
	time_t at;		/* 0: none since the daemon started */
	bool ok;
	char error[512];	/* the refusal's line, when not ok */
	char runtime[512];	/* the runtime changes kept or dropped, when
				 * ok (overlay.h's summary), or "" */
};

typedef int (*xrl_apply_fn)(struct xrl_daemon_state *state,
			    const struct xrl_policy *next, char *err,
			    size_t len);

struct xrl_daemon_state {
	struct xrl_datapath *dp;	/* NULL: none (the fuzz target) */
	struct xrl_policy policy;	/* the policy in force */
	const char *config_path;	/* what `reload` reads; NULL: none */
	const char *state_path;		/* the applied policy's copy */
	const char *overlay_path;	/* runtime changes (overlay.h); NULL:
					 * none kept */
	struct xrl_lpm_key *deleted;	/* prefixes deleted at runtime */
	struct xrl_policy file;		/* the file's own rules, as last read:
					 * a deletion is kept only for the
					 * prefix of one of them */
	struct xrl_manual_bans *bans;	/* by hand (manual_bans.h), or NULL */
	size_t n_deleted;
	const char *socket_path;	/* for status */
	char **interfaces;		/* attached by this daemon */
	size_t n_interfaces;
	struct xrl_pin_dir *lock;	/* flocked around each swap, or NULL */
	xrl_apply_fn apply;		/* NULL: xrl_policy_apply on dp */
	void *apply_ctx;		/* for @apply */
	__u32 head_map_id;		/* policy head it applied, or 0 */
	time_t started;
	uint64_t n_changes;		/* policies applied since start */
	uint64_t n_refused;		/* changes refused since start */
	struct xrl_budgets *budgets;	/* aggregate sync engine, or NULL */
	time_t changed_at;		/* when the policy in force came */
	/* Called after each change and each reload, applied or refused,
	 * e.g. to hand the names and the reload's result to /metrics. */
	void (*changed)(struct xrl_daemon_state *state);
	void *changed_ctx;		/* for @changed */
	struct xrl_event_log *events;	/* recent limit events, or NULL */
	struct xrl_reload_result last_reload;	/* SIGHUP or `reload` */
	size_t n_clients;		/* connected to the socket now */
	/* Reads reloaded files off the control loop (the server's), or
	 * NULL: reloads read them in place. */
	struct xrl_file_load *load;
	/* What only a restart changes, as the config file had it at start
	 * (a reload that changes one is refused, naming it). */
	struct {
		const char *redis;		/* "redis:", or NULL */
		uint64_t sync_interval_ms;	/* 0: not set */
		const char *metrics;		/* "metrics:", or NULL */
		char **interfaces;		/* "interfaces:" */
		size_t n_interfaces;
	} started_with;
};

/*
 * Makes @next (checked here, its ids carried over from the running
 * policy) the policy in force. Takes @next over in every case. On error
 * returns -errno with one line in @err, and nothing changed.
 */
int xrl_daemon_change(struct xrl_daemon_state *state, struct xrl_policy *next,
		      char *err, size_t len);

/*
 * The same for a change made at runtime (rule.add, rule.del): with
 * @deleted, the prefixes deleted at runtime after it (taken over), it is
 * saved to the overlay's temporary file first and renamed into place
 * once applied: what cannot be saved is not applied, what is applied is
 * saved.
 */
int xrl_daemon_change_runtime(struct xrl_daemon_state *state,
			      struct xrl_policy *next,
			      struct xrl_lpm_key *deleted, size_t n_deleted,
			      char *err, size_t len);

/*
 * 0 when the rules map in force is the one this daemon applied last;
 * -ESTALE (with @err) when something else (`xdp-ratelimit attach
 * --policy`) swapped in another since: a change made to the daemon's copy
 * would silently undo it, so edits are refused until a reload.
 */
int xrl_daemon_check_in_force(struct xrl_daemon_state *state, char *err,
			      size_t len);

/* The runtime changes of @state (its runtime rules, the prefixes deleted)
 * as copies in @ov (xrl_overlay_free it). 0 or -ENOMEM. */
int xrl_daemon_overlay(const struct xrl_daemon_state *state,
		       struct xrl_overlay *ov);

/*
 * What a reload would put in force, computed once for `reload`, SIGHUP,
 * `rule revert` and `check`: the file read (from @path, or from @text
 * named @path when @text is not NULL) and checked as a reload checks it,
 * with the overlay @ov on top. The outcome, and on error -errno with one
 * line in @err. Free it with xrl_reload_plan_free().
 */
struct xrl_reload_plan {
	const char *path;
	struct xrl_config config;	/* the file's, the overlay on top */
	struct xrl_policy file;		/* the file's own rules */
	struct xrl_overlay_outcome runtime;
};

int xrl_daemon_plan(const struct xrl_daemon_state *state, const char *path,
		    const char *text, size_t text_len,
		    const struct xrl_overlay *ov, struct xrl_reload_plan *plan,
		    char *err, size_t len);
void xrl_reload_plan_free(struct xrl_reload_plan *plan);

/*
 * What @plan would change against the policy in force (plan.h) with its
 * "runtime" summary and its "rules" count, for a reply; NULL without a
 * data path or memory.
 */
json_t *xrl_daemon_plan_json(const struct xrl_daemon_state *state,
			     const struct xrl_reload_plan *plan);

/*
 * Puts @plan in force (taking its policy over), saving the overlay it
 * keeps when @save_overlay or when it dropped an entry. Frees @plan.
 */
int xrl_daemon_apply_plan(struct xrl_daemon_state *state,
			  struct xrl_reload_plan *plan, bool save_overlay,
			  char *err, size_t len);

/*
 * Reads a policy file (@path, or the config file when NULL) and applies
 * it whole, with the runtime changes on top (xrl_daemon_plan). The file's
 * own error line ("FILE:LINE: FIELD: ...") in @err. The outcome is kept
 * in @state->last_reload; with @report, what it changed
 * (xrl_daemon_plan_json) in *@report (json_decref it) on success.
 */
int xrl_daemon_reload(struct xrl_daemon_state *state, const char *path,
		      json_t **report, char *err, size_t len);

/* "8 rules (1 runtime change kept: delete 198.18.3.0/24)": the last
 * reload's outcome as the log and the CLI say it, in @buf. */
const char *xrl_daemon_reload_words(const struct xrl_daemon_state *state,
				    char *buf, size_t len);

/*
 * The same in two halves, the file read off the control loop by
 * @state->load: _start checks the file and starts reading it (-EBUSY
 * while a reload is being read); once @state->load->done_fd is readable,
 * _finish applies what was read, or refuses it, as xrl_daemon_reload
 * (its @report the same).
 */
int xrl_daemon_reload_start(struct xrl_daemon_state *state, const char *path,
			    char *err, size_t len);
int xrl_daemon_reload_finish(struct xrl_daemon_state *state, json_t **report,
			     char *err, size_t len);

/*
 * After adopting a pinned data path: takes the policy in the state file
 * as the running one when the data path holds exactly it. -ENOENT when
 * there is no state file, -ESTALE when it is not what is in force.
 */
int xrl_daemon_adopt_state(struct xrl_daemon_state *state, char *err,
			   size_t len);

/* Counts a refused change (changes_refused) and logs why. */
void xrl_daemon_refused(struct xrl_daemon_state *state, const char *why);

/* Writes the running policy to the state file (atomically, by rename). */
int xrl_daemon_save_state(struct xrl_daemon_state *state);

void xrl_daemon_state_free(struct xrl_daemon_state *state);

#endif
