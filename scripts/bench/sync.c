// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * sync.c - what one sync of global budgets costs (issue 13): the daemon's
 * engine (xrl_budgets_sync() with a struct xrl_global) against a real
 * redis-server that this command starts on a free loopback port, with 1,
 * 100 and 1,000 global rules. Per sync: wall and CPU time, the Redis
 * commands it ran (the server's INFO commandstats) and what it sent on
 * its connection (TCP_INFO of the engine's socket): N sequential round
 * trips need at least N segments, so a sync that sent no more segments
 * than its bytes fill is consistent with one round trip ("sync" rows).
 *
 * And what a sync costs a node and Redis ("cost" rows), with 1 and 100
 * nodes sharing each rule (the other 99 written into each rule's hash
 * beforehand, as live nodes), on a data path of the test clock: per
 * sync, the engine pipelines one EVALSHA per rule, so the ratio to one
 * PING round trip per rule says what pipelining leaves. Redis is the
 * tests' launcher's (tests/lib/redis_server.c).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/tcp.h>
#include <sys/socket.h>
#include <hiredis/hiredis.h>
#include "budget.h"
#include "clock.h"
#include "common.h"
#include "datapath.h"
#include "global.h"
#include "loader.h"
#include "policy_map.h"
#include "redis_server.h"
#include "rules.h"
#include "sync.h"

#define SYNC_RUNS	9

static redisReply *command(redisContext *ctx, const char *cmd)
{
	return ctx && !ctx->err ? redisCommand(ctx, cmd) : NULL;
}

/* A connection to the server; NULL until it answers PING. */
static redisContext *connect_to(const struct redis_server *r)
{
	struct timeval timeout = { .tv_sec = 1 };
	redisContext *ctx = redisConnectWithTimeout("127.0.0.1", r->port,
						    timeout);
	redisReply *reply = command(ctx, "PING");
	bool ok = reply && reply->type == REDIS_REPLY_STATUS;

	freeReplyObject(reply);
	if (ok)
		return ctx;
	redisFree(ctx);
	return NULL;
}

/* Commands the server has run so far (INFO commandstats, all commands). */
static long long commands_run(redisContext *ctx)
{
	redisReply *reply = command(ctx, "INFO commandstats");
	long long total = 0, calls;
	const char *p;

	if (!reply || reply->type != REDIS_REPLY_STRING) {
		freeReplyObject(reply);
		return -EIO;
	}
	for (p = reply->str; (p = strstr(p, "calls=")); p++)
		if (sscanf(p, "calls=%lld", &calls) == 1)
			total += calls;
	freeReplyObject(reply);
	return total;
}

/* The engine's connection: this process's TCP socket to @port. */
static int engine_socket(uint16_t port, int skip_fd)
{
	struct sockaddr_in peer;
	socklen_t len;
	struct dirent *e;
	DIR *dir = opendir("/proc/self/fd");
	int fd, found = -ENOENT;

	if (!dir)
		return -errno;
	while ((e = readdir(dir))) {
		fd = atoi(e->d_name);
		len = sizeof(peer);
		if (fd == skip_fd || fd == dirfd(dir) ||
		    getpeername(fd, (struct sockaddr *)&peer, &len) ||
		    peer.sin_family != AF_INET || ntohs(peer.sin_port) != port)
			continue;
		found = fd;
		break;
	}
	closedir(dir);
	return found;
}

static int tcp_info_of(int fd, struct tcp_info *info)
{
	socklen_t len = sizeof(*info);

	return getsockopt(fd, IPPROTO_TCP, TCP_INFO, info, &len) ? -errno : 0;
}

/* A policy of @n global aggregate rules (and the default rule). */
static int build_global_policy(struct xrl_policy *policy, size_t n)
{
	size_t i;
	int ret = bench_build_policy(policy, n + 1, false);

	for (i = 1; !ret && i <= n; i++) {
		policy->rules[i].scope = XRL_SCOPE_AGGREGATE;
		policy->rules[i].global = true;
	}
	return ret;
}

struct sync_figures {
	struct bench_spread wall_ms, cpu_ms;
	double commands, segments, bytes;
	unsigned mss;
};

static int time_syncs(struct xrl_budgets *b, redisContext *probe,
		      uint16_t port, int runs, struct sync_figures *out)
{
	double wall[SYNC_RUNS], cpu[SYNC_RUNS];
	struct tcp_info before, after;
	long long cmds_before, cmds_after;
	uint64_t t0, c0;
	int fd, run, ret;

	/* the first sync connects and loads the script */
	ret = xrl_budgets_sync(b, xrl_clock_ns(CLOCK_MONOTONIC));
	if (ret)
		return ret;
	fd = engine_socket(port, probe->fd);
	if (fd < 0)
		return fd;
	cmds_before = commands_run(probe);
	ret = tcp_info_of(fd, &before);
	for (run = 0; !ret && run < runs; run++) {
		/* one sync interval apart, as the daemon runs them */
		usleep(b->interval_ns / 1000);
		t0 = bench_now_ns();
		c0 = bench_thread_cpu_ns();
		ret = xrl_budgets_sync(b, xrl_clock_ns(CLOCK_MONOTONIC));
		cpu[run] = (bench_thread_cpu_ns() - c0) / 1e6;
		wall[run] = (bench_now_ns() - t0) / 1e6;
	}
	if (!ret)
		ret = tcp_info_of(fd, &after);
	cmds_after = commands_run(probe);
	if (ret)
		return ret;
	if (cmds_before < 0 || cmds_after < 0)
		return -EIO;
	bench_spread_of(wall, runs, &out->wall_ms);
	bench_spread_of(cpu, runs, &out->cpu_ms);
	/* the probe's own INFO is one of the commands counted */
	out->commands = (double)(cmds_after - cmds_before - 1) / runs;
	out->segments = (double)(after.tcpi_data_segs_out -
				 before.tcpi_data_segs_out) / runs;
	out->bytes = (double)(after.tcpi_bytes_sent - before.tcpi_bytes_sent) /
		     runs;
	out->mss = after.tcpi_snd_mss ? after.tcpi_snd_mss : 1;
	return 0;
}

static void sync_rows(size_t n, const struct sync_figures *f)
{
	char name[96], value[192], wall[64], cpu[64];
	double one_trip = f->bytes / f->mss;

	if (one_trip < 1)
		one_trip = 1;
	one_trip = (double)(unsigned long)(one_trip + 0.999);
	bench_spread_fmt(wall, sizeof(wall), &f->wall_ms, 2);
	bench_spread_fmt(cpu, sizeof(cpu), &f->cpu_ms, 2);
	snprintf(name, sizeof(name), "one sync, %zu global rule%s", n,
		 n > 1 ? "s" : "");
	snprintf(value, sizeof(value), "%s ms wall, %s ms CPU", wall, cpu);
	bench_row("global budgets, sync cost", name, value, "",
		  "reported (issue 13)", "");
	snprintf(name, sizeof(name), "round trips of one sync, %zu global "
		 "rule%s", n, n > 1 ? "s" : "");
	snprintf(value, sizeof(value), "%.1f Redis commands (the scripts' own calls "
		 "included), %.1f TCP data "
		 "segments, %.0f bytes sent per sync (one round trip: %.0f "
		 "segment%s)", f->commands, f->segments, f->bytes, one_trip,
		 one_trip > 1 ? "s" : "");
	bench_row("global budgets, sync cost", name, value, "",
		  "1 round trip (issue 13)",
		  f->segments <= one_trip ? "met" : "**MISSED**");
}

static int measure_rules(const struct redis_server *r, size_t n, int runs)
{
	struct xrl_load_opts load = { .max_sources = 1024 };
	char node[XRL_NODE_NAME_MAX], err[256] = "";
	struct xrl_global_opts gopts = { .host = "127.0.0.1", .port = r->port,
					 .node = node };
	struct sync_figures figures;
	struct xrl_budgets budgets;
	struct xrl_policy policy;
	struct xrl_datapath dp;
	redisContext *probe;
	int ret;

	snprintf(node, sizeof(node), "xrl-bench-%d", (int)getpid());
	ret = xrl_datapath_load(&dp, &load);
	if (ret)
		return ret;
	ret = build_global_policy(&policy, n);
	if (!ret)
		ret = xrl_policy_apply(&dp, &policy, err, sizeof(err));
	if (ret) {
		bench_log("sync: %zu rules: %s", n, err);
		goto free_policy;
	}
	ret = xrl_budgets_init(&budgets, &dp,
			       XRL_SYNC_INTERVAL_MS * NS_PER_MS);
	if (ret)
		goto free_policy;
	budgets.global = xrl_global_new(&gopts);
	probe = connect_to(r);
	if (!budgets.global || !probe) {
		ret = -ENOMEM;
		goto free_all;
	}
	ret = xrl_budgets_set_policy(&budgets, &policy, xrl_clock_ns(CLOCK_MONOTONIC));
	if (!ret)
		ret = time_syncs(&budgets, probe, r->port, runs, &figures);
	if (!ret)
		sync_rows(n, &figures);
free_all:
	redisFree(probe);
	xrl_global_free(budgets.global);
	budgets.global = NULL;
	xrl_budgets_free(&budgets);
free_policy:
	xrl_policy_free(&policy);
	xrl_datapath_close(&dp);
	return ret;
}

#define SYNCS		50
#define FAR_MS		3600000ULL	/* other nodes' fields: an hour */

static double now_ms(void)
{
	return bench_now_ns() / 1e6;
}

/* usec_per_call of EVALSHA since the last CONFIG RESETSTAT. */
static double evalsha_usec(redisContext *ctx)
{
	redisReply *reply = redisCommand(ctx, "INFO commandstats");
	double usec = 0;
	char *at;

	if (reply && reply->type == REDIS_REPLY_STRING &&
	    (at = strstr(reply->str, "cmdstat_evalsha:")) &&
	    (at = strstr(at, "usec_per_call=")))
		usec = strtod(at + strlen("usec_per_call="), NULL);
	if (reply)
		freeReplyObject(reply);
	return usec;
}

static double ping_ms(redisContext *ctx)
{
	double start = now_ms();
	int i;

	for (i = 0; i < 200; i++)
		freeReplyObject(redisCommand(ctx, "PING"));
	return (now_ms() - start) / 200;
}

/* The other nodes of every global rule of @policy, live for an hour
 * (Redis time). */
static void add_other_nodes(redisContext *ctx,
			    const struct xrl_policy *policy, unsigned others)
{
	redisReply *t = redisCommand(ctx, "TIME");
	unsigned long long now = strtoull(t->element[0]->str, NULL, 10) * 1000;
	char value[64];
	unsigned i, k;

	freeReplyObject(t);

	for (i = 1; i < policy->n_rules; i++)
		for (k = 0; k < others; k++) {
			snprintf(value, sizeof(value), "%u %llu peer%u",
				 1000 + k, now + FAR_MS, k);
			redisAppendCommand(ctx, "HSET xrl:{%s}:demand "
					   "peer%u %s", policy->rules[i].name, k,
					   value);
		}
	for (i = 0; i < (policy->n_rules - 1) * others; i++) {
		void *reply;

		if (redisGetReply(ctx, &reply) == REDIS_OK)
			freeReplyObject(reply);
	}
}

static int measure_cost(struct xrl_datapath *dp, uint16_t port,
			redisContext *ctx, unsigned n_rules, unsigned nodes,
			double rtt_ms)
{
	struct xrl_global_opts opts = { .host = "127.0.0.1", .port = port,
					.node = "bench", .ttl_ms = FAR_MS };
	struct xrl_budgets budgets;
	struct xrl_policy policy;
	double start, per_sync_ms, usec;
	char name[64], value[128], ratio[64], err[256] = "";
	uint64_t clock = 1000000000ULL;
	int i, ret;

	freeReplyObject(redisCommand(ctx, "FLUSHALL"));
	ret = build_global_policy(&policy, n_rules);
	if (!ret)
		ret = xrl_policy_apply(dp, &policy, err, sizeof(err));
	if (ret) {
		bench_log("sync cost: policy of %u rules: %s %s", n_rules,
			  strerror(-ret), err);
		xrl_policy_free(&policy);
		return ret;
	}
	add_other_nodes(ctx, &policy, nodes - 1);
	xrl_budgets_init(&budgets, dp, 0);
	budgets.global = xrl_global_new(&opts);
	xrl_budgets_set_policy(&budgets, &policy, clock);
	for (i = 0; i < 5; i++) {	/* connect, load the script, warm up */
		clock += 100000000ULL;
		xrl_budgets_sync(&budgets, clock);
	}
	freeReplyObject(redisCommand(ctx, "CONFIG RESETSTAT"));
	start = now_ms();
	for (i = 0; i < SYNCS; i++) {
		clock += 100000000ULL;
		ret = xrl_budgets_sync(&budgets, clock);
		if (ret)
			break;
	}
	per_sync_ms = (now_ms() - start) / SYNCS;
	usec = evalsha_usec(ctx);
	if (ret || xrl_budgets_find(&budgets, policy.rules[1].id)->nodes !=
		   nodes) {
		bench_log("sync cost: %u rules, %u nodes: sync failed",
			  n_rules, nodes);
		ret = ret ?: -EPROTO;
	} else {
		/* Unpipelined, a sync would cost a round trip and the
		 * script per rule: the ratio is what pipelining leaves. */
		double serial = n_rules * (rtt_ms + usec / 1000);

		snprintf(name, sizeof(name), "%u rules, %u nodes each",
			 n_rules, nodes);
		snprintf(value, sizeof(value), "%.3f ms per sync (Redis runs "
			 "each rule's script in %.1f us)", per_sync_ms, usec);
		snprintf(ratio, sizeof(ratio), "%.2f of one round trip per "
			 "rule", per_sync_ms / serial);
		bench_row("global sync", name, value, ratio,
			  "one round trip per sync (pipelined)",
			  n_rules == 1 || per_sync_ms < serial ? "pass" :
			  "no gain: the scripts dominate");
	}
	xrl_global_free(budgets.global);
	xrl_budgets_free(&budgets);
	xrl_policy_free(&policy);
	return ret;
}

/* The cost rows: per sync, against one PING round trip, 1 and 100 nodes
 * sharing each rule (the others written beforehand, as live nodes). */
static int measure_costs(const struct redis_server *r)
{
	static const unsigned rules[] = { 1, 100, 1000 }, nodes[] = { 1, 100 };
	struct xrl_load_opts load = { .max_sources = 1024, .test_clock = true };
	redisContext *ctx = connect_to(r);
	struct xrl_datapath dp;
	char value[32];
	double rtt;
	size_t i, j;
	int ret;

	if (!ctx)
		return -ECONNREFUSED;
	ret = xrl_datapath_load(&dp, &load);
	if (ret) {
		redisFree(ctx);
		return ret;
	}
	rtt = ping_ms(ctx);
	snprintf(value, sizeof(value), "%.3f ms", rtt);
	bench_row("global sync", "one PING round trip (the unit)", value, "1",
		  "", "");
	for (i = 0; i < sizeof(rules) / sizeof(rules[0]) && !ret; i++)
		for (j = 0; j < sizeof(nodes) / sizeof(nodes[0]) && !ret; j++)
			ret = measure_cost(&dp, r->port, ctx, rules[i],
					   nodes[j], rtt);
	xrl_datapath_close(&dp);
	redisFree(ctx);
	return ret;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: xrl-bench sync [--quick] [--rows ROW,...]\n"
		"rows (default: all):\n"
		"  sync   one sync: its time, commands and round trips\n"
		"  cost   one sync against one PING round trip a rule, with 1 "
		"and 100 nodes\n");
}

int bench_sync(int argc, char **argv)
{
	static const size_t rule_counts[] = { 1, 100, 1000 };
	const char *rows = "sync,cost";
	struct redis_server r = {};
	int runs = SYNC_RUNS, ret, i;
	size_t k;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--quick")) {
			runs = 3;
		} else if (!strcmp(argv[i], "--rows") && i + 1 < argc) {
			rows = argv[++i];
		} else {
			usage(stderr);
			return -EINVAL;
		}
	}
	if (!bench_listed(rows, "sync") && !bench_listed(rows, "cost")) {
		fprintf(stderr, "--rows: no row in \"%s\"\n", rows);
		return -EINVAL;
	}
	ret = redis_start(&r, 0);
	for (k = 0; !ret && bench_listed(rows, "sync") &&
		    k < sizeof(rule_counts) / sizeof(*rule_counts); k++)
		ret = measure_rules(&r, rule_counts[k], runs);
	if (!ret && bench_listed(rows, "cost"))
		ret = measure_costs(&r);
	if (ret)
		bench_log("sync: %s", strerror(-ret));
	redis_stop(&r);
	return ret;
}
