// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * daemon_opts.c - xdp-ratelimitd's options (daemon_opts.h).
 */
#include <errno.h>
#include <grp.h>
#include <stdlib.h>
#include <string.h>
#include "budget.h"
#include "daemon_opts.h"
#include "dispatcher.h"
#include "memory.h"
#include "global.h"
#include "log.h"
#include "metrics_http.h"
#include "policy_read.h"
#include "units.h"
#include "xrl.h"

enum {
	OPT_STATE = XRL_OPT_LONG,
	OPT_IDLE,
	OPT_DETACH,
	OPT_VERSION,
	OPT_SYNC_INTERVAL,
	OPT_REDIS,
	OPT_NODE,
	OPT_METRICS,
	OPT_PRIORITY,
	OPT_MEMORY_LIMIT,
};

/* The defaults the help states. */
_Static_assert(XRL_IDLE_TIMEOUT_MS == 30000, "--idle-timeout's help");
_Static_assert(XRL_SYNC_INTERVAL_MS == 100, "--sync-interval's help");
_Static_assert(XRL_DEFAULT_PRIORITY == 5 && XRL_PRIORITY_MAX == 1000,
	       "--priority's help");

static const struct xrl_opt daemon_opts[] = {
	XRL_OPT("config", 'c', "FILE",
		"policy file (default " XRL_DAEMON_CONFIG ")"),
	XRL_OPT("socket", 'S', "PATH",
		"control socket (default " XRL_SOCKET_PATH ", or $"
		XRL_ENV_SOCKET ")"),
	XRL_OPT("socket-group", 'g', "NAME",
		"also let this group use the socket"),
	XRL_OPT("iface", 'i', "IFACE",
		"attach to IFACE (repeatable; adds to the file's "
		"\"interfaces:\")"),
	XRL_OPT("pin-dir", 'P', "DIR",
		"bpffs pin directory (default " XRL_PIN_DIR ", or $"
		XRL_ENV_PIN_DIR ")"),
	XRL_OPT("priority", OPT_PRIORITY, "N",
		"place among the programs of libxdp's dispatcher, lower "
		"first (default 5, 0-1000)"),
	XRL_OPT("memory-limit", OPT_MEMORY_LIMIT, "SIZE",
		XRL_MEMORY_LIMIT_HELP),
	XRL_OPT("state", OPT_STATE, "FILE",
		"copy of the applied policy, the other state files beside "
		"it (default " XRL_STATE_DIR "/" XRL_STATE_FILE_NAME ", or in "
		"$" XRL_ENV_STATE_DIR ")"),
	XRL_OPT("idle-timeout", OPT_IDLE, "SECS",
		"drop clients silent this long (default 30)"),
	XRL_OPT("redis", OPT_REDIS, "HOST:PORT",
		"share global budgets through this Redis (default: redis: of "
		"the config, or none)"),
	XRL_OPT("node", OPT_NODE, "NAME",
		"this node's name in Redis (default: hostname)"),
	XRL_OPT("sync-interval", OPT_SYNC_INTERVAL, "MS",
		"re-split aggregate budgets this often (default: "
		"sync_interval: of the config, or 100)"),
	XRL_OPT("foreground", 'f', NULL, "stay in the foreground (the default)"),
	XRL_OPT("metrics", OPT_METRICS, "ADDR:PORT",
		"serve Prometheus metrics on /metrics there (127.0.0.1:9101, "
		"[::1]:9101; default: metrics: of the config, or off)"),
	XRL_OPT("detach-on-exit", OPT_DETACH, NULL,
		"detach the interfaces on SIGTERM/SIGINT, and remove the pins "
		"when nothing else is attached from them (default: leave the "
		"program enforcing)"),
	XRL_OPT("verbose", 'v', NULL, "debug log lines"),
	XRL_OPT("help", 'h', NULL, "this text"),
	XRL_OPT("version", OPT_VERSION, NULL, "the version"),
	{}
};

const struct xrl_opt *const xrl_daemon_options[] = { daemon_opts, NULL };

void xrl_daemon_usage(FILE *out)
{
	fprintf(out, "Usage: xdp-ratelimitd [OPTIONS]\n"
		"Keeps the policy of the XDP rate limiter and serves its "
		"control socket.\n\n");
	xrl_opts_print(out, xrl_daemon_options);
}

static int socket_group(struct xrl_daemon_opts *opts, const char *name)
{
	struct group *group = getgrnam(name);

	if (!group) {
		pr_err("--socket-group: no group \"%s\"", name);
		return -EINVAL;
	}
	opts->server.has_group = true;
	opts->server.group = group->gr_gid;
	opts->server.group_name = name;
	return 0;
}

static int iface(struct xrl_daemon_opts *opts, char *name)
{
	if (opts->n_ifaces == XRL_MAX_IFACES) {
		pr_err("--iface: at most %d interfaces", XRL_MAX_IFACES);
		return -EINVAL;
	}
	opts->ifaces[opts->n_ifaces++] = name;
	return 0;
}

