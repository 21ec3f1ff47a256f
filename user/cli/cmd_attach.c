// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* xdp-ratelimit attach IFACE: load or adopt, apply a policy, attach. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "attach.h"
#include "cmd.h"
#include "dispatcher.h"
#include "env.h"
#include "loader.h"
#include "memory.h"
#include "pin.h"
#include "policy.h"
#include "policy_read.h"
#include "policy_map.h"

struct attach_args {
	const char *ifname;
	enum xrl_xdp_mode mode;
	bool mode_set;
	unsigned priority;
	bool priority_set;
	const char *policy_path;
	struct xrl_load_opts load;
};

enum {
	OPT_MAX_SOURCES = XRL_OPT_LONG,
	OPT_MAX_RULES,
	OPT_PRIORITY,
	OPT_MEMORY_LIMIT,
};

static const struct xrl_opt attach_opts[] = {
	XRL_OPT("mode", 'm', "MODE",
		"native, generic, or auto (default): native, else generic"),
	XRL_OPT("policy", 'p', "FILE",
		"apply this YAML policy first (shared by every interface)"),
	XRL_OPT("priority", OPT_PRIORITY, "N",
		"its place among the XDP programs of libxdp's dispatcher: "
		"lower runs first (default 5, before xdp-filter's 10; 0 to "
		"1000)"),
	XRL_OPT("max-sources", OPT_MAX_SOURCES, "N",
		"size of the bucket map when loading (default 1048576)"),
	XRL_OPT("max-rules", OPT_MAX_RULES, "N",
		"rules a policy may hold, the default rule included, when "
		"loading (default 131072, at most 1048575; memory follows the "
		"rules in force: 48 bytes per rule per CPU for its counters)"),
	XRL_OPT("memory-limit", OPT_MEMORY_LIMIT, "SIZE",
		XRL_MEMORY_LIMIT_HELP),
	{}
};

static int parse_args(const struct xrl_cmd *cmd, struct xrl_cli *cli,
		      int argc, char **argv, struct attach_args *args)
{
	unsigned long max_sources, max_rules;
	int opt, exit_code = -1;
	char *end;

	while ((opt = xrl_cmd_next_opt(cmd, cli, argc, argv,
				       &exit_code)) != -1) {
		switch (opt) {
		case 'm':
			if (xrl_xdp_mode_parse(optarg, &args->mode)) {
				xrl_cmd_error(cli, cmd, "--mode %s: not one of "
					      "native, generic, auto", optarg);
				return EXIT_FAILURE;
			}
			args->mode_set = true;
			break;
		case 'p':
			args->policy_path = optarg;
			break;
		case OPT_PRIORITY:
			if (xrl_priority_parse(optarg, &args->priority)) {
				xrl_cmd_error(cli, cmd, "--priority %s: not a "
					      "number from 0 to %d", optarg,
					      XRL_PRIORITY_MAX);
				return EXIT_FAILURE;
			}
			args->priority_set = true;
			break;
		case OPT_MAX_SOURCES:
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
		case OPT_MEMORY_LIMIT:
			if (xrl_memory_limit_parse(optarg,
						   &args->load.memory_limit)) {
				xrl_cmd_error(cli, cmd, "--memory-limit %s: not a "
					      "size (512M, 2G) or a share of "
					      "memory (25%%)", optarg);
				return EXIT_FAILURE;
			}
			break;
		case OPT_MAX_RULES:
			errno = 0;
			max_rules = strtoul(optarg, &end, 10);
			if (errno || *end || max_rules < 2 ||
			    max_rules > XRL_MAX_RULES - 1) {
				xrl_cmd_error(cli, cmd, "--max-rules %s: not a "
					      "number of rules from 2 to %d",
					      optarg, XRL_MAX_RULES - 1);
				return EXIT_FAILURE;
			}
			args->load.max_rules = max_rules;
			break;
		}
	}
	if (exit_code >= 0)
		return exit_code;
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
	char where[160];

	if (result->native_err)
		printf("%s: native XDP unavailable (%s), using generic mode\n",
		       args->ifname, strerror(-result->native_err));
	if (result->chained)
		snprintf(where, sizeof(where), "prog %u at priority %u in "
			 "libxdp's dispatcher %u, beside %zu other%s",
			 result->prog_id, result->priority,
			 result->dispatcher_id, result->others,
			 result->others == 1 ? "" : "s");
	else
		snprintf(where, sizeof(where), "link %u", result->link_id);
	printf("%s: attached in %s mode (%s), %s %s\n", args->ifname,
	       xrl_xdp_mode_name(result->mode), where,
	       loaded ? "loaded and pinned in" : "sharing the maps in",
	       dp->pin_dir);
	/* One line: why it runs alone, where the dispatcher cannot. */
	if (!result->chained && result->fallback[0])
		fprintf(stderr, "%s: warning: attached alone through a pinned "
			"bpf_link, not libxdp's dispatcher (%s): no other XDP "
			"program can run beside it\n", args->ifname,
			result->fallback);
}

