/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * cmd.h - the commands of the xdp-ratelimit CLI, one struct xrl_cmd per
 * cmd_*.c file. A new command is one new file defining its struct and one
 * line in the table of user/cli/xdp-ratelimit.c.
 */
#ifndef XRL_CMD_H
#define XRL_CMD_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include "xrl.h"

/* Options every command takes besides its own (parsed before them too). */
struct xrl_cli {
	const char *prog;	/* argv[0] of the tool, for messages */
	const char *pin_dir;
	bool verbose;
};

struct xrl_cmd {
	const char *name;
	const char *synopsis;	/* arguments, after the command name */
	const char *summary;	/* one line */
	const char *options;	/* option lines for --help, or NULL */
	/* argv[0] is the command name. Returns EXIT_SUCCESS/EXIT_FAILURE. */
	int (*run)(const struct xrl_cmd *cmd, struct xrl_cli *cli, int argc,
		   char **argv);
};

/* Long options shared by every command: spread into each table. */
#define XRL_CMD_COMMON_LONGOPTS					\
	{ "help", no_argument, NULL, 'h' },			\
	{ "pin-dir", required_argument, NULL, 'P' },		\
	{ "verbose", no_argument, NULL, 'v' }
#define XRL_CMD_COMMON_SHORTOPTS "hv"
#define XRL_CMD_COMMON_HELP						\
	"  -P, --pin-dir DIR   pin directory (default " XRL_PIN_DIR ")\n" \
	"  -v, --verbose       show libbpf's messages\n"			\
	"  -h, --help          this help\n"

/*
 * Handles a common option returned by getopt_long: 'h' prints the help
 * and sets *@exit_code to EXIT_SUCCESS, '?' sets it to EXIT_FAILURE.
 * Returns true when it handled @opt (the command stops when *@exit_code
 * is set, i.e. >= 0).
 */
bool xrl_cmd_common_opt(const struct xrl_cmd *cmd, struct xrl_cli *cli,
			int opt, int *exit_code);

void xrl_cmd_help(const struct xrl_cmd *cmd, const struct xrl_cli *cli,
		  FILE *out);

/* Prints "PROG CMD: message" on stderr, one line. */
void xrl_cmd_error(const struct xrl_cli *cli, const struct xrl_cmd *cmd,
		   const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * Runs the command of @table (NULL-terminated) named by argv[0]; a unique
 * prefix is enough ("st" is ambiguous, "sta" is status). "help [CMD]"
 * is built in. Returns EXIT_SUCCESS/EXIT_FAILURE.
 */
int xrl_cmd_dispatch(const struct xrl_cmd *const *table, struct xrl_cli *cli,
		     int argc, char **argv);

/* The full usage of the tool: every command's synopsis and summary. */
void xrl_cmd_usage(const struct xrl_cmd *const *table,
		   const struct xrl_cli *cli, FILE *out);

extern const struct xrl_cmd xrl_cmd_attach;
extern const struct xrl_cmd xrl_cmd_detach;
extern const struct xrl_cmd xrl_cmd_status;
extern const struct xrl_cmd xrl_cmd_stats;
extern const struct xrl_cmd xrl_cmd_rule;
extern const struct xrl_cmd xrl_cmd_reload;
extern const struct xrl_cmd xrl_cmd_top;
extern const struct xrl_cmd xrl_cmd_events;

#endif
