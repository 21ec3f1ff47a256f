// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libFuzzer target for the control protocol (user/daemon/control.c): each
 * line of the input is one request to a daemon state with no data path
 * (policies are "applied" by a hook that keeps most of them). Besides
 * what the sanitizers catch, it checks on every request that the
 * response is one JSON object with "ok" (and an "error" sentence when
 * false), that a
 * refused request left the policy in force exactly as it was, and that
 * the policy in force always holds: the default rule first with id 0,
 * distinct prefixes, distinct ids, every rule passing xrl_rule_check.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "cidr.h"
#include "control.h"
#include "policy.h"
#include "policy_running.h"
#include "rule.h"

#define MAX_LINES 32

/* Accepts most policies; refuses some, as a full map or a failed swap
 * would, so that the refusal path is fuzzed too. */
static int keep_policy(struct xrl_daemon_state *state,
		       const struct xrl_policy *next, char *err, size_t len)
{
	if (next->n_rules % 4 == 3) {
		snprintf(err, len, "refused by the fuzz target");
		return -ENOSPC;
	}
	return 0;
}

static void check_policy_or_abort(const struct xrl_policy *policy)
{
	char err[256];
	size_t i, j;

	if (!policy->n_rules || policy->rules[0].prefix.prefixlen ||
	    policy->rules[0].id)
		abort();
	for (i = 0; i < policy->n_rules; i++) {
		if (xrl_rule_check(&policy->rules[i], err, sizeof(err)) ||
		    policy->rules[i].id >= XRL_MAX_RULES)
			abort();
		for (j = 0; j < i; j++)
			if (policy->rules[i].id == policy->rules[j].id ||
			    !memcmp(&policy->rules[i].prefix,
				    &policy->rules[j].prefix,
				    sizeof(policy->rules[i].prefix)))
				abort();
	}
}

static bool same_policy(const struct xrl_policy *a, const struct xrl_policy *b)
{
	return a->n_rules == b->n_rules && a->v4_prefix == b->v4_prefix &&
	       a->v6_prefix == b->v6_prefix && a->malformed == b->malformed &&
	       !memcmp(a->rules, b->rules, a->n_rules * sizeof(*a->rules));
}

static void check_response_or_abort(const char *response)
{
	json_t *json = json_loads(response, 0, NULL), *ok, *error;

	if (!json_is_object(json) || strchr(response, '\n'))
		abort();
	ok = json_object_get(json, "ok");
	error = json_object_get(json, "error");
	if (!json_is_boolean(ok) ||
	    (json_is_false(ok) && (!json_is_string(error) ||
				   !json_string_length(error))))
		abort();
	json_decref(json);
}

static void seed_policy(struct xrl_policy *policy)
{
	struct xrl_rule_spec rule = {
		.name = "limited",
		.action = XRL_ACTION_LIMIT,
		.pps = 100,
		.burst = 10,
	};

	if (xrl_policy_init(policy) ||
	    xrl_cidr_parse("198.18.1.0/24", &rule.prefix) ||
	    xrl_policy_add(policy, &rule))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xrl_daemon_state state = { .apply = keep_policy };
	const char *line = (const char *)data, *end = line + size, *newline;
	struct xrl_policy before;
	char *response;
	bool ok;
	int n;

	seed_policy(&state.policy);
	for (n = 0; n < MAX_LINES && line < end; n++) {
		newline = memchr(line, '\n', end - line);
		if (!newline)
			newline = end;
		if (xrl_policy_copy(&before, &state.policy))
			abort();
		if (xrl_control_handle(&state, false, line, newline - line,
				       &response))
			abort();
		check_response_or_abort(response);
		ok = strncmp(response, "{\"ok\":true", 10) == 0;
		if (!ok && !same_policy(&before, &state.policy))
			abort();
		check_policy_or_abort(&state.policy);
		free(response);
		xrl_policy_free(&before);
		line = newline + 1;
	}
	xrl_daemon_state_free(&state);
	return 0;
}
