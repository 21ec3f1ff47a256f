/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * cmd.h - the commands of the xdp-ratelimit CLI, one struct xrl_cmd per
 * cmd_*.c file. A new command is one new file defining its struct and one
 * line in the table of user/cli/commands.c.
 */
#ifndef XRL_CMD_H
#define XRL_CMD_H

#include <stdbool.h>
#include <stdio.h>
#include "options.h"
#include "xrl.h"

/* Options every command takes besides its own (parsed before them too). */
struct xrl_cli {
	const char *prog;	/* argv[0] of the tool, for messages */
	const char *pin_dir;	/* -P, $XDP_RATELIMIT_PIN_DIR, XRL_PIN_DIR */
	const char *socket;	/* -S, $XDP_RATELIMIT_SOCKET, XRL_SOCKET_PATH */
	bool verbose;
};

struct xrl_cmd {
	const char *name;
	const char *synopsis;	/* arguments, after the command name */
	const char *summary;	/* one line */
	const struct xrl_opt *opts;	/* its own options (options.h), or NULL */
	/* argv[0] is the command name. Returns EXIT_SUCCESS/EXIT_FAILURE. */
	int (*run)(const struct xrl_cmd *cmd, struct xrl_cli *cli, int argc,
		   char **argv);
};

/*
 * The next option of @cmd in @argv (getopt_long over its table and the
 * common one): the common ones (-P, -S, -v, -h) are handled here, the
 * command's returned by key. -1 at the end, or when the command must stop
 * (help printed, a bad option): then *@exit_code is set (>= 0).
 */
int xrl_cmd_next_opt(const struct xrl_cmd *cmd, struct xrl_cli *cli,
		     int argc, char **argv, int *exit_code);

/*
 * The one argument of a command that takes one and only common options,
 * or NULL with *@exit_code set (help printed, a bad option, not one).
 */
const char *xrl_cmd_one_arg(const struct xrl_cmd *cmd, struct xrl_cli *cli,
			    int argc, char **argv, int *exit_code);

void xrl_cmd_help(const struct xrl_cmd *cmd, const struct xrl_cli *cli,
		  FILE *out);

/* The options of the tool before a command (and after any, but
 * --version): a NULL-ended list of tables. */
extern const struct xrl_opt *const xrl_cli_global_opts[];

struct xrl_datapath;

/*
 * Opens the data path pinned in the CLI's pin directory for reading
 * (readers take no lock: every value they read is read atomically).
 * 0, or -errno with the reason printed as the command's error.
 */
int xrl_cmd_open_pins(const struct xrl_cmd *cmd, const struct xrl_cli *cli,
		      struct xrl_datapath *dp);

/*
 * When nothing is pinned in the CLI's pin directory: whether that is
 * because the host's pins cannot be seen from here (a mount namespace of
 * its own, as `ip netns exec` makes), then with one line printed saying
 * why and what to do, rather than "not loaded".
 */
bool xrl_cmd_pins_unseen(const struct xrl_cmd *cmd,
			 const struct xrl_cli *cli);

/* Prints "PROG: CMD: message" on stderr, one line. */
void xrl_cmd_error(const struct xrl_cli *cli, const struct xrl_cmd *cmd,
		   const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * The tool's own options before the command: the common ones and
 * --version. Returns the index of the command in @argv, or -1 with
 * *@exit_code set.
 */
int xrl_cmd_global_opts(const struct xrl_cmd *const *table,
			struct xrl_cli *cli, int argc, char **argv,
			int *exit_code);

/*
 * Runs the command of @table (NULL-terminated) named by argv[0]; a unique
 * prefix is enough ("st" is ambiguous, "sta" is status). "help [CMD]"
 * is built in. Returns EXIT_SUCCESS/EXIT_FAILURE.
 */
int xrl_cmd_dispatch(const struct xrl_cmd *const *table, struct xrl_cli *cli,
		     int argc, char **argv);

#define XRL_CMDS_MAX		32	/* commands in a table */
#define XRL_PREFIX_NONE		(-1)
#define XRL_PREFIX_AMBIGUOUS	(-2)

/*
 * The index of the entry of @names (NULL-ended) that @word names: itself,
 * or a prefix of that entry only ("det" is detach). XRL_PREFIX_NONE, or
 * XRL_PREFIX_AMBIGUOUS with the entries it begins, ", "-separated, in
 * @candidates (when not NULL). Commands and subcommands ("rule ad") both.
 */
int xrl_prefix_match(const char *const *names, const char *word,
		     char *candidates, size_t len);

/* The full usage of the tool: every command's synopsis and summary. */
void xrl_cmd_usage(const struct xrl_cmd *const *table,
		   const struct xrl_cli *cli, FILE *out);

/* Every command, NULL-ended (commands.c). */
extern const struct xrl_cmd *const xrl_commands[];

extern const struct xrl_cmd xrl_cmd_attach;
extern const struct xrl_cmd xrl_cmd_detach;
extern const struct xrl_cmd xrl_cmd_cleanup;
extern const struct xrl_cmd xrl_cmd_status;
extern const struct xrl_cmd xrl_cmd_stats;
extern const struct xrl_cmd xrl_cmd_rule;
extern const struct xrl_cmd xrl_cmd_reload;
extern const struct xrl_cmd xrl_cmd_top;
extern const struct xrl_cmd xrl_cmd_events;
extern const struct xrl_cmd xrl_cmd_capture;
extern const struct xrl_cmd xrl_cmd_check;
extern const struct xrl_cmd xrl_cmd_explain;
extern const struct xrl_cmd xrl_cmd_reset;
extern const struct xrl_cmd xrl_cmd_daemon;
extern const struct xrl_cmd xrl_cmd_ban;
extern const struct xrl_cmd xrl_cmd_unban;
extern const struct xrl_cmd xrl_cmd_blocklist;
extern const struct xrl_cmd xrl_cmd_bans;

#endif
