/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * redis_testbed.h - for the tests: a real Redis Cluster of three masters
 * made with redis-cli --cluster create (of redis_server.h's servers),
 * slots moved as resharding does; and fake Redis servers that accept
 * connections and never answer, or answer the worst replies a stranger
 * could send. Failures fail the test (criterion).
 */
#ifndef XRL_TEST_REDIS_TESTBED_H
#define XRL_TEST_REDIS_TESTBED_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include "redis_server.h"

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
/* The cluster key slot of @key, as the cluster's own CLUSTER KEYSLOT
 * says (not a copy of the daemon's CRC16). */
unsigned redis_cluster_key_slot(const struct redis_cluster *c,
				const char *key);

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
