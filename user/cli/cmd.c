// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "cmd.h"
#include "log.h"

void xrl_cmd_help(const struct xrl_cmd *cmd, const struct xrl_cli *cli,
		  FILE *out)
{
	fprintf(out, "usage: %s %s %s\n%s\n\noptions:\n%s" XRL_CMD_COMMON_HELP,
		cli->prog, cmd->name, cmd->synopsis, cmd->summary,
		cmd->options ? cmd->options : "");
}

bool xrl_cmd_common_opt(const struct xrl_cmd *cmd, struct xrl_cli *cli,
			int opt, int *exit_code)
{
	switch (opt) {
	case 'h':
		xrl_cmd_help(cmd, cli, stdout);
		*exit_code = EXIT_SUCCESS;
		return true;
	case 'P':
		cli->pin_dir = optarg;
		return true;
	case 'v':
		cli->verbose = true;
		xrl_log_set_level(XRL_LOG_DEBUG);
		return true;
	case '?':
		fprintf(stderr, "try '%s %s --help'\n", cli->prog, cmd->name);
		*exit_code = EXIT_FAILURE;
		return true;
	default:
		return false;
	}
}

void xrl_cmd_error(const struct xrl_cli *cli, const struct xrl_cmd *cmd,
		   const char *fmt, ...)
{
	va_list args;

	fprintf(stderr, "%s %s: ", cli->prog, cmd->name);
	va_start(args, fmt);
	vfprintf(stderr, fmt, args);
	va_end(args);
	fputc('\n', stderr);
}

void xrl_cmd_usage(const struct xrl_cmd *const *table,
		   const struct xrl_cli *cli, FILE *out)
{
	size_t i;

	fprintf(out, "usage: %s [--pin-dir DIR] [-v] COMMAND [ARGS]\n\n"
		"commands:\n", cli->prog);
	for (i = 0; table[i]; i++)
		fprintf(out, "  %s %s\n      %s\n", table[i]->name,
			table[i]->synopsis, table[i]->summary);
	fprintf(out, "  help [COMMAND]\n      this help, or a command's\n"
		"\n'%s COMMAND --help' details each command.\n", cli->prog);
}

static const struct xrl_cmd *find_cmd(const struct xrl_cmd *const *table,
				      const char *name, int *matches)
{
	const struct xrl_cmd *found = NULL;
	size_t i, len = strlen(name);

	*matches = 0;
	for (i = 0; table[i]; i++) {
		if (!strcmp(table[i]->name, name)) {
			*matches = 1;
			return table[i];
		}
		if (!strncmp(table[i]->name, name, len)) {
			found = table[i];
			(*matches)++;
		}
	}
	return *matches == 1 ? found : NULL;
}

static int run_help(const struct xrl_cmd *const *table, struct xrl_cli *cli,
		    int argc, char **argv)
{
	const struct xrl_cmd *cmd;
	int matches;

	if (argc < 2) {
		xrl_cmd_usage(table, cli, stdout);
		return EXIT_SUCCESS;
	}
	cmd = find_cmd(table, argv[1], &matches);
	if (!cmd) {
		fprintf(stderr, "%s: no command '%s'\n", cli->prog, argv[1]);
		return EXIT_FAILURE;
	}
	xrl_cmd_help(cmd, cli, stdout);
	return EXIT_SUCCESS;
}

int xrl_cmd_dispatch(const struct xrl_cmd *const *table, struct xrl_cli *cli,
		     int argc, char **argv)
{
	const struct xrl_cmd *cmd;
	int matches;

	if (argc < 1) {
		xrl_cmd_usage(table, cli, stderr);
		return EXIT_FAILURE;
	}
	if (!strcmp(argv[0], "help"))
		return run_help(table, cli, argc, argv);
	cmd = find_cmd(table, argv[0], &matches);
	if (!cmd) {
		fprintf(stderr, "%s: %s command '%s'; try '%s help'\n",
			cli->prog, matches ? "ambiguous" : "no", argv[0],
			cli->prog);
		return EXIT_FAILURE;
	}
	optind = 0;	/* GNU getopt: start over for the command's options */
	return cmd->run(cmd, cli, argc, argv);
}
