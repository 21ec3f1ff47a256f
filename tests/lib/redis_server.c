// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <criterion/criterion.h>
#include "redis_server.h"

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

static bool answers(uint16_t port)
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

void redis_start(struct redis_server *r, uint16_t port)
{
	char port_text[8];
	int i, status;

	r->port = port ? port : redis_free_port();
	snprintf(port_text, sizeof(port_text), "%u", r->port);
	r->pid = fork();
	cr_assert_geq(r->pid, 0);
	if (r->pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0) {
			dup2(null, STDOUT_FILENO);
			dup2(null, STDERR_FILENO);
		}
		execlp("redis-server", "redis-server", "--port", port_text,
		       "--bind", "127.0.0.1", "--save", "", "--appendonly",
		       "no", "--loglevel", "warning", (char *)NULL);
		_exit(127);
	}
	/* Bounded: 5 s in 10 ms steps. */
	for (i = 0; i < 500; i++) {
		if (answers(r->port))
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

int fake_redis_listen(uint16_t *port)
{
	int fd = bound_socket(0, port);

	cr_assert_geq(fd, 0);
	cr_assert_eq(listen(fd, 16), 0);
	return fd;
}
