// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xrl-sync-cost - what one sync of the global budgets costs a node, and
 * what it costs Redis, at 1, 100 and 1,000 global rules, with 1 and 100
 * nodes sharing each rule (the other 99 written into each rule's hash
 * beforehand, as live nodes). A real redis-server is started on a free
 * loopback port and stopped by its pid; the data path is loaded with the
 * test clock (nothing is attached). Prints rows of the results table.
 *
 * Per sync, the engine pipelines one EVALSHA per rule: one round trip
 * whatever the number of rules. The reference is one PING round trip:
 * the ratio says how many round trips a sync costs in time.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <bpf/libbpf.h>
#include <hiredis/hiredis.h>
#include "budget.h"
#include "cidr.h"
#include "datapath.h"
#include "global.h"
#include "loader.h"
#include "policy.h"
#include "policy_map.h"
#include "rule.h"

#define SYNCS		50
#define FAR_MS		3600000ULL	/* other nodes' fields: an hour */

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static uint16_t free_port(void)
{
	struct sockaddr_in addr = { .sin_family = AF_INET,
				    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(addr);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	uint16_t port = 0;

	if (fd >= 0 && !bind(fd, (struct sockaddr *)&addr, sizeof(addr)) &&
	    !getsockname(fd, (struct sockaddr *)&addr, &len))
		port = ntohs(addr.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

static pid_t start_redis(uint16_t port, redisContext **ctx)
{
	struct timeval timeout = { .tv_sec = 2 };
	char port_text[8];
	pid_t pid;
	int i, null;

	snprintf(port_text, sizeof(port_text), "%u", port);
	pid = fork();
	if (pid == 0) {
		null = open("/dev/null", O_WRONLY);
		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		execlp("redis-server", "redis-server", "--port", port_text,
		       "--bind", "127.0.0.1", "--save", "", "--appendonly",
		       "no", (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 500 && pid > 0; i++) {	/* bounded: 5 s */
		*ctx = redisConnectWithTimeout("127.0.0.1", port, timeout);
		if (*ctx && !(*ctx)->err)
			return pid;
		if (*ctx)
			redisFree(*ctx);
		usleep(10000);
	}
	if (pid > 0) {
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
	}
	return -1;
}

static void stop_redis(pid_t pid)
{
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
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

static int build_policy(struct xrl_policy *policy, unsigned n_rules)
{
	struct xrl_rule_spec rule = {
		.action = XRL_ACTION_LIMIT, .pps = 100000, .burst = 1000,
		.scope = XRL_SCOPE_AGGREGATE, .global = true,
	};
	char cidr[32], err[128];
	unsigned i;

	if (xrl_policy_init(policy))
		return -ENOMEM;
	for (i = 0; i < n_rules; i++) {
		snprintf(rule.name, sizeof(rule.name), "rule%u", i);
		snprintf(cidr, sizeof(cidr), "198.18.%u.%u/32", i / 256,
			 i % 256);
		if (xrl_cidr_parse(cidr, &rule.prefix) ||
		    xrl_rule_check(&rule, err, sizeof(err)) ||
		    xrl_policy_add(policy, &rule))
			return -EINVAL;
	}
	return 0;
}

/* The other nodes of every rule, live for an hour (Redis time). */
static void add_other_nodes(redisContext *ctx, unsigned n_rules,
			    unsigned others)
{
	redisReply *t = redisCommand(ctx, "TIME");
	unsigned long long now = strtoull(t->element[0]->str, NULL, 10) * 1000;
	char value[64];
	unsigned i, k;

	freeReplyObject(t);

	for (i = 0; i < n_rules; i++)
		for (k = 0; k < others; k++) {
			snprintf(value, sizeof(value), "%u %llu peer%u",
				 1000 + k, now + FAR_MS, k);
			redisAppendCommand(ctx, "HSET xrl:{rule%u}:demand "
					   "peer%u %s", i, k, value);
		}
	for (i = 0; i < n_rules * others; i++) {
		void *reply;

		if (redisGetReply(ctx, &reply) == REDIS_OK)
			freeReplyObject(reply);
	}
}

static int measure(struct xrl_datapath *dp, uint16_t port, redisContext *ctx,
		   unsigned n_rules, unsigned nodes, double rtt_ms)
{
	struct xrl_global_opts opts = { .host = "127.0.0.1", .port = port,
					.node = "bench", .ttl_ms = FAR_MS };
	struct xrl_budgets budgets;
	struct xrl_policy policy;
	double start, per_sync_ms, usec;
	char err[256];
	uint64_t clock = 1000000000ULL;
	int i, ret;

	freeReplyObject(redisCommand(ctx, "FLUSHALL"));
	ret = build_policy(&policy, n_rules);
	if (!ret)
		ret = xrl_policy_apply(dp, &policy, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "sync-cost: policy of %u rules: %s\n", n_rules,
			strerror(-ret));
		return ret;
	}
	add_other_nodes(ctx, n_rules, nodes - 1);
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
		fprintf(stderr, "sync-cost: %u rules, %u nodes: sync failed\n",
			n_rules, nodes);
		ret = ret ?: -EPROTO;
	} else {
		/* Unpipelined, a sync would cost a round trip and the
		 * script per rule: the ratio is what pipelining leaves. */
		double serial = n_rules * (rtt_ms + usec / 1000);

		printf("| global sync | %u rules, %u nodes each | %.3f ms per "
		       "sync (Redis runs each rule's script in %.1f us) | "
		       "%.2f of one round trip per rule | one round trip per "
		       "sync (pipelined) | %s |\n", n_rules, nodes,
		       per_sync_ms, usec, per_sync_ms / serial,
		       n_rules == 1 || per_sync_ms < serial ? "pass" :
		       "no gain: the scripts dominate");
	}
	xrl_global_free(budgets.global);
	xrl_budgets_free(&budgets);
	xrl_policy_free(&policy);
	return ret;
}

int main(void)
{
	static const unsigned rules[] = { 1, 100, 1000 }, nodes[] = { 1, 100 };
	struct xrl_load_opts load = { .max_sources = 1024, .test_clock = true };
	struct xrl_datapath dp;
	redisContext *ctx = NULL;
	uint16_t port = free_port();
	double rtt;
	size_t i, j;
	pid_t redis;
	int ret = 0;

	libbpf_set_print(NULL);
	redis = start_redis(port, &ctx);
	if (redis < 0) {
		fprintf(stderr, "sync-cost: redis-server did not start\n");
		return EXIT_FAILURE;
	}
	if (xrl_datapath_load(&dp, &load)) {
		fprintf(stderr, "sync-cost: loading the data path failed\n");
		stop_redis(redis);
		return EXIT_FAILURE;
	}
	rtt = ping_ms(ctx);
	printf("| global sync | one PING round trip (the unit) | %.3f ms | 1 "
	       "| | |\n", rtt);
	for (i = 0; i < sizeof(rules) / sizeof(rules[0]) && !ret; i++)
		for (j = 0; j < sizeof(nodes) / sizeof(nodes[0]) && !ret; j++)
			ret = measure(&dp, port, ctx, rules[i], nodes[j], rtt);
	xrl_datapath_close(&dp);
	redisFree(ctx);
	stop_redis(redis);
	return ret ? EXIT_FAILURE : EXIT_SUCCESS;
}
