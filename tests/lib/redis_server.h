/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * redis_server.h - real redis-servers for the tests: one on a loopback
 * port (127.0.0.1 only, no persistence), optionally inside a network
 * namespace the test made, or a real Redis Cluster of three masters
 * made with redis-cli --cluster create; all stopped by their pids. And a
 * fake one that accepts connections and never answers.
 */
#ifndef XRL_TEST_REDIS_SERVER_H
#define XRL_TEST_REDIS_SERVER_H

#include <stdbool.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct redis_server {
	uint16_t port;
	pid_t pid;		/* 0: not running */
	const char *netns;	/* run in this namespace (NULL: the test's) */
	bool cluster;		/* started with --cluster-enabled yes */
};

/* A port on 127.0.0.1 nobody listens on now. */
uint16_t redis_free_port(void);

/* Starts redis-server on @port (0: a free one) and waits until it answers;
 * criterion fails otherwise. Set r->netns and r->cluster before. */
void redis_start(struct redis_server *r, uint16_t port);
/* SIGTERM by pid, then waits for it. */
void redis_stop(struct redis_server *r);

/*
 * Runs redis-cli with @args (formatted) against 127.0.0.1:@port in the
 * server's namespace; its stdout (NUL-terminated, cut to @len) in @out
 * when not NULL. Returns the exit status.
 */
int redis_cli(const struct redis_server *r, char *out, size_t len,
	      const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#define REDIS_CLUSTER_MASTERS 3

/*
 * A real Redis Cluster of three masters (no replicas) on loopback ports
 * derived from the pid (each with its bus port + 10000 free), slots
 * spread by redis-cli --cluster create, waited on until cluster_state is
 * ok on every node.
 */
struct redis_cluster {
	struct redis_server node[REDIS_CLUSTER_MASTERS];
};

void redis_cluster_start(struct redis_cluster *c);
void redis_cluster_stop(struct redis_cluster *c);
/* The node (index) that owns @slot. */
int redis_cluster_owner(const struct redis_cluster *c, unsigned slot);
/* Moves @slot from node @from to node @to, keys and all (MIGRATE), as
 * redis-cli --cluster reshard does; or in its three steps: marks it
 * importing/migrating, moves its keys (the source then answers ASK for
 * them), gives the slot to @to on every node (the others answer MOVED). */
void redis_cluster_move_slot(struct redis_cluster *c, unsigned slot, int from,
			     int to);
void redis_cluster_migrate_begin(struct redis_cluster *c, unsigned slot,
				 int from, int to);
void redis_cluster_migrate_keys(struct redis_cluster *c, unsigned slot,
				int from, int to);
void redis_cluster_migrate_end(struct redis_cluster *c, unsigned slot, int to);
/* The cluster key slot of @key (CRC16 of its hash tag, mod 16384). */
unsigned redis_key_slot(const char *key);

/* A listening socket on a free loopback port that reads nothing: returns
 * the fd, sets *@port. */
int fake_redis_listen(uint16_t *port);

/*
 * A fake Redis that answers each command with the raw bytes of the first
 * entry whose @command (e.g. "EVALSHA", "CLUSTER SLOTS") it starts with,
 * "-ERR unknown command" otherwise: the worst replies a stranger could
 * send, crafted. Served by a thread until fake_redis_stop().
 */
struct fake_reply {
	const char *command;
	const char *raw;
	size_t len;		/* 0: strlen(raw) */
	unsigned trickle_ms;	/* >0: one byte every that many ms */
};

struct fake_redis {
	uint16_t port;
	int fd;
	const struct fake_reply *replies;
	size_t n_replies;
	volatile int stop;
	unsigned long served;	/* commands answered */
	pthread_t thread;
};

void fake_redis_start(struct fake_redis *f, const struct fake_reply *replies,
		      size_t n);
void fake_redis_stop(struct fake_redis *f);

#endif
