// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * levels.c - a rule's levels (docs/POLICY.md "Levels"): checked and
 * compiled. How the data path judges them: bpf/levels.h.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "ban.h"
#include "cidr.h"
#include "fields.h"
#include "levels.h"
#include "limit.h"
#include "rule_spec.h"
#include "units.h"

/* The longest level a family could have: one bit under its address. */
static unsigned family_bits(enum xrl_family family)
{
	return family == XRL_FAMILY_IPV4 ? 32 : 128;
}

static const char *family_name(enum xrl_family family)
{
	return family == XRL_FAMILY_IPV4 ? "IPv4" : "IPv6";
}

/* The rule's prefix length within @family (the default rule: 0). */
static unsigned rule_len(const struct xrl_rule_spec *rule)
{
	enum xrl_family family = xrl_prefix_family(&rule->prefix);

	if (family == XRL_FAMILY_IPV4)
		return rule->prefix.prefixlen - 96;
	return rule->prefix.prefixlen;
}

/* What a rule must be for levels at all. */
static int check_rule_kind(const struct xrl_rule_spec *rule, char *err,
			   size_t len)
{
	if (rule->action != XRL_ACTION_LIMIT &&
	    rule->action != XRL_ACTION_MONITOR) {
		snprintf(err, len, "levels: only for limit and monitor rules, "
			 "not action: %s", xrl_action_name(rule->action));
		return -EINVAL;
	}
	if (rule->scope != XRL_SCOPE_SOURCE) {
		snprintf(err, len, "levels: only with scope: source (one "
			 "budget for the whole rule has no levels)");
		return -EINVAL;
	}
	if (rule->strategy.kind == XRL_STRATEGY_SLIDING_WINDOW) {
		snprintf(err, len, "levels: not with strategy: sliding_window");
		return -EINVAL;
	}
	if (rule->n_levels > XRL_LEVELS_MAX) {
		snprintf(err, len, "levels: at most %d levels", XRL_LEVELS_MAX);
		return -EINVAL;
	}
	return 0;
}

/* One level's own numbers: a limit with a burst, in range, compilable. */
static int check_limits(const struct xrl_level_spec *level, unsigned i,
			char *err, size_t len)
{
	struct xrl_limit compiled;

	if (!level->pps && !level->bps) {
		snprintf(err, len, "levels[%u].pps: a level needs pps or bps",
			 i);
		return -EINVAL;
	}
	if (level->pps > XRL_RATE_MAX || level->bps > XRL_RATE_MAX) {
		snprintf(err, len, "levels[%u].%s: over the maximum %llu", i,
			 level->pps > XRL_RATE_MAX ? "pps" : "bps",
			 XRL_RATE_MAX);
		return -EINVAL;
	}
	if (level->burst > XRL_BURST_MAX ||
	    level->burst_bytes > XRL_BURST_MAX) {
		snprintf(err, len, "levels[%u].%s: over the maximum %llu", i,
			 level->burst > XRL_BURST_MAX ? "burst" : "burst_bytes",
			 XRL_BURST_MAX);
		return -EINVAL;
	}
	if (level->pps && !level->burst) {
		snprintf(err, len, "levels[%u].burst: pps needs a burst of at "
			 "least 1", i);
		return -EINVAL;
	}
	if (level->bps && !level->burst_bytes) {
		snprintf(err, len, "levels[%u].burst_bytes: bps needs a "
			 "burst_bytes of at least 1", i);
		return -EINVAL;
	}
	if ((level->pps &&
	     xrl_limit_compile_pps(level->pps, level->burst, &compiled)) ||
	    (level->bps &&
	     xrl_limit_compile_bps(level->bps, level->burst_bytes, &compiled))) {
		snprintf(err, len, "levels[%u]: the limit cannot be compiled",
			 i);
		return -EINVAL;
	}
	return 0;
}

/* Where the level sits: its family's, inside the rule, not twice. */
static int check_place(const struct xrl_rule_spec *rule, unsigned i,
		       char *err, size_t len)
{
	const struct xrl_level_spec *level = &rule->levels[i];
	enum xrl_family family = xrl_prefix_family(&rule->prefix);
	unsigned j;

	if (level->family != XRL_FAMILY_IPV4 &&
	    level->family != XRL_FAMILY_IPV6) {
		snprintf(err, len, "levels[%u].prefix: a level needs a prefix",
			 i);
		return -EINVAL;
	}
	if (family != XRL_FAMILY_ANY && level->family != family) {
		snprintf(err, len, "levels[%u].prefix: an %s level in a rule "
			 "for %s sources", i, family_name(level->family),
			 family_name(family));
		return -EINVAL;
	}
	if (level->prefix < 1 || level->prefix >= family_bits(level->family)) {
		snprintf(err, len, "levels[%u].prefix: /%u is not 1..%u for "
			 "%s", i, level->prefix,
			 family_bits(level->family) - 1,
			 family_name(level->family));
		return -EINVAL;
	}
	if (family != XRL_FAMILY_ANY && level->prefix < rule_len(rule)) {
		snprintf(err, len, "levels[%u].prefix: /%u is shorter than the "
			 "rule's /%u (one bucket for the whole rule is scope: "
			 "aggregate)", i, level->prefix, rule_len(rule));
		return -EINVAL;
	}
	for (j = 0; j < i; j++) {
		if (rule->levels[j].family == level->family &&
		    rule->levels[j].prefix == level->prefix) {
			snprintf(err, len, "levels[%u].prefix: /%u is "
				 "levels[%u]'s already", i, level->prefix, j);
			return -EINVAL;
		}
	}
	return 0;
}

