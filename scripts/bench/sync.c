// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * sync.c - what one sync of global budgets costs (issue 13): the daemon's
 * engine (xrl_budgets_sync() with a struct xrl_global) against a real
 * redis-server that this command starts on a free loopback port, with 1,
 * 100 and 1,000 global rules. Per sync: wall and CPU time, the Redis
 * commands it ran (the server's INFO commandstats) and what it sent on
 * its connection (TCP_INFO of the engine's socket): N sequential round
 * trips need at least N segments, so a sync that sent no more segments
 * than its bytes fill is consistent with one round trip.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/tcp.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <hiredis/hiredis.h>
#include "budget.h"
#include "clock.h"
#include "common.h"
#include "datapath.h"
#include "global.h"
#include "loader.h"
#include "policy_map.h"
#include "rules.h"
#include "sync.h"

#define SYNC_RUNS	9
#define START_WAIT_MS	5000

struct redis {
	pid_t pid;
	uint16_t port;
};

/* A loopback port nobody listens on now. */
static int free_port(uint16_t *port)
{
	struct sockaddr_in addr = { .sin_family = AF_INET,
				    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(addr);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), ret = 0;

	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&addr, len) ||
	    getsockname(fd, (struct sockaddr *)&addr, &len))
		ret = -errno;
	*port = ntohs(addr.sin_port);
	close(fd);
	return ret;
}

static redisReply *command(redisContext *ctx, const char *cmd)
{
	return ctx && !ctx->err ? redisCommand(ctx, cmd) : NULL;
}

/* Connects to the server; NULL until it answers PING. */
static redisContext *connect_to(const struct redis *r)
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

static void redis_stop(struct redis *r)
{
	if (r->pid > 0) {
		kill(r->pid, SIGTERM);
		waitpid(r->pid, NULL, 0);
	}
	r->pid = 0;
}

/* redis-server on 127.0.0.1 only, no persistence; waits until it answers. */
static int redis_start(struct redis *r)
{
	char port[8];
	redisContext *ctx;
	int waited, ret;

	ret = free_port(&r->port);
	if (ret)
		return ret;
	snprintf(port, sizeof(port), "%u", r->port);
	r->pid = fork();
	if (r->pid < 0)
		return -errno;
	if (!r->pid) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, STDOUT_FILENO);
		execlp("redis-server", "redis-server", "--port", port, "--bind",
		       "127.0.0.1", "--save", "", "--appendonly", "no", NULL);
		_exit(127);
	}
	for (waited = 0; waited < START_WAIT_MS; waited += 20) {
		ctx = connect_to(r);
		if (ctx) {
			redisFree(ctx);
			return 0;
		}
		usleep(20000);
	}
	redis_stop(r);
	bench_log("sync: redis-server on port %u did not answer", r->port);
	return -ETIMEDOUT;
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

static int measure_rules(const struct redis *r, size_t n, int runs)
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

int bench_sync(int argc, char **argv)
{
	static const size_t rule_counts[] = { 1, 100, 1000 };
	int runs = SYNC_RUNS, ret = 0;
	struct redis r = {};
	size_t i;

	if (argc > 1 && !strcmp(argv[1], "--quick"))
		runs = 3;
	ret = redis_start(&r);
	for (i = 0; !ret && i < sizeof(rule_counts) / sizeof(*rule_counts); i++)
		ret = measure_rules(&r, rule_counts[i], runs);
	if (ret)
		bench_log("sync: %s", strerror(-ret));
	redis_stop(&r);
	return ret;
}
