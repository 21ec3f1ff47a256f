// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-ratelimitd - keeps the XDP rate limiter's policy: applies the
 * policy file, answers the control socket (docs/PROTOCOL.md), reloads on
 * SIGHUP. The data path never depends on it: killed, the program keeps
 * enforcing the last policy; started again, it adopts what is pinned.
 */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>
#include "attach.h"
#include "budget.h"
#include "clock.h"
#include "event_reader.h"
#include "global.h"
#include "control.h"
#include "daemon_opts.h"
#include "datapath.h"
#include "dispatcher.h"
#include "env.h"
#include "memory.h"
#include "events.h"
#include "loader.h"
#include "log.h"
#include "metrics_http.h"
#include "notify.h"
#include "overlay.h"
#include "owner.h"
#include "manual_bans.h"
#include "pin.h"
#include "policy_read.h"
#include "policy_map.h"
#include "policy_running.h"
#include "server.h"
#include "state_file.h"
#include "source_counter.h"
#include "units.h"

/* The other state files (the runtime changes, the bans) live beside the
 * state file, in the one state directory. */
static char *path_beside(const char *other, const char *name)
{
	char *copy = strdup(other), *path = NULL;

	if (copy && asprintf(&path, "%s/%s", dirname(copy), name) < 0)
		path = NULL;
	free(copy);
	return path;
}

/* The interfaces of the file and of --iface, each once. */
static void gather_interfaces(struct xrl_daemon_opts *opts,
			      const struct xrl_config *config)
{
	size_t i, j;

	for (i = 0; config && i < config->n_interfaces; i++) {
		for (j = 0; j < opts->n_ifaces; j++)
			if (!strcmp(opts->ifaces[j], config->interfaces[i]))
				break;
		if (j == opts->n_ifaces && opts->n_ifaces < XRL_MAX_IFACES)
			opts->ifaces[opts->n_ifaces++] = config->interfaces[i];
	}
}

static int attach_interfaces(struct xrl_datapath *dp,
			     struct xrl_daemon_opts *opts)
{
	struct xrl_attach_result result;
	char err[512];
	size_t i;
	int ret;

	for (i = 0; i < opts->n_ifaces; i++) {
		ret = xrl_attach(dp, opts->ifaces[i], XRL_XDP_AUTO,
				 opts->priority, &result, err, sizeof(err));
		if (ret == -EALREADY) {
			pr_info("%s: already attached", opts->ifaces[i]);
			continue;
		}
		if (ret) {
			pr_err("attaching to %s: %s", opts->ifaces[i], err);
			return ret;
		}
		opts->attached_now[i] = true;
		if (result.chained)
			pr_info("%s: attached (%s mode, prog %u at priority "
				"%u in libxdp's dispatcher %u)", opts->ifaces[i],
				xrl_xdp_mode_name(result.mode), result.prog_id,
				result.priority, result.dispatcher_id);
		else
			pr_info("%s: attached (%s mode)", opts->ifaces[i],
				xrl_xdp_mode_name(result.mode));
		if (!result.chained && result.fallback[0])
			pr_warn("%s: attached alone through a pinned bpf_link, "
				"not libxdp's dispatcher (%s): no other XDP "
				"program can run beside it", opts->ifaces[i],
				result.fallback);
	}
	return 0;
}

static void detach_interfaces(const struct xrl_daemon_opts *opts,
			      const char *pin_dir)
{
	char err[512];
	size_t i;

	for (i = 0; i < opts->n_ifaces; i++) {
		if (xrl_detach(pin_dir, opts->ifaces[i], err, sizeof(err)))
			pr_warn("detaching %s: %s", opts->ifaces[i], err);
		else
			pr_info("%s: detached", opts->ifaces[i]);
	}
}

/*
 * --detach-on-exit: its interfaces detached and, when nothing else is
 * attached from the pins (another's attach keeps them), the pins removed
 * too, so that nothing of it is left; under the pin directory's lock, as
 * the CLI's detach.
 */
