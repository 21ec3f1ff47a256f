// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-ratelimit events: the sources that started being limited, from
 * the daemon, once or followed.
 */
#include <poll.h>
#include <limits.h>
#include <stdio.h>
#include <time.h>
#include "cmd_request.h"
#include "report.h"

static const struct xrl_opt events_opts[] = {
	XRL_OPT("count", XRL_REQ_COUNT, "N", "the last N (default: all kept)"),
	XRL_OPT("follow", XRL_REQ_FOLLOW, NULL, "keep printing new ones"),
	XRL_OPT("json", XRL_REQ_JSON, NULL,
		"the daemon's JSON response (with --follow: one event per "
		"line)"),
	{}
};

static void print_events(json_t *response)
{
	char stamp[32];
	json_t *event;
	struct tm tm;
	time_t when;
	size_t i;

	json_array_foreach(json_object_get(response, "events"), i, event) {
		when = (time_t)json_number_value(json_object_get(event,
								 "time"));
		localtime_r(&when, &tm);
		strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", &tm);
		printf("%s  %s\n", stamp, json_string_value(
				json_object_get(event, "message")));
	}
}

/* With --follow --json: one compact object per event and line. */
static void print_events_json(json_t *response)
{
	json_t *event;
	size_t i;

	json_array_foreach(json_object_get(response, "events"), i, event)
		xrl_json_print(stdout, json_incref(event), false);
}

#define FOLLOW_INTERVAL_MS	1000

static int run_events(const struct xrl_cmd *cmd, struct xrl_cli *cli,
		      int argc, char **argv)
{
	struct xrl_request_args args = {};
	json_t *response;
	int ret;

	ret = xrl_request_parse(cmd, cli, argc, argv, &args);
	if (ret >= 0)
		goto put_request;
	ret = EXIT_FAILURE;
	if (args.n_args || json_object_size(args.request) >
			   (size_t)!!json_object_get(args.request, "n")) {
		xrl_cmd_error(cli, cmd, "expected only -n N, --follow and "
			      "--json");
		goto put_request;
	}
	json_object_set_new(args.request, "cmd", json_string("events"));
	if (!args.follow) {
		response = xrl_request_call(cmd, cli, &args);
		if (response)
			ret = xrl_request_print(&args, response, print_events);
		goto put_request;
	}
	/* Asks for what came after the last event seen, until stopped. */
	for (;;) {
		response = xrl_request_call(cmd, cli, &args);
		if (!response)
			break;
		if (args.json)
			print_events_json(response);
		else
			print_events(response);
		fflush(stdout);
		json_object_del(args.request, "n");
		json_object_set(args.request, "since",
				json_object_get(response, "last_seq"));
		json_decref(response);
		poll(NULL, 0, FOLLOW_INTERVAL_MS);
	}
put_request:
	json_decref(args.request);
	return ret;
}

const struct xrl_cmd xrl_cmd_events = {
	.name = "events",
	.synopsis = "[-n N] [--follow] [--json]",
	.summary = "Sources that started being limited (from the daemon).",
	.opts = events_opts,
	.run = run_events,
};