static int idle_timeout(struct xrl_daemon_opts *opts, const char *text)
{
	char *end;
	long secs = strtol(text, &end, 10);

	if (*end || secs < 1 || secs > 86400) {
		pr_err("--idle-timeout: \"%s\" is not a number of seconds from "
		       "1 to 86400", text);
		return -EINVAL;
	}
	opts->server.idle_timeout_ms = secs * 1000;
	return 0;
}

static int redis(struct xrl_daemon_opts *opts, const char *text)
{
	char host[256];
	uint16_t port;

	if (xrl_hostport_parse(text, host, sizeof(host), &port)) {
		pr_err("--redis: \"%s\" is not HOST:PORT", text);
		return -EINVAL;
	}
	opts->redis = text;
	return 0;
}

static int node(struct xrl_daemon_opts *opts, const char *text)
{
	if (!text[0] || strlen(text) >= XRL_NODE_NAME_MAX) {
		pr_err("--node: 1 to %d characters", XRL_NODE_NAME_MAX - 1);
		return -EINVAL;
	}
	opts->node = text;
	return 0;
}

static int sync_interval(struct xrl_daemon_opts *opts, const char *text)
{
	if (xrl_duration_ms_parse(text, &opts->sync_interval_ms) ||
	    opts->sync_interval_ms < XRL_SYNC_INTERVAL_MIN_MS ||
	    opts->sync_interval_ms > XRL_SYNC_INTERVAL_MAX_MS) {
		pr_err("--sync-interval: \"%s\" is not %dms to %ds", text,
		       XRL_SYNC_INTERVAL_MIN_MS,
		       XRL_SYNC_INTERVAL_MAX_MS / 1000);
		return -EINVAL;
	}
	return 0;
}

static int priority(struct xrl_daemon_opts *opts, const char *text)
{
	if (xrl_priority_parse(text, &opts->priority)) {
		pr_err("--priority: \"%s\" is not a number from 0 to %d",
		       text, XRL_PRIORITY_MAX);
		return -EINVAL;
	}
	return 0;
}

static int memory_limit(struct xrl_daemon_opts *opts, const char *text)
{
	if (xrl_memory_limit_parse(text, &opts->memory_limit)) {
		pr_err("--memory-limit: \"%s\" is not a size (512M, 2G) or a "
		       "share of memory (25%%)", text);
		return -EINVAL;
	}
	return 0;
}

static int metrics(struct xrl_daemon_opts *opts, const char *text)
{
	char why[512];

	if (xrl_metrics_listen_check(text, why, sizeof(why))) {
		pr_err("%s", why);
		return -EINVAL;
	}
	opts->metrics = text;
	return 0;
}

/* One option: 0, 1 to exit successfully, or -EINVAL. */
static int take(struct xrl_daemon_opts *opts, int key, char *arg)
{
	switch (key) {
	case 'c':
		opts->config_path = arg;
		return 0;
	case 'S':
		opts->socket_path = arg;
		return 0;
	case 'g':
		return socket_group(opts, arg);
	case 'i':
		return iface(opts, arg);
	case 'P':
		opts->pin_dir = arg;
		return 0;
	case OPT_STATE:
		opts->state_path = arg;
		return 0;
	case OPT_IDLE:
		return idle_timeout(opts, arg);
	case OPT_REDIS:
		return redis(opts, arg);
	case OPT_NODE:
		return node(opts, arg);
	case OPT_SYNC_INTERVAL:
		return sync_interval(opts, arg);
	case 'f':
		return 0;
	case OPT_DETACH:
		opts->detach_on_exit = true;
		return 0;
	case OPT_METRICS:
		return metrics(opts, arg);
	case OPT_PRIORITY:
		return priority(opts, arg);
	case OPT_MEMORY_LIMIT:
		return memory_limit(opts, arg);
	case 'v':
		xrl_log_set_level(XRL_LOG_DEBUG);
		return 0;
	case 'h':
		xrl_daemon_usage(stdout);
		return 1;
	case OPT_VERSION:
		printf("xdp-ratelimitd %s\n", XRL_VERSION);
		return 1;
	default:
		xrl_daemon_usage(stderr);
		return -EINVAL;
	}
}

int xrl_daemon_parse_options(int argc, char **argv,
			     struct xrl_daemon_opts *opts)
{
	struct option longs[XRL_OPTS_MAX + 1];
	char shorts[2 * XRL_OPTS_MAX + 2];
	int key, ret;

	ret = xrl_opts_getopt(xrl_daemon_options, "", shorts, sizeof(shorts),
			      longs, XRL_OPTS_MAX + 1);
	if (ret)
		return ret;
	while ((key = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		ret = take(opts, key, optarg);
		if (ret)
			return ret;
	}
	if (optind < argc) {
		pr_err("unexpected argument \"%s\"", argv[optind]);
		return -EINVAL;
	}
	return 0;
}