static void detach_on_exit(const struct xrl_daemon_opts *opts,
			   const struct xrl_pin_dir *dir)
{
	char err[PATH_MAX + 64];
	int ret;

	if (flock(dir->fd, LOCK_EX))
		pr_warn("locking %s: %s", dir->path, strerror(errno));
	detach_interfaces(opts, dir->path);
	ret = xrl_pin_remove_if_unused(dir->path, err, sizeof(err));
	if (ret < 0)
		pr_warn("%s", err);
	else if (ret > 0)
		pr_info("removed the pins in %s", dir->path);
	else
		pr_info("pins kept in %s: attached from them elsewhere",
			dir->path);
	flock(dir->fd, LOCK_UN);
}

/* Whether the program looks bans up exactly when there are bans: not
 * when all ended while the daemon was away, nor off beside a file's. */
static bool lookup_fits_bans(const struct xrl_daemon_state *state)
{
	struct xrl_settings settings;

	return !xrl_datapath_settings(state->dp, &settings) &&
	       !settings.manual_bans == !(state->bans && state->bans->n);
}

/*
 * The policy to run with is always the file's with the runtime overlay
 * on top (@config holds both). After a restart it is usually what is in
 * force already: then the daemon carries on without a swap; otherwise it
 * (or a lookup of bans that does not fit the bans kept) is applied, rule
 * ids carried from what is in force.
 */
static int install_policy(struct xrl_daemon_state *state, bool loaded,
			  struct xrl_config *config)
{
	char err[1024];
	int ret;

	ret = xrl_policy_read_ids(state->dp, &state->policy);
	if (ret) {
		pr_err("reading the policy in force: %s", strerror(-ret));
		return ret;
	}
	/* The bans kept turn the lookup on, as every change does
	 * (change.c): compared with it on, a policy in force matches. */
	config->policy.manual_bans = state->bans && state->bans->n;
	if (!loaded && lookup_fits_bans(state) &&
	    !xrl_policy_carry_ids(&config->policy, &state->policy) &&
	    !xrl_policy_matches_map(state->dp, &config->policy)) {
		xrl_policy_free(&state->policy);
		state->policy = config->policy;
		memset(&config->policy, 0, sizeof(config->policy));
		if (xrl_daemon_check_in_force(state, err, sizeof(err)))
			state->head_map_id = 0;
		pr_info("carrying on with the policy in force (%zu rules, "
			"%s and the runtime changes)", state->policy.n_rules,
			state->config_path);
		return 0;
	}
	ret = xrl_daemon_change(state, &config->policy, err, sizeof(err));
	if (ret) {
		pr_err("applying %s: %s", state->config_path, err);
		return ret;
	}
	pr_info("applied %s: %zu rules", state->config_path,
		state->policy.n_rules);
	return 0;
}

/*
 * The file and the runtime changes kept beside it, read and checked
 * before anything is loaded, pinned or attached: a daemon that cannot
 * run with them changes nothing.
 */
static int read_policy(const struct xrl_daemon_opts *opts,
		       struct xrl_daemon_state *state,
		       struct xrl_config *config)
{
	struct xrl_overlay_outcome outcome;
	struct xrl_overlay ov;
	char err[1024];
	int ret;

	ret = xrl_config_load_file(opts->config_path, config, err,
				   sizeof(err));
	if (ret) {
		pr_err("%s", err);
		return ret;
	}
	ret = xrl_policy_copy(&state->file, &config->policy);
	if (ret) {
		pr_err("%s: out of memory", opts->config_path);
		xrl_config_free(config);
		return ret;
	}
	ret = xrl_overlay_load(opts->overlay_path, &ov, err, sizeof(err));
	if (!ret)
		ret = xrl_overlay_merge(&config->policy, &ov, &outcome, err,
					sizeof(err));
	xrl_overlay_free(&ov);
	if (ret) {
		pr_err("runtime changes: %s", err);
		xrl_config_free(config);
		return ret;
	}
	if (outcome.summary[0])
		pr_info("runtime changes from %s: %s", opts->overlay_path,
			outcome.summary);
	state->deleted = outcome.deleted;
	state->n_deleted = outcome.n_deleted;
	return 0;
}

