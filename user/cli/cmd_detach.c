// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* xdp-ratelimit detach IFACE: the last detach removes every pin. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "attach.h"
#include "cmd.h"
#include "env.h"
#include "loader.h"
#include "owner.h"
#include "pin.h"

/*
 * The last detach removes the pins; under a daemon that uses them it
 * would keep answering "ok" to changes nothing enforces. -EBUSY then.
 * The daemon is found by its owner record, whatever its socket.
 */
static int check_daemon(const struct xrl_pin_dir *dir, const char *ifname,
			char *err, size_t len)
{
	char socket[PATH_MAX];
	pid_t pid;

	if (xrl_pin_count_links(dir->path) != 1 ||
	    !xrl_pin_has_iface(dir->path, ifname))
		return 0;
	if (xrl_owner_find(dir->path, &pid, socket, sizeof(socket)) != 1)
		return 0;
	snprintf(err, len, "%s is the last interface, and xdp-ratelimitd "
		 "(pid %d, socket %.200s) runs on these pins: the last detach "
		 "would remove them from under it; stop the daemon first",
		 ifname, (int)pid, socket);
	return -EBUSY;
}

static int run_detach(const struct xrl_cmd *cmd, struct xrl_cli *cli,
		      int argc, char **argv)
{
	struct xrl_pin_dir dir;
	int opt, ret, exit_code = -1;
	const char *ifname;
	char err[PATH_MAX + 256];

	while ((opt = xrl_cmd_next_opt(cmd, cli, argc, argv,
				       &exit_code)) != -1)
		;
	if (exit_code >= 0)
		return exit_code;
	if (optind != argc - 1) {
		xrl_cmd_error(cli, cmd, "expects one interface name; try "
			      "'%s detach --help'", cli->prog);
		return EXIT_FAILURE;
	}
	ifname = argv[optind];
	if (xrl_check_privileges(true, err, sizeof(err)))
		goto fail;
	ret = xrl_pin_dir_open(&dir, cli->pin_dir, false, err, sizeof(err));
	if (ret == -ENOENT)
		snprintf(err, sizeof(err), "%s: xdp-ratelimit is not attached "
			 "(nothing pinned in %s)", ifname, cli->pin_dir);
	if (ret)
		goto fail;
	ret = check_daemon(&dir, ifname, err, sizeof(err));
	if (!ret)
		ret = xrl_detach(dir.path, ifname, err, sizeof(err));
	if (!ret)
		ret = xrl_pin_remove_if_unused(dir.path, err, sizeof(err));
	if (ret > 0)
		ret = 0;
	xrl_pin_dir_close(&dir);
	if (ret)
		goto fail;
	printf("%s: detached\n", ifname);
	return EXIT_SUCCESS;

fail:
	xrl_cmd_error(cli, cmd, "%s", err);
	return EXIT_FAILURE;
}

const struct xrl_cmd xrl_cmd_detach = {
	.name = "detach",
	.synopsis = "IFACE",
	.summary = "Detach the rate limiter from IFACE (the other programs of "
		   "libxdp's dispatcher keep running); the last detach "
		   "removes every pin.",
	.run = run_detach,
};
