// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "cmd.h"
#include "datapath.h"
#include "env.h"
#include "loader.h"
#include "log.h"
#include "pin.h"

/* Options every command takes, and the tool before any command. */
static const struct xrl_opt common_opts[] = {
	XRL_OPT("pin-dir", 'P', "DIR",
		"pin directory (default " XRL_PIN_DIR ", or $" XRL_ENV_PIN_DIR
		")"),
	XRL_OPT("socket", 'S', "PATH",
		"the daemon's socket (default " XRL_SOCKET_PATH ", or $"
		XRL_ENV_SOCKET ")"),
	XRL_OPT("verbose", 'v', NULL, "show libbpf's messages"),
	XRL_OPT("help", 'h', NULL, "this help"),
	{}
};

#define OPT_VERSION	XRL_OPT_LONG

/* What the tool takes before a command: the common options, and: */
static const struct xrl_opt tool_opts[] = {
	XRL_OPT("version", OPT_VERSION, NULL, "the version"),
	{}
};

const struct xrl_opt *const xrl_cli_global_opts[] = {
	common_opts, tool_opts, NULL
};

void xrl_cmd_help(const struct xrl_cmd *cmd, const struct xrl_cli *cli,
		  FILE *out)
{
	const struct xrl_opt *tables[] = { cmd->opts, common_opts, NULL };

	fprintf(out, "usage: %s %s %s\n%s\n\noptions:\n", cli->prog,
		cmd->name, cmd->synopsis, cmd->summary);
	xrl_opts_print(out, cmd->opts ? tables : tables + 1);
}

/* 0 for a common option handled, 1 for one that ends the run (help),
 * -1 for none of them. */
static int common_opt(struct xrl_cli *cli, int opt)
{
	switch (opt) {
	case 'P':
		cli->pin_dir = optarg;
		return 0;
	case 'S':
		cli->socket = optarg;
		return 0;
	case 'v':
		cli->verbose = true;
		xrl_log_set_level(XRL_LOG_DEBUG);
		return 0;
	case 'h':
		return 1;
	default:
		return -1;
	}
}

/* One line for what getopt refused (its own message is off). */
static void bad_option(const struct xrl_cli *cli, const char *cmd,
		       char **argv, int opt)
{
	char what[80];

	if (optopt && optopt < XRL_OPT_LONG)
		snprintf(what, sizeof(what), "-%c", optopt);
	else
		snprintf(what, sizeof(what), "%s", argv[optind - 1]);
	fprintf(stderr, "%s: %s%s%s %s; try '%s%s%s --help'\n", cli->prog,
		cmd ? cmd : "", cmd ? ": " : "", what,
		opt == ':' ? "needs an argument" : "is not an option",
		cli->prog, cmd ? " " : "", cmd ? cmd : "");
}