/* With a Redis address (--redis, or redis: in the config), global
 * budgets are shared with the other nodes through it. */
static int start_global(struct xrl_budgets *budgets,
			const struct xrl_daemon_opts *opts,
			const struct xrl_config *config)
{
	struct xrl_global_opts gopts = { .node = opts->node };
	const char *address = opts->redis;
	char host[256], hostname[XRL_NODE_NAME_MAX] = "";

	if (!address && config)
		address = config->redis;
	if (!address)
		return 0;
	if (xrl_hostport_parse(address, host, sizeof(host), &gopts.port)) {
		pr_err("redis: \"%s\" is not HOST:PORT", address);
		return -EINVAL;
	}
	gopts.host = host;
	if (!gopts.node) {
		if (gethostname(hostname, sizeof(hostname) - 1) ||
		    !hostname[0]) {
			pr_err("--node: no hostname to default to");
			return -EINVAL;
		}
		gopts.node = hostname;
	}
	budgets->global = xrl_global_new(&gopts);
	if (!budgets->global) {
		pr_err("global budgets: %s", strerror(errno));
		return -errno;
	}
	pr_info("global budgets through redis %s as node \"%s\"", address,
		gopts.node);
	return 0;
}

/* The sync engine of aggregate budgets: every sync_interval it re-splits
 * them by demand (and, with Redis, across the fleet). */
static int start_budgets(struct xrl_budgets *budgets, struct xrl_datapath *dp,
			 const struct xrl_daemon_opts *opts,
			 const struct xrl_config *config)
{
	uint64_t ms = opts->sync_interval_ms;
	int ret;

	if (!ms && config && config->sync_interval_ms)
		ms = config->sync_interval_ms;
	if (!ms)
		ms = XRL_SYNC_INTERVAL_MS;
	ret = xrl_budgets_init(budgets, dp, ms * 1000000ULL);
	if (ret) {
		pr_err("aggregate budgets: %s", strerror(-ret));
		return ret;
	}
	ret = start_global(budgets, opts, config);
	if (ret)
		return ret;
	pr_debug("aggregate budgets: syncing every %llu ms",
		 (unsigned long long)ms);
	return 0;
}

/* Hands the rule names of each new policy to the scrape thread. */
static void policy_changed(struct xrl_daemon_state *state)
{
	const struct xrl_reload_result *last = &state->last_reload;

	if (xrl_metrics_server_policy(state->changed_ctx, &state->policy,
				      state->n_changes, state->changed_at) ||
	    xrl_metrics_server_health(state->changed_ctx, state->interfaces,
				      state->n_interfaces,
				      state->head_map_id))
		pr_warn("/metrics: out of memory: rule names not updated");
	if (last->at)
		xrl_metrics_server_reload(state->changed_ctx, last->at,
					  last->ok);
}

static int start_metrics(struct xrl_daemon_state *state,
			 const struct xrl_daemon_opts *opts,
			 struct xrl_metrics_server **metrics)
{
	char err[512];

	*metrics = NULL;
	if (!opts->metrics)
		return 0;
	*metrics = xrl_metrics_server_start(opts->metrics, state->dp, err,
					    sizeof(err));
	if (!*metrics) {
		pr_err("%s", err);
		return -errno;
	}
	if (!state->changed_at)
		state->changed_at = time(NULL);
	state->changed = policy_changed;
	state->changed_ctx = *metrics;
	policy_changed(state);
	pr_info("serving metrics on http://%s/metrics", opts->metrics);
	return 0;
}

/* Limit events: read from the ring in the event loop, logged, kept. */
struct event_feed {
	struct xrl_daemon_state *state;
	struct xrl_event_log log;
	struct xrl_event_reader *reader;
};

