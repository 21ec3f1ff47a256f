// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-ratelimit check FILE: is this policy file valid, and what would
 * applying it change against the policy in force (nginx -t)? Reads only:
 * nothing is applied, whatever the outcome.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cidr.h"
#include "cmd.h"
#include "datapath.h"
#include "env.h"
#include "fields.h"
#include "levels.h"
#include "loader.h"
#include "policy_read.h"
#include "policy_map.h"

static void describe_spec(const struct xrl_rule_spec *rule, char *buf,
			  size_t len)
{
	size_t n = snprintf(buf, len, "%s", xrl_action_name(rule->action));
	char level[160];
	unsigned i;

	if (rule->pps && n < len)
		n += snprintf(buf + n, len - n, " pps %llu/s burst %llu",
			      (unsigned long long)rule->pps,
			      (unsigned long long)rule->burst);
	if (rule->bps && n < len)
		n += snprintf(buf + n, len - n, " bps %llu/s burst_bytes %llu",
			      (unsigned long long)rule->bps,
			      (unsigned long long)rule->burst_bytes);
	if (rule->scope != XRL_SCOPE_SOURCE && n < len)
		n += snprintf(buf + n, len - n, " scope %s%s",
			      xrl_scope_name(rule->scope),
			      rule->global ? " global" : "");
	/* As rule list shows them. */
	for (i = 0; i < rule->n_levels && i < XRL_LEVELS_MAX && n < len; i++) {
		xrl_level_format(&rule->levels[i],
				 xrl_prefix_family(&rule->prefix), level,
				 sizeof(level));
		n += snprintf(buf + n, len - n, " level %s", level);
	}
}

static void print_change(enum xrl_rule_change change,
			 const struct xrl_lpm_key *prefix,
			 const struct xrl_rule_spec *next,
			 const struct xrl_rule *in_force, void *ctx)
{
	static const char *const verbs[] = {
		[XRL_RULE_ADDED] = "add",
		[XRL_RULE_REMOVED] = "remove",
		[XRL_RULE_CHANGED] = "change",
	};
	char cidr[64], what[1024];

	xrl_cidr_format(prefix, cidr, sizeof(cidr));
	if (!prefix->prefixlen)
		snprintf(cidr, sizeof(cidr), "default");
	if (change == XRL_RULE_REMOVED) {
		printf("  %-7s %-24s %s\n", verbs[change], cidr,
		       xrl_action_name(in_force->action));
		return;
	}
	describe_spec(next, what, sizeof(what));
	if (change == XRL_RULE_CHANGED && in_force->action != next->action)
		printf("  %-7s %-24s %s (was %s)\n", verbs[change], cidr, what,
		       xrl_action_name(in_force->action));
	else
		printf("  %-7s %-24s %s%s\n", verbs[change], cidr, what,
		       change == XRL_RULE_CHANGED ? " (limits or scope)" : "");
}

static void print_settings(const struct xrl_policy_diff *diff)
{
	const struct {
		bool changed;
		const char *name;
	} settings[] = {
		{ diff->keys, "keys" },
		{ diff->malformed, "malformed" },
		{ diff->vlan_overflow, "vlan_overflow" },
		{ diff->ipv4_mapped, "ipv4_mapped" },
		{ diff->unjudged_fragments, "unjudged_fragments" },
		{ diff->header_overflow, "header_overflow" },
		{ diff->new_sources, "new_sources" },
		{ diff->unknown, "unknown_sources" },
		{ diff->events, "events" },
	};
	bool any = false;
	size_t i;

	for (i = 0; i < sizeof(settings) / sizeof(settings[0]); i++) {
		if (!settings[i].changed)
			continue;
		printf("%s%s", any ? ", " : "  settings change: ",
		       settings[i].name);
		any = true;
	}
	printf(any ? "\n" : "  settings unchanged\n");
}

static int compare(const struct xrl_cmd *cmd, struct xrl_cli *cli,
		   const struct xrl_policy *next)
{
	struct xrl_policy_diff diff;
	struct xrl_datapath dp;
	char err[256];
	int ret;

	if (xrl_check_privileges(false, err, sizeof(err))) {
		xrl_cmd_error(cli, cmd, "%s (to compare with the policy in "
			      "force)", err);
		return -EPERM;
	}
	ret = xrl_datapath_open_pinned(&dp, cli->pin_dir);
	if (ret == -ENOENT && xrl_cmd_pins_unseen(cmd, cli))
		return ret;
	if (ret == -ENOENT) {
		printf("no policy in force (nothing pinned in %s): attach "
		       "would apply all %zu rules\n", cli->pin_dir,
		       next->n_rules);
		return 0;
	}
	if (ret) {
		xrl_cmd_error(cli, cmd, "opening the pins in %s: %s",
			      cli->pin_dir, strerror(-ret));
		return ret;
	}
	printf("against the policy in force in %s:\n", cli->pin_dir);
	ret = xrl_policy_diff(&dp, next, print_change, NULL, &diff);
	xrl_datapath_close(&dp);
	if (ret) {
		xrl_cmd_error(cli, cmd, "reading the policy in force: %s",
			      strerror(-ret));
		return ret;
	}
	print_settings(&diff);
	printf("  %zu added, %zu removed, %zu changed, %zu unchanged "
	       "(of %zu in force)\n", diff.added, diff.removed, diff.changed,
	       diff.same, diff.in_force);
	return 0;
}

static int run_check(const struct xrl_cmd *cmd, struct xrl_cli *cli,
		     int argc, char **argv)
{
	struct xrl_config config;
	char err[PATH_MAX + 1024];
	const char *path;
	int ret, exit_code;

	path = xrl_cmd_one_arg(cmd, cli, argc, argv, &exit_code);
	if (!path)
		return exit_code;
	/* The loader's own line: FILE:LINE: FIELD: what (value). */
	if (xrl_config_load_file(path, &config, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return EXIT_FAILURE;
	}
	printf("%s: valid, %zu rules\n", path, config.policy.n_rules);
	ret = compare(cmd, cli, &config.policy);
	xrl_config_free(&config);
	if (ret)
		return EXIT_FAILURE;
	printf("nothing applied\n");
	return EXIT_SUCCESS;
}

const struct xrl_cmd xrl_cmd_check = {
	.name = "check",
	.synopsis = "FILE",
	.summary = "Check a policy file and show what applying it would "
		   "change; applies nothing.",
	.run = run_check,
};
