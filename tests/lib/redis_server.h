/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * redis_server.h - a real redis-server for the tests, on a free loopback
 * port (127.0.0.1 only, no persistence), stopped by its pid; and a fake
 * one that accepts connections and never answers.
 */
#ifndef XRL_TEST_REDIS_SERVER_H
#define XRL_TEST_REDIS_SERVER_H

#include <stdint.h>
#include <sys/types.h>

struct redis_server {
	uint16_t port;
	pid_t pid;	/* 0: not running */
};

/* A port on 127.0.0.1 nobody listens on now. */
uint16_t redis_free_port(void);

/* Starts redis-server on @port (0: a free one) and waits until it answers;
 * criterion fails otherwise. */
void redis_start(struct redis_server *r, uint16_t port);
/* SIGTERM by pid, then waits for it. */
void redis_stop(struct redis_server *r);

/* A listening socket on a free loopback port that reads nothing: returns
 * the fd, sets *@port. */
int fake_redis_listen(uint16_t *port);

#endif
