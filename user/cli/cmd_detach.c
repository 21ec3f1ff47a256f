// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* xdp-ratelimit detach IFACE: the last detach removes every pin. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "attach.h"
#include "cmd.h"
#include "env.h"
#include "pin.h"

static int remove_pins_if_unused(const char *pin_dir, char *err, size_t len)
{
	struct xrl_datapath dp;
	int ret;

	if (xrl_pin_count_links(pin_dir) != 0)
		return 0;
	ret = xrl_datapath_open_pinned(&dp, pin_dir);
	if (ret == -ENOENT)
		return 0;
	if (!ret)
		ret = xrl_datapath_unpin(&dp);
	xrl_datapath_close(&dp);
	if (ret)
		snprintf(err, len, "removing the pins in %s: %s", pin_dir,
			 strerror(-ret));
	return ret;
}

static int run_detach(const struct xrl_cmd *cmd, struct xrl_cli *cli,
		      int argc, char **argv)
{
	static const struct option longopts[] = {
		XRL_CMD_COMMON_LONGOPTS,
		{}
	};
	struct xrl_pin_dir dir;
	int opt, ret, exit_code = -1;
	const char *ifname;
	char err[PATH_MAX + 256];

	while ((opt = getopt_long(argc, argv, XRL_CMD_COMMON_SHORTOPTS,
				  longopts, NULL)) != -1)
		if (xrl_cmd_common_opt(cmd, cli, opt, &exit_code) &&
		    exit_code >= 0)
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
	ret = xrl_detach(dir.path, ifname, err, sizeof(err));
	if (!ret)
		ret = remove_pins_if_unused(dir.path, err, sizeof(err));
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
	.summary = "Detach the rate limiter from IFACE; the last detach "
		   "removes every pin.",
	.run = run_detach,
};
