// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* xdp-ratelimit status|stats [--json]: read straight from the pins. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cmd.h"
#include "datapath.h"
#include "env.h"
#include "report.h"

/* Parses [--json] and the common options; -1 to go on, else an exit code. */
static int parse_json_flag(const struct xrl_cmd *cmd, struct xrl_cli *cli,
			   int argc, char **argv, bool *json)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		XRL_CMD_COMMON_LONGOPTS,
		{}
	};
	int opt, exit_code = -1;

	while ((opt = getopt_long(argc, argv, "j" XRL_CMD_COMMON_SHORTOPTS,
				  longopts, NULL)) != -1) {
		if (xrl_cmd_common_opt(cmd, cli, opt, &exit_code)) {
			if (exit_code >= 0)
				return exit_code;
		} else if (opt == 'j') {
			*json = true;
		}
	}
	if (optind != argc) {
		xrl_cmd_error(cli, cmd, "unexpected argument '%s'", argv[optind]);
		return EXIT_FAILURE;
	}
	return -1;
}

/* Readers take no lock: every value they read is read atomically. */
static int open_pins(const struct xrl_cmd *cmd, const struct xrl_cli *cli,
		     struct xrl_datapath *dp)
{
	char err[256];
	int ret;

	if (xrl_check_privileges(false, err, sizeof(err))) {
		xrl_cmd_error(cli, cmd, "%s", err);
		return -EPERM;
	}
	ret = xrl_datapath_open_pinned(dp, cli->pin_dir);
	if (ret == -ENOENT)
		xrl_cmd_error(cli, cmd, "xdp-ratelimit is not loaded (nothing "
			      "pinned in %s)", cli->pin_dir);
	else if (ret)
		xrl_cmd_error(cli, cmd, "opening the pins in %s: %s",
			      cli->pin_dir, strerror(-ret));
	return ret;
}

static int run_status(const struct xrl_cmd *cmd, struct xrl_cli *cli,
		      int argc, char **argv)
{
	struct xrl_status_report report;
	struct xrl_datapath dp;
	bool json = false;
	int ret;

	ret = parse_json_flag(cmd, cli, argc, argv, &json);
	if (ret >= 0)
		return ret;
	if (open_pins(cmd, cli, &dp))
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

static int run_stats(const struct xrl_cmd *cmd, struct xrl_cli *cli,
		     int argc, char **argv)
{
	struct xrl_stats_report report;
	struct xrl_datapath dp;
	bool json = false;
	int ret;

	ret = parse_json_flag(cmd, cli, argc, argv, &json);
	if (ret >= 0)
		return ret;
	if (open_pins(cmd, cli, &dp))
		return EXIT_FAILURE;
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
	.options = "  -j, --json          one JSON object (see README.md)\n",
	.run = run_status,
};

const struct xrl_cmd xrl_cmd_stats = {
	.name = "stats",
	.synopsis = "[--json]",
	.summary = "Counters per verdict and per rule, summed over CPUs.",
	.options = "  -j, --json          one JSON object (see README.md)\n",
	.run = run_stats,
};
