/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * ban.h - a rule's bans in the policy model (rule_spec.h, struct
 * xrl_rule_spec_ban): checked and compiled.
 */
#ifndef XRL_BAN_H
#define XRL_BAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "rule_spec.h"

/* "ban: ..." checks of xrl_rule_check: 0, or -EINVAL with "field: why". */
int xrl_rule_ban_check(const struct xrl_rule_spec *rule, char *err,
		       size_t len);
void xrl_rule_ban_compile(const struct xrl_rule_spec *rule,
			  struct xrl_rule_ban *out);

/*
 * "escalate_*: ..." checks of xrl_rule_check (all four keys or none,
 * with ban:, a prefix inside the rule's, 2 to XRL_ESCALATE_AFTER_MAX
 * sources), and the policy's: the prefix shorter than the family's
 * source key (@v4_prefix, @v6_prefix). 0, or -EINVAL with "field: why".
 */
int xrl_rule_escalate_check(const struct xrl_rule_spec *rule, char *err,
			    size_t len);
int xrl_rule_escalate_check_keys(const struct xrl_rule_spec *rule,
				 unsigned v4_prefix, unsigned v6_prefix,
				 char *err, size_t len);
void xrl_rule_escalate_compile(const struct xrl_rule_spec *rule,
			       struct xrl_rule_escalate *out);

/* The ban_max of a rule: its own, or ban * XRL_BAN_MAX_FACTOR (at most
 * XRL_BAN_LIMIT_NS). */
uint64_t xrl_rule_ban_max(const struct xrl_rule_spec *rule);

#endif