int xrl_levels_check(const struct xrl_rule_spec *rule, char *err, size_t len)
{
	unsigned i;
	int ret;

	if (!rule->n_levels)
		return 0;
	ret = check_rule_kind(rule, err, len);
	for (i = 0; !ret && i < rule->n_levels; i++)
		ret = check_place(rule, i, err, len) ?:
		      check_limits(&rule->levels[i], i, err, len);
	return ret;
}

int xrl_levels_check_keys(const struct xrl_rule_spec *rule, unsigned v4_prefix,
			  unsigned v6_prefix, char *err, size_t len)
{
	const struct xrl_level_spec *level;
	unsigned i, key;

	for (i = 0; i < rule->n_levels && i < XRL_LEVELS_MAX; i++) {
		level = &rule->levels[i];
		key = level->family == XRL_FAMILY_IPV4 ? v4_prefix : v6_prefix;
		if (level->prefix >= key) {
			snprintf(err, len, "levels[%u].prefix: /%u is not "
				 "shorter than the %s source key /%u "
				 "(keys.%s_prefix)", i, level->prefix,
				 family_name(level->family), key,
				 level->family == XRL_FAMILY_IPV4 ? "ipv4" :
								    "ipv6");
			return -EINVAL;
		}
	}
	/* The one other subnet of a rule, against the same keys. */
	return xrl_rule_escalate_check_keys(rule, v4_prefix, v6_prefix, err,
					    len);
}

int xrl_levels_compile(const struct xrl_rule_spec *rule,
		       struct xrl_rule_levels *out,
		       struct xrl_limits limits[XRL_LEVELS_MAX])
{
	const struct xrl_level_spec *level;
	unsigned i;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	memset(limits, 0, XRL_LEVELS_MAX * sizeof(*limits));
	if (rule->n_levels > XRL_LEVELS_MAX)
		return -E2BIG;
	for (i = 0; !ret && i < rule->n_levels; i++) {
		level = &rule->levels[i];
		out->prefix[i] = level->prefix;
		if (level->family == XRL_FAMILY_IPV6)
			out->ipv6 |= 1U << i;
		if (level->pps)
			ret = xrl_limit_compile_pps(level->pps, level->burst,
					&limits[i].kind[XRL_LIMIT_PACKETS]);
		if (!ret && level->bps)
			ret = xrl_limit_compile_bps(level->bps,
					level->burst_bytes,
					&limits[i].kind[XRL_LIMIT_BYTES]);
	}
	out->count = rule->n_levels;
	return ret;
}

bool xrl_levels_equal(const struct xrl_rule_spec *a,
		      const struct xrl_rule_spec *b)
{
	const struct xrl_level_spec *x, *y;
	unsigned i;

	if (a->n_levels != b->n_levels)
		return false;
	for (i = 0; i < a->n_levels && i < XRL_LEVELS_MAX; i++) {
		x = &a->levels[i];
		y = &b->levels[i];
		if (x->family != y->family || x->prefix != y->prefix ||
		    x->pps != y->pps || x->burst != y->burst ||
		    x->bps != y->bps || x->burst_bytes != y->burst_bytes)
			return false;
	}
	return true;
}

/* ---- a level as text (the control socket and the CLI) --------------- */

static const char *const level_keys[] = {
	"pps", "burst", "bps", "burst_bytes",
};

#define N_LEVEL_KEYS	(sizeof(level_keys) / sizeof(level_keys[0]))

static uint64_t *level_value(struct xrl_level_spec *level, unsigned key)
{
	uint64_t *values[N_LEVEL_KEYS] = {
		&level->pps, &level->burst, &level->bps, &level->burst_bytes,
	};

	return values[key];
}

