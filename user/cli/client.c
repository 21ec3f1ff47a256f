// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "client.h"
#include "clock.h"

static int connect_daemon(const char *socket_path, char *err, size_t len)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd, ret;

	if (strlen(socket_path) >= sizeof(addr.sun_path)) {
		snprintf(err, len, "socket path %s is too long", socket_path);
		return -ENAMETOOLONG;
	}
	strcpy(addr.sun_path, socket_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, len, "socket: %s", strerror(errno));
		return ret;
	}
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		ret = -errno;
		if (ret == -ENOENT || ret == -ECONNREFUSED)
			snprintf(err, len, "xdp-ratelimitd is not running (no "
				 "daemon listens on %s)", socket_path);
		else
			snprintf(err, len, "cannot reach xdp-ratelimitd at "
				 "%s: %s", socket_path, strerror(-ret));
		close(fd);
		return ret;
	}
	return fd;
}

static int send_all(int fd, const char *data, size_t size)
{
	ssize_t sent;

	while (size) {
		sent = send(fd, data, size, MSG_NOSIGNAL);
		if (sent < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		data += sent;
		size -= sent;
	}
	return 0;
}

static long long now_ms(void)
{
	return (long long)(xrl_clock_ns(CLOCK_MONOTONIC) / XRL_NS_PER_MS);
}

/* Reads up to the first newline (replaced by the end of the string). */
static int read_line(int fd, char **line)
{
	long long deadline = now_ms() + XRL_CLIENT_TIMEOUT_MS;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	size_t used = 0, cap = 4096;
	char *buf = malloc(cap), *grown, *newline;
	ssize_t got;
	int ret;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (cap - used < 4096) {
			grown = realloc(buf, cap * 2);
			if (!grown) {
				ret = -ENOMEM;
				goto free_buf;
			}
			buf = grown;
			cap *= 2;
		}
		ret = poll(&pfd, 1, (int)(deadline - now_ms()));
		if (ret == 0) {
			ret = -ETIMEDOUT;
			goto free_buf;
		}
		if (ret < 0 && errno == EINTR)
			continue;
		got = ret < 0 ? -1 : recv(fd, buf + used, cap - used - 1, 0);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			goto free_buf;
		}
		if (got == 0) {
			ret = -ECONNRESET;
			goto free_buf;
		}
		newline = memchr(buf + used, '\n', got);
		used += got;
		if (newline) {
			*newline = '\0';
			*line = buf;
			return 0;
		}
	}
free_buf:
	free(buf);
	return ret;
}

int xrl_client_request(const char *socket_path, const char *request,
		       char **response, char *err, size_t len)
{
	int fd, ret;

	*response = NULL;
	fd = connect_daemon(socket_path, err, len);
	if (fd < 0)
		return fd;
	ret = send_all(fd, request, strlen(request));
	if (!ret)
		ret = send_all(fd, "\n", 1);
	if (ret) {
		snprintf(err, len, "sending to xdp-ratelimitd at %s: %s",
			 socket_path, strerror(-ret));
		goto close_fd;
	}
	ret = read_line(fd, response);
	if (ret)
		snprintf(err, len, "no answer from xdp-ratelimitd at %s: %s",
			 socket_path, strerror(-ret));
close_fd:
	close(fd);
	return ret;
}

int xrl_client_call(const char *socket_path, json_t *request,
		    json_t **response, char *err, size_t len)
{
	char *text, *answer;
	json_error_t error;
	json_t *ok;
	int ret;

	*response = NULL;
	text = json_dumps(request, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (!text) {
		snprintf(err, len, "out of memory");
		return -ENOMEM;
	}
	ret = xrl_client_request(socket_path, text, &answer, err, len);
	free(text);
	if (ret)
		return ret;
	*response = json_loads(answer, 0, &error);
	free(answer);
	if (!json_is_object(*response)) {
		snprintf(err, len, "xdp-ratelimitd sent no JSON object: %s",
			 error.text);
		json_decref(*response);
		*response = NULL;
		return -EPROTO;
	}
	ok = json_object_get(*response, "ok");
	if (!json_is_true(ok)) {
		const char *why = json_string_value(json_object_get(*response,
								    "error"));

		snprintf(err, len, "%s",
			 why ? why : "the daemon refused (no error given)");
		return -EPROTO;
	}
	return 0;
}
