// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * control.c - the daemon's control protocol (docs/PROTOCOL.md): one
 * request line parsed with jansson, refused whole when any field is
 * unknown, missing or wrong, and handed to its command by the table
 * below. This file must never crash or leak on any input:
 * tests/fuzz/fuzz_control.c feeds it arbitrary lines.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "control.h"
#include "control_cmds.h"
#include "file_load.h"
#include "fields.h"
#include "xrl.h"

/* version: the daemon's, and its protocol's. */
static int cmd_version(struct xrl_request *req)
{
	json_object_set_new(req->response, "version", json_string(XRL_VERSION));
	json_object_set_new(req->response, "protocol",
			    json_integer(XRL_PROTOCOL_VERSION));
	return 0;
}

/* Besides the keys of the rule table (fields.h). */
static const char *const rule_add_fields[] = { "replace", NULL };
static const char *const rule_del_fields[] = { "rule", NULL };
static const char *const reload_fields[] = { "path", NULL };
static const char *const rule_revert_fields[] = { "rule", "all", NULL };
static const char *const check_fields_of[] = { "path", "text", NULL };
static const char *const top_fields[] = { "n", NULL };
static const char *const events_fields[] = { "n", "since", NULL };
static const char *const no_fields[] = { NULL };
static const char *const ban_fields[] = { "cidr", "for", NULL };
static const char *const unban_fields[] = { "cidr", NULL };
static const char *const blocklist_fields[] = { "name", NULL };

#define COMMAND(n, f, fn, ...)	{ .name = n, .fields = f, .run = fn, __VA_ARGS__ }