int xrl_cmd_next_opt(const struct xrl_cmd *cmd, struct xrl_cli *cli,
		     int argc, char **argv, int *exit_code)
{
	const struct xrl_opt *tables[] = { cmd->opts, common_opts, NULL };
	struct option longs[XRL_OPTS_MAX + 1];
	char shorts[2 * XRL_OPTS_MAX + 2];
	int opt;

	/* No "+" for a command: options may follow its arguments; ":"
	 * tells a missing argument from an unknown option. */
	if (xrl_opts_getopt(cmd->opts ? tables : tables + 1, ":", shorts,
			    sizeof(shorts), longs, XRL_OPTS_MAX + 1)) {
		*exit_code = EXIT_FAILURE;
		return -1;
	}
	opterr = 0;
	while ((opt = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		switch (common_opt(cli, opt)) {
		case 0:
			continue;
		case 1:
			xrl_cmd_help(cmd, cli, stdout);
			*exit_code = EXIT_SUCCESS;
			return -1;
		}
		if (opt == '?' || opt == ':') {
			bad_option(cli, cmd->name, argv, opt);
			*exit_code = EXIT_FAILURE;
			return -1;
		}
		return opt;
	}
	return -1;
}

const char *xrl_cmd_one_arg(const struct xrl_cmd *cmd, struct xrl_cli *cli,
			    int argc, char **argv, int *exit_code)
{
	*exit_code = -1;
	while (xrl_cmd_next_opt(cmd, cli, argc, argv, exit_code) != -1)
		;
	if (*exit_code >= 0)
		return NULL;
	if (optind != argc - 1) {
		xrl_cmd_error(cli, cmd, "expects one %s; try '%s %s --help'",
			      cmd->synopsis, cli->prog, cmd->name);
		*exit_code = EXIT_FAILURE;
		return NULL;
	}
	return argv[optind];
}

void xrl_cmd_error(const struct xrl_cli *cli, const struct xrl_cmd *cmd,
		   const char *fmt, ...)
{
	va_list args;

	fprintf(stderr, "%s: %s: ", cli->prog, cmd->name);
	va_start(args, fmt);
	vfprintf(stderr, fmt, args);
	va_end(args);
	fputc('\n', stderr);
}

void xrl_cmd_usage(const struct xrl_cmd *const *table,
		   const struct xrl_cli *cli, FILE *out)
{
	size_t i;

	fprintf(out, "usage: %s [OPTIONS] COMMAND [ARGS]\n\ncommands:\n",
		cli->prog);
	for (i = 0; table[i]; i++)
		fprintf(out, "  %s %s\n      %s\n", table[i]->name,
			table[i]->synopsis, table[i]->summary);
	fprintf(out, "  help [COMMAND]\n      this help, or a command's\n"
		"\noptions (also after any command):\n");
	xrl_opts_print(out, xrl_cli_global_opts);
	fprintf(out, "\nA command (and rule's add, del, list, revert) may be shortened "
		"to a unique prefix\n('det' is detach, 'rule ad' is rule add, "
		"'st' is ambiguous).\n'%s COMMAND --help' details each "
		"command.\n", cli->prog);
}

int xrl_cmd_global_opts(const struct xrl_cmd *const *table,
			struct xrl_cli *cli, int argc, char **argv,
			int *exit_code)
{
	struct option longs[XRL_OPTS_MAX + 1];
	char shorts[2 * XRL_OPTS_MAX + 2];
	int opt;

	/* "+": the tool stops at the command name. */
	xrl_opts_getopt(xrl_cli_global_opts, "+", shorts, sizeof(shorts), longs,
			XRL_OPTS_MAX + 1);
	opterr = 0;
	while ((opt = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		switch (common_opt(cli, opt)) {
		case 0:
			continue;
		case 1:
			xrl_cmd_usage(table, cli, stdout);
			*exit_code = EXIT_SUCCESS;
			return -1;
		}
		if (opt == OPT_VERSION) {
			printf("%s %s\n", cli->prog, XRL_VERSION);
			*exit_code = EXIT_SUCCESS;
			return -1;
		}
		bad_option(cli, NULL, argv, opt);
		*exit_code = EXIT_FAILURE;
		return -1;
	}
	return optind;
}

int xrl_prefix_match(const char *const *names, const char *word,
		     char *candidates, size_t len)
{
	size_t i, n = strlen(word), used = 0;
	int found = -1, matches = 0;

	if (candidates && len)
		candidates[0] = '\0';
	for (i = 0; names[i]; i++) {
		if (!strcmp(names[i], word))
			return i;
		if (strncmp(names[i], word, n))
			continue;
		found = i;
		matches++;
		if (candidates && used < len)
			used += snprintf(candidates + used, len - used, "%s%s",
					 used ? ", " : "", names[i]);
	}
	if (matches > 1)
		return XRL_PREFIX_AMBIGUOUS;
	return matches ? found : XRL_PREFIX_NONE;
}

/* The command @name names, or NULL with one line said why. */
static const struct xrl_cmd *find_cmd(const struct xrl_cmd *const *table,
				      const struct xrl_cli *cli,
				      const char *name, const char *context)
{
	const char *names[XRL_CMDS_MAX + 1];
	char candidates[256];
	size_t i;
	int found;

	for (i = 0; table[i] && i < XRL_CMDS_MAX; i++)
		names[i] = table[i]->name;
	names[i] = NULL;
	found = xrl_prefix_match(names, name, candidates, sizeof(candidates));
	if (found >= 0)
		return table[found];
	if (found == XRL_PREFIX_AMBIGUOUS)
		fprintf(stderr, "%s: %sambiguous command '%s' (%s); try '%s "
			"help'\n", cli->prog, context, name, candidates,
			cli->prog);
	else
		fprintf(stderr, "%s: %sno command '%s'; try '%s help'\n",
			cli->prog, context, name, cli->prog);
	return NULL;
}

static int run_help(const struct xrl_cmd *const *table, struct xrl_cli *cli,
		    int argc, char **argv)
{
	const struct xrl_cmd *cmd;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		xrl_cmd_usage(table, cli, stdout);
		return EXIT_SUCCESS;
	}
	cmd = find_cmd(table, cli, argv[1], "help: ");
	if (!cmd)
		return EXIT_FAILURE;
	xrl_cmd_help(cmd, cli, stdout);
	return EXIT_SUCCESS;
}

int xrl_cmd_dispatch(const struct xrl_cmd *const *table, struct xrl_cli *cli,
		     int argc, char **argv)
{
	const struct xrl_cmd *cmd;

	if (argc < 1) {
		xrl_cmd_usage(table, cli, stderr);
		return EXIT_FAILURE;
	}
	if (!strcmp(argv[0], "help"))
		return run_help(table, cli, argc, argv);
	cmd = find_cmd(table, cli, argv[0], "");
	if (!cmd)
		return EXIT_FAILURE;
	optind = 0;	/* GNU getopt: start over for the command's options */
	return cmd->run(cmd, cli, argc, argv);
}

bool xrl_cmd_pins_unseen(const struct xrl_cmd *cmd,
			 const struct xrl_cli *cli)
{
	char err[512];
	int ret;

	ret = xrl_pin_dir_check(cli->pin_dir, err, sizeof(err));
	if (ret != -EXDEV)
		return false;
	xrl_cmd_error(cli, cmd, "%s", err);
	return true;
}

int xrl_cmd_open_pins(const struct xrl_cmd *cmd, const struct xrl_cli *cli,
		      struct xrl_datapath *dp)
{
	char err[256];
	int ret;

	if (xrl_check_privileges(false, err, sizeof(err))) {
		xrl_cmd_error(cli, cmd, "%s", err);
		return -EPERM;
	}
	ret = xrl_datapath_open_pinned(dp, cli->pin_dir);
	if (ret == -ENOENT && xrl_cmd_pins_unseen(cmd, cli))
		return ret;
	if (ret == -ENOENT)
		xrl_cmd_error(cli, cmd, "xdp-ratelimit is not loaded (nothing "
			      "pinned in %s)", cli->pin_dir);
	else if (ret)
		xrl_cmd_error(cli, cmd, "opening the pins in %s: %s",
			      cli->pin_dir, strerror(-ret));
	return ret;
}
