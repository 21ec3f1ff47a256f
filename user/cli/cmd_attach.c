// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* xdp-ratelimit attach IFACE: load or adopt, apply a policy, attach. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "attach.h"
#include "cmd.h"
#include "env.h"
#include "pin.h"
#include "policy.h"
#include "policy_file.h"
#include "policy_map.h"

struct attach_args {
	const char *ifname;
	enum xrl_xdp_mode mode;
	const char *policy_path;
	struct xrl_load_opts load;
};

static int parse_args(const struct xrl_cmd *cmd, struct xrl_cli *cli,
		      int argc, char **argv, struct attach_args *args)
{
	static const struct option longopts[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "policy", required_argument, NULL, 'p' },
		{ "max-sources", required_argument, NULL, 's' },
		XRL_CMD_COMMON_LONGOPTS,
		{}
	};
	unsigned long max_sources;
	int opt, exit_code = -1;
	char *end;

	while ((opt = getopt_long(argc, argv, "m:p:" XRL_CMD_COMMON_SHORTOPTS,
				  longopts, NULL)) != -1) {
		if (xrl_cmd_common_opt(cmd, cli, opt, &exit_code)) {
			if (exit_code >= 0)
				return exit_code;
			continue;
		}
		switch (opt) {
		case 'm':
			if (xrl_xdp_mode_parse(optarg, &args->mode)) {
				xrl_cmd_error(cli, cmd, "--mode %s: not one of "
					      "native, generic, auto", optarg);
				return EXIT_FAILURE;
			}
			break;
		case 'p':
			args->policy_path = optarg;
			break;
		case 's':
			errno = 0;
			max_sources = strtoul(optarg, &end, 10);
			if (errno || *end || !max_sources ||
			    max_sources > UINT32_MAX) {
				xrl_cmd_error(cli, cmd, "--max-sources %s: not a "
					      "number of entries", optarg);
				return EXIT_FAILURE;
			}
			args->load.max_sources = max_sources;
			break;
		}
	}
	if (optind != argc - 1) {
		xrl_cmd_error(cli, cmd, "expects one interface name; try "
			      "'%s attach --help'", cli->prog);
		return EXIT_FAILURE;
	}
	args->ifname = argv[optind];
	return -1;
}

/* Takes everything back after a failed first attach: nothing half-done. */
static void undo_fresh_load(struct xrl_datapath *dp)
{
	if (xrl_pin_count_links(dp->pin_dir) == 0)
		xrl_datapath_unpin(dp);
}

static void report_attach(const struct attach_args *args,
			  const struct xrl_attach_result *result,
			  const struct xrl_datapath *dp, bool loaded)
{
	if (result->native_err)
		printf("%s: native XDP unavailable (%s), using generic mode\n",
		       args->ifname, strerror(-result->native_err));
	printf("%s: attached in %s mode (link %u), %s %s\n", args->ifname,
	       xrl_xdp_mode_name(result->mode), result->link_id,
	       loaded ? "loaded and pinned in" : "sharing the maps in",
	       dp->pin_dir);
}

static int attach_with(const struct xrl_cmd *cmd, struct xrl_cli *cli,
		       const struct attach_args *args, struct xrl_config *config)
{
	struct xrl_attach_result result = {};
	struct xrl_pin_dir dir;
	struct xrl_datapath dp;
	bool loaded, already;
	char err[512];
	int ret;

	ret = xrl_pin_dir_open(&dir, cli->pin_dir, true, err, sizeof(err));
	if (ret)
		goto fail;
	ret = xrl_datapath_adopt_or_load(&dp, &dir, &args->load, &loaded, err,
					 sizeof(err));
	if (ret)
		goto unlock;
	/* Refuse before the policy changes: the maps may be shared. */
	ret = xrl_attach_check(&dp, args->ifname, err, sizeof(err));
	if (ret && ret != -EALREADY)
		goto undo;
	already = ret == -EALREADY;
	if (config) {
		ret = xrl_policy_apply(&dp, &config->policy, err, sizeof(err));
		if (ret)
			goto undo;
	}
	if (already) {
		/* Attaching again is how a new policy file is applied. */
		printf("%s: already attached%s\n", args->ifname,
		       config ? "; policy applied" : "");
		goto done;
	}
	ret = xrl_attach(&dp, args->ifname, args->mode, &result, err,
			 sizeof(err));
	if (ret)
		goto undo;
	report_attach(args, &result, &dp, loaded);
done:
	xrl_datapath_close(&dp);
	xrl_pin_dir_close(&dir);
	return EXIT_SUCCESS;

undo:
	if (loaded)
		undo_fresh_load(&dp);
	xrl_datapath_close(&dp);
unlock:
	xrl_pin_dir_close(&dir);
fail:
	xrl_cmd_error(cli, cmd, "%s", err);
	return EXIT_FAILURE;
}

static int run_attach(const struct xrl_cmd *cmd, struct xrl_cli *cli,
		      int argc, char **argv)
{
	struct attach_args args = { .mode = XRL_XDP_AUTO };
	struct xrl_config config;
	char err[512];
	int ret;

	ret = parse_args(cmd, cli, argc, argv, &args);
	if (ret >= 0)
		return ret;
	/* Everything that can be checked is, before anything changes. */
	if (xrl_check_privileges(true, err, sizeof(err)) ||
	    xrl_check_btf(err, sizeof(err))) {
		xrl_cmd_error(cli, cmd, "%s", err);
		return EXIT_FAILURE;
	}
	if (xrl_ifindex(args.ifname) < 0) {
		xrl_cmd_error(cli, cmd, "%s: no such interface", args.ifname);
		return EXIT_FAILURE;
	}
	if (!args.policy_path)
		return attach_with(cmd, cli, &args, NULL);
	if (xrl_config_load_file(args.policy_path, &config, err, sizeof(err))) {
		/* The parser's message names file, line and field already. */
		fprintf(stderr, "%s\n", err);
		return EXIT_FAILURE;
	}
	ret = attach_with(cmd, cli, &args, &config);
	xrl_config_free(&config);
	return ret;
}

const struct xrl_cmd xrl_cmd_attach = {
	.name = "attach",
	.synopsis = "IFACE [--mode native|generic|auto] [--policy FILE] "
		    "[--max-sources N]",
	.summary = "Attach the rate limiter to IFACE (loading and pinning it, "
		   "or sharing the one pinned).",
	.options =
	"  -m, --mode MODE     native, generic, or auto (default): native,\n"
	"                      else generic\n"
	"  -p, --policy FILE   apply this YAML policy first (shared by every\n"
	"                      interface)\n"
	"      --max-sources N size of the bucket map when loading (default\n"
	"                      1048576)\n",
	.run = run_attach,
};
