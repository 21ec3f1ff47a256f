// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-ratelimit cleanup [--check]: removes the pins nothing uses (what a
 * killed start or a daemon killed with --detach-on-exit leaves), never
 * while an interface is attached from them or a daemon runs on them.
 * --check says which it is and changes nothing: it exits 0 only when
 * nothing is pinned (make uninstall asks it).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd.h"
#include "env.h"
#include "loader.h"
#include "owner.h"
#include "pin.h"

static const struct xrl_opt cleanup_opts[] = {
	XRL_OPT("check", 'c', NULL,
		"say what is pinned and what uses it; change nothing (exit 0 "
		"only when nothing is)"),
	{}
};

struct iface_list {
	char names[512];
	size_t n;
};

static int add_iface(const char *ifname, void *ctx)
{
	struct iface_list *list = ctx;
	size_t used = strlen(list->names);

	snprintf(list->names + used, sizeof(list->names) - used, "%s%s",
		 list->n ? ", " : "", ifname);
	list->n++;
	return 0;
}

/* Whether the pins of @dir are in use, then with @why saying by what and
 * what to do. */
static bool pins_in_use(const char *dir, char *why, size_t len)
{
	struct iface_list list = {};
	char socket[PATH_MAX];
	pid_t pid;

	xrl_pin_for_each_link(dir, add_iface, &list);
	if (list.n) {
		snprintf(why, len, "attached to %s: detach %s first",
			 list.names, list.n > 1 ? "them" : "it");
		return true;
	}
	if (xrl_owner_find(dir, &pid, socket, sizeof(socket)) == 1) {
		snprintf(why, len, "xdp-ratelimitd (pid %d, socket %.200s) "
			 "runs on these pins: stop it first", (int)pid,
			 socket);
		return true;
	}
	return false;
}

/* Under the pin directory's lock: what --check says, or the removal. */
static int clean(const struct xrl_cmd *cmd, const struct xrl_cli *cli,
		 const char *dir, bool check)
{
	char why[PATH_MAX + 128];
	int ret;

	if (!xrl_datapath_pinned(dir)) {
		printf("nothing pinned in %s\n", dir);
		return EXIT_SUCCESS;
	}
	if (pins_in_use(dir, why, sizeof(why))) {
		xrl_cmd_error(cli, cmd, "%s: %s", dir, why);
		return EXIT_FAILURE;
	}
	if (check) {
		xrl_cmd_error(cli, cmd, "%s: pinned, attached nowhere, no "
			      "daemon on it: 'xdp-ratelimit cleanup' removes "
			      "them", dir);
		return EXIT_FAILURE;
	}
	ret = xrl_pin_remove_if_unused(dir, why, sizeof(why));
	if (ret < 0) {
		xrl_cmd_error(cli, cmd, "%s", why);
		return EXIT_FAILURE;
	}
	printf("removed the pins in %s\n", dir);
	return EXIT_SUCCESS;
}

static int run_cleanup(const struct xrl_cmd *cmd, struct xrl_cli *cli,
		       int argc, char **argv)
{
	int opt, ret, exit_code = -1;
	struct xrl_pin_dir dir;
	char err[PATH_MAX + 256];
	bool check = false;

	while ((opt = xrl_cmd_next_opt(cmd, cli, argc, argv,
				       &exit_code)) != -1)
		check = check || opt == 'c';
	if (exit_code >= 0)
		return exit_code;
	if (optind != argc) {
		xrl_cmd_error(cli, cmd, "takes no arguments; try '%s cleanup "
			      "--help'", cli->prog);
		return EXIT_FAILURE;
	}
	if (xrl_check_privileges(false, err, sizeof(err))) {
		xrl_cmd_error(cli, cmd, "%s", err);
		return EXIT_FAILURE;
	}
	ret = xrl_pin_dir_open(&dir, cli->pin_dir, false, err, sizeof(err));
	if (ret == -ENOENT) {
		printf("nothing pinned in %s\n", cli->pin_dir);
		return EXIT_SUCCESS;
	}
	if (ret) {
		xrl_cmd_error(cli, cmd, "%s", err);
		return EXIT_FAILURE;
	}
	exit_code = clean(cmd, cli, dir.path, check);
	xrl_pin_dir_close(&dir);
	return exit_code;
}

const struct xrl_cmd xrl_cmd_cleanup = {
	.name = "cleanup",
	.synopsis = "[--check]",
	.summary = "Remove the pins nothing uses (no interface attached from "
		   "them, no daemon on them); --check only says.",
	.opts = cleanup_opts,
	.run = run_cleanup,
};
