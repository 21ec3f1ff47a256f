// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * strategy.c - what a rule's limit means: a token bucket (a budget), a
 * leaky bucket (a pace) or a sliding window (at most n in any window).
 * Semantics and the data path's form: include/xrl.h, "Strategies".
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fields.h"
#include "limit.h"
#include "rule_spec.h"
#include "strategy.h"

/* The first of the keys set that @kind does not take (each field says
 * which strategies it fits: fields.c), or NULL. */
static const char *misfit(const struct xrl_rule_spec *rule,
			  enum xrl_strategy kind)
{
	const struct xrl_field *f;
	size_t i;

	for (i = 0; i < xrl_n_rule_fields; i++) {
		f = &xrl_rule_fields[i];
		if (f->strategies && !(f->strategies & (1U << kind)) &&
		    xrl_field_is_set(f, rule, false))
			return f->key;
	}
	return NULL;
}

static int refuse_misfit(const struct xrl_rule_spec *rule, const char *key,
			 char *err, size_t len)
{
	switch (rule->strategy.kind) {
	case XRL_STRATEGY_LEAKY_BUCKET:
		if (!strcmp(key, "bps") || !strcmp(key, "burst_bytes"))
			snprintf(err, len, "%s: a leaky_bucket paces packets "
				 "(interval or pps); bit rates take "
				 "strategy: token_bucket", key);
		else
			snprintf(err, len, "%s: only with strategy: "
				 "sliding_window", key);
		break;
	case XRL_STRATEGY_SLIDING_WINDOW:
		snprintf(err, len, "%s: not with strategy: sliding_window, "
			 "which takes limit and window", key);
		break;
	default:
		snprintf(err, len, "%s: only with strategy: %s", key,
			 !strcmp(key, "interval") ? "leaky_bucket" :
			 "sliding_window");
		break;
	}
	return -EINVAL;
}

static int check_ranges(const struct xrl_strategy_spec *s, char *err,
			size_t len)
{
	if (s->interval_ns > XRL_INTERVAL_MAX_NS) {
		snprintf(err, len, "interval: over the maximum 1h");
		return -EINVAL;
	}
	if (s->limit > XRL_WINDOW_LIMIT_MAX) {
		snprintf(err, len, "limit: over the maximum %d",
			 XRL_WINDOW_LIMIT_MAX);
		return -EINVAL;
	}
	if (s->window_ns && (s->window_ns < XRL_WINDOW_MIN_NS ||
			     s->window_ns > XRL_WINDOW_MAX_NS)) {
		snprintf(err, len, "window: must be 1ms to 1h");
		return -EINVAL;
	}
	return 0;
}

/* What a limit or monitor rule of the strategy cannot do without. */
static int check_needed(const struct xrl_rule_spec *rule, char *err,
			size_t len)
{
	const struct xrl_strategy_spec *s = &rule->strategy;

	switch (s->kind) {
	case XRL_STRATEGY_LEAKY_BUCKET:
		if (!s->interval_ns && !rule->pps) {
			snprintf(err, len, "interval: a leaky_bucket needs "
				 "interval or pps");
			return -EINVAL;
		}
		if (s->interval_ns && rule->pps) {
			snprintf(err, len, "interval: a leaky_bucket takes "
				 "interval or pps, not both");
			return -EINVAL;
		}
		return 0;
	case XRL_STRATEGY_SLIDING_WINDOW:
		if (!s->limit || !s->window_ns) {
			snprintf(err, len, "%s: a sliding_window needs limit "
				 "and window", s->limit ? "window" : "limit");
			return -EINVAL;
		}
		if (rule->scope != XRL_SCOPE_SOURCE) {
			snprintf(err, len, "scope: a sliding_window counts "
				 "each source; scope: aggregate is not "
				 "supported");
			return -EINVAL;
		}
		return 0;
	default:
		return 0;
	}
}

int xrl_strategy_check(const struct xrl_rule_spec *rule, bool limited,
		       char *err, size_t len)
{
	const char *key;

	if (rule->strategy.kind >= XRL_STRATEGY_COUNT) {
		snprintf(err, len, "strategy: unknown strategy");
		return -EINVAL;
	}
	key = misfit(rule, rule->strategy.kind);
	if (key)
		return refuse_misfit(rule, key, err, len);
	if (check_ranges(&rule->strategy, err, len))
		return -EINVAL;
	return limited ? check_needed(rule, err, len) : 0;
}

int xrl_strategy_compile(const struct xrl_rule_spec *rule,
			 struct xrl_rule *out)
{
	const struct xrl_strategy_spec *s = &rule->strategy;
	struct xrl_limit *pkt = &out->limit[XRL_LIMIT_PACKETS];
	uint64_t burst = rule->burst ? rule->burst : 1;

	out->window.strategy = s->kind;
	switch (s->kind) {
	case XRL_STRATEGY_LEAKY_BUCKET:
		if (s->interval_ns)
			return xrl_limit_compile_pace(s->interval_ns, 1, burst,
						      pkt);
		return xrl_limit_compile_pps(rule->pps, burst, pkt);
	case XRL_STRATEGY_SLIDING_WINDOW:
		out->window.limit = (__u32)s->limit;
		out->window.window_ns = s->window_ns;
		out->window.sub_ns = (s->window_ns + XRL_WINDOW_SUBS - 1) /
				     XRL_WINDOW_SUBS;
		/* The unknown_sources fallback's pace: limit a window,
		 * spaced evenly (include/xrl.h). */
		return xrl_limit_compile_pace(s->window_ns, s->limit, 1, pkt);
	default:
		return -EINVAL;
	}
}
