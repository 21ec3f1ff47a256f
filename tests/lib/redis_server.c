// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * redis_server.c - real redis-servers on loopback ports (redis_server.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include "redis_server.h"
#include "topo.h"

int redis_bound_socket(uint16_t port, uint16_t *bound)
{
	struct sockaddr_in addr = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	socklen_t len = sizeof(addr);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
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
	int fd = redis_bound_socket(0, &port);

	if (fd < 0) {
		fprintf(stderr, "redis: no free port: %s\n", strerror(errno));
		return 0;
	}
	close(fd);
	return port;
}

bool redis_port_free(uint16_t port)
{
	uint16_t bound;
	int fd = redis_bound_socket(port, &bound);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* In a child: into @netns, or _exit. */
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

/* Whether the server answers PING, from here. */
static bool pong(uint16_t port)
{
	struct sockaddr_in addr = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	char reply[16] = "";
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool ok = false;

	if (fd < 0)
		return false;
	if (!connect(fd, (struct sockaddr *)&addr, sizeof(addr)) &&
	    write(fd, "PING\r\n", 6) == 6 && read(fd, reply, 7) > 0)
		ok = !strncmp(reply, "+PONG", 5);
	close(fd);
	return ok;
}

/* The same from the server's namespace: asked by a child in it. */
static bool answers(const struct redis_server *r)
{
	int status;
	pid_t pid;

	if (!r->netns)
		return pong(r->port);
	pid = fork();
	if (pid < 0)
		return false;
	if (!pid) {
		enter_netns(r->netns);
		_exit(pong(r->port) ? 0 : 1);
	}
	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	       !WEXITSTATUS(status);
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

int redis_start(struct redis_server *r, uint16_t port)
{
	int i, status;

	r->port = port ? port : redis_free_port();
	if (!r->port)
		return -EADDRINUSE;
	r->pid = fork();
	if (r->pid < 0) {
		r->pid = 0;
		return -errno;
	}
	if (r->pid == 0)
		exec_server(r);
	/* Bounded: 5 s in 10 ms steps. */
	for (i = 0; i < 500; i++) {
		if (answers(r))
			return 0;
		if (waitpid(r->pid, &status, WNOHANG) == r->pid) {
			r->pid = 0;
			fprintf(stderr, "redis-server on port %u exited\n",
				r->port);
			return -ECHILD;
		}
		usleep(10000);
	}
	redis_stop(r);
	fprintf(stderr, "redis-server on port %u never answered\n", r->port);
	return -ETIMEDOUT;
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
	if (!p) {
		fprintf(stderr, "%s: %s\n", cmd, strerror(errno));
		return -1;
	}
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
