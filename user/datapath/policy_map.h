/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * policy_map.h - a policy in the data path: applied in one step (its
 * rules are written into the slot no packet reads, then a new head
 * naming them, with the policy's settings, is swapped in with a single
 * update: include/xrl.h), read back, compared.
 */
#ifndef XRL_POLICY_MAP_H
#define XRL_POLICY_MAP_H

#include <stddef.h>
#include "policy.h"

struct xrl_datapath;

/*
 * Makes @policy the data path's in one step. Nothing changes when it
 * fails (returns -errno, @err says why). One writer at a time: the pin
 * directory's lock, or the one process that loaded the data path.
 */
int xrl_policy_apply(struct xrl_datapath *dp, const struct xrl_policy *policy,
		     char *err, size_t len);

/*
 * The two halves of xrl_policy_apply() (without the aggregate shares),
 * apart so that a test can stop between them as a killed daemon would.
 * Stage writes the rules into the slot the head in force does not name
 * and builds the new head: nothing a packet reads changes. Commit swaps
 * the head in (the switch) and re-pins the maps in force. Unstage closes
 * what stage made (the maps live on while in force).
 */
struct xrl_staged_policy {
	int rules_fd;
	int head_fd;
	__u32 slot;
};

int xrl_policy_stage(struct xrl_datapath *dp, const struct xrl_policy *policy,
		     struct xrl_staged_policy *staged, char *err, size_t len);
int xrl_policy_commit(struct xrl_datapath *dp,
		      const struct xrl_staged_policy *staged, char *err,
		      size_t len);
void xrl_policy_unstage(struct xrl_staged_policy *staged);

/*
 * Reads back the rules map in force: prefixes, ids and actions (no
 * rates, no names beyond the CIDR text) and the key prefix lengths; enough
 * to carry ids over when the full policy is not known. 0 or -errno.
 */
int xrl_policy_read_ids(const struct xrl_datapath *dp,
			struct xrl_policy *out);

/*
 * 0 when the data path holds exactly @policy compiled (every rule, no
 * other, and its settings); -ESTALE when not, -errno on failure.
 */
int xrl_policy_matches_map(const struct xrl_datapath *dp,
			   const struct xrl_policy *policy);

#endif
