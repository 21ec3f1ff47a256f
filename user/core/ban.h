/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * ban.h - a rule's bans in the policy model (rule_spec.h, struct
 * xrl_rule_spec_ban): checked and compiled.
 */
#ifndef XRL_BAN_H
#define XRL_BAN_H

#include <stddef.h>
#include <stdint.h>
#include "rule_spec.h"

/* "ban: ..." checks of xrl_rule_check: 0, or -EINVAL with "field: why". */
int xrl_rule_ban_check(const struct xrl_rule_spec *rule, char *err,
		       size_t len);
void xrl_rule_ban_compile(const struct xrl_rule_spec *rule,
			  struct xrl_rule_ban *out);

/* The ban_max of a rule: its own, or ban * XRL_BAN_MAX_FACTOR (at most
 * XRL_BAN_LIMIT_NS). */
uint64_t xrl_rule_ban_max(const struct xrl_rule_spec *rule);

#endif
