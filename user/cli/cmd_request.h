/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * cmd_request.h - what the commands that ask the daemon share (rule,
 * reload, top, events, daemon, ban, unban, bans): their options made into
 * one request (docs/PROTOCOL.md), the call, the daemon's refusal in the
 * CLI's words, the response printed or shown as JSON.
 */
#ifndef XRL_CMD_REQUEST_H
#define XRL_CMD_REQUEST_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>
#include "cmd.h"

/* Option keys the request commands share; rule add's options are the
 * rule table's (XRL_OPT_FIELDS). */
enum {
	XRL_REQ_JSON = 'j',
	XRL_REQ_COUNT = 'n',
	XRL_REQ_FOLLOW = 'f',
	XRL_REQ_REPLACE = XRL_OPT_LONG,
	XRL_REQ_FOR,
	XRL_REQ_ALL,
};

#define XRL_REQ_JSON_OPT	XRL_OPT("json", XRL_REQ_JSON, NULL, \
					"the daemon's JSON response")

struct xrl_request_args {
	const char *socket;
	bool json;		/* --json */
	bool follow;		/* --follow */
	int n_args;		/* positional arguments left */
	char **args;
	json_t *request;	/* fields added by options */
};

/*
 * Parses the options of @cmd into @args->request (rule add's as the rule
 * table names them, quantities and durations as text: the daemon parses
 * them as a file's). -1 to go on, or an exit code. Free args->request
 * with json_decref() whatever it returns.
 */
int xrl_request_parse(const struct xrl_cmd *cmd, struct xrl_cli *cli,
		      int argc, char **argv, struct xrl_request_args *args);

/* Sends @args->request; prints a refusal as one line naming options where
 * the daemon names fields. The response (json_decref() it), or NULL. */
json_t *xrl_request_call(const struct xrl_cmd *cmd, const struct xrl_cli *cli,
			 const struct xrl_request_args *args);

/* Prints @response (and puts it): as JSON with --json, else by
 * @print_text. EXIT_SUCCESS or EXIT_FAILURE. */
int xrl_request_print(const struct xrl_request_args *args, json_t *response,
		      void (*print_text)(json_t *response));

/*
 * The whole of a command of one request: options, then @verb with the
 * one positional argument (@arg_name in its refusal) as @arg_field
 * (NULL: none taken), the call and the print. EXIT_SUCCESS or
 * EXIT_FAILURE.
 */
int xrl_request_run(const struct xrl_cmd *cmd, struct xrl_cli *cli, int argc,
		    char **argv, const char *verb, const char *arg_field,
		    const char *arg_name, void (*print_text)(json_t *response));

/* A field of a response, 0 or NULL when absent. */
long long xrl_json_int(json_t *obj, const char *field);
const char *xrl_json_str(json_t *obj, const char *field);

/* A ban of the daemon's (ban, bans) as one line: its prefix, what is
 * left of it at @now_ms, what it dropped. */
void xrl_request_print_ban(json_t *ban, uint64_t now_ms);

#endif