/*
 * Generic mode judges GRO/GSO aggregates, whose wire packets the program
 * can only estimate (bpf/parse.h): say so when pps limits are in force.
 */
static void warn_generic_pps(const char *ifname, const struct xrl_datapath *dp,
			     enum xrl_xdp_mode mode)
{
	int n;

	if (mode != XRL_XDP_GENERIC)
		return;
	n = xrl_policy_count_pps_rules(dp);
	if (n <= 0)
		return;
	fprintf(stderr, "%s: warning: generic mode judges GRO/GSO aggregates: "
		"the pps limits of %d rule%s count an estimate of their wire "
		"packets (never more than were sent); native mode counts each\n",
		ifname, n, n == 1 ? "" : "s");
}

static int attach_with(const struct xrl_cmd *cmd, struct xrl_cli *cli,
		       const struct attach_args *args, struct xrl_config *config)
{
	struct xrl_attach_result result = {};
	struct xrl_xdp_state state;
	struct xrl_pin_dir dir;
	struct xrl_datapath dp;
	bool loaded, already;
	char err[512];
	int ret;

	ret = xrl_pin_dir_open(&dir, cli->pin_dir, true, err, sizeof(err));
	if (ret)
		goto fail;
	/* Nothing of ours yet: a refusal needs no program loaded first
	 * (verified, which takes a while). */
	if (!xrl_datapath_pinned(dir.path)) {
		ret = xrl_attach_check(NULL, args->ifname, err, sizeof(err));
		if (ret) {
			rmdir(dir.path);	/* as a load undone would */
			goto unlock;
		}
	}
	ret = xrl_datapath_adopt_or_load(&dp, &dir, &args->load, &loaded, err,
					 sizeof(err));
	if (ret)
		goto unlock;
	/* Refuse before the policy changes: the maps may be shared. */
	if (!loaded && args->load.max_sources &&
	    args->load.max_sources != xrl_datapath_max_sources(&dp)) {
		snprintf(err, sizeof(err), "--max-sources %u: the program "
			 "pinned in %.200s has %u; it is sized when loaded, so "
			 "detach every interface first", args->load.max_sources,
			 dp.pin_dir, xrl_datapath_max_sources(&dp));
		ret = -EEXIST;
		goto undo;
	}
	ret = xrl_attach_check(&dp, args->ifname, err, sizeof(err));
	if (ret && ret != -EALREADY)
		goto undo;
	already = ret == -EALREADY;
	if (already && (args->mode_set || args->priority_set)) {
		snprintf(err, sizeof(err), "%s: already attached; --%s "
			 "applies when attaching, so detach it first",
			 args->ifname, args->mode_set ? "mode" : "priority");
		ret = -EEXIST;
		goto undo;
	}
	if (config) {
		/* Ids as the daemon gives them: a rule keeps the id its
		 * prefix holds in force, a new one gets one never used. */
		ret = xrl_policy_take_ids(&dp, &config->policy, NULL, err,
					  sizeof(err));
		if (!ret)
			ret = xrl_policy_apply(&dp, &config->policy, err,
					       sizeof(err));
		if (ret)
			goto undo;
	}
	if (already) {
		/* Attaching again is how a new policy file is applied. */
		printf("%s: already attached%s\n", args->ifname,
		       config ? "; policy applied" : "");
		if (!xrl_xdp_query(xrl_ifindex(args->ifname), &state))
			warn_generic_pps(args->ifname, &dp, state.mode);
		goto done;
	}
	ret = xrl_attach(&dp, args->ifname, args->mode, args->priority,
			 &result, err, sizeof(err));
	if (ret)
		goto undo;
	report_attach(args, &result, &dp, loaded);
	warn_generic_pps(args->ifname, &dp, result.mode);
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
	struct attach_args args = { .mode = XRL_XDP_AUTO,
				    .priority = XRL_DEFAULT_PRIORITY };
	struct xrl_config config;
	char err[512];
	int ret;

	args.load.memory_limit = xrl_memory_limit_default();
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
		    "[--priority N] [--max-sources N] [--max-rules N] "
		    "[--memory-limit SIZE]",
	.summary = "Attach the rate limiter to IFACE (loading and pinning it, "
		   "or sharing the one pinned).",
	.opts = attach_opts,
	.run = run_attach,
};
