// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-ratelimit top: the sources with the most dropped packets, from
 * the daemon; on a terminal, redrawn every second by drop rate.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include "clock.h"
#include "cmd_request.h"

static const struct xrl_opt top_opts[] = {
	XRL_OPT("count", XRL_REQ_COUNT, "N",
		"how many (default 10; on a terminal, as many as fit)"),
	XRL_REQ_JSON_OPT,
	{}
};

/* The rule column: a ban by hand is looked at before any rule. */
static const char *rule_column(json_t *entry)
{
	if (json_is_true(json_object_get(entry, "by_hand")))
		return "(ban by hand)";
	return json_string_value(json_object_get(entry, "rule")) ?: "?";
}

static void print_top(json_t *response)
{
	json_t *entry;
	bool by_hand;
	size_t i;

	printf("%-28s %-20s %12s %12s\n", "source", "rule", "dropped",
	       "passed");
	json_array_foreach(json_object_get(response, "top"), i, entry) {
		by_hand = json_is_true(json_object_get(entry, "by_hand"));
		printf("%-28s %-20s %12lld %12lld",
		       xrl_json_str(entry, "source"), rule_column(entry),
		       xrl_json_int(entry, "dropped"),
		       xrl_json_int(entry, "passed"));
		if (by_hand && !json_object_get(entry, "ban_left_s"))
			printf("  banned until unban");
		else if (json_is_true(json_object_get(entry, "banned")))
			printf("  banned %.0fs more", json_real_value(
				json_object_get(entry, "ban_left_s")));
		if (json_object_get(entry, "escalated"))
			printf(" (%s escalated)",
			       xrl_json_str(entry, "escalated"));
		printf("\n");
	}
}

/* ---- top, live ------------------------------------------------------ */

#define TOP_LIVE_SOURCES	1000	/* asked for, to rank by rate */
#define TOP_LIVE_INTERVAL_MS	1000

struct top_row {
	json_t *entry;
	double drop_rate, pass_rate;
};

static json_int_t entry_int(json_t *entry, const char *field)
{
	return json_integer_value(json_object_get(entry, field));
}

/* The same source (and rule) in the previous sample, or NULL. */
static json_t *previous_entry(json_t *previous, json_t *entry)
{
	const char *source = json_string_value(json_object_get(entry,
								"source"));
	json_t *old;
	size_t i;

	json_array_foreach(json_object_get(previous, "top"), i, old)
		if (!strcmp(json_string_value(json_object_get(old, "source")),
			    source) &&
		    entry_int(old, "rule_id") == entry_int(entry, "rule_id"))
			return old;
	return NULL;
}

static int by_drop_rate(const void *a, const void *b)
{
	const struct top_row *ra = a, *rb = b;

	if (ra->drop_rate != rb->drop_rate)
		return ra->drop_rate < rb->drop_rate ? 1 : -1;
	return (entry_int(rb->entry, "dropped") >
		entry_int(ra->entry, "dropped")) -
	       (entry_int(rb->entry, "dropped") <
		entry_int(ra->entry, "dropped"));
}

/* Rows the terminal has for sources, under the two header lines. */
static size_t screen_rows(void)
{
	struct winsize ws;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) || ws.ws_row < 6)
		return 20;
	return ws.ws_row - 4;
}

static void print_top_screen(json_t *response, json_t *previous,
			     double seconds, size_t shown)
{
	json_t *entries = json_object_get(response, "top"), *entry, *old;
	size_t i, n = json_array_size(entries);
	struct top_row *rows = calloc(n ? n : 1, sizeof(*rows));
	char stamp[16], fill[16];
	time_t now = time(NULL);
	struct tm tm;

	if (!rows)
		return;
	json_array_foreach(entries, i, entry) {
		rows[i].entry = entry;
		old = previous ? previous_entry(previous, entry) : NULL;
		if (old && seconds > 0) {
			rows[i].drop_rate = (entry_int(entry, "dropped") -
					     entry_int(old, "dropped")) /
					    seconds;
			rows[i].pass_rate = (entry_int(entry, "passed") -
					     entry_int(old, "passed")) /
					    seconds;
		}
	}
	qsort(rows, n, sizeof(*rows), by_drop_rate);
	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%H:%M:%S", &tm);
	/* Home and clear, as top(1) redraws. */
	printf("\033[H\033[2Jxdp-ratelimit top - %s  sources dropping: %zu  "
	       "(sorted by drops/s; q: Ctrl-C)\n\n", stamp, n);
	printf("%-24s %-16s %10s %10s %12s %12s %5s\n", "SOURCE", "RULE",
	       "DROP/S", "PASS/S", "DROPPED", "PASSED", "FILL");
	for (i = 0; i < n && i < shown; i++) {
		entry = rows[i].entry;
		if (json_is_number(json_object_get(entry, "fill")))
			snprintf(fill, sizeof(fill), "%3.0f%%", 100 *
				 json_number_value(json_object_get(entry,
								   "fill")));
		else
			snprintf(fill, sizeof(fill), "-");
		printf("%-24s %-16.16s %10.0f %10.0f %12lld %12lld %5s\n",
		       json_string_value(json_object_get(entry, "source")),
		       rule_column(entry), rows[i].drop_rate, rows[i].pass_rate,
		       (long long)entry_int(entry, "dropped"),
		       (long long)entry_int(entry, "passed"), fill);
	}
	fflush(stdout);
	free(rows);
}

/* Redraws every second until interrupted (or the daemon goes away). */
static int run_top_live(const struct xrl_cmd *cmd, const struct xrl_cli *cli,
			struct xrl_request_args *args)
{
	json_t *n_item = json_object_get(args->request, "n");
	size_t shown = n_item ? (size_t)json_integer_value(n_item) : 0;
	json_t *response, *previous = NULL;
	double at, previous_at = 0;

	json_object_set_new(args->request, "n",
			    json_integer(TOP_LIVE_SOURCES));
	for (;;) {
		response = xrl_request_call(cmd, cli, args);
		if (!response)
			break;
		at = xrl_clock_ns(CLOCK_MONOTONIC) / 1e9;
		print_top_screen(response, previous, at - previous_at,
				 shown ? shown : screen_rows());
		json_decref(previous);
		previous = response;
		previous_at = at;
		poll(NULL, 0, TOP_LIVE_INTERVAL_MS);
	}
	json_decref(previous);
	return EXIT_FAILURE;
}

static int run_top(const struct xrl_cmd *cmd, struct xrl_cli *cli, int argc,
		   char **argv)
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
		xrl_cmd_error(cli, cmd, "expected only -n N and --json");
		goto put_request;
	}
	json_object_set_new(args.request, "cmd", json_string("top"));
	if (!args.json && isatty(STDOUT_FILENO)) {
		ret = run_top_live(cmd, cli, &args);
		goto put_request;
	}
	response = xrl_request_call(cmd, cli, &args);
	if (response)
		ret = xrl_request_print(&args, response, print_top);
put_request:
	json_decref(args.request);
	return ret;
}

const struct xrl_cmd xrl_cmd_top = {
	.name = "top",
	.synopsis = "[-n N] [--json]",
	.summary = "Sources with the most dropped packets, bans by hand among "
		   "them (from the daemon); on a terminal, refreshed every "
		   "second by drop rate.",
	.opts = top_opts,
	.run = run_top,
};
