// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * redis_testbed.c - a Redis Cluster and fake Redis servers for the tests
 * (redis_testbed.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <sys/socket.h>
#include <criterion/criterion.h>
#include <hiredis/hiredis.h>
#include "redis_testbed.h"
#include "topo.h"

/* ---- a three-master cluster ------------------------------------------ */

static redisContext *connect_node(const struct redis_server *r)
{
	struct timeval timeout = { .tv_sec = 5 };
	redisContext *ctx = redisConnectWithTimeout("127.0.0.1", r->port,
						    timeout);

	cr_assert(ctx && !ctx->err, "connecting to %u", r->port);
	return ctx;
}

static redisReply *command(const struct redis_server *r, const char *fmt, ...)
{
	redisContext *ctx = connect_node(r);
	redisReply *reply;
	va_list ap;

	va_start(ap, fmt);
	reply = redisvCommand(ctx, fmt, ap);
	va_end(ap);
	redisFree(ctx);
	cr_assert_not_null(reply, "command to %u", r->port);
	return reply;
}

static void node_id(const struct redis_server *r, char *id, size_t len)
{
	redisReply *reply = command(r, "CLUSTER MYID");

	cr_assert_eq(reply->type, REDIS_REPLY_STRING);
	snprintf(id, len, "%s", reply->str);
	freeReplyObject(reply);
}

static bool cluster_ok(const struct redis_cluster *c)
{
	redisReply *reply;
	bool ok = true;
	int k;

	for (k = 0; k < REDIS_CLUSTER_MASTERS && ok; k++) {
		reply = command(&c->node[k], "CLUSTER INFO");
		ok = reply->type == REDIS_REPLY_STRING &&
		     strstr(reply->str, "cluster_state:ok");
		freeReplyObject(reply);
	}
	return ok;
}

/* Ports from the pid, each with its bus port (+10000) free. */
static uint16_t cluster_port(uint16_t from)
{
	uint16_t port;

	for (port = from; port < 55000; port++)
		if (redis_port_free(port) && redis_port_free(port + 10000))
			return port;
	cr_assert_fail("no free cluster port from %u", from);
	return 0;
}

void redis_cluster_start(struct redis_cluster *c)
{
	uint16_t port = 12000 + (getpid() * 7) % 40000;
	char out[4096];
	int k, i;

	memset(c, 0, sizeof(*c));
	for (k = 0; k < REDIS_CLUSTER_MASTERS; k++) {
		port = cluster_port(port);
		c->node[k].cluster = true;
		cr_assert_eq(redis_start(&c->node[k], port), 0,
			     "cluster node %d on port %u", k, port);
		port++;
	}
	cr_assert_eq(redis_cli(&c->node[0], out, sizeof(out),
			       "--cluster create 127.0.0.1:%u 127.0.0.1:%u "
			       "127.0.0.1:%u --cluster-replicas 0 "
			       "--cluster-yes", c->node[0].port,
			       c->node[1].port, c->node[2].port), 0,
		     "redis-cli --cluster create: %s", out);
	/* Bounded: 10 s for the gossip to agree. */
	for (i = 0; i < 200 && !cluster_ok(c); i++)
		usleep(50000);
	cr_assert_lt(i, 200, "the cluster never reached cluster_state:ok");
}

void redis_cluster_stop(struct redis_cluster *c)
{
	char conf[64];
	int k;

	for (k = 0; k < REDIS_CLUSTER_MASTERS; k++) {
		if (!c->node[k].port)
			continue;
		redis_stop(&c->node[k]);
		snprintf(conf, sizeof(conf), "/tmp/" TOPO_PREFIX
			 "%d-nodes-%u.conf", getpid(), c->node[k].port);
		unlink(conf);
	}
}

int redis_cluster_owner(const struct redis_cluster *c, unsigned slot)
{
	redisReply *reply = command(&c->node[0], "CLUSTER SLOTS"), *range;
	long long port = -1;
	size_t i;
	int k;

	cr_assert_eq(reply->type, REDIS_REPLY_ARRAY);
	for (i = 0; i < reply->elements; i++) {
		range = reply->element[i];
		if ((unsigned)range->element[0]->integer <= slot &&
		    slot <= (unsigned)range->element[1]->integer)
			port = range->element[2]->element[1]->integer;
	}
	freeReplyObject(reply);
	for (k = 0; k < REDIS_CLUSTER_MASTERS; k++)
		if (c->node[k].port == port)
			return k;
	cr_assert_fail("no owner of slot %u", slot);
	return -1;
}

void redis_cluster_migrate_begin(struct redis_cluster *c, unsigned slot,
				 int from, int to)
{
	char from_id[64], to_id[64];

	node_id(&c->node[from], from_id, sizeof(from_id));
	node_id(&c->node[to], to_id, sizeof(to_id));
	freeReplyObject(command(&c->node[to], "CLUSTER SETSLOT %u IMPORTING %s",
				slot, from_id));
	freeReplyObject(command(&c->node[from], "CLUSTER SETSLOT %u MIGRATING "
				"%s", slot, to_id));
}

void redis_cluster_migrate_keys(struct redis_cluster *c, unsigned slot,
				int from, int to)
{
	redisReply *reply, *keys;
	size_t i;

	for (;;) {
		keys = command(&c->node[from], "CLUSTER GETKEYSINSLOT %u 100",
			       slot);
		cr_assert_eq(keys->type, REDIS_REPLY_ARRAY);
		if (!keys->elements) {
			freeReplyObject(keys);
			return;
		}
		for (i = 0; i < keys->elements; i++) {
			reply = command(&c->node[from], "MIGRATE 127.0.0.1 %u "
					"%s 0 5000", c->node[to].port,
					keys->element[i]->str);
			cr_assert_neq(reply->type, REDIS_REPLY_ERROR, "%s",
				      reply->str);
			freeReplyObject(reply);
		}
		freeReplyObject(keys);
	}
}

void redis_cluster_migrate_end(struct redis_cluster *c, unsigned slot, int to)
{
	char to_id[64];
	int k;

	node_id(&c->node[to], to_id, sizeof(to_id));
	/* The new owner first, as redis-cli does. */
	freeReplyObject(command(&c->node[to], "CLUSTER SETSLOT %u NODE %s",
				slot, to_id));
	for (k = 0; k < REDIS_CLUSTER_MASTERS; k++)
		if (k != to)
			freeReplyObject(command(&c->node[k], "CLUSTER SETSLOT "
						"%u NODE %s", slot, to_id));
}

void redis_cluster_move_slot(struct redis_cluster *c, unsigned slot, int from,
			     int to)
{
	redis_cluster_migrate_begin(c, slot, from, to);
	redis_cluster_migrate_keys(c, slot, from, to);
	redis_cluster_migrate_end(c, slot, to);
}

unsigned redis_cluster_key_slot(const struct redis_cluster *c,
				const char *key)
{
	redisReply *reply = command(&c->node[0], "CLUSTER KEYSLOT %s", key);
	unsigned slot;

	cr_assert_eq(reply->type, REDIS_REPLY_INTEGER, "CLUSTER KEYSLOT %s",
		     key);
	slot = reply->integer;
	freeReplyObject(reply);
	return slot;
}

int fake_redis_listen(uint16_t *port)
{
	int fd = redis_bound_socket(0, port);

	cr_assert_geq(fd, 0);
	cr_assert_eq(listen(fd, 16), 0);
	return fd;
}

/* ---- a fake one, for crafted replies ---------------------------------- */

/*
 * One RESP command from @buf (an array of bulk strings); its first one or
 * two words into @name. Returns the bytes it took, 0 when incomplete.
 */
static size_t parse_command(const char *buf, size_t len, char *name,
			    size_t name_len)
{
	const char *p = buf, *end = buf + len, *nl;
	long n, i, blen;
	size_t used = 0;

	name[0] = '\0';
	if (len < 1 || *p != '*' || !(nl = memchr(p, '\n', len)))
		return 0;
	n = strtol(p + 1, NULL, 10);
	p = nl + 1;
	for (i = 0; i < n; i++) {
		if (p >= end || *p != '$' || !(nl = memchr(p, '\n', end - p)))
			return 0;
		blen = strtol(p + 1, NULL, 10);
		p = nl + 1;
		if (end - p < blen + 2)
			return 0;
		if (i < 2 && used + blen + 2 < name_len) {
			if (used)
				name[used++] = ' ';
			memcpy(name + used, p, blen);
			used += blen;
			name[used] = '\0';
		}
		p += blen + 2;
	}
	return p - buf;
}

/* The reply, at once or trickled (bounded: stops with the server). */
static int write_reply(struct fake_redis *f, int fd,
		       const struct fake_reply *r, size_t len)
{
	size_t i;

	/* MSG_NOSIGNAL: the client hanging up must not kill the test. */
	if (!r->trickle_ms)
		return send(fd, r->raw, len, MSG_NOSIGNAL) == (ssize_t)len ?
		       0 : -1;
	for (i = 0; i < len && !f->stop; i++) {
		if (send(fd, r->raw + i, 1, MSG_NOSIGNAL) != 1)
			return -1;
		usleep(r->trickle_ms * 1000);
	}
	return 0;
}

static void serve_client(struct fake_redis *f, int fd)
{
	char buf[65536], name[128];
	const struct fake_reply *r;
	size_t have = 0, used, i, len;
	ssize_t n;

	while (!f->stop) {
		struct timeval tv = { .tv_usec = 100000 };

		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		n = read(fd, buf + have, sizeof(buf) - have);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			return;
		if (n > 0)
			have += n;
		while ((used = parse_command(buf, have, name, sizeof(name)))) {
			for (i = 0, r = NULL; i < f->n_replies && !r; i++)
				if (!strncasecmp(name, f->replies[i].command,
						 strlen(f->replies[i].command)))
					r = &f->replies[i];
			if (r) {
				len = r->len ? r->len : strlen(r->raw);
				if (write_reply(f, fd, r, len))
					return;
			} else if (send(fd, "-ERR unknown command\r\n", 22,
					MSG_NOSIGNAL) != 22) {
				return;
			}
			f->served++;
			memmove(buf, buf + used, have - used);
			have -= used;
		}
		if (have == sizeof(buf))
			return;
	}
}

static void *fake_thread(void *arg)
{
	struct fake_redis *f = arg;
	struct timeval tv = { .tv_usec = 100000 };
	int client;

	setsockopt(f->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (!f->stop) {
		client = accept(f->fd, NULL, NULL);
		if (client < 0)
			continue;
		serve_client(f, client);
		close(client);
	}
	return NULL;
}

void fake_redis_start(struct fake_redis *f, const struct fake_reply *replies,
		      size_t n)
{
	memset(f, 0, sizeof(*f));
	f->replies = replies;
	f->n_replies = n;
	f->fd = fake_redis_listen(&f->port);
	cr_assert_eq(pthread_create(&f->thread, NULL, fake_thread, f), 0);
}

void fake_redis_stop(struct fake_redis *f)
{
	if (!f->fd)
		return;
	f->stop = 1;
	pthread_join(f->thread, NULL);
	close(f->fd);
	f->fd = 0;
}
