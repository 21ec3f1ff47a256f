// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <criterion/criterion.h>
#include <hiredis/hiredis.h>
#include "redis_server.h"
#include "topo.h"

static int bound_socket(uint16_t port, uint16_t *bound)
{
	struct sockaddr_in addr = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	socklen_t len = sizeof(addr);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	cr_assert_geq(fd, 0);
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) ||
	    getsockname(fd, (struct sockaddr *)&addr, &len)) {
		close(fd);
		return -1;
	}
	*bound = ntohs(addr.sin_port);
	return fd;
}

uint16_t redis_free_port(void)
{
	uint16_t port = 0;
	int fd = bound_socket(0, &port);

	cr_assert_geq(fd, 0, "no free port: %s", strerror(errno));
	close(fd);
	return port;
}

static bool port_free(uint16_t port)
{
	uint16_t bound;
	int fd = bound_socket(port, &bound);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static bool answers(const struct redis_server *r)
{
	struct sockaddr_in addr = {
		.sin_family = AF_INET,
		.sin_port = htons(r->port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	char reply[16] = "";
	int fd, ok = false;

	if (r->netns)
		fd = topo_socket_in(r->netns, AF_INET, SOCK_STREAM, 0);
	else
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	if (!connect(fd, (struct sockaddr *)&addr, sizeof(addr)) &&
	    write(fd, "PING\r\n", 6) == 6 && read(fd, reply, 7) > 0)
		ok = !strncmp(reply, "+PONG", 5);
	close(fd);
	return ok;
}

/* In the child: into @netns, or _exit. */
static void enter_netns(const char *netns)
{
	char path[PATH_MAX];
	int fd;

	if (!netns)
		return;
	snprintf(path, sizeof(path), "/run/netns/%s", netns);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNET))
		_exit(126);
	close(fd);
}

static void exec_server(const struct redis_server *r)
{
	char port_text[8], conf[64];
	int null = open("/dev/null", O_WRONLY);

	enter_netns(r->netns);
	if (null >= 0) {
		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
	}
	snprintf(port_text, sizeof(port_text), "%u", r->port);
	/* Removed by topo_cleanup_leftovers() and redis_cluster_stop(). */
	snprintf(conf, sizeof(conf), "/tmp/" TOPO_PREFIX "%d-nodes-%u.conf",
		 getppid(), r->port);
	if (r->cluster)
		execlp("redis-server", "redis-server", "--port", port_text,
		       "--bind", "127.0.0.1", "--save", "", "--appendonly",
		       "no", "--loglevel", "warning", "--cluster-enabled",
		       "yes", "--cluster-config-file", conf,
		       "--cluster-node-timeout", "5000", (char *)NULL);
	else
		execlp("redis-server", "redis-server", "--port", port_text,
		       "--bind", "127.0.0.1", "--save", "", "--appendonly",
		       "no", "--loglevel", "warning", (char *)NULL);
	_exit(127);
}

void redis_start(struct redis_server *r, uint16_t port)
{
	int i, status;

	r->port = port ? port : redis_free_port();
	r->pid = fork();
	cr_assert_geq(r->pid, 0);
	if (r->pid == 0)
		exec_server(r);
	/* Bounded: 5 s in 10 ms steps. */
	for (i = 0; i < 500; i++) {
		if (answers(r))
			return;
		if (waitpid(r->pid, &status, WNOHANG) == r->pid) {
			r->pid = 0;
			cr_assert_fail("redis-server on port %u exited", r->port);
		}
		usleep(10000);
	}
	redis_stop(r);
	cr_assert_fail("redis-server on port %u never answered", r->port);
}

void redis_stop(struct redis_server *r)
{
	if (r->pid <= 0)
		return;
	kill(r->pid, SIGTERM);
	waitpid(r->pid, NULL, 0);
	r->pid = 0;
}

int redis_cli(const struct redis_server *r, char *out, size_t len,
	      const char *fmt, ...)
{
	char args[1024], cmd[1400];
	size_t n = 0;
	va_list ap;
	FILE *p;
	int status;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	if (r->netns)
		snprintf(cmd, sizeof(cmd), "nsenter --net=/run/netns/%s "
			 "redis-cli -p %u %s 2>&1", r->netns, r->port, args);
	else
		snprintf(cmd, sizeof(cmd), "redis-cli -p %u %s 2>&1", r->port,
			 args);
	p = popen(cmd, "r");
	cr_assert_not_null(p, "%s", cmd);
	if (out && len) {
		n = fread(out, 1, len - 1, p);
		out[n] = '\0';
	} else {
		char sink[512];

		while (fread(sink, 1, sizeof(sink), p) > 0)
			;
	}
	status = pclose(p);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

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
		if (port_free(port) && port_free(port + 10000))
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
		redis_start(&c->node[k], port);
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

/* CRC16-CCITT (XModem), as the cluster specification defines it. */
static uint16_t crc16(const char *buf, size_t len)
{
	uint16_t crc = 0;
	size_t i;
	int bit;

	for (i = 0; i < len; i++) {
		crc ^= (uint16_t)(unsigned char)buf[i] << 8;
		for (bit = 0; bit < 8; bit++)
			crc = crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1;
	}
	return crc;
}

unsigned redis_key_slot(const char *key)
{
	const char *open = strchr(key, '{'), *close;

	if (open) {
		close = strchr(open + 1, '}');
		if (close && close > open + 1)
			return crc16(open + 1, close - open - 1) & 16383;
	}
	return crc16(key, strlen(key)) & 16383;
}

int fake_redis_listen(uint16_t *port)
{
	int fd = bound_socket(0, port);

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
