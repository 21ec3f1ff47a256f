/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rule_json.h - a rule as the control socket and the runtime overlay
 * carry it: one JSON object of the keys of the rule table (fields.h),
 * named as in the policy file, read and written by that table. What
 * rule.add takes, rule.list shows and the overlay keeps: docs/PROTOCOL.md.
 */
#ifndef XRL_RULE_JSON_H
#define XRL_RULE_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "rule_spec.h"

/*
 * Reads a rule from @obj: "cidr" (required) and every other key of the
 * table, absent ones left at their defaults, then checked whole
 * (xrl_rule_check). Keys not of the table are the caller's to refuse.
 * -EINVAL with "field: what is wrong" in @err.
 */
int xrl_rule_json_read(json_t *obj, struct xrl_rule_spec *rule, char *err,
		       size_t len);

/*
 * Adds the keys of @rule that are set to @obj (quantities as numbers,
 * the rest as the policy file writes them; "match" beside an L4 rule's
 * keys, for people). 0 or -ENOMEM. xrl_rule_json() makes a new object.
 */
int xrl_rule_json_add(json_t *obj, const struct xrl_rule_spec *rule);
json_t *xrl_rule_json(const struct xrl_rule_spec *rule);

/* A prefix as the socket takes one ("cidr" of a rule or a ban), refused
 * in the words of the rule's cidr. 0 or -EINVAL with @err. */
int xrl_rule_json_cidr(const char *text, struct xrl_lpm_key *key, char *err,
		       size_t len);

/*
 * The string @field of a request: NULL when absent (-EINVAL with "field:
 * missing" when @required), -EINVAL with "field: must be a string" for
 * another type.
 */
int xrl_json_string(json_t *obj, const char *field, bool required,
		    const char **value, char *err, size_t len);

#endif
