// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Limit events without a data path: the policy file's events: keys and
 * the line the daemon logs for an event.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <criterion/criterion.h>
#include "cidr.h"
#include "events.h"
#include "policy_read.h"
#include "policy_write.h"

static struct xrl_config config;
static char err[512];

static int load(const char *text)
{
	return xrl_config_load_string(text, strlen(text), "p.yaml", &config,
				      err, sizeof(err));
}

Test(events_config, defaults_and_the_events_keys)
{
	cr_assert_eq(load("default: {action: allow}\n"), 0, "%s", err);
	cr_assert_eq(config.policy.event_quiet_ns, XRL_EVENT_QUIET_NS);
	cr_assert_eq(config.policy.events_per_second, XRL_EVENTS_PER_SECOND);
	xrl_config_free(&config);

	cr_assert_eq(load("events:\n  quiet_period: 1500ms\n"
			  "  max_per_second: 20\n"), 0, "%s", err);
	cr_assert_eq(config.policy.event_quiet_ns, 1500000000ULL);
	cr_assert_eq(config.policy.events_per_second, 20);
	xrl_config_free(&config);

	cr_assert_eq(load("events: {quiet_period: 2m, max_per_second: 0}\n"),
		     0, "%s", err);
	cr_assert_eq(config.policy.event_quiet_ns, 120000000000ULL);
	cr_assert_eq(config.policy.events_per_second, 0);
	xrl_config_free(&config);
}

Test(events_config, bad_values_name_file_line_and_field)
{
	cr_assert_neq(load("default: {action: allow}\n"
			   "events: {quiet_period: 10}\n"), 0);
	cr_assert(strstr(err, "p.yaml:2") &&
		  strstr(err, "events.quiet_period") &&
		  strstr(err, "not a duration"), "%s", err);
	cr_assert_neq(load("events:\n  max_per_second: -1\n"), 0);
	cr_assert(strstr(err, "p.yaml:2") &&
		  strstr(err, "events.max_per_second"), "%s", err);
	cr_assert_neq(load("events: {quiet_period: 25h}\n"), 0);
	cr_assert(strstr(err, "over the maximum 24h"), "%s", err);
	cr_assert_neq(load("events: {burst: 3}\n"), 0);
	cr_assert(strstr(err, "events.burst") && strstr(err, "unknown key"),
		  "%s", err);
}

Test(events_config, written_back_as_read)
{
	char *text = NULL;
	size_t len;
	FILE *out;

	cr_assert_eq(load("events: {quiet_period: 250ms, max_per_second: 7}\n"),
		     0, "%s", err);
	out = open_memstream(&text, &len);
	cr_assert_eq(xrl_policy_write_yaml(out, &config.policy), 0);
	fclose(out);
	xrl_config_free(&config);
	cr_assert(strstr(text, "quiet_period: 250ms") &&
		  strstr(text, "max_per_second: 7"), "%s", text);
	cr_assert_eq(load(text), 0, "%s", err);
	cr_assert_eq(config.policy.event_quiet_ns, 250000000ULL);
	cr_assert_eq(config.policy.events_per_second, 7);
	xrl_config_free(&config);
	free(text);
}

Test(events_text, the_log_line_names_source_rule_rate_and_limit)
{
	struct xrl_limit_event raw = {
		.addr = { [10] = 0xff, [11] = 0xff, 198, 51, 100, 7 },
		.rule_id = 1,
		.packets = 42110,
		.window_ns = 10000000000ULL,
	};
	struct xrl_rule_spec rule = {
		.name = "web-default", .pps = 1000, .burst = 10,
	};
	struct xrl_event_record rec;
	struct xrl_policy policy;
	char line[256];

	cr_assert_eq(xrl_policy_init(&policy), 0);
	cr_assert_eq(xrl_cidr_parse("198.51.100.0/24", &rule.prefix), 0);
	cr_assert_eq(xrl_policy_add(&policy, &rule), 0);
	raw.rule_id = policy.rules[1].id;
	xrl_event_describe(&raw, &policy, 0, &rec);
	xrl_event_format(&rec, line, sizeof(line));
	cr_assert_str_eq(line, "source 198.51.100.7 limited by rule "
			 "web-default: 4,211 pps over 1,000 pps");

	/* /24 keys show the prefix; an unknown rule its id. */
	policy.v4_prefix = 24;
	raw.addr[15] = 0;
	raw.rule_id = 77;
	raw.action = XRL_ACTION_MONITOR;
	xrl_event_describe(&raw, &policy, 0, &rec);
	xrl_event_format(&rec, line, sizeof(line));
	cr_assert_str_eq(line, "source 198.51.100.0/24 would be limited "
			 "(monitor) by rule id-77: 4,211 pps over its limit");
	xrl_policy_free(&policy);
}

Test(events_text, a_ban_event_names_source_rule_and_length)
{
	struct xrl_limit_event raw = {
		.addr = { [10] = 0xff, [11] = 0xff, 198, 51, 100, 7 },
		.ban_ns = 120000000000ULL,
	};
	struct xrl_rule_spec rule = {
		.name = "login", .pps = 20, .burst = 40,
		.ban = { .ns = 60000000000ULL },
	};
	struct xrl_event_record rec;
	struct xrl_policy policy;
	char line[256];
	json_t *json;

	cr_assert_eq(xrl_policy_init(&policy), 0);
	cr_assert_eq(xrl_cidr_parse("198.51.100.0/24", &rule.prefix), 0);
	cr_assert_eq(xrl_policy_add(&policy, &rule), 0);
	raw.rule_id = policy.rules[1].id;
	xrl_event_describe(&raw, &policy, 0, &rec);
	xrl_event_format(&rec, line, sizeof(line));
	/* A repeat offence: twice the rule's ban. */
	cr_assert_str_eq(line, "source 198.51.100.7 banned by rule login for "
			 "2m");
	json = xrl_event_json(&rec);
	cr_assert_not_null(json);
	cr_assert_float_eq(json_real_value(json_object_get(json, "ban_s")),
			   120.0, 1e-9);
	json_decref(json);
	xrl_policy_free(&policy);
}
