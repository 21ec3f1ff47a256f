// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* xdp-ratelimit status|stats [--json]: read straight from the pins. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "clock.h"
#include "cmd.h"
#include "datapath.h"
#include "env.h"
#include "loader.h"
#include "report.h"
#include "stats.h"

/* stats --watch [--count N]: lines to print, 0 for no end. */
struct watch_opts {
	bool on;
	long count;
};

static const struct xrl_opt status_opts[] = {
	XRL_OPT("json", 'j', NULL, "one JSON object (docs/OPERATIONS.md)"),
	{}
};

static const struct xrl_opt stats_opts[] = {
	XRL_OPT("json", 'j', NULL, "one JSON object (docs/OPERATIONS.md)"),
	XRL_OPT("watch", 'w', NULL,
		"packets per second of each verdict, a line every second"),
	XRL_OPT("count", 'n', "N", "with --watch: stop after N lines"),
	{}
};

/*
 * Parses the options of status (@watch NULL) or stats and the common
 * ones; -1 to go on, else an exit code.
 */
static int parse_json_flag(const struct xrl_cmd *cmd, struct xrl_cli *cli,
			   int argc, char **argv, bool *json,
			   struct watch_opts *watch)
{
	int opt, exit_code = -1;
	char *end;

	while ((opt = xrl_cmd_next_opt(cmd, cli, argc, argv,
				       &exit_code)) != -1) {
		if (opt == 'j') {
			*json = true;
		} else if (opt == 'w') {
			watch->on = true;
		} else if (opt == 'n') {
			watch->count = strtol(optarg, &end, 10);
			if (*end || watch->count < 1) {
				xrl_cmd_error(cli, cmd, "--count: '%s' is not "
					      "a number of lines", optarg);
				return EXIT_FAILURE;
			}
		}
	}
	if (exit_code >= 0)
		return exit_code;
	if (watch && watch->count && !watch->on) {
		xrl_cmd_error(cli, cmd, "--count goes with --watch");
		return EXIT_FAILURE;
	}
	if (watch && watch->on && *json) {
		xrl_cmd_error(cli, cmd, "--watch prints text lines, not JSON");
		return EXIT_FAILURE;
	}
	if (optind != argc) {
		xrl_cmd_error(cli, cmd, "unexpected argument '%s'", argv[optind]);
		return EXIT_FAILURE;
	}
	return -1;
}

static int run_status(const struct xrl_cmd *cmd, struct xrl_cli *cli,
		      int argc, char **argv)
{
	struct xrl_status_report report;
	struct xrl_datapath dp;
	bool json = false;
	int ret;

	ret = parse_json_flag(cmd, cli, argc, argv, &json, NULL);
	if (ret >= 0)
		return ret;
	if (xrl_cmd_open_pins(cmd, cli, &dp))
		return EXIT_FAILURE;
	ret = xrl_status_collect(&dp, &report);
	xrl_datapath_close(&dp);
	if (ret) {
		xrl_cmd_error(cli, cmd, "reading %s: %s", cli->pin_dir,
			      strerror(-ret));
		return EXIT_FAILURE;
	}
	if (json)
		ret = xrl_json_print(stdout, xrl_status_json(&report), true);
	else
		xrl_status_print(stdout, &report);
	xrl_status_report_free(&report);
	return ret ? EXIT_FAILURE : EXIT_SUCCESS;
}

#define WATCH_INTERVAL_MS	1000
#define WATCH_HEADER_EVERY	20	/* lines, as vmstat repeats its own */

/* One line of per-second rates every second, @count lines (0: for ever). */
static int watch_stats(const struct xrl_cmd *cmd, const struct xrl_cli *cli,
		       const struct xrl_datapath *dp, long count)
{
	struct xrl_counter before[XRL_VERDICT_COUNT], after[XRL_VERDICT_COUNT];
	double at, before_at;
	long line;
	int ret;

	ret = xrl_stats_read(dp, before);
	before_at = xrl_clock_ns(CLOCK_MONOTONIC) / 1e9;
	for (line = 0; !ret && (!count || line < count); line++) {
		poll(NULL, 0, WATCH_INTERVAL_MS);
		ret = xrl_stats_read(dp, after);
		if (ret)
			break;
		at = xrl_clock_ns(CLOCK_MONOTONIC) / 1e9;
		xrl_stats_rates_print(stdout, before, after, at - before_at,
				      line % WATCH_HEADER_EVERY == 0);
		fflush(stdout);
		memcpy(before, after, sizeof(before));
		before_at = at;
	}
	if (ret)
		xrl_cmd_error(cli, cmd, "reading the counters: %s",
			      strerror(-ret));
	return ret ? EXIT_FAILURE : EXIT_SUCCESS;
}

static int run_stats(const struct xrl_cmd *cmd, struct xrl_cli *cli,
		     int argc, char **argv)
{
	struct watch_opts watch = {};
	struct xrl_stats_report report;
	struct xrl_datapath dp;
	bool json = false;
	int ret;

	ret = parse_json_flag(cmd, cli, argc, argv, &json, &watch);
	if (ret >= 0)
		return ret;
	if (xrl_cmd_open_pins(cmd, cli, &dp))
		return EXIT_FAILURE;
	if (watch.on) {
		ret = watch_stats(cmd, cli, &dp, watch.count);
		xrl_datapath_close(&dp);
		return ret;
	}
	ret = xrl_stats_collect(&dp, &report);
	xrl_datapath_close(&dp);
	if (ret) {
		xrl_cmd_error(cli, cmd, "reading %s: %s", cli->pin_dir,
			      strerror(-ret));
		return EXIT_FAILURE;
	}
	if (json)
		ret = xrl_json_print(stdout, xrl_stats_json(&report), true);
	else
		xrl_stats_print(stdout, &report);
	xrl_stats_report_free(&report);
	return ret ? EXIT_FAILURE : EXIT_SUCCESS;
}

const struct xrl_cmd xrl_cmd_status = {
	.name = "status",
	.synopsis = "[--json]",
	.summary = "Interfaces and modes, program, maps, rules, tracked "
		   "sources, counters.",
	.opts = status_opts,
	.run = run_status,
};

const struct xrl_cmd xrl_cmd_stats = {
	.name = "stats",
	.synopsis = "[--json] | --watch [-n N]",
	.summary = "Counters per verdict and per rule, summed over CPUs.",
	.opts = stats_opts,
	.run = run_stats,
};