/* "24", "ipv4/24" or "ipv6/48", the first @n bytes of @text. */
static int parse_text_prefix(const char *text, size_t n, unsigned index,
			     enum xrl_family rule_family,
			     struct xrl_level_spec *level, char *err,
			     size_t len)
{
	const char *p = text, *end = text + n;
	unsigned bits = 0;

	level->family = rule_family;
	if (n > 5 && (!strncmp(text, "ipv4/", 5) ||
		      !strncmp(text, "ipv6/", 5))) {
		level->family = text[3] == '4' ? XRL_FAMILY_IPV4 :
						 XRL_FAMILY_IPV6;
		p += 5;
	}
	if (p == end || end - p > 3) {
		snprintf(err, len, "levels[%u].prefix: \"%.*s\" is not a "
			 "prefix length (like 24, ipv4/24 or ipv6/48)", index,
			 (int)(n < 32 ? n : 32), text);
		return -EINVAL;
	}
	for (; p < end; p++) {
		if (*p < '0' || *p > '9') {
			snprintf(err, len, "levels[%u].prefix: \"%.*s\" is not "
				 "a prefix length (like 24, ipv4/24 or "
				 "ipv6/48)", index, (int)(n < 32 ? n : 32),
				 text);
			return -EINVAL;
		}
		bits = bits * 10 + (unsigned)(*p - '0');
	}
	if (level->family == XRL_FAMILY_ANY) {
		snprintf(err, len, "levels[%u].prefix: a rule for every "
			 "source covers IPv4 and IPv6 sources: write ipv4/%u "
			 "or ipv6/%u", index, bits, bits);
		return -EINVAL;
	}
	level->prefix = bits;
	return 0;
}

/* One "KEY=VALUE" of @n bytes into @level; @given marks keys met. */
static int parse_text_limit(const char *text, size_t n, unsigned index,
			    struct xrl_level_spec *level, unsigned *given,
			    char *err, size_t len)
{
	const char *eq = memchr(text, '=', n);
	char value[32];
	unsigned key;
	size_t klen;
	int ret;

	if (!eq) {
		snprintf(err, len, "levels[%u]: \"%.*s\" is not KEY=VALUE "
			 "(pps, burst, bps, burst_bytes)", index,
			 (int)(n < 32 ? n : 32), text);
		return -EINVAL;
	}
	klen = (size_t)(eq - text);
	for (key = 0; key < N_LEVEL_KEYS; key++)
		if (strlen(level_keys[key]) == klen &&
		    !strncmp(level_keys[key], text, klen))
			break;
	if (key == N_LEVEL_KEYS) {
		snprintf(err, len, "levels[%u]: unknown key \"%.*s\" (pps, "
			 "burst, bps, burst_bytes)", index,
			 (int)(klen < 32 ? klen : 32), text);
		return -EINVAL;
	}
	if (*given & (1U << key)) {
		snprintf(err, len, "levels[%u].%s: given twice", index,
			 level_keys[key]);
		return -EINVAL;
	}
	*given |= 1U << key;
	n -= klen + 1;
	snprintf(value, sizeof(value), "%.*s", (int)n, eq + 1);
	ret = n < sizeof(value) ? xrl_parse_quantity(value, level_value(level,
								      key)) :
				  -ERANGE;
	if (ret) {
		snprintf(err, len, "levels[%u].%s: \"%s\" is not a quantity "
			 "(like 1500, 10k, 2.5M, 1G)", index, level_keys[key],
			 value);
		return -EINVAL;
	}
	if (!*level_value(level, key)) {
		snprintf(err, len, "levels[%u].%s: must be at least 1", index,
			 level_keys[key]);
		return -EINVAL;
	}
	return 0;
}

int xrl_level_parse(const char *text, unsigned index,
		    enum xrl_family rule_family, struct xrl_level_spec *level,
		    char *err, size_t len)
{
	const char *colon = strchr(text, ':'), *item, *comma;
	unsigned given = 0;
	int ret;

	memset(level, 0, sizeof(*level));
	if (!colon) {
		snprintf(err, len, "levels[%u]: \"%.48s\" is not "
			 "PREFIX:KEY=VALUE,... (like 24:pps=1k,burst=2k)",
			 index, text);
		return -EINVAL;
	}
	ret = parse_text_prefix(text, (size_t)(colon - text), index,
				rule_family, level, err, len);
	for (item = colon + 1; !ret; item = comma + 1) {
		comma = strchr(item, ',');
		if (!comma)
			comma = item + strlen(item);
		ret = parse_text_limit(item, (size_t)(comma - item), index,
				       level, &given, err, len);
		if (!*comma)
			break;
	}
	return ret;
}

void xrl_level_format(const struct xrl_level_spec *level,
		      enum xrl_family rule_family, char *buf, size_t len)
{
	struct xrl_level_spec copy = *level;
	char value[32];
	size_t used;
	unsigned key;
	int n;

	if (rule_family == XRL_FAMILY_ANY)
		n = snprintf(buf, len, "ipv%d/%u:",
			     level->family == XRL_FAMILY_IPV4 ? 4 : 6,
			     level->prefix);
	else
		n = snprintf(buf, len, "%u:", level->prefix);
	used = n < 0 ? 0 : (size_t)n;
	for (key = 0; key < N_LEVEL_KEYS && used < len; key++) {
		if (!*level_value(&copy, key))
			continue;
		xrl_format_quantity(*level_value(&copy, key), value,
				    sizeof(value));
		n = snprintf(buf + used, len - used, "%s%s=%s",
			     buf[used - 1] == ':' ? "" : ",", level_keys[key],
			     value);
		used += n < 0 ? 0 : (size_t)n;
	}
}