static int log_event(const struct xrl_limit_event *raw, void *ctx)
{
	struct event_feed *feed = ctx;
	struct xrl_event_record rec;
	char line[256];

	xrl_event_describe(raw, &feed->state->policy,
			   xrl_monotonic_to_wall(raw->time_ns), &rec);
	xrl_event_log_add(&feed->log, &rec);
	xrl_event_format(&rec, line, sizeof(line));
	pr_info("%s", line);
	return 0;
}

static void events_ready(void *ctx)
{
	struct event_feed *feed = ctx;
	int ret = xrl_event_reader_drain(feed->reader);

	if (ret < 0)
		pr_warn("reading limit events: %s", strerror(-ret));
}

static int start_events(struct xrl_daemon_state *state,
			struct xrl_daemon_opts *opts, struct event_feed *feed)
{
	struct xrl_server_watch *watch;
	int ret;

	feed->state = state;
	ret = xrl_event_log_init(&feed->log);
	if (ret)
		return ret;
	feed->reader = xrl_event_reader_open(state->dp, log_event, feed);
	if (!feed->reader) {
		ret = -errno;
		pr_err("reading the limit events' ring: %s", strerror(errno));
		xrl_event_log_free(&feed->log);
		return ret;
	}
	watch = &opts->server.watches[opts->server.n_watches++];
	watch->fd = xrl_event_reader_fd(feed->reader);
	watch->ready = events_ready;
	watch->ctx = feed;
	state->events = &feed->log;
	return 0;
}

static void stop_events(struct event_feed *feed)
{
	if (!feed->reader)
		return;
	xrl_event_reader_close(feed->reader);
	xrl_event_log_free(&feed->log);
	feed->reader = NULL;
}

/* What the config names, checked before anything is loaded: every
 * interface exists, its Redis address is one. */
static int check_setup(const struct xrl_daemon_opts *opts,
		       const struct xrl_config *config)
{
	char host[256], err[512];
	uint16_t port;
	size_t i;

	for (i = 0; i < opts->n_ifaces; i++) {
		if (xrl_ifindex(opts->ifaces[i]) >= 0)
			continue;
		pr_err("%s: no such interface (%s)", opts->ifaces[i],
		       i < opts->n_cli_ifaces ? "--iface" :
		       opts->config_path);
		return -ENODEV;
	}
	if (!opts->redis && config->redis &&
	    xrl_hostport_parse(config->redis, host, sizeof(host), &port)) {
		pr_err("%s: redis: \"%s\" is not HOST:PORT", opts->config_path,
		       config->redis);
		return -EINVAL;
	}
	if (!opts->metrics && config->metrics &&
	    xrl_metrics_listen_check(config->metrics, err, sizeof(err))) {
		/* "--metrics VALUE: why" (metrics_http.c), said of the
		 * file's key. */
		pr_err("%s:%d: metrics: \"%s\": %s", opts->config_path,
		       config->metrics_line, config->metrics,
		       err + strlen("--metrics : ") + strlen(config->metrics));
		return -EINVAL;
	}
	return 0;
}

/* A start that failed takes back what it made: the links it added and,
 * when it loaded the data path, the pins. */
static void undo_start(struct xrl_datapath *dp, bool loaded,
		       const struct xrl_daemon_opts *opts)
{
	char err[512];
	size_t i;

	for (i = 0; i < opts->n_ifaces; i++)
		if (opts->attached_now[i] &&
		    xrl_detach(opts->pin_dir, opts->ifaces[i], err, sizeof(err)))
			pr_warn("detaching %s: %s", opts->ifaces[i], err);
	if (loaded && xrl_datapath_unpin(dp))
		pr_warn("removing the pins in %s", opts->pin_dir);
}

