// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-ratelimit check FILE: is this policy file valid, and what would
 * applying it change against the policy in force (nginx -t)? With a
 * daemon on the socket it asks the daemon, which computes what its
 * reload would do (its runtime changes included) the way reload does;
 * without one it compares the file with the pins. Reads only: nothing is
 * applied, whatever the outcome.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include "blocklist.h"
#include "client.h"
#include "cmd.h"
#include "cmd_request.h"
#include "datapath.h"
#include "env.h"
#include "loader.h"
#include "plan.h"
#include "policy_read.h"

/* Whether @a and @b name the same directory. */
static bool same_dir(const char *a, const char *b)
{
	char real_a[PATH_MAX], real_b[PATH_MAX];

	if (realpath(a, real_a) && realpath(b, real_b))
		return !strcmp(real_a, real_b);
	return !strcmp(a, b);
}

/* {"cmd": "check", "path": ...}: root has the daemon read the file as
 * its reload would, anyone else sends the text read here. */
static json_t *check_request(const char *path, const char *text,
			     size_t size)
{
	char real[PATH_MAX];
	json_t *request, *content;

	if (!realpath(path, real))
		snprintf(real, sizeof(real), "%s", path);
	request = json_pack("{s:s, s:s}", "cmd", "check", "path", real);
	if (!request || geteuid() == 0)
		return request;
	content = json_stringn(text, size);
	if (!content || json_object_set_new(request, "text", content)) {
		json_decref(request);
		return NULL;
	}
	return request;
}

/*
 * The daemon's plan for @path. NULL with *@ret = -ENOENT when no daemon
 * serves the pin directory (compare here), or another -errno with the
 * reason printed.
 */
static json_t *daemon_plan(const struct xrl_cmd *cmd, struct xrl_cli *cli,
			   const char *path, const char *text, size_t size,
			   int *ret)
{
	json_t *request, *response = NULL;
	const char *pin_dir;
	char err[1024];

	request = check_request(path, text, size);
	if (!request) {
		xrl_cmd_error(cli, cmd, "%s: not UTF-8 text, or out of "
			      "memory", path);
		*ret = -EINVAL;
		return NULL;
	}
	*ret = xrl_client_call(cli->socket, request, &response, err,
			       sizeof(err));
	json_decref(request);
	if (*ret == -ECONNREFUSED)
		*ret = -ENOENT;
	if (*ret) {
		/* The daemon's "check: " is this command's name already. */
		if (*ret != -ENOENT)
			xrl_cmd_error(cli, cmd, "%s",
				      strncmp(err, "check: ", 7) ? err :
								   err + 7);
		json_decref(response);
		return NULL;
	}
	pin_dir = xrl_json_str(response, "pin_dir");
	if (pin_dir && !same_dir(pin_dir, cli->pin_dir)) {
		*ret = -ENOENT;
		json_decref(response);
		return NULL;
	}
	return response;
}

/* The plan against the pins, without a daemon (so without runtime
 * changes); NULL with *@ret (printed), or -ENOENT: nothing pinned. */
static json_t *local_plan(const struct xrl_cmd *cmd, struct xrl_cli *cli,
			  const struct xrl_policy *next, int *ret)
{
	struct xrl_datapath dp;
	char err[256];
	json_t *plan;

	if (xrl_check_privileges(false, err, sizeof(err))) {
		xrl_cmd_error(cli, cmd, "comparing with the policy in force "
			      "needs xdp-ratelimitd on %s or root: %s",
			      cli->socket, err);
		*ret = -EPERM;
		return NULL;
	}
	*ret = xrl_datapath_open_pinned(&dp, cli->pin_dir);
	if (*ret == -ENOENT && xrl_cmd_pins_unseen(cmd, cli)) {
		*ret = -EACCES;	/* said why: not "nothing pinned" */
		return NULL;
	}
	if (*ret == -ENOENT)
		return NULL;
	if (*ret) {
		xrl_cmd_error(cli, cmd, "opening the pins in %s: %s",
			      cli->pin_dir, strerror(-*ret));
		return NULL;
	}
	plan = xrl_plan_json(&dp, next, ret);
	xrl_datapath_close(&dp);
	if (!plan)
		xrl_cmd_error(cli, cmd, "reading the policy in force: %s",
			      strerror(-*ret));
	return plan;
}

static void print_plan(const char *path, size_t n_file_rules, json_t *plan,
		       const struct xrl_cli *cli)
{
	const char *runtime = xrl_json_str(plan, "runtime");

	printf("%s: valid, %zu rules\n", path, n_file_rules);
	printf("against the policy in force in %s:\n", cli->pin_dir);
	/* The daemon's plan: what its reload would leave in force. */
	if (json_object_get(plan, "pin_dir")) {
		printf("  reload would put %lld rules in force",
		       xrl_json_int(plan, "rules"));
		if (runtime && runtime[0])
			printf(" (%s)", runtime);
		printf("\n");
	}
	xrl_plan_print(plan);
}

static int run_check(const struct xrl_cmd *cmd, struct xrl_cli *cli,
		     int argc, char **argv)
{
	struct xrl_config config;
	char err[PATH_MAX + 1024];
	const char *path;
	json_t *plan;
	size_t size;
	char *text;
	int ret, exit_code;

	path = xrl_cmd_one_arg(cmd, cli, argc, argv, &exit_code);
	if (!path)
		return exit_code;
	/* Read here, as the user: the loader's own line on error,
	 * FILE:LINE: FIELD: what (value). */
	ret = xrl_config_read_file(path, &text, &size, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "%s\n", err);
		return EXIT_FAILURE;
	}
	ret = xrl_config_load_string(text, size, path, &config, err,
				     sizeof(err));
	/* Its lists too, read as the user: a bad line refuses a reload. */
	if (!ret && (ret = xrl_blocklists_check(&config.policy, err,
						sizeof(err))))
		xrl_config_free(&config);
	if (ret) {
		fprintf(stderr, "%s\n", err);
		free(text);
		return EXIT_FAILURE;
	}
	plan = daemon_plan(cmd, cli, path, text, size, &ret);
	free(text);
	if (ret == -ENOENT)
		plan = local_plan(cmd, cli, &config.policy, &ret);
	if (!plan && ret == -ENOENT) {
		printf("%s: valid, %zu rules\n", path, config.policy.n_rules);
		printf("no policy in force (nothing pinned in %s): attach "
		       "would apply all %zu rules\n", cli->pin_dir,
		       config.policy.n_rules);
		ret = 0;
	} else if (plan) {
		print_plan(path, config.policy.n_rules, plan, cli);
	}
	json_decref(plan);
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
