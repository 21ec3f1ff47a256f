// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-ratelimit rule add|del|list|revert: the daemon's rules, changed or
 * listed through its socket; rule add's options are the rule table's
 * (fields.h).
 */
#include <stdio.h>
#include <string.h>
#include <jansson.h>
#include "cmd_request.h"
#include "fields.h"
#include "plan.h"

static const struct xrl_opt rule_opts[] = {
	XRL_OPT_FIELDS(xrl_rule_fields),
	XRL_OPT("replace", XRL_REQ_REPLACE, NULL,
		"change the rule of that CIDR (keeps its id)"),
	XRL_OPT("all", XRL_REQ_ALL, NULL,
		"with revert: every runtime change"),
	XRL_REQ_JSON_OPT,
	{}
};

static void print_limit(const char *what, json_t *rule, const char *rate,
			const char *burst)
{
	if (json_object_get(rule, rate))
		printf(" %s %lld/s burst %lld", what, xrl_json_int(rule, rate),
		       xrl_json_int(rule, burst));
}

/* " sliding_window limit 50 window 1s", " leaky_bucket interval 1ms". */
static void print_strategy(json_t *rule)
{
	const char *strategy = xrl_json_str(rule, "strategy");

	if (!strategy || !strcmp(strategy, "token_bucket"))
		return;
	printf(" %s", strategy);
	if (xrl_json_str(rule, "interval"))
		printf(" interval %s", xrl_json_str(rule, "interval"));
	if (json_object_get(rule, "limit"))
		printf(" limit %lld window %s", xrl_json_int(rule, "limit"),
		       xrl_json_str(rule, "window") ?: "?");
}

static void print_rule(json_t *rule)
{
	json_t *passed = json_object_get(rule, "passed");
	json_t *dropped = json_object_get(rule, "dropped");
	const char *scope;
	json_t *level;
	size_t i;

	printf("%5lld  %-20s %-22s %-8s %-7s", xrl_json_int(rule, "id"),
	       xrl_json_str(rule, "name"), xrl_json_str(rule, "cidr"),
	       xrl_json_str(rule, "action"),
	       xrl_json_str(rule, "source") ?: "");
	print_strategy(rule);
	print_limit("pps", rule, "pps", "burst");
	print_limit("bps", rule, "bps", "burst_bytes");
	if (xrl_json_str(rule, "match"))
		printf(" %s", xrl_json_str(rule, "match"));
	scope = xrl_json_str(rule, "scope");
	if (scope && strcmp(scope, "source"))
		printf(" %s", scope);
	if (json_is_true(json_object_get(rule, "global")))
		printf(" global%s", json_is_true(json_object_get(rule,
				    "degraded")) ? " (DEGRADED)" : "");
	if (xrl_json_str(rule, "ban"))
		printf(" ban %s", xrl_json_str(rule, "ban"));
	if (xrl_json_str(rule, "ban_after"))
		printf(" after %s", xrl_json_str(rule, "ban_after"));
	if (xrl_json_str(rule, "ban_max"))
		printf(" max %s", xrl_json_str(rule, "ban_max"));
	/* The rule's keys as the table's printer gives them: text. */
	if (xrl_json_str(rule, "escalate_prefix"))
		printf(" escalate /%s after %s within %s for %s",
		       xrl_json_str(rule, "escalate_prefix"),
		       xrl_json_str(rule, "escalate_after"),
		       xrl_json_str(rule, "escalate_within"),
		       xrl_json_str(rule, "escalate_ban"));
	json_array_foreach(json_object_get(rule, "levels"), i, level)
		printf(" level %s", json_string_value(level));
	if (json_is_true(json_object_get(rule, "replaces_file")))
		printf(" (replaces the file's rule)");
	if (passed && dropped)
		printf("  (passed %lld, dropped %lld",
		       xrl_json_int(passed, "packets"),
		       xrl_json_int(dropped, "packets"));
	if (passed && dropped && json_object_get(rule, "banned"))
		printf(", banned %lld", xrl_json_int(json_object_get(rule,
							"banned"), "packets"));
	if (passed && dropped)
		printf(")");
	printf("\n");
}

static void print_added(json_t *response)
{
	printf("added: ");
	print_rule(json_object_get(response, "rule"));
}

static void print_deleted(json_t *response)
{
	printf("deleted: ");
	print_rule(json_object_get(response, "deleted"));
}

