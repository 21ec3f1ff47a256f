/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * overlay.h - the changes made through the control socket, kept beside
 * the policy file: the rules added (or replaced) and the prefixes deleted
 * at runtime. The policy in force is always the file's with the overlay
 * on top, after a reload, SIGHUP or restart as before it.
 *
 * The file (JSON, policy.runtime.json beside the state file) is written
 * to PATH.tmp before a change is applied and renamed into place after
 * (state_file.h), so a change that cannot be saved is refused before it
 * is made.
 */
#ifndef XRL_OVERLAY_H
#define XRL_OVERLAY_H

#include <stddef.h>
#include <jansson.h>
#include "policy.h"

#define XRL_OVERLAY_NAME "policy.runtime.json"

struct xrl_overlay {
	struct xrl_rule_spec *rules; /* added or replaced at runtime */
	size_t n_rules;
	struct xrl_lpm_key *deleted; /* prefixes removed at runtime */
	size_t n_deleted;
};

/* Reads @path (none: an empty overlay). -errno with "PATH: ..." in @err
 * for a file that is not one this daemon wrote. */
int xrl_overlay_load(const char *path, struct xrl_overlay *ov, char *err,
		     size_t len);
void xrl_overlay_free(struct xrl_overlay *ov);

/* The runtime rules of @policy and the @deleted prefixes, into PATH.tmp.
 * 0 or -errno with one line in @err. */
int xrl_overlay_stage(const char *path, const struct xrl_policy *policy,
		      const struct xrl_lpm_key *deleted, size_t n_deleted,
		      char *err, size_t len);
/* What a merge kept of the overlay, and what it dropped. */
struct xrl_overlay_outcome {
	struct xrl_lpm_key *deleted;	/* the deletions kept (free() it) */
	size_t n_deleted;
	size_t n_kept, n_dropped;	/* overlay entries */
	/* "2 runtime changes kept: add 198.18.9.0/24, delete 198.18.3.0/24;
	 * 1 dropped (no longer in the file): delete 198.18.5.0/24", or "". */
	char summary[512];
};

/*
 * Puts the overlay @ov on top of @policy (a file's): each runtime rule
 * replaces the file's rule of its prefix or is added; a deleted prefix
 * goes when the file has a plain rule for it (kept), and is dropped from
 * the overlay when it has none (the deletion means nothing any more; a
 * rule the file gains for it later is applied). A runtime rule named like
 * a file rule of another prefix is a conflict: -EEXIST with @err naming
 * both, nothing dropped silently. @out is filled on success only.
 */
int xrl_overlay_merge(struct xrl_policy *policy, const struct xrl_overlay *ov,
		      struct xrl_overlay_outcome *out, char *err, size_t len);

/* @deleted without @prefix, or with it added: a new array (free() it) in
 * *@out. 0 or -ENOMEM. */
int xrl_overlay_deleted_with(const struct xrl_lpm_key *deleted, size_t n,
			     const struct xrl_lpm_key *prefix, bool add,
			     struct xrl_lpm_key **out, size_t *n_out);

#endif
