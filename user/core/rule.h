/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rule.h - one rule of a policy (rule_spec.h): its name, the checks that
 * span its fields, and its compiled form.
 */
#ifndef XRL_RULE_H
#define XRL_RULE_H

#include <stddef.h>
#include "rule_spec.h"

/*
 * Checks a rule's name: it is shown, logged and written to YAML, so 1 to
 * XRL_RULE_NAME_MAX - 1 printable bytes, and never the CIDR of a prefix
 * other than @prefix (names and CIDRs both find rules). On error returns
 * -EINVAL and writes "name: what is wrong" into @err.
 */
int xrl_rule_name_check(const char *name, const struct xrl_lpm_key *prefix,
			char *err, size_t len);

/* The name of a rule written without one: its CIDR, then its match
 * ("198.18.0.0/24 tcp syn dport 80"), cut to fit. */
void xrl_rule_default_name(const struct xrl_rule_spec *rule, char *buf,
			   size_t len);

/*
 * Checks one rule: an action, and for limit/monitor at least one limit
 * with a non-zero burst, each compilable. On error returns -EINVAL and
 * writes "field: what is wrong" into @err.
 */
int xrl_rule_check(const struct xrl_rule_spec *rule, char *err, size_t len);

/* Compiles a checked rule into the map value. */
int xrl_rule_compile(const struct xrl_rule_spec *rule, struct xrl_rule *out);

#endif
