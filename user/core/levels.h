/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * levels.h - a rule's levels (docs/POLICY.md "Levels"; rule_spec.h,
 * struct xrl_level_spec): checked, compiled, and as text.
 */
#ifndef XRL_LEVELS_H
#define XRL_LEVELS_H

#include <stdbool.h>
#include <stddef.h>
#include "rule_spec.h"

/*
 * xrl_levels_check() is xrl_rule_check()'s part: the rule may have levels
 * (limit or monitor, scope source, no sliding window), each of its
 * family, no shorter than the rule's prefix, no two alike, with limits
 * that compile. xrl_levels_check_keys() the policy's part: each level
 * shorter than its family's source key (@v4_prefix, @v6_prefix), and so
 * the rule's escalate_prefix (ban.h). -EINVAL with "levels[i].field:
 * what is wrong" (or "escalate_prefix: ...") in @err.
 */
int xrl_levels_check(const struct xrl_rule_spec *rule, char *err, size_t len);
int xrl_levels_check_keys(const struct xrl_rule_spec *rule, unsigned v4_prefix,
			  unsigned v6_prefix, char *err, size_t len);
/* The rule's levels as the data path takes them: @out (in the rule's
 * value) and each level's limits. */
int xrl_levels_compile(const struct xrl_rule_spec *rule,
		       struct xrl_rule_levels *out,
		       struct xrl_limits limits[XRL_LEVELS_MAX]);
/*
 * A level as text, for the control socket and the CLI: "24:pps=1k,burst=2k"
 * (PREFIX:KEY=VALUE,... with the keys of the policy file's level and its
 * quantities), the prefix of the rule's family, or "ipv4/24", "ipv6/48"
 * (the only way in the default rule, @rule_family XRL_FAMILY_ANY). -EINVAL
 * with "levels[@index].field: what is wrong" in @err; the ranges are
 * xrl_levels_check()'s. Formatted back the same way, parsing back to the
 * same level.
 */
int xrl_level_parse(const char *text, unsigned index,
		    enum xrl_family rule_family, struct xrl_level_spec *level,
		    char *err, size_t len);
void xrl_level_format(const struct xrl_level_spec *level,
		      enum xrl_family rule_family, char *buf, size_t len);
/* Whether two rules have the same levels. */
bool xrl_levels_equal(const struct xrl_rule_spec *a,
		      const struct xrl_rule_spec *b);

#endif
