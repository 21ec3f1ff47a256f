// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The exposition text written from collected counters: no map, no root.
 */
#include <stdlib.h>
#include <string.h>
#include <criterion/criterion.h>
#include "metrics.h"

static char *format(const struct xrl_metrics *m)
{
	size_t len;
	char *text;

	cr_assert_eq(xrl_metrics_format(m, &text, &len), 0);
	cr_assert_eq(strlen(text), len);
	cr_assert_eq(text[len - 1], '\n');
	return text;
}

Test(metrics_text, every_family_has_help_and_type_before_its_samples)
{
	struct xrl_metrics m = { .tracked_sources = 7, .capacity = 1024 };
	char *text;

	m.totals[XRL_VERDICT_DROP].packets = 12345678901234ULL;
	m.totals[XRL_VERDICT_DROP].bytes = 42;
	m.totals[XRL_VERDICT_VLAN_OVERFLOW].packets = 5;
	m.totals[XRL_VERDICT_IPV4_MAPPED].packets = 6;
	m.events.count[XRL_EVENT_LOST] = 3;
	text = format(&m);
	cr_assert(strstr(text, "# HELP xdp_ratelimit_packets_total Packets "
			 "judged, by verdict.\n# TYPE xdp_ratelimit_packets_"
			 "total counter\nxdp_ratelimit_packets_total{verdict="
			 "\"pass\"} 0\n"), "%s", text);
	cr_assert(strstr(text, "xdp_ratelimit_packets_total{verdict=\"drop\"} "
			 "12345678901234\n"), "%s", text);
	cr_assert(strstr(text, "xdp_ratelimit_bytes_total{verdict=\"nonip\"} "
			 "0\n"), "%s", text);
	cr_assert(strstr(text, "xdp_ratelimit_packets_total{verdict="
			 "\"vlan_overflow\"} 5\n"), "%s", text);
	cr_assert(strstr(text, "xdp_ratelimit_packets_total{verdict="
			 "\"ipv4_mapped\"} 6\n"), "%s", text);
	cr_assert(strstr(text, "# TYPE xdp_ratelimit_tracked_sources gauge\n"
			 "xdp_ratelimit_tracked_sources 7\n"), "%s", text);
	cr_assert(strstr(text, "xdp_ratelimit_bucket_map_capacity 1024\n"));
	cr_assert(strstr(text, "# TYPE xdp_ratelimit_limit_events_total "
			 "counter\n"), "%s", text);
	cr_assert(strstr(text, "xdp_ratelimit_limit_events_total{outcome="
			 "\"lost\"} 3\n"), "%s", text);
	/* Unknown without a daemon's policy: absent, not zero. */
	cr_assert_null(strstr(text, "policy_generation"));
	free(text);
}

Test(metrics_text, label_values_are_escaped)
{
	struct xrl_metrics_rule rules[2] = {
		{ .name = "we\"b\\x\ny", .id = 3 },
		{ .name = NULL, .id = 9 },
	};
	struct xrl_metrics m = {
		.rules = rules, .n_rules = 2, .tracked_sources = -1,
	};
	char *text;

	rules[0].counters.outcome[XRL_RULE_DROPPED].packets = 5;
	text = format(&m);
	cr_assert(strstr(text, "xdp_ratelimit_rule_packets_total{rule="
			 "\"we\\\"b\\\\x\\ny\",verdict=\"drop\"} 5\n"),
		  "%s", text);
	cr_assert(strstr(text, "{rule=\"id-9\",verdict=\"pass\"} 0\n"),
		  "%s", text);
	cr_assert_null(strstr(text, "tracked_sources"), "%s", text);
	free(text);
}

static void write_degraded(FILE *out, void *ctx)
{
	const char *labels[] = { "rule", ctx, NULL };

	xrl_metrics_family(out, "xdp_ratelimit_sync_degraded", "gauge",
			   "1 while the rule's global budget is not synced.");
	xrl_metrics_sample_u64(out, "xdp_ratelimit_sync_degraded", labels, 1);
}

Test(metrics_text, features_add_families_of_their_own)
{
	struct xrl_metrics m = {
		.tracked_sources = -1, .have_policy = true, .generation = 4,
		.reload_time = 1700000000.5, .extra = write_degraded,
		.extra_ctx = "web",
	};
	char *text = format(&m);

	cr_assert(strstr(text, "xdp_ratelimit_policy_generation 4\n"));
	cr_assert(strstr(text, "xdp_ratelimit_policy_reload_timestamp_seconds "
			 "1700000000.5\n"), "%s", text);
	cr_assert(strstr(text, "# TYPE xdp_ratelimit_sync_degraded gauge\n"
			 "xdp_ratelimit_sync_degraded{rule=\"web\"} 1\n"),
		  "%s", text);
	free(text);
}

/* The lines of one rule as xrl_metrics_sample_u64() writes them. */
static void expect_rule_lines(FILE *out, const struct xrl_metrics_rule *rule,
			      const char *label)
{
	static const char *const verdicts[] = { "pass", "drop", "banned" };
	const char *labels[5] = { "rule", label, "verdict", NULL, NULL };
	int o;

	for (o = 0; o < XRL_RULE_OUTCOMES; o++) {
		labels[3] = o == XRL_RULE_DROPPED && rule->monitor ?
				    "would_drop" : verdicts[o];
		xrl_metrics_sample_u64(out, "xdp_ratelimit_rule_packets_total",
				       labels,
				       rule->counters.outcome[o].packets);
	}
}

Test(metrics_text, rule_lines_are_those_of_the_label_writer)
{
	static char long_name[601];
	struct xrl_metrics_rule rules[3] = {
		{ .name = "web", .id = 1, .monitor = true },
		{ .name = long_name, .id = 2 },	/* past the line buffer */
		{ .name = NULL, .id = 4294967295U },
	};
	struct xrl_metrics m = {
		.rules = rules, .n_rules = 3, .tracked_sources = -1,
	};
	char *text, *expected, *at;
	size_t len, i;
	FILE *out;

	memset(long_name, '\\', sizeof(long_name) - 1);
	rules[0].counters.outcome[XRL_RULE_DROPPED].packets = UINT64_MAX;
	rules[1].counters.outcome[XRL_RULE_PASSED].packets = 10;
	rules[2].counters.outcome[XRL_RULE_BANNED].packets = 1234567890;
	out = open_memstream(&expected, &len);
	cr_assert_not_null(out);
	fputs("# TYPE xdp_ratelimit_rule_packets_total counter\n", out);
	for (i = 0; i < 2; i++)
		expect_rule_lines(out, &rules[i], rules[i].name);
	expect_rule_lines(out, &rules[2], "id-4294967295");
	fputs("# HELP", out);
	fclose(out);
	text = format(&m);
	at = strstr(text, "# TYPE xdp_ratelimit_rule_packets_total counter\n");
	cr_assert_not_null(at, "%s", text);
	cr_assert_eq(strncmp(at, expected, len), 0, "%s\nexpected:\n%s", at,
		     expected);
	cr_assert(strstr(text, "{rule=\"web\",verdict=\"would_drop\"} "
			 "18446744073709551615\n"), "%s", text);
	free(expected);
	free(text);
}
