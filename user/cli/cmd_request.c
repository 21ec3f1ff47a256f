// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * cmd_request.c - what the commands that ask the daemon share
 * (cmd_request.h). The daemon owns the policy; these commands only ask
 * it, over its control socket (docs/PROTOCOL.md).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "client.h"
#include "cmd_request.h"
#include "fields.h"
#include "report.h"

long long xrl_json_int(json_t *obj, const char *field)
{
	return json_integer_value(json_object_get(obj, field));
}

const char *xrl_json_str(json_t *obj, const char *field)
{
	return json_string_value(json_object_get(obj, field));
}

/* "FROM" at @at in @out (@len bytes) becomes "TO", when it fits. */
static void replace_at(char *out, size_t len, char *at, const char *from,
		       const char *to)
{
	size_t n_from = strlen(from), n_to = strlen(to);

	if (strlen(out) - n_from + n_to >= len)
		return;
	memmove(at + n_to, at + n_from, strlen(at + n_from) + 1);
	memcpy(at, to, n_to);
}

/* The field a refusal starts with ("pps: ...") as its option ("--pps:
 * ..."): the rule table's, and the few of the other commands. */
static void word_field(char *out, size_t len)
{
	static const char *const others[][2] = {
		{ "n:", "--count:" }, { "for:", "--for:" },
	};
	const struct xrl_field *f;
	char from[64], to[64];
	size_t i;

	for (i = 0; i < xrl_n_rule_fields; i++) {
		f = &xrl_rule_fields[i];
		snprintf(from, sizeof(from), "%s:", f->key);
		snprintf(to, sizeof(to), "--%s:", f->option);
		if (f->option && !strncmp(out, from, strlen(from))) {
			replace_at(out, len, out, from, to);
			return;
		}
	}
	for (i = 0; i < sizeof(others) / sizeof(others[0]); i++)
		if (!strncmp(out, others[i][0], strlen(others[i][0])))
			replace_at(out, len, out, others[i][0], others[i][1]);
}

/*
 * The daemon's error in the CLI's words: without the protocol command it
 * starts with ("rule.add: "), naming options where it names fields, and
 * --replace where it suggests "replace".
 */
static void word_error(const struct xrl_request_args *args, const char *err,
		       char *out, size_t len)
{
	const char *cmd = xrl_json_str(args->request, "cmd");
	size_t n = cmd ? strlen(cmd) : 0;
	char *at;

	if (n && !strncmp(err, cmd, n) && !strncmp(err + n, ": ", 2))
		err += n + 2;
	snprintf(out, len, "%s", err);
	at = strstr(out, "\"replace\": true");
	if (at)
		replace_at(out, len, at, "\"replace\": true", "--replace");
	word_field(out, len);
}

json_t *xrl_request_call(const struct xrl_cmd *cmd, const struct xrl_cli *cli,
			 const struct xrl_request_args *args)
{
	char err[1024], worded[1100];
	json_t *response;
	int ret;

	ret = xrl_client_call(args->socket, args->request, &response, err,
			      sizeof(err));
	if (ret) {
		word_error(args, err, worded, sizeof(worded));
		xrl_cmd_error(cli, cmd, "%s", worded);
		json_decref(response);
		return NULL;
	}
	return response;
}

/* A rule field's option: a flag is true, each --level one more level, the
 * rest text the daemon parses as the policy file does ("10k", "30s"). */
static void field_option(json_t *request, const struct xrl_field *f,
			 const char *value)
{
	json_t *levels;

	switch (f->type) {
	case XRL_FIELD_FLAG:
		json_object_set_new(request, f->key, json_true());
		break;
	case XRL_FIELD_LEVELS:
		levels = json_object_get(request, f->key);
		if (!levels) {
			levels = json_array();
			json_object_set_new(request, f->key, levels);
		}
		json_array_append_new(levels, json_string(value));
		break;
	default:
		json_object_set_new(request, f->key, json_string(value));
	}
}