static int run(struct xrl_daemon_opts *opts)
{
	struct xrl_metrics_server *metrics = NULL;
	struct event_feed feed = {};
	struct xrl_load_opts load_opts = {
		.memory_limit = opts->memory_limit,
	};
	struct xrl_daemon_state state = {};
	struct xrl_budgets budgets = {};
	struct xrl_source_counter counter = {};
	struct xrl_manual_bans bans = { .path = opts->bans_path };
	struct xrl_config config = {};
	struct xrl_owner owner;
	struct xrl_pin_dir dir;
	struct xrl_datapath dp;
	char err[1024];
	int ret, listen_fd;
	bool loaded;

	/* First, so that a second daemon stops before touching anything:
	 * one on this socket, then one on these pins whatever its socket
	 * (its socket is removed on the way out). */
	owner.fd = -1;
	listen_fd = xrl_server_listen(&opts->server, err, sizeof(err));
	if (listen_fd < 0) {
		pr_err("%s", err);
		return listen_fd;
	}
	ret = xrl_owner_take(&owner, opts->pin_dir, opts->socket_path, err,
			     sizeof(err));
	/* Before any state file is read or written. */
	if (!ret)
		ret = xrl_state_dir_check(opts->state_path, err, sizeof(err));
	if (ret) {
		pr_err("%s", err);
		goto close_socket;
	}
	ret = read_policy(opts, &state, &config);
	if (ret)
		goto close_socket;
	ret = xrl_manual_bans_load(&bans, err, sizeof(err));
	if (ret) {
		pr_err("bans: %s", err);
		xrl_config_free(&config);
		goto close_socket;
	}
	if (bans.n)
		pr_info("%zu ban%s from %s", bans.n, bans.n == 1 ? "" : "s",
			bans.path);
	opts->n_cli_ifaces = opts->n_ifaces;
	gather_interfaces(opts, &config);
	ret = check_setup(opts, &config);
	if (ret)
		goto free_config;
	/* --metrics wins over the file's metrics:. */
	if (!opts->metrics)
		opts->metrics = config.metrics;

	ret = xrl_pin_dir_open(&dir, opts->pin_dir, true, err, sizeof(err));
	if (ret) {
		pr_err("%s", err);
		goto free_config;
	}
	ret = xrl_datapath_adopt_or_load(&dp, &dir, &load_opts, &loaded, err,
					 sizeof(err));
	if (ret) {
		pr_err("%s", err);
		goto close_dir;
	}
	pr_info("%s the data path pinned in %s", loaded ? "loaded" :
		"adopted", opts->pin_dir);
	ret = xrl_source_counter_start(&counter, dp.buckets_fd,
				       XRL_SOURCE_COUNT_INTERVAL_MS);
	if (ret) {
		pr_err("counting the sources: %s", strerror(-ret));
		undo_start(&dp, loaded, opts);
		goto close_datapath;
	}
	dp.sources_count = &counter.count;

	ret = start_budgets(&budgets, &dp, opts, &config);
	if (ret) {
		undo_start(&dp, loaded, opts);
		goto close_datapath;
	}
	state.budgets = &budgets;
	state.dp = &dp;
	state.config_path = opts->config_path;
	state.state_path = opts->state_path;
	state.overlay_path = opts->overlay_path;
	ret = xrl_manual_bans_install(&bans, dp.manual_bans_fd);
	if (ret) {
		pr_err("putting the bans back: %s", strerror(-ret));
		undo_start(&dp, loaded, opts);
		goto close_datapath;
	}
	state.bans = &bans;
	state.socket_path = opts->socket_path;
	state.interfaces = opts->ifaces;
	state.n_interfaces = opts->n_ifaces;
	state.started = time(NULL);
	state.started_with.redis = config.redis;
	state.started_with.sync_interval_ms = config.sync_interval_ms;
	state.started_with.metrics = config.metrics;
	state.started_with.interfaces = config.interfaces;
	state.started_with.n_interfaces = config.n_interfaces;
	ret = install_policy(&state, loaded, &config);
	if (!ret)
		ret = xrl_budgets_set_policy(&budgets, &state.policy,
					     xrl_clock_ns(CLOCK_MONOTONIC));
	if (!ret)
		ret = attach_interfaces(&dp, opts);
	if (!ret)
		ret = start_metrics(&state, opts, &metrics);
	if (!ret && metrics) {
		xrl_metrics_server_extra(metrics, xrl_budgets_write_metrics,
					 &budgets);
		xrl_metrics_server_degraded(metrics, xrl_budgets_degraded_why,
					    &budgets);
	}
	if (!ret)
		ret = start_events(&state, opts, &feed);
	if (ret) {
		undo_start(&dp, loaded, opts);
		goto close_datapath;
	}
	state.lock = &dir;
	flock(dir.fd, LOCK_UN);

	pr_info("listening on %s", opts->socket_path);
	xrl_notify_ready(&state);
	ret = xrl_server_run(&state, &opts->server, listen_fd);
	xrl_notify_stopping();
	listen_fd = -1;	/* closed by the loop */
	if (ret)
		pr_err("event loop: %s", strerror(-ret));
	if (opts->detach_on_exit)
		detach_on_exit(opts, &dir);
	else
		pr_info("exiting; the data path keeps enforcing");

close_datapath:
	xrl_source_counter_stop(&counter);
	state.events = NULL;
	stop_events(&feed);
	xrl_metrics_server_stop(metrics);
	xrl_global_free(budgets.global);
	xrl_budgets_free(&budgets);
	xrl_datapath_close(&dp);
close_dir:
	xrl_pin_dir_close(&dir);
free_config:
	xrl_manual_bans_free(&bans);
	xrl_config_free(&config);
close_socket:
	xrl_daemon_state_free(&state);
	if (listen_fd >= 0) {
		close(listen_fd);
		unlink(opts->socket_path);
	}
	xrl_owner_release(&owner);
	return ret;
}

