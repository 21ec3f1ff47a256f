/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * redis_server.h - real redis-servers on a loopback port (127.0.0.1
 * only, no persistence), optionally inside a network namespace the
 * caller made, stopped by their pids: the one launcher of the tests and
 * the benchmarks (scripts/bench/sync.c). Nothing here asserts: failures
 * are returned, and said on stderr. A Redis Cluster and fake servers for
 * the tests: redis_testbed.h.
 */
#ifndef XRL_TEST_REDIS_SERVER_H
#define XRL_TEST_REDIS_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct redis_server {
	uint16_t port;
	pid_t pid;		/* 0: not running */
	const char *netns;	/* run in this namespace (NULL: the test's) */
	bool cluster;		/* started with --cluster-enabled yes */
};

/* A TCP socket bound to 127.0.0.1:@port (0: any), its port in *@bound;
 * -1 with errno set. */
int redis_bound_socket(uint16_t port, uint16_t *bound);
/* A port on 127.0.0.1 nobody listens on now, or 0. */
uint16_t redis_free_port(void);
/* Whether nothing holds @port on 127.0.0.1 now. */
bool redis_port_free(uint16_t port);

/* Starts redis-server on @port (0: a free one) and waits until it answers
 * (5 s at most). Set r->netns and r->cluster before. 0, or -errno with
 * the reason on stderr. */
int redis_start(struct redis_server *r, uint16_t port);
/* SIGTERM by pid, then waits for it. */
void redis_stop(struct redis_server *r);

/*
 * Runs redis-cli with @args (formatted) against 127.0.0.1:@port in the
 * server's namespace; its stdout (NUL-terminated, cut to @len) in @out
 * when not NULL. Returns the exit status, or -1 when it could not run.
 */
int redis_cli(const struct redis_server *r, char *out, size_t len,
	      const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