/* --count N: 1 to 100000. */
static int count_option(const struct xrl_cmd *cmd, const struct xrl_cli *cli,
			json_t *request, const char *value)
{
	char *end;
	long n = strtol(value, &end, 10);

	if (*end || n < 1 || n > 100000) {
		xrl_cmd_error(cli, cmd, "--count %s: not a count from 1 to "
			      "100000", value);
		return EXIT_FAILURE;
	}
	json_object_set_new(request, "n", json_integer(n));
	return -1;
}

int xrl_request_parse(const struct xrl_cmd *cmd, struct xrl_cli *cli,
		      int argc, char **argv, struct xrl_request_args *args)
{
	int opt, exit_code = -1;

	args->request = json_object();
	while ((opt = xrl_cmd_next_opt(cmd, cli, argc, argv,
				       &exit_code)) != -1) {
		switch (opt) {
		case XRL_REQ_JSON:
			args->json = true;
			break;
		case XRL_REQ_FOLLOW:
			args->follow = true;
			break;
		case XRL_REQ_REPLACE:
			json_object_set_new(args->request, "replace",
					    json_true());
			break;
		case XRL_REQ_ALL:
			json_object_set_new(args->request, "all", json_true());
			break;
		case XRL_REQ_FOR:
			json_object_set_new(args->request, "for",
					    json_string(optarg));
			break;
		case XRL_REQ_COUNT:
			exit_code = count_option(cmd, cli, args->request,
						 optarg);
			if (exit_code >= 0)
				return exit_code;
			break;
		default:
			if (opt >= XRL_OPT_FIELD &&
			    opt < XRL_OPT_FIELD + (int)xrl_n_rule_fields)
				field_option(args->request,
					     &xrl_rule_fields[opt -
							      XRL_OPT_FIELD],
					     optarg);
		}
	}
	if (exit_code >= 0)
		return exit_code;
	args->socket = cli->socket;
	args->n_args = argc - optind;
	args->args = argv + optind;
	return -1;
}

int xrl_request_print(const struct xrl_request_args *args, json_t *response,
		      void (*print_text)(json_t *response))
{
	int ret = 0;

	if (args->json)
		ret = xrl_json_print(stdout, json_incref(response), true);
	else
		print_text(response);
	json_decref(response);
	return ret ? EXIT_FAILURE : EXIT_SUCCESS;
}

int xrl_request_run(const struct xrl_cmd *cmd, struct xrl_cli *cli, int argc,
		    char **argv, const char *verb, const char *arg_field,
		    const char *arg_name, void (*print_text)(json_t *response))
{
	struct xrl_request_args args = {};
	json_t *response;
	int ret;

	ret = xrl_request_parse(cmd, cli, argc, argv, &args);
	if (ret >= 0)
		goto put_request;
	ret = EXIT_FAILURE;
	if (args.n_args != (arg_field ? 1 : 0)) {
		if (arg_field)
			xrl_cmd_error(cli, cmd, "expected one %s", arg_name);
		else
			xrl_cmd_error(cli, cmd, "expected no argument");
		goto put_request;
	}
	if (arg_field)
		json_object_set_new(args.request, arg_field,
				    json_string(args.args[0]));
	json_object_set_new(args.request, "cmd", json_string(verb));
	response = xrl_request_call(cmd, cli, &args);
	if (response)
		ret = xrl_request_print(&args, response, print_text);
put_request:
	json_decref(args.request);
	return ret;
}

void xrl_request_print_ban(json_t *ban, uint64_t now_ms)
{
	json_t *until = json_object_get(ban, "until_ms");
	long long left;

	printf("%-28s", xrl_json_str(ban, "cidr"));
	if (until) {
		left = (json_integer_value(until) - (long long)now_ms + 999) /
		       1000;
		printf(" %lld s left", left > 0 ? left : 0);
	} else {
		printf(" until unban");
	}
	if (json_object_get(ban, "packets"))
		printf(" (dropped %lld)", xrl_json_int(ban, "packets"));
	if (json_object_get(ban, "kind"))
		printf(" %s by rule %s", xrl_json_str(ban, "kind"),
		       xrl_json_str(ban, "rule"));
	printf("\n");
}
