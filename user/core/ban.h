/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * ban.h - a rule's bans in the policy model (struct xrl_rule_spec, ban)
 * and the durations of the policy file and the control socket.
 */
#ifndef XRL_BAN_H
#define XRL_BAN_H

#include <stddef.h>
#include <stdint.h>
#include "policy.h"

/* "ban: ..." checks of xrl_rule_check: 0, or -EINVAL with "field: why". */
int xrl_rule_ban_check(const struct xrl_rule_spec *rule, char *err,
		       size_t len);
void xrl_rule_ban_compile(const struct xrl_rule_spec *rule,
			  struct xrl_rule_ban *out);

#endif
