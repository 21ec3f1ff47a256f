/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * strategy.h - what a rule's limit means (rule_spec.h, struct
 * xrl_strategy_spec): its checks and its part of the compiled rule.
 */
#ifndef XRL_STRATEGY_H
#define XRL_STRATEGY_H

#include <stdbool.h>
#include <stddef.h>
#include "rule_spec.h"

/*
 * The strategy's checks of xrl_rule_check(): keys that do not fit the
 * strategy, missing ones (for limit and monitor rules, @limited) and
 * ranges. -EINVAL with "field: what is wrong" in @err.
 */
int xrl_strategy_check(const struct xrl_rule_spec *rule, bool limited,
		       char *err, size_t len);
/* The strategy's part of xrl_rule_compile(): the packet limit of a
 * leaky bucket or of a sliding window's fallback, and out->window. */
int xrl_strategy_compile(const struct xrl_rule_spec *rule,
			 struct xrl_rule *out);

#endif