/* An option wins over the environment, the environment over the default. */
static const char *from_env(const char *name, const char *fallback)
{
	const char *value = getenv(name);

	return value && value[0] ? value : fallback;
}

int main(int argc, char **argv)
{
	struct xrl_daemon_opts opts = {
		.config_path = XRL_DAEMON_CONFIG,
		.socket_path = from_env(XRL_ENV_SOCKET, XRL_SOCKET_PATH),
		.pin_dir = from_env(XRL_ENV_PIN_DIR, XRL_PIN_DIR),
		.priority = XRL_DEFAULT_PRIORITY,
		.memory_limit = xrl_memory_limit_default(),
		.server = {
			.idle_timeout_ms = XRL_IDLE_TIMEOUT_MS,
			.max_clients = XRL_MAX_CLIENTS,
		},
	};
	char *state_path = NULL, *overlay_path = NULL, *bans_path = NULL;
	char err[256];
	int ret;

	xrl_log_init_daemon();
	xrl_log_libbpf();
	ret = xrl_daemon_parse_options(argc, argv, &opts);
	if (ret)
		return ret > 0 ? EXIT_SUCCESS : EXIT_FAILURE;
	/* What it will need, said before it starts rather than at the
	 * first request that needs it. */
	if (xrl_check_privileges(true, err, sizeof(err))) {
		pr_err("%s", err);
		return EXIT_FAILURE;
	}
	opts.server.socket_path = opts.socket_path;
	if (!opts.state_path) {
		if (asprintf(&state_path, "%s/%s",
			     from_env(XRL_ENV_STATE_DIR, XRL_STATE_DIR),
			     XRL_STATE_FILE_NAME) < 0)
			state_path = NULL;
		opts.state_path = state_path;
	}
	overlay_path = opts.state_path ?
		       path_beside(opts.state_path, XRL_OVERLAY_NAME) : NULL;
	opts.overlay_path = overlay_path;
	bans_path = opts.state_path ?
		    path_beside(opts.state_path, XRL_BANS_NAME) : NULL;
	opts.bans_path = bans_path;
	if (!opts.state_path || !opts.overlay_path || !opts.bans_path) {
		pr_err("out of memory");
		ret = -ENOMEM;
		goto free_paths;
	}
	if (xrl_server_block_signals()) {
		pr_err("blocking signals: %s", strerror(errno));
		ret = -errno;
		goto free_paths;
	}
	ret = run(&opts);
free_paths:
	free(bans_path);
	free(overlay_path);
	free(state_path);
	return ret ? EXIT_FAILURE : EXIT_SUCCESS;
}