static const struct xrl_control_command commands[] = {
	COMMAND("rule.add", rule_add_fields, xrl_control_rule_add,
		.changes = true, .rule_keys = true),
	COMMAND("rule.del", rule_del_fields, xrl_control_rule_del,
		.changes = true),
	COMMAND("rule.list", no_fields, xrl_control_rule_list),
	COMMAND("rule.revert", rule_revert_fields, xrl_control_rule_revert,
		.changes = true),
	COMMAND("check", check_fields_of, xrl_control_check),
	COMMAND("ban", ban_fields, xrl_control_ban, .changes = true),
	COMMAND("unban", unban_fields, xrl_control_unban, .changes = true),
	COMMAND("bans", no_fields, xrl_control_bans),
	COMMAND("reload", reload_fields, xrl_control_reload, .changes = true),
	COMMAND("blocklist.reload", blocklist_fields,
		xrl_control_blocklist_reload, .changes = true),
	COMMAND("stats", no_fields, xrl_control_stats),
	COMMAND("status", no_fields, xrl_control_status),
	COMMAND("top", top_fields, xrl_control_top),
	COMMAND("events", events_fields, xrl_control_events),
	COMMAND("version", no_fields, cmd_version),
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static const struct xrl_control_command *find_command(const char *name)
{
	size_t i;

	for (i = 0; i < N_COMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

static bool takes_field(const struct xrl_control_command *cmd,
			const char *key)
{
	size_t i;

	if (cmd->rule_keys &&
	    xrl_field_find(xrl_rule_fields, xrl_n_rule_fields, key))
		return true;
	for (i = 0; cmd->fields[i]; i++)
		if (!strcmp(cmd->fields[i], key))
			return true;
	return false;
}

static int check_fields(const struct xrl_control_command *cmd, json_t *json,
			char *err, size_t len)
{
	const char *key;
	json_t *value;

	json_object_foreach(json, key, value) {
		if (strcmp(key, "cmd") && !takes_field(cmd, key)) {
			snprintf(err, len, "%s: unknown field \"%.64s\"",
				 cmd->name, key);
			return -EINVAL;
		}
	}
	return 0;
}

/* The command's refusal: named in its error, counted when it changes. */
static void refused(struct xrl_request *req,
		    const struct xrl_control_command *cmd, int ret)
{
	char why[sizeof(req->err)];

	/* Prefix the command unless it already named itself. */
	if (strncmp(req->err, cmd->name, strlen(cmd->name))) {
		snprintf(why, sizeof(why), "%s", req->err);
		snprintf(req->err, sizeof(req->err), "%s: %.400s", cmd->name,
			 why[0] ? why : strerror(-ret));
	}
	if (cmd->changes)
		xrl_daemon_refused(req->state, req->err);
}

/* Parses the request and runs its command; @req->err tells why not. */
static int run_request(struct xrl_request *req, const char *line, size_t len)
{
	const struct xrl_control_command *cmd;
	json_error_t error;
	const char *name;
	json_t *cmd_item;
	int ret;

	req->json = json_loadb(line, len, JSON_REJECT_DUPLICATES, &error);
	if (!req->json) {
		snprintf(req->err, sizeof(req->err),
			 "the request is not JSON: %s (column %d)",
			 error.text, error.column);
		return -EINVAL;
	}
	if (!json_is_object(req->json)) {
		snprintf(req->err, sizeof(req->err),
			 "the request must be a JSON object");
		return -EINVAL;
	}
	cmd_item = json_object_get(req->json, "cmd");
	if (!json_is_string(cmd_item)) {
		snprintf(req->err, sizeof(req->err),
			 "the request has no \"cmd\" string");
		return -EINVAL;
	}
	name = json_string_value(cmd_item);
	cmd = find_command(name);
	if (!cmd) {
		snprintf(req->err, sizeof(req->err), "unknown command \"%.32s\""
			 " (rule.add, rule.del, rule.list, rule.revert, "
			 "reload, blocklist.reload, check, stats, status, top, version)", name);
		return -EINVAL;
	}
	ret = check_fields(cmd, req->json, req->err, sizeof(req->err));
	if (!ret)
		ret = cmd->run(req);
	if (ret < 0)
		refused(req, cmd, ret);
	return ret;
}

/* Error text may quote a client's bytes cut anywhere: keep it valid
 * UTF-8 for the response by replacing what is not plain ASCII. */
static json_t *ascii_string(char *text)
{
	unsigned char *c;

	for (c = (unsigned char *)text; *c; c++)
		if (*c >= 0x80 || *c < 0x20)
			*c = '?';
	return json_string(text);
}

/* The response line of @req, whose command returned @ret. */
static int respond(struct xrl_request *req, int ret, char **response)
{
	if (ret) {
		json_object_clear(req->response);
		json_object_set_new(req->response, "ok", json_false());
		json_object_set_new(req->response, "error",
				    ascii_string(req->err));
	}
	*response = json_dumps(req->response,
			       JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(req->response);
	json_decref(req->json);
	return *response ? 0 : -ENOMEM;
}

int xrl_control_handle(struct xrl_daemon_state *state, bool privileged,
		       const char *line, size_t len, char **response)
{
	struct xrl_request req = {
		.state = state,
		.privileged = privileged,
	};
	int ret;

	*response = NULL;
	while (len && (line[len - 1] == '\r' || line[len - 1] == '\n'))
		len--;
	req.response = json_pack("{s:b}", "ok", true);
	if (!req.response)
		return -ENOMEM;
	ret = run_request(&req, line, len);
	if (ret == XRL_REQUEST_LATER) {
		json_decref(req.response);
		json_decref(req.json);
		return XRL_CONTROL_LATER;
	}
	return respond(&req, ret, response);
}

int xrl_control_reload_response(struct xrl_daemon_state *state,
				char **response)
{
	struct xrl_request req = { .state = state, .privileged = true };
	bool list;
	int ret;

	*response = NULL;
	req.response = json_pack("{s:b}", "ok", true);
	if (!req.response)
		return -ENOMEM;
	list = state->load && state->load->list.active;
	ret = list ? xrl_control_blocklist_done(&req) :
		     xrl_control_reload_done(&req);
	if (ret)
		refused(&req, find_command(list ? "blocklist.reload" :
					   "reload"), ret);
	return respond(&req, ret, response);
}
