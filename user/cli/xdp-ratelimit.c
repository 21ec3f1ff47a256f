// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-ratelimit - attach the per-source rate limiter to interfaces and
 * read its state. Commands live in user/cli/cmd_*.c; this file is their
 * table and the global options.
 */
#include <getopt.h>
#include <stdlib.h>
#include "cmd.h"
#include "datapath.h"
#include "log.h"
#include "xrl.h"

static const struct xrl_cmd *const commands[] = {
	&xrl_cmd_attach,
	&xrl_cmd_detach,
	&xrl_cmd_status,
	&xrl_cmd_stats,
	&xrl_cmd_rule,
	&xrl_cmd_reload,
	&xrl_cmd_top,
	&xrl_cmd_events,
	NULL
};

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pin-dir", required_argument, NULL, 'P' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct xrl_cli cli = {
		.prog = "xdp-ratelimit",
		.pin_dir = XRL_PIN_DIR,
	};
	int opt;

	/* libbpf's own messages only with -v: errors are ours to word. */
	xrl_log_libbpf();
	xrl_log_set_level(XRL_LOG_ERROR);
	/* "+": stop at the command name; what follows is the command's. */
	while ((opt = getopt_long(argc, argv, "+P:vh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'P':
			cli.pin_dir = optarg;
			break;
		case 'v':
			cli.verbose = true;
			xrl_log_set_level(XRL_LOG_DEBUG);
			break;
		case 'h':
			xrl_cmd_usage(commands, &cli, stdout);
			return EXIT_SUCCESS;
		default:
			xrl_cmd_usage(commands, &cli, stderr);
			return EXIT_FAILURE;
		}
	}
	return xrl_cmd_dispatch(commands, &cli, argc - optind, argv + optind);
}
