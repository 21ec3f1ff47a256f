/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * daemon_opts.h - xdp-ratelimitd's options: one table (options.h, the
 * CLI's machinery), from which its parser, its --help, its man page's
 * list and the completion's words all come.
 */
#ifndef XRL_DAEMON_OPTS_H
#define XRL_DAEMON_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include <stdio.h>
#include "config.h"
#include "options.h"
#include "server.h"

#define XRL_DAEMON_CONFIG	"/etc/xdp-ratelimit/policy.yaml"
#define XRL_STATE_FILE_NAME	"policy.applied.yaml"
/* Where the state files live: kept across reboots, unlike the socket's
 * /run. The environment's replaces it (the tests use theirs). */
#define XRL_STATE_DIR		"/var/lib/xdp-ratelimit"
#define XRL_ENV_STATE_DIR	"XDP_RATELIMIT_STATE_DIR"

struct xrl_daemon_opts {
	const char *config_path;
	const char *socket_path;
	const char *state_path;
	const char *overlay_path;	/* beside the state file */
	const char *bans_path;		/* beside it too (manual_bans.h) */
	const char *pin_dir;
	char *ifaces[XRL_MAX_IFACES];
	size_t n_ifaces;
	size_t n_cli_ifaces;		/* of --iface; the file's follow */
	bool attached_now[XRL_MAX_IFACES];	/* by this start */
	bool detach_on_exit;
	unsigned priority;		/* in libxdp's dispatcher */
	__u64 memory_limit;		/* of the maps it loads; 0: any */
	uint64_t sync_interval_ms;	/* 0: the config's, or the default */
	const char *redis;		/* HOST:PORT, or NULL: the config's */
	const char *node;		/* NULL: the hostname */
	const char *metrics;	/* ADDR:PORT of /metrics, or NULL: none */
	struct xrl_server_opts server;
};

/* The daemon's options, a NULL-ended list of tables (options.h). */
extern const struct xrl_opt *const xrl_daemon_options[];

/* "Usage: ...", what it does, and the options. */
void xrl_daemon_usage(FILE *out);

/*
 * Parses @argv into @opts (holding the defaults). 0, 1 to exit
 * successfully (--help, --version printed), or -EINVAL with the reason
 * logged.
 */
int xrl_daemon_parse_options(int argc, char **argv,
			     struct xrl_daemon_opts *opts);

#endif