static void print_list(json_t *response)
{
	json_t *rule;
	size_t i;

	printf("source keys /%lld (IPv4), /%lld (IPv6); malformed: %s; "
	       "vlan_overflow: %s; ipv4_mapped: %s; unjudged_fragments: %s; "
	       "header_overflow: %s\n", xrl_json_int(response, "v4_prefix"),
	       xrl_json_int(response, "v6_prefix"),
	       xrl_json_str(response, "malformed"),
	       xrl_json_str(response, "vlan_overflow"),
	       xrl_json_str(response, "ipv4_mapped"),
	       xrl_json_str(response, "unjudged_fragments"),
	       xrl_json_str(response, "header_overflow"));
	printf("%5s  %-20s %-22s %-8s %-7s limits\n", "id", "name", "cidr",
	       "action", "source");
	json_array_foreach(json_object_get(response, "rules"), i, rule)
		print_rule(rule);
	/* The file's rules not in force: rule revert brings them back. */
	json_array_foreach(json_object_get(response, "deleted"), i, rule)
		printf("%5s  %-20s %-22s %-8s %-7s deleted at runtime\n", "-",
		       xrl_json_str(rule, "name") ?: "-",
		       xrl_json_str(rule, "cidr"),
		       xrl_json_str(rule, "action") ?: "-", "runtime");
}

/* "reverted: delete 198.18.3.0/24; the policy file applied: 8 rules",
 * then what that changed. */
static void print_reverted(json_t *response)
{
	json_t *entry;
	size_t i;

	printf("reverted: ");
	json_array_foreach(json_object_get(response, "reverted"), i, entry)
		printf("%s%s", i ? ", " : "", json_string_value(entry));
	printf("; %s applied: %lld rules", xrl_json_str(response, "path"),
	       xrl_json_int(response, "rules"));
	if (xrl_json_str(response, "runtime") &&
	    xrl_json_str(response, "runtime")[0])
		printf(" (%s)", xrl_json_str(response, "runtime"));
	printf("\n");
	xrl_plan_print(response);
}

/* revert takes NAME|CIDR or --all, and nothing else. */
static bool revert_args(const struct xrl_request_args *args)
{
	bool all = json_object_get(args->request, "all") != NULL;

	return json_object_size(args->request) == (all ? 1 : 0) &&
	       args->n_args == (all ? 1 : 2);
}

enum rule_verb { RULE_ADD, RULE_DEL, RULE_LIST, RULE_REVERT };

static const char *const rule_verbs[] = { "add", "del", "list", "revert",
					  NULL };

/* The verb @word names (a unique prefix is enough), or -1 with one line
 * said when it names none or several. */
static int rule_verb(const struct xrl_cmd *cmd, const struct xrl_cli *cli,
		     const char *word)
{
	char candidates[64];
	int verb;

	verb = xrl_prefix_match(rule_verbs, word, candidates,
				sizeof(candidates));
	if (verb == XRL_PREFIX_AMBIGUOUS)
		xrl_cmd_error(cli, cmd, "ambiguous '%s' (%s)", word,
			      candidates);
	return verb;
}

static int run_rule(const struct xrl_cmd *cmd, struct xrl_cli *cli, int argc,
		    char **argv)
{
	struct xrl_request_args args = {};
	void (*print_text)(json_t *response);
	json_t *response;
	int ret, verb;

	ret = xrl_request_parse(cmd, cli, argc, argv, &args);
	if (ret >= 0)
		goto put_request;
	ret = EXIT_FAILURE;
	verb = args.n_args ? rule_verb(cmd, cli, args.args[0]) :
			     XRL_PREFIX_NONE;
	if (verb == XRL_PREFIX_AMBIGUOUS)
		goto put_request;
	if (verb == RULE_ADD && args.n_args == 2) {
		json_object_set_new(args.request, "cidr",
				    json_string(args.args[1]));
		json_object_set_new(args.request, "cmd",
				    json_string("rule.add"));
		print_text = print_added;
	} else if (verb == RULE_DEL && args.n_args == 2 &&
		   json_object_size(args.request) == 0) {
		json_object_set_new(args.request, "rule",
				    json_string(args.args[1]));
		json_object_set_new(args.request, "cmd",
				    json_string("rule.del"));
		print_text = print_deleted;
	} else if (verb == RULE_REVERT && revert_args(&args)) {
		if (args.n_args == 2)
			json_object_set_new(args.request, "rule",
					    json_string(args.args[1]));
		json_object_set_new(args.request, "cmd",
				    json_string("rule.revert"));
		print_text = print_reverted;
	} else if (verb == RULE_LIST && args.n_args == 1 &&
		   json_object_size(args.request) == 0) {
		json_object_set_new(args.request, "cmd",
				    json_string("rule.list"));
		print_text = print_list;
	} else {
		xrl_cmd_error(cli, cmd, "expected 'add CIDR [OPTIONS]', 'del "
			      "NAME|CIDR', 'list' or 'revert NAME|CIDR|--all' "
			      "(see --help)");
		goto put_request;
	}
	response = xrl_request_call(cmd, cli, &args);
	if (response)
		ret = xrl_request_print(&args, response, print_text);
put_request:
	json_decref(args.request);
	return ret;
}

const struct xrl_cmd xrl_cmd_rule = {
	.name = "rule",
	.synopsis = "add CIDR [OPTIONS] | del NAME|CIDR | list [--json] | "
		    "revert NAME|CIDR|--all",
	.summary = "Change or list the daemon's rules (through its socket).",
	.opts = rule_opts,
	.run = run_rule,
};
